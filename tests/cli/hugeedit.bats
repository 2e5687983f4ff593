#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# hugeedit: the table and the bits are libhugetlbfs 2.23's (golden files made
# from 2.23's output on the samples of tests/fixtures/mkelf.py, checked here
# against /usr/bin/hugeedit when Debian's libhugetlbfs-bin is installed, and
# programs built by gcc during the test edited by both and compared byte for
# byte); a file that cannot be edited, for whatever reason, is left exactly as
# it was (checksums before and after).

load helpers

HUGEEDIT=hugeedit
LEGACY_HUGEEDIT=/usr/bin/hugeedit
MKELF=$HK_SOURCE_DIR/tests/fixtures/mkelf.py

setup() {
	# A directory of its own: bats's run puts its files in BATS_TEST_TMPDIR.
	mkdir "$BATS_TEST_TMPDIR/work"
	cd "$BATS_TEST_TMPDIR/work"
}

teardown() {
	if [ -n "${SHARED_DIR-}" ]; then rm -rf "$SHARED_DIR"; fi
}

# edit_opts NAME: the options of an edit golden: text, data, text-data, disable.
edit_opts() {
	case $1 in
	text-data) echo --text --data ;;
	*) echo "--$1" ;;
	esac
}

# sample NAME: the sample ELF file NAME in the current directory.
sample() {
	python3 "$MKELF" "$1" "$1"
}

have_legacy() {
	dpkg -S "$LEGACY_HUGEEDIT" 2> /dev/null | grep -q '^libhugetlbfs-bin:'
}

# program NAME GCC-ARGS...: a small C program built with gcc.
program() {
	local name=$1
	shift
	printf '%s\n' '#include <stdio.h>' 'int counter = 42; static char big[1 << 16];' \
		'int main(void) { big[7] = 1; printf("%d\n", counter + big[7]); return 0; }' > "$name.c"
	gcc "$@" -o "$name" "$name.c"
}

# unchanged FILE CMD...: CMD fails with status 1, prints nothing on stdout,
# and leaves FILE (and its directory) exactly as they were; its stderr is in
# $stderr for the caller to check.
unchanged() {
	local file=$1 sum dir ls_before
	shift
	sum=$(sha256sum < "$file")
	dir=$(dirname "$file")
	ls_before=$(ls -A "$dir")
	run --separate-stderr "$@"
	assert_failure 1
	assert_output ''
	assert_equal "$(sha256sum < "$file")" "$sum"
	assert_equal "$(ls -A "$dir")" "$ls_before"
}

@test "the table of each sample is the golden one" {
	local s
	for s in $(python3 "$MKELF" --list); do
		sample "$s"
		golden "hugeedit/$s" "$HUGEEDIT" "$s"
	done
}

@test "--text, --data, --text --data and --disable: golden tables" {
	local s o
	for s in x86_64-exec x86_64-pie-nosep x86_64-odd i386-exec ppc32-be ppc64-be; do
		for o in text data text-data disable; do
			sample "$s"
			# shellcheck disable=SC2046 # the options
			golden "hugeedit/$s-$o" "$HUGEEDIT" $(edit_opts "$o") "$s"
		done
	done
}

@test "the golden files are 2.23's output on the same samples" {
	have_legacy || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	local s o
	# 2.23 cannot read the other byte order (it crashes on ppc32-be) and shows
	# a file without PT_LOAD as an empty table: those goldens are ours alone.
	for s in x86_64-exec x86_64-pie-nosep x86_64-odd i386-exec; do
		sample "$s"
		golden "hugeedit/$s" "$LEGACY_HUGEEDIT" "$s"
		for o in text data text-data disable; do
			sample "$s"
			# shellcheck disable=SC2046 # the options
			golden "hugeedit/$s-$o" "$LEGACY_HUGEEDIT" $(edit_opts "$o") "$s"
		done
	done
}

# same_as_legacy FILE: every edit of FILE by hugeedit and by 2.23 gives the
# same table and the same bytes.
same_as_legacy() {
	local f=$1 o
	for o in "" --text --data "--text --data" --disable; do
		cp "$f" ours
		cp "$f" theirs
		# shellcheck disable=SC2086 # the options
		run "$HUGEEDIT" $o ours
		assert_success
		local mine=$output
		# shellcheck disable=SC2086
		run "$LEGACY_HUGEEDIT" $o theirs
		assert_success
		assert_equal "$mine" "$output"
		cmp ours theirs || fail "hugeedit $o $f: the file differs from 2.23's edit"
	done
}

@test "gcc's programs (PIE, non-PIE, separate code or not): same table and bytes as 2.23" {
	have_legacy || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	program pie -pie -fPIE
	program nopie -no-pie
	program pie-nosep -pie -fPIE -Wl,-z,noseparate-code
	program nopie-sep -no-pie -Wl,-z,separate-code
	program lib -shared -fPIC
	for f in pie nopie pie-nosep nopie-sep lib; do
		same_as_legacy "$f"
	done
}

@test "--text changes the one flag byte, the program still runs, --disable restores it" {
	local seg phoff
	program pie -pie -fPIE
	cp pie orig
	run "$HUGEEDIT" --text pie
	assert_success
	assert_line --regexp '^Segment [0-9]+ 0x[0-9a-f]+ - 0x[0-9a-f]+ \(TEXT\) default is HUGE pages$'
	seg=$(sed -n 's/^Segment \([0-9]*\) .*(TEXT).*/\1/p' <<< "$output")
	phoff=$(readelf -hW pie | sed -n 's/.*Start of program headers: *\([0-9]*\).*/\1/p')
	# cmp -l: 1-based offsets; 0x100000 is byte 2 of the little-endian p_flags at +4.
	run bash -c 'cmp -l orig pie | awk "{ print \$1, \$2, \$3 }"'
	assert_output "$((phoff + seg * 56 + 4 + 2 + 1)) 0 20"
	run ./pie
	assert_success
	assert_output 43
	run "$HUGEEDIT" --disable pie
	assert_success
	cmp orig pie
}

@test "ELF32: gcc -m32, else as --32 and ld -m elf_i386, else the crafted sample" {
	if program m32 -m32 2> /dev/null; then
		f=m32
	elif printf '%s\n' '.globl _start' '.text' '_start: movl $1, %eax' 'xorl %ebx, %ebx' 'int $0x80' \
		'.data' 'v: .long 7' '.bss' 'b: .space 4096' > m32.s &&
		as --32 -o m32.o m32.s 2> /dev/null && ld -m elf_i386 -o m32 m32.o 2> /dev/null; then
		f=m32
	else
		sample i386-exec
		f=i386-exec
	fi
	run readelf -hW "$f"
	assert_line --regexp 'Class: +ELF32'
	run "$HUGEEDIT" --text --data "$f"
	assert_success
	assert_line --regexp '\(TEXT\) default is HUGE pages$'
	assert_line --regexp '\(DATA\) default is HUGE pages$'
	if have_legacy; then
		same_as_legacy "$f"
	fi
}

@test "big-endian files: the flag is written in their byte order" {
	sample ppc64-be
	cp ppc64-be orig
	run "$HUGEEDIT" --text ppc64-be
	assert_success
	# p_flags of program header 0: offset 64 + 4, big-endian 0x00100005.
	assert_equal "$(od -An -tx1 -j68 -N4 ppc64-be | tr -d ' ')" 00100005
	run bash -c 'cmp -l orig ppc64-be | awk "{ print \$1, \$2, \$3 }"'
	assert_output '70 0 20'
	sample ppc32-be
	run "$HUGEEDIT" --data ppc32-be
	assert_success
	# ELF32: p_flags is at +24 of the entry; header 1 at 52 + 32: DATA is RWX on PowerPC.
	assert_equal "$(od -An -tx1 -j108 -N4 ppc32-be | tr -d ' ')" 00100007
}

@test "nothing to change: the file is not rewritten" {
	sample x86_64-exec
	local ino
	ino=$(stat -c %i x86_64-exec)
	run "$HUGEEDIT" --disable x86_64-exec
	assert_success
	assert_equal "$(stat -c %i x86_64-exec)" "$ino"
	run "$HUGEEDIT" --text x86_64-exec
	assert_success
	[ "$(stat -c %i x86_64-exec)" != "$ino" ] || fail "the edit did not go through a new file"
}

@test "--dry-run shows the edit and changes nothing; --json agrees with the table" {
	sample x86_64-exec
	unchanged_sum=$(sha256sum < x86_64-exec)
	run "$HUGEEDIT" --dry-run --text x86_64-exec
	assert_success
	assert_line 'Segment 3 0x401000 - 0x40111d (TEXT) default is HUGE pages'
	assert_equal "$(sha256sum < x86_64-exec)" "$unchanged_sum"
	run --separate-stderr "$HUGEEDIT" --json --dry-run --text --data x86_64-exec
	assert_success
	run python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(d["class"], d["byte_order"])
for s in d["segments"]:
    print(s["index"], hex(s["vaddr"]), hex(s["vaddr"] + s["memsz"]), s["kind"], s["huge"], hex(s["flags"]))
' "$output"
	assert_success
	assert_output "$(printf '%s\n' '64 little' '2 0x400000 0x400498  False 0x4' \
		'3 0x401000 0x40111d TEXT True 0x100005' '4 0x402000 0x4020a4  False 0x4' \
		'5 0x403e38 0x404020 DATA True 0x100006')"
	run "$HUGEEDIT" --dry-run x86_64-exec
	assert_failure 1
}

@test "usage: 2.23's --disable error, one FILE, unknown options" {
	sample x86_64-exec
	unchanged x86_64-exec "$HUGEEDIT" --disable --text x86_64-exec
	assert_equal "$stderr" "hugeedit: ERROR: --disable is not compatible with --text or --data"
	unchanged x86_64-exec "$HUGEEDIT" --data --disable x86_64-exec
	run --separate-stderr "$HUGEEDIT"
	assert_failure 1
	assert_equal "$stderr" "$(printf '%s\n' 'hugeedit: no FILE given' "Try 'hugeedit --help' for more information.")"
	unchanged x86_64-exec "$HUGEEDIT" --text x86_64-exec x86_64-exec
	[[ $stderr == 'hugeedit: more than one FILE given'$'\n'* ]] || fail "stderr: $stderr"
	unchanged x86_64-exec "$HUGEEDIT" --txet x86_64-exec
	run "$HUGEEDIT" --help
	assert_success
	assert_line --index 0 Usage:
}

# bad NAME CONTENT-CMD: a file NAME made by CONTENT-CMD; show and edit both
# fail with status 1, name it, and leave it as it was.
bad() {
	local name=$1 o
	shift
	"$@" > "$name"
	for o in "" --text --disable; do
		# shellcheck disable=SC2086 # the option
		unchanged "$name" "$HUGEEDIT" $o "$name"
	done
}

@test "corrupt input: refused with a reason, file unchanged" {
	program pie -pie -fPIE
	sample x86_64-exec
	local size phoff
	size=$(stat -c %s pie)
	bad empty true
	assert_equal "$stderr" 'hugeedit: ERROR: empty: not an ELF file'
	bad text echo 'not a program'
	assert_equal "$stderr" 'hugeedit: ERROR: text: not an ELF file'
	bad magic printf '\177ELF'
	assert_equal "$stderr" 'hugeedit: ERROR: magic: not an ELF file'
	bad short head -c 40 pie
	assert_equal "$stderr" 'hugeedit: ERROR: short: truncated ELF header (40 bytes)'
	bad cut-text head -c 3000 pie
	[[ $stderr == 'hugeedit: ERROR: cut-text: '*'(truncated?)' ]] || fail "stderr: $stderr"
	bad cut-end head -c $((size - 1)) pie
	assert_equal "$stderr" 'hugeedit: ERROR: cut-end: the section header table does not fit in the file (truncated?)'
	bad archive printf '!<arch>\n'
	assert_equal "$stderr" 'hugeedit: ERROR: archive: not an ELF file'
	bad class64 python3 -c 'import sys; d = bytearray(open("pie", "rb").read()); d[4] = 9; sys.stdout.buffer.write(d)'
	assert_equal "$stderr" 'hugeedit: ERROR: class64: unknown ELF class 9'
	bad phentsize python3 -c 'import sys; d = bytearray(open("pie", "rb").read()); d[54] = 40; sys.stdout.buffer.write(d)'
	assert_equal "$stderr" 'hugeedit: ERROR: phentsize: the program header table does not fit in the file (truncated?)'
	phoff=$(readelf -hW pie | sed -n 's/.*Start of program headers: *\([0-9]*\).*/\1/p')
	# The first PT_LOAD's p_filesz (in header 2 of gcc's layout is too fragile: patch every LOAD's).
	bad huge-seg python3 -c '
import struct, sys
d = bytearray(open("pie", "rb").read())
phoff, n = '"$phoff"', struct.unpack_from("<H", d, 56)[0]
for i in range(n):
    o = phoff + 56 * i
    if struct.unpack_from("<I", d, o)[0] == 1:
        struct.pack_into("<Q", d, o + 32, 1 << 40)
        struct.pack_into("<Q", d, o + 40, 1 << 40)
        break
sys.stdout.buffer.write(d)'
	re='^hugeedit: ERROR: huge-seg: segment [0-9]+ ends past the end of the file \(truncated\?\)$'
	[[ $stderr =~ $re ]] || fail "stderr: $stderr"
	bad object gcc -x c -c -o /dev/stdout - <<< 'int x;'
	assert_equal "$stderr" 'hugeedit: ERROR: object: not an executable or shared object (ELF type 1)'
	sample no-load
	unchanged no-load "$HUGEEDIT" --text no-load
	assert_equal "$stderr" 'hugeedit: ERROR: no-load: no loadable segment (PT_LOAD)'
	mkdir dir
	run --separate-stderr "$HUGEEDIT" --text dir
	assert_failure 1
	assert_equal "$stderr" 'hugeedit: ERROR: dir: not a regular file'
	mkfifo fifo
	for o in "" --text; do
		# shellcheck disable=SC2086 # the option
		run --separate-stderr timeout 20 "$HUGEEDIT" $o fifo
		assert_failure 1
		assert_equal "$stderr" 'hugeedit: ERROR: fifo: not a regular file'
	done
	run --separate-stderr "$HUGEEDIT" --text missing
	assert_failure 1
	assert_equal "$stderr" 'hugeedit: ERROR: Opening missing failed: No such file or directory'
}

@test "a symbolic link: its target is edited, the link stays" {
	mkdir -p real
	sample x86_64-exec
	mv x86_64-exec real/prog
	ln -s real/prog link
	run "$HUGEEDIT" --text link
	assert_success
	[ -L link ] || fail "link is no longer a symbolic link"
	run "$HUGEEDIT" real/prog
	assert_line 'Segment 3 0x401000 - 0x40111d (TEXT) default is HUGE pages'
	assert_equal "$(ls -A real)" prog
}

@test "as root, a symbolic link of another user is not followed" {
	hk_need_root "chown -h"
	mkdir -p real d
	sample x86_64-exec
	mv x86_64-exec real/prog
	ln -s real/prog link
	ln -s ../real d/dir
	chown -h 65534:65534 link d/dir
	unchanged real/prog "$HUGEEDIT" --text link
	assert_equal "$stderr" "hugeedit: ERROR: link: the symbolic link $(pwd -P)/link belongs to user 65534, not root: not followed"
	unchanged real/prog "$HUGEEDIT" --disable d/dir/prog
	assert_equal "$stderr" "hugeedit: ERROR: d/dir/prog: the symbolic link $(pwd -P)/d/dir belongs to user 65534, not root: not followed"
	# Shown, not edited: followed.
	run "$HUGEEDIT" link
	assert_success
	# Root's own links are followed.
	chown -h 0:0 d/dir
	run "$HUGEEDIT" --text d/dir/prog
	assert_success
	assert_line 'Segment 3 0x401000 - 0x40111d (TEXT) default is HUGE pages'
}

@test "as root, a user's directory swapped for the user's link to root's directory during edits: root's file is never touched" {
	hk_need_root
	hk_need_cmd setpriv util-linux
	local t attacker i edited=0 refused=0 before
	# Out of BATS_TEST_TMPDIR: nobody must reach the directory.
	t=$(mktemp -d /tmp/hk-edit-race.XXXXXX)
	chmod 755 "$t"
	mkdir "$t/root" "$t/user" "$t/user/dir"
	python3 "$MKELF" x86_64-exec "$t/root/prog"
	python3 "$MKELF" x86_64-exec "$t/user/dir/prog"
	ln -s "$t/root" "$t/user/lnk"
	chown -hR 65534:65534 "$t/user"
	# A rewrite is a new inode (rename), whatever the bytes end up as.
	before="$(stat -c %i "$t/root/prog") $(sha256sum < "$t/root/prog")"
	# The user turns d into the directory, then into the link, as fast as it goes (30 s at most).
	setpriv --reuid=65534 --regid=65534 --clear-groups timeout 30 python3 -c '
import os, sys
os.chdir(sys.argv[1])
while True:
    for a, b in (("dir", "d"), ("d", "dir"), ("lnk", "d"), ("d", "lnk")):
        try:
            os.rename(a, b)
        except OSError:
            pass
' "$t/user" &
	attacker=$!
	# About a quarter of the runs find d a directory: 60 runs all refused is a chance of 3e-8.
	for i in $(seq 60); do
		if "$HUGEEDIT" "$([ $((i % 2)) = 0 ] && echo --text || echo --disable)" \
			"$t/user/d/prog" > /dev/null 2>&1; then
			edited=$((edited + 1))
		else
			refused=$((refused + 1))
		fi
	done
	kill "$attacker" 2> /dev/null || true
	wait "$attacker" 2> /dev/null || true
	local after
	after="$(stat -c %i "$t/root/prog") $(sha256sum < "$t/root/prog")"
	rm -rf "$t"
	echo "# $edited edits went through, $refused were refused or failed"
	assert_equal "$after" "$before"
	# The race was run: some edits reached the user's file, some met the link.
	[ "$edited" -gt 0 ] && [ "$refused" -gt 0 ]
}

@test "a file with two hard links is refused" {
	sample x86_64-exec
	ln x86_64-exec other
	unchanged x86_64-exec "$HUGEEDIT" --text x86_64-exec
	assert_equal "$stderr" 'hugeedit: ERROR: x86_64-exec has 2 hard links; the edit would reach this name only: not edited'
	cmp x86_64-exec other
}

@test "owner, mode (set-user-ID too), capabilities and extended attributes are kept" {
	hk_need_root "chown, setcap"
	hk_need_cmd setcap libcap2-bin
	local xattrs=yes
	program prog -pie -fPIE
	chown 65534:65534 prog
	chmod 4751 prog
	setcap cap_net_raw+ep prog
	[[ $(getcap prog) == *cap_net_raw* ]] || fail "setcap did not give prog a capability: $(getcap prog)"
	python3 -c 'import os; os.setxattr("prog", "user.hk", b"kept")' || xattrs=no
	run "$HUGEEDIT" --text --data prog
	assert_success
	assert_equal "$(stat -c '%u %g %a' prog)" '65534 65534 4751'
	[[ $(getcap prog) == *cap_net_raw* ]] || fail "the capability is lost: $(getcap prog)"
	# User extended attributes, where this file system has them (tmpfs before 6.6 has not).
	[ "$xattrs" = yes ] || hk_skip "no user extended attributes on the file system of $BATS_TEST_TMPDIR"
	assert_equal "$(python3 -c 'import os; print(os.getxattr("prog", "user.hk"))')" "b'kept'"
}

@test "a running program is edited (rename, no ETXTBSY); it keeps running on the old file" {
	cp "$(command -v sleep)" busy
	./busy 30 &
	local pid=$!
	run "$HUGEEDIT" --text busy
	kill "$pid"
	wait "$pid" || true
	assert_success
	assert_line --regexp '\(TEXT\) default is HUGE pages$'
}

@test "write failures: file size limit, read-only directory, full disk; file unchanged, no temporary left" {
	program prog -pie -fPIE
	# The copy cannot be written past RLIMIT_FSIZE (4 KiB): EFBIG.
	unchanged prog bash -c 'trap "" XFSZ; ulimit -f 4; exec "$@"' sh "$HUGEEDIT" --text prog
	# A coverage build (tests/coverage.sh) cannot write its counts past the limit
	# either: libgcov says so in lines of its own ("profiling:..." or, when the
	# counts file is past the limit, "libgcov profiling error:..."), not hugeedit's.
	stderr=$(grep -Ev '^(libgcov )?profiling( error)?:' <<< "$stderr" || true)
	assert_equal "$stderr" 'hugeedit: ERROR: prog: writing the new copy failed: File too large'

	if [ "$(id -u)" != 0 ] || ! unshare -m true 2> /dev/null; then
		hk_missing "needs root and unshare -m (tmpfs mounts in a private namespace)"
	fi
	# A read-only directory: a tmpfs remounted read-only, in a mount namespace of its own.
	mkdir -p mnt
	local sum
	sum=$(sha256sum < prog)
	run --separate-stderr unshare -m sh -c '
		mount -t tmpfs -o size=1m hk mnt && cp prog mnt/ && mount -o remount,ro mnt &&
		"$1" --text mnt/prog; rc=$?; sha256sum < mnt/prog >&2; ls -A mnt >&2; exit $rc' sh "$HUGEEDIT"
	assert_failure 1
	assert_equal "$stderr" "$(printf '%s\n' \
		'hugeedit: ERROR: mnt/prog: cannot create a temporary file beside it: Read-only file system' \
		"$sum" prog)"
	# A full disk: a tmpfs with less room than the copy needs.
	run --separate-stderr unshare -m sh -c '
		mount -t tmpfs -o size=64k hk mnt && cp prog mnt/ && { cat /dev/zero > mnt/fill; true; } 2> /dev/null &&
		"$1" --text mnt/prog; rc=$?; sha256sum < mnt/prog >&2; ls -A mnt >&2; exit $rc' sh "$HUGEEDIT"
	assert_failure 1
	assert_equal "$stderr" "$(printf '%s\n' \
		'hugeedit: ERROR: mnt/prog: writing the new copy failed: No space left on device' \
		"$sum" fill prog)"
}

@test "a user who cannot write the directory, or keep the owner, gets an error" {
	hk_need_root "to act as another user"
	hk_need_cmd setpriv util-linux
	# Where that user can reach (bats's own directories are private).
	SHARED_DIR=$(mktemp -d /tmp/hk-hugeedit.XXXXXX)
	chmod 0755 "$SHARED_DIR"
	cd "$SHARED_DIR"
	mkdir -m 0755 d
	python3 "$MKELF" x86_64-exec d/prog
	chown 65534:65534 d/prog
	unchanged d/prog setpriv --reuid=65534 --regid=65534 --clear-groups "$HUGEEDIT" --text d/prog
	assert_equal "$stderr" 'hugeedit: ERROR: d/prog: cannot create a temporary file beside it: Permission denied'
	# A writable directory, but the file belongs to root: the copy could not keep the owner.
	chmod 1777 d
	chown 0:0 d/prog
	chmod 0666 d/prog
	unchanged d/prog setpriv --reuid=65534 --regid=65534 --clear-groups "$HUGEEDIT" --text d/prog
	assert_equal "$stderr" 'hugeedit: ERROR: d/prog: cannot give the new copy the owner 0:0: Operation not permitted'
}

@test "the completion offers the options, without --disable after --text" {
	# shellcheck source=/dev/null
	source "$HK_SOURCE_DIR/completions/bash/hugeedit"
	COMP_WORDS=(hugeedit --)
	COMP_CWORD=1
	_hugeedit
	assert_equal "${COMPREPLY[*]}" '--text --data --disable --align --dry-run --json --help --version'
	COMP_WORDS=(hugeedit --text --d)
	COMP_CWORD=2
	_hugeedit
	assert_equal "${COMPREPLY[*]}" '--data --dry-run'
	COMP_WORDS=(hugeedit --align=)
	COMP_CWORD=1
	_hugeedit
	if [ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]; then
		[[ " ${COMPREPLY[*]} " == *' --align=2048K '* ]] || fail "--align= offers: ${COMPREPLY[*]}"
	fi
}

# align_diff ORIG NEW SIZE: prints the p_align of each PT_LOAD of NEW, and fails
# unless NEW is ORIG but for p_align words of PT_LOAD entries, each now
# max(its old value, SIZE).
align_diff() {
	python3 - "$@" << 'EOF'
import struct, sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
size = int(sys.argv[3], 0)
assert len(a) == len(b), "sizes differ"
is64, e = a[4] == 2, "<" if a[5] == 1 else ">"
phoff, = struct.unpack_from(e + ("Q" if is64 else "I"), a, 32 if is64 else 28)
phentsize, phnum = struct.unpack_from(e + "HH", a, 54 if is64 else 42)
allowed = set()
for i in range(phnum):
    o = phoff + i * phentsize
    if struct.unpack_from(e + "I", a, o)[0] != 1:
        continue
    at, fmt = (o + 48, "Q") if is64 else (o + 28, "I")
    old, = struct.unpack_from(e + fmt, a, at)
    new, = struct.unpack_from(e + fmt, b, at)
    assert new == max(old, size), "segment %d: p_align %#x, not %#x" % (i, new, max(old, size))
    allowed |= set(range(at, at + struct.calcsize(fmt)))
    print(hex(new))
bad = [i for i in range(len(a)) if a[i] != b[i] and i not in allowed]
assert not bad, "bytes changed outside p_align words: %s" % bad[:8]
EOF
}

# unaligned_bases RUNNER... PROG: the load bases (the first dl_iterate_phdr
# entry, printed by PROG) of 8 runs that are not 2 MiB-aligned, one a line;
# fails when PROG does.
unaligned_bases() {
	local i b
	for i in 1 2 3 4 5 6 7 8; do
		b=$("$@") || return 1
		[[ $b =~ ^[0-9a-f]+$ ]] || return 1
		if (((0x$b & 0x1fffff) != 0)); then echo "$b"; fi
	done
}

@test "--align: only the p_align words change; the PIE runs, loaded at 2 MiB-aligned bases" {
	printf '%s\n' '#define _GNU_SOURCE' '#include <link.h>' '#include <stdio.h>' \
		'static int first(struct dl_phdr_info *i, size_t n, void *d)' \
		'{ (void)n; (void)d; printf("%lx\n", (unsigned long)i->dlpi_addr); return 1; }' \
		'int main(void) { dl_iterate_phdr(first, NULL); return 0; }' > base.c
	gcc -pie -fPIE -o base base.c
	cp base orig
	run "$HUGEEDIT" base
	local table=$output
	run readelf -lW base
	assert_line --regexp '^ +LOAD .* 0x1000$'
	run --separate-stderr "$HUGEEDIT" --align=2M base
	assert_success
	assert_equal "$output" "$table"
	run align_diff orig base 0x200000
	assert_success
	assert_line 0x200000
	if [ "$(cat /proc/sys/kernel/randomize_va_space)" != 0 ]; then
		# Before: bases in 4 kB steps (8 runs all 2 MiB-aligned: 1 in 512^8).
		run unaligned_bases ./orig
		assert_success
		refute_output ''
	fi
	local ldso
	ldso=$(readelf -lW base | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
	run unaligned_bases ./base
	assert_success
	assert_output ''
	run unaligned_bases "$ldso" ./base
	assert_success
	assert_output ''
	# The default size is the machine's default huge page size.
	cp orig base
	run "$HUGEEDIT" --align base
	assert_success
	local kb
	kb=$(sed -n 's/^Hugepagesize: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
	run align_diff orig base $((${kb:-2048} * 1024))
	assert_success
	# Already aligned: nothing written.
	local ino
	ino=$(stat -c %i base)
	run "$HUGEEDIT" --align=4K base
	assert_success
	assert_equal "$(stat -c %i base)" "$ino"
}

@test "--align with --text in one edit; --dry-run and --json show it and change nothing" {
	program pie -pie -fPIE
	cp pie orig
	local sum
	sum=$(sha256sum < pie)
	run --separate-stderr "$HUGEEDIT" --dry-run --json --align=2M --text pie
	assert_success
	run python3 -c '
import json, sys
for s in json.loads(sys.argv[1])["segments"]:
    print(hex(s["align"]), s["kind"], s["huge"])' "$output"
	assert_line '0x200000 TEXT True'
	refute_line --regexp '^0x1000 '
	assert_equal "$(sha256sum < pie)" "$sum"
	run "$HUGEEDIT" --text --align=2M pie
	assert_success
	assert_line --regexp '\(TEXT\) default is HUGE pages$'
	run python3 -c '
a, b = open("orig", "rb").read(), open("pie", "rb").read()
print(sum(x != y for x, y in zip(a, b)))'
	# One flag byte and two bytes of each of the four p_align words (0x1000 -> 0x200000).
	assert_output 9
	run ./pie
	assert_success
	assert_output 43
}

@test "--align: ELF32 and big-endian words; ET_EXEC left as it is, said" {
	sample i386-exec
	sample ppc64-be
	local f
	# Made position-independent (e_type ET_DYN) for the edit; they are never run.
	for f in i386-exec ppc64-be; do
		python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[16:18] = (3).to_bytes(2, "big" if b[5] == 2 else "little")
open(sys.argv[2], "wb").write(b)' "$f" "$f-dyn"
		cp "$f-dyn" orig
		run "$HUGEEDIT" --align=1M "$f-dyn"
		assert_success
		run align_diff orig "$f-dyn" 0x100000
		assert_success
		assert_line 0x100000
	done
	# ET_EXEC: fixed addresses; said, exit 0, not written; --text still applies.
	sample x86_64-exec
	local sum
	sum=$(sha256sum < x86_64-exec)
	run --separate-stderr "$HUGEEDIT" --align x86_64-exec
	assert_success
	assert_equal "$stderr" "hugeedit: x86_64-exec is not position-independent (ET_EXEC: loaded at fixed addresses): --align would change nothing; its alignment is left as it is"
	assert_equal "$(sha256sum < x86_64-exec)" "$sum"
	run --separate-stderr "$HUGEEDIT" --align --text x86_64-exec
	assert_success
	assert_line 'Segment 3 0x401000 - 0x40111d (TEXT) default is HUGE pages'
	run readelf -lW x86_64-exec
	refute_output --partial 0x200000
}

@test "--align: a bad size, or a segment that cannot be aligned: refused, file unchanged" {
	program pie -pie -fPIE
	local s
	for s in 3M 0 2k1 -2M 32G 1K ''; do
		unchanged pie "$HUGEEDIT" "--align=$s" pie
		assert_equal "$stderr" "hugeedit: ERROR: --align=$s: not a size such as 2M or 1G (a power of two, the page size to 16G)"
	done
	# p_vaddr of the first PT_LOAD moved by 16 bytes: no longer p_offset modulo the page size.
	python3 -c '
import struct
b = bytearray(open("pie", "rb").read())
phoff, = struct.unpack_from("<Q", b, 32)
for i in range(struct.unpack_from("<H", b, 56)[0]):
    o = phoff + 56 * i
    if struct.unpack_from("<I", b, o)[0] == 1:
        struct.pack_into("<Q", b, o + 16, struct.unpack_from("<Q", b, o + 16)[0] + 16)
        break
open("odd", "wb").write(b)'
	unchanged odd "$HUGEEDIT" --align odd
	[[ $stderr == 'hugeedit: ERROR: odd: segment '[0-9]*': p_vaddr 0x10 and p_offset 0x0 differ by a part of a page: cannot be aligned' ]] ||
		fail "stderr: $stderr"
}

@test "temporary names planted beside the file (2.23-style .hugeedit.PID.N, and more) neither stop the edit nor get written" {
	local i
	unshare --pid --fork true 2> /dev/null || hk_skip "cannot make a PID namespace (unshare --pid): hugeedit's pid is not predictable"
	sample x86_64-exec
	# As pid 1, every name hugeedit once tried; and 1000 random-looking ones.
	for i in $(seq 0 99); do echo planted > ".hugeedit.1.$i"; done
	for i in $(seq 1000); do echo planted > ".x86_64-exec.$i"; done
	run --separate-stderr unshare --pid --fork "$HUGEEDIT" --text x86_64-exec
	assert_success
	run --separate-stderr "$HUGEEDIT" x86_64-exec
	assert_line --partial "(TEXT) default is HUGE pages"
	assert_equal "$(cat .hugeedit.1.* .x86_64-exec.* | sort -u)" planted
	assert_equal "$(ls -A | grep -c -v -e '^\.hugeedit\.1\.[0-9]*$' -e '^\.x86_64-exec\.[0-9]*$')" "$(ls -A | grep -c -v '^\.')"
}
