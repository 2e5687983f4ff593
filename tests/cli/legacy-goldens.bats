#!/usr/bin/env bats
# The golden files of the legacy reports are what libhugetlbfs 2.23 itself
# prints for the same tree: its hugeadm and pagesize run with a path shim
# (tests/legacy/pathshim.c) that redirects /proc and /sys into the fixture.
# The tree's /proc/mounts, which 2.23 reads, is made from its mountinfo.

load helpers

setup() {
	LEGACY_HUGEADM=/usr/bin/hugeadm
	LEGACY_PAGESIZE=/usr/bin/pagesize
	if ! dpkg -S "$LEGACY_HUGEADM" 2> /dev/null | grep -q '^libhugetlbfs-bin:'; then
		hk_missing "libhugetlbfs-bin (2.23) is not installed"
	fi
	SHIM="$HK_BUILD_DIR/tests/libhk-pathshim.so"
	[ -f "$SHIM" ] || fail "the path shim $SHIM is not built"
}

# legacy ROOT TOOL ARGS...: run 2.23's TOOL on the tree ROOT.
legacy() {
	local root=$1
	shift
	HK_SHIM_ROOT="$root" LD_PRELOAD="$SHIM" "$@"
}

# tree NAME: a scratch copy with the proc/mounts that 2.23 reads.
tree() {
	local root
	root=$(fixture "$1")
	awk -f "$HK_SOURCE_DIR/tests/legacy/mounts-from-mountinfo.awk" "$root/proc/self/mountinfo" > "$root/proc/mounts"
	printf '%s\n' "$root"
}

@test "the shim really redirects 2.23 into the tree" {
	local root
	root=$(tree arm64)
	run legacy "$root" "$LEGACY_PAGESIZE" -H
	assert_success
	assert_line --index 0 65536
}

@test "pagesize goldens are 2.23's" {
	local t root
	for t in x86-1node arm64 nohugetlb; do
		root=$(tree "$t")
		golden "pagesize/$t-all" legacy "$root" "$LEGACY_PAGESIZE" -a
		golden "pagesize/$t-huge" legacy "$root" "$LEGACY_PAGESIZE" -H
		golden "pagesize/$t" legacy "$root" "$LEGACY_PAGESIZE"
	done
}

@test "hugeadm --pool-list and --page-sizes-all goldens are 2.23's" {
	local t root
	for t in x86-1node x86-2node arm64; do
		root=$(tree "$t")
		golden "hugeadm/$t-pool-list" legacy "$root" "$LEGACY_HUGEADM" --pool-list
		golden "hugeadm/$t-page-sizes-all" legacy "$root" "$LEGACY_HUGEADM" --page-sizes-all
	done
}

@test "hugeadm --list-all-mounts goldens are 2.23's" {
	local t root
	for t in x86-1node x86-2node arm64; do
		root=$(tree "$t")
		golden "hugeadm/$t-list-all-mounts" legacy "$root" "$LEGACY_HUGEADM" --list-all-mounts
	done
}

@test "a 10 KB mount line: 2.23 complains (its issue 43), we print the same table without" {
	local root
	root=$(tree mounts-long)
	run --separate-stderr legacy "$root" "$LEGACY_HUGEADM" --pool-list
	assert_success
	assert_equal "$stderr" "libhugetlbfs: ERROR: Line too long when parsing mounts"
	assert_equal "$output" "$(cat "$HK_EXPECTED/hugeadm/mounts-long-pool-list.out")"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list
	assert_success
	assert_equal "$stderr" ""
	assert_equal "$output" "$(cat "$HK_EXPECTED/hugeadm/mounts-long-pool-list.out")"
}

@test "a kernel without hugetlb: 2.23's message and status" {
	golden "hugeadm/nohugetlb" legacy "$(tree nohugetlb)" "$LEGACY_HUGEADM" --pool-list
}
