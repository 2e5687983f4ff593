#!/usr/bin/env bash
# The install tree is complete and usable: tools, the library with its soname,
# the header and version header, libhugekit.pc, man pages and completions; a
# program built with `pkg-config --cflags --libs libhugekit` against the
# installed copy runs. The installed tools link libhugekit statically (issue
# #22 item 5): they load no libhugekit.so and carry no RUNPATH, so a tool
# installed under any prefix runs at once (no ldconfig); the libhugetlbfs compat names go under the prefix given
# at install time and into install_manifest.txt; hugekit.service goes to
# systemd's unit directory under the prefix and verifies; ldconfig runs for a library
# directory of the ld.so cache, never into a DESTDIR; the build compiles the
# libraries and tools at one -O level.
set -euo pipefail
build=${HK_BUILD_DIR:?}
src=${HK_SOURCE_DIR:?}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail() {
	echo "check-install: $*" >&2
	exit 1
}
# statically TOOL: TOOL (hugeadm, run without LD_LIBRARY_PATH) lists the pools
# of a fixture tree and loads the C library but no libhugekit.so (the dynamic
# loader's own account, LD_DEBUG=files), or fails the check.
statically() {
	local objs
	env -u LD_LIBRARY_PATH "$1" --sysroot "${HK_FIXTURES:?}/x86-1node" --pool-list > /dev/null ||
		fail "$1 --pool-list failed"
	objs=$({ env -u LD_LIBRARY_PATH LD_DEBUG=files "$1" --sysroot "$HK_FIXTURES/x86-1node" --pool-list 2>&1 > /dev/null || true; } |
		sed -n 's/^ *[0-9]*:[[:space:]]*file=\([^ ]*\) .*/\1/p' | sort -u | paste -sd ' ')
	[[ " $objs " == *" libc.so.6 "* ]] || fail "$1: the loader's account names no libc.so.6: '$objs'"
	[[ $objs != *libhugekit.so* ]] || fail "$1 loads libhugekit.so: '$objs'"
}
# no_runpath BINDIR: the tools there carry no RUNPATH or RPATH, need no
# libhugekit.so, and are bound at load with a read-only GOT.
no_runpath() {
	local t dyn
	for t in pagesize hugeadm hugectl hugeedit tlbmiss_cost cpupcstat; do
		dyn=$(readelf -d "$1/$t") || fail "$1/$t: not an ELF file"
		[[ $dyn == *"(NEEDED)"*"[libc.so.6]"* ]] || fail "$1/$t: readelf -d names no libc.so.6"
		if [[ $dyn == *"(RUNPATH)"* || $dyn == *"(RPATH)"* ]]; then
			fail "$1/$t has a RUNPATH or RPATH: $(grep PATH <<<"$dyn")"
		fi
		if [[ $dyn == *"[libhugekit.so"* ]]; then fail "$1/$t needs libhugekit.so: $(grep NEEDED <<<"$dyn")"; fi
		# Bound at load, GOT read-only (tools/CMakeLists.txt: -z now, -z relro).
		grep -Eq '\((FLAGS|FLAGS_1)\).* (BIND_NOW|NOW)( |$)' <<<"$dyn" ||
			fail "$1/$t is not bound at load (no BIND_NOW or NOW flag): $(grep FLAGS <<<"$dyn")"
		[[ $(readelf -lW "$1/$t") == *GNU_RELRO* ]] || fail "$1/$t has no GNU_RELRO segment"
	done
}

# One -O level per compile command of lib/ and tools/ (Release once added -O3 to -O2).
levels=$(python3 - "$build/compile_commands.json" <<'PY'
import json, re, sys
for c in json.load(open(sys.argv[1])):
    if re.search(r"/(lib|tools)/", c["file"]) and "/tests/" not in c["file"]:
        o = re.findall(r"(?:^|\s)(-O\S*)", c.get("command", " ".join(c.get("arguments", []))))
        if len(o) != 1:
            print(c["file"], " ".join(o) or "no -O")
PY
)
[ -z "$levels" ] || fail "not exactly one optimization level: $levels"

out=$(DESTDIR="$dest" cmake --install "$build")
# Into a staging tree the cache is none of the install's business.
if grep -q ldconfig <<<"$out"; then fail "ran ldconfig into DESTDIR: $out"; fi
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
root="$dest$prefix"
# libhugekit.pc's directories are relative to its own (${pcfiledir}): the
# installed copy names the staged tree's.
pc=$(find "$dest" -name libhugekit.pc)
if [ -z "$pc" ] || [ "$(wc -l <<<"$pc")" != 1 ]; then fail "not one libhugekit.pc installed: '$pc'"; fi
pcvar() { PKG_CONFIG_PATH=$(dirname "$1") pkg-config --variable="$2" libhugekit | xargs realpath -m; }
[ "$(pcvar "$pc" prefix)" = "$root" ] || fail "${pc#"$dest"}: prefix is $(pcvar "$pc" prefix), want $root"
libdir=$(pcvar "$pc" libdir)
[ "$libdir" = "$(dirname "$(dirname "$pc")")" ] || fail "${pc#"$dest"}: libdir is $libdir, not the directory above its own"
[ -f "$(pcvar "$pc" includedir)/hugekit/hugekit.h" ] || fail "${pc#"$dest"}: no hugekit/hugekit.h under its includedir $(pcvar "$pc" includedir)"
libdir=${libdir#"$dest"}
want=(bin/pagesize bin/hugeadm bin/hugectl bin/hugeedit bin/tlbmiss_cost bin/cpupcstat bin/ld.hugetlbfs share/libhugetlbfs/ld include/hugekit/hugekit.h include/hugekit/version.h include/hugetlbfs.h)
for f in "${want[@]}"; do
	[ -e "$root/$f" ] || { echo "check-install: $prefix/$f is not installed" >&2; exit 1; }
done
for f in "$dest$libdir/libhugekit.so.1" "$dest$libdir/libhugekit-rt.so.0" "$dest$libdir/pkgconfig/libhugekit.pc"; do
	[ -e "$f" ] || { echo "check-install: ${f#"$dest"} is not installed" >&2; exit 1; }
done
if [ -f "$build/man/hugeadm.8" ]; then
	for m in share/man/man1/pagesize.1 share/man/man8/hugeadm.8 share/man/man1/hugectl.1 share/man/man7/libhugekit-rt.7 share/man/man3/get_huge_pages.3 share/man/man1/hugeedit.1 share/man/man1/ld.hugetlbfs.1; do
		[ -e "$root/$m" ] || { echo "check-install: $prefix/$m is not installed" >&2; exit 1; }
	done
fi
# Every name of an API page's NAME section, and hugectl and hugeedit in
# 2.23's section 8, lead to their page without a mandb run (.so stubs).
if [ -f "$build/man/hugeadm.8" ]; then
	for page in "$src"/man/*.3.scd; do
		for name in $(awk '/^# NAME/ { f = 1; next } f && / -( |$)/ { sub(/ -( .*)?$/, ""); print; exit } f { print }' "$page" | tr ',' ' '); do
			[ -e "$root/share/man/man3/$name.3" ] || fail "man 3 $name: no $prefix/share/man/man3/$name.3 (page or .so stub)"
		done
	done
	if command -v man > /dev/null; then
		for m in "3 free_hugepage_region" "3 hugetlbfs_test_path" "8 hugectl" "8 hugeedit"; do
			# shellcheck disable=SC2086 # section and name
			man -M "$root/share/man" $m 2> /dev/null | grep -q . || fail "man $m finds no page under $prefix/share/man"
		done
		man -M "$root/share/man" 8 hugectl 2> /dev/null | grep -q 'hugectl - ' || fail "man 8 hugectl is not hugectl's page"
	fi
fi
# The measuring tools (issue #10, TLB part): tools, man pages, completions.
for f in bin/tlbmiss_cost bin/cpupcstat; do
	[ -x "$root/$f" ] || fail "$prefix/$f is not installed"
done
if [ -f "$build/man/hugeadm.8" ]; then
	for m in share/man/man8/tlbmiss_cost.8 share/man/man8/cpupcstat.8; do
		[ -e "$root/$m" ] || fail "$prefix/$m is not installed"
	done
fi
for c in tlbmiss_cost cpupcstat; do
	[ -n "$(find "$dest" -path "*bash-completion/completions/$c")" ] || fail "no bash completion for $c"
done
# The configuration (issue #11): its man page and the example, which parses.
if [ -f "$build/man/hugeadm.8" ]; then
	[ -e "$root/share/man/man5/hugekit.conf.5" ] || fail "$prefix/share/man/man5/hugekit.conf.5 is not installed"
fi
[ -f "$root/share/doc/hugekit/hugekit.conf.example" ] || fail "$prefix/share/doc/hugekit/hugekit.conf.example is not installed"
# hugekit.service (issue 11): in systemd's unit directory under the prefix
# (systemd.pc's, else lib/systemd/system), running the installed hugeadm, and
# systemd-analyze verify takes it (ExecStart pointed at the staged hugeadm).
unit=$(find "$root" -path '*/systemd/system/hugekit.service')
[ -n "$unit" ] || fail "hugekit.service is not installed under $prefix/.../systemd/system"
grep -qx "ExecStart=$prefix/bin/hugeadm --apply" "$unit" ||
	fail "$unit: $(grep ExecStart "$unit"), want ExecStart=$prefix/bin/hugeadm --apply"
if command -v systemd-analyze > /dev/null; then
	mkdir "$dest/unit"
	sed "s|^ExecStart=[^ ]*|ExecStart=$root/bin/hugeadm|" "$unit" > "$dest/unit/hugekit.service"
	verr=$(cd "$dest/unit" && systemd-analyze verify --man=no hugekit.service 2>&1) ||
		fail "systemd-analyze verify hugekit.service: $verr"
	[ -z "$verr" ] || fail "systemd-analyze verify hugekit.service: $verr"
fi
# gcc -B PREFIX/share/libhugetlbfs runs PREFIX/share/libhugetlbfs/ld: the installed script.
[ "$(readlink -f "$root/share/libhugetlbfs/ld")" = "$(readlink -f "$root/bin/ld.hugetlbfs")" ] && [ -x "$root/bin/ld.hugetlbfs" ] ||
	fail "share/libhugetlbfs/ld does not lead to an executable bin/ld.hugetlbfs"
for c in pagesize hugeadm hugectl hugeedit; do
	[ -n "$(find "$dest" -path "*bash-completion/completions/$c")" ] ||
		{ echo "check-install: no bash completion for $c" >&2; exit 1; }
done
# The zsh and fish completions (issue #22 item 4): every tool's, installed as
# built into the directories of the cache (HK_ZSH_COMPLETION_DIR,
# HK_FISH_COMPLETION_DIR; relative ones under the prefix), where each shell
# reads them, each a script the shell parses.
comp_dir() {
	local d
	d=$(sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt")
	[ -n "$d" ] || fail "no $1 in $build/CMakeCache.txt"
	[[ $d == /* ]] || d=$prefix/$d
	printf '%s\n' "$d"
}
zdir=$(comp_dir HK_ZSH_COMPLETION_DIR)
fdir=$(comp_dir HK_FISH_COMPLETION_DIR)
for c in pagesize hugeadm hugectl hugeedit tlbmiss_cost cpupcstat; do
	cmp -s "$build/completions/zsh/_$c" "$dest$zdir/_$c" || fail "$zdir/_$c: not installed, or not the built one"
	cmp -s "$build/completions/fish/$c.fish" "$dest$fdir/$c.fish" || fail "$fdir/$c.fish: not installed, or not the built one"
	if command -v zsh > /dev/null; then
		zsh -n "$dest$zdir/_$c" || fail "$zdir/_$c: zsh cannot parse it"
	fi
	if command -v fish > /dev/null; then
		fish -n "$dest$fdir/$c.fish" || fail "$fdir/$c.fish: fish cannot parse it"
	fi
done
# Under /usr and /usr/local, a zsh without configuration searches the directory.
if command -v zsh > /dev/null && [[ $prefix == /usr || $prefix == /usr/local ]]; then
	grep -qxF "$zdir" <<<"$(zsh -fc 'print -l -- $fpath')" || fail "$zdir is not in zsh's fpath"
fi
cat > "$dest/t.c" <<'C'
#include <hugekit/hugekit.h>
#include <stdio.h>
int main(void)
{
	struct hk_ctx *ctx;
	uint64_t base;

	if (hk_new(NULL, &ctx) < 0 || hk_base_page_size(ctx, &base) < 0)
		return 1;
	printf("%s %llu\n", hk_get_library_version(), (unsigned long long)base);
	hk_unref(ctx);
	return 0;
}
C
# The staged tree, moved: libhugekit.pc names the new place (no PKG_CONFIG_SYSROOT_DIR).
mv "$dest" "$dest.moved"
trap 'rm -rf "$dest" "$dest.moved"' EXIT
flags=$(PKG_CONFIG_PATH="$dest.moved$libdir/pkgconfig" pkg-config --cflags --libs libhugekit)
mv "$dest.moved" "$dest"
[[ $flags == *"-L$dest.moved$prefix/"* && $flags == *"-I$dest.moved$prefix/"* ]] ||
	fail "libhugekit.pc moved to $dest.moved$libdir/pkgconfig gave '$flags'"
flags=${flags//"$dest.moved"/"$dest"}
# A sanitizer build's library needs the sanitizer runtime in the program too.
san=()
# (No "cmd | grep -q" here: grep's early exit is cmd's SIGPIPE, a failure under pipefail.)
if [[ $(ldd "$dest$libdir/libhugekit.so.1") == *libasan* ]]; then san=(-fsanitize=address -fsanitize=undefined); fi
# shellcheck disable=SC2086 # pkg-config output is a list of words
cc -Wall -Werror "${san[@]}" "$dest/t.c" -o "$dest/t" $flags
out=$(LD_LIBRARY_PATH="$dest$libdir" "$dest/t")
[ "$out" = "$(awk -F': ' '/^Version:/ { print $2 }' "$pc") $(getconf PAGESIZE)" ] ||
	{ echo "check-install: the installed library said '$out'" >&2; exit 1; }

# The tools: no RUNPATH, no libhugekit.so.
bindir=$(dirname "$(find "$dest" -path '*/bin/hugeadm')")
no_runpath "$bindir"

# A prefix install runs at once (no library of the build tree, none of the cache).
p="$dest/prefix"
cmake --install "$build" --prefix "$p" > /dev/null
statically "$p/bin/hugeadm"
[ -n "$(find "$p" -path '*/systemd/system/hugekit.service')" ] ||
	fail "hugekit.service is not under the install prefix $p"

# Compat names and ldconfig, in a small build of our own: configured for one
# prefix, installed under another, with an ldconfig that only records its calls.
cb="$dest/compat-build"
cat > "$dest/ldconfig" <<SH
#!/bin/sh
if [ "\$1" = -v ]; then echo "$dest/cache/lib: (from test)"; else echo ran >> "$dest/ldconfig.log"; fi
SH
chmod +x "$dest/ldconfig"
cmake -S "$src" -B "$cb" -DHK_COMPAT_LIBHUGETLBFS=ON -DBUILD_TESTING=OFF -DHK_MAN=OFF \
	-DCMAKE_INSTALL_PREFIX="$dest/configured" -DHK_LDCONFIG="$dest/ldconfig" > /dev/null
cmake --build "$cb" -j2 > /dev/null
for pre in "$dest/other" "$dest/cache"; do
	cmake --install "$cb" --prefix "$pre" > /dev/null
	for n in libhugetlbfs.so libhugetlbfs.so.0; do
		f=$(find "$pre" -name "$n")
		[ -n "$f" ] || fail "compat name $n is not under the install prefix $pre"
		[ "$(readlink -f "$f")" = "$(readlink -f "$(dirname "$f")/libhugekit-rt.so.0")" ] ||
			fail "$f does not lead to libhugekit-rt.so.0"
		grep -qx "$f" "$cb/install_manifest.txt" || fail "$f is not in install_manifest.txt"
	done
done
[ ! -e "$dest/configured" ] || fail "an install with --prefix wrote under the configured prefix: $(find "$dest/configured")"
[ "$(cat "$dest/ldconfig.log" 2> /dev/null)" = ran ] ||
	fail "ldconfig ran '$(cat "$dest/ldconfig.log" 2> /dev/null)' times, want once (for the cache directory only)"

# Configured for /usr: staged with DESTDIR, the tools have no RUNPATH either;
# installed under another prefix, they run there.
cmake -S "$src" -B "$cb" -DCMAKE_INSTALL_PREFIX=/usr > /dev/null
cmake --build "$cb" -j2 > /dev/null
DESTDIR="$dest/stage" cmake --install "$cb" > /dev/null
# Under /usr (a distribution's package) libhugekit.pc spells out its
# directories, so that pkg-config leaves the system's -I and -L out of its
# answer (a relative ${pcfiledir}/../../../include is not filtered), and a
# sysroot is PKG_CONFIG_SYSROOT_DIR's business; a multiarch libdir.
spc=$(find "$dest/stage" -name libhugekit.pc)
sdir=$(dirname "$(dirname "$spc")")
if [ "$(pcvar "$spc" libdir)" != "${sdir#"$dest/stage"}" ] || [ "$(pcvar "$spc" prefix)" != /usr ] ||
	[ "$(pcvar "$spc" includedir)" != /usr/include ]; then
	fail "${spc#"$dest/stage"}: prefix $(pcvar "$spc" prefix), libdir $(pcvar "$spc" libdir), includedir $(pcvar "$spc" includedir), want /usr's"
fi
sflags=$(PKG_CONFIG_PATH=$(dirname "$spc") pkg-config --cflags --libs libhugekit)
[ "${sflags% }" = -lhugekit ] || fail "${spc#"$dest/stage"}: pkg-config --cflags --libs gave '$sflags', want -lhugekit alone"
sflags=$(PKG_CONFIG_SYSROOT_DIR="$dest/stage" PKG_CONFIG_PATH=$(dirname "$spc") pkg-config --libs libhugekit)
[[ $sflags == *"-L$sdir "* ]] || fail "${spc#"$dest/stage"} under PKG_CONFIG_SYSROOT_DIR: '$sflags', want -L$sdir"
no_runpath "$dest/stage/usr/bin"
cmake --install "$cb" --prefix "$dest/moved" > /dev/null
statically "$dest/moved/bin/hugeadm"

echo "check-install: installed tree complete; a program linked with pkg-config's flags ran: $out;" \
	"tools with no RUNPATH and no libhugekit.so run from a prefix install; compat names under the prefix and in the manifest"
