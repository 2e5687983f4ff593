#!/usr/bin/env bash
# libhugekit's and libhugekit-rt's ABI against the baselines committed in
# tests/abi (abidw of the dev build): abidiff (Debian abigail-tools) fails on
# any difference, a symbol or a public type (struct hk_plan_item's size)
# changed, removed or added, so that every ABI change is made on purpose,
# with tests/abi/update.sh in the same commit. A build without debug
# information (the release preset) compares the symbols only, and says so.
set -euo pipefail
src=${HK_SOURCE_DIR:?} build=${HK_BUILD_DIR:?}
. "$src/tests/abi/abi.bash"
command -v abidiff > /dev/null || {
	echo "check-abidiff: abidiff not found (Debian abigail-tools, which the README's test command installs)" >&2
	exit 1
}
bad=0
for lib in libhugekit.so.1 libhugekit-rt.so.0; do
	base="$src/tests/abi/${lib%%.so*}.abi"
	if readelf -S "$build/lib/$lib" | grep '\.debug_info' > /dev/null; then
		what="symbols and types"
	else
		what="symbols (no debug information in this build)"
	fi
	if out=$(abidiff --suppressions "$src/tests/abi/coverage.suppr" --headers-dir1 "$src/lib/include" \
		--headers-dir2 "$src/lib/include" --no-show-locs "$base" "$build/lib/$lib" 2>&1); then
		echo "check-abidiff: $lib: $what as in tests/abi"
	else
		printf 'check-abidiff: %s differs from %s (%s):\n%s\n' "$lib" "$base" "$what" "$out" >&2
		echo "check-abidiff: if the change is meant, run tests/abi/update.sh and commit the baseline with it" >&2
		bad=1
	fi
done
exit "$bad"
