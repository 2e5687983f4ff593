#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# hugectl: the variables it sets (--dry-run, golden files in
# tests/expected/hugectl), its usage errors and its exit status. The runtime
# library is named by HK_RT_LIBRARY, a fixed path that need not exist, so that
# the golden files are the same on every machine. Nothing here changes the
# machine; the live tests (tests/live/hugectl.bats) run programs on huge pages.

load helpers

HUGECTL=hugectl
RT_FAKE=/usr/lib/hk-test/libhugekit-rt.so.0

setup() {
	local v

	# Only hugectl's own variables: nothing from the caller's environment.
	unset LD_PRELOAD LD_LIBRARY_PATH GLIBC_TUNABLES HK_DEBUG HK_RT_REEXEC
	for v in $(compgen -e HUGETLB_); do
		unset "$v"
	done
	export HK_RT_LIBRARY=$RT_FAKE
	[ "$(command -v "$HUGECTL")" = "$HK_BUILD_DIR/tools/hugectl" ] ||
		fail "hugectl is not the one in $HK_BUILD_DIR/tools"
}

# dry CASE ARGS...: the golden file hugectl/CASE of hugectl --dry-run ARGS... ./app.
dry() {
	local case=$1
	shift
	golden "hugectl/$case" "$HUGECTL" --dry-run "$@" ./app
}

@test "--heap: the default huge page size, the runtime preloaded, the tunables" {
	dry heap --heap
}

@test "--heap=2M --shm --no-reserve --share-text --report: 2.23's order, then the new ones" {
	grep -q '^Hugepagesize: *2048 kB$' /proc/meminfo ||
		skip "the default huge page size is not 2 MiB"
	dry heap-2m-shm-all --heap=2M --shm --no-reserve --share-text --report
}

@test "--text --data=2M: HUGETLB_ELFMAP, warnings, no LD_PRELOAD" {
	dry text-data --text --data=2M
}

@test "--bss alone: W, and the data-and-bss warning" {
	dry bss --bss
}

@test "--disable --text: HUGETLB_ELFMAP twice, 'no' last" {
	dry disable-text --disable --text
}

@test "--thp: transparent huge pages, glibc.malloc.hugetlb=1" {
	dry thp --thp
}

@test "--heap --thp: HUGETLB_MORECORE twice, thp last" {
	dry heap-thp --heap --thp
}

@test "--no-preload --heap: the tunables, no LD_PRELOAD" {
	dry no-preload-heap --no-preload --heap
}

@test "--force-preload --text: LD_PRELOAD despite --text" {
	dry force-preload-text --force-preload --text
}

@test "-q -q -q: level 0, and nothing said" {
	dry quiet -q -q -q
}

@test "-v: level 3 logs every variable on stderr" {
	dry verbose-info -v --heap
}

@test "--verbose 99: HUGETLB_DEBUG first" {
	dry verbose-99 --verbose 99
}

@test "--library-path: LD_LIBRARY_PATH, only then" {
	dry library-path --library-path /opt/x
	dry library-use-path --library-use-path --heap
}

@test "a GLIBC_TUNABLES of the user is kept, first" {
	GLIBC_TUNABLES=glibc.malloc.arena_max=2 dry glibc-tunables --heap
	# A tunable the user set is never overwritten.
	run --separate-stderr env GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536 \
		"$HUGECTL" --dry-run --heap ./app
	assert_success
	assert_line "GLIBC_TUNABLES='glibc.malloc.mmap_threshold=65536:glibc.malloc.hugetlb=2'"
}

# with_ld_preload VALUE CMD...: CMD with LD_PRELOAD=VALUE, without the
# complaint of ld.so (in CMD itself) about a library that does not exist.
with_ld_preload() {
	local value=$1 err="$BATS_TEST_TMPDIR/ld-preload.err" rc=0
	shift

	LD_PRELOAD=$value "$@" 2> "$err" || rc=$?
	grep -v '^ERROR: ld.so: object .* from LD_PRELOAD cannot be preloaded' "$err" >&2
	return "$rc"
}

@test "an LD_PRELOAD of the user is kept, after the runtime" {
	golden hugectl/ld-preload with_ld_preload /lib/other.so "$HUGECTL" --dry-run --heap ./app
}

@test "HUGETLB_VERBOSE and HUGETLB_DEBUG in the environment set the starting level" {
	run --separate-stderr env HUGETLB_VERBOSE=0 "$HUGECTL" --dry-run -v ./app
	assert_success
	assert_line "HUGETLB_VERBOSE='1'"
	run --separate-stderr env HUGETLB_DEBUG=1 "$HUGECTL" --dry-run ./app
	assert_success
	assert_line --index 0 "HUGETLB_DEBUG='yes'"
	assert_line --index 1 "HUGETLB_VERBOSE='99'"
}

@test "the options after the program are the program's" {
	run --separate-stderr "$HUGECTL" --dry-run --heap ./app --shm --bogus
	assert_success
	refute_line "HUGETLB_SHM='yes'"
}

@test "--dry-run needs no program" {
	golden hugectl/dry-run-alone "$HUGECTL" --dry-run
}

@test "usage errors: exit 1, one line, nothing on stdout" {
	golden hugectl/no-program "$HUGECTL" --heap
	golden hugectl/verbose-100 "$HUGECTL" --dry-run --verbose 100 ./app
	golden hugectl/bad-option "$HUGECTL" --dry-run --bogus ./app
	golden hugectl/verbose-missing "$HUGECTL" --verbose
}

@test "--heap=3M: a size the kernel does not have is an error" {
	golden hugectl/heap-3m "$HUGECTL" --dry-run --heap=3M ./app
}

@test "--membind 99: nodes the machine does not have are an error" {
	if command -v numactl > /dev/null; then
		! numactl --hardware 2> /dev/null | grep -q '^node 99 ' || skip "this machine has a node 99"
	fi
	[ ! -e /sys/devices/system/node/node99 ] || skip "this machine has a node 99"
	run --separate-stderr "$HUGECTL" --dry-run --membind 99 ./app
	assert_failure 1
	assert_output ''
	# shellcheck disable=SC2154 # run --separate-stderr sets stderr
	[[ $stderr == *"hugectl: ERROR: 99: invalid or unknown NUMA nodes for --membind"* ||
		$stderr == *"hugectl: ERROR: --membind: this kernel has no NUMA support"* ]] ||
		fail "unexpected stderr: $stderr"
}

@test "the exit status is the program's" {
	# The real runtime, so that ld.so has nothing to say.
	export HK_RT_LIBRARY=$HK_BUILD_DIR/lib/libhugekit-rt.so.0
	run --separate-stderr "$HUGECTL" true
	assert_success
	assert_equal "$stderr" ''
	run --separate-stderr "$HUGECTL" sh -c 'exit 3'
	assert_failure 3
	assert_equal "$stderr" ''
	# The program sees the variables, and its arguments unchanged.
	# shellcheck disable=SC2016 # expanded by the program's shell
	run --separate-stderr "$HUGECTL" --shm --no-preload sh -c 'echo "$HUGETLB_SHM:$LD_PRELOAD:$1"' sh --heap
	assert_success
	assert_output 'yes::--heap'
}

@test "a program that cannot be executed: exit 1 and the reason" {
	golden hugectl/exec-failure "$HUGECTL" hk-no-such-program
}

@test "the variables and their order are 2.23's, but for the new ones" {
	local legacy=/usr/bin/hugectl opts ours theirs
	local filter='/^(LD_LIBRARY_PATH|GLIBC_TUNABLES|HUGETLB_REPORT)=/d; s/^LD_PRELOAD=.*/LD_PRELOAD/'

	dpkg -S "$legacy" 2> /dev/null | grep -q '^libhugetlbfs-bin:' ||
		skip "libhugetlbfs-bin (2.23) is not installed"
	for opts in "--heap" "--shm --no-reserve --share-text" "--text --data=2M" "--bss" \
		"--disable --text" "--thp" "--heap --thp" "--no-preload --heap" \
		"--force-preload --text" "-q -q -q" "--verbose 99" "--library-path /opt/x" \
		"--heap --shm --thp --no-reserve --share-text --force-preload --verbose 99"; do
		# shellcheck disable=SC2086 # the options are words
		ours=$("$HUGECTL" --dry-run $opts ./app 2> /dev/null | sed -E "$filter")
		# shellcheck disable=SC2086
		theirs=$("$legacy" --dry-run $opts ./app 2> /dev/null | sed -E "$filter")
		assert_equal "$ours" "$theirs"
	done
}

@test "--membind '': an error naming the option, exit 1, the program not run" {
	run --separate-stderr "$HUGECTL" --membind '' touch "$BATS_TEST_TMPDIR/ran"
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "hugectl: ERROR: --membind: an empty node list"
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "--report=all: HUGETLB_REPORT='all'; another value is an error" {
	run --separate-stderr "$HUGECTL" --dry-run --report=all ./app
	assert_success
	assert_line "HUGETLB_REPORT='all'"
	run --separate-stderr "$HUGECTL" --dry-run --report ./app
	assert_line "HUGETLB_REPORT='1'"
	run --separate-stderr "$HUGECTL" --report=some true
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "hugectl: ERROR: some: invalid value for --report (only 'all')"
}

@test "HK_RT_PID: the launched program gets hugectl's pid (its own), --dry-run does not print it" {
	export HK_RT_LIBRARY=$HK_BUILD_DIR/lib/libhugekit-rt.so.0
	# shellcheck disable=SC2016 # expanded by the program's shell
	run --separate-stderr env HK_RT_REEXEC=1 "$HUGECTL" sh -c 'echo "$HK_RT_PID $$ ${HK_RT_REEXEC-unset}"'
	assert_success
	read -r a b c <<< "$output"
	assert_equal "$a" "$b"
	assert_equal "$c" unset
	run --separate-stderr "$HUGECTL" --dry-run --heap ./app
	refute_line --partial HK_RT_PID
}
