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
		hk_need_cmd "$c" util-linux
	done
	hk_need_user nobody
	hk_need_user daemon
	hk_need_built "$PROBE"
	live_lock
	live_save
	# What nobody runs, where nobody can reach it wherever the checkout is
	# (removed by live_restore).
	SHARE_STAGE=$(hk_stage_for_user tests/rt-share-probe tools/hugeadm \
		tests/share-hold tests/share-hold-2m tests/share-hold-nopie)
	export SHARE_STAGE
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
# In it, P is the probe and hugeadm the one of PATH, both copies that every user
# can reach (SHARE_STAGE), "as USER CMD..." runs CMD with that user's uid and
# gid only, and pages prints HugePages_Free.
share_ns() {
	unshare -m --propagation private env PATH="$SHARE_STAGE/tools:$PATH" \
		P="$SHARE_STAGE/tests/rt-share-probe" ASAN_OPTIONS=detect_leaks=0 \
		bash -euo pipefail -c '
		as() { local u=$1; shift; setpriv --reuid "$u" --regid "$(id -g "$u")" --clear-groups -- "$@"; }
		pages() { sed -n "s/^HugePages_Free: *//p" /proc/meminfo; }
		mount -t tmpfs -o mode=0755 hk-share /mnt
		mkdir /mnt/h && mount -t hugetlbfs -o mode=1777 none /mnt/h
		'"$1"
}
