#!/usr/bin/env bats
# Fault injection at the path layer: tests/hugeadm-fault is hugeadm built with
# HK_FAULT_INJECT (lib/common/path.c), never installed; the installed hugeadm
# ignores HK_FAULT. HK_FAULT="OP:PATTERN:WHEN:WHAT;..." with OP open, read,
# write or close, PATTERN an fnmatch(3) pattern on the path inside the tree,
# WHEN N, N+ or *, WHAT an errno name, "short" or "value=TEXT"; the rule "live"
# makes the tree count as the running system (pools read back after each write).
#
# Expected results, on a copy of a fixture tree (in a tree a write that fails
# leaves the file as it was, as the kernel does; every message names the file
# and the error). A change that fails puts back every file the run wrote
# before it (libhugekit's journal, hk_run_put_back): all or nothing.
#
# option (fault)                               exit  message                                                   left changed
# --pool-pages-min 2M:30 (EIO on nr_hugepages)    1  /proc/sys/vm/nr_hugepages: cannot write 30: I/O error    nothing
# --pool-pages-min 2M:30 (ENOSPC, 2nd write)      1  /proc/sys/vm/nr_overcommit_hugepages: cannot write 0: ... nothing (nr_hugepages put back)
# --pool-pages-min 1G:+1 (EINVAL)                 1  .../hugepages-1048576kB/nr_hugepages: cannot write 3: ... nothing
# --pool-pages-min 2M:+4@0-1 (EIO on node1)       1  .../node1/.../nr_hugepages: cannot write 10: ...          nothing (node0 put back)
# --obey-mempolicy --pool-pages-min (EPERM)       1  /proc/sys/vm/nr_hugepages_mempolicy: cannot write 22: ... nothing
# --pool-pages-max 2M:40 (EACCES at open)         1  /proc/sys/vm/nr_overcommit_hugepages: cannot write 30: .. nothing
# --set-recommended-min_free_kbytes (EACCES)      1  /proc/sys/vm/min_free_kbytes: cannot write N: ...         nothing
# --set-recommended-shmmax (EPERM)                1  /proc/sys/kernel/shmmax: cannot write N: ...              nothing
# --set-shm-group root (ENOSPC)                   1  /proc/sys/vm/hugetlb_shm_group: cannot write 0: ...       nothing
# --thp-always/--thp-madvise/--thp-never (EINVAL) 1  transparent_hugepage/enabled: cannot write 'MODE': ...    nothing
# --thp-defrag defer (EIO)                        1  transparent_hugepage/defrag: cannot write 'defer': ...    nothing
# --thp-khugepaged-pages/-scan-sleep/-alloc-sleep 1  transparent_hugepage/khugepaged/FILE: cannot write ...    nothing
# --thp-size 64K:always (EIO)                     1  transparent_hugepage/hugepages-64kB/enabled: ...          nothing
# --enable/--disable-zone-movable (EIO)           1  /proc/sys/vm/hugepages_treat_as_movable: cannot write ... nothing
# --hard (EIO on compact_memory), pool short      0  cannot compact memory (a warning), then 3 rounds, then    the pool as far as it got
#                                                    failed to set pool minimum to 3 became 2
# several options, the 2nd one fails             1  the failing file; "N files put back"                      nothing (the ones before put
#                                                                                                              back, the ones after not made)
# a close(2) that fails after the write (EIO)     1  /proc/sys/vm/nr_hugepages: cannot write 30: ...          nothing (the value written put back)
# a pool counter that cannot be read (EIO)        1  (--pool-list) cannot read the pool of N byte pages: ...   nothing
# EINTR on writes, short writes every time        0  none                                                      the same as without faults
# nr_hugepages moved by someone else between      0  failed to set pool minimum to 3 became 2 (or 5)           the value written stays
#   the write and the read-back (live)            2  with --strict: ... it was put back (--strict)             the old value written back
# a whole pool's Minimum short (live), 2M:16      0  failed to set pool minimum to 16 became 12               the overcommit for the Maximum
#                                                                                                              asked (8, not the 4 planned)
#
# Mount options (--create-*-mounts, --unmount-all) and the swap options write
# nothing through the path layer, and are refused with --sysroot.

load helpers

setup() {
	FAULTY="$HK_BUILD_DIR/tests/hugeadm-fault"
	hk_need_built "$FAULTY"
	# Under the name hugeadm, so that messages read as the installed tool's.
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	ln -sf "$FAULTY" "$BATS_TEST_TMPDIR/bin/hugeadm"
}

# changed PRISTINE COPY: the files that differ, relative, one per line, sorted.
changed() {
	diff -rq "$1" "$2" | sed -E "s|^Files $1/([^ ]+) and .*|\1|; s|^Only in $2/?([^:]*): (.*)|+\1/\2|" | sort
}

# faulty FIXTURE HK_FAULT ARGS...: run the fault build on a fresh copy of
# FIXTURE ($ROOT); $PRISTINE is an untouched copy to diff against.
faulty() {
	local fx=$1 spec=$2
	shift 2
	ROOT=$(fixture "$fx")
	PRISTINE="$BATS_TEST_TMPDIR/pristine"
	rm -rf "$PRISTINE"
	cp -R "$ROOT" "$PRISTINE"
	[ -z "${PREPARE:-}" ] || (cd "$ROOT" && eval "$PREPARE" && cd "$PRISTINE" && eval "$PREPARE")
	run --separate-stderr env HK_FAULT="$spec" "$BATS_TEST_TMPDIR/bin/hugeadm" --sysroot "$ROOT" "$@"
}

# has_line TEXT: stderr has a line that is exactly TEXT.
has_line() {
	grep -qxF -- "$1" <<< "$stderr" || fail "no line '$1' in stderr: $stderr"
}

V=proc/sys/vm

@test "the installed hugeadm ignores HK_FAULT" {
	local root
	root=$(fixture x86-1node)
	HK_FAULT='write:*:*:EIO;open:*:*:EACCES' run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:30
	assert_success
	assert_equal "$(cat "$root/$V/nr_hugepages")" 30
}

@test "--pool-pages-min: the first write fails (EIO): exit 1, nothing changed" {
	faulty x86-1node "write:$V/nr_hugepages:1:EIO" --pool-pages-min 2M:30
	assert_failure 1
	has_line "hugeadm:ERROR: /proc/sys/vm/nr_hugepages: cannot write 30: Input/output error"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
}

@test "--pool-pages-min: the second write fails (ENOSPC): the first is put back" {
	faulty x86-1node "write:$V/*:2:ENOSPC" --pool-pages-min 2M:30
	assert_failure 1
	has_line "hugeadm:ERROR: /proc/sys/vm/nr_overcommit_hugepages: cannot write 0: No space left on device"
	has_line "hugeadm:ERROR: --pool-pages-min 2M:30: failed: 1 file put back as it was before this run"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
}

@test "--pool-pages-min on another size and per node, --obey-mempolicy (EINVAL, EIO, EPERM)" {
	faulty x86-2node "write:*/hugepages-1048576kB/nr_hugepages:*:EINVAL" --pool-pages-min 1G:+1
	assert_failure 1
	has_line "hugeadm:ERROR: /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages: cannot write 3: Invalid argument"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""

	faulty x86-2node "write:*node1/*:1:EIO" --pool-pages-min 2M:+4@0-1
	assert_failure 1
	has_line "hugeadm:ERROR: /sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages: cannot write 10: Input/output error"
	# node0 was written (19) before node1 failed: put back.
	has_line "hugeadm:ERROR: --pool-pages-min 2M:+4@0-1: failed: 1 file put back as it was before this run"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""

	faulty x86-2node "write:*_mempolicy:*:EPERM" --obey-mempolicy --pool-pages-min 2M:22
	assert_failure 1
	has_line "hugeadm:ERROR: /proc/sys/vm/nr_hugepages_mempolicy: cannot write 22: Operation not permitted"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
}

@test "--pool-pages-max: the file cannot be opened (EACCES): exit 1, nothing changed" {
	faulty x86-1node "open:$V/nr_overcommit_hugepages:*:EACCES" --pool-pages-max 2M:40
	assert_failure 1
	has_line "hugeadm:ERROR: /proc/sys/vm/nr_overcommit_hugepages: cannot write 30: Permission denied"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
}

@test "sysctls: min_free_kbytes (EACCES), shmmax (EPERM), shm group (ENOSPC), zone movable (EIO)" {
	faulty x86-1node "write:$V/min_free_kbytes:1:EACCES" --set-recommended-min_free_kbytes
	assert_failure 1
	[[ "$stderr" == *"hugeadm:ERROR: /proc/sys/vm/min_free_kbytes: cannot write "*": Permission denied"* ]]
	# Said once: by the tool, not again by the library.
	assert_equal "$(grep -c ERROR <<< "$stderr")" 1
	run changed "$PRISTINE" "$ROOT"
	assert_output ""

	PREPARE="echo 1 > proc/sys/kernel/shmmax" faulty x86-1node "write:proc/sys/kernel/shmmax:1:EPERM" --set-recommended-shmmax
	assert_failure 1
	[[ "$stderr" == *"hugeadm:ERROR: /proc/sys/kernel/shmmax: cannot write "*": Operation not permitted"* ]]
	run changed "$PRISTINE" "$ROOT"
	assert_output ""

	faulty x86-1node "write:$V/hugetlb_shm_group:1:ENOSPC" --set-shm-group root
	assert_failure 1
	has_line "hugeadm:ERROR: /proc/sys/vm/hugetlb_shm_group: cannot write 0: No space left on device"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""

	for opt in --enable-zone-movable --disable-zone-movable; do
		PREPARE="echo 5 > $V/hugepages_treat_as_movable" faulty x86-1node "write:$V/hugepages_treat_as_movable:1:EIO" "$opt"
		assert_failure 1
		[[ "$stderr" == *"hugeadm:ERROR: /proc/sys/vm/hugepages_treat_as_movable: cannot write "[01]": Input/output error"* ]]
		run changed "$PRISTINE" "$ROOT"
		assert_output ""
	done
}

@test "THP: every option, each write refused: exit 1, the file named, nothing changed" {
	local opt file what
	while read -r opt file what; do
		# shellcheck disable=SC2086
		faulty x86-2node "write:*/transparent_hugepage/$file:1:$what" $opt
		assert_failure 1
		[[ "$stderr" == *"hugeadm:ERROR: transparent_hugepage/$file: cannot write '"*"': "* ]] ||
			fail "$opt: $stderr"
		[ "$(grep -c ERROR <<< "$stderr")" -eq 1 ] || fail "$opt: said more than once: $stderr"
		run changed "$PRISTINE" "$ROOT"
		assert_output ""
	done <<- EOF
		--thp-always enabled EINVAL
		--thp-madvise enabled EIO
		--thp-never enabled EPERM
		--thp-defrag=defer defrag EIO
		--thp-size=64K:always hugepages-64kB/enabled EIO
		--thp-khugepaged-pages=100 khugepaged/pages_to_scan EIO
		--thp-khugepaged-scan-sleep=100 khugepaged/scan_sleep_millisecs ENOSPC
		--thp-khugepaged-alloc-sleep=100 khugepaged/alloc_sleep_millisecs EACCES
	EOF
}

@test "several options: the changes before the failing one are put back, the ones after it are not made" {
	faulty x86-1node "write:$V/nr_hugepages:1:EIO" --thp-madvise --pool-pages-min 2M:30 --set-recommended-min_free_kbytes
	assert_failure 1
	has_line "hugeadm:ERROR: /proc/sys/vm/nr_hugepages: cannot write 30: Input/output error"
	has_line "hugeadm:ERROR: --pool-pages-min 2M:30: failed: 1 file put back as it was before this run"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
	# The same with the THP knob's file: "always [madvise] never" back byte for byte.
	faulty x86-1node "write:$V/min_free_kbytes:1:EIO" --thp-never --pool-pages-min 2M:30 --set-recommended-min_free_kbytes
	assert_failure 1
	has_line "hugeadm:ERROR: --set-recommended-min_free_kbytes: failed: 3 files put back as they were before this run"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
}

@test "a close(2) that fails after the write: exit 1, the value written is put back" {
	faulty x86-1node "close:$V/nr_hugepages:1:EIO" --pool-pages-min 2M:30
	assert_failure 1
	has_line "hugeadm:ERROR: /proc/sys/vm/nr_hugepages: cannot write 30: Input/output error"
	has_line "hugeadm:ERROR: --pool-pages-min 2M:30: failed: 1 file put back as it was before this run"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
}

@test "a counter that cannot be read: exit 1, the pool named, nothing changed" {
	faulty x86-1node "read:sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages:*:EIO" --pool-list
	assert_failure 1
	has_line "hugeadm:ERROR: cannot read the pool of 2097152 byte pages: Input/output error"
	faulty x86-1node "read:sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages:*:EIO" --pool-pages-min 2M:30
	assert_failure 1
	# The pool is named with the error, not called an unknown page size.
	assert_equal "$stderr" "hugeadm:ERROR: 2M: cannot read the pool: Input/output error"
	run changed "$PRISTINE" "$ROOT"
	assert_output ""
}

@test "EINTR and short writes are retried and succeed: the tree ends as without faults" {
	local args=(--pool-pages-min 2M:30 --pool-pages-max 2M:64 --thp-madvise --thp-defrag defer
		--set-recommended-min_free_kbytes --set-shm-group root)
	faulty x86-1node "" "${args[@]}"
	assert_success
	mv "$ROOT" "$BATS_TEST_TMPDIR/clean"
	faulty x86-1node "write:*:1:EINTR;write:$V/nr_hugepages:2:EINTR;write:*:4:EINTR" "${args[@]}"
	assert_success
	run changed "$BATS_TEST_TMPDIR/clean" "$ROOT"
	assert_output ""
	faulty x86-1node "write:*:*:short" "${args[@]}"
	assert_success
	run changed "$BATS_TEST_TMPDIR/clean" "$ROOT"
	assert_output ""
	assert_equal "$(cat "$ROOT/$V/nr_hugepages")" 30
}

# The rule "live" makes hugeadm read the pools back as from a kernel; 1G pools
# are written and read in the same file, so the tree answers like one. The
# lock then lives in the tree's run/hugekit, and the run needs CAP_SYS_ADMIN.
live_tree() {
	hk_need_root "the live mode of the fault build checks CAP_SYS_ADMIN"
	PREPARE="mkdir -p run"
}

P1G=sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages

@test "nr_hugepages moved by someone else between the write and the read-back" {
	live_tree
	# Reads 5 and later are the read-back of the write (two per pool read).
	faulty x86-2node "live;read:$P1G:5+:value=2" --pool-pages-min 1G:+1
	assert_success
	has_line "hugeadm:WARNING: failed to set pool minimum to 3 became 2"
	assert_equal "$(cat "$ROOT/$P1G")" 3
	faulty x86-2node "live;read:$P1G:5+:value=5" --pool-pages-min 1G:+1
	assert_success
	has_line "hugeadm:WARNING: failed to set pool minimum to 3 became 5"
	# --strict puts the old value back: 2 written again, exit 2.
	faulty x86-2node "live;read:$P1G:5+:value=2" --strict --pool-pages-min 1G:+1
	assert_failure 2
	has_line "hugeadm:ERROR: 1G:+1: the pool came up short; it was put back (--strict)"
	assert_equal "$(cat "$ROOT/$P1G")" 2
	# The kernel does not give the old size back: the run's put-back says so, exit 1.
	# (Reads 9 and later: after the run kept what was there, 2.)
	faulty x86-2node "live;read:$P1G:9+:value=1" --strict --pool-pages-min 1G:+1
	assert_failure 1
	has_line "hugeadm:WARNING: failed to set pool minimum to 3 became 1"
	has_line "hugeadm:ERROR: pool 1G minimum: put back to 2, but it reads 1 (/$P1G)"
	has_line "hugeadm:ERROR: --pool-pages-min 1G:+1: not every change could be put back (see above)"
	! grep -q "it was put back (--strict)" <<< "$stderr" || fail "said put back: $stderr"
	# Moved between the checks and the change: the relative change counts from what is there.
	faulty x86-2node "live;read:$P1G:3+:value=5" --pool-pages-min 1G:+1
	assert_success
	assert_equal "$(cat "$ROOT/$P1G")" 6
}

@test "a Minimum that comes up short keeps the Maximum asked for: the overcommit for the pages reached" {
	live_tree
	local P2M=sys/kernel/mm/hugepages/hugepages-2048kB
	# 1G the default size, so that the 2M pool is written and read in one directory.
	PREPARE="mkdir -p run && sed -i 's/^Hugepagesize: .*/Hugepagesize:    1048576 kB/' proc/meminfo"
	# 10 pages, Maximum 20; 16 asked, 12 reached: the overcommit becomes 8, not the 4 planned.
	faulty x86-1node "live;read:$P2M/nr_hugepages:5+:value=12" --pool-pages-min 2M:16
	assert_success
	has_line "hugeadm:WARNING: failed to set pool minimum to 16 became 12"
	assert_equal "$(cat "$ROOT/$P2M/nr_overcommit_hugepages")" 8
	# --strict: the run stops after the short Minimum's unit, the overcommit is never
	# written (-v would say "setting HUGEPAGES_OC"), and the Minimum is put back (to
	# what the faked reads said it was).
	faulty x86-1node "live;read:$P2M/nr_hugepages:5+:value=12" --strict --pool-pages-min 2M:16 --verbose 3
	assert_failure 2
	has_line "hugeadm:INFO: setting HUGEPAGES_TOTAL to 16"
	! grep -q "HUGEPAGES_OC" <<< "$stderr" || fail "the overcommit was written: $stderr"
	has_line "hugeadm:ERROR: 2M:16: the pool came up short; it was put back (--strict)"
	has_line "hugeadm:ERROR: --pool-pages-min 2M:16: came up short (--strict): 1 file put back as it was before this run"
	assert_equal "$(cat "$ROOT/$P2M/nr_overcommit_hugepages")" 10
}

@test "--hard: compaction that fails is a warning; three rounds without progress, then the shortfall" {
	live_tree
	PREPARE="mkdir -p run && echo 0 > $V/compact_memory"
	faulty x86-2node "live;read:$P1G:5+:value=2;write:$V/compact_memory:*:EIO" --hard --pool-pages-min 1G:+1
	assert_success
	[ "$(grep -c "cannot compact memory: Input/output error" <<< "$stderr")" -eq 3 ]
	has_line "hugeadm:WARNING: failed to set pool minimum to 3 became 2"
}

# Review of a9931df: a live run's --set-recommended-shmmax used to be computed
# after the pools were written, from what the kernel has; it now comes from the
# plan made before, as if every write got all its pages.
@test "--set-recommended-shmmax after a pool that came up short or moved: from the pools the kernel has" {
	live_tree
	# shmmax below the recommendation, so that hugeadm writes it.
	PREPARE="mkdir -p run && echo 33554432 > proc/sys/kernel/shmmax"
	# The 1G pool comes up short at 2 of 3: 2 x 1G, plus the 2M pool's Maximum (21 + 8 pages).
	faulty x86-2node "live;read:$P1G:5+:value=2" --pool-pages-min 1G:+1 --set-recommended-shmmax
	assert_success
	has_line "hugeadm:WARNING: failed to set pool minimum to 3 became 2"
	# A gigantic pool that came up short says where such pages come from.
	has_line "hugeadm:WARNING: 1G pages are gigantic: a running system seldom has free, aligned 1G ranges left"
	assert_equal "$(cat "$ROOT/proc/sys/kernel/shmmax")" $((2 * 1073741824 + 29 * 2097152))
	# Moved to 5 before the write and planned again from there: the kernel has 5 x 1G,
	# a shmmax planned from the 3 of before is below what the pool holds.
	HUGETLB_VERBOSE=3 faulty x86-2node "live;read:$P1G:3+:value=5" --pool-pages-min 1G:+1 --set-recommended-shmmax
	assert_success
	has_line "hugeadm:INFO: 1G:+1: the pool changed since it was planned: planned again"
	has_line "hugeadm:INFO: 5, 5 -> 6, 6"
	assert_equal "$(cat "$ROOT/proc/sys/kernel/shmmax")" $((5 * 1073741824 + 29 * 2097152))
}

# One rule for both (issue #20): kernel.shmmax = recommended used to be the sum
# of the maximums the configuration planned, where --set-recommended-shmmax is
# computed again from the pools the writes left.
@test "kernel.shmmax = recommended after a pool that came up short: from the pools the kernel has, as the option" {
	live_tree
	PREPARE="mkdir -p run && echo 33554432 > proc/sys/kernel/shmmax"
	printf '[pool 1G]\nminimum = 3\n[sysctl]\nkernel.shmmax = recommended\n' > "$BATS_TEST_TMPDIR/c.conf"
	# Planned from 3 x 1G; the kernel reaches 2 of them.
	faulty x86-2node "live;read:$P1G:6+:value=2" --apply "$BATS_TEST_TMPDIR/c.conf"
	assert_success
	has_line "hugeadm:WARNING: pool 1G minimum: asked for 3, the kernel reached 2"
	assert_equal "$(cat "$ROOT/proc/sys/kernel/shmmax")" $((2 * 1073741824 + 29 * 2097152))
	assert_line "changed: sysctl kernel.shmmax: 33554432 -> $((2 * 1073741824 + 29 * 2097152)) ($BATS_TEST_TMPDIR/c.conf:4)"
	# Where nothing came up short, the plan's own: 3 x 1G.
	faulty x86-2node "live" --apply "$BATS_TEST_TMPDIR/c.conf"
	assert_success
	assert_equal "$(cat "$ROOT/proc/sys/kernel/shmmax")" $((3 * 1073741824 + 29 * 2097152))
}

# Review of a9931df: --dry-run --json is "every write in the order it would
# run", but the temporary swap file of --add-temp-swap (dd, mkswap, swapon,
# and with --persist left on) is in the shell dry run only.
@test "--dry-run --json --add-temp-swap: the document names the swap the run adds, as the shell lines do" {
	live_tree
	faulty x86-1node "live" --dry-run --add-temp-swap=3 --persist --pool-pages-min 2M:+1
	assert_success
	assert_line --regexp '^swapon /var/lib/hugetlbfs/swap/temp/swapfile-[0-9]+$'
	faulty x86-1node "live" --dry-run --json --add-temp-swap=3 --persist --pool-pages-min 2M:+1
	assert_success
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); sys.exit(0 if any("--add-temp-swap" in o for o in d["operations"]) else 1)' "$output" ||
		fail "no --add-temp-swap among the operations: $output"
}

# One executor (issue #20): the swap of --add-temp-swap and of [apply]
# temp_swap is added by libhugekit's run (hk_run_set_swap) before the write of
# a whole pool's minimum that grows, and taken away where that minimum's unit
# ends: for the options after the pool's overcommit (2.23's order), for a
# configuration before the maximum's (its own unit). None for a pool that
# shrinks, none per node, none in a dry run's JSON document.
@test "swap while a pool grows: the executor's, for the options and [apply] temp_swap alike" {
	live_tree
	local f='/var/lib/hugetlbfs/swap/temp/swapfile-N'
	faulty x86-1node "live" --dry-run --add-temp-swap=3 --pool-pages-min 2M:40
	assert_success
	assert_equal "$(sed 's/swapfile-[0-9]*/swapfile-N/' <<< "$output")" "$(printf '%s\n' "HUGETLB_VERBOSE='2'" \
		"dd bs=1024 count=6144 if=/dev/zero of=$f" "mkswap $f" "swapon $f" \
		'echo 40 > /proc/sys/vm/nr_hugepages' 'echo 0 > /proc/sys/vm/nr_overcommit_hugepages' \
		"swapoff $f" "rm -f $f")"
	printf '[pool 2M]\nminimum = 40\nmaximum = 48\n[apply]\ntemp_swap = 3\n' > "$BATS_TEST_TMPDIR/grow.conf"
	faulty x86-1node "live" --apply "$BATS_TEST_TMPDIR/grow.conf" --dry-run
	assert_success
	assert_equal "$(sed 's/swapfile-[0-9]*/swapfile-N/' <<< "$output")" "$(printf '%s\n' "HUGETLB_VERBOSE='2'" \
		"dd bs=1024 count=6144 if=/dev/zero of=$f" "mkswap $f" "swapon $f" \
		'echo 40 > /proc/sys/vm/nr_hugepages' "swapoff $f" "rm -f $f" \
		'echo 8 > /proc/sys/vm/nr_overcommit_hugepages')"
	# Shrinking, or per node: no swap.
	faulty x86-1node "live" --dry-run --add-temp-swap=3 --pool-pages-min 2M:1
	assert_success
	refute_output --partial swapon
	printf '[pool 2M]\nminimum = 40@0\n[apply]\ntemp_swap = 3\n' > "$BATS_TEST_TMPDIR/node.conf"
	faulty x86-1node "live" --apply "$BATS_TEST_TMPDIR/node.conf" --dry-run
	assert_success
	assert_line 'echo 40 > /sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages'
	refute_output --partial swapon
	faulty x86-1node "live" --apply "$BATS_TEST_TMPDIR/grow.conf" --dry-run --json
	assert_success
	python3 -c 'import json, sys; json.loads(sys.argv[1])' "$output" || fail "not one JSON document: $output"
}
