#!/usr/bin/env bats
# The libraries read their environment with secure_getenv: a setuid or
# file-capability program does not take HK_DEBUG from its caller, and neither
# does hugeadm's own HK_DEBUG/HUGETLB_DEBUG. Copies of the test programs get a
# file capability (setcap) and run as nobody. Nothing on the machine changes.

load live

setup() {
	hk_need_root "setcap and setpriv"
	hk_need_cmd setcap libcap2-bin
	hk_need_cmd setpriv util-linux
	hk_need_user nobody
	# A directory nobody can read (the bats one is root's 0700), with hugeadm and
	# its libraries where a file-capability copy loads them (the loader ignores
	# $ORIGIN there), wherever the checkout is.
	T=$(hk_stage_for_user --secure tools/hugeadm)
}

teardown() {
	hk_unstage
}

AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"

# capped NAME PROGRAM: a copy of PROGRAM as $T/NAME with a harmless file capability.
capped() {
	cp "$2" "$T/$1"
	setcap cap_sys_nice+ep "$T/$1"
}

@test "libhugekit: HK_DEBUG is ignored in a file-capability program" {
	cp "$HK_BUILD_DIR/tests/test-write" "$T/plain"
	capped cap "$HK_BUILD_DIR/tests/test-write"
	# Without the capability HK_DEBUG is taken (the test checks LOG_DEBUG) ...
	run $AS_NOBODY env HK_DEBUG=1 HK_TEST_FILTER=test_hk_debug_only_when_not_secure "$T/plain"
	assert_success
	assert_output --partial "[  PASSED  ] 1 test(s)."
	# ... with it, the program is in secure mode and the library stays at LOG_ERR.
	run $AS_NOBODY env HK_DEBUG=1 HK_EXPECT_SECURE=1 HK_TEST_FILTER=test_hk_debug_only_when_not_secure "$T/cap"
	assert_success
	assert_output --partial "[  PASSED  ] 1 test(s)."
}

@test "hugeadm: HK_DEBUG and HUGETLB_DEBUG are ignored in a file-capability hugeadm" {
	cp "$T/tools/hugeadm" "$T/plain"
	capped cap "$T/tools/hugeadm"
	# A dry run of the running system (a file-capability hugeadm takes no --sysroot
	# from its caller): its first line is the message level it starts from.
	run --separate-stderr $AS_NOBODY env HK_DEBUG=1 "$T/plain" --pool-pages-min 2M:+0 --dry-run
	assert_success
	assert_line --index 0 "HUGETLB_VERBOSE='4'"
	[[ "$stderr" == *"plain:DEBUG: /proc/sys/vm/nr_hugepages = "* ]]
	for v in HK_DEBUG HUGETLB_DEBUG; do
		run --separate-stderr $AS_NOBODY env "$v=1" "$T/cap" --pool-pages-min 2M:+0 --dry-run
		assert_success
		assert_line --index 0 "HUGETLB_VERBOSE='2'"
		assert_equal "$stderr" ""
	done
}
