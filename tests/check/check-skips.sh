#!/usr/bin/env bash
# Every skip of a bats test goes through tests/common.bash: hk_missing (a failure
# under HK_REQUIRE_LIVE=1, which the README's test command sets) or hk_skip
# (allowed, counted by tests/skip-summary.sh). A bare `skip` would be neither.
set -euo pipefail
src=${HK_SOURCE_DIR:?}
cd "$src"
found=$(grep -rnE '(^|[;&|{(!]|then|else|do)[[:space:]]*skip([[:space:]]|$)' tests \
	--include='*.bats' --include='*.bash' | grep -v '^tests/common\.bash:' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' || true)
if [ -n "$found" ]; then
	echo "check-skips: a bare skip (use hk_missing or hk_skip, tests/common.bash):" >&2
	echo "$found" >&2
	exit 1
fi
echo "check-skips: every skip is hk_missing or hk_skip"
