# shellcheck shell=sh
# Sourced by the guest scripts of tests/vm (copied to the guest as
# /hk/guest-lib.sh): the counters and the `ok NAME` / `not ok NAME` lines
# that the VM's /init counts.

passed=0
failed=0

# check NAME CMD...: runs CMD, reports and counts the result.
check() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		echo "ok $name"
		passed=$((passed + 1))
	else
		echo "not ok $name"
		[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
}

# show CMD...: prints CMD's output as `#` lines, for the log.
show() {
	echo "# \$ $*"
	"$@" 2>&1 | sed 's/^/#   /'
}

# equals WANT CMD...: CMD prints exactly WANT.
equals() {
	want=$1
	shift
	got=$("$@") || return 1
	[ "$got" = "$want" ] || {
		echo "want '$want', got '$got'"
		return 1
	}
}
