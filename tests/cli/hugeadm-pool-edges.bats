#!/usr/bin/env bats
# Pool arithmetic at the edges, on --sysroot trees: an unlimited overcommit
# (18446744073709551615, which the kernel accepts) survives every pool option
# that does not set the Maximum; amounts below one page or beyond memory are
# refused before anything is written (or, for a Maximum, warned about).

load helpers

U=18446744073709551615
VM=proc/sys/vm
SYS2M=sys/kernel/mm/hugepages/hugepages-2048kB

# changed PRISTINE COPY: the files that differ, relative, one per line, sorted.
changed() {
	diff -rq "$1" "$2" | sed -E "s|^Files $1/([^ ]+) and .*|\1|" | sort
}

# unlimited: x86-1node (2M: nr 10, surplus 0) with an unlimited overcommit, in
# $PRISTINE, and a scratch copy of it in $ROOT.
unlimited() {
	PRISTINE="$BATS_TEST_TMPDIR/unlimited"
	rm -rf "$PRISTINE"
	cp -R "$HK_FIXTURES/x86-1node" "$PRISTINE"
	echo "$U" > "$PRISTINE/$SYS2M/nr_overcommit_hugepages"
	echo "$U" > "$PRISTINE/$VM/nr_overcommit_hugepages"
	ROOT="$BATS_TEST_TMPDIR/root"
	rm -rf "$ROOT"
	cp -R "$PRISTINE" "$ROOT"
}

# after ARGS...: run hugeadm on a fresh unlimited tree; it must succeed.
after() {
	unlimited
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" "$@"
	assert_success
}

@test "unlimited overcommit: --pool-pages-min 2M:+1, 2M:-1 and 2M:5 keep it (it was 'echo 0')" {
	local a want
	for a in +1:11 -1:9 5:5; do
		want=${a#*:}
		after --pool-pages-min "2M:${a%%:*}"
		assert_equal "$(cat "$ROOT/$VM/nr_hugepages")" "$want"
		assert_equal "$(cat "$ROOT/$VM/nr_overcommit_hugepages")" "$U"
		# Only the Minimum was written.
		run changed "$PRISTINE" "$ROOT"
		assert_output "$VM/nr_hugepages"
	done
}

@test "unlimited overcommit: --pool-pages-max 2M:+1 keeps it, 2M:10 sets it, 2M:-1 is one below" {
	after --pool-pages-max 2M:+1
	assert_equal "$(cat "$ROOT/$VM/nr_hugepages")" 10
	assert_equal "$(cat "$ROOT/$VM/nr_overcommit_hugepages")" "$U"
	# The Maximum asked for is 10, the Minimum: no overcommit left.
	after --pool-pages-max 2M:10
	assert_equal "$(cat "$ROOT/$VM/nr_hugepages")" 10
	assert_equal "$(cat "$ROOT/$VM/nr_overcommit_hugepages")" 0
	# Unlimited less one page is a finite Maximum: overcommit = Maximum - Minimum.
	after --pool-pages-max 2M:-1
	assert_equal "$(cat "$ROOT/$VM/nr_overcommit_hugepages")" 18446744073709551604
}

@test "unlimited overcommit: the dry run plans no overcommit write, and later options see it" {
	unlimited
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --dry-run --pool-pages-min 2M:+1 \
		--pool-pages-min 2M:+1 --pool-pages-max 2M:+1 --pool-pages-min 2M:-5
	assert_success
	assert_output "$(printf '%s\n' "HUGETLB_VERBOSE='2'" \
		"echo 11 > /proc/sys/vm/nr_hugepages" "echo 12 > /proc/sys/vm/nr_hugepages" \
		"echo 12 > /proc/sys/vm/nr_hugepages" "echo 7 > /proc/sys/vm/nr_hugepages")"
	# shmmax: the sum of Maximum x page size saturates instead of wrapping.
	echo 1000 > "$ROOT/proc/sys/kernel/shmmax"
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --pool-pages-min 2M:+1 --set-recommended-shmmax
	assert_success
	assert_equal "$(cat "$ROOT/proc/sys/kernel/shmmax")" "$U"
}

@test "a refused dry run prints nothing on stdout (2.23 began with HUGETLB_VERBOSE all the same)" {
	unlimited
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --dry-run --pool-pages-min 3M:10
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "hugeadm:ERROR: 3M: unknown page size"
	printf '[pool 3M]\nminimum = 2\n' > "$BATS_TEST_TMPDIR/c.conf"
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --apply "$BATS_TEST_TMPDIR/c.conf" --dry-run
	assert_failure 1
	assert_output ""
	# A valid one still begins with it, at 99 with HUGETLB_DEBUG before.
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --dry-run --pool-pages-min 2M:+0 --verbose 99
	assert_success
	assert_line --index 0 "HUGETLB_DEBUG='yes'"
	assert_line --index 1 "HUGETLB_VERBOSE='99'"
}

@test "unlimited overcommit in the reports: Maximum 18446744073709551615 (2.23: a negative number)" {
	local legacy=/usr/bin/hugeadm shim="$HK_BUILD_DIR/tests/libhk-pathshim.so"
	unlimited
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --pool-list
	assert_success
	assert_line --index 1 "   2097152       10       10 $U        *"
	run --separate-stderr "$HUGEADM" --sysroot "$ROOT" --pool-list --json
	assert_success
	assert_line "      \"maximum\": $U,"
	assert_line "      \"overcommit\": $U,"
	if ! dpkg -S "$legacy" 2> /dev/null | grep -q '^libhugetlbfs-bin:' || [ ! -f "$shim" ]; then
		hk_missing "libhugetlbfs-bin (2.23) or the path shim is missing"
	fi
	awk -f "$HK_SOURCE_DIR/tests/legacy/mounts-from-mountinfo.awk" "$ROOT/proc/self/mountinfo" > "$ROOT/proc/mounts"
	run --separate-stderr env HK_SHIM_ROOT="$ROOT" LD_PRELOAD="$shim" "$legacy" --pool-list
	assert_success
	# Its long arithmetic wrapped: LONG_MAX + 10. Same width, so the columns line up alike.
	assert_line --index 1 "   2097152       10       10 -9223372036854775799        *"
}

@test "less than one page: an error naming the amount, exit 1, nothing written (2.23: 0 pages)" {
	local root a amount
	root=$(fixture x86-2node)
	for a in 2M:1k 2M:+1k 2M:-1K 1G:512M 2M:1k@0 2M:+1k@0-1; do
		run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:4 --pool-pages-min "$a"
		assert_failure 1
		amount=${a#*:}
		amount=${amount%@*}
		assert_equal "$stderr" "hugeadm:ERROR: $a: $amount is less than one ${a%%:*} page"
	done
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-max 2M:1023K
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:1023K: 1023K is less than one 2M page"
	run changed "$HK_FIXTURES/x86-2node" "$root"
	assert_output ""
	# 0 in any unit is 0 pages, as asked; 3M is one page (truncated, as in 2.23).
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 1G:0k --pool-pages-min 2M:3M
	assert_success
	assert_equal "$(cat "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages")" 0
	assert_equal "$(cat "$root/$VM/nr_hugepages")" 1
}

@test "a Minimum beyond memory: an error before anything is written (2.23: tried, or 'invalid adjustment')" {
	local root
	root=$(fixture x86-1node)
	# MemTotal 24683520 kB holds 12052 pages of 2M.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:4 --pool-pages-min 2M:$U
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:$U: $U pages of 2M are more than the memory holds (MemTotal 24683520 kB, 12052 pages)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:-$U
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:-$U: $U pages of 2M are more than the memory holds (MemTotal 24683520 kB, 12052 pages)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:12053
	assert_failure 1
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:24G
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:24G: 12288 pages of 2M are more than the memory holds (MemTotal 24683520 kB, 12052 pages)"
	# A relative amount that takes the Minimum beyond memory: 10 + 12043.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:+12043
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:+12043: a Minimum of 12053 pages of 2M is more than the memory holds (MemTotal 24683520 kB, 12052 pages)"
	# A decrease of the Maximum beyond memory is no limit, just a bad number.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-max 2M:-$U
	assert_failure 1
	# T is no unit of 2.23's (it read 100T as 100 pages): an error, not a guess.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:100T
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 100T: invalid adjustment"
	run changed "$HK_FIXTURES/x86-1node" "$root"
	assert_output ""
	# All of memory is allowed (the kernel gives what it can).
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:12052
	assert_success
	assert_equal "$(cat "$root/$VM/nr_hugepages")" 12052
}

@test "per node: the same checks for @NODES (the machine's memory bounds each node and their sum)" {
	local root
	root=$(fixture x86-2node)
	# MemTotal 49266176 kB: 24055 pages of 2M. node0 has 15 persistent pages, node1 6.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:$U@0
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:$U@0: $U pages of 2M are more than the memory holds (MemTotal 49266176 kB, 24055 pages)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:-$U@1
	assert_failure 1
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:+12030@0-1
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: 2M:+12030@0-1: a Minimum of 24081 pages of 2M is more than the memory holds (MemTotal 49266176 kB, 24055 pages)"
	run changed "$HK_FIXTURES/x86-2node" "$root"
	assert_output ""
	# A decrease within memory still stops at 0, as 2.23's did.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:-100@1
	assert_success
	assert_equal "$(cat "$root/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages")" 0
}

@test "a Maximum beyond memory is a limit: a warning, and exactly that Maximum" {
	local root
	root=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-max 2M:20000
	assert_success
	assert_equal "$stderr" "hugeadm:WARNING: 2M:20000: 20000 pages of 2M are more than the memory holds (MemTotal 24683520 kB, 12052 pages): the Maximum is only a limit"
	assert_equal "$(cat "$root/$VM/nr_overcommit_hugepages")" 19990
	# The largest count is an unlimited overcommit, never a wrap or a clamp.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-max 2M:$U
	assert_success
	assert_equal "$(cat "$root/$VM/nr_overcommit_hugepages")" "$U"
}
