#!/usr/bin/env bats
# Obtainable pages and THP counters on the running kernel: hugeadm's figure
# is /proc/buddyinfo's, and a grow below it gets its pages without a warning.

load live

D=/sys/kernel/mm/hugepages/hugepages-2048kB

setup_file() {
	# Skips belong in setup() (bats 1.8): here only lock and save where a test will run.
	if [ "$(id -u)" -eq 0 ] && [ -d "$D" ]; then
		live_lock
		live_save
	fi
}

setup() {
	live_requirements
}

teardown_file() {
	live_restore
}

# buddy_2m [NODE]: 2 MiB blocks free in DMA32, Normal, HighMem and Movable, counted here
# independently of hugekit (order 9 and above, each order k worth 2^(k-9)).
buddy_2m() {
	awk -v node="${1:-}" '{
		sub(",", "", $2)
		if (node != "" && $2 != node) next
		if ($4 != "DMA32" && $4 != "Normal" && $4 != "HighMem" && $4 != "Movable") next
		for (k = 9; k + 5 <= NF; k++) n += $(k + 5) * 2 ^ (k - 9)
	} END { printf "%d\n", n }' /proc/buddyinfo
}

# obtainable_2m: hugeadm's figure for the 2 MiB pool.
obtainable_2m() {
	hugeadm --pool-list --json | python3 -c 'import json, sys
print([p["obtainable"] for p in json.load(sys.stdin)["pools"] if p["size"] == 2097152][0])'
}

# near A B: A and B within 10 % of the larger, or 16 pages (the kernel moves on between reads).
near() {
	local d=$(($1 > $2 ? $1 - $2 : $2 - $1)) m=$(($1 > $2 ? $1 : $2))
	[ "$d" -le 16 ] || [ "$((d * 10))" -le "$m" ] || fail "$1 and $2 are not near"
}

@test "--pool-list --json: obtainable is buddyinfo's count, pool and each node" {
	local ours theirs node
	ours=$(obtainable_2m)
	theirs=$(buddy_2m)
	echo "# hugeadm $ours, buddyinfo $theirs" >&3
	near "$ours" "$theirs"
	run --separate-stderr hugeadm --pool-list --per-node --json
	assert_success
	for node in $(python3 -c 'import json, sys
for n in json.loads(sys.argv[1])["nodes"]:
    if n["size"] == 2097152: print("%d:%d" % (n["node"], n["obtainable"]))' "$output"); do
		near "${node#*:}" "$(buddy_2m "${node%%:*}")"
	done
}

@test "a grow below obtainable gets every page, without the warning; obtainable drops by about as many" {
	local before after k nr0
	echo 0 > "$D/nr_overcommit_hugepages"
	nr0=$(cat "$D/nr_hugepages")
	before=$(obtainable_2m)
	# A small grow, well below what is free in one piece: at most 64 pages (128 MiB).
	k=$((before / 4 < 64 ? before / 4 : 64))
	[ "$k" -ge 4 ] || hk_skip "only $before 2 MiB blocks free: too fragmented for this test"
	run --separate-stderr hugeadm --pool-pages-min "2M:+$k"
	assert_success
	refute [ -n "$(grep obtainable <<< "$stderr")" ]
	assert_equal "$(cat "$D/nr_hugepages")" $((nr0 + k))
	after=$(obtainable_2m)
	echo "# obtainable $before, grew by $k, now $after" >&3
	near "$after" $((before - k))
}

@test "a grow beyond obtainable warns first; as a dry run it changes nothing" {
	local obt nr snap
	obt=$(obtainable_2m)
	nr=$(cat "$D/nr_hugepages")
	snap=$(live_snapshot)
	run --separate-stderr hugeadm --dry-run --pool-pages-min "2M:$((nr + obt + 1000))"
	assert_success
	grep -qE "^hugeadm:WARNING: 2M pages: [0-9]+ more requested but only [0-9]+ obtainable now without compaction; --hard compacts memory and retries$" <<< "$stderr"
	assert_equal "$(live_snapshot)" "$snap"
	run --separate-stderr hugeadm --dry-run --hard --pool-pages-min "2M:$((nr + obt + 1000))"
	assert_success
	refute [ -n "$(grep obtainable <<< "$stderr")" ]
}

@test "--explain on the live kernel: obtainable and the THP verdict; JSON counters are the kernel's" {
	run --separate-stderr hugeadm --explain
	assert_success
	assert_line --regexp '^  2M pages: up to [0-9]+ more pages'
	assert_line --regexp '^THP: '
	run --separate-stderr hugeadm --explain --json
	assert_success
	python3 - "$output" <<'PY'
import glob, json, os, sys
d = json.loads(sys.argv[1])["explain"]
thp = d["thp"]
vm = dict(l.split() for l in open("/proc/vmstat"))
# Counters only grow: what hugeadm read is at most what is there now, and near it.
for k, v in thp["counters"].items():
    assert v <= int(vm[k]) and int(vm[k]) - v < 1000000, (k, v, vm[k])
sizes = {s["size"]: s["stats"] for s in thp["sizes"]}
for d_ in glob.glob("/sys/kernel/mm/transparent_hugepage/hugepages-*kB"):
    size = int(os.path.basename(d_)[10:-2]) * 1024
    assert size in sizes, size
    for name, v in sizes[size].items():
        now = int(open(os.path.join(d_, "stats", name)).read())
        assert v <= now or name.startswith("nr_"), (size, name, v, now)
PY
}
