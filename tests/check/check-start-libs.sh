#!/usr/bin/env bash
# A fast start (issue #22 item 5): no tool loads a library it does not use on
# its path. The shared objects a run loads are read from the dynamic loader's
# own account of it (LD_DEBUG=files: a "file=NAME" line for each object it
# maps, at start or by dlopen), not from ldd or DT_NEEDED, so a library opened
# on first use counts when, and only when, it is opened.
#  - pagesize -a, hugeadm --pool-list, hugectl --help (and the other quick
#    reports) load none of libmount, libblkid, libselinux, libpcre2, libinih,
#    libsmartcols, libnuma and libcap.
#  - an option that needs one loads it: --list-all-mounts libmount (and its
#    libblkid), --check=FILE libinih, --pool-list --per-node libsmartcols,
#    hugectl --membind libnuma.
# Each run must also show libc.so.6, so that a loader that says nothing (or a
# parser that finds nothing) cannot pass. Runs on a fixture tree (--sysroot)
# where the tool takes one; needs no root.
set -uo pipefail
build=${HK_BUILD_DIR:?}
src=${HK_SOURCE_DIR:?}
tree=$src/tests/fixtures/sysroot/x86-2node
lazy='libmount|libblkid|libselinux|libpcre2-8|libinih|libsmartcols|libnuma|libcap'
fail=0 n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '[pool 2M]\nminimum = 0\n' > "$tmp/hugekit.conf"

# loaded CMD...: the names of the shared objects CMD's process loaded, one a line.
loaded() {
	LD_DEBUG=files "$@" 2>&1 > /dev/null | sed -n 's/^ *[0-9]*:[[:space:]]*file=\([^ ]*\) .*/\1/p' | sort -u
}

# none CMD...: CMD loads libc and none of the lazily loaded libraries.
none() {
	local libs bad
	libs=$(loaded "$@")
	bad=$(grep -E "^($lazy)\.so" <<< "$libs" | tr '\n' ' ')
	n=$((n + 1))
	if ! grep -qx 'libc\.so\.6' <<< "$libs"; then
		echo "check-start-libs: ${*#"$build/"}: no libc.so.6 in LD_DEBUG=files' account: cannot tell" >&2
		fail=1
	elif [ -n "$bad" ]; then
		echo "check-start-libs: ${*#"$build/"}: loads $bad(not used on its path)" >&2
		fail=1
	else
		echo "check-start-libs: ${*#"$build/"}: $(grep -c . <<< "$libs") objects, none of them lazy"
	fi
}

# needs "LIB..." CMD...: CMD loads each of LIB (names without .so*).
needs() {
	local want=$1 libs l
	shift
	libs=$(loaded "$@")
	n=$((n + 1))
	for l in $want; do
		if ! grep -qE "^$l\.so" <<< "$libs"; then
			echo "check-start-libs: ${*#"$build/"}: does not load $l, which it uses" >&2
			fail=1
			return
		fi
	done
	echo "check-start-libs: ${*#"$build/"}: loads $want"
}

t=$build/tools
none "$t/pagesize" -a
none "$t/pagesize"
none "$t/pagesize" --sysroot "$tree" -a
none "$t/hugeadm" --pool-list
none "$t/hugeadm" --sysroot "$tree" --pool-list
none "$t/hugeadm" --sysroot "$tree" --page-sizes-all
none "$t/hugeadm" --help
none "$t/hugectl" --help
none "$t/hugectl" --dry-run --heap true
none "$t/hugeedit" --help
needs "libmount libblkid" "$t/hugeadm" --sysroot "$tree" --list-all-mounts
needs "libmount" "$t/hugeadm" --sysroot "$tree" --page-sizes
needs "libinih" "$t/hugeadm" --sysroot "$tree" --check="$tmp/hugekit.conf"
needs "libsmartcols" "$t/hugeadm" --sysroot "$tree" --pool-list --per-node
needs "libnuma" "$t/hugectl" --membind 0 --dry-run --heap true
[ $fail -eq 0 ] || exit 1
echo "check-start-libs: $n runs pass"
