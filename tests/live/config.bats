#!/usr/bin/env bats
# hugeadm --apply and --check against the running kernel: a configuration of
# a THP knob, the 2 MiB pool (minimum and maximum), a hugetlbfs mount with its
# owner, mode and sizes, and a hugetlb cgroup limit is applied and read back;
# a second --apply changes nothing; --check agrees, then names a drift; the
# cgroup's limit stops a process in it at the limit.

load live

HOLD="$HK_BUILD_DIR/tests/hk-usage-hold"

setup_file() {
	live_usable || return 0
	live_lock
	live_save
	# Put back in teardown_file: the mount, the cgroup and its parent's controllers.
	MNT=/run/hk-config-test.$$
	CG=hk-config-test.$$
	echo "$MNT" > "$BATS_FILE_TMPDIR/mnt"
	echo "$CG" > "$BATS_FILE_TMPDIR/cg"
	local root
	if root=$(live_cgroup_root); then
		echo "$root" > "$BATS_FILE_TMPDIR/cgroot"
		cat "$root/cgroup.subtree_control" > "$BATS_FILE_TMPDIR/subtree"
	fi
	# A defrag mode other than the current one, so that the first run changes it.
	local defrag
	defrag=$(sed 's/.*\[\(.*\)\].*/\1/' "$THP/defrag")
	[ "$defrag" = defer ] && defrag=madvise || defrag=defer
	echo "$defrag" > "$BATS_FILE_TMPDIR/defrag"
	cat > "$BATS_FILE_TMPDIR/hugekit.conf" <<-EOF
		# live test of hugeadm --apply
		[thp]
		defrag = $defrag
		[pool 2M]
		minimum = 40
		maximum = 48
		[mount $MNT]
		pagesize = 2M
		group = nogroup
		mode = 0750
		size = 16M
		min_size = 4M
	EOF
	if [ -f "$BATS_FILE_TMPDIR/cgroot" ]; then
		printf '[cgroup %s]\nhugetlb.2M.max = 8M\n' "$CG" >> "$BATS_FILE_TMPDIR/hugekit.conf"
	fi
}

teardown_file() {
	local f root
	[ -f "$BATS_FILE_TMPDIR/mnt" ] || return 0
	f=$(cat "$BATS_FILE_TMPDIR/mnt")
	mountpoint -q "$f" && umount "$f"
	[ -d "$f" ] && rmdir "$f"
	if [ -f "$BATS_FILE_TMPDIR/cgroot" ]; then
		root=$(cat "$BATS_FILE_TMPDIR/cgroot")
		f=$root/$(cat "$BATS_FILE_TMPDIR/cg")
		[ -d "$f" ] && rmdir "$f"
		# Only a file the kernel made: never create one (the root may be a tmpfs).
		if [ -f "$root/cgroup.subtree_control" ] && ! grep -qw hugetlb "$BATS_FILE_TMPDIR/subtree"; then
			echo -hugetlb > "$root/cgroup.subtree_control"
		fi
	fi
	live_restore
}

setup() {
	live_requirements
	CONF=$BATS_FILE_TMPDIR/hugekit.conf
	MNT=$(cat "$BATS_FILE_TMPDIR/mnt")
	CG=$(cat "$BATS_FILE_TMPDIR/cg")
	CGROOT=$(cat "$BATS_FILE_TMPDIR/cgroot" 2>/dev/null || true)
}

@test "a write that fails midway (fault-injected): every file, mount and directory made before it is put back" {
	local faulty="$HK_BUILD_DIR/tests/hugeadm-fault" before fault
	hk_need_built "$faulty"
	before=$(live_snapshot)
	# The last item fails: the cgroup's limit, or without cgroups the pool's maximum.
	if [ -n "$CGROOT" ]; then fault="write:*/$CG/hugetlb.2MB.max:*:EIO"; else fault="write:*/nr_overcommit_hugepages:*:EIO"; fi
	run --separate-stderr env HK_FAULT="$fault" "$faulty" --apply "$CONF" --json
	assert_failure 1
	[[ $stderr == *"cannot write"*"Input/output error"* ]] || fail "$stderr"
	[[ $stderr == *"put back as they were before this run"* ]] || fail "$stderr"
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["changed"] is False and len(d["failed"])==1 and "thp defrag" in d["put_back"] and "pool 2M minimum" in d["put_back"], d' "$output"
	assert_equal "$(live_snapshot)" "$before"
	if [ -n "$CGROOT" ]; then
		[ ! -e "$MNT" ] || fail "the mount point $MNT was left"
		[ ! -e "$CGROOT/$CG" ] || fail "the cgroup $CG was left"
		assert_equal "$(cat "$CGROOT/cgroup.subtree_control")" "$(cat "$BATS_FILE_TMPDIR/subtree")"
	fi
}

@test "before: --check finds the drift (exit 3) and changes nothing" {
	local before
	before=$(live_snapshot)
	run --separate-stderr hugeadm --check "$CONF"
	assert_failure 3
	assert_line --regexp "^drift: thp defrag: is [a-z+]+, wanted $(cat "$BATS_FILE_TMPDIR/defrag") \\($CONF:3\\)\$"
	assert_line "drift: mount $MNT: is (none), wanted pagesize=2097152,size=16777216,min_size=4194304,uid=0,gid=$(getent group nogroup | cut -d: -f3),mode=0750,nosuid,nodev ($CONF:8)"
	assert_equal "$(live_snapshot)" "$before"
	[ ! -e "$MNT" ] || fail "--check made $MNT"
}

@test "--apply makes it true: the kernel's files, the mount, the cgroup limit" {
	run --separate-stderr hugeadm --apply "$CONF"
	echo "$output" >&3
	assert_success
	assert_line --partial "changed: thp defrag:"
	assert_line --partial "changed: mount $MNT: (none) -> pagesize=2097152,size=16777216,"
	assert_equal "$(sed 's/.*\[\(.*\)\].*/\1/' "$THP/defrag")" "$(cat "$BATS_FILE_TMPDIR/defrag")"
	assert_equal "$(( $(cat "$HP/hugepages-2048kB/nr_hugepages") - $(cat "$HP/hugepages-2048kB/surplus_hugepages") ))" 40
	assert_equal "$(cat "$HP/hugepages-2048kB/nr_overcommit_hugepages")" 8
	run findmnt -rn -o FSTYPE,OPTIONS "$MNT"
	# The kernel shows the sizes in bytes or with a suffix, as its version does.
	assert_output --regexp "^hugetlbfs .*gid=$(getent group nogroup | cut -d: -f3),mode=750,pagesize=2M,size=(16M|16777216),min_size=(4M|4194304)"
	# nosuid,nodev as the generated unit mounts it: the mount's own flags in mountinfo.
	mount_flags "$MNT" | grep -qx 'nosuid nodev' || fail "$MNT: per-mount flags '$(mount_flags "$MNT")', not nosuid,nodev"
	assert_equal "$(stat -c '%U:%G %a' "$MNT")" "root:nogroup 750"
	if [ -n "$CGROOT" ]; then
		assert_equal "$(cat "$CGROOT/$CG/hugetlb.2MB.max")" 8388608
		grep -qw hugetlb "$CGROOT/cgroup.subtree_control" || fail "controller not enabled"
	fi
}

@test "a second --apply changes nothing and says so; --check exits 0" {
	local before
	before=$(live_snapshot)
	run --separate-stderr hugeadm --apply "$CONF" --json
	assert_success
	run jq -c . <<<"$output"
	assert_output '{"changed":false,"changes":[],"short":[],"failed":[],"put_back":[]}'
	assert_equal "$(live_snapshot)" "$before"
	run --separate-stderr hugeadm --check "$CONF"
	assert_success
	assert_output --regexp '^the machine matches the configuration \([0-9]+ items?\)$'
}

@test "drift: a knob and the pool moved by hand are named; --apply puts them back" {
	echo never > "$THP/defrag"
	echo 35 > "$HP/hugepages-2048kB/nr_hugepages"
	run --separate-stderr hugeadm --check "$CONF" --json
	assert_failure 3
	run jq -c '[.differences[] | [.item, .current, .wanted]]' <<<"$output"
	assert_output "[[\"thp defrag\",\"never\",\"$(cat "$BATS_FILE_TMPDIR/defrag")\"],[\"pool 2M minimum\",\"35\",\"40\"]]"
	run --separate-stderr hugeadm --apply "$CONF"
	assert_success
	assert_equal "${#lines[@]}" 2
	run hugeadm --check "$CONF"
	assert_success
}

@test "the cgroup's limit holds: 2 pages fault in it, 6 pages (12 MiB > 8 MiB) do not" {
	[ -n "$CGROOT" ] || hk_missing "no cgroup v2 hugetlb controller here"
	local cg=$CGROOT/$CG out
	# A process in the group with 2 private pages: within the limit.
	out=$(sh -c 'echo $$ > "$1/cgroup.procs" && exec timeout 5 "$2" 2 0 0 0' sh "$cg" "$HOLD" | head -2 | tail -1)
	assert_equal "$out" ready
	# 6 pages: the fault beyond the limit kills it (SIGBUS), and the kernel counts it.
	run sh -c 'echo $$ > "$1/cgroup.procs" && exec timeout 20 "$2" 6 0 0 0' sh "$cg" "$HOLD"
	assert_failure
	refute_output --partial ready
	[ "$(awk '$1 == "max" { print $2 }' "$cg/hugetlb.2MB.events")" -ge 1 ] || fail "no max event"
}

@test "a [mount] over another filesystem or over files is refused, nothing hidden" {
	local d=/run/hk-config-over.$$ conf=$BATS_TEST_TMPDIR/over.conf
	mkdir "$d"
	mount -t tmpfs -o mode=0755,size=1M hk-test "$d"
	echo data > "$d/data"
	printf '[mount %s]\npagesize = 2M\n' "$d" > "$conf"
	run --separate-stderr hugeadm --apply "$conf"
	umount "$d"
	assert_failure 1
	[[ $stderr == *"$d is a mount point already: not mounting hugetlbfs over it"* ]] || fail "$stderr"
	# The directory under it, with a file: refused too.
	echo data > "$d/data"
	run --separate-stderr hugeadm --apply "$conf"
	rm -f "$d/data"
	mountpoint -q "$d" && umount "$d"
	rmdir "$d"
	assert_failure 1
	[[ $stderr == *"$d is not empty: not mounting hugetlbfs over what is in it"* ]] || fail "$stderr"
}

@test "a [mount] mounted with other options stops the run: the knob written before it is put back" {
	local d=/run/hk-config-busy.$$ conf=$BATS_TEST_TMPDIR/busy.conf before other
	before=$(cat "$THP/defrag")
	# A mode other than the current one, so that the run writes it first.
	other=$(sed 's/.*\[\(.*\)\].*/\1/' "$THP/defrag")
	[ "$other" = defer ] && other=madvise || other=defer
	mkdir "$d"
	mount -t hugetlbfs -o pagesize=2M,mode=0700 none "$d"
	printf '[thp]\ndefrag = %s\n[mount %s]\npagesize = 2M\nmode = 0750\n' "$other" "$d" > "$conf"
	run --separate-stderr hugeadm --apply "$conf"
	umount "$d"
	rmdir "$d"
	assert_failure 1
	[[ $stderr == *"mount $d: mounted with other options ("*"); unmount it and run hugeadm again: nothing mounted over it"* ]] || fail "$stderr"
	[[ $stderr == *"mount $d: failed: 1 file put back as it was before this run"* ]] || fail "$stderr"
	assert_equal "$(cat "$THP/defrag")" "$before"
}

@test "a [mount] below a directory a user owns, or through a symbolic link, is refused, nothing made" {
	local u=/run/hk-config-user.$$ l=/run/hk-config-link.$$ conf=$BATS_TEST_TMPDIR/user.conf
	mkdir "$u" "$BATS_TEST_TMPDIR/target"
	chown nobody "$u"
	printf '[mount %s/m]\npagesize = 2M\n' "$u" > "$conf"
	run --separate-stderr hugeadm --apply "$conf"
	[ ! -e "$u/m" ] || { rmdir "$u/m"; fail "made $u/m"; }
	rmdir "$u"
	assert_failure 1
	[[ $stderr == *"$u is owned by nobody"* ]] || fail "$stderr"
	# The user's link in place of the mount point: not followed.
	ln -s "$BATS_TEST_TMPDIR/target" "$l"
	printf '[mount %s]\npagesize = 2M\n' "$l" > "$conf"
	run --separate-stderr hugeadm --apply "$conf"
	rm "$l"
	assert_failure 1
	[[ $stderr == *"$l is a symbolic link: not following it"* ]] || fail "$stderr"
	! mountpoint -q "$BATS_TEST_TMPDIR/target" || { umount "$BATS_TEST_TMPDIR/target"; fail "mounted through the link"; }
}
