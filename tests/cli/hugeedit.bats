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
	have_legacy || skip "libhugetlbfs-bin (2.23) is not installed"
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
	have_legacy || skip "libhugetlbfs-bin (2.23) is not installed"
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
	[ "$(id -u)" = 0 ] || skip "needs root (chown -h)"
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

@test "a file with two hard links is refused" {
	sample x86_64-exec
	ln x86_64-exec other
	unchanged x86_64-exec "$HUGEEDIT" --text x86_64-exec
	assert_equal "$stderr" 'hugeedit: ERROR: x86_64-exec has 2 hard links; the edit would reach this name only: not edited'
	cmp x86_64-exec other
}

@test "owner, mode (set-user-ID too), capabilities and extended attributes are kept" {
	[ "$(id -u)" = 0 ] || skip "needs root (chown, setcap)"
	program prog -pie -fPIE
	chown 65534:65534 prog
	chmod 4751 prog
	if command -v setcap > /dev/null; then setcap cap_net_raw+ep prog; fi
	python3 -c 'import os; os.setxattr("prog", "user.hk", b"kept")' 2> /dev/null || true
	local caps xattr
	caps=$(getcap prog 2> /dev/null || true)
	xattr=$(python3 -c 'import os; print(os.getxattr("prog", "user.hk"))' 2> /dev/null || true)
	run "$HUGEEDIT" --text --data prog
	assert_success
	assert_equal "$(stat -c '%u %g %a' prog)" '65534 65534 4751'
	assert_equal "$(getcap prog 2> /dev/null || true)" "$caps"
	assert_equal "$(python3 -c 'import os; print(os.getxattr("prog", "user.hk"))' 2> /dev/null || true)" "$xattr"
	[ -z "$caps" ] || [[ $caps == *cap_net_raw* ]] || fail "capabilities: $caps"
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
	assert_equal "$stderr" 'hugeedit: ERROR: prog: writing the new copy failed: File too large'

	if [ "$(id -u)" != 0 ] || ! unshare -m true 2> /dev/null; then
		skip "needs root and unshare -m (tmpfs mounts in a private namespace)"
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
	[ "$(id -u)" = 0 ] || skip "needs root (to act as another user)"
	command -v setpriv > /dev/null || skip "setpriv is not installed"
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
	assert_equal "${COMPREPLY[*]}" '--text --data --disable --dry-run --json --help --version'
	COMP_WORDS=(hugeedit --text --d)
	COMP_CWORD=2
	_hugeedit
	assert_equal "${COMPREPLY[*]}" '--data --dry-run'
}
