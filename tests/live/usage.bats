#!/usr/bin/env bats
# hugeadm --usage and --pages-needed against the running kernel: a process
# with N private and one shared huge page, a detached SysV segment of M pages,
# an attached one of A pages and a file of K pages on a temporary hugetlbfs mount are found exactly, and
# the totals add up; --pages-needed's estimate of a 300 MiB heap is within
# 10 % of what the same program holds under hugectl --heap; 550 MiB of
# shared anonymous memory and 100 MiB of private, mostly untouched, are
# 275 + 50 pages of 2 MiB more than the same program with neither.

load live

N=4
M=5
A=2
K=3
HOLD="$HK_BUILD_DIR/tests/hk-usage-hold"

setup_file() {
	# The skip itself is in setup() (bats 1.8 does not skip from setup_file).
	if [ "$(id -u)" -ne 0 ] || [ ! -d "$HP/hugepages-2048kB" ] ||
		! grep -qw hugetlbfs /proc/filesystems; then
		return 0
	fi
	live_lock
	live_save
	echo 0 > "$HP/hugepages-2048kB/nr_overcommit_hugepages"
	echo 200 > "$HP/hugepages-2048kB/nr_hugepages"
	if [ "$(cat "$HP/hugepages-2048kB/nr_hugepages")" -ne 200 ]; then
		echo "the kernel could not give 200 free 2 MiB pages" > "$BATS_FILE_TMPDIR/skip"
		return 0
	fi
	live_mount "$BATS_FILE_TMPDIR/mnt" pagesize=2M
	fallocate -l $((K * 2))M "$BATS_FILE_TMPDIR/mnt/kfile"
	local fifo="$BATS_FILE_TMPDIR/hold.fifo" line
	mkfifo "$fifo"
	"$HOLD" "$N" 1 "$M" "$A" > "$fifo" 3>&- &
	echo $! > "$BATS_FILE_TMPDIR/holder"
	echo $! >> "$BATS_FILE_TMPDIR/holders"
	# Bounded: the holder prints its two lines at once or has failed.
	read -r -t 30 line < "$fifo" || true
	echo "${line#shmid }" > "$BATS_FILE_TMPDIR/shmid"
	read -r -t 30 line < "$fifo" || true
	echo "$line" > "$BATS_FILE_TMPDIR/ready"
	rm -f "$fifo"
}

teardown_file() {
	local id ids=()
	[ -f "$BATS_FILE_TMPDIR/shmid" ] && read -r -a ids < "$BATS_FILE_TMPDIR/shmid"
	for id in "${ids[@]}"; do
		[ "$id" -ge 0 ] && ipcrm -m "$id"
	done
	live_restore
}

setup() {
	live_requirements
	if [ -f "$BATS_FILE_TMPDIR/skip" ]; then
		hk_skip "$(cat "$BATS_FILE_TMPDIR/skip")"
	fi
	[ "$(cat "$BATS_FILE_TMPDIR/ready")" = ready ] || fail "hk-usage-hold did not start"
	PID=$(cat "$BATS_FILE_TMPDIR/holder")
	read -r SHMID SHMID2 < "$BATS_FILE_TMPDIR/shmid"
}

@test "--usage finds the N private and the shared pages of the holder" {
	run --separate-stderr hugeadm --usage --json
	assert_success
	echo "$output" > "$BATS_TEST_TMPDIR/usage.json"
	run jq -c "[.usage.processes[] | select(.pid == $PID) | [.kind, .page_size, .pages]] | sort" "$BATS_TEST_TMPDIR/usage.json"
	assert_output "[[\"private\",2097152,$N],[\"shared\",2097152,1],[\"sysv\",2097152,$A]]"
}

@test "--usage finds the detached segment of M pages" {
	run --separate-stderr hugeadm --usage --json
	assert_success
	run jq -c "[.usage.shm[] | select(.id == $SHMID) | [.page_size, .pages, .attached, .detached]]" <<<"$output"
	assert_output "[[2097152,$M,0,true]]"
}

@test "--usage finds the attached segment of A pages, by the id its mapping's inode holds" {
	run --separate-stderr hugeadm --usage --json
	assert_success
	run jq -c "[.usage.shm[] | select(.id == $SHMID2) | [.page_size, .pages, .attached, .detached, .inferred]]" <<<"$output"
	assert_output "[[2097152,$A,1,false,false]]"
}

@test "--usage finds the file of K pages, mapped by no one" {
	run --separate-stderr hugeadm --usage --json
	assert_success
	run jq -c "[.usage.files[] | select(.path == \"$BATS_FILE_TMPDIR/mnt/kfile\") | [.page_size, .pages, .mapped]]" <<<"$output"
	assert_output "[[2097152,$K,false]]"
}

@test "--usage without openat2 (ENOSYS: before 5.6, systemd's RestrictSUIDSGID=): the mount points walked, the file of K pages found" {
	run --separate-stderr "$HK_BUILD_DIR/tests/no-openat2" hugeadm --usage --json
	assert_success
	run jq -c "[.usage.files[] | select(.path == \"$BATS_FILE_TMPDIR/mnt/kfile\") | [.page_size, .pages, .mapped]]" <<<"$output"
	assert_output "[[2097152,$K,false]]"
}

@test "--usage: used and accounted agree, or the difference is named" {
	run --separate-stderr hugeadm --usage --json
	assert_success
	echo "# $(jq -c '.usage.totals[0]' <<<"$output")" >&3
	run jq -r '.usage.totals[] | select(.page_size == 2097152) |
		if .used == .accounted then "agree"
		elif .difference_reason != "none" then "named"
		else "unnamed" end' <<<"$output"
	assert_output --regexp '^(agree|named)$'
	# Nothing else holds pages while the live lock is ours: they agree exactly.
	run jq -r '.usage.totals[] | select(.page_size == 2097152) | "\(.used) \(.accounted)"' <<<"$(hugeadm --usage --json 2>/dev/null)"
	local used=${output% *} accounted=${output#* }
	[ "$used" -ge $((N + 1 + M + A + K)) ] || fail "used $used < N + 1 + M + A + K"
	assert_equal "$accounted" "$used"
}

@test "--usage as nobody: says what it could not read, shows the rest, exit 0" {
	local stage
	stage=$(hk_stage_for_user tools/hugeadm)
	run --separate-stderr setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups -- \
		"$stage/tools/hugeadm" --usage --json
	assert_success
	# shellcheck disable=SC2154 # set by run --separate-stderr
	[[ $stderr == *"hugeadm:WARNING: could not read the memory maps of "*" processes: their pages are not counted"* ]] ||
		fail "no warning: $stderr"
	run jq -c "[(.usage.unreadable.processes > 0), ([.usage.shm[] | select(.id == $SHMID) | .pages])]" <<<"$output"
	assert_output "[true,[$M]]"
}

@test "--pages-needed: a 300 MiB heap, plain, within 10 % of what hugectl --heap holds" {
	local fifo="$BATS_TEST_TMPDIR/heap.fifo" line est held hp
	mkfifo "$fifo"
	"$HOLD" heap 300 > "$fifo" 3>&- &
	hp=$!
	echo "$hp" >> "$BATS_FILE_TMPDIR/holders"
	read -r -t 60 line < "$fifo" || true
	assert_equal "$line" ready
	est=$(hugeadm --pages-needed "$hp" --json | jq '.pages_needed[] | select(.page_size == 2097152) | .pages')
	kill "$hp"
	wait "$hp" 2>/dev/null || true
	hugectl --heap "$HOLD" heap 300 > "$fifo" 3>&- &
	hp=$!
	echo "$hp" >> "$BATS_FILE_TMPDIR/holders"
	read -r -t 60 line < "$fifo" || true
	assert_equal "$line" ready
	held=$(hugeadm --pages-needed "$hp" --json | jq '.pages_needed[] | select(.page_size == 2097152) | .hugetlb')
	kill "$hp"
	wait "$hp" 2>/dev/null || true
	echo "# 300 MiB heap: estimated $est pages of 2 MiB plain, $held held under hugectl --heap" >&3
	[ "$held" -gt 0 ] || fail "hugectl --heap held no huge page"
	[ $((est * 100)) -ge $((held * 90)) ] && [ $((est * 100)) -le $((held * 110)) ] ||
		fail "estimate $est not within 10 % of $held"
}

# pn_of PID: "pages heap anonymous shared sysv hugetlb" of 2 MiB for PID.
pn_of() {
	hugeadm --pages-needed "$1" --json |
		jq -r '.pages_needed[] | select(.page_size == 2097152) | "\(.pages) \(.heap) \(.anonymous) \(.shared) \(.sysv) \(.hugetlb)"'
}

@test "--pages-needed: 550 MiB shared anonymous and 100 MiB private, mostly untouched, take 275 + 50 pages of 2 MiB" {
	local fifo="$BATS_TEST_TMPDIR/shared.fifo" line hp base big
	mkfifo "$fifo"
	# The same program with nothing mapped: its small mappings, the baseline.
	for args in "0 0" "550 100"; do
		# shellcheck disable=SC2086 # two numbers
		"$HOLD" shared $args > "$fifo" 3>&- &
		hp=$!
		echo "$hp" >> "$BATS_FILE_TMPDIR/holders"
		read -r -t 60 line < "$fifo" || true
		assert_equal "$line" ready
		if [ "$args" = "0 0" ]; then base=$(pn_of "$hp"); else big=$(pn_of "$hp"); fi
		# Mostly untouched: under 1 MiB of the 550 resident.
		[ "$args" = "0 0" ] || [ "$(awk '/ \/dev\/zero \(deleted\)$/ { f = 1 } f && /^Rss:/ { print $2; exit }' "/proc/$hp/smaps")" -lt 1024 ] ||
			fail "the shared mapping is not mostly untouched"
		kill "$hp"
		wait "$hp" 2>/dev/null || true
	done
	echo "# 2 MiB pages, heap anonymous shared sysv hugetlb: nothing mapped $base; 550 + 100 MiB $big" >&3
	read -r b_pages b_heap b_anon b_shared b_sysv b_hugetlb <<<"$base"
	read -r pages heap anon shared sysv hugetlb <<<"$big"
	assert_equal "$shared" 275
	assert_equal "$b_shared" 0
	assert_equal "$((anon - b_anon))" 50
	assert_equal "$((pages - b_pages))" 325
	assert_equal "$heap $sysv $hugetlb" "$b_heap $b_sysv $b_hugetlb"
}

@test "--usage: an ordinary SysV segment on 4 kB pages, attached by nobody's process, is no huge one" {
	local fifo="$BATS_TEST_TMPDIR/plain.fifo" line id hold
	mkfifo "$fifo"
	# 64 MiB: its rss is 32 whole pages of 2 MiB. IPC_RMID'd by the holder: it goes with it.
	hold=$(hk_stage_for_user tests/hk-usage-hold)/tests/hk-usage-hold
	setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups -- "$hold" plain 64 > "$fifo" 3>&- &
	echo $! > "$BATS_TEST_TMPDIR/plainholder"
	read -r -t 30 line < "$fifo" || true
	id=${line#shmid }
	[[ $id =~ ^[0-9]+$ ]] || fail "hk-usage-hold plain did not start: '$line'"
	run awk -v id="$id" '$2 == id { print $7, $15 }' /proc/sysvipc/shm
	assert_output "1 $((64 << 20))"
	run --separate-stderr hugeadm --usage --json
	assert_success
	echo "$output" > "$BATS_TEST_TMPDIR/usage.json"
	run jq -c "[.usage.shm[] | select(.id == $id)]" "$BATS_TEST_TMPDIR/usage.json"
	assert_output '[]'
	run jq -c '.usage.totals[] | select(.page_size == 2097152) | [(.used == .accounted), .inferred_not_counted]' "$BATS_TEST_TMPDIR/usage.json"
	assert_output '[true,0]'
	run --separate-stderr hugeadm --usage
	assert_success
	refute_line --regexp "^$id +0x"
}

@test "--usage: a hugetlb cgroup's usage, from a process in it" {
	local root cg fifo="$BATS_TEST_TMPDIR/cg.fifo" line hp saved
	root=$(live_cgroup_root) || hk_missing "no cgroup v2 hierarchy with the hugetlb controller here"
	saved=$(cat "$root/cgroup.subtree_control")
	cg="$root/hk-usage-test.$$"
	# Put back in teardown: the controller's state, the group, the process.
	echo "$saved" > "$BATS_TEST_TMPDIR/subtree"
	echo "$cg" > "$BATS_TEST_TMPDIR/cgroup"
	grep -qw hugetlb <<<"$saved" || echo +hugetlb > "$root/cgroup.subtree_control"
	mkdir "$cg"
	mkfifo "$fifo"
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 2 0 0 0' sh "$cg" "$HOLD" > "$fifo" 3>&- &
	hp=$!
	echo "$hp" > "$BATS_TEST_TMPDIR/cgholder"
	read -r -t 30 line < "$fifo" || true
	read -r -t 30 line < "$fifo" || true
	assert_equal "$line" ready
	run --separate-stderr hugeadm --usage --json
	assert_success
	run jq -c "[.usage.cgroups[] | select(.path == \"/${cg##*/}\") | [.page_size, .usage, .limit]]" <<<"$output"
	assert_output "[[2097152,4194304,null]]"
}

teardown() {
	local hp
	if [ -f "$BATS_TEST_TMPDIR/plainholder" ]; then
		hp=$(cat "$BATS_TEST_TMPDIR/plainholder")
		kill "$hp" 2>/dev/null
		wait "$hp" 2>/dev/null
	fi
	if [ -f "$BATS_TEST_TMPDIR/cgholder" ]; then
		hp=$(cat "$BATS_TEST_TMPDIR/cgholder")
		kill "$hp" 2>/dev/null
		wait "$hp" 2>/dev/null
	fi
	if [ -f "$BATS_TEST_TMPDIR/cgroup" ]; then
		rmdir "$(cat "$BATS_TEST_TMPDIR/cgroup")" 2>/dev/null
		grep -qw hugetlb "$BATS_TEST_TMPDIR/subtree" ||
			echo -hugetlb > "$(dirname "$(cat "$BATS_TEST_TMPDIR/cgroup")")/cgroup.subtree_control"
	fi
	return 0
}
