#!/usr/bin/env bats
# The machine as it is, changed in nothing: every legacy report prints what
# libhugetlbfs 2.23 prints (on a fresh machine: empty pools, no mounts).

load live

setup_file() {
	live_requirements
	[ -n "$(legacy_tool hugeadm)" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	# Nothing is changed, but other live tests must not change things meanwhile.
	live_lock
}

compare() {
	local tool=$1 rc1=0 rc2=0
	shift
	"$(legacy_tool "$tool")" "$@" > "$BATS_TEST_TMPDIR/theirs.out" 2> "$BATS_TEST_TMPDIR/theirs.err" || rc1=$?
	"$HK_BUILD_DIR/tools/$tool" "$@" > "$BATS_TEST_TMPDIR/ours.out" 2> "$BATS_TEST_TMPDIR/ours.err" || rc2=$?
	if [ "$tool $1" = "hugeadm --explain" ]; then
		sed -i "s/value of 9223372036854775807 bytes/value of $(cat /proc/sys/kernel/shmmax) bytes/" "$BATS_TEST_TMPDIR/theirs.out"
		sed -i '/^Note: Permanent swap space/q' "$BATS_TEST_TMPDIR/ours.out"
	fi
	diff -u "$BATS_TEST_TMPDIR/theirs.out" "$BATS_TEST_TMPDIR/ours.out" || fail "$tool $*: stdout differs from 2.23"
	diff -u "$BATS_TEST_TMPDIR/theirs.err" "$BATS_TEST_TMPDIR/ours.err" || fail "$tool $*: stderr differs from 2.23"
	assert_equal "$rc2" "$rc1"
}

@test "pagesize, -a, -H as 2.23 on the machine as it is" {
	compare pagesize
	compare pagesize -a
	compare pagesize -H
}

@test "hugeadm reports as 2.23 on the machine as it is" {
	compare hugeadm --pool-list
	compare hugeadm --page-sizes
	compare hugeadm --page-sizes-all
	compare hugeadm --list-all-mounts
	compare hugeadm --explain
}
