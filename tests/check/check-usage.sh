#!/usr/bin/env bash
# Every tool: --help on stdout with exit 0, --version works, an unknown option
# is exit 1 with the "Try" line and nothing on stdout (util-linux checkusage.sh).
set -uo pipefail
build=${HK_BUILD_DIR:?}
fail=0 n=0
tools=(pagesize hugeadm hugectl hugeedit)
# The measuring tools (issue #10, TLB part).
tools+=(tlbmiss_cost cpupcstat)
for t in "${tools[@]}"; do
	exe="$build/tools/$t"
	out=$("$exe" --help 2> /dev/null); rc=$?
	if [ $rc -ne 0 ] || [[ "$out" != Usage:* ]]; then echo "check-usage: $t --help: exit $rc or no Usage on stdout" >&2; fail=1; fi
	out=$("$exe" --version 2>&1); rc=$?
	if [ $rc -ne 0 ] || [[ "$out" != "$t from hugekit "* ]]; then echo "check-usage: $t --version: exit $rc, '$out'" >&2; fail=1; fi
	out=$("$exe" --no-such-option 2> "${TMPDIR:-/tmp}/hk-usage.$$"); rc=$?
	err=$(cat "${TMPDIR:-/tmp}/hk-usage.$$"); rm -f "${TMPDIR:-/tmp}/hk-usage.$$"
	if [ $rc -ne 1 ] || [ -n "$out" ] || [[ "$err" != *"Try '$t --help' for more information."* ]]; then
		echo "check-usage: $t --no-such-option: exit $rc, stdout '$out', stderr '$err'" >&2
		fail=1
	fi
	n=$((n + 1))
	echo "check-usage: $t"
done
[ $fail -eq 0 ] || exit 1
echo "check-usage: $n tools pass"
