#!/usr/bin/env bats
# One engine, one order (issue #20): each row is a line of hugeadm's change
# options and a configuration that asks the same. Their dry runs (2.23's
# shell lines for the options, --apply --dry-run for the configuration) make
# the same writes in the same order, compared as a write log (writelog.py:
# each file at its first write with its last value, a file left as it was
# dropped). The live half is tests/live/parity.bats.
#
# The configuration says a pool's maximum where the option keeps it: an
# option changes one limit and keeps the other (2.23), a [pool] section says
# both or leaves the unsaid one's overcommit as it is. Per node (@NODES,
# minimum = N@NODE) both leave the overcommit alone.
#
# The tree: x86-2node made kernel-like (no surplus pages): the 2 MiB pool has
# minimum 24 (node 0: 16, node 1: 8) and overcommit 8 (maximum 32); 1 GiB:
# minimum 2, all on node 1; THP enabled madvise, defrag madvise;
# min_free_kbytes 90112; hugetlb_shm_group 0; HVO on; shmmax as Linux's
# default (2^64 - 2^24 - 1).

load helpers

setup() {
	ROOT=$(fixture x86-2node)
	kernel_like "$ROOT"
	CONF="$BATS_TEST_TMPDIR/parity.conf"
	LOG="$HK_SOURCE_DIR/tests/cli/writelog.py"
}

# parity 'OPTIONS' 'CONFIG (printf format)' [EXPECTED...]: both dry runs, their write
# logs equal, and (when given) equal to the EXPECTED lines; the tree unchanged.
parity() {
	local opts=$1 conf=$2 a b
	shift 2
	# shellcheck disable=SC2059 # the row's configuration is a printf format
	printf "$conf" > "$CONF"
	# shellcheck disable=SC2086 # the option line is words
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --dry-run $opts
	assert_success
	a=$(python3 "$LOG" "$ROOT" <<< "$output")
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --apply "$CONF" --dry-run
	assert_success
	b=$(python3 "$LOG" "$ROOT" <<< "$output")
	[ -n "$a" ] || fail "'$opts' writes nothing: not a comparison"
	[ "$a" = "$b" ] || fail "$(printf 'options %s:\n%s\nconfiguration:\n%s\n' "$opts" "$a" "$b")"
	if [ $# -gt 0 ]; then
		assert_equal "$a" "$(printf '%s\n' "$@")"
	fi
	N_ROWS=$((${N_ROWS:-0} + 1))
}

V=/proc/sys/vm
T=/sys/kernel/mm/transparent_hugepage
G=/sys/kernel/mm/hugepages/hugepages-1048576kB

@test "THP: modes, defrag, khugepaged and multi-size knobs (7 rows)" {
	parity "--thp-never" '[thp]\nenabled = never\n' "$T/enabled=never"
	parity "--thp-always" '[thp]\nenabled = always\n'
	parity "--thp-defrag defer" '[thp]\ndefrag = defer\n'
	parity "--thp-khugepaged-pages 2048" '[thp]\nkhugepaged/pages_to_scan = 2048\n'
	parity "--thp-khugepaged-scan-sleep 5000" '[thp]\nkhugepaged/scan_sleep_millisecs = 5000\n'
	parity "--thp-khugepaged-alloc-sleep 30000" '[thp]\nkhugepaged/alloc_sleep_millisecs = 30000\n'
	parity "--thp-size 64K:always" '[thp]\nhugepages-64kB/enabled = always\n'
	assert_equal "$N_ROWS" 7
}

@test "pools: absolute, relative, in bytes, per node, gigantic, minimum and maximum (8 rows)" {
	parity "--pool-pages-min 2M:30" '[pool 2M]\nminimum = 30\nmaximum = 32\n' \
		"$V/nr_hugepages=30" "$V/nr_overcommit_hugepages=2"
	parity "--pool-pages-min 2M:+6" '[pool 2M]\nminimum = 30\nmaximum = 32\n'
	parity "--pool-pages-min 2M:60M" '[pool 2M]\nminimum = 30\nmaximum = 32\n'
	parity "--pool-pages-min 2M:-4" '[pool 2M]\nminimum = 20\nmaximum = 32\n'
	parity "--pool-pages-max 2M:40" '[pool 2M]\nmaximum = 40\n' "$V/nr_overcommit_hugepages=16"
	parity "--pool-pages-min 2M:30 --pool-pages-max 2M:40" '[pool 2M]\nminimum = 30\nmaximum = 40\n' \
		"$V/nr_hugepages=30" "$V/nr_overcommit_hugepages=10"
	# Per node the overcommit is left alone in both: the maximum moves with the minimum.
	parity "--pool-pages-min 2M:12@1" '[pool 2M]\nminimum = 12@1\n' \
		"/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages=12"
	parity "--pool-pages-min 1G:3" '[pool 1G]\nminimum = 3\n' "$G/nr_hugepages=3"
	assert_equal "$N_ROWS" 8
}

@test "sysctls: recommended min_free_kbytes and shmmax, the shm group, HVO (4 rows)" {
	parity "--set-recommended-min_free_kbytes" '[sysctl]\nvm.min_free_kbytes = recommended\n'
	parity "--set-shm-group 1" '[sysctl]\nvm.hugetlb_shm_group = 1\n' "$V/hugetlb_shm_group=1"
	parity "--vmemmap-optimize off" '[sysctl]\nvm.hugetlb_optimize_vmemmap = 0\n'
	# Recommended from the pools the plan leaves (shmmax lowered first: never lowered by hugeadm).
	echo 1048576 > "$ROOT/proc/sys/kernel/shmmax"
	parity "--pool-pages-min 2M:30 --set-recommended-shmmax" \
		'[pool 2M]\nminimum = 30\nmaximum = 32\n[sysctl]\nkernel.shmmax = recommended\n'
	assert_equal "$N_ROWS" 4
}

@test "the order is the engine's, not the file's: THP, HVO, pools, then the other sysctls (2 rows)" {
	# The configuration lists its sections backwards.
	parity "--thp-never --vmemmap-optimize off --pool-pages-min 2M:30 --pool-pages-max 2M:40 --set-recommended-min_free_kbytes --set-shm-group 1" \
		'[sysctl]\nvm.hugetlb_shm_group = 1\nvm.min_free_kbytes = recommended\nvm.hugetlb_optimize_vmemmap = 0\n[pool 2M]\nminimum = 30\nmaximum = 40\n[thp]\nenabled = never\n'
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --apply "$CONF" --dry-run
	run python3 "$LOG" "$ROOT" <<< "$output"
	assert_line --index 0 "$T/enabled=never"
	assert_line --index 1 "$V/hugetlb_optimize_vmemmap=0"
	assert_line --index 2 "$V/nr_hugepages=30"
	assert_line --index 3 "$V/nr_overcommit_hugepages=10"
	assert_line --index 5 "$V/hugetlb_shm_group=1"
	# --obey-mempolicy and [apply] obey_mempolicy = yes.
	parity "--obey-mempolicy --pool-pages-min 2M:30" '[pool 2M]\nminimum = 30\nmaximum = 32\n[apply]\nobey_mempolicy = yes\n' \
		"$V/nr_hugepages_mempolicy=30" "$V/nr_overcommit_hugepages=2"
	assert_equal "$N_ROWS" 2
}

@test "writelog.py: a file left as it was is dropped, 2.23's quoting removed, first place kept" {
	run python3 "$LOG" "$ROOT" <<-EOF
		HUGETLB_VERBOSE='2'
		echo 30 > $V/nr_hugepages
		echo 0 > $V/nr_overcommit_hugepages
		echo 'madvise' > $T/enabled
		echo "90112" > $V/min_free_kbytes
		echo 8 > $V/nr_overcommit_hugepages
		hugeadm:INFO: $V/hugetlb_shm_group = 3
		echo 31 > $V/nr_hugepages
	EOF
	assert_output "$(printf '%s\n' "$V/nr_hugepages=31" "$V/hugetlb_shm_group=3")"
}
