#!/usr/bin/env bats
# A set-user-ID and a file-capability copy of hugeadm, run as nobody, replay
# the audit's cases (issue #19): --check=/etc/shadow prints no line of it; a
# --generate --config through a directory whose name holds a unit section is
# refused and writes nothing; nobody's own 0666 configuration is refused; the
# owner check of /etc/hugekit/hugekit.conf holds with capabilities (euid not
# 0); a problem in a root-only configuration is said without its text; the
# reports read only what nobody may read. hugectl and hugeedit refuse to run
# privileged for another user.
#
# The copies sit in a fresh 0755 directory (hk_stage_for_user --secure):
# nobody can reach them and their libraries wherever the checkout is, a 0700
# one included; the first test checks that each copy starts as nobody. The dev build's ASan runs set-user-ID as it is.
# /etc/hugekit is never touched: the cases that need one run in a private
# mount namespace with an overlay on /etc. Nothing on the machine changes.

load live

AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"

setup_file() {
	live_usable || return 0
	live_lock
}

setup() {
	live_requirements
	hk_need_cmd setcap libcap2-bin
	hk_need_cmd setpriv util-linux
	hk_need_cmd unshare util-linux
	hk_need_user nobody
	# The tools and their libraries where nobody reaches them, with the
	# RUNPATH the loader follows in a privileged program (it ignores $ORIGIN).
	T=$(hk_stage_for_user --secure tools/hugeadm tools/hugectl tools/hugeedit)
	for t in hugeadm hugectl hugeedit; do
		cp "$T/tools/$t" "$T/$t-suid"
		chmod 4755 "$T/$t-suid"
		cp "$T/tools/$t" "$T/$t-cap"
		setcap cap_sys_admin,cap_dac_override+ep "$T/$t-cap"
	done
}

teardown() {
	hk_unstage
}

# in_etc_overlay UPPER CMD...: CMD in a private mount namespace whose /etc
# shows UPPER's files over the real ones.
in_etc_overlay() {
	local upper=$1
	shift
	mkdir -p "$T/work"
	# shellcheck disable=SC2016 # expanded by the inner sh
	unshare --mount --propagation private sh -c \
		'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$0,workdir=$1" /etc && shift && exec "$@"' \
		"$upper" "$T/work" "$@"
}

@test "privileged copies start as nobody" {
	for b in hugeadm-suid hugeadm-cap; do
		run $AS_NOBODY "$T/$b" --version
		assert_success
	done
}

@test "--check /etc/shadow: refused before it is opened, no line of it printed" {
	for b in hugeadm-suid hugeadm-cap; do
		for args in "--check=/etc/shadow" "--check /etc/shadow" "--apply /etc/shadow --dry-run"; do
			# shellcheck disable=SC2086
			run $AS_NOBODY "$T/$b" $args
			assert_failure 1
			assert_output --partial "${args%%[= ]*} FILE: a set-user-ID"
			assert_output --partial "does not open a path its caller names"
			while IFS= read -r line; do
				[ -n "$line" ] || continue
				[[ "$output" != *"$line"* ]] || fail "$b $args printed a line of /etc/shadow"
			done < /etc/shadow
		done
	done
}

@test "--generate --config through a hostile directory name: refused, nothing written" {
	local d=$T/home/$'x\n[Service]\nExecStartPre='$T/evil.sh
	mkdir -p "$d" "$T/out"
	: > "$T/empty"
	ln -s "$T/empty" "$d/c"
	chown -R nobody "$T/home"
	for b in hugeadm-suid hugeadm-cap; do
		for kind in units sysctl; do
			run $AS_NOBODY "$T/$b" --generate "$kind" --config "$d/c" --output "$T/out"
			assert_failure 1
			assert_output --partial "--config FILE: a set-user-ID, set-group-ID or capability hugeadm"
			assert_output --partial "--output DIR: a set-user-ID"
			assert_equal "$(ls -A "$T/out")" ""
		done
		run $AS_NOBODY "$T/$b" --pool-list --sysroot "$T/home"
		assert_failure 1
		assert_output --partial "--sysroot DIR: a set-user-ID"
	done
}

@test "--metrics=FILE: refused before anything is opened; --metrics on stdout reads as the caller" {
	for b in hugeadm-suid hugeadm-cap; do
		run $AS_NOBODY "$T/$b" --metrics="$T/metrics.prom"
		assert_failure 1
		assert_output --partial "--metrics FILE: a set-user-ID, set-group-ID or capability hugeadm"
		[ ! -e "$T/metrics.prom" ] || fail "$b wrote --metrics FILE for nobody"
		run --separate-stderr $AS_NOBODY "$T/$b" --metrics
		assert_success
		assert_line --regexp '^hugekit_pool_pages\{page_size="2097152"\} [0-9]+$'
		assert_line 'hugekit_metrics_errors 0'
	done
}

@test "nobody's own 0666 configuration: refused, whether named or in /etc/hugekit" {
	mkdir -p "$T/home" "$T/up/hugekit"
	printf '[mount %s/mnt]\npagesize = 2M\nuser = nobody\n' "$T" > "$T/home/c.conf"
	chown -R nobody "$T/home"
	chmod 0666 "$T/home/c.conf"
	for b in hugeadm-suid hugeadm-cap; do
		run $AS_NOBODY "$T/$b" --apply "$T/home/c.conf"
		assert_failure 1
		assert_output --partial "--apply FILE: a set-user-ID"
	done
	[ ! -e "$T/mnt" ]
	# The default configuration, nobody's (euid 0 or not, the owner check holds).
	cp "$T/home/c.conf" "$T/up/hugekit/hugekit.conf"
	chown nobody "$T/up/hugekit/hugekit.conf"
	chmod 0666 "$T/up/hugekit/hugekit.conf"
	for b in hugeadm-suid hugeadm-cap; do
		run in_etc_overlay "$T/up" $AS_NOBODY "$T/$b" --check
		assert_failure 1
		assert_output --partial "/etc/hugekit/hugekit.conf: owned by uid 65534, not root"
		# root's, but writable by others.
		chown root "$T/up/hugekit/hugekit.conf"
		run in_etc_overlay "$T/up" $AS_NOBODY "$T/$b" --check
		assert_failure 1
		assert_output --partial "/etc/hugekit/hugekit.conf: writable by others (mode 0666)"
		chown nobody "$T/up/hugekit/hugekit.conf"
	done
	[ ! -e "$T/mnt" ]
}

@test "a root-only configuration's problems are said without its text" {
	mkdir -p "$T/up/hugekit"
	printf '[pool 2M]\nhk-secret-marker\n' > "$T/up/hugekit/hugekit.conf"
	chmod 0600 "$T/up/hugekit/hugekit.conf"
	for b in hugeadm-suid hugeadm-cap; do
		run in_etc_overlay "$T/up" $AS_NOBODY "$T/$b" --check
		assert_failure 1
		assert_output --partial "/etc/hugekit/hugekit.conf:2: a problem on this line (not shown"
		refute_output --partial "hk-secret-marker"
	done
	# Root reads it: the problem is said whole (the marker can show).
	run in_etc_overlay "$T/up" "$HK_BUILD_DIR/tools/hugeadm" --check
	assert_failure 1
	assert_output --partial "'hk-secret-marker' is not 'key = value'"
}

@test "the reports read as nobody: --pages-needed of init is refused, of nobody's own process not" {
	$AS_NOBODY sleep 60 &
	local pid=$!
	for b in hugeadm-suid hugeadm-cap; do
		run $AS_NOBODY "$T/$b" --pages-needed 1
		assert_failure 1
		assert_output --partial "cannot read the memory of process 1: Permission denied"
		run $AS_NOBODY "$T/$b" --pages-needed "$pid"
		assert_success
	done
	kill "$pid"
}

@test "hugectl and hugeedit refuse to run privileged for another user" {
	for b in hugectl-suid hugectl-cap; do
		run $AS_NOBODY "$T/$b" --heap /bin/true
		assert_failure 1
		assert_output --partial "not run set-user-ID, set-group-ID or with file capabilities"
	done
	cp /bin/true "$T/prog"
	for b in hugeedit-suid hugeedit-cap; do
		run $AS_NOBODY "$T/$b" --text "$T/prog"
		assert_failure 1
		assert_output --partial "not run set-user-ID, set-group-ID or with file capabilities"
	done
	cmp /bin/true "$T/prog"
}
