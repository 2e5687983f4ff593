#!/usr/bin/env bash
# The tools use libhugekit's public API only (docs/ARCHITECTURE.md), also now
# that they link a static copy of it (issue #22 item 5, a fast start), where
# the linker no longer stops a tool that calls a function libhugekit.so hides.
# Checked on the built objects: every symbol the tools' object files
# (tools/, tools/common, tools/hugeadm: the build tree's tools/CMakeFiles)
# reference and do not define themselves, and that libhugekit's objects
# (lib/core and lib/common: hugekit_obj, hk_common) define, or whose name
# starts with hk_, must be one lib/core/libhugekit.sym exports.
# A self-test on made-up objects runs first, so that the check cannot pass by
# finding nothing; and the tools must reference some exported names.
# Needs HK_BUILD_DIR (a configured and built tree) and HK_SOURCE_DIR.
set -euo pipefail
build=${HK_BUILD_DIR:?}
src=${HK_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# exported SYMFILE: the names a version script exports, one a line.
exported() {
	sed -n 's/^[[:space:]]*\(hk_[A-Za-z0-9_]*\);.*/\1/p' "$1" | sort -u
}

# names OPTION DIR: the global symbol names nm OPTION lists for DIR's *.o files.
names() {
	find "$2" -name '*.o' -print0 | xargs -0 -r nm -P "$1" 2> /dev/null |
		awk 'NF >= 2 && $1 !~ /:$/ { print $1 }' | sort -u
}

# violations TOOLDIR LIBDIR SYMFILE: the names the tools reach that libhugekit
# does not export, one a line. Also writes the exported names the tools use
# to $tmp/used.
violations() {
	local tools=$1 lib=$2 sym=$3
	names --defined-only "$tools" > "$tmp/tooldef"
	names -u "$tools" | comm -23 - "$tmp/tooldef" > "$tmp/undef"
	names --defined-only "$lib" > "$tmp/libdef"
	exported "$sym" > "$tmp/exported"
	comm -12 "$tmp/undef" "$tmp/exported" > "$tmp/used"
	{
		comm -12 "$tmp/undef" "$tmp/libdef"
		grep '^hk_' "$tmp/undef" || true
	} | sort -u | comm -23 - "$tmp/exported"
}

# The self-test: a "tool" that calls an exported function and a hidden one.
mkdir -p "$tmp/self/tools" "$tmp/self/lib"
printf 'HK_1.0 {\nglobal:\n\thk_pub;\nlocal:\n\t*;\n};\n' > "$tmp/self/lib.sym"
printf 'int hk_pub(void);\nint hk_pub(void) { return 1; }\nint hkl_priv(void);\nint hkl_priv(void) { return 2; }\n' \
	> "$tmp/self/lib.c"
printf 'int hk_pub(void);\nint hkl_priv(void);\nint hk_gone(void);\nint t(void);\nint t(void) { return hk_pub() + hkl_priv() + hk_gone(); }\n' \
	> "$tmp/self/tool.c"
cc -c -o "$tmp/self/lib/lib.o" "$tmp/self/lib.c"
cc -c -o "$tmp/self/tools/tool.o" "$tmp/self/tool.c"
got=$(violations "$tmp/self/tools" "$tmp/self/lib" "$tmp/self/lib.sym" | paste -sd ' ')
if [ "$got" != "hk_gone hkl_priv" ] || [ "$(cat "$tmp/used")" != hk_pub ]; then
	echo "check-tools-api: the self-test found '$got' (and used '$(paste -sd ' ' "$tmp/used")')" \
		"instead of 'hk_gone hkl_priv' (and 'hk_pub')" >&2
	exit 1
fi

tools=$build/tools/CMakeFiles
lib=$build/lib/CMakeFiles
for d in "$tools/pagesize.dir" "$tools/hugeadm_obj.dir" "$tools/hk_tools_common.dir" \
	"$lib/hugekit_obj.dir" "$lib/hk_common.dir"; do
	if [ -z "$(find "$d" -name '*.o' -print -quit 2> /dev/null)" ]; then
		echo "check-tools-api: no object files under $d: build $build first" >&2
		exit 1
	fi
done
mkdir "$tmp/lib"
cp -r "$lib/hugekit_obj.dir" "$lib/hk_common.dir" "$tmp/lib/"
bad=$(violations "$tools" "$tmp/lib" "$src/lib/core/libhugekit.sym")
if [ -n "$bad" ]; then
	echo "check-tools-api: the tools reach what libhugekit.so does not export (lib/core/libhugekit.sym):" >&2
	while read -r s; do
		echo "  $s, in: $(cd "$tools" && find . -name '*.o' -print0 |
			xargs -0 nm -A -u 2> /dev/null | awk -v s="$s" '$NF == s { sub(/:.*/, "", $1); print $1 }' |
			paste -sd ' ')" >&2
	done <<< "$bad"
	exit 1
fi
n=$(grep -c . "$tmp/used" || true)
if [ "$n" -lt 20 ]; then
	echo "check-tools-api: the tools use only $n of libhugekit's exported names: the parser found nothing?" >&2
	exit 1
fi
echo "check-tools-api: the tools use $n exported names of libhugekit, and nothing else of it"
