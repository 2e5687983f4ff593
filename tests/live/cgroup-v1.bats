#!/usr/bin/env bats
# hugeadm --apply and --check with a [cgroup] section on a cgroup v1 hugetlb
# hierarchy. In a private mount namespace a tmpfs covers /sys/fs/cgroup, the
# hugetlb controller is mounted as v1 at hugetlb/ in it and cgroup v2 at
# unified/ beside it (the hybrid layout of systemd; v2 cannot offer hugetlb
# while v1 holds it, so hugeadm must take v1). The limits are applied and read
# back; a second --apply changes nothing; --check agrees, then names a limit
# changed by hand; --apply repairs it; a process in the group is stopped at the
# limits; hugeadm --usage reads the group's usage, limits and failures from
# v1's files. While v1 holds the controller no other test may use it, hence the
# live lock; afterwards the groups are removed, everything is unmounted and
# hugetlb is back in cgroup v2.
#
# Nothing is made in the host's /sys/fs/cgroup: everything below the
# namespace's own tmpfs, and the groups inside the v1 hierarchy.

load live

HOLD="$HK_BUILD_DIR/tests/hk-usage-hold"
V1=/sys/fs/cgroup/hugetlb
# The host's cgroup v2, where hugetlb must be offered again at the end.
V2_HOST=/sys/fs/cgroup/unified
[ -f "$V2_HOST/cgroup.controllers" ] || V2_HOST=/sys/fs/cgroup

# ns COMMAND...: run in the namespace that sees the v1 hierarchy.
ns() {
	nsenter -t "$NSPID" -m -- "$@"
}

# cgv1_poll TENTHS COMMAND...: until COMMAND succeeds, TENTHS tenths of a
# second at most; fails when it never does.
cgv1_poll() {
	local left=$1
	shift
	until "$@"; do
		left=$((left - 1))
		[ "$left" -gt 0 ] || return 1
		sleep 0.1
	done
}

# The hugetlb hierarchy's cgroups, dying ones too, as /proc/cgroups counts them.
cgv1_count() {
	awk '$1 == "hugetlb" { print $3 }' /proc/cgroups
}

cgv1_v2_offers() {
	grep -qw hugetlb "$V2_HOST/cgroup.controllers"
}

cgv1_freed() {
	[ "$(cgv1_count)" -le 1 ]
}

cgv1_ns_gone() {
	! readlink "/proc/$1/ns/mnt" > /dev/null 2>&1
}

# cgv1_kill_holders: stop the processes cg_hold started (their pages go).
cgv1_kill_holders() {
	local pid
	[ -f "$BATS_FILE_TMPDIR/holders" ] && while read -r pid; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		# Not our child when a test before this one started it.
		cgv1_poll 50 cgv1_ns_gone "$pid" || true
	done < "$BATS_FILE_TMPDIR/holders"
	rm -f "$BATS_FILE_TMPDIR/holders"
}

# cgv1_unmount: in the namespace (ns), or in a fresh one (unshare -m) where the
# v1 hierarchy is mounted again to end it: remove our groups, wait until the
# kernel has freed them (a v1 hierarchy unmounted while a removed group is
# still dying outlives its mount, holding hugetlb away from v2), unmount.
cgv1_unmount() {
	local d
	for d in "$V1"/hk-cgv1-test.*/inner "$V1"/hk-cgv1-test.*; do
		if [ -d "$d" ] && ! rmdir "$d"; then
			echo "# could not remove the v1 cgroup $d" >&3
		fi
	done
	cgv1_poll 50 cgv1_freed ||
		echo "# v1's hugetlb hierarchy still counts $(cgv1_count) groups" >&3
	for d in /sys/fs/cgroup/unified "$V1" /sys/fs/cgroup; do
		if mountpoint -q "$d" && ! umount "$d"; then
			echo "# could not unmount $d in the namespace" >&3
		fi
	done
	return 0
}

# What cgv1_unmount needs in the namespace's shell.
CGV1_FNS=$(declare -f cgv1_poll cgv1_count cgv1_freed cgv1_unmount)

# cgv1_cleanup: stop our processes, remove the groups, unmount, end the
# namespace; then wait (5 s at most) for the namespace to go and, where v2
# offered hugetlb before, for it to offer it again: if it does not, mount
# the v1 hierarchy once more in a fresh namespace and end it there. Safe to
# run twice; says on fd 3 what it could not undo.
cgv1_cleanup() {
	cgv1_kill_holders
	[ -f "$BATS_FILE_TMPDIR/nspid" ] || return 0
	NSPID=$(cat "$BATS_FILE_TMPDIR/nspid")
	if kill -0 "$NSPID" 2>/dev/null; then
		ns bash -c "$CGV1_FNS"'; V1=$1; cgv1_unmount' bash "$V1"
		kill "$NSPID" 2>/dev/null || true
		wait "$NSPID" 2>/dev/null || true
	fi
	rm -f "$BATS_FILE_TMPDIR/nspid"
	if ! cgv1_poll 50 cgv1_ns_gone "$NSPID"; then
		echo "# the namespace of $NSPID outlived the test" >&3
		return 1
	fi
	[ -f "$BATS_FILE_TMPDIR/v2had" ] || return 0
	cgv1_poll 50 cgv1_v2_offers && return 0
	echo "# hugetlb is not back in cgroup v2: ending v1's hierarchy in a fresh namespace" >&3
	unshare -m --propagation private bash -c "$CGV1_FNS"'; V1=$1
		mount -t tmpfs -o mode=0755,size=1M hk-cgv1 /sys/fs/cgroup &&
			mkdir "$V1" && mount -t cgroup -o hugetlb hk-cgv1-hugetlb "$V1" &&
			cgv1_unmount' bash "$V1"
	cgv1_poll 50 cgv1_v2_offers && return 0
	echo "# hugetlb is not back in $V2_HOST/cgroup.controllers: $(grep -w hugetlb /proc/cgroups)" >&3
	return 1
}

setup_file() {
	live_usable || return 0
	if ! awk '$1 == "hugetlb" && $4 == 1 { f = 1 } END { exit !f }' /proc/cgroups; then
		echo "no hugetlb cgroup controller in this kernel" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	live_lock
	live_save
	CG=hk-cgv1-test.$$
	echo "$CG" > "$BATS_FILE_TMPDIR/cg"
	# What to find again at the end.
	ls -A /sys/fs/cgroup > "$BATS_FILE_TMPDIR/host-cgroup"
	if grep -qw hugetlb "$V2_HOST/cgroup.controllers" 2>/dev/null; then
		: > "$BATS_FILE_TMPDIR/v2had"
	fi
	# The namespace lives as long as this process: its mounts go with it.
	unshare -m --propagation private sleep 900 < /dev/null > /dev/null 2>&1 3>&- &
	NSPID=$!
	echo "$NSPID" > "$BATS_FILE_TMPDIR/nspid"
	# Sleeping: unshare has made the mounts private and exec'd.
	local left=50 err
	until [ "$(cat "/proc/$NSPID/comm" 2>/dev/null)" = sleep ] &&
		[ "$(readlink "/proc/$NSPID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]; do
		left=$((left - 1))
		[ "$left" -gt 0 ] || break
		sleep 0.1
	done
	# Never mount over the host's /sys/fs/cgroup: only in a namespace of our own.
	if [ "$(cat "/proc/$NSPID/comm" 2>/dev/null)" != sleep ] ||
		[ "$(readlink "/proc/$NSPID/ns/mnt")" = "$(readlink /proc/self/ns/mnt)" ]; then
		echo "could not make a private mount namespace (unshare -m)" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	if ! err=$(ns sh -c 'mount --make-rprivate / &&
		mount -t tmpfs -o mode=0755,size=1M hk-cgv1 /sys/fs/cgroup &&
		mkdir /sys/fs/cgroup/hugetlb /sys/fs/cgroup/unified' 2>&1); then
		echo "cannot make the namespace's /sys/fs/cgroup: $err" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	# EBUSY where cgroup v2 uses hugetlb (a subtree_control enables it).
	if ! err=$(ns mount -t cgroup -o hugetlb hk-cgv1-hugetlb "$V1" 2>&1); then
		echo "the kernel refuses to mount hugetlb as cgroup v1: $err" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	ns mount -t cgroup2 hk-cgv1-unified /sys/fs/cgroup/unified ||
		echo "# no cgroup v2 beside v1 in the namespace" >&3
	# Left by a run that ended before its teardown: the hierarchy kept them.
	ns sh -c 'for d in "$1"/hk-cgv1-test.*/inner "$1"/hk-cgv1-test.*; do
		[ -d "$d" ] && rmdir "$d"; done; true' sh "$V1"
	cat > "$BATS_FILE_TMPDIR/hugekit.conf" <<-EOF
		[cgroup $CG]
		hugetlb.2M.max = 8M
		hugetlb.2M.rsvd.max = 16M
		[cgroup $CG/inner]
		hugetlb.2M.max = max
	EOF
}

teardown_file() {
	local rc=0
	[ -f "$BATS_FILE_TMPDIR/cg" ] || return 0
	CG=$(cat "$BATS_FILE_TMPDIR/cg")
	cgv1_cleanup || rc=$?
	live_restore
	return "$rc"
}

setup() {
	live_requirements
	if [ -f "$BATS_FILE_TMPDIR/skip" ]; then
		hk_missing "$(cat "$BATS_FILE_TMPDIR/skip")"
	fi
	CG=$(cat "$BATS_FILE_TMPDIR/cg")
	CONF=$BATS_FILE_TMPDIR/hugekit.conf
	NSPID=$(cat "$BATS_FILE_TMPDIR/nspid" 2>/dev/null || true)
	D=$V1/$CG
}

# cg_hold PAGES: hk-usage-hold with PAGES private 2 MiB pages, all faulted, in
# the group; returns once it holds them (it waits to be killed).
cg_hold() {
	local fifo=$BATS_TEST_TMPDIR/hold.$RANDOM line=
	mkfifo "$fifo"
	nsenter -t "$NSPID" -m -- sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" 0 0 0' \
		sh "$D" "$HOLD" "$1" > "$fifo" 3>&- &
	echo $! >> "$BATS_FILE_TMPDIR/holders"
	while read -r -t 30 line && [ "$line" != ready ]; do :; done < "$fifo"
	rm -f "$fifo"
	[ "$line" = ready ]
}

@test "the namespace has the hybrid layout: v1 holds hugetlb, v2 beside it does not offer it" {
	ns test -f "$V1/tasks"
	ns test -f "$V1/hugetlb.2MB.limit_in_bytes"
	if ns mountpoint -q /sys/fs/cgroup/unified; then
		run ns cat /sys/fs/cgroup/unified/cgroup.controllers
		assert_success
		refute_output --regexp '(^| )hugetlb( |$)'
	fi
	run ns test -e /sys/fs/cgroup/cgroup.controllers
	assert_failure
}

@test "before: --check names the missing groups and limits (exit 3), makes nothing" {
	run --separate-stderr ns hugeadm --check "$CONF"
	assert_failure 3
	assert_line "drift: cgroup $CG: is (none), wanted present ($CONF:2)"
	assert_line "drift: cgroup $CG hugetlb.2MB.limit_in_bytes: is (none), wanted 8388608 ($CONF:2)"
	assert_line "drift: cgroup $CG hugetlb.2MB.rsvd.limit_in_bytes: is (none), wanted 16777216 ($CONF:3)"
	assert_line "drift: cgroup $CG/inner: is (none), wanted present ($CONF:5)"
	assert_equal "${#lines[@]}" 5
	run ns test -e "$D"
	assert_failure
}

@test "--apply makes the groups and writes v1's limit_in_bytes files, nothing in v2" {
	local subtree
	subtree=$(cat "$V2_HOST/cgroup.subtree_control")
	run --separate-stderr ns hugeadm --apply "$CONF"
	echo "$output" >&3
	assert_success
	assert_line "changed: cgroup $CG: (none) -> present ($CONF:2)"
	assert_line "changed: cgroup $CG hugetlb.2MB.limit_in_bytes: 9223372036854771712 -> 8388608 ($CONF:2)"
	assert_line "changed: cgroup $CG hugetlb.2MB.rsvd.limit_in_bytes: 9223372036854771712 -> 16777216 ($CONF:3)"
	assert_line "changed: cgroup $CG/inner: (none) -> present ($CONF:5)"
	assert_equal "${#lines[@]}" 4
	assert_equal "$(ns cat "$D/hugetlb.2MB.limit_in_bytes")" 8388608
	assert_equal "$(ns cat "$D/hugetlb.2MB.rsvd.limit_in_bytes")" 16777216
	# "max" on v1: no limit, the counter's largest whole number of pages.
	[ "$(ns cat "$D/inner/hugetlb.2MB.limit_in_bytes")" -ge 9223372036852678656 ] ||
		fail "inner has a limit: $(ns cat "$D/inner/hugetlb.2MB.limit_in_bytes")"
	# Nothing in cgroup v2: no group, no controller enabled.
	[ ! -e "$V2_HOST/$CG" ] || fail "made $V2_HOST/$CG"
	assert_equal "$(cat "$V2_HOST/cgroup.subtree_control")" "$subtree"
}

@test "a second --apply changes nothing and says so; --check exits 0" {
	run --separate-stderr ns hugeadm --apply "$CONF" --json
	assert_success
	run jq -c . <<<"$output"
	assert_output '{"changed":false,"changes":[],"short":[],"failed":[],"put_back":[]}'
	run --separate-stderr ns hugeadm --check "$CONF"
	assert_success
	assert_output 'the machine matches the configuration (5 items)'
}

@test "drift: limits changed by hand are named (exit 3); --apply puts them back" {
	ns sh -c 'echo 4194304 > "$1/hugetlb.2MB.limit_in_bytes" &&
		echo 0 > "$1/inner/hugetlb.2MB.limit_in_bytes"' sh "$D"
	run --separate-stderr ns hugeadm --check "$CONF"
	assert_failure 3
	assert_line "drift: cgroup $CG hugetlb.2MB.limit_in_bytes: is 4194304, wanted 8388608 ($CONF:2)"
	assert_line --regexp "^drift: cgroup $CG/inner hugetlb.2MB.limit_in_bytes: is 0, wanted max \\($CONF:5\\)\$"
	assert_equal "${#lines[@]}" 2
	run --separate-stderr ns hugeadm --check "$CONF" --json
	assert_failure 3
	run jq -c '[.differences[] | [.item, .current, .path]]' <<<"$output"
	assert_output "[[\"cgroup $CG hugetlb.2MB.limit_in_bytes\",\"4194304\",\"$D/hugetlb.2MB.limit_in_bytes\"],[\"cgroup $CG/inner hugetlb.2MB.limit_in_bytes\",\"0\",\"$D/inner/hugetlb.2MB.limit_in_bytes\"]]"
	run --separate-stderr ns hugeadm --apply "$CONF"
	assert_success
	assert_line "changed: cgroup $CG hugetlb.2MB.limit_in_bytes: 4194304 -> 8388608 ($CONF:2)"
	assert_line --regexp "^changed: cgroup $CG/inner hugetlb.2MB.limit_in_bytes: 0 -> [0-9]{19} \\($CONF:5\\)\$"
	assert_equal "${#lines[@]}" 2
	assert_equal "$(ns cat "$D/hugetlb.2MB.limit_in_bytes")" 8388608
	run ns hugeadm --check "$CONF"
	assert_success
}

@test "the limits hold: 2 pages fault in the group, 6 (12 MiB > 8 MiB) die of SIGBUS, 10 (20 MiB > 16 MiB) cannot reserve" {
	local before
	# Enough free pages that only the group's limits can stop them.
	live_pool_free 16
	cg_hold 2 || fail "2 pages in the group: not ready"
	# Counted in this v1 group while held.
	assert_equal "$(ns cat "$D/hugetlb.2MB.usage_in_bytes")" 4194304
	assert_equal "$(ns cat "$D/hugetlb.2MB.rsvd.usage_in_bytes")" 4194304
	cgv1_kill_holders
	assert_equal "$(ns cat "$D/hugetlb.2MB.usage_in_bytes")" 0
	# 6 pages: reserved (12 MiB <= 16 MiB), the fault beyond 8 MiB is a SIGBUS.
	before=$(ns cat "$D/hugetlb.2MB.failcnt")
	run nsenter -t "$NSPID" -m -- sh -c 'echo $$ > "$1/cgroup.procs" && exec timeout 20 "$2" 6 0 0 0' \
		sh "$D" "$HOLD"
	assert_equal "$status" 135
	refute_output --partial ready
	[ "$(ns cat "$D/hugetlb.2MB.failcnt")" -gt "$before" ] || fail "no fault failure counted"
	# 10 pages: the reservation beyond 16 MiB fails, mmap says so.
	before=$(ns cat "$D/hugetlb.2MB.rsvd.failcnt")
	run nsenter -t "$NSPID" -m -- sh -c 'echo $$ > "$1/cgroup.procs" && exec timeout 20 "$2" 10 0 0 0' \
		sh "$D" "$HOLD"
	assert_failure 1
	assert_output --partial "mmap: Cannot allocate memory"
	[ "$(ns cat "$D/hugetlb.2MB.rsvd.failcnt")" -gt "$before" ] || fail "no reservation failure counted"
	# The same 10 pages outside the group: the pool had them.
	run timeout 3 "$HOLD" 10 0 0 0 < /dev/null
	assert_equal "$status" 124
	assert_output --partial ready
}

# usage_v1 FILTER: jq's FILTER on hugeadm --usage --json run in the namespace,
# with $cg set to the group's path as --usage names it.
usage_v1() {
	local json
	json=$(ns hugeadm --usage --json 2>/dev/null) || return 1
	jq -c --arg cg "/$CG" "$1" <<<"$json"
}

# The group's failures as --usage must count them: failcnt plus rsvd.failcnt.
v1_failures() {
	echo $(($(ns cat "$D/hugetlb.2MB.failcnt") + $(ns cat "$D/hugetlb.2MB.rsvd.failcnt")))
}

@test "--usage reads the v1 group: 2 pages held (4194304), its limits, failures counted after a refused fault" {
	local failed
	live_pool_free 16
	cg_hold 2 || fail "2 pages in the group: not ready"
	failed=$(v1_failures)
	run usage_v1 '[.usage.cgroup_version, [.usage.cgroups[] | select(.path == $cg and .page_size == 2097152) | [.usage, .limit, .reserved, .reserved_limit, .events_max]]]'
	assert_success
	assert_output "[1,[[4194304,8388608,4194304,16777216,$failed]]]"
	# Only the groups of the v1 hierarchy: not its root (it limits nothing), not inner (nothing held).
	run usage_v1 '[.usage.cgroups[].path] | unique'
	assert_output "[\"/$CG\"]"
	run --separate-stderr ns hugeadm --usage
	assert_success
	assert_line 'Cgroups (cgroup v1, pages):'
	assert_line --regexp "^/$CG +2M +2 +4 +2 +8 +$failed\$"
	cgv1_kill_holders
	# Nothing held, the limits still listed.
	run usage_v1 '[.usage.cgroups[] | select(.path == $cg) | [.usage, .limit]]'
	assert_output '[[0,8388608]]'
	# 6 pages: the fault beyond 8 MiB is refused (SIGBUS); failcnt counts it, and --usage.
	run nsenter -t "$NSPID" -m -- sh -c 'echo $$ > "$1/cgroup.procs" && exec timeout 20 "$2" 6 0 0 0' \
		sh "$D" "$HOLD"
	assert_equal "$status" 135
	[ "$(v1_failures)" -gt "$failed" ] || fail "no fault failure counted in failcnt"
	run usage_v1 '[.usage.cgroups[] | select(.path == $cg) | .events_max]'
	assert_output "[$(v1_failures)]"
}

@test "afterwards: the groups are gone, nothing mounted, hugetlb back in cgroup v2" {
	cgv1_cleanup || fail "not all undone"
	[ -f "$BATS_FILE_TMPDIR/v2had" ] || hk_missing "hugetlb was not in $V2_HOST/cgroup.controllers before"
	awk '$1 == "hugetlb" && $2 == 0 { f = 1 } END { exit !f }' /proc/cgroups ||
		fail "hugetlb still in a v1 hierarchy: $(grep -w hugetlb /proc/cgroups)"
	grep -qw hugetlb "$V2_HOST/cgroup.controllers"
	# The host's /sys/fs/cgroup holds what it held.
	assert_equal "$(ls -A /sys/fs/cgroup)" "$(cat "$BATS_FILE_TMPDIR/host-cgroup")"
}
