#!/usr/bin/env bats
# shellcheck disable=SC2154 # run --separate-stderr sets stderr
# Programs linked for huge pages get every segment on huge pages, 64-byte
# objects included, as libhugetlbfs 2.23 gave them: where the segment's range
# rounded out to huge pages overlaps no other mapping (and stays below the
# program break), the whole segment moves, head and tail included; else its
# aligned interior, and the log says which. seg-small (tests/live/seg-small.c)
# is linked here with 2.23's own linker scripts (elf_x86_64.xB, .xBDT: its
# data segment is writable and executable, and moves writable only), with
# hugekit's ld.hugetlbfs (every --hugetlbfs-link mode, --hugetlbfs-align),
# as a PIE with -z max-page-size=0x200000, and edited by hugeedit.

load live

SCRIPTS=/usr/share/libhugetlbfs/ldscripts

setup_file() {
	live_requirements
	live_lock
	live_save
	local d="$BATS_FILE_TMPDIR" src="$HK_SOURCE_DIR/tests/live/seg-small.c"
	command -v gcc > /dev/null || return 0
	mkdir "$d/ldb"
	ln -s "$HK_BUILD_DIR/tools/ld.hugetlbfs" "$d/ldb/ld"
	gcc -O2 -o "$d/plain-nopie" -no-pie "$src"
	gcc -O2 -o "$d/align" -B "$d/ldb" -Wl,--hugetlbfs-align "$src"
	gcc -O2 -o "$d/align-nopie" -no-pie -B "$d/ldb" -Wl,--hugetlbfs-align "$src"
	HUGETLB_DEPRECATED_LINK=1 gcc -O2 -o "$d/link-B" -no-pie -B "$d/ldb" -Wl,--hugetlbfs-link=B "$src"
	HUGETLB_DEPRECATED_LINK=1 gcc -O2 -o "$d/link-BDT" -no-pie -B "$d/ldb" -Wl,--hugetlbfs-link=BDT "$src"
	gcc -O2 -o "$d/pie2m" -Wl,-z,max-page-size=0x200000 "$src"
	gcc -O2 -o "$d/align-1G" -pie -B "$d/ldb" -Wl,--hugetlbfs-align=1G "$src"
	cp "$d/align-nopie" "$d/edited"
	hugeedit --text --data "$d/edited" > /dev/null
	if [ -f "$SCRIPTS/elf_x86_64.xBDT" ]; then
		# ld warns of the RWX segment the scripts ask for.
		gcc -O2 -o "$d/xB" -no-pie -Wl,-T,"$SCRIPTS/elf_x86_64.xB" "$src" 2> /dev/null
		gcc -O2 -o "$d/xBDT" -no-pie -Wl,-T,"$SCRIPTS/elf_x86_64.xBDT" "$src" 2> /dev/null
	fi
}

teardown_file() {
	live_restore
}

setup() {
	hk_need_cmd gcc gcc
}

need_scripts() {
	[ -f "$SCRIPTS/elf_x86_64.xBDT" ] ||
		hk_missing "no libhugetlbfs 2.23 linker scripts in $SCRIPTS (apt-get install libhugetlbfs-dev)"
}

said() {
	printf '# stderr: %s\n' "$stderr"
}

# again COMMAND...: run COMMAND (seg-small under the runtime), again while
# its program break happens to start within the last segment's huge page
# (ASLR: about 1 run in 16), so that what is checked is the whole-segment
# case; "brk near" still after 8 runs is a failure.
again() {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		# AGAIN_RESET: a function that undoes what a run left (a shared file).
		if [ "$i" -gt 1 ] && [ -n "${AGAIN_RESET:-}" ]; then "$AGAIN_RESET"; fi
		run --separate-stderr "$@"
		said
		[[ "$output" == *"brk near"* ]] || break
	done
	assert_success
	assert_line "brk far"
	assert_line ok
}

# small PROGRAM [hugectl options]: PROGRAM under hugectl at -v (the default:
# --text --data --bss), by again.
small() {
	local prog=$BATS_FILE_TMPDIR/$1
	shift
	[ $# -gt 0 ] || set -- --text --data --bss
	again hugectl -v "$@" "$prog"
}

# preloaded PROGRAM: PROGRAM with the runtime preloaded, HUGETLB_ELFMAP unset
# (hugeedit's marks alone), by again.
preloaded() {
	again env LD_PRELOAD="$HK_BUILD_DIR/lib/libhugekit-rt.so.0" "$BATS_FILE_TMPDIR/$1"
}

# parts KIND...: the lines for text, rodata, data and bss, in that order.
parts() {
	assert_line "text $1"
	assert_line "rodata $2"
	assert_line "data $3"
	assert_line "bss $4"
}

@test "the baseline: linked for huge pages, without hugectl, every 64-byte object is on base pages" {
	need_scripts
	for p in xBDT align pie2m; do
		run "$BATS_FILE_TMPDIR/$p"
		assert_success
		parts base base base base
	done
}

@test "2.23's xBDT script: text, rodata, data and bss (64 bytes each) on hugetlb pages; the RWX segment moves writable only" {
	need_scripts
	live_pool_free 16
	small xBDT
	parts hugetlb hugetlb hugetlb hugetlb
	assert_regex "$stderr" 'segment [0-9]+ \(text\): 0x[0-9a-f]+-0x[0-9a-f]+ \(2048 kB\) on 2048 kB hugetlb pages: the whole segment'
	assert_regex "$stderr" "segment [0-9]+ \(data\): .* on 2048 kB hugetlb pages: the whole segment; not executable \(libhugetlbfs's linker script made it writable and executable\)"
	# Not writable and executable any more; as ld.so mapped it without hugectl.
	assert_line "data-perms rw-p"
	run "$BATS_FILE_TMPDIR/xBDT"
	assert_line "data-perms rwxp"
}

@test "2.23's xB script: the bss segment (marked RWX) whole on hugetlb pages, the text (no free huge page around it) stays" {
	need_scripts
	live_pool_free 16
	small xB
	assert_line "bss hugetlb"
	assert_line "text base"
	assert_regex "$stderr" 'segment [0-9]+ \(text\): 0x[0-9a-f]+-0x[0-9a-f]+ stays on base pages: no aligned interior'
}

@test "hugeedit's marks alone on 2.23-linked programs (HUGETLB_ELFMAP unset): the runtime preloaded moves what is marked" {
	need_scripts
	live_pool_free 16
	preloaded xBDT
	parts hugetlb hugetlb hugetlb hugetlb
}

@test "ld.hugetlbfs --hugetlbfs-align, PIE and not, --hugetlbfs-link=B and =BDT, -z max-page-size=2M: every segment whole but RELRO" {
	live_pool_free 24
	for p in align align-nopie link-B link-BDT pie2m; do
		small "$p"
		parts hugetlb hugetlb hugetlb hugetlb
		# rodata, text and rodata whole; the data after its RELRO, which stays read-only on base pages.
		[ "$(grep -c 'hugetlb pages: the whole segment' <<< "$stderr")" = 3 ] || fail "$p: $stderr"
		assert_regex "$stderr" 'segment [0-9]+ \(data\): .* hugetlb pages: its aligned interior; on base pages: [0-9]+ bytes before it \(RELRO\), 0 after'
	done
}

@test "ld.hugetlbfs --hugetlbfs-align=1G (a PIE, one text segment): runs, and its segments go whole on 2 MiB pages" {
	live_pool_free 16
	small align-1G --text=2M --data=2M
	parts hugetlb hugetlb hugetlb hugetlb
	[ "$(grep -c 'hugetlb pages: the whole segment' <<< "$stderr")" = 1 ] || fail "$stderr"
}

@test "hugeedit --text --data on an aligned program: text, data and bss whole without HUGETLB_ELFMAP; rodata (not marked) stays" {
	live_pool_free 16
	preloaded edited
	parts hugetlb base hugetlb hugetlb
}

@test "a program not linked for huge pages: the aligned-interior rule, each segment said to stay" {
	live_pool_free 16
	small plain-nopie
	parts base base base base
	assert_regex "$stderr" 'segment [0-9]+ \(text\): 0x[0-9a-f]+-0x[0-9a-f]+ stays on base pages: no aligned interior'
}

@test "the program break in the last segment's huge page (no ASLR): data and bss stay, said so; the text still moves" {
	need_scripts
	hk_need_cmd setarch util-linux
	live_pool_free 16
	run --separate-stderr setarch -R hugectl -v --text --data --bss "$BATS_FILE_TMPDIR/xBDT"
	said
	assert_success
	assert_line "brk near"
	parts hugetlb hugetlb base base
	assert_regex "$stderr" 'segment [0-9]+ \(data\): 0x[0-9a-f]+-0x[0-9a-f]+ stays on base pages: no aligned interior below the program break'
}

@test "each HUGETLB_ELFMAP selection on xBDT: R, W, RW, no; HUGETLB_MINIMAL_COPY=no copies the same" {
	need_scripts
	live_pool_free 16
	small xBDT --text
	parts hugetlb hugetlb base base
	small xBDT --data
	parts base base hugetlb hugetlb
	small xBDT --bss
	parts base base hugetlb hugetlb
	HUGETLB_MINIMAL_COPY=no small xBDT
	parts hugetlb hugetlb hugetlb hugetlb
	# hugectl --disable preloads nothing; the runtime preloaded is told HUGETLB_ELFMAP=no.
	run --separate-stderr env HUGETLB_ELFMAP=no HUGETLB_VERBOSE=3 \
		LD_PRELOAD="$HK_BUILD_DIR/lib/libhugekit-rt.so.0" "$BATS_FILE_TMPDIR/xBDT"
	said
	assert_success
	parts base base base base
	assert_regex "$stderr" 'HUGETLB_ELFMAP=no, not attempting to remap program segments'
}

@test "HUGETLB_SHARE=0 and 1 on xBDT: shared text made, then reused by a second run; data stays private" {
	need_scripts
	live_pool_free 16
	local mnt="$BATS_FILE_TMPDIR/share"
	live_mount "$mnt" pagesize=2M,mode=1777
	HUGETLB_SHARE=0 small xBDT
	parts hugetlb hugetlb hugetlb hugetlb
	[[ "$stderr" != *shared* ]] || fail "$stderr"
	# A rerun (the program break near) must make the file again, as the first did.
	clear_share() { rm -rf "${mnt:?}"/*; }
	AGAIN_RESET=clear_share HUGETLB_SHARE_PATH=$mnt small xBDT --text --data --bss --share-text
	parts hugetlb hugetlb hugetlb hugetlb
	assert_regex "$stderr" 'segment [0-9]+ \(text\): .* on 2048 kB hugetlb pages, shared \(file made\): the whole segment'
	HUGETLB_SHARE_PATH=$mnt small xBDT --text --data --bss --share-text
	parts hugetlb hugetlb hugetlb hugetlb
	assert_regex "$stderr" 'segment [0-9]+ \(text\): .* on 2048 kB hugetlb pages, shared \(file reused\): the whole segment'
	[ "$(grep -c 'segment [0-9]* (text)' <<< "$stderr")" = 1 ] || fail "one line per segment: $stderr"
	rm -rf "${mnt:?}"/*
	umount "$mnt"
}

@test "no brk heap yet (every malloc on mmap): the break itself is the limit, with ASLR and without" {
	need_scripts
	hk_need_cmd setarch util-linux
	live_pool_free 16
	GLIBC_TUNABLES=glibc.malloc.mmap_threshold=0 small xBDT
	parts hugetlb hugetlb hugetlb hugetlb
	run --separate-stderr env GLIBC_TUNABLES=glibc.malloc.mmap_threshold=0 \
		setarch -R hugectl -v --text --data --bss "$BATS_FILE_TMPDIR/xBDT"
	said
	assert_success
	assert_line "brk near"
	parts hugetlb hugetlb base base
	assert_regex "$stderr" 'stays on base pages: no aligned interior below the program break'
}
