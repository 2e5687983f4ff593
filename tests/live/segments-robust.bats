#!/usr/bin/env bats
# shellcheck disable=SC2154 # run --separate-stderr sets stderr
# The runtime puts a program's segments on huge pages (HUGETLB_ELFMAP, with
# the runtime preloaded) and never makes it fail: PIE and not, RELRO,
# dladdr/backtrace/dl_iterate_phdr, fork (also threaded), exec, dlopen, an
# empty pool, THP, threads from a library's constructor, static and setuid
# programs, HUGETLB_ELFMAP=no, a missing 1 GiB size, odd program headers.
# The programs (tests/live/seg-*.c) check themselves and print how their
# segments are backed, from their own /proc/self/smaps.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
	SEG="$HK_BUILD_DIR/tests/seg-test"
	RT="$HK_BUILD_DIR/lib/libhugekit-rt.so.0"
	export SEG RT
	# The test program checks itself; where it fails without hugekit, what
	# hugekit does to it proves nothing (CI of stop 13: the release build
	# inlined check() into main, and the backtrace check failed).
	local out rc=0
	out=$(timeout 60 "$SEG" check 2>&1) || rc=$?
	SEG_BASE=
	[ "$rc" -eq 0 ] || SEG_BASE="exit status $rc: ${out//$'\n'/ }"
	export SEG_BASE
}

setup() {
	# A failure, not a skip: the build broke the test program, and skipping
	# would hide every test below.
	if [ -n "$SEG_BASE" ]; then
		echo "# seg-test fails its own checks without the runtime: $SEG_BASE" >&3
		return 1
	fi
}

teardown_file() {
	live_restore
}

# What seg-test check prints when all of it is on hugetlb pages.
ALL_HUGE="text hugetlb r-xp
relro r--p
data hugetlb
bss hugetlb
ok"

# seg ELFMAP PROGRAM [ARGS]: PROGRAM with the runtime preloaded and HUGETLB_ELFMAP=ELFMAP.
seg() {
	local map=$1
	shift
	run --separate-stderr env HUGETLB_ELFMAP="$map" LD_PRELOAD="$RT" "$@"
	said
}

# said: the last run's stderr, shown with the test's output when it fails.
said() {
	printf '# stderr: %s\n' "$stderr"
}

# The lines of stderr that are warnings.
warnings() {
	printf '%s\n' "$stderr" | grep -c 'libhugetlbfs: WARNING:' || true
}

thp_mode() {
	sed 's/.*\[\(.*\)\].*/\1/' "$THP/enabled"
}

# A copy of seg-test whose PT_LOAD of flags FROM gets flags TO (hugeedit's flag, or odd ones).
# seg_copy_dir: a fresh directory for a patched copy of the program, in bin/,
# beside a lib/ that is the build's: the build's RUNPATH is $ORIGIN/../lib.
seg_copy_dir() {
	local d
	d=$(mktemp -d)
	mkdir "$d/bin"
	ln -s "$HK_BUILD_DIR/lib" "$d/lib"
	printf '%s\n' "$d"
}

patched() {
	local out=$1 from=$2 to=$3
	python3 - "$SEG" "$out" "$from" "$to" << 'PY'
import struct, sys
src, out, frm, to = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4], 0)
b = bytearray(open(src, "rb").read())
phoff, = struct.unpack_from("<Q", b, 0x20)
phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
for i in range(phnum):
    o = phoff + i * phentsize
    typ, flags = struct.unpack_from("<II", b, o)
    if typ == 1 and flags == frm:
        struct.pack_into("<I", b, o + 4, to)
open(out, "wb").write(b)
PY
	chmod 755 "$out"
}

@test "a PIE: text r-x on hugetlb pages, RELRO r--, data and bss intact on hugetlb, dladdr, backtrace and dl_iterate_phdr right" {
	live_pool_free 16
	seg RW "$SEG" check
	assert_success
	assert_output "$ALL_HUGE"
	assert_equal "$stderr" ""
}

@test "a non-PIE executable: the same" {
	live_pool_free 16
	seg RW "$HK_BUILD_DIR/tests/seg-test-nopie" check
	assert_success
	assert_output "$ALL_HUGE"
}

@test "HUGETLB_VERBOSE=3 says what moved, how much stays at the edges, and why a segment stays" {
	live_pool_free 16
	HUGETLB_VERBOSE=3 seg RW "$SEG" check
	assert_success
	# shellcheck disable=SC2016
	assert_regex "$stderr" 'libhugetlbfs: INFO: segment 3 \(text\): 0x[0-9a-f]+-0x[0-9a-f]+ \([0-9]+ kB\) on 2048 kB hugetlb pages: its aligned interior; on base pages: [0-9]+ bytes before it( \([^)]*\))?, [0-9]+ after'
	assert_regex "$stderr" 'libhugetlbfs: INFO: segment 5 \(data\): 0x[0-9a-f]+-0x[0-9a-f]+ \([0-9]+ kB\) on 2048 kB hugetlb pages'
	assert_regex "$stderr" 'libhugetlbfs: INFO: segment 2 \(rodata\): 0x[0-9a-f]+-0x[0-9a-f]+ stays on base pages: no aligned interior'
}

@test "HUGETLB_REPORT: the report's line as before, then text, rodata, data and bss on huge and base pages" {
	live_pool_free 16
	HUGETLB_REPORT=1 seg RW "$SEG" check
	assert_success
	assert_regex "$stderr" '^hugekit report: [0-9]+ kB of anonymous and heap memory on huge pages, [0-9]+ kB on base pages \([0-9.]+ % huge, page size [0-9]+ kB\); shared memory: 0 kB huge, 0 kB base; shmget: 0 segments huge, 0 fell back
hugekit report: program text: [0-9]+ kB on huge pages, [0-9]+ kB on base pages
hugekit report: program rodata: 0 kB on huge pages, [0-9]+ kB on base pages
hugekit report: program data: [0-9]+ kB on huge pages, [0-9]+ kB on base pages
hugekit report: program bss: [0-9]+ kB on huge pages, [0-9]+ kB on base pages$'
	# 6 MiB of text: at least 4 MiB of it lies on whole 2 MiB pages, wherever it is loaded.
	local text
	text=$(printf '%s\n' "$stderr" | sed -n 's/.*program text: \([0-9]*\) kB on huge.*/\1/p')
	[ "$text" -ge 4096 ]
	# The segments are no part of the heap's line.
	assert_regex "$stderr" 'hugekit report: 0 kB of anonymous'
}

@test "a forked child writes its data and bss and exits 0; its text stays huge, its bss its own copy on hugetlb pages (room in the pool)" {
	live_pool_free 40
	seg RW "$SEG" fork
	assert_success
	assert_line "child bss hugetlb (was hugetlb)"
	assert_line ok
}

@test "the same from a parent with two threads writing to its bss" {
	live_pool_free 40
	seg RW "$SEG" fork-threads
	assert_success
	assert_line "child bss hugetlb (was hugetlb)"
	assert_line ok
}

@test "HK_RT_FORK=base: the child's copy on base pages (transparent huge pages where allowed), as before" {
	live_pool_free 40
	HK_RT_FORK=base seg RW "$SEG" fork
	assert_success
	assert_line --regexp '^child bss (base|thp) \(was hugetlb\)$'
	assert_line ok
	# Asked for: no warning that the copy went on base pages.
	[[ "$stderr" != *"a forked child"* ]] || fail "$stderr"
}

@test "a program it executes inherits the setting: the child's segments are moved too" {
	live_pool_free 24
	seg RW "$SEG" exec
	assert_success
	assert_output "$ALL_HUGE"
}

@test "dlopen after the move works" {
	live_pool_free 16
	seg RW "$SEG" dlopen
	assert_success
	assert_line "text hugetlb r-xp"
	assert_line ok
}

@test "an empty pool: transparent huge pages (madvise) or base pages (never), one warning, exit 0" {
	local saved
	saved=$(thp_mode)
	live_pool_free 0
	echo madvise > "$THP/enabled"
	seg RW "$SEG" check
	assert_success
	assert_line "text thp r-xp"
	assert_line "bss thp"
	assert_line ok
	assert_equal "$(warnings)" 1
	assert_regex "$stderr" 'WARNING: program segments: no 2048 kB huge pages \(Cannot allocate memory\): on transparent huge pages instead'
	echo never > "$THP/enabled"
	seg RW "$SEG" check
	echo "$saved" > "$THP/enabled"
	assert_success
	assert_line "text base r-xp"
	assert_line "data base"
	assert_line ok
	assert_equal "$(warnings)" 1
	assert_regex "$stderr" 'WARNING: program segments: no 2048 kB huge pages \(Cannot allocate memory\): they stay on base pages'
}

@test "THP backing (=thp, and HUGETLB_MORECORE=thp): AnonHugePages, no pool needed, moved once across the heap's second start" {
	[ "$(thp_mode)" != never ] || hk_missing "transparent huge pages are disabled (never) on this machine"
	live_pool_free 0
	seg R=thp:W=thp "$SEG" check
	assert_success
	assert_line "text thp r-xp"
	assert_line "data thp"
	assert_line ok
	assert_equal "$stderr" ""
	# The heap's tunables start the program again: the segments move in the second start only.
	HUGETLB_MORECORE=thp HUGETLB_VERBOSE=3 seg RW "$SEG" check
	assert_success
	assert_line "text thp r-xp"
	assert_regex "$stderr" 'starting again with GLIBC_TUNABLES'
	assert_equal "$(printf '%s\n' "$stderr" | grep -c 'segment 3 (text).*on transparent huge pages')" 1
}

@test "a thread started by a library's constructor: nothing moves, one warning, exit 0" {
	live_pool_free 16
	seg RW "$HK_BUILD_DIR/tests/seg-thread"
	assert_success
	assert_output ok
	assert_equal "$stderr" "libhugetlbfs: WARNING: threads are running (started by a library's constructor): program segments stay on base pages"
}

@test "a static program (no runtime loaded) runs as without it" {
	live_pool_free 16
	seg RW "$HK_BUILD_DIR/tests/seg-static"
	assert_success
	assert_output ok
	assert_equal "$stderr" ""
}

@test "a setuid program (ld.so ignores the preload) runs as without it" {
	hk_need_cmd setpriv util-linux
	live_pool_free 16
	local dir
	# Where nobody reaches it, its library found without $ORIGIN (ignored setuid).
	dir=$(hk_stage_for_user --secure tests/seg-test)
	chmod 4755 "$dir/tests/seg-test"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
		env HUGETLB_ELFMAP=RW LD_PRELOAD="$RT" "$dir/tests/seg-test" check
	said
	assert_success
	assert_line "text base r-xp"
	assert_line ok
}

@test "HUGETLB_ELFMAP=no moves nothing, and says so at the information level" {
	live_pool_free 16
	HUGETLB_VERBOSE=3 seg no "$SEG" check
	assert_success
	assert_line "text base r-xp"
	assert_line "bss base"
	assert_equal "$stderr" "libhugetlbfs: INFO: HUGETLB_ELFMAP=no, not attempting to remap program segments"
}

@test "1 GiB pages: skipped with the reason where the machine has none, else no aligned 1 GiB interior" {
	live_pool_free 16
	HUGETLB_VERBOSE=3 seg R=1G:W "$SEG" check
	assert_success
	assert_line "text base r-xp"
	assert_line "data hugetlb"
	if [ -d "$HP/hugepages-1048576kB" ]; then
		assert_regex "$stderr" 'segment 3 \(text\): .* stays on base pages: no aligned interior'
	else
		assert_regex "$stderr" 'WARNING: Hugepage size 1G unavailable on this machine: HUGETLB_ELFMAP part ignored'
	fi
}

@test "hugeedit's flag alone (HUGETLB_ELFMAP unset) moves the flagged text, nothing else" {
	live_pool_free 16
	local dir
	dir=$(seg_copy_dir)
	# PF_R|PF_X -> PF_R|PF_X|PF_LINUX_HUGETLB
	patched "$dir/bin/seg-flagged" 5 0x100005
	run --separate-stderr env LD_PRELOAD="$RT" "$dir/bin/seg-flagged" check
	said
	rm -rf "$dir"
	assert_success
	assert_line "text hugetlb r-xp"
	assert_line "data base"
	assert_line ok
}

@test "odd headers: a writable and executable segment is never moved, the program runs" {
	live_pool_free 16
	local dir
	dir=$(seg_copy_dir)
	# PF_R|PF_X -> PF_R|PF_W|PF_X
	patched "$dir/bin/seg-rwx" 5 7
	HUGETLB_VERBOSE=3 run --separate-stderr env HUGETLB_ELFMAP=RW LD_PRELOAD="$RT" "$dir/bin/seg-rwx" check
	said
	rm -rf "$dir"
	assert_success
	assert_line "text base rwxp"
	assert_line "data hugetlb"
	assert_regex "$stderr" 'segment 3 \(data\): .* stays on base pages: writable and executable'
}

@test "bad HUGETLB_ELFMAP parts are named and ignored, the rest applies" {
	live_pool_free 16
	seg 'X:W=banana:R' "$SEG" check
	assert_success
	assert_line "text hugetlb r-xp"
	assert_line "data base"
	assert_regex "$stderr" 'WARNING: HUGETLB_ELFMAP=X:W=banana:R: X is not R, W, RW or no: part ignored'
	assert_regex "$stderr" 'WARNING: HUGETLB_ELFMAP=X:W=banana:R: bad page size banana: part ignored'
}

@test "HUGETLB_SHARE=1: text shared through a file, or a private copy with the reason; =2 is refused with a warning" {
	live_pool_free 16
	HUGETLB_SHARE=1 HUGETLB_VERBOSE=3 seg R "$SEG" check
	assert_success
	assert_line "text hugetlb r-xp"
	assert_line ok
	assert_regex "$stderr" 'segment 3 \(text\): (not shared \([^)]*\): a private copy|.*hugetlb pages, shared \(file (made|reused)\))'
	# One or the other, never both for the segment.
	[ "$(grep -c -e 'segment 3 (text): not shared' -e 'segment 3 (text): .*, shared (file' <<< "$stderr")" = 1 ] ||
		fail "$stderr"
	HUGETLB_SHARE=2 seg R "$SEG" check
	assert_success
	assert_line "text hugetlb r-xp"
	assert_equal "$stderr" "libhugetlbfs: WARNING: HUGETLB_SHARE=2: writable segments are never shared; nothing is shared"
}

@test "an mremap that fails after it unmapped the destination: the segment is put back on base pages, the program runs" {
	live_pool_free 16
	HUGETLB_VERBOSE=3 run --separate-stderr env HUGETLB_ELFMAP=RW \
		LD_PRELOAD="$HK_BUILD_DIR/tests/libmremap-fail.so:$RT" "$SEG" check
	said
	assert_success
	assert_line "text base r-xp"
	assert_line "relro r--p"
	assert_line "data base"
	assert_line ok
	assert_equal "$(warnings)" 1
}
