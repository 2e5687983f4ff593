#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ld.hugetlbfs, as compilers run it: gcc -B <build>/share/libhugetlbfs
# -Wl,--hugetlbfs-align. The segments of the program it links are aligned
# (readelf), the program runs, everything else reaches the real linker
# unchanged, and a missing linker or a loop back to itself is an error.

load helpers

LDH=$HK_BUILD_DIR/tools/ld.hugetlbfs
BDIR=$HK_BUILD_DIR/share/libhugetlbfs

setup() {
	mkdir "$BATS_TEST_TMPDIR/work"
	cd "$BATS_TEST_TMPDIR/work"
	printf '%s\n' '#include <stdio.h>' 'const char msg[] = "aligned";' 'int counter = 42;' \
		'static char big[1 << 20];' \
		'int main(void) { big[9] = 1; printf("%s %d\n", msg, counter + big[9]); return 0; }' > t.c
	gcc -c -o t.o t.c
}

# aligned FILE S: every PT_LOAD of FILE has p_align S and an offset congruent
# to its address modulo S; the read-only ones start on a multiple of S, the
# writable one after its RELRO part (or at its start) does.
aligned() {
	readelf -lW "$1" | python3 -c '
import sys
S = int(sys.argv[1])
bad, loads, relro, w = [], 0, None, None
for line in sys.stdin:
    f = line.split()
    if f[:1] == ["GNU_RELRO"]:
        relro = int(f[2], 16) + int(f[5], 16)
    if f[:1] != ["LOAD"]:
        continue
    loads += 1
    off, va, memsz, al = int(f[1], 16), int(f[2], 16), int(f[5], 16), int(f[-1], 16)
    flags = "".join(f[6:-1])
    if al != S:
        bad.append("LOAD %d: p_align %#x" % (loads, al))
    if off % S != va % S:
        bad.append("LOAD %d: offset %#x and address %#x differ modulo %#x" % (loads, off, va, S))
    if "W" not in flags and va % S:
        bad.append("LOAD %d (%s): address %#x" % (loads, flags, va))
    if "W" in flags:
        w = (va, va + memsz)
if not loads:
    bad.append("no LOAD")
if w:
    s = relro if relro and w[0] < relro <= w[1] else w[0]
    if s % S:
        bad.append("writable data after RELRO starts at %#x" % s)
print("\n".join(bad))
sys.exit(1 if bad else 0)
' "$2"
}

@test "the script is POSIX sh, shellcheck-clean, and share/libhugetlbfs/ld leads to it" {
	run readlink -f "$BDIR/ld"
	assert_output "$(readlink -f "$LDH")"
	[ -x "$LDH" ] || fail "$LDH is not executable"
	assert_equal "$(head -1 "$LDH")" '#!/bin/sh'
	if command -v shellcheck > /dev/null; then
		shellcheck -s sh "$HK_SOURCE_DIR/tools/ld.hugetlbfs"
	fi
	if command -v checkbashisms > /dev/null; then
		checkbashisms "$HK_SOURCE_DIR/tools/ld.hugetlbfs"
	fi
}

@test "gcc -B ... -Wl,--hugetlbfs-align: PIE and non-PIE, separate code or not, aligned to 2 MiB, and they run" {
	local v
	for v in "-pie" "-no-pie" "-pie -Wl,-z,noseparate-code" "-no-pie -Wl,-z,separate-code"; do
		# shellcheck disable=SC2086 # the variant's options
		gcc $v -B "$BDIR" -Wl,--hugetlbfs-align=2M -o app t.o
		run aligned app 2097152
		assert_success
		run ./app
		assert_success
		assert_output 'aligned 43'
	done
	# Without the option the same link is not aligned: the check above can fail.
	gcc -pie -o plain t.o
	run aligned plain 2097152
	assert_failure
}

# fake_ld: a "real linker" that prints its arguments, one a line, and has
# elf_x86_64 as its default target (ld -V).
fake_ld() {
	printf '%s\n' '#!/bin/sh' \
		'if [ "$1" = -V ]; then printf "GNU ld (fake)\n  Supported emulations:\n   elf_x86_64\n   elf_i386\n"; exit 0; fi' \
		'printf "%s\n" "$@"' > fake-ld
	chmod +x fake-ld
}

@test "--hugetlbfs-align alone: 2.23's rule, 4 MiB on x86 whatever the default huge page size, else the default huge page size" {
	local kb
	kb=$(awk '$1 == "Hugepagesize:" { print $2 }' /proc/meminfo)
	[ -n "$kb" ] || kb=2048
	gcc -B "$BDIR" -Wl,--hugetlbfs-align -o app t.o
	run aligned app 4194304
	assert_success
	run ./app
	assert_output 'aligned 43'
	# The target from -m (as gcc passes it, apart or joined), LDEMULATION, or the linker's default.
	fake_ld
	run env LD="$PWD/fake-ld" "$LDH" -m elf_x86_64 --hugetlbfs-align -o app t.o
	assert_line max-page-size=4194304
	run env LD="$PWD/fake-ld" "$LDH" -melf_i386 --hugetlbfs-align -o app t.o
	assert_line max-page-size=4194304
	run env LD="$PWD/fake-ld" "$LDH" --hugetlbfs-align -o app t.o
	assert_line max-page-size=4194304
	assert_line common-page-size=4194304
	run env LD="$PWD/fake-ld" "$LDH" -m elf64_s390 --hugetlbfs-align -o app t.o
	assert_line max-page-size=1048576
	run env LD="$PWD/fake-ld" LDEMULATION=aarch64linux "$LDH" --hugetlbfs-link=B -o app t.o
	assert_line max-page-size=$((kb * 1024))
	run env LD="$PWD/fake-ld" "$LDH" -m aarch64linux --hugetlbfs-align -o app t.o
	assert_line max-page-size=$((kb * 1024))
	refute_line noseparate-code
	# A size given wins over the rule.
	run env LD="$PWD/fake-ld" "$LDH" -m elf_x86_64 --hugetlbfs-align=2M -o app t.o
	assert_line max-page-size=2097152
}

@test "--hugetlbfs-align=1G on x86-64: a PIE links with one text segment (-z noseparate-code) and runs; a non-PIE is refused, the linker not run" {
	fake_ld
	run env LD="$PWD/fake-ld" "$LDH" -m elf_x86_64 -pie --hugetlbfs-align=1G -o app t.o
	assert_success
	assert_line max-page-size=1073741824
	assert_line noseparate-code
	# Smaller sizes keep the linker's separate code.
	run env LD="$PWD/fake-ld" "$LDH" -m elf_x86_64 -pie --hugetlbfs-align=512M -o app t.o
	refute_line noseparate-code
	# The real link, and the program runs (its file is 1 GiB of holes).
	gcc -pie -B "$BDIR" -Wl,--hugetlbfs-align=1G -o app t.o
	run aligned app 1073741824
	assert_success
	[ "$(readelf -lW app | grep -c ' LOAD ')" = 2 ] || fail "$(readelf -lW app)"
	run ./app
	assert_output 'aligned 43'
	# Without noseparate-code the same link fails: the case above can fail.
	run gcc -pie -Wl,-z,max-page-size=0x40000000,-z,common-page-size=0x40000000,-z,separate-code -o bad t.o
	assert_failure
	[[ $output == *"relocation truncated to fit"* ]] || fail "$output"
	rm -f app
	run --separate-stderr gcc -no-pie -B "$BDIR" -Wl,--hugetlbfs-align=1G -o app t.o
	assert_failure
	[[ $stderr == *"ld.hugetlbfs: --hugetlbfs-align=1G: a program that is not a PIE cannot be aligned to 1 GiB or more on x86 (its data would lie past the 2 GiB its code reaches): link it as a PIE (gcc -pie), or align to 2M"* ]] ||
		fail "stderr: $stderr"
	[ ! -e app ] || fail "the linker ran"
}

@test "--hugetlbfs-align=1G on x86-64: the last of -pie and -no-pie decides, as in the linker" {
	fake_ld
	local args
	# gcc passes -pie first by default (Debian); a later -no-pie (-Wl,-no-pie) makes a non-PIE.
	for args in "-pie -no-pie" "-pie --no-pie" "--pic-executable -no-pie"; do
		# shellcheck disable=SC2086 # the words are the linker's arguments
		run --separate-stderr env LD="$PWD/fake-ld" "$LDH" -m elf_x86_64 $args --hugetlbfs-align=1G -o app t.o
		assert_failure 1
		[[ $stderr == *"a program that is not a PIE cannot be aligned to 1 GiB"* ]] || fail "$args: $stderr"
	done
	for args in "-no-pie -pie" "-pie -no-pie -shared" "-no-pie -r"; do
		# shellcheck disable=SC2086 # the words are the linker's arguments
		run env LD="$PWD/fake-ld" "$LDH" -m elf_x86_64 $args --hugetlbfs-align=1G -o app t.o
		assert_success
		assert_line noseparate-code
	done
	rm -f app
	run --separate-stderr gcc -B "$BDIR" -Wl,-no-pie -Wl,--hugetlbfs-align=1G -o app t.o
	assert_failure
	[ ! -e app ] || fail "the linker ran: $(readelf -h app | grep Type)"
}

@test "--hugetlbfs-align=4M aligns to 4 MiB; a bad size is an error and the linker does not run" {
	gcc -B "$BDIR" -Wl,--hugetlbfs-align=4M -o app t.o
	run aligned app 4194304
	assert_success
	local s
	for s in 3M 1k 0 32G x M 2MB -2M 99999999999; do
		rm -f app
		run --separate-stderr "$LDH" "--hugetlbfs-align=$s" -o app t.o
		assert_failure 1
		assert_equal "$stderr" "ld.hugetlbfs: --hugetlbfs-align=$s: not a size such as 2M or 1G (a power of two, 4K to 16G)"
		[ ! -e app ] || fail "the linker ran for --hugetlbfs-align=$s"
	done
}

@test "without its options it is the real linker: the same program byte for byte" {
	gcc -B "$BDIR" -o via t.o
	gcc -o direct t.o
	cmp via direct
	run "$LDH" --version
	assert_success
	assert_line --index 0 --partial 'GNU ld'
	# An unknown option reaches ld, which rejects it by name.
	run --separate-stderr "$LDH" --no-such-ld-option -o app t.o
	assert_failure
	[[ $stderr == *"unrecognized option '--no-such-ld-option'"* ]] || fail "stderr: $stderr"
	# Arguments with spaces and an empty one reach ld intact (a response file, a quoted path).
	mkdir 'a dir'
	gcc -B "$BDIR" -Wl,--hugetlbfs-align=2M -o 'a dir/my app' t.o
	run './a dir/my app'
	assert_output 'aligned 43'
}

@test "--hugetlbfs-link=B|BDT: aligned, with a note (silenced by HUGETLB_DEPRECATED_LINK); another value is an error" {
	run --separate-stderr gcc -B "$BDIR" -Wl,--hugetlbfs-link=BDT -o app t.o
	assert_success
	assert_equal "$stderr" 'ld.hugetlbfs: --hugetlbfs-link=BDT is deprecated (2.23'"'"'s linker scripts): linking with --hugetlbfs-align instead; choose the segments at run time (hugectl --text --data --bss, or hugeedit)'
	run aligned app 4194304
	assert_success
	run --separate-stderr env HUGETLB_DEPRECATED_LINK=1 gcc -B "$BDIR" -Wl,--hugetlbfs-link=B -Wl,--hugetlbfs-script-path=/nowhere -o app t.o
	assert_success
	assert_equal "$stderr" ''
	run --separate-stderr "$LDH" --hugetlbfs-link=BT -o app t.o
	assert_failure 1
	assert_equal "$stderr" 'ld.hugetlbfs: --hugetlbfs-link=BT: the value is B or BDT (and deprecated: use --hugetlbfs-align)'
	run --separate-stderr gcc -B "$BDIR" -Wl,--hugetlbfs-script-path=/nowhere -o app t.o
	assert_success
	assert_equal "$stderr" 'ld.hugetlbfs: --hugetlbfs-script-path=/nowhere ignored: hugekit links with the linker'"'"'s own script'
	run --separate-stderr "$LDH" --hugetlbfs-aling -o app t.o
	assert_failure 1
	[[ $stderr == 'ld.hugetlbfs: unknown option --hugetlbfs-aling '* ]] || fail "stderr: $stderr"
}

@test "the recursion guard: LD leading back to itself, and a linker that runs it again" {
	run --separate-stderr env LD="$BDIR/ld" "$LDH" -o app t.o
	assert_failure 1
	assert_equal "$stderr" "ld.hugetlbfs: LD=$BDIR/ld is ld.hugetlbfs itself: set LD to the real linker (or unset it)"
	# A "linker" that calls ld.hugetlbfs again: stopped with status 99, said.
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$LDH" > again
	chmod +x again
	run --separate-stderr timeout 20 env LD="$PWD/again" "$LDH" -o app t.o
	assert_failure 99
	assert_equal "$stderr" "ld.hugetlbfs: started again by the linker it started ($(readlink -f "$LDH")): LD or PATH leads back to ld.hugetlbfs"
	# PATH with the -B directory first: the ld found there is itself, skipped.
	PATH="$BDIR:$PATH" run "$LDH" --version
	[ "$status" -ne 99 ] || fail "it found itself as the real linker: $output"
	assert_success
	assert_line --index 0 --partial 'GNU ld'
}

@test "a missing real linker: a clear error" {
	run --separate-stderr env LD=/nonexistent/ld "$LDH" -o app t.o
	assert_failure 1
	assert_equal "$stderr" 'ld.hugetlbfs: LD=/nonexistent/ld: /nonexistent/ld is not an executable file'
	run --separate-stderr env LD=no-such-linker "$LDH" -o app t.o
	assert_failure 1
	assert_equal "$stderr" "ld.hugetlbfs: LD=no-such-linker: no program 'no-such-linker' in PATH"
	# A PATH with the tools the script needs but no ld (the -B directory's ld is itself).
	mkdir bin
	local t
	for t in readlink sed; do ln -s "$(command -v "$t")" bin/; done
	run --separate-stderr env -u LD PATH="$BDIR:$PWD/bin" "$LDH" -o app t.o
	assert_failure 1
	assert_equal "$stderr" "ld.hugetlbfs: no linker: no 'ld' in PATH but ld.hugetlbfs itself; set LD to the real linker"
	# LD with arguments, as make passes it.
	run env LD="ld --no-undefined-version" "$LDH" --version
	assert_success
}

@test "the man page documents each option of the script" {
	local page=$HK_SOURCE_DIR/man/ld.hugetlbfs.1.scd o
	for o in --hugetlbfs-align --hugetlbfs-link --hugetlbfs-script-path; do
		grep -q -- "^\*$o\*" "$page" || fail "$o is not an OPTIONS entry of ld.hugetlbfs.1.scd"
		grep -q -- "$o" "$LDH" || fail "$o is documented but not in the script"
	done
}
