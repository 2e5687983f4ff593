#!/usr/bin/env bats
# The machine-wide lock: /run/hugekit/hugekit.lock, where only root can create
# or open it. Every test runs in a private mount namespace with a tmpfs over
# /run, so the machine's /run is never touched; the change each run makes is
# a write of khugepaged's pages_to_scan with the value it already has (saved
# and restored all the same), or a small pool change that live_restore undoes.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
	hk_need_cmd unshare util-linux
	hk_need_cmd setpriv util-linux
	hk_need_user nobody
}

teardown_file() {
	live_restore
}

D=/sys/kernel/mm/hugepages/hugepages-2048kB

# in_ns SCRIPT: run SCRIPT (bash, -e) in a private mount namespace whose /run is an empty tmpfs.
in_ns() {
	unshare -m --propagation private bash -ec "mount -t tmpfs -o mode=755 tmpfs /run; $1"
}

# The harmless change: pages_to_scan written with its own value.
same() {
	echo "--thp-khugepaged-pages $(cat /sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan)"
}

AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"

@test "the lock is /run/hugekit/hugekit.lock: 0755 root directory, 0600 root file; nobody can neither open nor replace it" {
	run --separate-stderr in_ns "
		hugeadm $(same)
		stat -c '%a %U %G %F' /run/hugekit /run/hugekit/hugekit.lock
		$AS_NOBODY flock -n /run/hugekit/hugekit.lock true 2>&1 || echo nobody cannot open it
		$AS_NOBODY ln -s /etc/shadow /run/hugekit/x 2>&1 || echo nobody cannot link there
		$AS_NOBODY rm -f /run/hugekit/hugekit.lock 2>&1 || echo nobody cannot remove it"
	assert_success
	assert_line --index 0 "755 root root directory"
	assert_line --index 1 "600 root root regular empty file"
	assert_line "nobody cannot open it"
	assert_line "nobody cannot link there"
	assert_line "nobody cannot remove it"
	assert_equal "$stderr" ""
}

@test "a /run/hugekit owned by nobody, or writable by others: an error naming it, exit 1, nothing changed" {
	local before
	before=$(live_snapshot)
	run --separate-stderr in_ns "
		mkdir /run/hugekit && chown nobody /run/hugekit
		rc=0; hugeadm --pool-pages-min 2M:+1 || rc=\$?
		ls -A /run/hugekit; exit \$rc"
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "$(printf '%s\n' \
		"hugeadm:ERROR: /run/hugekit: owned by uid $(id -u nobody), not root: the lock is not taken there (remove it)" \
		"hugeadm:ERROR: cannot take the lock: Operation not permitted")"
	run --separate-stderr in_ns "
		mkdir -m 1777 /run/hugekit
		rc=0; hugeadm --pool-pages-min 2M:+1 || rc=\$?
		ls -A /run/hugekit; exit \$rc"
	assert_failure 1
	assert_output ""
	[[ "$stderr" == "hugeadm:ERROR: /run/hugekit: mode 1777 lets other users write to it: the lock is not taken there"* ]]
	assert_equal "$(live_snapshot)" "$before"
}

@test "a symbolic link for the directory or the lock file: an error, nothing created where it points" {
	local before
	before=$(live_snapshot)
	run --separate-stderr in_ns "
		mkdir /run/elsewhere && ln -s /run/elsewhere /run/hugekit
		rc=0; hugeadm --pool-pages-min 2M:+1 || rc=\$?
		ls -A /run/elsewhere; exit \$rc"
	assert_failure 1
	assert_output ""
	[[ "$stderr" == "hugeadm:ERROR: /run/hugekit: not a directory (a symbolic link?): the lock is not taken there"* ]]
	run --separate-stderr in_ns "
		mkdir /run/hugekit && ln -s /run/created-by-root /run/hugekit/hugekit.lock
		rc=0; hugeadm --pool-pages-min 2M:+1 || rc=\$?
		test ! -e /run/created-by-root; exit \$rc"
	assert_failure 1
	[[ "$stderr" == "hugeadm:ERROR: /run/hugekit/hugekit.lock: a symbolic link: the lock is not taken there"* ]]
	assert_equal "$(live_snapshot)" "$before"
}

@test "a user's flock on the old /run/lock/hugekit.lock no longer blocks hugeadm" {
	run --separate-stderr in_ns "
		mkdir -p -m 1777 /run/lock
		$AS_NOBODY bash -c 'exec 9> /run/lock/hugekit.lock; flock 9; echo held; exec sleep 60' > /run/ready &
		holder=\$!
		until [ -s /run/ready ]; do sleep 0.1; done
		hugeadm --lock-timeout 1 $(same)
		kill \$holder"
	assert_success
	assert_equal "$stderr" ""
}

@test "two root runs still serialize on the lock" {
	local i
	# A root holder: hugeadm waits, then gives up after --lock-timeout.
	run --separate-stderr in_ns "
		mkdir -m 755 /run/hugekit
		flock /run/hugekit/hugekit.lock -c 'echo held > /run/ready; exec sleep 60' &
		holder=\$!
		until [ -s /run/ready ]; do sleep 0.1; done
		hugeadm --lock-timeout 1 $(same) || echo status \$?
		stat -c %a /run/hugekit/hugekit.lock
		kill \$holder"
	assert_success
	# flock(1) made the file 0644; hugeadm made it 0600 again.
	assert_output "$(printf '%s\n' "status 1" 600)"
	assert_equal "$stderr" "$(printf '%s\n' \
		"hugeadm:WARNING: another program is changing the huge page set-up; waiting up to 1 s" \
		"hugeadm:ERROR: another program kept the huge page set-up locked for 1 s (see --lock-timeout); nothing was changed")"
	# Concurrent relative changes all count: none read the pool while another writes it.
	echo 0 > "$D/nr_overcommit_hugepages"
	echo 0 > "$D/nr_hugepages"
	run --separate-stderr in_ns "
		for i in 1 2 3 4 5; do hugeadm --pool-pages-min 2M:+1 2> /dev/null & done
		wait"
	[ "$(cat "$D/nr_hugepages")" -eq 5 ] || [ "$(cat "$D/free_hugepages")" -lt 5 ] ||
		fail "5 concurrent +1 runs left nr_hugepages at $(cat "$D/nr_hugepages")"
	[ "$(cat "$D/nr_hugepages")" -eq 5 ] || hk_skip "the kernel could not give 5 free 2 MiB pages"
}
