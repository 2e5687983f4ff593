#!/usr/bin/env bash
# libhugekit exports exactly the symbols of lib/core/libhugekit.sym, each at a
# version node, and every symbol of the .sym file is declared in the public header.
set -euo pipefail
src=${HK_SOURCE_DIR:?} build=${HK_BUILD_DIR:?}
lib=$(ls "$build"/lib/libhugekit.so.* | head -n 1)
sym="$src/lib/core/libhugekit.sym"
hdr="$src/lib/include/hugekit/hugekit.h"

listed=$(grep -E '^\s+hk_[a-z0-9_]+;' "$sym" | tr -d ' \t;' | sort)
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | grep -v '^HK_' | sed 's/@.*//' | sort)
if [ "$listed" != "$exported" ]; then
	echo "check-abi: exported symbols differ from $sym:" >&2
	diff <(echo "$listed") <(echo "$exported") >&2 || true
	exit 1
fi
unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '$3 ~ /^hk_/ && $3 !~ /@@?HK_/ { print $3 }')
if [ -n "$unversioned" ]; then
	echo "check-abi: symbols without a version node: $unversioned" >&2
	exit 1
fi
missing=0
for s in $listed; do
	grep -qE "\b$s\(" "$hdr" || { echo "check-abi: $s is not declared in $hdr" >&2; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
echo "check-abi: $(echo "$listed" | wc -l) symbols exported, versioned and declared"
