#!/usr/bin/env bash
# The layers of DESIGN.md, checked on the source (and the built runtime):
#  1. No /proc or /sys path is spelled outside lib/common. Checked: the C
#     files (*.c, *.h) under lib/ and tools/, but lib/common, with comments
#     removed (cpp -fpreprocessed) and #include lines left out; a string
#     literal in which "proc" or "sys" is a path component, that is, comes
#     right after the opening quote or a '/' and is followed by a '/' or the
#     closing quote ("/proc/meminfo", "sys/kernel/mm", "%s/sys/x", "proc"),
#     is a violation. Paths live in lib/common/paths.h and are used by name.
#  2. The runtime (lib/runtime) and what it compiles in (lib/common) include
#     neither hugekit.h nor libmount; the built libhugekit-rt needs nothing
#     but the C library and the dynamic loader.
# check-layers.sh [SRC]: SRC defaults to $HK_SOURCE_DIR. A self-test on a
# made-up tree runs first, so that the check cannot pass by finding nothing.
set -euo pipefail
src=${1:-${HK_SOURCE_DIR:?}}
build=${HK_BUILD_DIR:-}

# paths FILE...: "file: literal" for each literal naming /proc or /sys.
paths() {
	local f
	for f in "$@"; do
		cpp -fpreprocessed -dD -P -w "$f" 2> /dev/null |
			grep -v '^[[:space:]]*#[[:space:]]*include' |
			grep -oE '"([^"\\]|\\.)*"' |
			grep -E '^"(.*/)?(proc|sys)(/.*)?"$' |
			sed "s|^|$f: |" || true
	done
}

# includes FILE...: "file: line" for each forbidden #include.
includes() {
	grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*/)?(hugekit\.h|libmount[^>"]*)[>"]' "$@" || true
}

# scan DIR: every violation of 1 and 2 in the tree at DIR.
scan() {
	local dir=$1
	local -a code rt
	mapfile -t code < <(cd "$dir" && find lib tools -path lib/common -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
	mapfile -t rt < <(cd "$dir" && find lib/runtime lib/common -type f \( -name '*.c' -o -name '*.h' \) | sort)
	(
		cd "$dir"
		[ ${#code[@]} -eq 0 ] || paths "${code[@]}"
		[ ${#rt[@]} -eq 0 ] || includes "${rt[@]}"
	)
}

# Self-test: a tree with one violation of each kind, and look-alikes that are not.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib/runtime" "$tmp/lib/common" "$tmp/tools"
cat > "$tmp/lib/runtime/bad.c" << 'C'
#include <sys/mman.h>
#include <hugekit/hugekit.h>
/* "/proc/meminfo" in a comment is fine */
static const char *a = "sys/kernel/mm/hugepages/hugepages-%lukB";
static const char *b = "a system/processor"; // "/sys/x"
C
cat > "$tmp/tools/bad.c" << 'C'
static const char *c = "%s/proc/self/maps";
C
echo 'static const char *ok = "/proc/meminfo";' > "$tmp/lib/common/paths.c"
expected="lib/runtime/bad.c: \"sys/kernel/mm/hugepages/hugepages-%lukB\"
tools/bad.c: \"%s/proc/self/maps\"
lib/runtime/bad.c:2:#include <hugekit/hugekit.h>"
got=$(scan "$tmp")
if [ "$got" != "$expected" ]; then
	printf 'check-layers: the self-test found\n%s\ninstead of\n%s\n' "$got" "$expected" >&2
	exit 1
fi

fail=0
found=$(scan "$src")
if [ -n "$found" ]; then
	echo "check-layers: /proc or /sys spelled outside lib/common, or a forbidden include in the runtime:" >&2
	echo "$found" >&2
	fail=1
fi
rtlib=$build/lib/libhugekit-rt.so
if [ -n "$build" ] && [ -e "$rtlib" ] && command -v readelf > /dev/null; then
	extra=$(readelf -d "$rtlib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -vE '^(libc\.so\.6|ld-linux[-a-z0-9_.]*\.so\.[0-9]+)$' || true)
	if [ -n "$extra" ]; then
		echo "check-layers: libhugekit-rt needs more than libc: $extra" >&2
		fail=1
	fi
fi
[ $fail -eq 0 ] || exit 1
echo "check-layers: no /proc or /sys outside lib/common; the runtime needs libc only"
