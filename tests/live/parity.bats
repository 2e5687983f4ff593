#!/usr/bin/env bats
# One engine, one order, on the running kernel (the dry-run half is
# tests/cli/option-config-parity.bats): each row is a line of hugeadm's
# change options and a configuration that asks the same, each run from the
# same starting state; the library's log of the writes it made (--verbose 3:
# "FILE = VALUE") gives the same write log (tests/cli/writelog.py: each file
# at its first write with its last value, a file left as it was dropped).
# The 2 MiB pool, THP defrag and khugepaged's pages_to_scan are saved and put
# back (live_save).

load live

M=/sys/kernel/mm/hugepages/hugepages-2048kB
N0=/sys/devices/system/node/node0/hugepages/hugepages-2048kB

setup_file() {
	live_requirements
	live_lock
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
# THP defrag and pages_to_scan as the file began.
start() {
	echo 0 > "$M/nr_overcommit_hugepages"
	echo "$1" > "$M/nr_hugepages"
	[ "$(cat "$M/nr_hugepages")" -eq "$1" ] || hk_skip "the kernel could not give $1 free 2 MiB pages"
	echo "$2" > "$M/nr_overcommit_hugepages"
	echo "$DEFRAG0" > "$THP/defrag"
	echo 4096 > "$THP/khugepaged/pages_to_scan"
}

# snap DIR: the files a row may write, copied under DIR at their paths (writelog.py's ROOT).
snap() {
	local f
	rm -rf "$1"
	for f in /proc/sys/vm/nr_hugepages /proc/sys/vm/nr_overcommit_hugepages "$N0/nr_hugepages" \
		"$THP/defrag" "$THP/khugepaged/pages_to_scan"; do
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

@test "pools and THP knobs: the same writes in the same order as their configurations (7 rows)" {
	local V=/proc/sys/vm
	DEFRAG0=$(live_setting "$THP/defrag")
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
