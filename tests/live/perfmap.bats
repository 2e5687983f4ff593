#!/usr/bin/env bats
# shellcheck disable=SC2154 # run --separate-stderr sets stderr
# Profilers keep the symbols of moved text (HUGETLB_PERFMAP=1, hugectl
# --perf-map): text on huge pages is anonymous memory, and perf names its
# functions only from /tmp/perf-PID.map. A program whose time is in one
# function (hot_spin), linked with ld.hugetlbfs so that its text moves, is
# recorded with Debian's perf (cpu-clock, no hardware counter needed)
# attached to it while it runs, as a profiler sees a server: with the map
# perf report names hot_spin, without it it cannot (perf started before the
# program would have seen the file mapped at exec, and named it anyway). The map is made
# under a fresh name and renamed into place: a link another user left at
# /tmp/perf-PID.map is replaced, never followed.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
	command -v gcc > /dev/null || return 0
	local d=$BATS_FILE_TMPDIR
	mkdir "$d/ldb"
	ln -s "$HK_BUILD_DIR/tools/ld.hugetlbfs" "$d/ldb/ld"
	printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' \
		'__attribute__((noinline)) unsigned long hot_spin(unsigned long n)' \
		'{ volatile unsigned long x = 0; for (unsigned long i = 0; i < n; i++) x += i * 7; return x; }' \
		'int main(int argc, char **argv) { printf("%lu\n", hot_spin(strtoul(argv[1], NULL, 10)) & 1); return 0; }' \
		> "$d/hot.c"
	gcc -O2 -B "$d/ldb" -Wl,--hugetlbfs-align -o "$d/hot" "$d/hot.c"
}

teardown_file() {
	rm -f /tmp/perf-hk-victim
	live_restore
}

setup() {
	hk_need_cmd gcc gcc
	hk_need_cmd perf linux-perf
	live_pool_free 16
}

# the map file the runtime said it wrote (HUGETLB_PERFMAP=1 at -v).
map_of() {
	sed -n 's/.*HUGETLB_PERFMAP=1: \(\/tmp\/perf-[0-9]*\.map\): [0-9]* functions of the moved text$/\1/p' <<< "$1"
}

# record [hugectl options]: hot spinning under hugectl --text -v, recorded as
# a profiler sees a running server: perf record -p attaches after the start
# and reads the mappings from /proc/PID/maps (its text is /anon_hugepage
# there), for a second. perf report's lines in $report, the first in $top;
# the runtime's stderr in $stderr.
record() {
	local err=$BATS_TEST_TMPDIR/hot.err pid i
	hugectl -v --text "$@" "$BATS_FILE_TMPDIR/hot" 100000000000 > /dev/null 2> "$err" &
	pid=$!
	for i in $(seq 50); do
		grep -q 'segment [0-9]* (text)' "$err" && break
		sleep 0.1
	done
	sleep 0.2
	perf record -q -e cpu-clock -p "$pid" -o "$BATS_TEST_TMPDIR/perf.data" -- sleep 1 2> /dev/null || true
	kill "$pid"
	wait "$pid" || true
	stderr=$(cat "$err")
	printf '# stderr: %s\n' "$stderr"
	assert_regex "$stderr" 'segment [0-9]+ \(text\): .* on 2048 kB hugetlb pages: the whole segment'
	report=$(perf report -i "$BATS_TEST_TMPDIR/perf.data" --stdio --sort sym 2> /dev/null | grep -v '^#' | grep -v '^$')
	top=$(head -n 1 <<< "$report")
	printf '# report: %s\n' "$(head -n 5 <<< "$report")"
}

@test "hugectl --text --perf-map: the map lists hot_spin in the moved text, 0600 (its addresses are the layout /proc/PID/maps keeps from other users), the user's; perf report names it first" {
	record --perf-map
	local map
	map=$(map_of "$stderr")
	[ -n "$map" ] || fail "no map said: $stderr"
	[ -f "$map" ] && [ ! -L "$map" ]
	assert_equal "$(stat -c '%U %a' "$map")" "root 600"
	if command -v setpriv > /dev/null; then
		run setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$map"
		assert_failure
	fi
	grep -E -q '^[0-9a-f]+ [0-9a-f]+ hot_spin$' "$map" || fail "$(cat "$map")"
	grep -E -q '^[0-9a-f]+ [0-9a-f]+ main$' "$map" || fail "$(cat "$map")"
	[[ "$top" == *hot_spin* ]] || fail "top: $top"
	rm -f "$map"
}

@test "without --perf-map perf cannot name the moved function: the test above can fail" {
	record
	[ -z "$(map_of "$stderr")" ]
	[[ "$report" != *hot_spin* ]] || fail "named without a map: $report"
}

@test "a link another user left at /tmp/perf-PID.map: replaced by the map, never followed" {
	hk_need_user nobody
	echo victim > /tmp/perf-hk-victim
	# The pid is the program's: exec keeps it.
	run --separate-stderr sh -c 'setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s /tmp/perf-hk-victim /tmp/perf-$$.map &&
		exec hugectl -v --text --perf-map "$1" 1000' sh "$BATS_FILE_TMPDIR/hot"
	printf '# stderr: %s\n' "$stderr"
	assert_success
	local map
	map=$(map_of "$stderr")
	[ -n "$map" ] || fail "no map said"
	assert_equal "$(cat /tmp/perf-hk-victim)" victim
	[ -f "$map" ] && [ ! -L "$map" ] || fail "$(ls -l "$map")"
	grep -q ' hot_spin$' "$map"
	rm -f "$map"
}

@test "a program run by another user that finds root's /tmp/perf-PID.map: warned, the file left as it is, the program runs" {
	hk_need_user nobody
	local T
	T=$(hk_stage_for_user tools/hugectl)
	cp "$BATS_FILE_TMPDIR/hot" "$T/hot"
	chmod 755 "$T/hot"
	run --separate-stderr sh -c 'echo root-owned > /tmp/perf-$$.map && chmod 644 /tmp/perf-$$.map &&
		exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$1/tools/hugectl" --text --perf-map "$1/hot" 1000' sh "$T"
	printf '# stderr: %s\n' "$stderr"
	assert_success
	assert_output 0
	local pid map
	map=$(sed -n 's/.*HUGETLB_PERFMAP=1: cannot write \(\/tmp\/perf-[0-9]*\.map\) (Operation not permitted): profilers will not name the functions of the moved text$/\1/p' <<< "$stderr")
	[ -n "$map" ] || fail "no warning: $stderr"
	assert_equal "$(cat "$map")" root-owned
	# No temporary file left beside it.
	pid=${map#/tmp/perf-}
	pid=${pid%.map}
	[ -z "$(find /tmp -maxdepth 1 -name "perf-$pid.map.*")" ]
	rm -f "$map"
}
