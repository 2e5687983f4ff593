# shellcheck shell=bash
# Shared by the CLI tests: fixture trees and golden files.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
# shellcheck source=tests/common.bash
source "${BASH_SOURCE[0]%/*}/../common.bash"

: "${HK_SOURCE_DIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${HK_BUILD_DIR:=$HK_SOURCE_DIR/build/dev}"
: "${HK_FIXTURES:=$HK_SOURCE_DIR/tests/fixtures/sysroot}"
: "${HK_EXPECTED:=$HK_SOURCE_DIR/tests/expected}"

# By name, so that getopt messages say "pagesize:" as for an installed tool.
PATH="$HK_BUILD_DIR/tools:$PATH"
PAGESIZE=pagesize
HUGEADM=hugeadm

# fixture NAME: a scratch copy of a fixture tree; prints its path.
fixture() {
	local dst="$BATS_TEST_TMPDIR/$1"

	rm -rf "$dst"
	cp -R "$HK_FIXTURES/$1" "$dst"
	printf '%s\n' "$dst"
}

# golden CASE CMD...: run CMD and compare its stdout, stderr and exit status,
# byte for byte, with $HK_EXPECTED/CASE.out, CASE.err (empty when absent) and
# CASE.rc (0 when absent). HK_UPDATE_GOLDEN=1 writes the files instead: review
# them with git diff before committing.
golden() {
	local case=$1 exp="$HK_EXPECTED/$1" got="$BATS_TEST_TMPDIR/got" rc=0
	shift

	"$@" > "$got.out" 2> "$got.err" || rc=$?
	if [ -n "${HK_UPDATE_GOLDEN:-}" ]; then
		mkdir -p "$(dirname "$exp")"
		cp "$got.out" "$exp.out"
		rm -f "$exp.err" "$exp.rc"
		if [ -s "$got.err" ]; then cp "$got.err" "$exp.err"; fi
		if [ "$rc" -ne 0 ]; then echo "$rc" > "$exp.rc"; fi
		return 0
	fi
	[ -f "$exp.out" ] || fail "no golden file $exp.out"
	diff -u "$exp.out" "$got.out" || fail "stdout of '$*' differs from $case.out"
	if [ -f "$exp.err" ]; then
		diff -u "$exp.err" "$got.err" || fail "stderr of '$*' differs from $case.err"
	else
		diff -u /dev/null "$got.err" || fail "stderr of '$*' is not empty"
	fi
	assert_equal "$rc" "$(cat "$exp.rc" 2>/dev/null || echo 0)"
}

# kernel_like ROOT: the default size's /proc/sys/vm files are its sysfs
# attributes (links inside the tree, which hugeadm follows), no surplus pages:
# what a kernel shows after a write, which plain files cannot.
kernel_like() {
	local h=sys/kernel/mm/hugepages/hugepages-2048kB n
	ln -sf "../../../$h/nr_hugepages" "$1/proc/sys/vm/nr_hugepages"
	ln -sf "../../../$h/nr_overcommit_hugepages" "$1/proc/sys/vm/nr_overcommit_hugepages"
	echo 0 > "$1/$h/surplus_hugepages"
	for n in 0 1; do
		echo 0 > "$1/sys/devices/system/node/node$n/hugepages/hugepages-2048kB/surplus_hugepages"
	done
	mkdir -p "$1/sys/fs/cgroup"
	echo "cpu memory hugetlb pids" > "$1/sys/fs/cgroup/cgroup.controllers"
	echo "memory" > "$1/sys/fs/cgroup/cgroup.subtree_control"
	# A cgroup as the kernel makes it (mkdir in a tree makes no files).
	mkdir -p "$1/sys/fs/cgroup/db.slice"
	echo max > "$1/sys/fs/cgroup/db.slice/hugetlb.2MB.max"
	: > "$1/sys/fs/cgroup/db.slice/cgroup.subtree_control"
}
