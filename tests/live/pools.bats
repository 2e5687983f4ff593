#!/usr/bin/env bats
# hugeadm changing the running kernel's pools and settings. Where Debian's
# libhugetlbfs 2.23 is installed, the same command from the same state must
# leave the kernel's counters where 2.23 leaves them.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
}

teardown_file() {
	live_restore
}

D=/sys/kernel/mm/hugepages/hugepages-2048kB

# pool_set NR OVERCOMMIT: the 2M pool's starting state.
pool_set() {
	echo 0 > "$D/nr_overcommit_hugepages"
	echo "$1" > "$D/nr_hugepages"
	echo "$2" > "$D/nr_overcommit_hugepages"
	[ "$(cat "$D/nr_hugepages")" -eq "$1" ] || hk_skip "the kernel could not give $1 free 2 MiB pages"
}

pool_state() {
	echo "nr=$(cat "$D/nr_hugepages") overcommit=$(cat "$D/nr_overcommit_hugepages") surplus=$(cat "$D/surplus_hugepages")"
}

@test "pool changes leave the counters where 2.23 leaves them" {
	local legacy start args theirs ours n=0
	legacy=$(legacy_tool hugeadm)
	[ -n "$legacy" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	for start in "0 0" "10 5" "6 20"; do
		for args in "--pool-pages-min 2M:8" "--pool-pages-min 2M:+4" "--pool-pages-min 2M:-2" \
			"--pool-pages-min 2M:16M" "--pool-pages-min DEFAULT:4" "--pool-pages-max 2M:20" \
			"--pool-pages-max 2M:2" "--pool-pages-max 2M:-3" "--pool-pages-min 2M:+1G" \
			"--pool-pages-min 2M:0x10" "--pool-pages-min 2M:010"; do
			# shellcheck disable=SC2086 # split on purpose
			pool_set $start
			# shellcheck disable=SC2086
			"$legacy" $args 2> /dev/null
			theirs=$(pool_state)
			# shellcheck disable=SC2086
			pool_set $start
			# shellcheck disable=SC2086
			hugeadm $args 2> /dev/null
			ours=$(pool_state)
			[ "$ours" = "$theirs" ] || fail "from ($start) $args: 2.23 left $theirs, hugekit $ours"
			n=$((n + 1))
		done
	done
	echo "# $n pool changes compared with 2.23" >&3
}

@test "the issue's sequence: 2M:8, 2M:+4, 2M:-2, 2M:16M, DEFAULT:4, max 2M:20" {
	local legacy a theirs="" ours=""
	# nr/overcommit after each step, as 2.23 leaves them (the Maximum stays where it was
	# set: lowering the Minimum turns the difference into overcommit).
	local want="8/0 12/0 10/2 8/4 4/8 4/16"
	local steps=("--pool-pages-min 2M:8" "--pool-pages-min 2M:+4" "--pool-pages-min 2M:-2"
		"--pool-pages-min 2M:16M" "--pool-pages-min DEFAULT:4" "--pool-pages-max 2M:20")
	pool_set 0 0
	for a in "${steps[@]}"; do
		# shellcheck disable=SC2086
		hugeadm $a 2> /dev/null
		ours="$ours$(cat "$D/nr_hugepages")/$(cat "$D/nr_overcommit_hugepages") "
	done
	assert_equal "${ours% }" "$want"
	run hugeadm --pool-list
	assert_line "   2097152        4        4       20        *"
	legacy=$(legacy_tool hugeadm)
	[ -n "$legacy" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	pool_set 0 0
	for a in "${steps[@]}"; do
		# shellcheck disable=SC2086
		"$legacy" $a 2> /dev/null
		theirs="$theirs$(cat "$D/nr_hugepages")/$(cat "$D/nr_overcommit_hugepages") "
	done
	assert_equal "${theirs% }" "$want"
}

@test "an unlimited overcommit (18446744073709551615) survives the options that do not set it" {
	local u=18446744073709551615
	pool_set 2 "$u"
	[ "$(cat "$D/nr_overcommit_hugepages")" = "$u" ] || hk_skip "this kernel does not take an overcommit of $u"
	run --separate-stderr hugeadm --pool-pages-min 2M:+1
	assert_success
	assert_equal "$(pool_state)" "nr=3 overcommit=$u surplus=0"
	run --separate-stderr hugeadm --pool-pages-min 2M:-2
	assert_success
	assert_equal "$(pool_state)" "nr=1 overcommit=$u surplus=0"
	run --separate-stderr hugeadm --pool-pages-max 2M:+1
	assert_success
	assert_equal "$(pool_state)" "nr=1 overcommit=$u surplus=0"
	run --separate-stderr hugeadm --pool-list
	assert_success
	assert_line --regexp "^   2097152        1        1 $u +\\*?\$"
	# Setting the Maximum replaces it: Minimum 1 + 3.
	run --separate-stderr hugeadm --pool-pages-max 2M:4
	assert_success
	assert_equal "$(pool_state)" "nr=1 overcommit=3 surplus=0"
}

@test "pool amounts below one page or beyond memory: exit 1 and the kernel unchanged" {
	local before mem
	pool_set 2 0
	before=$(live_snapshot)
	mem=$(awk '/^MemTotal:/ { print int($2 / 2048) }' /proc/meminfo)
	run --separate-stderr hugeadm --pool-pages-min 2M:1k
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:1k: 1k is less than one 2M page"
	run --separate-stderr hugeadm --pool-pages-min 2M:$((mem + 1))
	assert_failure 1
	[[ "$stderr" == *"more than the memory holds"* ]]
	run --separate-stderr hugeadm --pool-pages-min 2M:-18446744073709551615
	assert_failure 1
	assert_equal "$(live_snapshot)" "$before"
}

@test "--dry-run changes nothing at all (2.23 resized the pool and wrote shmmax)" {
	local before
	pool_set 2 0
	before=$(live_snapshot)
	run --separate-stderr hugeadm --dry-run --pool-pages-min 2M:10 --set-recommended-shmmax \
		--set-recommended-min_free_kbytes --thp-always --set-shm-group root
	assert_success
	assert_line --index 0 "HUGETLB_VERBOSE='2'"
	assert_line "echo 10 > /proc/sys/vm/nr_hugepages"
	assert_line "echo 'always' > /sys/kernel/mm/transparent_hugepage/enabled"
	assert_equal "$(live_snapshot)" "$before"
}

@test "invalid options anywhere on the line: exit 1 and the kernel unchanged" {
	local before
	pool_set 2 0
	before=$(live_snapshot)
	run --separate-stderr hugeadm --pool-pages-min 2M:10 --pool-pages-min 3M:1
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 3M: unknown page size"
	run --separate-stderr hugeadm --pool-pages-min 2M:10 --pool-pages-min 2M:abc
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: abc: invalid adjustment"
	run --separate-stderr hugeadm --thp-never --pool-pages-min 2M:5@9
	assert_failure 1
	assert_equal "$(live_snapshot)" "$before"
}

@test "--pool-pages-max 1G:2: gigantic pages have no overcommit, exit 1" {
	local before
	[ -d "$HP/hugepages-1048576kB" ] || hk_skip "no 1 GiB pages on this machine"
	before=$(live_snapshot)
	run --separate-stderr hugeadm --pool-pages-max 1G:2
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G:2: 1G pages are gigantic: the kernel cannot overcommit them, so their maximum is their minimum. Use --pool-pages-min, or reserve them at boot (hugepagesz=1G hugepages=N)"
	assert_equal "$(live_snapshot)" "$before"
	# The kernel agrees: it refuses any overcommit for them.
	run bash -c "echo 2 > $HP/hugepages-1048576kB/nr_overcommit_hugepages"
	assert_failure
}

@test "without CAP_SYS_ADMIN (user nobody): one clear message, exit 1, nothing changed" {
	local before stage
	hk_need_cmd setpriv util-linux
	# A copy nobody can reach, wherever the checkout is.
	stage=$(hk_stage_for_user tools/hugeadm)
	pool_set 2 0
	before=$(live_snapshot)
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$stage/tools/hugeadm" --pool-pages-min 2M:4 --thp-never
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: changing the huge page set-up needs the CAP_SYS_ADMIN capability (run hugeadm as root); nothing was changed"
	# Root without CAP_SYS_ADMIN is refused the same way.
	run --separate-stderr setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin \
		"$HK_BUILD_DIR/tools/hugeadm" --pool-pages-min 2M:4
	assert_failure 1
	assert_equal "$(live_snapshot)" "$before"
}

@test "THP settings are written and read back" {
	local t=/sys/kernel/mm/transparent_hugepage
	run --separate-stderr hugeadm --thp-never --thp-defrag defer --thp-khugepaged-pages 1234
	assert_success
	grep -q '\[never\]' "$t/enabled"
	grep -q '\[defer\]' "$t/defrag"
	assert_equal "$(cat "$t/khugepaged/pages_to_scan")" 1234
	run --separate-stderr hugeadm --thp-madvise
	assert_success
	grep -q '\[madvise\]' "$t/enabled"
}

@test "min_free_kbytes and hugetlb_shm_group" {
	local zones def
	zones=$(grep -c '^Node ' /proc/zoneinfo)
	def=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
	run --separate-stderr hugeadm --set-recommended-min_free_kbytes --set-shm-group root
	assert_success
	assert_equal "$(cat /proc/sys/vm/min_free_kbytes)" "$((11 * def * zones))"
	assert_equal "$(cat /proc/sys/vm/hugetlb_shm_group)" 0
}

@test "--set-recommended-shmmax raises a small shmmax and never lowers a large one" {
	pool_set 4 6
	echo 1048576 > /proc/sys/kernel/shmmax
	run --separate-stderr hugeadm --set-recommended-shmmax
	assert_success
	# Maximum 10 x 2 MiB (the 1 GiB pool has Maximum 0 here, or adds its own).
	[ "$(cat /proc/sys/kernel/shmmax)" -ge 20971520 ]
	echo 18446744073692774399 > /proc/sys/kernel/shmmax
	run --separate-stderr hugeadm --set-recommended-shmmax
	assert_success
	assert_equal "$(cat /proc/sys/kernel/shmmax)" 18446744073692774399
	assert_equal "${stderr%%:*}" "hugeadm"
	[[ "$stderr" == *"never lowers it"* ]]
}

@test "the plan --dry-run --json prints is what the run makes: each item reads back from the kernel" {
	local plan f v
	pool_set 6 2
	run --separate-stderr hugeadm --dry-run --json --pool-pages-min 2M:+2 --pool-pages-max 2M:+4 \
		--thp-defrag defer --set-shm-group root
	assert_success
	plan=$output
	# Relative amounts resolved from the kernel's pool (Minimum 6, Maximum 8): the Minimum
	# +2 keeps the Maximum at 8 (overcommit 0), the Maximum +4 is 12 (overcommit 4), as 2.23.
	assert_equal "$(python3 -c 'import json, sys; print([(i["item"], i["value"]) for i in json.load(sys.stdin)["plan"]])' <<< "$plan")" \
		"[('thp defrag', 'defer'), ('pool 2M minimum', '8'), ('pool 2M overcommit', '0'), ('pool 2M overcommit', '4'), ('pool 2M minimum', '8'), ('sysctl vm.hugetlb_shm_group', '0')]"
	assert_equal "$(pool_state)" "nr=6 overcommit=2 surplus=0"
	run --separate-stderr hugeadm --pool-pages-min 2M:+2 --pool-pages-max 2M:+4 --thp-defrag defer \
		--set-shm-group root
	assert_success
	# The last value of each file in the plan is what the kernel shows now.
	while IFS=$'\t' read -r f v; do
		case $f in
		*/transparent_hugepage/*) grep -q "\[$v\]" "$f" || fail "$f: $(cat "$f"), planned $v" ;;
		*) assert_equal "$f: $(cat "$f")" "$f: $v" ;;
		esac
	done < <(python3 -c 'import json, sys
last = {}
for i in json.load(sys.stdin)["plan"]:
    last[i["path"]] = i["value"]
for p, v in last.items():
    print(p + "\t" + v)' <<< "$plan")
	assert_equal "$(pool_state)" "nr=8 overcommit=4 surplus=0"
}

@test "two hugeadm at once are serialized: both relative changes count" {
	pool_set 2 0
	hugeadm --pool-pages-min 2M:+3 2> /dev/null &
	hugeadm --pool-pages-min 2M:+3 2> /dev/null &
	wait
	assert_equal "$(cat "$D/nr_hugepages")" 8
}

@test "--obey-mempolicy writes nr_hugepages_mempolicy under the caller's policy" {
	hk_need_cmd numactl numactl
	pool_set 0 0
	run --separate-stderr numactl --membind=0 hugeadm --obey-mempolicy --pool-pages-min 2M:6
	assert_success
	assert_equal "$(cat "$D/nr_hugepages")" 6
	assert_equal "$(cat /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages)" 6
}

@test "--add-temp-swap: a 0600 file while the pool grows, always removed" {
	local swaps_before
	swaps_before=$(cat /proc/swaps)
	pool_set 0 0
	run --separate-stderr hugeadm --add-temp-swap=1 --pool-pages-min 2M:+1
	assert_success
	assert_equal "$(cat "$D/nr_hugepages")" 1
	assert_equal "$(ls /var/lib/hugetlbfs/swap/temp/ 2> /dev/null)" ""
	assert_equal "$(cat /proc/swaps)" "$swaps_before"
}

@test "[apply] temp_swap: the same swap while the configuration's pool grows, removed after" {
	local swaps_before conf="$BATS_TEST_TMPDIR/swap.conf"
	swaps_before=$(cat /proc/swaps)
	pool_set 0 0
	printf '[pool 2M]\nminimum = 1\nmaximum = 1\n[apply]\ntemp_swap = 1\n' > "$conf"
	HUGETLB_VERBOSE=3 run --separate-stderr hugeadm --apply "$conf"
	assert_success
	assert_equal "$(cat "$D/nr_hugepages")" 1
	# libhugekit says the swapon it made (the run's own file), then the pool's write.
	[[ "$stderr" == *"hugeadm:INFO: swapon /var/lib/hugetlbfs/swap/temp/swapfile-"* ]] ||
		fail "no swap added: $stderr"
	assert_equal "$(ls /var/lib/hugetlbfs/swap/temp/ 2> /dev/null)" ""
	assert_equal "$(cat /proc/swaps)" "$swaps_before"
}

@test "--add-temp-swap: the file is removed when hugeadm is killed while making it" {
	local fake="$BATS_TEST_TMPDIR/bin" pid
	mkdir -p "$fake"
	# A mkswap that takes its time, so the signal lands while the file exists.
	printf '#!/bin/sh\nls -l "$1" > %s/mode\nsleep 10\n' "$BATS_TEST_TMPDIR" > "$fake/mkswap"
	chmod +x "$fake/mkswap"
	pool_set 0 0
	PATH="$fake:$PATH" hugeadm --add-temp-swap=1 --pool-pages-min 2M:+1 2> /dev/null &
	pid=$!
	live_wait_file "$BATS_TEST_TMPDIR/mode" 50 "hugeadm never ran mkswap"
	# Created 0600, whatever the umask.
	[[ "$(cat "$BATS_TEST_TMPDIR/mode")" == "-rw-------"* ]]
	kill -TERM "$pid"
	wait "$pid" || true
	pkill -f "$fake/mkswap" || true
	assert_equal "$(ls /var/lib/hugetlbfs/swap/temp/ 2> /dev/null)" ""
}

@test "--add-ramdisk-swap without /dev/ram0: exit 1 and nothing changed (2.23: SIGFPE)" {
	local before
	[ ! -e /dev/ram0 ] || hk_skip "this machine has /dev/ram0"
	before=$(live_snapshot)
	run --separate-stderr hugeadm --add-ramdisk-swap --pool-pages-min 2M:+1
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --add-ramdisk-swap: there is no /dev/ram0 (load the brd driver: modprobe brd); nothing was changed"
	assert_equal "$(live_snapshot)" "$before"
}

@test "--enable-zone-movable on a kernel without the sysctl: a warning, exit 0" {
	[ ! -e /proc/sys/vm/hugepages_treat_as_movable ] || hk_skip "this kernel still has hugepages_treat_as_movable"
	run --separate-stderr hugeadm --enable-zone-movable
	assert_success
	assert_equal "$stderr" "hugeadm:WARNING: this kernel has no /proc/sys/vm/hugepages_treat_as_movable: the setting was removed from Linux; nothing changed"
}
