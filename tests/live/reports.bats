#!/usr/bin/env bats
# hugeadm's and pagesize's reports against the running kernel: the numbers are
# the kernel's, and where Debian's libhugetlbfs 2.23 is installed, the legacy
# text is byte for byte what 2.23 prints on the same machine in the same state.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
	local d=$HP/hugepages-2048kB
	# Minimum 10, Maximum 20; then a process reserves 12 pages and faults 4, so
	# the pool has surplus (2), reserved (8) and used pages.
	echo 0 > "$d/nr_overcommit_hugepages"
	echo 10 > "$d/nr_hugepages"
	if [ "$(cat "$d/nr_hugepages")" -ne 10 ]; then
		# A condition of the moment (setup skips each test).
		echo "the kernel could not give 10 free 2 MiB pages" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	echo 10 > "$d/nr_overcommit_hugepages"
	live_mount "$BATS_FILE_TMPDIR/pagesize-2MB" pagesize=2M
	if [ -d "$HP/hugepages-1048576kB" ]; then
		live_mount "$BATS_FILE_TMPDIR/pagesize-1GB" pagesize=1G
	fi
	live_hold 2097152 12 4
}

teardown_file() {
	live_restore
}

setup() {
	[ ! -f "$BATS_FILE_TMPDIR/skip" ] || hk_skip "$(cat "$BATS_FILE_TMPDIR/skip")"
}

# same_as_legacy TOOL ARGS...: our TOOL and 2.23's print the same stdout and
# stderr and exit with the same status.
same_as_legacy() {
	local tool=$1 legacy
	shift
	legacy=$(legacy_tool "$tool")
	local ours_rc=0 theirs_rc=0
	"$HK_BUILD_DIR/tools/$tool" "$@" > "$BATS_TEST_TMPDIR/ours.out" 2> "$BATS_TEST_TMPDIR/ours.err" || ours_rc=$?
	"$legacy" "$@" > "$BATS_TEST_TMPDIR/theirs.out" 2> "$BATS_TEST_TMPDIR/theirs.err" || theirs_rc=$?
	diff -u "$BATS_TEST_TMPDIR/theirs.out" "$BATS_TEST_TMPDIR/ours.out" || fail "$tool $*: stdout differs from 2.23"
	diff -u "$BATS_TEST_TMPDIR/theirs.err" "$BATS_TEST_TMPDIR/ours.err" || fail "$tool $*: stderr differs from 2.23"
	assert_equal "$ours_rc" "$theirs_rc"
}

@test "pagesize: the kernel's sizes" {
	run pagesize
	assert_success
	assert_output "$(getconf PAGESIZE)"
	run pagesize -H
	assert_success
	assert_output "$(ls "$HP" | sed 's/hugepages-//; s/kB$//' | sort -n | awk '{ print $1 * 1024 }')"
}

@test "pagesize, -a, -H print what libhugetlbfs 2.23 prints" {
	[ -n "$(legacy_tool pagesize)" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	same_as_legacy pagesize
	same_as_legacy pagesize -a
	same_as_legacy pagesize --all
	same_as_legacy pagesize -H
	same_as_legacy pagesize --huge-only
}

@test "hugeadm reports print what libhugetlbfs 2.23 prints" {
	[ -n "$(legacy_tool hugeadm)" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	same_as_legacy hugeadm --pool-list
	same_as_legacy hugeadm --page-sizes
	same_as_legacy hugeadm --page-sizes-all
	same_as_legacy hugeadm --list-all-mounts
	same_as_legacy hugeadm --pool-list --page-sizes-all --list-all-mounts
}

@test "hugeadm --explain keeps every line of 2.23's, shmmax read right" {
	local legacy shmmax
	legacy=$(legacy_tool hugeadm)
	[ -n "$legacy" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	shmmax=$(cat /proc/sys/kernel/shmmax)
	"$legacy" --explain > "$BATS_TEST_TMPDIR/theirs.out" 2> "$BATS_TEST_TMPDIR/theirs.err"
	hugeadm --explain > "$BATS_TEST_TMPDIR/ours.out" 2> "$BATS_TEST_TMPDIR/ours.err"
	# 2.23 read shmmax as a signed long: values above 2^63-1 come out as 2^63-1.
	sed -i "s/value of 9223372036854775807 bytes/value of $shmmax bytes/" "$BATS_TEST_TMPDIR/theirs.out"
	# Ours goes on after 2.23's last line with what 2.23 never said.
	sed -i '/^Note: Permanent swap space/q' "$BATS_TEST_TMPDIR/ours.out"
	diff -u "$BATS_TEST_TMPDIR/theirs.out" "$BATS_TEST_TMPDIR/ours.out"
	diff -u "$BATS_TEST_TMPDIR/theirs.err" "$BATS_TEST_TMPDIR/ours.err"
	grep -q "^A /proc/sys/kernel/shmmax value of $shmmax bytes" "$BATS_TEST_TMPDIR/ours.out"
}

@test "hugeadm --pool-list: Minimum, Current, Maximum of the live pool" {
	run hugeadm --pool-list
	assert_success
	assert_line "   2097152       10       12       20        *"
}

@test "hugeadm --pool-list --json: every counter is the kernel's, per node too" {
	run --separate-stderr hugeadm --pool-list --json
	assert_success
	python3 - "$output" <<'PY'
import glob, json, os, sys
doc = json.loads(sys.argv[1])
hp = "/sys/kernel/mm/hugepages"
def rd(p):
    return int(open(p).read())
sizes = sorted(int(d.split("-")[1][:-2]) * 1024 for d in os.listdir(hp))
assert [p["size"] for p in doc["pools"]] == sizes, doc
for p in doc["pools"]:
    d = "%s/hugepages-%dkB/" % (hp, p["size"] // 1024)
    assert p["current"] == rd(d + "nr_hugepages"), p
    assert p["free"] == rd(d + "free_hugepages"), p
    assert p["reserved"] == rd(d + "resv_hugepages"), p
    assert p["surplus"] == rd(d + "surplus_hugepages"), p
    assert p["overcommit"] == rd(d + "nr_overcommit_hugepages"), p
    nodes = sorted(glob.glob("/sys/devices/system/node/node*/hugepages/hugepages-%dkB" % (p["size"] // 1024)))
    assert len(p["nodes"]) == len(nodes), p
    for n in p["nodes"]:
        nd = "/sys/devices/system/node/node%d/hugepages/hugepages-%dkB/" % (n["node"], p["size"] // 1024)
        assert n["total"] == rd(nd + "nr_hugepages") and n["free"] == rd(nd + "free_hugepages"), n
        assert n["surplus"] == rd(nd + "surplus_hugepages"), n
two = [p for p in doc["pools"] if p["size"] == 2097152][0]
assert (two["minimum"], two["current"], two["maximum"]) == (10, 12, 20), two
assert (two["free"], two["reserved"], two["surplus"]) == (8, 8, 2), two
print("ok")
PY
}

@test "hugeadm --pool-list --per-node: the nodes' own counters" {
	run hugeadm --pool-list --per-node
	assert_success
	assert_line --index 0 --regexp '^Node +Size +Total +Free +Surplus$'
	local n0=/sys/devices/system/node/node0/hugepages/hugepages-2048kB
	assert_line --regexp "^ +0 +2097152 +$(cat $n0/nr_hugepages) +$(cat $n0/free_hugepages) +$(cat $n0/surplus_hugepages)\$"
}

@test "mount paths with spaces and mount lines longer than 2.23's 2048-byte buffer" {
	local spaced="$BATS_FILE_TMPDIR/with space" long="$BATS_FILE_TMPDIR" i
	for i in $(seq 1 24); do long="$long/$(printf 'd%.0s' $(seq 1 100))"; done
	live_mount "$spaced" pagesize=2M
	live_mount "$long" pagesize=2M
	run --separate-stderr hugeadm --list-all-mounts
	assert_success
	assert_line --regexp "^$BATS_FILE_TMPDIR/with space +rw,relatime,pagesize=2M$"
	assert_line --regexp "^$long rw,relatime,pagesize=2M$"
	run --separate-stderr hugeadm --list-all-mounts --json
	assert_success
	python3 -c 'import json,sys; t=[m["target"] for m in json.loads(sys.argv[1])["mounts"]]; assert sys.argv[2] in t, t' "$output" "$spaced"
	umount "$spaced" "$long"
}

@test "hugeadm --explain: THP mode and gigantic-page advice from the live kernel" {
	local mode
	mode=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)
	run --separate-stderr hugeadm --explain
	assert_success
	assert_line --regexp "^Transparent huge pages: enabled=$mode defrag="
	if [ -d "$HP/hugepages-1048576kB" ]; then
		assert_output --partial '"hugepagesz=1G hugepages=N"'
	fi
}

@test "as an unprivileged user (nobody) the reports and --explain are 2.23's too" {
	local legacy nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups) o rc1 rc2 stage
	legacy=$(legacy_tool hugeadm)
	[ -n "$legacy" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	hk_need_cmd setpriv util-linux
	# A copy nobody can reach, wherever the checkout is.
	stage=$(hk_stage_for_user tools/hugeadm)
	for o in --pool-list --page-sizes --list-all-mounts --explain; do
		rc1=0 rc2=0
		"${nobody[@]}" "$legacy" "$o" > "$BATS_TEST_TMPDIR/theirs.out" 2> "$BATS_TEST_TMPDIR/theirs.err" || rc1=$?
		"${nobody[@]}" "$stage/tools/hugeadm" "$o" > "$BATS_TEST_TMPDIR/ours.out" 2> "$BATS_TEST_TMPDIR/ours.err" || rc2=$?
		if [ "$o" = --explain ]; then
			sed -i "s/value of 9223372036854775807 bytes/value of $(cat /proc/sys/kernel/shmmax) bytes/" "$BATS_TEST_TMPDIR/theirs.out"
			sed -i '/^Note: Permanent swap space/q' "$BATS_TEST_TMPDIR/ours.out"
			# nobody is not in the hugetlb_shm_group, and both say so.
			grep -q 'User nobody (uid: 65534) is not a member of the hugetlb_shm_group' "$BATS_TEST_TMPDIR/ours.err"
		fi
		diff -u "$BATS_TEST_TMPDIR/theirs.out" "$BATS_TEST_TMPDIR/ours.out" || fail "hugeadm $o as nobody: stdout differs"
		diff -u "$BATS_TEST_TMPDIR/theirs.err" "$BATS_TEST_TMPDIR/ours.err" || fail "hugeadm $o as nobody: stderr differs"
		assert_equal "$rc2" "$rc1"
	done
}
