#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# hugectl --collapse PID: its usage errors, a process that is not there, and
# dry runs on hugectl itself (a process may collapse its own memory without
# privilege; a dry run asks the kernel nothing). Nothing here changes the
# machine; tests/live/collapse.bats collapses a running program's heap.

load helpers

HUGECTL=hugectl

# bad ARGS... MESSAGE: hugectl ARGS fails with status 1 and MESSAGE on stderr, nothing on stdout.
bad() {
	local want=${*: -1}
	run --separate-stderr "$HUGECTL" "${@:1:$#-1}"
	assert_failure 1
	assert_equal "$output" ""
	[[ "$stderr" == *"$want"* ]] || fail "stderr is '$stderr', not with '$want'"
}

@test "--collapse without a PID: a usage error" {
	bad --collapse "option '--collapse' requires an argument"
}

@test "--collapse with a PID that is not a process id" {
	local p
	for p in abc 12x -5 0 +3 '' 2147483648 99999999999999999999; do
		bad --collapse "$p" "hugectl: ERROR: $p: not a process id (--collapse)"
	done
}

@test "--all and --json only with --collapse; --heap alone still needs a program" {
	bad --all "hugectl: ERROR: --all: only with --collapse"
	bad --json --heap "hugectl: ERROR: --json: only with --collapse"
	bad --heap "hugectl: no program to run"
}

@test "--collapse takes none of the options of a program run, nor a program" {
	bad --collapse 1 --shm "hugectl: ERROR: --shm: not an option of --collapse"
	bad --thp --collapse 1 "hugectl: ERROR: --thp: not an option of --collapse"
	bad --collapse 1 --report "hugectl: ERROR: --report: not an option of --collapse"
	bad --collapse 1 --heap ./app "hugectl: ERROR: ./app: --collapse runs no program"
	bad --collapse 1 --heap=2M "hugectl: ERROR: --heap=2M: --collapse takes no page size"
	bad --collapse 1 --text=thp "hugectl: ERROR: --text=thp: --collapse takes no page size"
}

@test "a pid no process can have, and one that has exited: status 1, the pid named" {
	local max dead
	max=$(cat /proc/sys/kernel/pid_max)
	bad --collapse "$max" "hugectl: ERROR: $max: no such process"
	sleep 0 &
	dead=$!
	wait "$dead"
	# Reused meanwhile (pids wrap): rare, and then not this test's case.
	[ -d "/proc/$dead" ] && hk_skip "pid $dead was reused at once"
	bad --collapse "$dead" --heap --json "hugectl: ERROR: $dead: no such process"
}

@test "a thread's id is not a process's" {
	local tid
	tid=$(python3 -c 'import threading, os, time
t = threading.Thread(target=time.sleep, args=(30,), daemon=True); t.start()
print(t.native_id, flush=True); os.close(1); time.sleep(30)' &
		echo $! > "$BATS_TEST_TMPDIR/py")
	bad --collapse "$tid" "hugectl: ERROR: $tid: a thread, not a process"
	kill "$(cat "$BATS_TEST_TMPDIR/py")"
}

# self ARGS...: hugectl --collapse on itself (exec keeps the shell's pid), stdout and stderr apart.
self() {
	run --separate-stderr sh -c 'exec "$0" --collapse $$ "$@"' "$HUGECTL" "$@"
}

@test "--dry-run on itself: the heap and the text, before only, nothing asked" {
	self --dry-run
	assert_success
	assert_equal "${#lines[@]}" 2
	assert_line --index 0 --regexp '^hugekit collapse \(pid [0-9]+, hugectl\): heap: [0-9]+ kB on huge pages, [0-9]+ kB on base pages \([0-9.]+ % huge\); [0-9]+ ranges? to ask, [0-9]+ kB \(page size [0-9]+ kB\); dry run, nothing asked$'
	assert_line --index 1 --regexp '^hugekit collapse \(pid [0-9]+, hugectl\): text: '
	self --dry-run --heap
	assert_success
	assert_equal "${#lines[@]}" 1
	assert_line --index 0 --partial '): heap: '
	self --dry-run --text --all
	assert_equal "${#lines[@]}" 2
}

@test "--dry-run --json on itself: the kinds asked, after as before, every range as chosen" {
	self --dry-run --json --heap -v
	assert_success
	python3 - "$output" <<-'EOF'
		import json, sys
		d = json.loads(sys.argv[1])
		assert d["comm"] == "hugectl" and d["dry_run"] is True, d
		assert d["page_size"] == int(open("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").read())
		assert "text" not in d and d["heap"]["before"] == d["heap"]["after"], d
		assert d["heap"]["collapsed"] == 0 and d["heap"]["refused"] == 0, d
		asked = [r for r in d["ranges"] if r["result"] == "not asked"]
		assert len(asked) == d["heap"]["asked"], d
		assert sum(r["asked_kb"] for r in asked) == d["heap"]["asked_kb"], d
		for r in d["ranges"]:
		    assert r["kind"] == "heap" and r["perms"][:2] == "rw" and r["name"] != "[stack]", r
		    assert r["result"] in ("not asked", "too small"), r
		    assert (r["result"] == "too small") == (r["asked_kb"] == 0), r
		    assert r["errno"] is None and r["error"] is None, r
		    assert int(r["start"], 16) < int(r["end"], 16), r
	EOF
	# -v: each range on stderr, as information.
	[[ "$stderr" == *"hugectl: INFO: "*": heap "*" rw-p "* ]] || fail "no range said: $stderr"
}

@test "--collapse's options are in --help" {
	run "$HUGECTL" --help
	assert_success
	assert_line --partial "--collapse PID [--heap|--text|--all] [--json] [--dry-run]"
	assert_line --regexp '^ +--collapse PID '
	assert_line --regexp '^ +--all '
	assert_line --regexp '^ +--json '
}
