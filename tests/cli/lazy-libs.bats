#!/usr/bin/env bats
# The libraries loaded on first use (issue #22 item 5): libmount and libinih by
# libhugekit (lib/core/dl.c), libsmartcols and libnuma by the tools
# (tools/common/lazy.c). Where one is missing, what does not use it works as
# before, and the operation that needs it stops with a message that names the
# library and the loader's reason, exit 1.
#
# "Missing" is made real, for the built programs themselves: in a private
# mount namespace (unshare -m, nothing seen outside it), the library's file,
# as the ld.so cache names it, is /dev/null (a bind mount), so the loader finds
# it and cannot load it ("file too short"). Needs root and unshare. The fault
# build (tests/hugeadm-fault, HK_FAULT "dlopen" rule) covers the same failure
# in libhugekit without root.
#
# run (library hidden)                                  exit  message
# pagesize -a (libmount, libinih)                          0  none: the same sizes
# hugeadm --pool-list (all four)                           0  none: the same table
# hugeadm --list-all-mounts (libmount)                     1  cannot load libmount: libmount.so.1: ...
# hugeadm --check=FILE (libinih)                           1  FILE: cannot be parsed: cannot load libinih: ...
# hugeadm --pool-list --per-node (libsmartcols)            1  cannot load libsmartcols, which prints tables: ...
# hugectl --membind 0 --dry-run --heap (libnuma)           1  --membind: cannot load libnuma: ...
# hugeadm-fault, HK_FAULT=dlopen:libmount.so.1:*:ENOENT    1  cannot load libmount: libmount.so.1: No such file or directory

load helpers

setup() {
	TREE="$HK_FIXTURES/x86-2node"
}

# lib_file SONAME: the file the ld.so cache gives for SONAME (x86-64), resolved.
lib_file() {
	local f
	f=$(ldconfig -p | awk -v n="$1" '$1 == n && /x86-64/ && f == "" { f = $NF } END { print f }')
	[ -n "$f" ] || fail "$1 is not in the ld.so cache"
	readlink -f "$f"
}

# hidden "SONAME..." CMD...: run CMD where each SONAME's file is /dev/null.
hidden() {
	local libs=$1 binds="" last="" l
	shift
	hk_need_root "a private mount namespace"
	hk_need_cmd unshare util-linux
	# mount(8) itself needs libmount: that one is hidden last.
	for l in $libs; do
		if [ "$l" = libmount.so.1 ]; then
			last="mount --bind /dev/null $(lib_file "$l") && "
		else
			binds+="mount --bind /dev/null $(lib_file "$l") && "
		fi
	done
	binds+=$last
	run --separate-stderr unshare --mount --propagation private \
		sh -c "${binds}exec \"\$@\"" sh "$@"
}

@test "libmount and libinih missing: pagesize -a and hugeadm --pool-list print as before" {
	local sizes pools
	sizes=$(pagesize -a)
	pools=$(hugeadm --sysroot "$TREE" --pool-list)
	hidden "libmount.so.1 libinih.so.1 libsmartcols.so.1 libnuma.so.1" pagesize -a
	assert_success
	assert_output "$sizes"
	[ -z "$stderr" ] || fail "stderr: $stderr"
	hidden "libmount.so.1 libinih.so.1 libsmartcols.so.1 libnuma.so.1" \
		hugeadm --sysroot "$TREE" --pool-list
	assert_success
	assert_output "$pools"
	hidden "libnuma.so.1" hugectl --help
	assert_success
}

@test "libmount missing: --list-all-mounts says so, exit 1" {
	hidden "libmount.so.1" hugeadm --sysroot "$TREE" --list-all-mounts
	assert_failure 1
	[[ "$stderr" == *"cannot load libmount: "*"libmount.so.1"* ]] || fail "stderr: $stderr"
	assert_output ""
}

@test "libinih missing: --check=FILE says the file cannot be parsed, exit 1" {
	printf '[pool 2M]\nminimum = 0\n' > "$BATS_TEST_TMPDIR/hugekit.conf"
	hidden "libinih.so.1" hugeadm --sysroot "$TREE" --check="$BATS_TEST_TMPDIR/hugekit.conf"
	assert_failure 1
	[[ "$stderr" == *"hugekit.conf: cannot be parsed: cannot load libinih: "*"libinih.so.1"* ]] ||
		fail "stderr: $stderr"
}

@test "libsmartcols missing: --per-node says so, exit 1" {
	hidden "libsmartcols.so.1" hugeadm --sysroot "$TREE" --pool-list --per-node
	assert_failure 1
	[[ "$stderr" == *"cannot load libsmartcols, which prints tables: "*"libsmartcols.so.1"* ]] ||
		fail "stderr: $stderr"
}

@test "libnuma missing: --membind says so, exit 1" {
	hidden "libnuma.so.1" hugectl --membind 0 --dry-run --heap true
	assert_failure 1
	[[ "$stderr" == *"--membind: cannot load libnuma: "*"libnuma.so.1"* ]] || fail "stderr: $stderr"
	assert_output ""
}

@test "fault build: libmount that cannot be opened fails the mount list, not the pools" {
	local faulty="$HK_BUILD_DIR/tests/hugeadm-fault"
	hk_need_built "$faulty"
	run --separate-stderr env HK_FAULT='dlopen:libmount.so.1:*:ENOENT' "$faulty" \
		--sysroot "$TREE" --list-all-mounts
	assert_failure 1
	[[ "$stderr" == *"cannot load libmount: libmount.so.1: No such file or directory"* ]] ||
		fail "stderr: $stderr"
	run --separate-stderr env HK_FAULT='dlopen:libmount.so.1:*:ENOENT' "$faulty" \
		--sysroot "$TREE" --pool-list
	assert_success
}
