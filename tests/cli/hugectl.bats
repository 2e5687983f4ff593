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
		hk_missing "the default huge page size is not 2 MiB (hugectl reads the host's, not a fixture's)"
	dry heap-2m-shm-all --heap=2M --shm --no-reserve --share-text --report
}

# The segment combinations: case name, then the options. Their golden files
# are checked against 2.23's hugectl below.
SEGMENT_CASES=(
	"text-data --text --data=2M"
	"bss --bss"
	"text --text"
	"text-thp --text --thp"
	"text-data-bss --text --data --bss"
	"text-data-bss-thp --text --data --bss --thp"
	"bss-2m --bss=2M"
	"bss-2m-data --bss=2M --data"
	"data-bss-2m --data --bss=2M"
	"data-2m-bss-2m --data=2M --bss=2M"
	"text-2m-text --text=2M --text"
	"text-share --text --share-text"
	"text-no-preload --text --no-preload"
	"text-heap --text --heap"
	"text-shm-data --text --shm --data"
	"disable-text --disable --text"
	"force-preload-text --force-preload --text"
)

need_2m() {
	grep -q '^Hugepagesize: *2048 kB$' /proc/meminfo ||
		hk_missing "the default huge page size is not 2 MiB (hugectl reads the host's, not a fixture's)"
}

@test "--perf-map: HUGETLB_PERFMAP=1 after 2.23's variables; not with --collapse" {
	need_2m
	dry text-perf-map --text --perf-map
	run --separate-stderr "$HUGECTL" --collapse 1 --perf-map
	assert_failure 1
	[[ $stderr == *--perf-map* ]] || fail "stderr: $stderr"
}

@test "--text, --data, --bss: HUGETLB_ELFMAP, 2.23's warnings, the runtime preloaded" {
	local c
	need_2m
	for c in "${SEGMENT_CASES[@]}"; do
		# shellcheck disable=SC2086 # the options are words
		dry $c
	done
}

@test "the segment goldens are 2.23's, but for the LD_PRELOAD that runs the runtime" {
	local legacy=/usr/bin/hugectl c case opts theirs_err
	local filter='/^(LD_LIBRARY_PATH|GLIBC_TUNABLES)=/d; /^LD_PRELOAD=/d'
	local nopre='hugectl: WARNING: LD_PRELOAD not appropriate for this map combination'

	dpkg -S "$legacy" 2> /dev/null | grep -q '^libhugetlbfs-bin:' ||
		hk_missing "libhugetlbfs-bin (2.23) is not installed"
	need_2m
	for c in "${SEGMENT_CASES[@]}"; do
		case=${c%% *}
		opts=${c#* }
		# shellcheck disable=SC2086 # the options are words
		run --separate-stderr "$legacy" --dry-run $opts ./app
		assert_success
		assert_equal "$(sed -E "$filter" <<< "$output")" \
			"$(sed -E "$filter" "$HK_EXPECTED/hugectl/$case.out")"
		# shellcheck disable=SC2154 # run --separate-stderr sets stderr
		theirs_err=$stderr
		if grep -q '^LD_PRELOAD=' "$HK_EXPECTED/hugectl/$case.out" &&
			[[ $opts != *--force-preload* ]]; then
			# The one difference: 2.23 needed a relinked program and did not
			# preload; hugekit's runtime must be in the program to remap it.
			[[ $theirs_err == *"$nopre"* ]] || fail "$case: 2.23 preloads too?"
			theirs_err=$(grep -vxF "$nopre" <<< "$theirs_err" || true)
		fi
		assert_equal "$(cat "$HK_EXPECTED/hugectl/$case.err" 2> /dev/null)" "$theirs_err"
	done
}

@test "--text, --data, --bss: a size the kernel does not have, or none, is an error" {
	golden hugectl/text-3m "$HUGECTL" --dry-run --text=3M ./app
	golden hugectl/data-foo "$HUGECTL" --dry-run --data=foo ./app
	golden hugectl/bss-3m "$HUGECTL" --dry-run --text --bss=3M ./app
	# --data's size is the one used, and checked.
	golden hugectl/data-3m-bss "$HUGECTL" --dry-run --bss=2M --data=3M ./app
	# Nothing runs.
	run --separate-stderr "$HUGECTL" --text=3M touch "$BATS_TEST_TMPDIR/ran"
	assert_failure 1
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "--text=thp: transparent huge pages for the text alone" {
	need_2m
	dry text-thp-data --text=thp --data=2M
	dry text-thp-share --text=THP --share-text --thp
}

@test "--share-text --thp: the text is private, said once" {
	run --separate-stderr "$HUGECTL" --dry-run --text --share-text --thp ./app
	assert_success
	assert_equal "$stderr" "hugectl: WARNING: --share-text with --thp: text on transparent huge pages is private to each process (--text=SIZE puts it on shared hugetlb pages)"
	run --separate-stderr "$HUGECTL" --dry-run --text=2M --share-text --thp ./app
	assert_equal "$stderr" ""
}

@test "a static program: a warning before it runs, and it runs" {
	local prog=$BATS_TEST_TMPDIR/static
	export HK_RT_LIBRARY=$HK_BUILD_DIR/lib/libhugekit-rt.so.0
	printf 'int main(void) { return 7; }\n' > "$BATS_TEST_TMPDIR/s.c"
	cc -static -o "$prog" "$BATS_TEST_TMPDIR/s.c" 2> /dev/null ||
		hk_missing "cc cannot link a static program here (apt-get install gcc libc6-dev)"
	run --separate-stderr "$HUGECTL" --text "$prog"
	assert_failure 7
	assert_equal "$stderr" "hugectl: WARNING: $prog: a static program (no PT_INTERP): the runtime cannot be loaded into it, its segments stay on base pages"
	# Found in PATH, and said with --dry-run too.
	run --separate-stderr env PATH="$BATS_TEST_TMPDIR:$PATH" "$HUGECTL" --dry-run --data static
	assert_success
	[[ $stderr == *"$BATS_TEST_TMPDIR/static: a static program"* ]] || fail "no warning: $stderr"
	# Nothing to say without segments, or with them disabled.
	run --separate-stderr "$HUGECTL" --heap "$prog"
	assert_equal "$stderr" ""
	run --separate-stderr "$HUGECTL" -q --disable --text "$prog"
	assert_equal "$stderr" ""
	# A dynamic program: nothing either.
	run --separate-stderr "$HUGECTL" --text true
	assert_success
	assert_equal "$stderr" ""
}

@test "a set-user-ID program of another user: a warning, and it runs" {
	local prog=$BATS_TEST_TMPDIR/suid
	export HK_RT_LIBRARY=$HK_BUILD_DIR/lib/libhugekit-rt.so.0
	hk_need_root "to give a file to another user"
	[[ $(findmnt -no OPTIONS -T "$BATS_TEST_TMPDIR") != *nosuid* ]] ||
		hk_skip "$BATS_TEST_TMPDIR is on a nosuid mount"
	cp "$(type -P true)" "$prog"
	chown nobody "$prog"
	chmod 4755 "$prog"
	run --separate-stderr "$HUGECTL" --text --data --bss "$prog"
	assert_success
	assert_equal "$stderr" "hugectl: WARNING: $prog: set-user-ID, set-group-ID or with capabilities: the dynamic loader ignores LD_PRELOAD, its segments stay on base pages"
	# Set-user-ID to the caller itself: ld.so preloads, nothing said.
	chown 0 "$prog"
	chmod 4755 "$prog"
	run --separate-stderr "$HUGECTL" --text "$prog"
	assert_success
	assert_equal "$stderr" ""
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
	# HUGETLB_DEBUG is libhugetlbfs's debug level, 4, whatever HUGETLB_VERBOSE says.
	run --separate-stderr env HUGETLB_VERBOSE=99 HUGETLB_DEBUG=1 "$HUGECTL" --dry-run ./app
	assert_success
	assert_line --index 0 "HUGETLB_VERBOSE='4'"
	refute_line --partial "HUGETLB_DEBUG="
	# --verbose 99 after it is 99, with HUGETLB_DEBUG='yes' first.
	run --separate-stderr env HUGETLB_DEBUG= "$HUGECTL" --dry-run --verbose 99 ./app
	assert_line --index 0 "HUGETLB_DEBUG='yes'"
	assert_line --index 1 "HUGETLB_VERBOSE='99'"
}

@test "HUGETLB_VERBOSE and HUGETLB_DEBUG read as 2.23 reads them, the same in hugectl, hugeadm and the runtime" {
	local legacy=/usr/bin/hugectl v d ours theirs adm
	dpkg -S "$legacy" 2> /dev/null | grep -q '^libhugetlbfs-bin:' ||
		hk_missing "libhugetlbfs-bin (2.23) is not installed"
	# Values 2.23 reads as a level 0-99 (its "-1" and "150" are not levels: held to 0 and 99 here).
	for v in "" abc 5x 0 3 " 4" 7 42 99 unset; do
		for d in unset "" 1; do
			local -a envs=(env -u HUGETLB_VERBOSE -u HUGETLB_DEBUG)
			[ "$v" = unset ] || envs+=("HUGETLB_VERBOSE=$v")
			[ "$d" = unset ] || envs+=("HUGETLB_DEBUG=$d")
			theirs=$("${envs[@]}" "$legacy" --dry-run ./app 2> /dev/null | grep -E "^HUGETLB_(VERBOSE|DEBUG)=")
			ours=$("${envs[@]}" "$HUGECTL" --dry-run ./app 2> /dev/null | grep -E "^HUGETLB_(VERBOSE|DEBUG)=")
			assert_equal "$ours" "$theirs"
			# hugeadm's dry run begins with the same level.
			adm=$("${envs[@]}" "$HUGEADM" --sysroot "$(fixture x86-1node)" --dry-run --thp-never 2> /dev/null |
				grep -E "^HUGETLB_(VERBOSE|DEBUG)=")
			assert_equal "$adm" "$theirs"
		done
	done
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
		! numactl --hardware 2> /dev/null | grep -q '^node 99 ' || hk_skip "this machine has a node 99"
	fi
	[ ! -e /sys/devices/system/node/node99 ] || hk_skip "this machine has a node 99"
	run --separate-stderr "$HUGECTL" --dry-run --membind 99 ./app
	assert_failure 1
	assert_output ''
	# shellcheck disable=SC2154 # run --separate-stderr sets stderr
	# One line, hugectl's own (libnuma's warning replaced), naming the nodes there are.
	[[ $stderr =~ ^"hugectl: ERROR: 99: invalid or unknown NUMA nodes for --membind (this machine has "[0-9,]+")"$ ||
		$stderr == "hugectl: ERROR: --membind: this kernel has no NUMA support" ]] ||
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
		hk_missing "libhugetlbfs-bin (2.23) is not installed"
	# The segment options: the test above.
	for opts in "--heap" "--shm --no-reserve --share-text" \
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

@test "--text with a FIFO named as the program: no hang on its check, exec's error, exit 1" {
	mkfifo "$BATS_TEST_TMPDIR/ff"
	run --separate-stderr timeout 20 hugectl --text "$BATS_TEST_TMPDIR/ff"
	assert_failure 1
	[[ "$stderr" == *"exec failed: Permission denied"* ]]
}
