#!/usr/bin/env bats
# shellcheck disable=SC2154 # run --separate-stderr sets stderr and stderr_lines
# tlbmiss_cost and cpupcstat without measuring anything: argument errors,
# cpupcstat's line for a machine without counters (injected with
# HK_FAULT_PERF, so it is tested on any machine), the --compare report and its
# JSON shape on a command that takes no time, and the bash completions.
# The measurements themselves are in tests/live/insight-tlb.bats.

load helpers

# json EXPR: evaluate the Python expression EXPR on the JSON of $output (as j).
json() {
	python3 -c 'import json, sys; j = json.loads(sys.argv[2]); print(eval(sys.argv[1]))' "$1" "$output"
}

# usage_error TOOL MESSAGE ARGS...: exit 1, nothing on stdout, MESSAGE and the Try line on stderr.
usage_error() {
	local tool=$1 msg=$2
	shift 2
	run --separate-stderr "$tool" "$@"
	assert_failure 1
	assert_output ''
	[[ $stderr == *"$msg"* ]] || fail "stderr of '$tool $*' lacks '$msg': $stderr"
	[[ $stderr == *"Try '$tool --help' for more information."* ]] || fail "no Try line: $stderr"
}

# shellcheck disable=SC2030 # run sets output in each test
@test "tlbmiss_cost: a bad argument names the option and the value, exit 1" {
	usage_error tlbmiss_cost "--size: '3' is not a size from 4M to 64G" --size 3
	usage_error tlbmiss_cost "--size: 'lots' is not a size" --size lots
	usage_error tlbmiss_cost "--size: '65G' is not a size" -s 65G
	usage_error tlbmiss_cost "--runs: '5' is not a number from 6 to 100000000" --runs 5
	usage_error tlbmiss_cost "--runs: '100000001' is not a number" -r 100000001
	usage_error tlbmiss_cost "--hops: '99' is not a number from 100 to 1000000" --hops 99
	usage_error tlbmiss_cost "--budget: '0.05' is not a number of seconds from 0.1 to 3600" --budget 0.05
	usage_error tlbmiss_cost "--budget: '1e3' is not a number of seconds" --budget 1e3
	usage_error tlbmiss_cost "--budget: '-1' is not a number of seconds" --budget -1
	usage_error tlbmiss_cost "--backing: 'pool' is not one of auto, hugetlb, thp" --backing pool
	usage_error tlbmiss_cost "unexpected argument 'now'" now
	usage_error tlbmiss_cost "unrecognized option" --no-such
}

# tlbmiss_cost's rule on fake rounds: the test copy (tlbmiss_cost-fake, built
# with HK_MEASURE_FAKE) takes its rounds "BASE HUGE SECONDS [switched|stalled]"
# from HK_MEASURE_FAKE, cycled, on a fake clock; nothing is mapped or timed.
FAKE_TLB="$HK_BUILD_DIR/tests/tlbmiss_cost-fake"
# costs 200 199 202 201 198 (base - huge), 0.01 s a round
QUIET='300 100 0.01;299 100 0.01;302 100 0.01;301 100 0.01;298 100 0.01'

# fake_tlb ROUNDS ARGS...: tlbmiss_cost-fake ARGS on ROUNDS.
fake_tlb() {
	local rounds=$1
	shift
	run --separate-stderr env HK_MEASURE_FAKE="$rounds" "$FAKE_TLB" "$@"
}

# rule: the JSON of $output follows tlbmiss_cost's rule (tests/measure-rule.py).
# shellcheck disable=SC2031 # $output is bats's, set by the run before
rule() {
	local json=$output
	run python3 "$HK_SOURCE_DIR/tests/measure-rule.py" "$json"
	echo "$output"
	assert_success
}

@test "tlbmiss_cost fake rounds, quiet: measurable at the first check (16 rounds), median 200, interval 199 to 201" {
	fake_tlb "$QUIET"
	assert_success
	assert_output 'TLB_MISS_COST=200'
	assert_equal "${stderr_lines[2]}" 'tlbmiss_cost-fake: 16 rounds: 16 kept, 0 discarded (0 switched out, 0 stalled); 0.16 s of 5.00 s; stopped: narrow'
	assert_equal "${stderr_lines[3]}" 'tlbmiss_cost-fake: TLB miss cost 200.0 cycles, 95 % interval 199.0 to 201.0 (bound: within 20.0 of it, above 0)'
	assert_equal "${#stderr_lines[@]}" 4
	fake_tlb "$QUIET" --quiet
	assert_output 'TLB_MISS_COST=200'
	assert_equal "$stderr" ''
	fake_tlb "$QUIET" --json
	assert_equal "$(json '(lambda t: (t["estimate"], t["low"], t["high"], t["rounds"], t["stopped"], t["measurable"], t["tlb_miss_cost"]))(j["tlbmiss_cost"])')" \
		"(200.0, 199.0, 201.0, 16, 'narrow', True, 200)"
	rule
}

@test "tlbmiss_cost fake rounds, noisy: runs to the budget, not measurable, the interval said" {
	# costs 400 50 0 300, 0.5 s a round: 20 rounds in 10 s
	fake_tlb '500 100 0.5;150 100 0.5;100 100 0.5;400 100 0.5' --budget 10
	assert_success
	assert_output 'TLB_MISS_COST=0'
	assert_equal "${stderr_lines[2]}" 'tlbmiss_cost-fake: 20 rounds: 20 kept, 0 discarded (0 switched out, 0 stalled); 10.00 s of 10.00 s; stopped: budget'
	assert_equal "${stderr_lines[4]}" 'tlbmiss_cost-fake: not measurable: the interval is wider than the bound (95 % interval 50.0 to 300.0 cycles, bound 17.5); printing 0'
	# --quiet keeps the verdict with its interval
	fake_tlb '500 100 0.5;150 100 0.5;100 100 0.5;400 100 0.5' --budget 10 --quiet
	assert_output 'TLB_MISS_COST=0'
	assert_equal "$stderr" 'tlbmiss_cost-fake: not measurable: the interval is wider than the bound (95 % interval 50.0 to 300.0 cycles, bound 17.5); printing 0'
	fake_tlb '500 100 0.5;150 100 0.5;100 100 0.5;400 100 0.5' --budget 10 --json
	assert_equal "$(json '(lambda t: (t["estimate"], t["low"], t["high"], t["rounds"], t["stopped"], t["measurable"], t["reason"], t["tlb_miss_cost"]))(j["tlbmiss_cost"])')" \
		"(175.0, 50.0, 300.0, 20, 'budget', False, 'the interval is wider than the bound', 0)"
	rule
	# --runs ends it first
	fake_tlb '500 100 0.5;150 100 0.5;100 100 0.5;400 100 0.5' --budget 10 --runs 8 --json
	assert_equal "$(json '(lambda t: (t["rounds"], t["stopped"], t["measurable"]))(j["tlbmiss_cost"])')" "(8, 'rounds', False)"
	rule
}

@test "tlbmiss_cost fake rounds, preempted: switched and stalled rounds are discarded and counted" {
	# the quiet costs with a switched round (4900) and a stalled one (8900) in every 7
	fake_tlb '300 100 0.01;5000 100 0.01 switched;299 100 0.01;302 100 0.01;9000 100 0.01 stalled;301 100 0.01;298 100 0.01' --json
	assert_success
	assert_equal "$(json '(lambda t: (t["estimate"], t["low"], t["high"], t["rounds"], t["rounds_kept"], t["discarded_switched"], t["discarded_stalled"], t["tlb_miss_cost"]))(j["tlbmiss_cost"])')" \
		"(200.0, 199.0, 201.0, 22, 16, 3, 3, 200)"
	rule
}

@test "tlbmiss_cost fake rounds, narrow around 0: not measurable (the interval reaches 0)" {
	# costs 1 0 -1 2 -2: within the 5 cycles, but huge pages are not faster
	fake_tlb '101 100 0.01;100 100 0.01;99 100 0.01;102 100 0.01;98 100 0.01' --json
	assert_success
	assert_equal "$(json '(lambda t: (t["estimate"], t["low"], t["high"], t["narrow"], t["measurable"], t["reason"], t["tlb_miss_cost"]))(j["tlbmiss_cost"])')" \
		"(0.0, -1.0, 1.0, True, False, 'the interval reaches 0: huge pages were not faster', 0)"
	rule
}

@test "tlbmiss_cost fake rounds: bad rounds are named; the installed tool has no hook" {
	fake_tlb '300 100;1 2 3' --json
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" 'tlbmiss_cost-fake: HK_MEASURE_FAKE: round 1: Invalid argument'
	fake_tlb '300 100 0.01 preempted'
	assert_failure 1
	assert_equal "$stderr" 'tlbmiss_cost-fake: HK_MEASURE_FAKE: round 1: Invalid argument'
	# the installed tool has no trace of the hooks
	run grep -c HK_MEASURE_FAKE "$HK_BUILD_DIR/tools/tlbmiss_cost"
	assert_output 0
}

@test "cpupcstat: a bad argument or combination names it, exit 1" {
	usage_error cpupcstat "no command and no --pid"
	usage_error cpupcstat "--pid and a command: give one of them" -p 1 -- true
	usage_error cpupcstat "--compare runs a command; it cannot take --pid" --compare -p 1
	usage_error cpupcstat "--heap is for --compare" --heap -- true
	usage_error cpupcstat "--text is for --compare" --segments -- true
	usage_error cpupcstat "--runs: '0' is not a number from 1 to 10000" --compare --runs 0 -- true
	usage_error cpupcstat "--runs: '10001' is not a number from 1 to 10000" --compare --runs 10001 -- true
	usage_error cpupcstat "--budget: '0.05' is not a number of seconds from 0.1 to 86400" --compare --budget 0.05 -- true
	usage_error cpupcstat "--budget: '1e3' is not a number of seconds" --compare --budget 1e3 -- true
	usage_error cpupcstat "--time: 'x' is not a number from 1 to 86400" -p 1 --time x
	usage_error cpupcstat "--cost: '-1' is not a number" --cost -1 -- true
	usage_error cpupcstat "--pid: '0' is not a number" -p 0
	usage_error cpupcstat "--walk-event: 'zz' is not a raw event (rNNN, hex digits)" --walk-event zz -- true
}

@test "cpupcstat --walk-event: rNNN or NNN in hex, nothing else (no sign, space, 0x, 0, too long)" {
	local v
	for v in -1 +1 ' 1a' '1a ' 0x1a r-1 r '' rr1 1a.0 12345678901234567; do
		usage_error cpupcstat "--walk-event: '$v' is not a raw event (rNNN, hex digits)" --walk-event "$v" -- true
	done
	usage_error cpupcstat "--walk-event: 'r0' is not a raw event (0 is none)" --walk-event r0 -- true
	usage_error cpupcstat "--walk-event: '000' is not a raw event (0 is none)" --walk-event 000 -- true
	# the accepted spellings get as far as the counters (none here: HK_FAULT_PERF)
	for v in r1008 1008 rFFFFFFFFFFFFFFFF aB; do
		HK_FAULT_PERF=ENOENT run --separate-stderr cpupcstat --walk-event "$v" -- true
		assert_failure 1
		assert_regex "$stderr" '^cpupcstat: no hardware TLB counters'
	done
}

@test "cpupcstat -p: a process that does not exist is an error" {
	run --separate-stderr cpupcstat -p 2147483647 --time 1
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "cpupcstat: --pid: no process 2147483647"
}

@test "cpupcstat without counters: one line that says so and offers --compare; nothing runs" {
	for e in ENOENT EOPNOTSUPP; do
		HK_FAULT_PERF=$e run --separate-stderr cpupcstat -- touch "$BATS_TEST_TMPDIR/ran"
		assert_failure 1
		assert_output ''
		assert_equal "${#stderr_lines[@]}" 1
		assert_regex "$stderr" '^cpupcstat: no hardware TLB counters on this machine \(perf_event_open: .*\); --compare measures without them$'
		[ ! -e "$BATS_TEST_TMPDIR/ran" ] || fail "the command ran without counters"
	done
}

@test "cpupcstat where counters are not allowed: the line names perf_event_paranoid" {
	HK_FAULT_PERF=EACCES run --separate-stderr cpupcstat -- true
	assert_failure 1
	assert_equal "$stderr" "cpupcstat: the hardware counters are not allowed (kernel.perf_event_paranoid, CAP_PERFMON) (perf_event_open: Permission denied); --compare measures without them"
}

@test "cpupcstat --json without counters: counters false, the reason, compare_available" {
	HK_FAULT_PERF=ENOENT run --separate-stderr cpupcstat --json -- true
	assert_failure 1
	assert_equal "$(json 'j["cpupcstat"]["counters"]')" False
	assert_equal "$(json 'j["cpupcstat"]["compare_available"]')" True
	assert_equal "$(json 'j["cpupcstat"]["reason"]')" "no hardware TLB counters on this machine"
	assert_equal "$(json 'j["cpupcstat"]["error"]')" "No such file or directory"
}

@test "cpupcstat --compare --json: --runs rounds, both ways, the rule's figures; the command's output on stderr" {
	run --separate-stderr cpupcstat --compare --runs 2 --json -- echo from-the-command
	assert_success
	assert_equal "$(json 'j["cpupcstat"]["mode"]')" compare
	assert_equal "$(json 'j["cpupcstat"]["command"]')" "['echo', 'from-the-command']"
	assert_equal "$(json 'j["cpupcstat"]["hugectl"]')" "['--heap']"
	# two rounds: too few for an interval, whatever was kept
	assert_equal "$(json '(lambda c: (c["rounds"], c["max_rounds"], c["stopped"], c["measurable"], c["low"], c["reason"]))(j["cpupcstat"])')" \
		"(2, 2, 'rounds', False, None, 'too few rounds kept for an interval')"
	assert_equal "$(json 'all(t > 0 for w in ("plain", "huge") for t in j["cpupcstat"][w]["times_s"])')" True
	rule
	assert_equal "$(grep -c '^from-the-command$' <<< "$stderr")" 4
}

@test "cpupcstat --compare: the hugectl options asked for, once each" {
	run --separate-stderr cpupcstat --compare --runs 1 --json --segments --text --shm -- true
	assert_success
	assert_equal "$(json 'j["cpupcstat"]["hugectl"]')" "['--text', '--data', '--bss', '--shm']"
}

@test "cpupcstat --compare text: the medians, the interval, the verdict, saving_pct=N last" {
	run --separate-stderr cpupcstat --compare --runs 1 -- true
	assert_success
	assert_regex "${lines[0]}" '^runs: [01] each way, alternately, median wall-clock time$'
	assert_regex "${lines[1]}" '^plain: +([0-9]+\.[0-9]{3} s|unknown)$'
	assert_regex "${lines[2]}" '^hugectl --heap: ([0-9]+\.[0-9]{3} s|unknown)$'
	assert_line --index 3 'interval_pct=unknown'
	assert_line --index 4 'measurable=no'
	assert_regex "${lines[5]}" '^saving_pct=(-?[0-9]+\.[0-9]|unknown)$'
	assert_equal "${#lines[@]}" 6
	assert_regex "$stderr" 'cpupcstat: 1 rounds: [01] kept, [01] discarded \(a run lost time to other tasks\); [0-9.]+ s of 60\.00 s; stopped: rounds'
	assert_regex "$stderr" 'cpupcstat: not measurable: too few rounds kept for an interval \([01] kept, 6 needed\)'
}

@test "cpupcstat --compare: a run that fails ends it, exit 1, saying which" {
	run --separate-stderr cpupcstat --compare -- sh -c 'exit 3'
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "cpupcstat: run 1 plain exited with status 3"
	# rounds alternate which way runs first: the third run is round 2's under hugectl
	run --separate-stderr cpupcstat --compare -- sh -c 'echo >> "$0"; [ "$(wc -l < "$0")" -lt 3 ] || exit 4' "$BATS_TEST_TMPDIR/count"
	assert_failure 1
	assert_equal "${stderr_lines[-1]}" "cpupcstat: run 2 under hugectl exited with status 4"
}

# cpupcstat --compare's rule on fake rounds: cpupcstat-fake (built with
# HK_MEASURE_FAKE) takes its rounds "PLAIN HUGE SECONDS [switched|stalled]"
# from HK_MEASURE_FAKE, cycled, on a fake clock; no command runs.
FAKE_CPC="$HK_BUILD_DIR/tests/cpupcstat-fake"
# savings 10 % (1.00/0.90), 10.9, 9.1, 9.0, 11.0; 1 s a round
STEADY='1.00 0.90 1;1.01 0.90 1;0.99 0.90 1;1.00 0.91 1;1.00 0.89 1'

# fake_cpc ROUNDS ARGS...: cpupcstat-fake --compare ARGS -- false on ROUNDS.
fake_cpc() {
	local rounds=$1
	shift
	run --separate-stderr env HK_MEASURE_FAKE="$rounds" "$FAKE_CPC" --compare "$@" -- false
}

@test "cpupcstat --compare fake rounds, steady: measurable at the first check, saving 10.0, interval 9.1 to 10.9" {
	fake_cpc "$STEADY"
	assert_success
	assert_line --index 0 'runs: 18 each way, alternately, median wall-clock time'
	assert_line --index 1 'plain:         1.000 s'
	assert_line --index 2 'hugectl --heap: 0.900 s'
	assert_line --index 3 'interval_pct=9.1,10.9'
	assert_line --index 4 'measurable=yes'
	assert_line --index 5 'saving_pct=10.0'
	assert_equal "$stderr" 'cpupcstat-fake: 18 rounds: 18 kept, 0 discarded (a run lost time to other tasks); 18.00 s of 60.00 s; stopped: narrow'
	fake_cpc "$STEADY" --json
	assert_equal "$(json '(lambda c: (c["saving_pct"], c["low"], c["high"], c["bound"], c["rounds"], c["stopped"], c["measurable"]))(j["cpupcstat"])')" \
		"(10.0, 9.09, 10.89, 1.0, 18, 'narrow', True)"
	rule
}

@test "cpupcstat --compare fake rounds, noisy: runs to the budget, not measurable, the interval said" {
	# savings 50, 0, -20, 30 %: 4 s a round, 15 rounds in the 60 s; their median 0
	# (-20 x4, 0 x4, 30 x3, 50 x4), its interval the 4th and 12th: -20 to 50
	fake_cpc '1 0.5 4;1 1 4;1 1.2 4;1 0.7 4'
	assert_success
	assert_line --index 4 'measurable=no'
	assert_equal "${stderr_lines[0]}" 'cpupcstat-fake: 15 rounds: 15 kept, 0 discarded (a run lost time to other tasks); 60.00 s of 60.00 s; stopped: budget'
	assert_equal "${stderr_lines[1]}" 'cpupcstat-fake: not measurable: the interval is wider than the bound (95 % interval -20.0 to 50.0 %, bound 1.0)'
	fake_cpc '1 0.5 4;1 1 4;1 1.2 4;1 0.7 4' --json --budget 20
	assert_equal "$(json '(lambda c: (c["rounds"], c["stopped"], c["measurable"], c["reason"]))(j["cpupcstat"])')" \
		"(5, 'budget', False, 'too few rounds kept for an interval')"
	rule
	# --runs ends it first
	fake_cpc '1 0.5 4;1 1 4;1 1.2 4;1 0.7 4' --json --runs 8
	assert_equal "$(json '(lambda c: (c["rounds"], c["stopped"], c["measurable"]))(j["cpupcstat"])')" "(8, 'rounds', False)"
	rule
}

@test "cpupcstat --compare fake rounds, preempted: the rounds whose runs lost time are discarded and counted" {
	# the steady rounds with a switched one (saving 90 %) and a stalled one (-400 %) in every 7:
	# the bound is checked at 6, 10, 14 and 18 kept, narrow at 18 (25 rounds)
	fake_cpc '1.00 0.90 1;1 0.1 1 switched;1.01 0.90 1;0.99 0.90 1;1 5 1 stalled;1.00 0.91 1;1.00 0.89 1' --json
	assert_success
	assert_equal "$(json '(lambda c: (c["saving_pct"], c["low"], c["high"], c["rounds"], c["rounds_kept"], c["discarded_switched"], c["discarded_stalled"], c["measurable"]))(j["cpupcstat"])')" \
		"(10.0, 9.09, 10.89, 25, 18, 4, 3, True)"
	rule
}

@test "cpupcstat --compare fake rounds, huge pages slower: a negative saving is a measurement" {
	# huge 20 % slower, steadily
	fake_cpc '1 1.2 1;1 1.21 1;1 1.19 1' --json
	assert_success
	assert_equal "$(json '(lambda c: (c["saving_pct"], c["high"] < 0, c["measurable"]))(j["cpupcstat"])')" "(-20.0, True, True)"
	rule
}

@test "cpupcstat --compare fake rounds: bad rounds are named; the installed tool has no hook" {
	fake_cpc '1 2'
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" 'cpupcstat-fake: HK_MEASURE_FAKE: round 1: Invalid argument'
	run grep -c HK_MEASURE_FAKE "$HK_BUILD_DIR/tools/cpupcstat"
	assert_output 0
}

# fake_perf ARGS...: cpupcstat ARGS with tests/cli/fake-perf.c preloaded (counters that
# succeed: per counter opened, cycles 1e9, instructions 2e9, dTLB 3e6, iTLB 1e6, walk
# 5e7), at most 20 s.
fake_perf() {
	run --separate-stderr env LD_PRELOAD="$HK_BUILD_DIR/tests/libfake-perf.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		timeout 20 cpupcstat "$@"
}

@test "cpupcstat COMMAND with counters: the command runs, the report has the shim's figures" {
	fake_perf --cost 20 -- echo CHILD-RAN
	assert_success
	[[ $stderr == *CHILD-RAN* ]] || fail "the command's output is not on stderr: $stderr"
	assert_line --index 0 --regexp '^dTLB load misses: +3000000$'
	assert_line --index 1 --regexp '^iTLB load misses: +1000000$'
	assert_regex "${lines[2]}" '^misses/s: +[0-9]+$'
	# (3e6 + 1e6) * 1000 / 2e9
	assert_line --index 3 --regexp '^misses/1000 instructions: +2\.000$'
	# (3e6 + 1e6) * 20 / 1e9
	assert_line --index 4 --regexp '^time in TLB misses: +8\.00 % \(misses x cost\)$'
}

@test "cpupcstat COMMAND --json with counters and --walk-event: the walk cycles make the estimate" {
	fake_perf --json --walk-event r1008 -- echo CHILD-RAN
	assert_success
	[[ $stderr == *CHILD-RAN* ]] || fail "the command's output is not on stderr: $stderr"
	assert_equal "$(json 'j["cpupcstat"]["mode"]')" count
	assert_equal "$(json 'j["cpupcstat"]["counters"]')" True
	assert_equal "$(json 'j["cpupcstat"]["dtlb_load_misses"]')" 3000000
	assert_equal "$(json 'j["cpupcstat"]["itlb_load_misses"]')" 1000000
	assert_equal "$(json 'j["cpupcstat"]["cycles"]')" 1000000000
	assert_equal "$(json 'j["cpupcstat"]["instructions"]')" 2000000000
	assert_equal "$(json 'j["cpupcstat"]["walk_cycles"]')" 50000000
	assert_equal "$(json 'j["cpupcstat"]["misses_per_kinstr"]')" 2.0
	assert_equal "$(json 'j["cpupcstat"]["estimate_from"]')" walk_cycles
	# 5e7 / 1e9
	assert_equal "$(json 'j["cpupcstat"]["tlb_miss_time_pct"]')" 5.0
}

@test "cpupcstat -p PID --time 1 with counters: a sleeping process is counted" {
	sleep 60 &
	local pid=$!
	fake_perf --json --cost 20 -p "$pid" --time 1
	kill "$pid"
	assert_success
	assert_equal "$(json 'j["cpupcstat"]["pid"]')" "$pid"
	assert_equal "$(json 'j["cpupcstat"]["threads"]')" 1
	assert_equal "$(json 'j["cpupcstat"]["dtlb_load_misses"]')" 3000000
	assert_equal "$(json 'j["cpupcstat"]["tlb_miss_time_pct"]')" 8.0
}

@test "cpupcstat -p PID with counters: each thread of the process is counted, and summed" {
	local log=$BATS_TEST_TMPDIR/opens pid n i tids
	python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(60,)).start(); time.sleep(60)' &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		n=$(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 | wc -l)
		[ "$n" -ge 2 ] && break
		sleep 0.1
	done
	tids=$(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -n | tr '\n' ' ')
	FAKE_PERF_LOG=$log fake_perf --json --cost 20 -p "$pid" --time 1
	kill "$pid"
	assert_success
	[ "$n" -ge 2 ] || fail "the process has $n threads, not 2"
	assert_equal "$(json 'j["cpupcstat"]["threads"]')" "$n"
	# one dTLB load miss counter (PERF_TYPE_HW_CACHE 3, config 0x10003) opened for each thread, by its id
	assert_equal "$(awk '$2 == 3 && $3 == 65539 { print $1 }' "$log" | sort -n | tr '\n' ' ')" "$tids"
	assert_equal "$(json 'j["cpupcstat"]["dtlb_load_misses"]')" "$((n * 3000000))"
	assert_equal "$(json 'j["cpupcstat"]["itlb_load_misses"]')" "$((n * 1000000))"
	assert_equal "$(json 'j["cpupcstat"]["cycles"]')" "$((n * 1000000000))"
	assert_equal "$(json 'j["cpupcstat"]["tlb_miss_time_pct"]')" 8.0
}

# comp TOOL WORDS...: call TOOL's completion on WORDS (the last is the one completed).
comp() {
	local tool=$1
	shift
	# shellcheck source=/dev/null
	source "$HK_SOURCE_DIR/completions/bash/$tool"
	COMP_WORDS=("$tool" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	"_$tool" "$tool" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
}

@test "completions: tlbmiss_cost --backing values, cpupcstat options" {
	comp tlbmiss_cost --backing ''
	assert_equal "${COMPREPLY[*]}" "auto hugetlb thp"
	comp tlbmiss_cost --ba
	assert_equal "${COMPREPLY[*]}" "--backing"
	comp cpupcstat --seg
	assert_equal "${COMPREPLY[*]}" "--segments"
	comp cpupcstat --compare --run
	assert_equal "${COMPREPLY[*]}" "--runs"
	comp cpupcstat --compare --bu
	assert_equal "${COMPREPLY[*]}" "--budget"
	# --budget's value is a number: nothing offered, and the value is not the command
	comp cpupcstat --compare --budget ''
	assert_equal "${#COMPREPLY[@]}" 0
}
