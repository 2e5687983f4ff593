#!/usr/bin/env bats
# pagesize on fixture trees: the output of libhugetlbfs 2.23's pagesize, byte for byte.

load helpers

@test "pagesize prints the base page size of each tree" {
	for t in x86-1node x86-2node arm64 nohugetlb; do
		golden "pagesize/$t" "$PAGESIZE" --sysroot "$(fixture "$t")"
	done
}

@test "pagesize -a and --all: base then huge sizes, ascending" {
	for t in x86-1node arm64 nohugetlb; do
		golden "pagesize/$t-all" "$PAGESIZE" --sysroot "$(fixture "$t")" -a
		golden "pagesize/$t-all" "$PAGESIZE" --sysroot "$(fixture "$t")" --all
	done
}

@test "pagesize -H and --huge-only: huge sizes only, ascending; none without hugetlb" {
	for t in x86-1node arm64 nohugetlb; do
		golden "pagesize/$t-huge" "$PAGESIZE" --sysroot "$(fixture "$t")" -H
		golden "pagesize/$t-huge" "$PAGESIZE" --sysroot "$(fixture "$t")" --huge-only
	done
}

@test "pagesize -a -H: -H wins, as in 2.23" {
	golden "pagesize/arm64-huge" "$PAGESIZE" --sysroot "$(fixture arm64)" -a -H
	golden "pagesize/arm64-huge" "$PAGESIZE" --sysroot "$(fixture arm64)" -aH
}

@test "pagesize -a and -H read no /proc/meminfo (the default size is not theirs to print)" {
	local t
	t=$(fixture arm64)
	printf 'Hugepagesize:   many kB\n' > "$t/proc/meminfo"
	golden "pagesize/arm64-all" "$PAGESIZE" --sysroot "$t" -a
	golden "pagesize/arm64-huge" "$PAGESIZE" --sysroot "$t" -H
	rm "$t/proc/meminfo"
	golden "pagesize/arm64-all" "$PAGESIZE" --sysroot "$t" -a
}

@test "the arm64 tree lists 64K and 32M pages that x86 lacks" {
	run "$PAGESIZE" --sysroot "$(fixture arm64)" -H
	assert_success
	assert_line --index 0 65536
	assert_line --index 2 33554432
}

@test "pagesize --help prints usage on stdout, exit 0 (2.23 rejected --help)" {
	run --separate-stderr "$PAGESIZE" --help
	assert_success
	assert_output --partial "--huge-only"
	assert_equal "$stderr" ""
	run "$PAGESIZE" -h
	assert_success
	assert_output --partial "Usage:"
}

@test "pagesize -V prints the version" {
	run "$PAGESIZE" -V
	assert_success
	assert_output --regexp "^pagesize from hugekit [0-9]+\.[0-9]+\.[0-9]+$"
}

@test "pagesize with a bad option or an argument: message, Try line, exit 1" {
	golden "pagesize/bad-option" "$PAGESIZE" -x
	golden "pagesize/bad-long-option" "$PAGESIZE" --bogus
	golden "pagesize/stray-argument" "$PAGESIZE" target
}

@test "pagesize on a missing sysroot fails with the reason" {
	golden "pagesize/missing-sysroot" "$PAGESIZE" --sysroot /nonexistent/hk-tree
}

@test "pagesize on a tree with an unreadable hugepages directory fails, exit 1" {
	local root
	root=$(fixture x86-1node)
	rm -rf "$root/sys/kernel/mm/hugepages"
	printf 'not a directory\n' > "$root/sys/kernel/mm/hugepages"
	golden "pagesize/broken-tree" "$PAGESIZE" --sysroot "$root" -H
}

@test "every tool started by its path names itself by its short name in getopt's messages" {
	local t
	for t in pagesize hugeadm hugectl hugeedit tlbmiss_cost cpupcstat; do
		run --separate-stderr "$HK_BUILD_DIR/tools/$t" --no-such-option-hk
		assert_failure 1
		assert_equal "${stderr%%$'\n'*}" "$t: unrecognized option '--no-such-option-hk'"
	done
}
