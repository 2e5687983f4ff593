#!/usr/bin/env bats
# shellcheck disable=SC2154 # run sets $stderr
# The libhugetlbfs API of libhugekit-rt (lib/runtime/api.c) with the programs
# of tests/rt: legacy-api, a program written for libhugetlbfs, built against
# hugekit's hugetlbfs.h and also against libhugetlbfs 2.23's header and
# library (Debian's libhugetlbfs-dev) and then run on libhugekit-rt through a
# libhugetlbfs.so.0 link; api-probe, one call per run, for mount discovery
# and the environment. The tests that need huge pages or mounts are live:
# root, hugetlbfs and a 2 MiB default size, or they skip with the reason.
# They take the live-test lock, and put back the pool and unmount what they
# mounted at the end.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
# shellcheck source=tests/common.bash
source "$BATS_TEST_DIRNAME/../common.bash"

: "${HK_SOURCE_DIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${HK_BUILD_DIR:=$HK_SOURCE_DIR/build/dev}"
RTLIB="$HK_BUILD_DIR/lib/libhugekit-rt.so"
LIVE_LOCK=/run/lock/hugekit-live-tests.lock
VM=/proc/sys/vm
# The API and its versions, as libhugetlbfs 2.23 exports them.
API_VERSIONS="free_huge_pages HTLBFS_2.0
free_hugepage_region HTLBFS_2.1
get_huge_pages HTLBFS_2.0
get_hugepage_region HTLBFS_2.1
gethugepagesize VERS_1.0
gethugepagesizes HTLBFS_2.1
getpagesizes HTLBFS_2.1
hugetlbfs_find_path VERS_1.0
hugetlbfs_find_path_for_size HTLBFS_2.1
hugetlbfs_test_path VERS_1.0
hugetlbfs_unlinked_fd VERS_1.0
hugetlbfs_unlinked_fd_for_size HTLBFS_2.1"

# Why the live tests cannot run here; empty when they can.
live_missing() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "live tests need root"
	elif ! grep -qw hugetlbfs /proc/filesystems; then
		echo "no hugetlbfs in this kernel"
	elif ! grep -q '^Hugepagesize: *2048 kB' /proc/meminfo; then
		echo "the default huge page size is not 2 MiB"
	elif [ ! -w "$VM/nr_hugepages" ]; then
		echo "$VM/nr_hugepages is not writable"
	fi
}

# The programs: from the build tree when CMake built them, else compiled here.
build_programs() {
	local bin="$BATS_FILE_TMPDIR/bin" p
	mkdir -p "$bin" "$BATS_FILE_TMPDIR/compat"
	for p in legacy-api api-probe; do
		if [ -x "$HK_BUILD_DIR/tests/rt-$p" ]; then
			ln -sf "$HK_BUILD_DIR/tests/rt-$p" "$bin/$p"
		else
			cc -std=gnu17 -O1 -g -Wall -Wextra -Werror -I"$HK_SOURCE_DIR/lib/include" \
				"$HK_SOURCE_DIR/tests/rt/$p.c" -o "$bin/$p" -pthread \
				-L"$HK_BUILD_DIR/lib" -lhugekit-rt -Wl,-rpath,"$HK_BUILD_DIR/lib"
		fi
		# Built for libhugetlbfs 2.23: its header (which needs size_t first) and its library.
		if [ -f /usr/include/hugetlbfs.h ]; then
			cc -O1 -g "$HK_SOURCE_DIR/tests/rt/$p.c" -o "$bin/$p-2.23" -pthread -lhugetlbfs \
				2> /dev/null || rm -f "$bin/$p-2.23"
		fi
	done
	# What a program built for libhugetlbfs loads where the compat names are installed.
	ln -sf "$RTLIB" "$BATS_FILE_TMPDIR/compat/libhugetlbfs.so.0"
}

setup_file() {
	[ -e "$RTLIB" ] || return 0
	build_programs
	[ -z "$(live_missing)" ] || return 0
	exec {LIVE_LOCK_FD}> "$LIVE_LOCK"
	flock -w 900 "$LIVE_LOCK_FD" || {
		echo "# could not take $LIVE_LOCK in 900 s" >&3
		return 1
	}
	printf '%s %s\n' "$(cat "$VM/nr_hugepages")" "$(cat "$VM/nr_overcommit_hugepages")" \
		> "$BATS_FILE_TMPDIR/saved"
}

teardown_file() {
	local m nr oc
	findmnt -rn -t hugetlbfs -o TARGET | while read -r m; do
		m=$(printf '%b' "$m")
		case "$m" in "$BATS_FILE_TMPDIR"/* | /tmp/hk-rt-bats.*) umount "$m" ;; esac
	done
	if [ -f "$BATS_FILE_TMPDIR/userdir" ]; then
		rm -rf "$(cat "$BATS_FILE_TMPDIR/userdir")"
	fi
	hk_unstage
	if [ -f "$BATS_FILE_TMPDIR/saved" ]; then
		read -r nr oc < "$BATS_FILE_TMPDIR/saved"
		echo 0 > "$VM/nr_overcommit_hugepages"
		echo "$nr" > "$VM/nr_hugepages"
		echo "$oc" > "$VM/nr_overcommit_hugepages"
	fi
}

setup() {
	[ -e "$RTLIB" ] || fail "$RTLIB is not built"
	BIN="$BATS_FILE_TMPDIR/bin"
	COMPAT="$BATS_FILE_TMPDIR/compat"
	M="$BATS_FILE_TMPDIR/m"
	unset HUGETLB_PATH HUGETLB_DEFAULT_PAGE_SIZE HUGETLB_MORECORE HUGETLB_SHM \
		HUGETLB_RESTRICT_EXE HUGETLB_NO_RESERVE HUGETLB_VERBOSE HUGETLB_DEBUG
}

need_live() {
	local why
	why=$(live_missing)
	[ -z "$why" ] || hk_missing "$why"
}

need_legacy() {
	[ -x "$BIN/legacy-api-2.23" ] || hk_missing "libhugetlbfs-dev (2.23) is not installed"
}

# pool N: N default-size pages, no overcommit; skips when the kernel gives fewer.
pool() {
	echo 0 > "$VM/nr_overcommit_hugepages"
	echo "$1" > "$VM/nr_hugepages"
	[ "$(cat "$VM/nr_hugepages")" -ge "$1" ] || hk_skip "the kernel could not give $1 huge pages"
	if [ "$1" -eq 0 ]; then
		grep -q '^HugePages_Free: *0$' /proc/meminfo || hk_skip "huge pages are in use elsewhere"
	fi
}

# hmount DIR [OPTIONS]: a hugetlbfs mount of ours.
hmount() {
	mkdir -p "$1"
	mount -t hugetlbfs -o "${2:-rw}" none "$1"
}

# The first hugetlbfs mount of a page size ("2M", "1024M") in this mount table.
first_mount() {
	awk -v ps="pagesize=$1" '{
		for (i = 7; $i != "-"; i++) ;
		if ($(i + 1) == "hugetlbfs" && index("," $(i + 3) ",", "," ps ",")) { print $5; exit }
	}' /proc/self/mountinfo | while read -r m; do printf '%b\n' "$m"; done
}

@test "libhugekit-rt exports the API at libhugetlbfs's symbol versions" {
	local ours theirs lib=/usr/lib/x86_64-linux-gnu/libhugetlbfs.so.0
	# A coverage build (tests/coverage.sh) links libgcov, which exports its own
	# __gcov_* and mangle_path (version Base): not part of the API.
	# The interposers (shmget; _Fork and clone, for children that keep huge
	# pages) are unversioned, so that they take the place of glibc's.
	run objdump -T "$RTLIB"
	assert_line --regexp ' g +DF \.text\s+[0-9a-f]+ +Base +_Fork$'
	assert_line --regexp ' g +DF \.text\s+[0-9a-f]+ +Base +clone$'
	ours=$(objdump -T "$RTLIB" | awk '$2 == "g" && $4 == ".text" { print $7, $6 }' |
		grep -v -E -e '^(shmget|_Fork|clone) ' -e '^(__gcov_[a-z_]*|mangle_path) Base$' | sort)
	assert_equal "$ours" "$API_VERSIONS"
	[ -e "$lib" ] || lib=$(ldconfig -p | awk '/libhugetlbfs\.so\.0 / && f == "" { f = $NF } END { print f }')
	[ -n "$lib" ] && [ -e "$lib" ] || hk_missing "libhugetlbfs.so.0 (2.23) is not installed"
	theirs=$(objdump -T "$lib" | awk '$2 == "g" && $4 == ".text" { print $7, $6 }' |
		grep -Ev '^(shmget|cachecolor|__tp_)' | sort)
	assert_equal "$ours" "$theirs"
}

@test "a free of what the library did not hand out unmaps nothing" {
	run --separate-stderr "$BIN/api-probe" bad-free
	assert_success
	assert_output "still mapped"
	[ "$(grep -c 'libhugetlbfs: ERROR: free_huge.*: invalid or double free of 0x' <<< "$stderr")" -eq 4 ] ||
		fail "stderr: $stderr"
}

@test "5000 regions live at once, each freed through the pointer it was given" {
	# No default size: every region falls back to base pages, so no pool is needed.
	HUGETLB_DEFAULT_PAGE_SIZE=none HUGETLB_VERBOSE=0 run --separate-stderr "$BIN/api-probe" many 5000
	assert_success
	assert_output "5000 freed"
	assert_equal "$stderr" ""
}

@test "HUGETLB_DEFAULT_PAGE_SIZE: a kernel size, an unknown size, garbage" {
	grep -q '^Hugepagesize: *2048 kB' /proc/meminfo || hk_missing "the default huge page size is not 2 MiB"
	run --separate-stderr "$BIN/api-probe" size
	assert_output "2097152 errno=0"
	if [ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ]; then
		# Any size the kernel has, even without a mount of that size.
		HUGETLB_PATH=/proc HUGETLB_DEFAULT_PAGE_SIZE=1G run --separate-stderr "$BIN/api-probe" size
		assert_output "1073741824 errno=0"
		assert_equal "$stderr" "libhugetlbfs: WARNING: /proc is not a hugetlbfs mount point, ignoring"
	fi
	HUGETLB_DEFAULT_PAGE_SIZE=3M run --separate-stderr "$BIN/api-probe" size
	assert_output "2097152 errno=0"
	assert_equal "$stderr" "libhugetlbfs: WARNING: No mount point found for default huge page size. Using first available mount point."
	HUGETLB_DEFAULT_PAGE_SIZE=abc run --separate-stderr "$BIN/api-probe" size
	assert_output "-1 errno=38"
	assert_equal "$stderr" "libhugetlbfs: ERROR: Unable to determine default huge page size"
}

@test "legacy-api: sizes, get_huge_pages, regions, fork and threads on 20 huge pages" {
	need_live
	pool 20
	run --separate-stderr "$BIN/legacy-api"
	echo "$output"
	echo "$stderr"
	assert_success
	assert_line --regexp '^# runtime: .*/libhugekit-rt\.so'
	assert_line "# coverage: Private_Hugetlb 4096 kB of 4096 kB written, KernelPageSize 2048 kB"
	refute_line --partial "not ok"
	grep '^# coverage' <<< "$output" >&3
}

@test "legacy-api on an empty pool: ENOMEM, and GHR_FALLBACK still gives memory" {
	need_live
	pool 0
	run --separate-stderr "$BIN/legacy-api" --empty-pool
	echo "$output"
	assert_success
	refute_line --partial "not ok"
	assert_line --partial "get_huge_pages() = NULL, errno 12"
	assert_equal "$(sort -u <<< "$stderr")" \
		"libhugetlbfs: WARNING: get_huge_pages: New region mapping failed (flags: 0x1): Cannot allocate memory"
}

@test "legacy-api built for libhugetlbfs 2.23 runs on libhugekit-rt as libhugetlbfs.so.0" {
	need_live
	need_legacy
	pool 20
	run --separate-stderr env LD_LIBRARY_PATH="$COMPAT" "$BIN/legacy-api-2.23"
	echo "$output"
	assert_success
	assert_line --regexp '^# runtime: .*/libhugekit-rt\.so'
	refute_line --partial "not ok"
	pool 0
	run --separate-stderr env LD_LIBRARY_PATH="$COMPAT" "$BIN/legacy-api-2.23" --empty-pool
	echo "$output"
	assert_success
	assert_line --regexp '^# runtime: .*/libhugekit-rt\.so'
	refute_line --partial "not ok"
}

@test "legacy-api gives the same results on libhugetlbfs 2.23 and on libhugekit-rt" {
	need_live
	need_legacy
	local mode theirs ours theirs_err
	for mode in "" --empty-pool; do
		if [ -n "$mode" ]; then pool 0; else pool 20; fi
		# shellcheck disable=SC2086 # an empty mode is no argument
		run --separate-stderr "$BIN/legacy-api-2.23" $mode
		assert_line --regexp '^# runtime: .*/libhugetlbfs'
		theirs=$(grep -Eo '^(not )?ok [0-9]+' <<< "$output")
		theirs_err=$stderr
		# shellcheck disable=SC2086
		run --separate-stderr env LD_LIBRARY_PATH="$COMPAT" "$BIN/legacy-api-2.23" $mode
		ours=$(grep -Eo '^(not )?ok [0-9]+' <<< "$output")
		assert_equal "$ours" "$theirs"
		assert_equal "$stderr" "$theirs_err"
	done
}

@test "mount discovery: mountinfo, escaped names, first mount of each size, unlinked files" {
	need_live
	local spaced="$M/with space" want
	hmount "$spaced" pagesize=2M
	hmount "$M/second" pagesize=2M
	want=$(first_mount 2M)
	run --separate-stderr "$BIN/api-probe" path
	assert_output "$want"
	run "$BIN/api-probe" test "$spaced"
	assert_output 1
	# With only our mounts, the one with a space in its name comes first.
	if [ "$want" = "$spaced" ]; then
		run "$BIN/api-probe" fd
		assert_output "hugetlbfs 2097152 unlinked"
		[ -z "$(ls -A "$spaced")" ] || fail "a file was left in $spaced"
	fi
	if [ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ]; then
		hmount "$M/1g" pagesize=1G
		run "$BIN/api-probe" path 0x40000000
		assert_output "$(first_mount 1024M)"
		run "$BIN/api-probe" fd 0x40000000
		assert_output "hugetlbfs 1073741824 unlinked"
	fi
	run "$BIN/api-probe" path 12345
	assert_output "(null)"
}

@test "HUGETLB_PATH: only the listed mounts, in order, with libhugetlbfs's warnings" {
	need_live
	local a="$M/path a" c="$M/path-c" g="$M/path-1g"
	hmount "$a" pagesize=2M
	hmount "$c" pagesize=2M
	HUGETLB_PATH="$c:$a:/proc" run --separate-stderr "$BIN/api-probe" path
	assert_output "$c"
	assert_equal "$stderr" "libhugetlbfs: WARNING: Mount point already defined for size 2097152, ignoring $a
libhugetlbfs: WARNING: /proc is not a hugetlbfs mount point, ignoring"
	HUGETLB_PATH="$a" run --separate-stderr "$BIN/api-probe" fd
	assert_output "hugetlbfs 2097152 unlinked"
	[ -d /sys/kernel/mm/hugepages/hugepages-1048576kB ] || return 0
	hmount "$g" pagesize=1G
	# A 1 GiB mount alone leaves the 2 MiB default without a path.
	HUGETLB_PATH="$g" run --separate-stderr "$BIN/api-probe" path
	assert_output "(null)"
	HUGETLB_PATH="$g" run --separate-stderr "$BIN/api-probe" path 0x40000000
	assert_output "$g"
	HUGETLB_PATH="$g" run --separate-stderr "$BIN/api-probe" fd
	assert_output "-1"
}

@test "mount discovery and the environment as libhugetlbfs 2.23 sees them" {
	need_live
	need_legacy
	local a="$M/cmp a" c="$M/cmp-c" g="$M/cmp-1g" env args theirs ours
	hmount "$a" pagesize=2M
	hmount "$c" pagesize=2M
	[ ! -d /sys/kernel/mm/hugepages/hugepages-1048576kB ] || hmount "$g" pagesize=1G
	# Mounts through HUGETLB_PATH: from /proc/self/mountinfo, 2.23 does not
	# decode "\040" and so misses a mount with a space in its name.
	while IFS='|' read -r env args; do
		# shellcheck disable=SC2086 # the arguments are split on purpose
		theirs=$(env "$env" "$BIN/api-probe-2.23" $args 2>&1 || echo "rc=$?")
		# shellcheck disable=SC2086
		ours=$(env LD_LIBRARY_PATH="$COMPAT" "$env" "$BIN/api-probe-2.23" $args 2>&1 || echo "rc=$?")
		assert_equal "[$env $args] $ours" "[$env $args] $theirs"
	done <<- EOF
		HUGETLB_VERBOSE=2|size
		HUGETLB_VERBOSE=2|sizes
		HUGETLB_PATH=$c:$a:/tmp|path
		HUGETLB_PATH=$g|path
		HUGETLB_PATH=$g|path 0x40000000
		HUGETLB_PATH=$g|fd
		HUGETLB_PATH=$c|fd
		HUGETLB_PATH=$a:$g|path 0x200000
		HUGETLB_DEFAULT_PAGE_SIZE=abc|size
		HUGETLB_DEFAULT_PAGE_SIZE=3M|size
		HUGETLB_DEFAULT_PAGE_SIZE=2097152|size
		HUGETLB_DEFAULT_PAGE_SIZE=0x200000|size
		HUGETLB_DEFAULT_PAGE_SIZE=1G|path 0x40000000
		HUGETLB_VERBOSE=2|test /nonexistent
		HUGETLB_VERBOSE=2|test $c
		HUGETLB_VERBOSE=2|alloc 0
	EOF
}

# The first 2 MiB hugetlbfs mount that nobody may read, write and search.
first_mount_for_nobody() {
	awk '{
		for (i = 7; $i != "-"; i++) ;
		if ($(i + 1) == "hugetlbfs" && index("," $(i + 3) ",", ",pagesize=2M,")) print $5
	}' /proc/self/mountinfo | while read -r m; do
		m=$(printf '%b' "$m")
		# shellcheck disable=SC2016 # expanded by the inner shell
		if setpriv --reuid=65534 --regid=65534 --clear-groups \
			sh -c 'test -r "$1" && test -w "$1" && test -x "$1"' sh "$m"; then
			echo "$m"
			break
		fi
	done
}

@test "a user finds only the mounts it may read, write and search" {
	need_live
	local d probe
	d=$(mktemp -d /tmp/hk-rt-bats.XXXXXX)
	echo "$d" > "$BATS_FILE_TMPDIR/userdir"
	chmod 755 "$d"
	# The probe and the runtime where nobody can reach them, wherever the checkout is.
	probe=$(hk_stage_for_user tests/rt-api-probe)/tests/rt-api-probe
	hmount "$d/root only" pagesize=2M,mode=0700
	hmount "$d/everyone" pagesize=2M,mode=1777
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$probe" path
	assert_success
	assert_output "$(first_mount_for_nobody)"
	refute_output "$d/root only"
	# root may use both: the first one.
	run "$probe" path
	assert_output "$(first_mount 2M)"
}

@test "the API works again once its first look at /proc failed (no file descriptor left)" {
	local probe="$HK_BUILD_DIR/tests/rt-fd-recover" def
	hk_need_built "$probe"
	def=$(awk '/^Hugepagesize:/ { print $2 * 1024 }' /proc/meminfo)
	[ -n "$def" ] || hk_missing "no huge pages in this kernel"
	run --separate-stderr "$probe"
	assert_success
	assert_output "-1 $def"
}

@test "a setuid program ignores libhugetlbfs's environment (secure_getenv)" {
	local probe dir def
	hk_need_root "to make a setuid copy"
	hk_need_user nobody
	def=$(awk '/^Hugepagesize:/ { print $2 * 1024 }' /proc/meminfo)
	[ -n "$def" ] || hk_missing "no huge pages in this kernel"
	# The runtime where the setuid program's RUNPATH can reach it as another user
	# (ld.so ignores LD_LIBRARY_PATH there), wherever the checkout is.
	dir=$(hk_stage_for_user)
	# Without sanitizers, which do not run setuid.
	probe=$dir/api-probe
	cc -std=gnu17 -O1 -I"$HK_SOURCE_DIR/lib/include" "$HK_SOURCE_DIR/tests/rt/api-probe.c" \
		-o "$probe" -L"$dir/lib" -lhugekit-rt -Wl,-rpath,"$dir/lib"
	cp "$probe" "$dir/api-probe-suid"
	chown nobody "$dir/api-probe-suid"
	chmod 4755 "$dir/api-probe-suid"
	# Not setuid: the variable is read, the size refused.
	run --separate-stderr env HUGETLB_DEFAULT_PAGE_SIZE=none "$probe" size
	assert_output --partial "-1 errno="
	# Setuid to another user (AT_SECURE): as if it were not set.
	run --separate-stderr env HUGETLB_DEFAULT_PAGE_SIZE=none HUGETLB_VERBOSE=99 "$dir/api-probe-suid" size
	assert_success
	assert_output "$def errno=0"
	assert_equal "$stderr" ''
}
