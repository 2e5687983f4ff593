# shellcheck shell=bash
# Shared by the live tests: they change the running kernel's huge page state,
# so they take the lock, save every value they change, and restore it after.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
# shellcheck source=tests/common.bash
source "${BASH_SOURCE[0]%/*}/../common.bash"

: "${HK_SOURCE_DIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${HK_BUILD_DIR:=$HK_SOURCE_DIR/build/dev}"
PATH="$HK_BUILD_DIR/tools:$PATH"
HK_HOLD="$HK_BUILD_DIR/tests/hk-hold"
HP=/sys/kernel/mm/hugepages
LIVE_LOCK=/run/lock/hugekit-live-tests.lock

# live_requirements: skip (with the reason) where the tests cannot run; fail
# instead with HK_REQUIRE_LIVE=1 (hk_missing).
live_requirements() {
	if [ "$(id -u)" -ne 0 ]; then
		hk_missing "live tests need root"
	fi
	if [ ! -d "$HP/hugepages-2048kB" ]; then
		hk_missing "no 2 MiB hugetlb pool on this kernel"
	fi
	if ! grep -qw hugetlbfs /proc/filesystems; then
		hk_missing "no hugetlbfs in this kernel"
	fi
}

# live_usable: whether live tests can run here (root, a 2 MiB pool, hugetlbfs):
# for setup_file, which cannot skip (bats 1.8); setup() skips with the reason.
live_usable() {
	[ "$(id -u)" -eq 0 ] && [ -d "$HP/hugepages-2048kB" ] && grep -qw hugetlbfs /proc/filesystems
}

# The pool files a live test may change, saved once per file.
THP=/sys/kernel/mm/transparent_hugepage
LIVE_SAVED_FILES=(
	"$HP/hugepages-2048kB/nr_hugepages"
	"$HP/hugepages-2048kB/nr_overcommit_hugepages"
	"$HP/hugepages-1048576kB/nr_hugepages"
	/proc/sys/kernel/shmmax
	/proc/sys/vm/min_free_kbytes
	/proc/sys/vm/hugetlb_shm_group
	"$THP/enabled"
	"$THP/defrag"
	"$THP/khugepaged/pages_to_scan"
)

live_lock() {
	exec {LIVE_LOCK_FD}> "$LIVE_LOCK"
	flock -w 900 "$LIVE_LOCK_FD" || {
		echo "# could not take $LIVE_LOCK in 900 s" >&3
		return 1
	}
	# No test changes it on purpose: live_restore fails a file that did.
	stat -c %a /tmp > "$BATS_FILE_TMPDIR/tmp-mode"
}

live_save() {
	local f
	: > "$BATS_FILE_TMPDIR/saved"
	for f in "${LIVE_SAVED_FILES[@]}"; do
		# A mode file reads "always [madvise] never": what is written back is the selection.
		[ -e "$f" ] && printf '%s\t%s\n' "$f" "$(live_setting "$f")" >> "$BATS_FILE_TMPDIR/saved"
	done
	return 0
}

# live_restore: stop our holders (so no page is in use), unmount ours, remove
# the copies hk_stage_for_user made, put back the saved values. Fails, naming
# each file and value, when one cannot be put back (after trying all).
live_restore() {
	local f v m bad=()
	[ -f "$BATS_FILE_TMPDIR/holders" ] && while read -r v; do
		kill "$v" 2>/dev/null
		wait "$v" 2>/dev/null
	done < "$BATS_FILE_TMPDIR/holders"
	rm -f "$BATS_FILE_TMPDIR/holders"
	findmnt -rn -t hugetlbfs -o TARGET | while read -r m; do
		m=$(printf '%b' "$m")
		case "$m" in "$BATS_FILE_TMPDIR"/*) umount "$m" ;; esac
	done
	hk_unstage
	if [ -f "$BATS_FILE_TMPDIR/saved" ]; then
		while IFS=$'\t' read -r f v; do
			# The kernel may take a write and keep another value (a pool that cannot shrink).
			if ! echo "$v" 2> /dev/null > "$f" || [ "$(live_setting "$f")" != "$v" ]; then
				bad+=("$f: $v (it is $(live_setting "$f"))")
			fi
		done < "$BATS_FILE_TMPDIR/saved"
	fi
	if [ -f "$BATS_FILE_TMPDIR/tmp-mode" ] && v=$(cat "$BATS_FILE_TMPDIR/tmp-mode") &&
		[ "$(stat -c %a /tmp)" != "$v" ]; then
		bad+=("/tmp: mode $v (it is $(stat -c %a /tmp))")
		chmod "$v" /tmp
	fi
	[ "${#bad[@]}" -eq 0 ] && return 0
	printf '# live_restore: could not put back %s\n' "${bad[@]}" >&3
	fail "live_restore: could not put back ${bad[*]}"
}

# live_setting FILE: the value of FILE as live_save saves it (a mode file's selection).
live_setting() {
	sed 's/.*\[\(.*\)\].*/\1/' "$1" 2> /dev/null
}

# live_snapshot: every value hugeadm may change, one "file: value" line each.
live_snapshot() {
	local f
	for f in "$HP"/hugepages-*/nr_hugepages "$HP"/hugepages-*/nr_overcommit_hugepages \
		"$HP"/hugepages-*/nr_hugepages_mempolicy \
		/sys/devices/system/node/node*/hugepages/hugepages-*/nr_hugepages \
		/proc/sys/vm/nr_hugepages /proc/sys/vm/nr_overcommit_hugepages \
		/proc/sys/vm/min_free_kbytes /proc/sys/vm/hugetlb_shm_group /proc/sys/kernel/shmmax \
		"$THP/enabled" "$THP/defrag" "$THP"/hugepages-*/enabled "$THP"/khugepaged/*_*; do
		# Counters that khugepaged moves on its own are not settings.
		case $f in */full_scans | */pages_collapsed) continue ;; esac
		[ -r "$f" ] && echo "$f: $(cat "$f")"
	done
	return 0
}

# live_mount DIR OPTIONS: a hugetlbfs mount under the file's scratch directory.
# live_pool_free N: the 2 MiB pool at N persistent pages, no overcommit;
# skip when the kernel cannot give that many (the caller saved the pool).
live_pool_free() {
	echo 0 > "$HP/hugepages-2048kB/nr_overcommit_hugepages"
	echo "$1" > "$HP/hugepages-2048kB/nr_hugepages"
	[ "$(cat "$HP/hugepages-2048kB/nr_hugepages")" -eq "$1" ] ||
		hk_skip "the kernel could not give $1 free 2 MiB pages"
}

# live_wait_file FILE TENTHS: wait until FILE is not empty, at most TENTHS tenths
# of a second; fail naming WHAT (the third argument) when it never is.
live_wait_file() {
	local left=$2
	while [ "$left" -gt 0 ]; do
		[ -s "$1" ] && return 0
		sleep 0.1
		left=$((left - 1))
	done
	fail "$3"
}

live_mount() {
	mkdir -p "$1"
	mount -t hugetlbfs -o "$2" none "$1"
}

# live_hold SIZE PAGES TOUCH: start hk-hold in the background, wait until ready.
live_hold() {
	local fifo="$BATS_FILE_TMPDIR/hold.$$.$RANDOM" line
	mkfifo "$fifo"
	"$HK_HOLD" "$@" > "$fifo" 3>&- &
	echo $! >> "$BATS_FILE_TMPDIR/holders"
	read -r -t 30 line < "$fifo"
	rm -f "$fifo"
	[ "$line" = ready ]
}

# The hugeadm and pagesize of libhugetlbfs 2.23, when Debian's package is installed.
legacy_tool() {
	local t=/usr/bin/$1
	if [ -x "$t" ] && dpkg -S "$t" 2>/dev/null | grep -q '^libhugetlbfs-bin:'; then
		echo "$t"
	fi
}

# live_cgroup_root: the cgroup v2 hierarchy whose controllers include hugetlb
# (at the root, or unified/ beside v1), as hugeadm looks for it; fails when
# there is none.
live_cgroup_root() {
	local d
	for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		if [ -f "$d/cgroup.controllers" ] && grep -qw hugetlb "$d/cgroup.controllers"; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# The nosuid and nodev flags of the last mount at $1, from /proc/self/mountinfo's
# per-mount options (field 6, not the superblock's): "nosuid nodev" when both.
mount_flags() {
	awk -v t="$1" '$5 == t { f = $6 } END { n = split(f, o, ","); s = ""
		for (i = 1; i <= n; i++) if (o[i] == "nosuid" || o[i] == "nodev") s = s (s ? " " : "") o[i]
		print s }' /proc/self/mountinfo
}
