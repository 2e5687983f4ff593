#!/usr/bin/env bats
# What the kernel could give now (/proc/buddyinfo) and THP effectiveness
# (/proc/vmstat, mTHP stats), on fixture trees: --pool-list --json,
# --explain (text and JSON) and the warning before a grow.
#
# x86-1node: 2M obtainable 1744 (DMA32 1 + 700 x 2, Normal 43 + 150 x 2; DMA
# left out). x86-2node: 1228 = node 0 1222 + node 1 6 (fragmented).

load helpers

# json EXPR: evaluate a Python expression over the JSON document in $output (as d).
json() {
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$output" "$1"
}

@test "--pool-list text is the same bytes with or without buddyinfo" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list
	assert_success
	local with=$output
	rm "$root/proc/buddyinfo"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list
	assert_success
	assert_equal "$output" "$with"
	golden "hugeadm/x86-2node-pool-list" "$HUGEADM" --sysroot "$root" --pool-list
}

@test "--pool-list --json: obtainable per pool, null for a gigantic size" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --pool-list --json
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(json '[(p["size"], p["obtainable"]) for p in d["pools"]]')" \
		"[(2097152, 1744), (1073741824, None)]"
	assert_equal "$(json '[n["obtainable"] for n in d["pools"][0]["nodes"]]')" "[1744]"
}

@test "--pool-list --json on two nodes: each node's share, fragmented node 1" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-2node)" --pool-list --json
	assert_success
	assert_equal "$(json 'd["pools"][0]["obtainable"]')" 1228
	assert_equal "$(json '[(n["node"], n["obtainable"]) for n in d["pools"][0]["nodes"]]')" \
		"[(0, 1222), (1, 6)]"
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-2node)" --pool-list --per-node --json
	assert_success
	assert_equal "$(json '[(n["node"], n["size"], n["obtainable"]) for n in d["nodes"]]')" \
		"[(0, 2097152, 1222), (1, 2097152, 6), (0, 1073741824, None), (1, 1073741824, None)]"
}

@test "--pool-list --json without buddyinfo (arm64 dump): obtainable null, no error" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture arm64)" --pool-list --json
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$(json 'sorted(set(p["obtainable"] for p in d["pools"]), key=str)')" "[None]"
}

@test "a malformed buddyinfo is an error naming its line; the text report is unaffected" {
	local root
	root=$(fixture x86-1node)
	printf 'Node 0, zone DMA32 1 2 3\nNode 0, zone Normal 1 x 3\n' > "$root/proc/buddyinfo"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list --json
	assert_failure 1
	assert_equal "$(json 'd["pools"][0]["obtainable"]')" None
	assert_equal "$stderr" "hugeadm:ERROR: /proc/buddyinfo: line 2 is not \"Node N, zone NAME\" and the free blocks of each order
hugeadm:ERROR: cannot read the free page lists (buddyinfo): Invalid argument"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list
	assert_success
}

@test "--explain: up to N more pages per pool and node; gigantic sizes told boot or CMA" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain
	assert_success
	assert_line "Growing a pool now would likely get, without compaction:"
	assert_line "  2M pages: up to 1744 more pages"
	assert_line --partial '  1G pages: gigantic: not from the free lists; reserve at boot ("hugepagesz=1G hugepages=N") or set aside CMA ("hugetlb_cma=SIZE")'
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-2node)" --explain
	assert_success
	assert_line "  2M pages: up to 1228 more pages (node 0: 1222, node 1: 6)"
}

@test "--explain without buddyinfo or vmstat says nothing of them (arm64 dump)" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture arm64)" --explain
	assert_success
	refute_output --partial "Growing a pool"
	refute_output --partial "THP:"
}

@test "--explain: the THP verdict, from good to fragmented" {
	local root
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain
	assert_line "THP: 97 % of huge page faults got a huge page; 12 collapses by khugepaged"
	assert_line "  compaction: 5 stalls, 4 succeeded, 1 failed"
	assert_line "  64K: 5000 anonymous faults got a huge page, 250 fell back"
	assert_line "  2M: 970 anonymous faults got a huge page, 30 fell back"
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-2node)" --explain
	assert_line "THP: most faults fell back (10 % got a huge page): memory is fragmented, see compaction"
	root=$(fixture x86-1node)
	sed -i -e 's/^thp_fault_alloc .*/thp_fault_alloc 600/' -e 's/^thp_fault_fallback .*/thp_fault_fallback 400/' "$root/proc/vmstat"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --explain
	assert_line "THP: 60 % of huge page faults got a huge page; the rest fell back: memory is getting fragmented, see compaction"
	sed -i -e 's/^thp_fault_alloc .*/thp_fault_alloc 0/' -e 's/^thp_fault_fallback .*/thp_fault_fallback 0/' "$root/proc/vmstat"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --explain
	assert_line "THP: no huge page faults counted yet; 12 collapses by khugepaged"
}

@test "--explain --json: the whole document (golden)" {
	hk_need_root "hugetlb_shm_group.caller_member depends on the caller; the golden is root's"
	golden "hugeadm/x86-2node-explain-json" "$HUGEADM" --sysroot "$(fixture x86-2node)" --explain --json
}

@test "--explain --json: one document with pools, obtainable, gigantic advice and THP" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain --json
	assert_success
	assert_equal "$(json 'sorted(d["explain"])')" "['configured_page_sizes', 'hugetlb_cma', 'hugetlb_shm_group', 'memory_total', 'min_free_kbytes', 'mounts', 'pools', 'shmmax', 'swap', 'thp', 'vmemmap_optimize']"
	assert_equal "$(json 'd["explain"]["memory_total"]')" $((24683520 * 1024))
	assert_equal "$(json '[(p["size"], p["obtainable"], p["gigantic"]) for p in d["explain"]["pools"]]')" \
		"[(2097152, 1744, False), (1073741824, None, True)]"
	assert_equal "$(json '"hugetlb_cma=" in d["explain"]["pools"][1]["how"]')" True
	assert_equal "$(json 'd["explain"]["thp"]["fault_alloc_pct"]')" 97
	assert_equal "$(json 'd["explain"]["thp"]["counters"]["thp_collapse_alloc"]')" 12
	assert_equal "$(json '[s["stats"]["anon_fault_alloc"] for s in d["explain"]["thp"]["sizes"] if s["size"] in (65536, 2097152)]')" \
		"[5000, 970]"
	# With other reports: one document.
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain --pool-list --json
	assert_success
	assert_equal "$(json 'sorted(d)')" "['explain', 'pools']"
}

@test "--explain --json without THP counters or buddyinfo: nulls, exit 0" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture arm64)" --explain --json
	assert_success
	assert_equal "$(json 'd["explain"]["thp"]["counters"]')" None
	assert_equal "$(json 'd["explain"]["thp"]["verdict"]')" None
	assert_equal "$(json 'd["explain"]["thp"]["enabled"]')" madvise
}

# sums DIR: a checksum of every file of a tree.
sums() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum)
}

@test "--pool-pages-min beyond obtainable warns once, then still grows" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min DEFAULT:2000
	assert_success
	# 2000 - 21 persistent - 3 surplus that become persistent first = 1976 new pages.
	assert_equal "$(grep -c obtainable <<< "$stderr")" 1
	grep -qxF "hugeadm:WARNING: 2M pages: 1976 more requested but only 1228 obtainable now without compaction; --hard compacts memory and retries" <<< "$stderr"
	assert_equal "$(cat "$root/proc/sys/vm/nr_hugepages")" 2000
}

@test "a dry run warns the same and stays dry; --hard or a grow within reach does not warn" {
	local root before
	root=$(fixture x86-2node)
	before=$(sums "$root")
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min DEFAULT:2000
	assert_success
	assert_output "HUGETLB_VERBOSE='2'
echo 2000 > /proc/sys/vm/nr_hugepages
echo 0 > /proc/sys/vm/nr_overcommit_hugepages"
	grep -qF "2M pages: 1976 more requested but only 1228 obtainable" <<< "$stderr"
	assert_equal "$(sums "$root")" "$before"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --hard --pool-pages-min DEFAULT:2000
	assert_success
	refute [ -n "$(grep obtainable <<< "$stderr")" ]
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min DEFAULT:1200
	assert_success
	refute [ -n "$(grep obtainable <<< "$stderr")" ]
}

@test "a grow on one node compares with that node's free lists" {
	local root
	root=$(fixture x86-2node)
	# Node 1: 6 persistent + 2 surplus; +9 needs 7 new pages, 6 are obtainable there.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min DEFAULT:+9@1
	assert_success
	grep -qxF "hugeadm:WARNING: 2M pages on node 1: 7 more requested but only 6 obtainable now without compaction; --hard compacts memory and retries" <<< "$stderr"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min DEFAULT:+8@1
	assert_success
	refute [ -n "$(grep obtainable <<< "$stderr")" ]
	# --pool-pages-max that lowers nothing and a gigantic grow: no obtainable warning.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-max DEFAULT:3000 --pool-pages-min 1G:+4
	assert_success
	refute [ -n "$(grep obtainable <<< "$stderr")" ]
}

@test "--apply warns the same before a grow beyond obtainable, with advice that fits it" {
	local root conf
	root=$(fixture x86-2node)
	conf=$BATS_TEST_TMPDIR/big.conf
	printf '%s\n' '[pool 2M]' 'minimum = 2000' > "$conf"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$conf" --dry-run
	assert_success
	assert_equal "$(grep -c obtainable <<< "$stderr")" 1
	grep -qxF "hugeadm:WARNING: 2M pages: 1976 more requested but only 1228 obtainable now without compaction; what the kernel cannot find is reported short (pools that must be had: hugeadm --generate boot)" <<< "$stderr"
	# Per node: node 1 has 6 persistent + 2 surplus, 6 obtainable; 15 there needs 7 new pages.
	printf '%s\n' '[pool 2M]' 'minimum = 15@1' > "$conf"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$conf" --dry-run
	assert_success
	grep -qF "2M pages on node 1: 7 more requested but only 6 obtainable" <<< "$stderr"
	# Within reach: no warning.
	printf '%s\n' '[pool 2M]' 'minimum = 1200' > "$conf"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$conf" --dry-run
	assert_success
	refute [ -n "$(grep obtainable <<< "$stderr")" ]
}
