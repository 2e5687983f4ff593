#!/usr/bin/env bats
# hugeadm changing a fixture tree (--sysroot writes the tree's files, like
# util-linux chmem): the files written, their values, the dry run, validation
# before any write, and the lock.

load helpers

# changed PRISTINE COPY: the files that differ, relative, one per line, sorted.
changed() {
	diff -rq "$1" "$2" | sed -E "s|^Files $1/([^ ]+) and .*|\1|; s|^Only in $2/?([^:]*): (.*)|+\1/\2|" | sort
}

@test "--pool-pages-min SIZE:N@NODES writes exactly the nodes' own files" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:256@0 --pool-pages-min 2M:768@1
	assert_success
	run changed "$HK_FIXTURES/x86-2node" "$root"
	assert_output "$(printf '%s\n' \
		sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages \
		sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages)"
	assert_equal "$(cat "$root/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages")" 256
	assert_equal "$(cat "$root/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages")" 768
}

@test "@NODES counts are relative to each node's own persistent pages" {
	local root
	root=$(fixture x86-2node)
	# node0: 16 pages, 1 surplus -> 15 persistent; node1: 8 - 2 = 6.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min 2M:+10@0-1
	assert_success
	assert_output "$(printf '%s\n' "HUGETLB_VERBOSE='2'" \
		"echo 25 > /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages" \
		"echo 16 > /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages")"
}

@test "--pool-pages-min on the default size writes /proc/sys/vm, as 2.23 did" {
	local root
	root=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:30
	assert_success
	run changed "$HK_FIXTURES/x86-1node" "$root"
	assert_output "$(printf '%s\n' proc/sys/vm/nr_hugepages proc/sys/vm/nr_overcommit_hugepages)"
	assert_equal "$(cat "$root/proc/sys/vm/nr_hugepages")" 30
	# Minimum 30 is above the old Maximum 20: the Maximum follows, no overcommit left.
	assert_equal "$(cat "$root/proc/sys/vm/nr_overcommit_hugepages")" 0
}

@test "other sizes go through /sys; --obey-mempolicy through nr_hugepages_mempolicy" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 1G:3
	assert_success
	assert_equal "$(cat "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages")" 3
	run --separate-stderr "$HUGEADM" --sysroot "$root" --obey-mempolicy --pool-pages-min 1G:4 --pool-pages-min 2M:22
	assert_success
	assert_equal "$(cat "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages_mempolicy")" 4
	assert_equal "$(cat "$root/proc/sys/vm/nr_hugepages_mempolicy")" 22
}

@test "--dry-run: 2.23's shell lines for every write, and the tree is untouched" {
	local root
	root=$(fixture x86-2node)
	golden "hugeadm/dry-run-pools" "$HUGEADM" --sysroot "$root" --dry-run \
		--pool-pages-min 2M:30 --pool-pages-max 2M:40 --pool-pages-min 2M:+2 --pool-pages-max 1G:1
	golden "hugeadm/dry-run-settings" "$HUGEADM" --sysroot "$root" -d --thp-madvise \
		--thp-defrag defer --thp-size 64K:inherit --thp-khugepaged-pages 4096 \
		--thp-khugepaged-scan-sleep 100 --thp-khugepaged-alloc-sleep 200 \
		--set-recommended-min_free_kbytes --set-shm-group root --enable-zone-movable
	golden "hugeadm/dry-run-verbose-99" "$HUGEADM" --sysroot "$root" --dry-run --verbose 99 --thp-never
	run changed "$HK_FIXTURES/x86-2node" "$root"
	assert_output ""
}

@test "repeated pool options apply in command-line order (2.23 applied the last first)" {
	local root
	root=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:10 --pool-pages-min 2M:20
	assert_success
	assert_equal "$(cat "$root/proc/sys/vm/nr_hugepages")" 20
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:10 --pool-pages-min 2M:+5 --pool-list
	assert_success
	assert_equal "$(cat "$root/proc/sys/vm/nr_hugepages")" 15
}

@test "a bad option anywhere on the line: exit 1, 2.23's message, nothing written" {
	local root
	root=$(fixture x86-2node)
	golden "hugeadm/bad-unknown-size" "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:10 --pool-pages-min 3M:1
	golden "hugeadm/bad-adjustment" "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:10 --pool-pages-min 2M:abc
	golden "hugeadm/bad-trailing-text" "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:10x
	golden "hugeadm/bad-spec" "$HUGEADM" --sysroot "$root" --pool-pages-min 2M
	golden "hugeadm/bad-node" "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:256@0 --pool-pages-min 2M:1@7
	golden "hugeadm/bad-node-list" "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:1@0-
	golden "hugeadm/bad-max-nodes" "$HUGEADM" --sysroot "$root" --pool-pages-max 2M:5@0
	golden "hugeadm/bad-gigantic-max" "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:1 --pool-pages-max 1G:3
	golden "hugeadm/bad-mempolicy-nodes" "$HUGEADM" --sysroot "$root" --obey-mempolicy --pool-pages-min 2M:1@0
	golden "hugeadm/bad-shm-group" "$HUGEADM" --sysroot "$root" --set-shm-group no-such-group-hk
	golden "hugeadm/bad-shm-gid" "$HUGEADM" --sysroot "$root" --set-shm-group 987654
	golden "hugeadm/bad-thp-size" "$HUGEADM" --sysroot "$root" --thp-size 3M:always
	golden "hugeadm/bad-thp-mode" "$HUGEADM" --sysroot "$root" --thp-always --thp-size 64K:sometimes
	golden "hugeadm/bad-thp-defrag" "$HUGEADM" --sysroot "$root" --thp-defrag bogus
	golden "hugeadm/bad-khugepaged-zero" "$HUGEADM" --sysroot "$root" --thp-khugepaged-pages 0
	golden "hugeadm/bad-khugepaged-junk" "$HUGEADM" --sysroot "$root" --thp-khugepaged-scan-sleep 10ms
	golden "hugeadm/bad-temp-swap-count" "$HUGEADM" --sysroot "$root" --add-temp-swap=abc --pool-pages-min 2M:+1
	golden "hugeadm/bad-temp-swap-sysroot" "$HUGEADM" --sysroot "$root" --add-temp-swap --pool-pages-min 2M:+1
	golden "hugeadm/bad-lock-timeout" "$HUGEADM" --sysroot "$root" --lock-timeout -1 --pool-pages-min 2M:1
	run changed "$HK_FIXTURES/x86-2node" "$root"
	assert_output ""
}

@test "gigantic pools: the minimum moves the maximum, overcommit is never written" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min 1G:5 --pool-pages-min 1G:1
	assert_success
	assert_output "$(printf '%s\n' "HUGETLB_VERBOSE='2'" \
		"echo 5 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages" \
		"echo 1 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages")"
	# Lowering the maximum of a gigantic pool lowers its minimum, as in 2.23.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-max 1G:1
	assert_success
	assert_line "echo 1 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
}

@test "--set-recommended-shmmax never lowers kernel.shmmax, and says so" {
	local root
	root=$(fixture x86-1node)
	golden "hugeadm/shmmax-not-lowered" "$HUGEADM" --sysroot "$root" --set-recommended-shmmax
	assert_equal "$(cat "$root/proc/sys/kernel/shmmax")" 18446744073692774399
	echo 1000 > "$root/proc/sys/kernel/shmmax"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --set-recommended-shmmax
	assert_success
	# 20 pages of 2 MiB (Maximum) = 41943040.
	assert_equal "$(cat "$root/proc/sys/kernel/shmmax")" 41943040
	# The recommendation counts this run's pool changes.
	echo 1000 > "$root/proc/sys/kernel/shmmax"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-max 2M:30 --set-recommended-shmmax
	assert_success
	assert_equal "$(cat "$root/proc/sys/kernel/shmmax")" 62914560
}

@test "settings: min_free_kbytes, shm group, THP knobs" {
	local root t
	root=$(fixture x86-1node)
	t="$root/sys/kernel/mm/transparent_hugepage"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --set-recommended-min_free_kbytes --set-shm-group root \
		--thp-never --thp-defrag never --thp-size 64K:always --thp-khugepaged-pages 1024
	assert_success
	assert_equal "$(cat "$root/proc/sys/vm/min_free_kbytes")" 112640
	assert_equal "$(cat "$root/proc/sys/vm/hugetlb_shm_group")" 0
	assert_equal "$(cat "$t/enabled")" never
	assert_equal "$(cat "$t/defrag")" never
	assert_equal "$(cat "$t/hugepages-64kB/enabled")" always
	assert_equal "$(cat "$t/khugepaged/pages_to_scan")" 1024
}

@test "zone movable: a warning on kernels without the sysctl, a write where it exists" {
	local root
	root=$(fixture x86-1node)
	golden "hugeadm/zone-movable-gone" "$HUGEADM" --sysroot "$root" --enable-zone-movable
	echo 0 > "$root/proc/sys/vm/hugepages_treat_as_movable"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --enable-zone-movable
	assert_success
	assert_equal "$(cat "$root/proc/sys/vm/hugepages_treat_as_movable")" 1
}

@test "--persist does only what it says (2.23 also listed the mounts)" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --persist
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "$(printf '%s\n' "hugeadm: no operation specified" "Try 'hugeadm --help' for more information.")"
}

@test "the lock: a holder makes hugeadm wait, then give up after --lock-timeout" {
	local root
	root=$(fixture x86-1node)
	flock "$root" sleep 5 &
	sleep 0.5
	golden "hugeadm/lock-timeout" "$HUGEADM" --sysroot "$root" --lock-timeout 1 --pool-pages-min 2M:5
	assert_equal "$(cat "$root/proc/sys/vm/nr_hugepages")" 10
	kill %1 2> /dev/null || true
	wait
}

@test "the lock serializes: 10 concurrent relative changes all count" {
	local root f i
	root=$(fixture x86-2node)
	f="$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
	for i in $(seq 1 10); do
		"$HUGEADM" --sysroot "$root" --pool-pages-min 1G:+1 2> /dev/null &
	done
	wait
	assert_equal "$(cat "$f")" 12
}

@test "reports after changes show the changed pools" {
	local root
	root=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-max 2M:40 --pool-list
	assert_success
	# In a tree nothing recomputes the counters: the report shows the tree's sysfs files,
	# so check the file written instead.
	assert_equal "$(cat "$root/proc/sys/vm/nr_overcommit_hugepages")" 30
	assert_line --index 0 --regexp '^ +Size  Minimum  Current  Maximum  Default$'
}

@test "mounts: not with --sysroot; bad users, groups and sizes fail before anything" {
	local root
	root=$(fixture x86-1node)
	golden "hugeadm/mounts-sysroot" "$HUGEADM" --sysroot "$root" --create-mounts
	golden "hugeadm/mounts-bad-min-size" "$HUGEADM" --sysroot "$root" --dry-run --create-mounts --min-size 1.5G
	golden "hugeadm/mounts-min-size-too-big" "$HUGEADM" --sysroot "$root" --dry-run --create-mounts --min-size 64M
	golden "hugeadm/mounts-min-above-max" "$HUGEADM" --sysroot "$root" --dry-run --create-mounts --max-size 4M --min-size 8M
	golden "hugeadm/unmount-all-sysroot" "$HUGEADM" --sysroot "$root" --unmount-all
	golden "hugeadm/mounts-bad-user" "$HUGEADM" --sysroot "$root" --create-user-mounts no-such-user-hk
	golden "hugeadm/mounts-bad-group" "$HUGEADM" --sysroot "$root" --create-group-mounts no-such-group-hk
	golden "hugeadm/mounts-bad-max-size" "$HUGEADM" --sysroot "$root" --create-mounts --max-size bogus
	golden "hugeadm/mounts-bad-max-inodes" "$HUGEADM" --sysroot "$root" --create-mounts --max-inodes 0
	golden "hugeadm/mounts-max-size-alone" "$HUGEADM" --sysroot "$root" --max-size 64M --pool-list
	# A name with a newline cannot add a line to a message: it is written as \012.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --create-user-mounts $'no\nsuch-user'
	assert_failure 1
	assert_equal "$stderr" 'hugeadm:ERROR: Could not find specified user no\012such-user'
	run changed "$HK_FIXTURES/x86-1node" "$root"
	assert_output ""
}

@test "mounts are planned on trees with --dry-run: names, owners, modes, what is mounted already" {
	golden "hugeadm/mounts-dry-run-arm64" "$HUGEADM" --sysroot "$(fixture arm64)" --dry-run \
		--create-user-mounts nobody --max-inodes 64
	# The tree has /var/lib/hugetlbfs/pagesize-1GB mounted already: only 2MB is planned.
	golden "hugeadm/mounts-dry-run-x86" "$HUGEADM" --sysroot "$(fixture x86-1node)" --dry-run \
		--create-mounts --max-size 32M --min-size 4M
	golden "hugeadm/mounts-dry-run-unmount" "$HUGEADM" --sysroot "$(fixture mounts-long)" --dry-run \
		--unmount-all --create-global-mounts
}

# Review of 9386cc5: the executor compares a mount item before it mounts;
# with --unmount-all in a dry run nothing is taken down, and a mount of
# another page size at the target (which --unmount-all takes down first)
# must not stop the dry run.
@test "--dry-run --unmount-all --create-mounts over a mount of another page size: planned as after the unmount" {
	local root
	root=$(fixture x86-1node)
	echo "50 27 0:50 / /var/lib/hugetlbfs/pagesize-2MB rw,relatime - hugetlbfs none rw,pagesize=1024M" >> "$root/proc/self/mountinfo"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --unmount-all --create-mounts
	assert_success
	assert_line "umount /var/lib/hugetlbfs/pagesize-2MB"
	assert_line "mount -t hugetlbfs none /var/lib/hugetlbfs/pagesize-2MB -o pagesize=2097152,nosuid,nodev"
	assert_equal "$stderr" ""
}

@test "--max-size and --min-size: 2.23's numbers with K, M or G; anything else is an error" {
	local root v o
	root=$(fixture x86-1node)
	# 2.23 read these as 1, 1, 512 and 64 bytes (it ignored what followed the number).
	for o in --max-size --min-size; do
		for v in 1T 1.5G 512X "64 M" 1Gfoo 2Mi 0 -1 " 1M" +1M 0x 9999999999G 99999999999999999999 ""; do
			run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --create-mounts "$o" "$v"
			assert_failure 1
			assert_equal "$stderr" "hugeadm:ERROR: $v: invalid size for $o"
			assert_output ""
		done
	done
	# Hex, octal, and K, M or G in either case with B or iB after it, as 2.23 took them.
	for v in 4M 4m 4MB 4mb 4MiB 4096K 4194304 0x400000 020000000; do
		run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --create-mounts --max-size "$v"
		assert_success
		assert_line "mount -t hugetlbfs none /var/lib/hugetlbfs/pagesize-2MB -o pagesize=2097152,size=4194304,nosuid,nodev"
	done
	run changed "$HK_FIXTURES/x86-1node" "$root"
	assert_output ""
}

@test "--max-size above the pool is a limit: allowed with a warning; no wrap with an unlimited overcommit" {
	local root
	root=$(fixture x86-1node)
	# The tree's 2M pool holds 20 pages: 64M is 32.
	golden "hugeadm/mounts-dry-run-max-above-pool" "$HUGEADM" --sysroot "$root" --dry-run \
		--create-mounts --max-size 64M
	# Overcommit 2^64 - 1 ("unlimited"): Minimum + overcommit must not wrap to a small number.
	echo 18446744073709551615 > "$root/sys/kernel/mm/hugepages/hugepages-2048kB/nr_overcommit_hugepages"
	echo 18446744073709551615 > "$root/proc/sys/vm/nr_overcommit_hugepages"
	# (10 + 2^64 - 1 wrapped to 9 pages: "more than the 2M pool can hold (9 pages, ...)".)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --create-user-mounts nobody \
		--max-size 8G --min-size 64M
	assert_success
	[[ "$stderr" != *"2M pool"* ]] || fail "$stderr"
	assert_line "mount -t hugetlbfs none /var/lib/hugetlbfs/user/nobody/pagesize-2MB -o pagesize=2097152,size=8589934592,min_size=67108864,nosuid,nodev"
	# The largest size 2.23 could read: no wrap in pages or bytes either.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --create-user-mounts nobody \
		--max-size 0x7fffffffffffffff
	assert_success
	assert_line --partial ",size=9223372036854775807"
}

@test "a sysctl the kernel lacks, a pool that cannot be read: each said, named, nothing written" {
	local root
	root=$(fixture x86-2node)
	rm "$root/proc/sys/vm/hugetlb_shm_group"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --set-shm-group root
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: the kernel has no /proc/sys/vm/hugetlb_shm_group"
	# The recommendation counts every pool: one that cannot be read is said as such.
	rm "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/resv_hugepages"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --set-recommended-shmmax
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: cannot compute the recommended shmmax: No such file or directory"
	assert_equal "$(cat "$root/proc/sys/kernel/shmmax")" 18446744073692774399
	echo abc > "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 1G:3
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 1G: cannot read the pool: Invalid argument"
	assert_equal "$(cat "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages")" abc
}
