#!/usr/bin/env bats
# One engine, one order, on the running kernel (the dry-run half is
# tests/cli/option-config-parity.bats): each row is a line of hugeadm's
# change options and a configuration that asks the same, each run from the
# same starting state; the library's log of the writes it made (--verbose 3:
# "FILE = VALUE") gives the same write log (tests/cli/writelog.py: each file
# at its first write with its last value, a file left as it was dropped).
# Every file a row writes is saved and put back (live_save): the 2 MiB pool,
# the THP modes and khugepaged's knobs, the 64 kB size's mode, the shm group,
# HVO, min_free_kbytes and shmmax.

load live

M=/sys/kernel/mm/hugepages/hugepages-2048kB
N0=/sys/devices/system/node/node0/hugepages/hugepages-2048kB

setup_file() {
	live_requirements
	live_lock
	LIVE_SAVED_FILES+=("$THP/khugepaged/scan_sleep_millisecs" "$THP/khugepaged/alloc_sleep_millisecs"
		"$THP/hugepages-64kB/enabled" /proc/sys/vm/hugetlb_optimize_vmemmap)
	live_save
}

teardown_file() {
	live_restore
}

setup() {
	LOG="$HK_SOURCE_DIR/tests/cli/writelog.py"
	CONF="$BATS_TEST_TMPDIR/parity.conf"
}

# start NR OC: the starting state of every run: the 2 MiB pool (no surplus),
# THP defrag as the file began, the other knobs at fixed values (the
# sysctls at what they were).
start() {
	echo 0 > "$M/nr_overcommit_hugepages"
	echo "$1" > "$M/nr_hugepages"
	[ "$(cat "$M/nr_hugepages")" -eq "$1" ] || hk_skip "the kernel could not give $1 free 2 MiB pages"
	echo "$2" > "$M/nr_overcommit_hugepages"
	echo "$DEFRAG0" > "$THP/defrag"
	echo madvise > "$THP/enabled"
	echo never > "$THP/hugepages-64kB/enabled"
	echo 4096 > "$THP/khugepaged/pages_to_scan"
	echo 10000 > "$THP/khugepaged/scan_sleep_millisecs"
	echo 60000 > "$THP/khugepaged/alloc_sleep_millisecs"
	echo 0 > /proc/sys/vm/hugetlb_shm_group
	echo 0 > /proc/sys/vm/hugetlb_optimize_vmemmap
	echo "$MFK0" > /proc/sys/vm/min_free_kbytes
}

# snap DIR: the files a row may write, copied under DIR at their paths (writelog.py's ROOT).
snap() {
	local f
	rm -rf "$1"
	for f in /proc/sys/vm/nr_hugepages /proc/sys/vm/nr_overcommit_hugepages "$N0/nr_hugepages" \
		/proc/sys/vm/nr_hugepages_mempolicy "$THP/defrag" "$THP/enabled" "$THP"/khugepaged/*_* \
		"$THP/hugepages-64kB/enabled" /proc/sys/vm/hugetlb_shm_group \
		/proc/sys/vm/hugetlb_optimize_vmemmap /proc/sys/vm/min_free_kbytes; do
		[ -e "$f" ] || continue
		mkdir -p "$1$(dirname "$f")"
		cat "$f" > "$1$f"
	done
}

# live_parity NR OC 'OPTIONS' 'CONFIG (printf format)' EXPECTED...: both runs
# from "start NR OC"; their write logs equal each other and EXPECTED.
live_parity() {
	local nr=$1 oc=$2 opts=$3 conf=$4 a b
	shift 4
	# shellcheck disable=SC2059 # the row's configuration is a printf format
	printf "$conf" > "$CONF"
	start "$nr" "$oc"
	snap "$BATS_TEST_TMPDIR/before"
	# shellcheck disable=SC2086 # the option line is words
	run --separate-stderr hugeadm --verbose 3 $opts
	assert_success
	a=$(python3 "$LOG" "$BATS_TEST_TMPDIR/before" <<< "$stderr")
	start "$nr" "$oc"
	run --separate-stderr hugeadm --verbose 3 --apply "$CONF"
	assert_success
	b=$(python3 "$LOG" "$BATS_TEST_TMPDIR/before" <<< "$stderr")
	[ "$a" = "$b" ] || fail "$(printf 'options %s:\n%s\nconfiguration:\n%s\n' "$opts" "$a" "$b")"
	assert_equal "$a" "$(printf '%s\n' "$@")"
	N_ROWS=$((${N_ROWS:-0} + 1))
}

@test "pools and THP knobs: the same writes in the same order as their configurations (7 rows of 23)" {
	local V=/proc/sys/vm
	DEFRAG0=$(live_setting "$THP/defrag")
	MFK0=$(cat /proc/sys/vm/min_free_kbytes)
	[ "$DEFRAG0" = defer ] && DEFRAG=madvise || DEFRAG=defer
	live_parity 0 0 "--pool-pages-min 2M:4" '[pool 2M]\nminimum = 4\nmaximum = 4\n' "$V/nr_hugepages=4"
	live_parity 0 0 "--pool-pages-max 2M:8" '[pool 2M]\nmaximum = 8\n' "$V/nr_overcommit_hugepages=8"
	live_parity 0 0 "--pool-pages-min 2M:4 --pool-pages-max 2M:8" '[pool 2M]\nminimum = 4\nmaximum = 8\n' \
		"$V/nr_hugepages=4" "$V/nr_overcommit_hugepages=4"
	# A pool that shrinks and keeps its maximum: the overcommit first.
	live_parity 6 2 "--pool-pages-min 2M:2" '[pool 2M]\nminimum = 2\nmaximum = 8\n' \
		"$V/nr_overcommit_hugepages=6" "$V/nr_hugepages=2"
	live_parity 0 0 "--pool-pages-min 2M:2@0" '[pool 2M]\nminimum = 2@0\n' "$N0/nr_hugepages=2"
	live_parity 0 0 "--thp-defrag $DEFRAG" "[thp]\ndefrag = $DEFRAG\n" "$THP/defrag=$DEFRAG"
	live_parity 0 0 "--thp-khugepaged-pages 1024" '[thp]\nkhugepaged/pages_to_scan = 1024\n' \
		"$THP/khugepaged/pages_to_scan=1024"
	assert_equal "$N_ROWS" 7
}

@test "THP, sysctls, relative and byte pools, mempolicy, a mixed line: the same writes (16 rows of 23)" {
	local V=/proc/sys/vm rec
	DEFRAG0=$(live_setting "$THP/defrag")
	MFK0=$(cat /proc/sys/vm/min_free_kbytes)
	live_parity 0 0 "--thp-never" '[thp]\nenabled = never\n' "$THP/enabled=never"
	live_parity 0 0 "--thp-always" '[thp]\nenabled = always\n' "$THP/enabled=always"
	live_parity 0 0 "--thp-khugepaged-scan-sleep 5000" '[thp]\nkhugepaged/scan_sleep_millisecs = 5000\n' \
		"$THP/khugepaged/scan_sleep_millisecs=5000"
	live_parity 0 0 "--thp-khugepaged-alloc-sleep 30000" '[thp]\nkhugepaged/alloc_sleep_millisecs = 30000\n' \
		"$THP/khugepaged/alloc_sleep_millisecs=30000"
	live_parity 0 0 "--thp-size 64K:always" '[thp]\nhugepages-64kB/enabled = always\n' \
		"$THP/hugepages-64kB/enabled=always"
	live_parity 0 0 "--set-shm-group 1" '[sysctl]\nvm.hugetlb_shm_group = 1\n' "$V/hugetlb_shm_group=1"
	live_parity 0 0 "--vmemmap-optimize on" '[sysctl]\nvm.hugetlb_optimize_vmemmap = 1\n' \
		"$V/hugetlb_optimize_vmemmap=1"
	# The recommendation is the machine's: the dry run names it (nothing when it is the value now).
	start 0 0
	rec=$(hugeadm --dry-run --set-recommended-min_free_kbytes | sed -n "s|^echo \"\([0-9]*\)\" > $V/min_free_kbytes\$|\1|p")
	[ -n "$rec" ] || fail "no recommended min_free_kbytes in the dry run"
	if [ "$rec" = "$MFK0" ]; then set --; else set -- "$V/min_free_kbytes=$rec"; fi
	live_parity 0 0 "--set-recommended-min_free_kbytes" '[sysctl]\nvm.min_free_kbytes = recommended\n' "$@"
	live_parity 4 0 "--pool-pages-min 2M:+2" '[pool 2M]\nminimum = 6\nmaximum = 6\n' "$V/nr_hugepages=6"
	# Shrinking the minimum keeps the maximum: the overcommit first, in both.
	live_parity 4 2 "--pool-pages-min 2M:-2" '[pool 2M]\nminimum = 2\nmaximum = 6\n' \
		"$V/nr_overcommit_hugepages=4" "$V/nr_hugepages=2"
	live_parity 0 0 "--pool-pages-min 2M:8M" '[pool 2M]\nminimum = 4\nmaximum = 4\n' "$V/nr_hugepages=4"
	live_parity 2 0 "--pool-pages-max 2M:+4" '[pool 2M]\nmaximum = 6\n' "$V/nr_overcommit_hugepages=4"
	live_parity 2 4 "--pool-pages-max 2M:-2" '[pool 2M]\nmaximum = 4\n' "$V/nr_overcommit_hugepages=2"
	live_parity 4 2 "--pool-pages-min 2M:2 --pool-pages-max 2M:2" '[pool 2M]\nminimum = 2\nmaximum = 2\n' \
		"$V/nr_overcommit_hugepages=0" "$V/nr_hugepages=2"
	live_parity 0 0 "--obey-mempolicy --pool-pages-min 2M:4" \
		'[pool 2M]\nminimum = 4\nmaximum = 4\n[apply]\nobey_mempolicy = yes\n' "$V/nr_hugepages_mempolicy=4"
	# The sections backwards in the file: the engine's order in both.
	live_parity 0 0 "--thp-never --pool-pages-min 2M:4 --set-shm-group 1" \
		'[sysctl]\nvm.hugetlb_shm_group = 1\n[pool 2M]\nminimum = 4\nmaximum = 4\n[thp]\nenabled = never\n' \
		"$THP/enabled=never" "$V/nr_hugepages=4" "$V/hugetlb_shm_group=1"
	assert_equal "$N_ROWS" 16
}

@test "options on the running kernel: a later write that fails (fault-injected) puts back the earlier ones" {
	local faulty="$HK_BUILD_DIR/tests/hugeadm-fault" before
	hk_need_built "$faulty"
	DEFRAG0=$(live_setting "$THP/defrag")
	MFK0=$(cat /proc/sys/vm/min_free_kbytes)
	start 2 0
	before=$(live_snapshot)
	run --separate-stderr env HK_FAULT="write:/proc/sys/vm/hugetlb_shm_group:1:EIO" "$faulty" \
		--thp-never --pool-pages-min 2M:4 --set-shm-group 1
	assert_failure 1
	[[ $stderr == *"hugeadm-fault:ERROR: /proc/sys/vm/hugetlb_shm_group: cannot write 1: Input/output error"* ]] || fail "$stderr"
	[[ $stderr == *"hugeadm-fault:ERROR: --set-shm-group 1: failed: 2 files put back as they were before this run"* ]] || fail "$stderr"
	assert_equal "$(live_snapshot)" "$before"
}
