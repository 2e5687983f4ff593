#!/usr/bin/env bats
# The newer kernel pool features on fixture trees: --pool-demote-size,
# --pool-demote, --vmemmap-optimize, and what --explain (text and JSON) and
# --pool-list --json say of demote, HVO and hugetlb_cma.

load helpers

D1G=sys/kernel/mm/hugepages/hugepages-1048576kB

# json EXPR: a Python expression over d, the JSON document in $output.
json() {
	python3 -c "import json, sys; d = json.load(sys.stdin); print($1)" <<<"$output"
}

# unchanged ROOT: the tree's files are those of the fixture it was copied from.
unchanged() {
	diff -r "$HK_FIXTURES/$(basename "$1")" "$1"
}

@test "--pool-demote-size: bad arguments name the bad part, exit 1, change nothing" {
	local root
	root=$(fixture x86-2node)
	local -A cases=(
		[1G]="1G: invalid demote size setting (SIZE:TO, e.g. 1G:2M)"
		[1G:2X]="2X: invalid page size to demote to"
		[4M:2M]="4M: unknown page size"
		[1G:4M]="1G:4M: 4M is not a huge page size smaller than 1G"
		[1G:1G]="1G:1G: 1G is not a huge page size smaller than 1G"
		[2M:2M]="2M:2M: 2M pages cannot be demoted: no smaller huge page size"
	)
	for arg in "${!cases[@]}"; do
		run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote-size "$arg"
		assert_failure 1
		assert_equal "$stderr" "hugeadm:ERROR: ${cases[$arg]}"
	done
	# A bad option after a good one: the good one is not made either.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote-size 1G:2M --pool-demote 1G:x
	assert_failure 1
	unchanged "$root"
}

@test "--pool-demote(-size) on a kernel without demote (before 5.16): an error that says so" {
	local root
	root=$(fixture x86-1node)
	find "$root" -name 'demote*' -delete
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote-size 1G:2M
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:2M: the kernel has no demote (Linux 5.16 or later)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1 --dry-run
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:1: the kernel has no demote (Linux 5.16 or later)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list --json
	assert_success
	assert_equal "$(json '[p["demote_size"] for p in d["pools"]]')" "[None, None]"
}

@test "--pool-demote-size: the dry run prints the write; a tree gets the size in kB" {
	local root
	root=$(fixture arm64)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote-size 1G:2M --dry-run
	assert_success
	assert_output "HUGETLB_VERBOSE='2'
echo 2048kB > /$D1G/demote_size"
	unchanged "$root"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote-size DEFAULT:64KiB
	assert_success
	assert_equal "$(cat "$root/sys/kernel/mm/hugepages/hugepages-2048kB/demote_size")" 64kB
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote-size 1G:2M --pool-list --json
	assert_success
	assert_equal "$(cat "$root/$D1G/demote_size")" 2048kB
	assert_equal "$(json '[(p["size"], p["demote_size"]) for p in d["pools"]]')" \
		"[(65536, None), (2097152, 65536), (33554432, 2097152), (1073741824, 2097152)]"
}

@test "--pool-demote: bad counts, nodes and more pages than are free: exit 1, nothing changed" {
	local root
	root=$(fixture x86-2node)
	for arg in 1G 1G: 1G:0 1G:x 1G:-1 1G:+1 '1G:1 ' 1G:1K; do
		run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote "$arg"
		assert_failure 1
		assert_equal "${#lines[@]}" 0
	done
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:x
	assert_equal "$stderr" "hugeadm:ERROR: x: invalid number of pages to demote (1 or more)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1@x
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: x: invalid node list"
	# x86-2node: 1G free 1, on node 1.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:2
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:2: 2 pages to demote, but the 1G pool has 1 free"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1@0
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:1@0: 1 pages to demote on node 0, but it has 0 free 1G pages"
	# The pages the pool options of the same command add first count (the pool planner's free pages).
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min 1G:+1@0 --pool-demote 1G:1@0
	assert_success
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min 1G:+1 --pool-demote 1G:3
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:3: 3 pages to demote, but the 1G pool has 2 free"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1@2
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:1@2: node 2 has no 1G pool (no such NUMA node)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 2M:1
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:1: 2M pages cannot be demoted: no smaller huge page size"
	rm "$root/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1@1
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:1@1: node 1 has no demote file: No such file or directory"
	touch "$root/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote"
	unchanged "$root"
}

@test "--pool-demote: the dry run prints the demote writes, whole pool or per node" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1 --dry-run
	assert_success
	assert_output "HUGETLB_VERBOSE='2'
echo 1 > /$D1G/demote"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1@1 --dry-run
	assert_success
	assert_output "HUGETLB_VERBOSE='2'
echo 1 > /sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote"
	# The pages a pool option of the same command adds first count as free;
	# demote_size is written before the demote, whatever the order given.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:3 \
		--pool-demote-size 1G:2M --pool-pages-min 1G:4 --dry-run
	assert_success
	assert_output "HUGETLB_VERBOSE='2'
echo 4 > /$D1G/nr_hugepages
echo 2048kB > /$D1G/demote_size
echo 3 > /$D1G/demote"
	unchanged "$root"
	# In a tree (no kernel to answer) the write is made and not read back.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-demote 1G:1
	assert_success
	assert_equal "$(cat "$root/$D1G/demote")" 1
}

@test "--vmemmap-optimize: on|off only; a kernel without the file is an error naming it" {
	local root
	root=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --vmemmap-optimize yes
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: yes: invalid value for --vmemmap-optimize (on or off)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --vmemmap-optimize on --dry-run
	assert_success
	assert_output "HUGETLB_VERBOSE='2'
echo 1 > /proc/sys/vm/hugetlb_optimize_vmemmap"
	unchanged "$root"
	# Before the pools: it applies to pages allocated after it is set.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:12 --vmemmap-optimize off --dry-run
	assert_success
	assert_line --index 1 "echo 0 > /proc/sys/vm/hugetlb_optimize_vmemmap"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --vmemmap-optimize on
	assert_success
	assert_equal "$(cat "$root/proc/sys/vm/hugetlb_optimize_vmemmap")" 1
	root=$(fixture arm64)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --vmemmap-optimize off
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --vmemmap-optimize: the kernel has no /proc/sys/vm/hugetlb_optimize_vmemmap (Linux 5.19 or later, built with CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP)"
	unchanged "$root"
}

@test "--explain: demote sizes, HVO's state with its saving and cost, or not available" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain
	assert_success
	assert_line "  1G pages demote to 2M pages, 512 each; 0 free now"
	assert_line "HugeTLB vmemmap optimization (vm.hugetlb_optimize_vmemmap): off"
	assert_line "  28K per 2M page, 16380K per 1G page (pages already in the pool keep theirs)."
	assert_line --partial "about 2x slower"
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-2node)" --explain
	assert_line "HugeTLB vmemmap optimization (vm.hugetlb_optimize_vmemmap): on"
	assert_line "  Each huge page allocated since it was turned on gives back struct pages:"
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture arm64)" --explain
	assert_line "HugeTLB vmemmap optimization (vm.hugetlb_optimize_vmemmap): not available"
	assert_line "  32M pages demote to 2M pages, 16 each; 1 free now"
	refute_line --partial "gives back"
}

@test "--explain --json: vmemmap_optimize and hugetlb_cma" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain --json
	assert_success
	assert_equal "$(json 'd["explain"]["vmemmap_optimize"]["enabled"], [(s["size"], s["bytes"]) for s in d["explain"]["vmemmap_optimize"]["saves"]]')" \
		"False [(2097152, 28672), (1073741824, 16773120)]"
	assert_equal "$(json 'd["explain"]["hugetlb_cma"]')" \
		"{'set': False, 'parameter': None, 'size': None, 'cma_total': 0, 'cma_free': 0}"
	assert_equal "$(json '[p.get("cma_obtainable", "-") for p in d["explain"]["pools"]]')" "['-', None]"
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture arm64)" --explain --json
	assert_equal "$(json 'd["explain"]["vmemmap_optimize"]')" \
		"{'available': False, 'enabled': None, 'saves': [], 'cost': None}"
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-2node)" --explain --json
	assert_equal "$(json 'd["explain"]["hugetlb_cma"]["size"], d["explain"]["pools"][1]["cma_obtainable"]')" \
		"4294967296 2"
}

@test "--explain: hugetlb_cma set says how many gigantic pages CMA can give; unset, boot or CMA" {
	local root
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-2node)" --explain
	assert_success
	assert_line "  1G pages: gigantic: not from the free lists; hugetlb_cma=0:2G,1:2G is set: about 2 pages from CMA at run time (CmaFree 2097152 kB, an estimate)"
	root=$(fixture x86-1node)
	echo 'ro hugetlb_cma=4G quiet -- hugetlb_cma=1G' > "$root/proc/cmdline"
	sed -i 's/^CmaFree: .*/CmaFree:         3145728 kB/' "$root/proc/meminfo"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --explain --json
	assert_equal "$(json 'd["explain"]["hugetlb_cma"]["parameter"], d["explain"]["hugetlb_cma"]["size"], d["explain"]["pools"][1]["cma_obtainable"]')" \
		"4G 4294967296 3"
	# A kernel without CMA lines: set, but nothing to estimate from.
	sed -i '/^Cma/d' "$root/proc/meminfo"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --explain
	assert_success
	assert_line "  1G pages: gigantic: not from the free lists; hugetlb_cma=4G is set, but the kernel shows no CmaFree"
	# hugetlb_cma=0, a bad value, or after "--" (init's arguments): not set.
	for c in 'hugetlb_cma=0' 'hugetlb_cma=lots' 'hugetlb_cma=x:1G' 'ro -- hugetlb_cma=4G' 'hugetlb_cma_only'; do
		echo "$c" > "$root/proc/cmdline"
		run --separate-stderr "$HUGEADM" --sysroot "$root" --explain
		assert_success
		assert_line --partial 'or set aside CMA ("hugetlb_cma=SIZE") to grow at run time'
	done
	echo 'hugetlb_cma=lots' > "$root/proc/cmdline"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --explain
	assert_equal "$(grep -c hugetlb_cma <<<"$stderr")" 1
	assert_equal "$(grep hugetlb_cma <<<"$stderr")" "hugeadm:WARNING: /proc/cmdline: hugetlb_cma has a value that is not a size or a node:size list"
}
