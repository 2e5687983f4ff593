#!/usr/bin/env bats
# hugeadm creating hugetlbfs mounts on the running system, in 2.23's layout:
# same paths, owners, modes and --list-all-mounts text as 2.23 makes; the
# second run changes nothing; bad input mounts nothing. Every mount made here
# is unmounted and every directory made here removed afterwards.

load live

M=/var/lib/hugetlbfs

setup_file() {
	live_requirements
	live_lock
	live_save
	# What was there before, so that only what the tests add is removed.
	find "$M" -xdev 2> /dev/null | sort > "$BATS_FILE_TMPDIR/before-dirs" || true
	findmnt -rn -t hugetlbfs -o TARGET | sort > "$BATS_FILE_TMPDIR/before-mounts"
	if grep -q "^$M/" "$BATS_FILE_TMPDIR/before-mounts"; then
		# The machine's own mounts: not ours to unmount (setup skips each test).
		echo "hugetlbfs is already mounted under $M on this machine" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	# A 2M pool with room for a 64 MiB mount (Maximum 40 pages), none in use.
	echo 0 > "$HP/hugepages-2048kB/nr_hugepages"
	echo 40 > "$HP/hugepages-2048kB/nr_overcommit_hugepages"
}

setup() {
	[ ! -f "$BATS_FILE_TMPDIR/skip" ] || hk_skip "$(cat "$BATS_FILE_TMPDIR/skip")"
}

# Unmount and remove what the tests made.
clean_mounts() {
	local m
	findmnt -rn -t hugetlbfs -o TARGET | sort -r | while read -r m; do
		m=$(printf '%b' "$m")
		case "$m" in "$M"/*) umount "$m" ;; esac
	done
	find "$M" -xdev 2> /dev/null | sort -r | while read -r m; do
		grep -qxF "$m" "$BATS_FILE_TMPDIR/before-dirs" || rmdir "$m" 2> /dev/null || rm -f "$m"
	done
	return 0
}

teardown() {
	clean_mounts
}

teardown_file() {
	clean_mounts
	live_restore
}

# 2.23 chowned and chmodded a mount's root after mounting; hugekit gives the owner
# and mode as the mount options uid=, gid= and mode= (never a chown by path), so the
# kernel lists them among the options. Compared with 2.23 without them: the owner
# and mode themselves are compared through stat.
no_owner_options() {
	sed -E 's/,(uid|gid|mode)=[0-9]+//g'
}

# Every hugekit mount is nosuid,nodev, deliberately unlike 2.23's: compared without them.
no_flags() {
	sed -E 's/,nosuid,nodev,/,/'
}

# layout: mode, owner and group of every path under $M, then the mount table lines.
layout() {
	find "$M" -xdev 2> /dev/null | sort | while read -r p; do
		grep -qxF "$p" "$BATS_FILE_TMPDIR/before-dirs" && continue
		stat -c '%n %a %U:%G' "$p"
	done
	findmnt -rn -t hugetlbfs -o TARGET,OPTIONS | grep "^$M/" | sort
}

@test "--create-mounts makes what 2.23 makes, and --list-all-mounts prints what 2.23 prints" {
	local legacy o
	legacy=$(legacy_tool hugeadm)
	[ -n "$legacy" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	for o in "--create-mounts" "--create-global-mounts" "--create-user-mounts nobody" \
		"--create-group-mounts daemon" "--create-mounts --max-size 64M --max-inodes 100"; do
		# shellcheck disable=SC2086
		"$legacy" $o 2> /dev/null
		layout > "$BATS_TEST_TMPDIR/theirs"
		"$legacy" --list-all-mounts > "$BATS_TEST_TMPDIR/theirs-list" 2>&1
		clean_mounts
		# shellcheck disable=SC2086
		run --separate-stderr hugeadm $o
		assert_success
		layout | no_owner_options | no_flags > "$BATS_TEST_TMPDIR/ours"
		hugeadm --list-all-mounts 2>&1 | no_owner_options | no_flags > "$BATS_TEST_TMPDIR/ours-list"
		clean_mounts
		diff -u "$BATS_TEST_TMPDIR/theirs" "$BATS_TEST_TMPDIR/ours" || fail "hugeadm $o: paths, modes, owners or options differ from 2.23"
		diff -u "$BATS_TEST_TMPDIR/theirs-list" "$BATS_TEST_TMPDIR/ours-list" || fail "hugeadm $o: --list-all-mounts differs from 2.23"
	done
}

@test "--create-mounts: 0770 root:root roots; a second run changes nothing and says so" {
	local before
	run --separate-stderr hugeadm --create-mounts
	assert_success
	assert_equal "$(stat -c '%a %U:%G' "$M/pagesize-2MB")" "770 root:root"
	before=$(layout)
	run --separate-stderr hugeadm --create-mounts
	assert_success
	[[ "$stderr" == *"Directory $M/pagesize-2MB is already mounted."* ]]
	assert_equal "$(layout)" "$before"
	# Two mounts at one path would have shown twice.
	assert_equal "$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^$M/pagesize-2MB\$")" 1
}

@test "--create-global-mounts gives 1777 roots; --create-user-mounts nobody gives nobody 0700" {
	run --separate-stderr hugeadm --create-global-mounts --create-user-mounts nobody
	assert_success
	assert_equal "$(stat -c '%a %U:%G' "$M/global/pagesize-2MB")" "1777 root:root"
	assert_equal "$(stat -c '%a %U:%G' "$M/user/nobody/pagesize-2MB")" "700 nobody:root"
	# The user's own directory is the user's, as with 2.23.
	assert_equal "$(stat -c '%a %U' "$M/user/nobody")" "700 nobody"
	run hugeadm --list-all-mounts
	assert_line --regexp "^$M/global/pagesize-2MB +rw,nosuid,nodev,relatime,(.*,)?pagesize=2M"
	# The owner and mode came with the mount, as its options.
	assert_line --regexp "^$M/global/pagesize-2MB +rw,nosuid,nodev,relatime,mode=1777,pagesize=2M\$"
	assert_line --regexp "^$M/user/nobody/pagesize-2MB +rw,nosuid,nodev,relatime,uid=65534,mode=700,pagesize=2M\$"
}

@test "--max-size 64M shows size= in the options; --list-all-mounts --json has the details" {
	run --separate-stderr hugeadm --create-mounts --max-size 64M --min-size 4M
	assert_success
	findmnt -rn -o OPTIONS "$M/pagesize-2MB" | grep -q 'size=64M\|size=67108864'
	# min_size reserves its pages at mount time: 2 pages of 2 MiB.
	assert_equal "$(cat "$HP/hugepages-2048kB/resv_hugepages")" 2
	run --separate-stderr hugeadm --list-all-mounts --json
	assert_success
	python3 - "$output" "$M/pagesize-2MB" <<'PY'
import json, sys
doc, target = json.loads(sys.argv[1]), sys.argv[2]
m = [x for x in doc["mounts"] if x["target"] == target][0]
assert m["pagesize"] == 2097152, m
assert m["size_limit"] == 67108864 and m["min_size"] == 4194304, m
assert (m["owner"], m["group"], m["mode"], m["uid"]) == ("root", "root", "0770", 0), m
print("ok")
PY
}

@test "bad input mounts nothing: --max-size bogus, unknown user, a size the pool cannot hold" {
	local before
	before=$(layout)
	run --separate-stderr hugeadm --create-mounts --max-size bogus
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: bogus: invalid size for --max-size"
	run --separate-stderr hugeadm --create-mounts --create-user-mounts no-such-user-hk
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: Could not find specified user no-such-user-hk"
	run --separate-stderr hugeadm --create-group-mounts no-such-group-hk
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: Could not find specified group no-such-group-hk"
	run --separate-stderr hugeadm --create-mounts --min-size 1G
	assert_failure 1
	[[ "$stderr" == *"--min-size 1073741824 reserves more than the 2M pool can hold (40 pages)"* ]]
	for v in 1T 1.5G 512X "64 M"; do
		run --separate-stderr hugeadm --create-mounts --max-size "$v"
		assert_failure 1
		assert_equal "$stderr" "hugeadm:ERROR: $v: invalid size for --max-size"
	done
	assert_equal "$(layout)" "$before"
}

@test "--max-size above the pool is a limit: mounted, with a warning" {
	run --separate-stderr hugeadm --create-mounts --max-size 1G
	assert_success
	[[ "$stderr" == *"--max-size 1073741824 is more than the 2M pool holds now (40 pages)"* ]]
	findmnt -rn -o OPTIONS "$M/pagesize-2MB" | grep -q 'size=1G\|size=1073741824'
}

@test "--dry-run --create-mounts mounts nothing and prints 2.23's commands" {
	local before
	before=$(layout)
	run --separate-stderr hugeadm --dry-run --create-mounts
	assert_success
	assert_line "mount -t hugetlbfs none $M/pagesize-2MB -o pagesize=2097152,nosuid,nodev"
	assert_line "chmod 770 $M/pagesize-2MB"
	assert_equal "$(layout)" "$before"
}

@test "a path already mounted with other options is reported, not accepted" {
	mkdir -p "$M/pagesize-2MB"
	mount -t hugetlbfs -o pagesize=2M,size=8M none "$M/pagesize-2MB"
	run --separate-stderr hugeadm --create-mounts
	assert_failure 1
	[[ "$stderr" == *"$M/pagesize-2MB is already mounted with other options"* ]]
	# Nothing else was mounted either.
	assert_equal "$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^$M/")" 1
}

@test "--unmount-all takes hugeadm's mounts down, and only those" {
	run --separate-stderr hugeadm --create-mounts --create-global-mounts
	assert_success
	mkdir -p "$BATS_TEST_TMPDIR/other"
	mount -t hugetlbfs none "$BATS_TEST_TMPDIR/other"
	run --separate-stderr hugeadm --dry-run --unmount-all
	assert_line "umount $M/global/pagesize-2MB"
	run --separate-stderr hugeadm --unmount-all
	assert_success
	assert_equal "$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^$M/")" 0
	findmnt -rn -t hugetlbfs -o TARGET | grep -qx "$BATS_TEST_TMPDIR/other"
	umount "$BATS_TEST_TMPDIR/other"
}

@test "--unmount-all: two mounts stacked on one path come off one after the other, exit 0" {
	run --separate-stderr hugeadm --create-mounts
	assert_success
	mount -t hugetlbfs -o pagesize=2M none "$M/pagesize-2MB"
	assert_equal "$(findmnt -rn -t hugetlbfs -o TARGET | grep -cx "$M/pagesize-2MB")" 2
	run --separate-stderr hugeadm -v --unmount-all
	assert_success
	assert_equal "$(grep -c "INFO: unmounted $M/pagesize-2MB" <<< "$stderr")" 2
	[[ "$stderr" != *"still mounted"* ]] || fail "$stderr"
	assert_equal "$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^$M/")" 0
}

# Issue 19: the mounts of --create-*-mounts are nosuid,nodev, as the generated
# units make them. hugetlbfs files cannot be written with write(2), so no
# setuid program can be put there; a device node can (hugetlbfs has mknod), and
# nodev makes opening it fail.
@test "--create-*-mounts: every new mount is nosuid,nodev; a device node on one cannot be opened" {
	local m
	run --separate-stderr hugeadm --create-mounts --create-global-mounts --create-user-mounts nobody --create-group-mounts daemon
	assert_success
	for m in "$M/pagesize-2MB" "$M/global/pagesize-2MB" "$M/user/nobody/pagesize-2MB" "$M/group/daemon/pagesize-2MB"; do
		mountpoint -q "$m" || fail "$m not mounted"
		assert_equal "$(mount_flags "$m")" "nosuid nodev"
	done
	mknod "$M/pagesize-2MB/hk-null" c 1 3
	run cat "$M/pagesize-2MB/hk-null"
	assert_failure
	assert_output --partial "Permission denied"
	rm -f "$M/pagesize-2MB/hk-null"
}

@test "a mount left as it is without nosuid,nodev is named in a warning" {
	mkdir -p "$M/pagesize-2MB"
	# As 2.23 mounted it (and chmodded it 770), so the same mount but for the flags.
	mount -t hugetlbfs -o pagesize=2M,mode=0770 none "$M/pagesize-2MB"
	run --separate-stderr hugeadm --create-mounts
	assert_success
	[[ "$stderr" == *"$M/pagesize-2MB is mounted without nosuid,nodev (rw,relatime,"*"): left as it is"* ]] || fail "$stderr"
	# The remount the warning suggests sets the flags, and the warning goes.
	mount -o remount,bind,nosuid,nodev "$M/pagesize-2MB"
	assert_equal "$(mount_flags "$M/pagesize-2MB")" "nosuid nodev"
	run --separate-stderr hugeadm --create-mounts
	assert_success
	[[ "$stderr" != *"without nosuid,nodev"* ]] || fail "$stderr"
}
