#!/usr/bin/env bash
# The install tree is complete and usable: tools, the library with its soname,
# the header and version header, libhugekit.pc, man pages and completions; a
# program built with `pkg-config --cflags --libs libhugekit` against the
# installed copy runs.
set -euo pipefail
build=${HK_BUILD_DIR:?}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
DESTDIR="$dest" cmake --install "$build" > /dev/null
prefix=$(awk -F= '/^prefix=/ { print $2 }' "$build/libhugekit.pc")
root="$dest$prefix"
libdir=$(awk -F= '/^libdir=/ { print $2 }' "$build/libhugekit.pc")
want=(bin/pagesize bin/hugeadm bin/hugectl include/hugekit/hugekit.h include/hugekit/version.h include/hugetlbfs.h)
for f in "${want[@]}"; do
	[ -e "$root/$f" ] || { echo "check-install: $prefix/$f is not installed" >&2; exit 1; }
done
for f in "$dest$libdir/libhugekit.so.1" "$dest$libdir/libhugekit-rt.so.0" "$dest$libdir/pkgconfig/libhugekit.pc"; do
	[ -e "$f" ] || { echo "check-install: ${f#"$dest"} is not installed" >&2; exit 1; }
done
if [ -f "$build/man/hugeadm.8" ]; then
	for m in share/man/man1/pagesize.1 share/man/man8/hugeadm.8 share/man/man1/hugectl.1 share/man/man7/libhugekit-rt.7 share/man/man3/get_huge_pages.3; do
		[ -e "$root/$m" ] || { echo "check-install: $prefix/$m is not installed" >&2; exit 1; }
	done
fi
for c in pagesize hugeadm hugectl; do
	find "$dest" -path "*bash-completion/completions/$c" | grep -q . ||
		{ echo "check-install: no bash completion for $c" >&2; exit 1; }
done
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
flags=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$dest$libdir/pkgconfig" pkg-config --cflags --libs libhugekit)
# A sanitizer build's library needs the sanitizer runtime in the program too.
san=()
if ldd "$dest$libdir/libhugekit.so.1" | grep -q libasan; then san=(-fsanitize=address,undefined); fi
# shellcheck disable=SC2086 # pkg-config output is a list of words
cc -Wall -Werror "${san[@]}" "$dest/t.c" -o "$dest/t" $flags
out=$(LD_LIBRARY_PATH="$dest$libdir" "$dest/t")
[ "$out" = "$(awk -F': ' '/^Version:/ { print $2 }' "$build/libhugekit.pc") $(getconf PAGESIZE)" ] ||
	{ echo "check-install: the installed library said '$out'" >&2; exit 1; }
echo "check-install: installed tree complete; a program linked with pkg-config's flags ran: $out"
