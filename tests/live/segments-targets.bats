#!/usr/bin/env bats
# The targets of issue 9 on the running kernel. segbig (tests/live/segbig.c
# and gen-segbig.py, made at test time in the build dir and kept) is a PIE of
# 16 MiB text, 64 MiB initialized data and 256 MiB bss, not relinked, that
# measures its own segments from /proc/self/smaps ("range text bytes N hugetlb
# P thp Q") and checks itself: functions, data, r-x text, r-- RELRO, a forked
# child that writes its data. The pool: 200 pages of 2 MiB at most (segbig
# needs about 170 with its three segments), restored after.

load live

setup_file() {
	live_requirements
	RT="$HK_BUILD_DIR/lib/libhugekit-rt.so.0"
	SEGBIG="$HK_BUILD_DIR/tests/segbig/segbig"
	export RT SEGBIG
	mkdir -p "${SEGBIG%/*}"
	python3 "$HK_SOURCE_DIR/tests/live/gen-segbig.py" "$SEGBIG" ||
		fail "gen-segbig.py could not make $SEGBIG"
	live_lock
	live_save
}

teardown_file() {
	live_restore
}

setup() {
	live_pool_free 200
}

# pct RANGE KIND: segbig's percentage of RANGE (text, data, bss) on KIND
# (hugetlb, thp) in $output, as an integer.
pct() {
	awk -v r="$1" -v k="$2" '$1 == "range" && $2 == r {
		for (i = 3; i < NF; i++) if ($i == k) { printf "%d\n", $(i + 1); exit }
	}' <<< "$output"
}

# at_least RANGE KIND MIN: the percentage is at least MIN, said on the TAP stream.
at_least() {
	local p
	p=$(pct "$1" "$2")
	echo "# $BATS_TEST_DESCRIPTION: $1 $p % on $2" >&3
	[ -n "$p" ] || fail "segbig printed no $1 range"
	[ "$p" -ge "$3" ] || fail "$1: $p % on $2, less than $3 %"
}

# segbig_ok: segbig's own checks passed.
segbig_ok() {
	assert_success
	refute_line --partial 'fail:'
	assert_line 'data ok'
	assert_line 'text r-x ok'
	assert_line 'relro r-- ok'
	assert_line 'fork ok'
	assert_line --regexp '^functions [0-9]+ ok$'
}

thp_usable() {
	grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled &&
		hk_missing "transparent huge pages are off (enabled: never)"
	return 0
}

@test "hugectl --text --data --bss: text >= 75 %, data and bss >= 90 % on hugetlb pages" {
	run --separate-stderr hugectl --text --data --bss "$SEGBIG"
	segbig_ok
	at_least text hugetlb 75
	at_least data hugetlb 90
	at_least bss hugetlb 90
	# segbig's forked child copies the 254 MiB of data and bss that it shares:
	# the 200-page pool has no room left for that copy, which goes on base
	# pages with the run's one warning. Nothing else is said.
	# shellcheck disable=SC2154 # run --separate-stderr sets stderr
	assert_regex "$stderr" '^libhugetlbfs: WARNING: a forked child \(pid [0-9]+\): [0-9]+ kB of its private huge page memory on base pages \(the pool, or a hugetlb cgroup.s limit, has no more for its copy\)$'
}

@test "the baseline: without hugectl nothing is on hugetlb pages" {
	run --separate-stderr "$SEGBIG"
	segbig_ok
	assert_equal "$(pct text hugetlb) $(pct data hugetlb) $(pct bss hugetlb)" "0 0 0"
}

@test "hugectl --text --thp: text >= 75 % on transparent huge pages, no pool page" {
	thp_usable
	live_pool_free 0
	run --separate-stderr hugectl --text --thp "$SEGBIG"
	segbig_ok
	at_least text thp 75
	[ "$(pct text hugetlb)" -eq 0 ]
}

@test "HUGETLB_ELFMAP=RW with the runtime preloaded, without hugectl: the same targets" {
	run --separate-stderr env HUGETLB_ELFMAP=RW LD_PRELOAD="$RT" "$SEGBIG"
	segbig_ok
	at_least text hugetlb 75
	at_least data hugetlb 90
	at_least bss hugetlb 90
}

@test "hugeedit --text marks alone (no HUGETLB_ELFMAP): the text >= 75 % on hugetlb pages" {
	local edit="$HK_BUILD_DIR/tools/hugeedit" copy="$BATS_TEST_TMPDIR/segbig"
	hk_need_built "$edit"
	cp "$SEGBIG" "$copy"
	run "$edit" --text "$copy"
	assert_success
	run --separate-stderr env LD_PRELOAD="$RT" "$copy"
	segbig_ok
	at_least text hugetlb 75
	[ "$(pct data hugetlb)" -eq 0 ]
	# hugectl --disable turns the marks off.
	run --separate-stderr hugectl --disable "$copy"
	segbig_ok
	[ "$(pct text hugetlb)" -eq 0 ]
}

@test "HUGETLB_ELFMAP=no moves nothing, and says so at -v" {
	local free
	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	run --separate-stderr env HUGETLB_ELFMAP=no HUGETLB_VERBOSE=3 LD_PRELOAD="$RT" "$SEGBIG"
	segbig_ok
	# One assertion each: in an && list only the last command can fail the test.
	assert_equal "$(pct text hugetlb) $(pct data hugetlb) $(pct bss hugetlb) $(pct text thp)" "0 0 0 0"
	[[ $stderr == *"HUGETLB_ELFMAP=no, not attempting to remap program segments"* ]] ||
		fail "no INFO line: $stderr"
	[ "$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)" -eq "$free" ]
}

# free_pages: HugePages_Free less HugePages_Rsvd, the pages a new mapping can still take.
free_pages() {
	awk '/^HugePages_Free:/ { f = $2 } /^HugePages_Rsvd:/ { r = $2 } END { print f - r }' /proc/meminfo
}

# two_copies PROG [CMD...]: start two copies of CMD... hugectl --text
# --share-text PROG hold (PROG segbig or a copy), one after the other, each
# ready before the next; set taken1 and taken2, the pages each took
# (HugePages_Free less HugePages_Rsvd, before and after), check both copies'
# output, and end them.
two_copies() {
	local prog=$1 f0 f1 f2 i in1 in2
	shift
	mkfifo "$BATS_TEST_TMPDIR/in1" "$BATS_TEST_TMPDIR/in2"
	f0=$(free_pages)
	"$@" hugectl --text --share-text "$prog" hold < "$BATS_TEST_TMPDIR/in1" > "$BATS_TEST_TMPDIR/out1" 2>&1 &
	exec {in1}> "$BATS_TEST_TMPDIR/in1"
	live_wait_file_line "$BATS_TEST_TMPDIR/out1" ready "the first copy never got ready"
	f1=$(free_pages)
	"$@" hugectl --text --share-text "$prog" hold < "$BATS_TEST_TMPDIR/in2" > "$BATS_TEST_TMPDIR/out2" 2>&1 &
	exec {in2}> "$BATS_TEST_TMPDIR/in2"
	live_wait_file_line "$BATS_TEST_TMPDIR/out2" ready "the second copy never got ready"
	f2=$(free_pages)
	exec {in1}>&- {in2}>&-
	wait
	rm -f "$BATS_TEST_TMPDIR/in1" "$BATS_TEST_TMPDIR/in2"
	taken1=$((f0 - f1)) taken2=$((f1 - f2))
	for i in 1 2; do
		run cat "$BATS_TEST_TMPDIR/out$i"
		segbig_ok
		at_least text hugetlb 75
	done
	echo "# ${prog##*/} $*: the first copy took $taken1 pages, the second $taken2" >&3
}

@test "hugectl --text --share-text, PIE edited by hugeedit --align, ASLR on: a second running copy takes at most 1 more huge page" {
	local dir="$BATS_FILE_TMPDIR/share" copy="$BATS_TEST_TMPDIR/segbig"
	[ "$(cat /proc/sys/kernel/randomize_va_space)" != 0 ] ||
		hk_skip "address randomization is off (kernel.randomize_va_space = 0)"
	live_mount "$dir" pagesize=2M,mode=0755
	export HUGETLB_SHARE_PATH=$dir
	# The shared file holds the text as it lies in 2 MiB pages: two copies
	# share when both are loaded at 2 MiB-aligned bases, which p_align 2 MiB
	# gives (the base stays randomized, in 2 MiB steps). Not relinked.
	cp "$SEGBIG" "$copy"
	run "$HK_BUILD_DIR/tools/hugeedit" --align=2M "$copy"
	assert_success
	two_copies "$copy" env
	[ "$taken1" -ge 7 ] || fail "the first copy took only $taken1 pages: text not on hugetlb?"
	[ "$taken2" -le 1 ] || fail "the second copy took $taken2 pages"
	run ! grep -h 'shared text:' "$BATS_TEST_TMPDIR/out1" "$BATS_TEST_TMPDIR/out2"
	rm -rf "${dir:?}"/elflink-uid-*
}

@test "hugectl --share-text, PIE with p_align 4 kB: one warning, a private copy each, no file made; runs" {
	local dir="$BATS_FILE_TMPDIR/share-4k" i
	hk_need_cmd setarch util-linux
	live_mount "$dir" pagesize=2M,mode=0755
	export HUGETLB_SHARE_PATH=$dir
	# Without randomization the base is the same each run, and not 2 MiB-aligned
	# (0x555555554000): deterministic. A file would hold the text as it lies
	# in this placement only, a one-off; the runtime makes none.
	two_copies "$SEGBIG" setarch -R
	[ "$taken1" -ge 7 ] || fail "the first copy took only $taken1 pages: text not on hugetlb?"
	[ "$taken2" -ge 7 ] || fail "the second copy took only $taken2 pages: shared after all?"
	for i in 1 2; do
		run grep -c 'shared text: segbig is not loaded at a 2048 kB boundary (a PIE with p_align 4 kB): each copy keeps its own; run hugeedit --align on it or link it with ld.hugetlbfs --hugetlbfs-align' "$BATS_TEST_TMPDIR/out$i"
		assert_output 1
	done
	run find "$dir" -type f
	assert_output ''
	rm -rf "${dir:?}"/elflink-uid-*
}

# live_wait_file_line FILE LINE WHAT: wait (at most 60 s) until FILE has LINE.
live_wait_file_line() {
	local left=600
	while [ "$left" -gt 0 ]; do
		grep -qx "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
		left=$((left - 1))
	done
	cat "$1" >&3
	fail "$3"
}

@test "hugectl --text gcc -O2 -c: cc1 has >= 50 % of its text on huge pages, the object is the same" {
	local src="$BATS_TEST_TMPDIR/big.c" gcc_pid cc1 best=0 p
	hk_need_cmd gcc gcc
	python3 "$HK_SOURCE_DIR/tests/live/gen-bigc.py" 100 "$src"
	gcc -O2 -c "$src" -o "$BATS_TEST_TMPDIR/plain.o"
	hugectl --text gcc -O2 -c "$src" -o "$BATS_TEST_TMPDIR/huge.o" &
	gcc_pid=$!
	# Sample cc1's smaps while it compiles.
	while kill -0 "$gcc_pid" 2> /dev/null; do
		cc1=$(pgrep -x cc1 -P "$gcc_pid" | head -n 1)
		if [ -n "$cc1" ]; then
			p=$(python3 "$HK_SOURCE_DIR/tests/live/segstat.py" pid "$cc1" 2> /dev/null |
				awk '$1 == "text" { printf "%d\n", $4 }')
			[ -n "$p" ] && [ "$p" -gt "$best" ] && best=$p
		fi
		sleep 0.2
	done
	wait "$gcc_pid" || fail "hugectl --text gcc failed"
	echo "# cc1: $best % of its text on hugetlb pages" >&3
	[ "$best" -ge 50 ] || fail "cc1 had $best % of its text on huge pages"
	cmp "$BATS_TEST_TMPDIR/plain.o" "$BATS_TEST_TMPDIR/huge.o"
}
