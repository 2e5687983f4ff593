#!/usr/bin/env bash
# skip-summary.sh [PRESET...]: one line that counts what the last ctest run of
# each preset (default: dev release) skipped, and why, from
# build/PRESET/Testing/Temporary/LastTest.log:
#
#	skips: dev 3, release 3 (no 1 GiB pages on this machine: 4; ...)
#
# A skip is a bats line "ok N NAME # skip REASON" (tests/common.bash: hk_skip,
# or hk_missing without HK_REQUIRE_LIVE=1), a line "SKIP: REASON" of a script
# that skips as a whole (exit 77: the VM tests, the benchmark) or of a check that
# left a part out, and a line "skip REASON" of the VM guest's report. Fails,
# saying so, when a preset has no log (its tests did not run).
# Run at the end of the README's test command.
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${HK_SKIP_SUMMARY_BUILD:-$src/build}
[ $# -gt 0 ] || set -- dev release

counts=()
reasons=$(mktemp)
trap 'rm -f "$reasons"' EXIT
for preset in "$@"; do
	log=$build/$preset/Testing/Temporary/LastTest.log
	if [ ! -r "$log" ]; then
		echo "skip-summary: no $log: did ctest --preset $preset run?" >&2
		exit 1
	fi
	n=0
	while IFS= read -r reason; do
		printf '%s\n' "${reason:-(no reason given)}" >> "$reasons"
		n=$((n + 1))
	done < <(sed -nE \
		-e 's/^ok [0-9]+ .* # skip ?(.*)$/\1/p' \
		-e 's/^SKIP: (.*)$/\1/p' \
		-e 's/^skip (.*)$/\1/p' "$log")
	counts+=("$preset $n")
done

line="skips: $(IFS=,; echo "${counts[*]}" | sed 's/,/, /g')"
if [ -s "$reasons" ]; then
	line+=" ($(sort "$reasons" | uniq -c | sort -k1,1nr -k2 |
		sed -E 's/^ *([0-9]+) (.*)$/\2: \1/' | paste -sd ';' | sed 's/;/; /g'))"
fi
echo "$line"
