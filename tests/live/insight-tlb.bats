#!/usr/bin/env bats
# shellcheck disable=SC2154 # run --separate-stderr sets stderr
# tlbmiss_cost and cpupcstat on the running machine: the cost of a TLB miss
# from three runs (their spread printed; the issue's target: within 25 % of
# their median), the pool and THP backings as smaps shows them, cpupcstat's report
# where the machine has counters or its one line where it has none, and
# --compare on a small heap. The 2 MiB pool is set for the tests that need it
# and put back; at most 96 pages (192 MiB).

load live

HEAP_BENCH="$HK_BUILD_DIR/tests/heap-bench"
D=/sys/kernel/mm/hugepages/hugepages-2048kB

setup_file() {
	if [ "$(id -u)" -eq 0 ] && [ -d "$D" ]; then
		live_lock
		live_save
	fi
}

teardown_file() {
	live_restore
}

setup() {
	live_requirements
}

# json EXPR: evaluate the Python expression EXPR on the JSON of $output (as j).
json() {
	python3 -c 'import json, sys; j = json.loads(sys.argv[2]); print(eval(sys.argv[1]))' "$1" "$output"
}

# pool NR: the 2M pool at NR persistent pages, no overcommit; skip when the kernel gives fewer.
pool() {
	echo 0 > "$D/nr_overcommit_hugepages"
	echo "$1" > "$D/nr_hugepages"
	[ "$(cat "$D/free_hugepages")" -ge "$1" ] || hk_skip "the kernel could not give $1 free 2 MiB pages"
}

# thp_usable: skip where THP cannot back an madvise'd region.
thp_usable() {
	grep -q '\[never\]' "$THP/enabled" && hk_missing "transparent huge pages are off ([never])"
	return 0
}

# Whether this machine lets the cost be measured is not the test's business
# (on an AMD EPYC guest five runs gave medians of 10, 24, 9, -8 and -42 cycles):
# each run's report must follow the tool's rule, whatever it measured. The
# figures and their spread are printed. tests/bench/tlb-bench.sh measures the
# agreement of runs on a quiet machine.
@test "tlbmiss_cost: each run's report follows the rule (cost = base - huge, median, measurable iff the median deviation is within 50 %)" {
	pool 0
	thp_usable
	for _ in 1 2 3; do
		run --separate-stderr timeout 300 tlbmiss_cost --json --size 64M
		assert_success
		run python3 -c '
import json, statistics, sys
t = json.loads(sys.argv[1])["tlbmiss_cost"]
c = [r["cost"] for r in t["runs"]]
bad = [r for r in t["runs"] if abs(r["base_cycles_per_hop"] - r["huge_cycles_per_hop"] - r["cost"]) > 0.011]
assert not bad, "cost is not base - huge: %r" % bad
m = statistics.median(c)
assert abs(t["median"] - m) <= 0.011, "median %r, of the runs %r" % (t["median"], m)
mad = statistics.median(abs(x - m) for x in c) / m * 100 if m > 0 else None
rule = m >= 1 and (len(c) < 3 or mad <= 50.0)
edge = mad is not None and abs(mad - 50.0) < 0.1
assert t["measurable"] == rule or edge, "measurable %r, rule says %r (median %.2f, median deviation %r %%)" % (t["measurable"], rule, m, mad)
want = round(t["median"]) if t["measurable"] else 0
assert t["tlb_miss_cost"] == want, "tlb_miss_cost %r, want %r" % (t["tlb_miss_cost"], want)
print("median %.2f cycles, median deviation %s %%, measurable %s" % (m, "-" if mad is None else "%.1f" % mad, t["measurable"]))
' "$output"
		echo "# run: $output" >&3
		assert_success
	done
}

@test "tlbmiss_cost --backing hugetlb: the region is on the pool's pages, smaps says so" {
	pool 80
	run --separate-stderr timeout 120 tlbmiss_cost --backing hugetlb --size 64M --runs 3 --hops 100000 --json
	assert_success
	assert_equal "$(json 'j["tlbmiss_cost"]["backing"]')" hugetlb
	assert_equal "$(json 'j["tlbmiss_cost"]["huge_kb"]')" 65536
	assert_equal "$(json 'len(j["tlbmiss_cost"]["runs"])')" 3
	# the pool is as it was once the tool has exited
	assert_equal "$(cat "$D/free_hugepages")" 80
}

@test "tlbmiss_cost --backing hugetlb with an empty pool fails, saying so" {
	pool 0
	run --separate-stderr tlbmiss_cost --backing hugetlb --size 64M --runs 1 --hops 20000
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "tlbmiss_cost: ERROR: cannot map 64 MiB on huge pages (hugetlb): Cannot allocate memory"
}

@test "tlbmiss_cost --backing thp: transparent huge pages, checked in smaps (AnonHugePages)" {
	thp_usable
	run --separate-stderr timeout 120 tlbmiss_cost --backing thp --size 64M --runs 3 --hops 100000 --json
	assert_success
	assert_equal "$(json 'j["tlbmiss_cost"]["backing"]')" thp
	assert_equal "$(json 'j["tlbmiss_cost"]["huge_kb"] >= 65536 * 9 // 10')" True
	assert_equal "$(json 'j["tlbmiss_cost"]["clock"]')" tsc
}

@test "tlbmiss_cost: TLB_MISS_COST=N is the last line on stdout, and evals" {
	thp_usable
	run --separate-stderr timeout 120 tlbmiss_cost --size 64M --runs 3 --hops 100000
	assert_success
	assert_regex "${lines[-1]}" '^TLB_MISS_COST=[0-9]+$'
	eval "${lines[-1]}"
	[ "$TLB_MISS_COST" -ge 0 ]
	assert_regex "$stderr" 'clock TSC at [0-9]+ MHz'
}

@test "cpupcstat on this machine: the counters' report, or the one line that there are none" {
	run --separate-stderr timeout 120 cpupcstat --cost 100 -- true
	if [ "$status" -eq 0 ]; then
		assert_line --regexp '^dTLB load misses: +[0-9]+$'
		assert_line --regexp '^time in TLB misses: '
	else
		assert_failure 1
		assert_output ''
		assert_regex "$stderr" '^cpupcstat: (no hardware TLB counters on this machine|the hardware counters are not allowed).*--compare measures without them$'
	fi
}

@test "cpupcstat --compare on random access over a 64 MiB heap: both ways ran the same work" {
	hk_need_built "$HEAP_BENCH"
	pool 96
	run --separate-stderr timeout 300 cpupcstat --compare --runs 2 --json -- "$HEAP_BENCH" random-malloc 64 2000000
	assert_success
	assert_equal "$(json 'len(j["cpupcstat"]["plain"]["times_s"]) + len(j["cpupcstat"]["huge"]["times_s"])')" 4
	assert_equal "$(json 'type(j["cpupcstat"]["saving_pct"]).__name__')" float
	# the same work both ways: heap-bench's checksum
	assert_equal "$(grep -c '^random-malloc ' <<< "$stderr")" 4
	assert_equal "$(grep '^random-malloc ' <<< "$stderr" | awk '{ print $3 }' | sort -u | wc -l)" 1
	echo "# saving_pct on 64 MiB: $(json 'j["cpupcstat"]["saving_pct"]')" >&3
}
