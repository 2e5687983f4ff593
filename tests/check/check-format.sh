#!/usr/bin/env bash
# clang-format agrees with every C file of the tree.
set -euo pipefail
src=${HK_SOURCE_DIR:?}
if ! command -v clang-format > /dev/null; then
	# A check that cannot run has not passed (the test command installs it).
	echo "check-format: clang-format is not installed (apt-get install clang-format): nothing was checked" >&2
	exit 1
fi
cd "$src"
mapfile -t files < <(git ls-files '*.c' '*.h' 2> /dev/null || find lib tools tests -name '*.[ch]')
clang-format --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted"
