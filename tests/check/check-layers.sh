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
#  3. tools/ include, of lib/, only the public headers and the lib/common
#     headers that docs/ARCHITECTURE.md lists (between its "tool-includes"
#     markers); never lib/core's or lib/runtime's own headers.
#  4. Only the public API carries hk_: every hk_ name in the C files under
#     lib/ and tools/ (comments removed) is one that lib/include's public
#     headers declare. Internal code has its layer's prefix: hkc_ (lib/common),
#     hkl_ (lib/core), hkt_ (tools/common).
#  5. tools/ read libhugekit's plan items through hk_plan_item_at(), whatever
#     the size the library's items have (hk_plan_item.size): no tool takes
#     the array of hk_plan_items() (a call with a second argument but NULL).
# The rules are docs/ARCHITECTURE.md's ("Rules the checks hold").
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

# allowed DIR: the lib/common headers tools may include, from DIR's docs/ARCHITECTURE.md.
allowed() {
	sed -n '/<!-- tool-includes: begin -->/,/<!-- tool-includes: end -->/s/^[[:space:]]*- \([a-z_.]*\.h\)$/\1/p' \
		"$1/docs/ARCHITECTURE.md"
}

# tool_includes DIR FILE...: "file:line: #include" for each quoted include of
# a header of lib/ that is not in the list (tools' own headers are fine).
tool_includes() {
	local dir=$1 f line h
	shift
	local -A ok=() lib=()
	while read -r h; do ok[$h]=1; done < <(allowed "$dir")
	while read -r h; do lib[${h##*/}]=1; done < <(cd "$dir" && find lib/core lib/runtime lib/common -name '*.h')
	for f in "$@"; do
		grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$f" |
			while IFS= read -r line; do
				h=${line#*\"}
				h=${h%%\"*}
				h=${h##*/}
				if [ -n "${lib[$h]:-}" ] && [ -z "${ok[$h]:-}" ] && [ ! -e "$(dirname "$f")/$h" ] &&
					[ ! -e "tools/common/$h" ]; then
					echo "$f:$line"
				fi
			done
	done
}

# arrays FILE...: "file:line: text" for each hk_plan_items() call that takes the array.
arrays() {
	grep -HnE 'hk_plan_items[[:space:]]*\([^,]*,[[:space:]]*[^N[:space:]]' "$@" || true
}

# prefixed DIR: "file: name" for each hk_ name of lib/ or tools/ that no public header declares.
prefixed() {
	local dir=$1 f n
	local -A pub=()
	while read -r n; do pub[$n]=1; done < <(cat "$dir"/lib/include/hugekit/hugekit.h "$dir"/lib/include/hugetlbfs.h 2> /dev/null |
		grep -oE '\bhk_[A-Za-z0-9_]+' | sort -u)
	while read -r f; do
		while read -r n; do
			[ -n "${pub[$n]:-}" ] || echo "$f: $n"
		done < <(cpp -fpreprocessed -dD -P -w "$dir/$f" 2> /dev/null | grep -oE '\bhk_[A-Za-z0-9_]+' | sort -u)
	done < <(cd "$dir" && find lib tools -path lib/include -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
}

# scan DIR: every violation of 1, 2, 3 and 4 in the tree at DIR.
scan() {
	local dir=$1
	local -a code rt tools
	mapfile -t code < <(cd "$dir" && find lib tools -path lib/common -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
	mapfile -t rt < <(cd "$dir" && find lib/runtime lib/common -type f \( -name '*.c' -o -name '*.h' \) | sort)
	mapfile -t tools < <(cd "$dir" && find tools -type f \( -name '*.c' -o -name '*.h' \) | sort)
	(
		cd "$dir"
		[ ${#code[@]} -eq 0 ] || paths "${code[@]}"
		[ ${#rt[@]} -eq 0 ] || includes "${rt[@]}"
		[ ${#tools[@]} -eq 0 ] || tool_includes "$dir" "${tools[@]}"
		[ ${#tools[@]} -eq 0 ] || arrays "${tools[@]}"
	)
	prefixed "$dir"
}

# Self-test: a tree with one violation of each kind, and look-alikes that are not.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib/runtime" "$tmp/lib/common" "$tmp/lib/core" "$tmp/tools/common" "$tmp/docs"
printf '<!-- tool-includes: begin -->\n- parse.h\n<!-- tool-includes: end -->\n- path.h\n' > "$tmp/docs/ARCHITECTURE.md"
: > "$tmp/lib/common/parse.h"
: > "$tmp/lib/common/path.h"
: > "$tmp/lib/core/internal.h"
: > "$tmp/tools/common/util.h"
printf '#include "parse.h"\n#include "util.h"\n#include <hugekit/hugekit.h>\n#include "path.h"\n#include "internal.h"\n' > "$tmp/tools/inc.c"
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
printf 'n = hk_plan_items(plan, NULL);\nn = hk_plan_items(plan, &items);\n' > "$tmp/tools/items.c"
echo 'static const char *ok = "/proc/meminfo";' > "$tmp/lib/common/paths.c"
mkdir -p "$tmp/lib/include/hugekit"
echo 'int hk_public(void); int hk_plan_items(void);' > "$tmp/lib/include/hugekit/hugekit.h"
printf 'int hk_public(void) { return hkl_fine(); }\n/* hk_in_a_comment */\nstatic int hk_inner(void);\n' > "$tmp/lib/core/names.c"
expected="lib/runtime/bad.c: \"sys/kernel/mm/hugepages/hugepages-%lukB\"
tools/bad.c: \"%s/proc/self/maps\"
lib/runtime/bad.c:2:#include <hugekit/hugekit.h>
tools/inc.c:4:#include \"path.h\"
tools/inc.c:5:#include \"internal.h\"
tools/items.c:2:n = hk_plan_items(plan, &items);
lib/core/names.c: hk_inner"
got=$(scan "$tmp")
if [ "$got" != "$expected" ]; then
	printf 'check-layers: the self-test found\n%s\ninstead of\n%s\n' "$got" "$expected" >&2
	exit 1
fi

fail=0
found=$(scan "$src")
if [ -n "$found" ]; then
	echo "check-layers: /proc or /sys spelled outside lib/common, a forbidden include in the runtime, a header of lib/ a tool may not include, a tool that indexes hk_plan_items' array, or an hk_ name that is not public API (docs/ARCHITECTURE.md):" >&2
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
n_allowed=$(allowed "$src" | wc -l)
[ "$n_allowed" -eq 1 ] && headers=header || headers=headers
echo "check-layers: no /proc or /sys outside lib/common; the runtime needs libc only; tools include of lib/ only $n_allowed listed lib/common $headers and read plan items through hk_plan_item_at; every hk_ name is public API"
