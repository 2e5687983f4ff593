#!/usr/bin/env bash
# The public header compiles alone, as C and as C++, with every warning an error.
set -euo pipefail
src=${HK_SOURCE_DIR:?} build=${HK_BUILD_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc=(-I "$src/lib/include" -I "$build/include")
n=0
for h in hugekit/hugekit.h hugetlbfs.h; do
	printf '#include <%s>\nint main(void) { return 0; }\n' "$h" > "$tmp/t.c"
	for std in c99 gnu17; do
		cc -std=$std -Wall -Wextra -Wpedantic -Werror "${inc[@]}" -c "$tmp/t.c" -o "$tmp/t.o"
		n=$((n + 1))
	done
	if command -v c++ > /dev/null; then
		cp "$tmp/t.c" "$tmp/t.cc"
		c++ -Wall -Wextra -Wpedantic -Werror "${inc[@]}" -c "$tmp/t.cc" -o "$tmp/t.o"
		n=$((n + 1))
	fi
	echo "check-headers: $h compiles alone"
done
echo "check-headers: $n compilations, all clean"
