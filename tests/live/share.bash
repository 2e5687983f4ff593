# shellcheck shell=bash
# Shared by the live tests of shared text (share-text.bats,
# hugeadm-shared-text.bats): their set-up and their private mount namespace.

load live

PROBE="$HK_BUILD_DIR/tests/rt-share-probe"

# The file's set-up: skip (with the reason) where the tests cannot run, also
# without the commands in SHARE_NEEDS; then take the live lock and save the
# pool, which each test finds with 8 free pages and which is put back after.
setup_file() {
	local c
	live_requirements
	# shellcheck disable=SC2086 # a list of words
	for c in unshare setpriv ${SHARE_NEEDS:-}; do
		command -v "$c" > /dev/null || skip "$c is not installed"
	done
	getent passwd nobody > /dev/null || skip "no user nobody"
	getent passwd daemon > /dev/null || skip "no user daemon"
	[ -x "$PROBE" ] || skip "$PROBE is not built"
	live_lock
	live_save
}

setup() {
	live_pool_free 8
}

teardown_file() {
	live_restore
}

# share_ns SCRIPT: the bash SCRIPT (-euo pipefail) in a new mount namespace
# (unshare -m --propagation private) with an empty tmpfs on /mnt and a 1777
# hugetlbfs mount at /mnt/h: the files and their pages go with the namespace.
# In it, P is the probe, "as USER CMD..." runs CMD with that user's uid and
# gid only, and pages prints HugePages_Free.
share_ns() {
	unshare -m --propagation private env PATH="$PATH" P="$PROBE" ASAN_OPTIONS=detect_leaks=0 \
		bash -euo pipefail -c '
		as() { local u=$1; shift; setpriv --reuid "$u" --regid "$(id -g "$u")" --clear-groups -- "$@"; }
		pages() { sed -n "s/^HugePages_Free: *//p" /proc/meminfo; }
		mount -t tmpfs -o mode=0755 hk-share /mnt
		mkdir /mnt/h && mount -t hugetlbfs -o mode=1777 none /mnt/h
		'"$1"
}
