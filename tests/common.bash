# shellcheck shell=bash
# Shared by every bats file of tests/ (loaded by cli/helpers.bash, live/live.bash,
# fleet/fleet.bash and cli/rt-api.bats): the two kinds of skip, and copies of the
# build that another user can run.
#
# A test skips only through one of these (tests/check/check-skips.sh holds every
# file to it), so that what a skip hides is decided once:
#
# hk_missing REASON: the machine lacks what the README's test command gives it:
#   root, hugetlb, transparent huge pages, the cgroup hugetlb controller, a package
#   the command installs (strace, setpriv, numactl, python3, yamllint, ansible,
#   setcap, mkswap, gcc, libhugetlbfs 2.23 ...), or a part of our own build. A
#   skip; with HK_REQUIRE_LIVE=1 (the test command sets it) a failure saying why.
# hk_skip REASON: what no test command can give this machine: no 1 GiB pages, one
#   NUMA node, a kernel without a feature; or a condition of the moment (a kernel
#   too fragmented to give N free pages now, pages in use by others). Always a
#   skip; tests/skip-summary.sh counts them at the end of the test command.
#
# bats 1.8 cannot skip from setup_file: there both fail, with the reason.

# hk_in_setup_file: whether the caller runs under setup_file.
hk_in_setup_file() {
	[[ " ${FUNCNAME[*]} " == *" setup_file "* ]]
}

hk_missing() {
	if [ "${HK_REQUIRE_LIVE:-}" = 1 ]; then
		fail "HK_REQUIRE_LIVE=1, so this is not skipped: $*"
	fi
	if hk_in_setup_file; then
		fail "$* (bats cannot skip from setup_file)"
	fi
	skip "$*"
}

hk_skip() {
	if hk_in_setup_file; then
		fail "$* (bats cannot skip from setup_file)"
	fi
	skip "$*"
}

# hk_need_cmd COMMAND PACKAGE: hk_missing unless COMMAND is in PATH.
hk_need_cmd() {
	command -v "$1" > /dev/null || hk_missing "$1 is not installed (apt-get install $2)"
}

# hk_need_root [WHAT]: hk_missing unless running as root.
hk_need_root() {
	[ "$(id -u)" -eq 0 ] || hk_missing "needs root${1:+ ($1)}"
}

# hk_need_user NAME: hk_missing unless the user (or group, with -g) exists.
hk_need_user() {
	if [ "$1" = -g ]; then
		getent group "$2" > /dev/null || hk_missing "there is no group $2"
	else
		getent passwd "$1" > /dev/null || hk_missing "there is no user $1"
	fi
}

# hk_need_built PATH [WHAT]: hk_missing unless PATH (of our build) exists.
hk_need_built() {
	[ -e "$1" ] || hk_missing "${2:-$1} is not built"
}

# hk_stage_for_user [--secure] PATH...: a copy of the build that every user can
# reach, for a test that runs what it built as another user (the checkout may be
# in a directory only its owner can enter, such as root's home). A fresh
# directory (mktemp -d /tmp/hkXXXXXX, mode 0755) holds lib/ and each PATH of
# $HK_BUILD_DIR (tools/hugeadm, tests/rt-api-probe ...) at the same place: the
# build's RUNPATHs are $ORIGIN-relative (CMAKE_BUILD_RPATH_USE_ORIGIN), so the
# copies load the copied libraries. The loader ignores $ORIGIN in a setuid or
# file-capability program: with --secure, each copy's RUNPATH $ORIGIN/../lib is
# rewritten in place to the directory itself, which is short enough to fit, and
# which holds links to the libraries. Prints the directory; hk_unstage (called by
# live_restore) removes it.
hk_stage_for_user() {
	local d p secure=
	if [ "${1:-}" = --secure ]; then
		secure=1
		shift
	fi
	d=$(mktemp -d /tmp/hkXXXXXX) || {
		echo "# hk_stage_for_user: mktemp -d failed" >&3
		return 1
	}
	echo "$d" >> "$BATS_FILE_TMPDIR/hk-staged"
	chmod 0755 "$d"
	mkdir -p "$d/lib"
	# The shared libraries under their names and links (libhugekit.so.1 -> ...).
	cp -a "$HK_BUILD_DIR"/lib/*.so* "$d/lib/"
	for p in "$@"; do
		mkdir -p "$d/$(dirname "$p")"
		cp -a "$HK_BUILD_DIR/$p" "$d/$p"
		[ -z "$secure" ] || hk_runpath_to "$d/$p" "$d" || return 1
	done
	if [ -n "$secure" ]; then
		for p in "$d"/lib/*.so*; do
			ln -s "lib/${p##*/}" "$d/${p##*/}"
		done
	fi
	chmod -R go+rX "$d"
	printf '%s\n' "$d"
}

# hk_runpath_to FILE DIR: FILE's RUNPATH "$ORIGIN/../lib" (the build's) becomes
# DIR, in place (DIR no longer than it); nothing when FILE has no such string (it
# loads no library of ours); fails when it is there but not one whole RUNPATH.
hk_runpath_to() {
	python3 - "$1" "$2" <<- 'EOF'
		import sys
		path, new = sys.argv[1], sys.argv[2].encode()
		data = bytearray(open(path, "rb").read())
		old = b"$ORIGIN/../lib"
		if data.find(old) < 0:
		    sys.exit(0)  # loads no library of ours (hugeedit): nothing to rewrite
		i = data.find(old + b"\0")
		if i < 0:
		    i = data.find(old + b":\0")
		end = data.find(b"\0", i)
		if i < 0 or data.find(old, end) >= 0 or len(new) > end - i:
		    sys.exit(f"hk_runpath_to: {path}: no single RUNPATH {old.decode()} to rewrite to {new.decode()}")
		data[i:end] = new + b"\0" * (end - i - len(new))
		open(path, "wb").write(data)
	EOF
}

# hk_unstage: remove every copy hk_stage_for_user made for this file.
hk_unstage() {
	local d
	[ -f "$BATS_FILE_TMPDIR/hk-staged" ] || return 0
	while read -r d; do
		case $d in /tmp/hk??????) rm -rf "$d" ;; esac
	done < "$BATS_FILE_TMPDIR/hk-staged"
	rm -f "$BATS_FILE_TMPDIR/hk-staged"
}

# hk_size_names DIR: the page sizes of DIR's hugepages-<N>kB entries, sorted,
# one a line, as the completions name them (64K, 2M, 1G).
hk_size_names() {
	local d kb

	for d in "$1"/hugepages-*kB; do
		[ -d "$d" ] || continue
		kb=${d##*/hugepages-}
		kb=${kb%kB}
		if ((kb % 1048576 == 0)); then
			echo "$((kb / 1048576))G"
		elif ((kb % 1024 == 0)); then
			echo "$((kb / 1024))M"
		else
			echo "${kb}K"
		fi
	done | sort
}
