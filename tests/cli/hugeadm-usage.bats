#!/usr/bin/env bats
# hugeadm --usage and --pages-needed on the "usage" fixture tree: every number
# of the tree's README entry, as text and as JSON.

load helpers

# usage_tree: a scratch copy of the tree with its two hugetlbfs files, which
# git cannot hold (their pages are their allocated blocks): data 3 pages,
# mapped by dbwriter; orphan 1 page, mapped by no one.
usage_tree() {
	local t
	t=$(fixture usage)
	mkdir -p "$t/dev/hugepages"
	fallocate -l 6M "$t/dev/hugepages/data"
	fallocate -l 2M "$t/dev/hugepages/orphan"
	printf '%s\n' "$t"
}

setup() {
	TREE=$(usage_tree)
	# fallocate allocates what it is asked: 6 MiB is 12288 blocks of 512 bytes.
	[ "$(stat -c %b "$TREE/dev/hugepages/data")" -eq 12288 ] ||
		hk_skip "fallocate does not allocate exactly on this file system"
}

# jq_usage FILTER: the filter applied to --usage --json.
jq_usage() {
	hugeadm --sysroot "$TREE" --usage --json | jq -c "$1"
}

@test "--usage --json: processes, with kinds, pages and what each accounts for" {
	run jq_usage '[.usage.processes[] | [.pid, .comm, .uid, .page_size, .kind, .pages, .accounted, .node]]'
	assert_success
	assert_output '[[4242,"bigheap",1000,2097152,"private",4,4,0],[4242,"bigheap",1000,2097152,"sysv",2,0,0],[4343,"dbwriter",0,2097152,"file",3,0,null],[4343,"dbwriter",0,2097152,"sysv",2,0,null],[4343,"dbwriter",0,2097152,"shared",1,1,null],[4444,"dbchild",0,2097152,"shared",1,0,null]]'
}

@test "--usage --json: SysV segments, a detached one flagged and inferred, a base-page one left out" {
	run jq_usage '[.usage.shm[] | [.id, .key, .uid, .size, .page_size, .pages, .attached, .detached, .inferred]]'
	assert_success
	assert_output '[[5,4660,1000,4194304,2097152,2,2,false,false],[6,0,0,2097152,2097152,1,0,true,true]]'
}

@test "--usage --json: files on the mount, the unmapped one flagged" {
	run jq_usage '[.usage.files[] | [.path, .page_size, .pages, .mapped]]'
	assert_success
	assert_output '[["/dev/hugepages/data",2097152,3,true],["/dev/hugepages/orphan",2097152,1,false]]'
}

@test "--usage --json: cgroups that hold or limit pages, max as null" {
	run jq_usage '.usage.cgroups'
	assert_success
	assert_output '[{"path":"/db.slice","page_size":2097152,"usage":6291456,"limit":20971520,"reserved":8388608,"reserved_limit":null,"events_max":3}]'
}

@test "--usage: a cgroup's failures are hugetlb.<size>.events max; unknown without the file" {
	printf 'max 17\n' > "$TREE/sys/fs/cgroup/db.slice/hugetlb.2MB.events"
	run jq_usage '[.usage.cgroups[] | .events_max]'
	assert_success
	assert_output '[17]'
	run hugeadm --sysroot "$TREE" --usage
	assert_line --regexp '^/db.slice +2M +3 +10 +4 +max +17$'
	rm "$TREE/sys/fs/cgroup/db.slice/hugetlb.2MB.events"
	run jq_usage '[.usage.cgroups[] | .events_max]'
	assert_success
	assert_output '[null]'
	run hugeadm --sysroot "$TREE" --usage
	assert_line --regexp '^/db.slice +2M +3 +10 +4 +max +-$'
	printf 'max x\n' > "$TREE/sys/fs/cgroup/db.slice/hugetlb.2MB.events"
	run jq_usage '[.usage.cgroups[] | .events_max]'
	assert_output '[null]'
}

@test "--usage --json: a limit written as the page counter's largest value is no limit" {
	echo 9223372034707292160 > "$TREE/sys/fs/cgroup/db.slice/hugetlb.1GB.max"
	echo 9223372036854771712 > "$TREE/sys/fs/cgroup/db.slice/hugetlb.2MB.rsvd.max"
	run jq_usage '[.usage.cgroups[] | [.path, .page_size, .limit, .reserved_limit]]'
	assert_success
	assert_output '[["/db.slice",2097152,20971520,null]]'
	echo 1073741824 > "$TREE/sys/fs/cgroup/db.slice/hugetlb.1GB.max"
	run jq_usage '[.usage.cgroups[] | [.path, .page_size, .limit]]'
	assert_output '[["/db.slice",2097152,20971520],["/db.slice",1073741824,1073741824]]'
}

# v1_hierarchy TREE: a cgroup v1 hugetlb hierarchy at sys/fs/cgroup/hugetlb
# (a tasks file there): its root group, db (both counters, 3 pages used of a
# 10-page limit, 4 reserved, failcnt 2 + rsvd.failcnt 1), db/inner (no rsvd
# files, no limit), old (a 2-page limit, no failcnt). v1's "no limit" is the
# page counter's largest value in whole pages. The tree's v2 root still
# offers hugetlb: the caller takes it out to make v1 the one read.
v1_hierarchy() {
	local h=$1/sys/fs/cgroup/hugetlb nolim=9223372036854771712
	mkdir -p "$h/db/inner" "$h/old"
	echo 1 > "$h/tasks"
	echo 14680064 > "$h/hugetlb.2MB.usage_in_bytes"
	echo "$nolim" > "$h/hugetlb.2MB.limit_in_bytes"
	echo 6291456 > "$h/db/hugetlb.2MB.usage_in_bytes"
	echo 10485760 > "$h/db/hugetlb.2MB.max_usage_in_bytes"
	echo 20971520 > "$h/db/hugetlb.2MB.limit_in_bytes"
	echo 2 > "$h/db/hugetlb.2MB.failcnt"
	echo 8388608 > "$h/db/hugetlb.2MB.rsvd.usage_in_bytes"
	echo "$nolim" > "$h/db/hugetlb.2MB.rsvd.limit_in_bytes"
	echo 1 > "$h/db/hugetlb.2MB.rsvd.failcnt"
	echo 0 > "$h/db/hugetlb.1GB.usage_in_bytes"
	echo 9223372035781033984 > "$h/db/hugetlb.1GB.limit_in_bytes"
	echo 0 > "$h/db/hugetlb.1GB.failcnt"
	echo 2097152 > "$h/db/inner/hugetlb.2MB.usage_in_bytes"
	echo "$nolim" > "$h/db/inner/hugetlb.2MB.limit_in_bytes"
	echo 0 > "$h/db/inner/hugetlb.2MB.failcnt"
	echo 0 > "$h/old/hugetlb.2MB.usage_in_bytes"
	echo 4194304 > "$h/old/hugetlb.2MB.limit_in_bytes"
}

@test "--usage --json: the hierarchy read is cgroup_version, 2 here; null without cgroups" {
	run jq_usage '.usage.cgroup_version'
	assert_success
	assert_output '2'
	run hugeadm --sysroot "$HK_FIXTURES/x86-1node" --usage --json
	assert_success
	run jq -c '.usage.cgroup_version' <<<"$output"
	assert_output 'null'
}

@test "--usage --json on cgroup v1: usage_in_bytes, limit_in_bytes, failcnt + rsvd.failcnt; v1's root group left out" {
	v1_hierarchy "$TREE"
	# A v2 root that does not offer hugetlb ("hugetlbx" is not it): v1 is read.
	echo "cpuset cpu hugetlbx memory" > "$TREE/sys/fs/cgroup/cgroup.controllers"
	run jq_usage '[.usage.cgroup_version, .usage.cgroups]'
	assert_success
	assert_output '[1,[{"path":"/db","page_size":2097152,"usage":6291456,"limit":20971520,"reserved":8388608,"reserved_limit":null,"events_max":3},{"path":"/db/inner","page_size":2097152,"usage":2097152,"limit":null,"reserved":0,"reserved_limit":null,"events_max":0},{"path":"/old","page_size":2097152,"usage":0,"limit":4194304,"reserved":0,"reserved_limit":null,"events_max":null}]]'
	run jq_usage '.usage.unreadable.cgroups'
	assert_output '0'
	# The hybrid layout (systemd's): no v2 at the root, v2 at unified/ without hugetlb.
	rm "$TREE/sys/fs/cgroup/cgroup.controllers"
	mkdir -p "$TREE/sys/fs/cgroup/unified"
	echo "cpu memory pids" > "$TREE/sys/fs/cgroup/unified/cgroup.controllers"
	run jq_usage '[.usage.cgroup_version, [.usage.cgroups[] | [.path, .events_max]]]'
	assert_output '[1,[["/db",3],["/db/inner",0],["/old",null]]]'
}

@test "--usage on cgroup v1: the same table, its title names v1" {
	v1_hierarchy "$TREE"
	echo "cpu memory" > "$TREE/sys/fs/cgroup/cgroup.controllers"
	run hugeadm --sysroot "$TREE" --usage
	assert_success
	assert_line 'Cgroups (cgroup v1, pages):'
	refute_line 'Cgroups (pages):'
	assert_line --regexp '^CGROUP +SIZE +CURRENT +MAX +RSVD +RSVD_MAX +FAILED$'
	assert_line --regexp '^/db +2M +3 +10 +4 +max +3$'
	assert_line --regexp '^/db/inner +2M +1 +max +0 +max +0$'
	assert_line --regexp '^/old +2M +0 +2 +0 +max +-$'
	refute_line --regexp '^/db.slice'
	# v2 again: the title as it was.
	echo "cpu memory hugetlb" > "$TREE/sys/fs/cgroup/cgroup.controllers"
	run hugeadm --sysroot "$TREE" --usage
	assert_line 'Cgroups (pages):'
	assert_line --regexp '^/db.slice +2M +3 +10 +4 +max +3$'
}

@test "--usage reads the hierarchy --apply writes, in each layout" {
	local conf=$BATS_TEST_TMPDIR/cg.conf
	printf '[cgroup db]\nhugetlb.2M.max = 8M\n' > "$conf"
	v1_hierarchy "$TREE"
	# root's controllers | unified's (- for no unified/) | the limit --apply
	# writes | cgroup_version, the groups --usage lists
	local layouts=(
		"hugetlb memory|-|/sys/fs/cgroup/db/hugetlb.2MB.max|[2,[\"/db.slice\"]]"
		"memory|memory hugetlb|/sys/fs/cgroup/unified/db/hugetlb.2MB.max|[2,[\"/u.slice\"]]"
		"memory|memory|/sys/fs/cgroup/hugetlb/db/hugetlb.2MB.limit_in_bytes|[1,[\"/db\",\"/db/inner\",\"/old\"]]"
	)
	local l root unified limit usage
	for l in "${layouts[@]}"; do
		IFS='|' read -r root unified limit usage <<<"$l"
		echo "$root" > "$TREE/sys/fs/cgroup/cgroup.controllers"
		rm -rf "$TREE/sys/fs/cgroup/unified"
		if [ "$unified" != - ]; then
			mkdir -p "$TREE/sys/fs/cgroup/unified/u.slice"
			echo "$unified" > "$TREE/sys/fs/cgroup/unified/cgroup.controllers"
			echo memory > "$TREE/sys/fs/cgroup/unified/cgroup.subtree_control"
			echo 2097152 > "$TREE/sys/fs/cgroup/unified/u.slice/hugetlb.2MB.current"
			echo max > "$TREE/sys/fs/cgroup/unified/u.slice/hugetlb.2MB.max"
		fi
		run --separate-stderr hugeadm --sysroot "$TREE" --apply "$conf" --dry-run
		assert_success
		assert_line "echo 8388608 > $limit"
		run jq_usage '[.usage.cgroup_version, [.usage.cgroups[].path]]'
		assert_output "$usage"
	done
}

@test "--usage --json: totals add up: used 12 = 4 private + 1 shared + 3 SysV + 4 in files" {
	run jq_usage '[.usage.totals[] | [.page_size, .used, .accounted, .reserved, .surplus, .difference, .difference_reason]]'
	assert_success
	assert_output '[[2097152,12,12,2,0,0,"none"],[1073741824,0,0,0,0,0,"none"]]'
	run jq_usage '.usage.unreadable'
	assert_output '{"processes":0,"directories":0,"cgroups":0}'
}

@test "--usage --json: a page the lists miss is named as a difference" {
	echo 3 > "$TREE/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
	run jq_usage '.usage.totals[0] | [.used, .accounted, .difference, .difference_reason]'
	assert_success
	assert_output '[13,12,1,"unknown"]'
	# 11 used: no room for the detached segment 6, inferred (1 page): left out, named.
	echo 5 > "$TREE/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
	run jq_usage '.usage.totals[0] | [.used, .accounted, .difference, .difference_reason, .inferred_not_counted]'
	assert_output '[11,11,0,"none; inferred segments not counted: 1 pages",1]'
	run jq_usage '[.usage.shm[] | select(.id == 6) | .accounted]'
	assert_output '[false]'
	# 10 used: fewer than the lists hold.
	echo 6 > "$TREE/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
	run jq_usage '.usage.totals[0] | [.used, .accounted, .difference, .difference_reason]'
	assert_output '[10,11,-1,"changed while read; inferred segments not counted: 1 pages"]'
}

@test "--usage: a SysV segment a readable process maps on base pages is no huge one" {
	# Segment 8: 64 MiB, rss whole 2M pages, mapped by postgres (4848) on 4 kB pages.
	run jq_usage '[.usage.shm[].id]'
	assert_output '[5,6]'
	run jq_usage '.usage.totals[0] | [.used, .accounted, .inferred_not_counted]'
	assert_output '[12,12,0]'
	# Its only attacher unreadable (gone here): possibly huge, flagged, kept out of the totals.
	rm -r "$TREE/proc/4848"
	run jq_usage '[.usage.shm[] | select(.id == 8) | [.pages, .inferred, .accounted]]'
	assert_output '[[32,true,false]]'
	run jq_usage '.usage.totals[0] | [.used, .accounted, .difference, .difference_reason]'
	assert_output '[12,12,0,"none; inferred segments not counted: 32 pages"]'
	run hugeadm --sysroot "$TREE" --usage
	assert_success
	assert_line --regexp '^8 +0x00005432 +1000 +2M +32\? +1$'
}

@test "--usage: the text tables" {
	run hugeadm --sysroot "$TREE" --usage
	assert_success
	assert_line --index 0 'Huge page usage:'
	assert_line --regexp '^4242 +bigheap +1000 +2M +private +4 +0$'
	assert_line --regexp '^4444 +dbchild +0 +2M +shared +1 +-$'
	assert_line --regexp '^6 +0x00000000 +0 +2M +1\? +0 \(detached\)$'
	assert_line --regexp '^/dev/hugepages/orphan +0 +2M +1 +no \(unmapped\)$'
	assert_line --regexp '^CGROUP +SIZE +CURRENT +MAX +RSVD +RSVD_MAX +FAILED$'
	assert_line --regexp '^/db.slice +2M +3 +10 +4 +max +3$'
	assert_line --regexp '^2M +12 +12 +2 +0 +0 +none$'
	assert_line --regexp '^1G +0 +0 +0 +0 +0 +none$'
}

@test "--usage: a tree without processes, segments, files or cgroups says none" {
	run hugeadm --sysroot "$HK_FIXTURES/x86-1node" --usage --json
	assert_success
	run jq -c '.usage | [.processes, .shm, .files, .cgroups, .totals[0].used, .totals[0].accounted, .totals[0].difference_reason]' <<<"$output"
	assert_output '[[],[],[],[],2,0,"unknown"]'
	run hugeadm --sysroot "$HK_FIXTURES/x86-1node" --usage
	assert_success
	assert_line '  none'
}

@test "--usage: a symbolic link on the mount is not followed, a FIFO does not block" {
	mkdir -p "$TREE/outside"
	fallocate -l 8M "$TREE/outside/big"
	ln -s ../../outside "$TREE/dev/hugepages/link"
	ln -s ../../outside/big "$TREE/dev/hugepages/biglink"
	mkfifo "$TREE/dev/hugepages/fifo"
	run timeout 20 hugeadm --sysroot "$TREE" --usage --json
	assert_success
	run jq -c '[.usage.files[].path]' <<<"$output"
	assert_output '["/dev/hugepages/data","/dev/hugepages/orphan"]'
}

@test "--usage: a mount point or smaps that is a link out of the tree is not read" {
	rm -rf "$TREE/dev/hugepages"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$TREE/dev/hugepages"
	mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
	fallocate -l 2M "$BATS_TEST_TMPDIR/elsewhere/secret"
	rm "$TREE/proc/4242/smaps"
	ln -s "$HK_FIXTURES/usage/proc/4242/smaps" "$TREE/proc/4242/smaps"
	run --separate-stderr hugeadm --sysroot "$TREE" --usage --json
	assert_success
	# shellcheck disable=SC2154 # set by run --separate-stderr
	[[ $stderr == *"proc/4242/smaps: a symbolic link on this path leads out of the tree"* ]] ||
		fail "the link is not named: $stderr"
	run jq -c '[.usage.files, ([.usage.processes[].pid] | unique)]' <<<"$output"
	assert_output '[[],[4343,4444]]'
}

@test "--usage: a process gone during the walk is left out, not an error" {
	# 5555 exited before its smaps was read; 4444 after (its status is gone).
	mkdir -p "$TREE/proc/5555"
	rm "$TREE/proc/4444/status"
	run jq_usage '[.usage.processes[].pid] | unique'
	assert_success
	assert_output '[4242,4343]'
	run jq_usage '.usage.totals[0] | [.used, .accounted]'
	assert_output '[12,12]'
}

@test "--usage: files in subdirectories are found" {
	mkdir -p "$TREE/dev/hugepages/sub/deeper"
	fallocate -l 4M "$TREE/dev/hugepages/sub/deeper/f"
	run jq_usage '[.usage.files[] | select(.path == "/dev/hugepages/sub/deeper/f") | .pages]'
	assert_output '[2]'
}

@test "--usage: files 34 directories deep and a mount with pagesize=0: said, counted as unread, no crash" {
	local d=$TREE/dev/hugepages i
	for ((i = 0; i < 34; i++)); do d=$d/d; done
	mkdir -p "$d" "$TREE/mnt/x"
	fallocate -l 2M "$d/deep"
	fallocate -l 4M "$TREE/mnt/x/f"
	echo "47 27 0:42 / /mnt/x rw,relatime - hugetlbfs none rw,pagesize=0" >>"$TREE/proc/self/mountinfo"
	run --separate-stderr hugeadm --sysroot "$TREE" --usage --json
	assert_success
	[[ $stderr == *"hugeadm:WARNING: /mnt/x: pagesize=0 is not a huge page size of this kernel, taken as the default"* ]]
	[[ $stderr == *"hugeadm:WARNING: /dev/hugepages$(printf '/d%.0s' {1..33}): more than 32 directories deep, not walked"* ]]
	[[ $stderr == *"hugeadm:WARNING: could not read 1 directory on hugetlbfs mounts"* ]]
	run jq -c '[.usage.unreadable.directories, [.usage.files[] | select(.path == "/mnt/x/f") | [.page_size, .pages]]]' <<<"$output"
	assert_output '[1,[[2097152,2]]]'
}

@test "--pages-needed: per size, each mapping of a page or more rounded up, the smaller ones summed, the stack left out" {
	run hugeadm --sysroot "$TREE" --pages-needed 4242 --json
	assert_success
	run jq -c '[.pages_needed[] | [.pid, .page_size, .pages, .heap, .anonymous, .shared, .sysv, .hugetlb]]' <<<"$output"
	assert_output '[[4242,2097152,164,150,6,0,2,6],[4242,1073741824,1,1,1,0,1,1]]'
	run hugeadm --sysroot "$TREE" --pages-needed 4242
	assert_success
	assert_line --index 0 --regexp '^ +Size +Pages +Heap +Anonymous +Shared +SysV +Hugetlb$'
	assert_line --index 1 --regexp '^ +2097152 +164 +150 +6 +0 +2 +6$'
}

# dbshared (4949), mostly untouched: 550 MiB of MAP_SHARED|MAP_ANONYMOUS
# ("/dev/zero (deleted)") and a 6 MiB named one, 100 MiB + 4 MiB + 8 KiB of
# private anonymous memory, a 4 MiB heap, SysV segment 7 (3000 KiB); the
# program's files, a PROT_NONE reservation, a read-only anonymous page, a
# thread stack ("nh"), a 1 TiB MAP_NORESERVE mapping and the stack count
# nowhere. Each at its size: 275 + 3 + 50 + 2 + 1 + 2 + 2 = 335.
@test "--pages-needed: shared anonymous memory in its own column, every mapping at its size, not its resident memory" {
	golden hugeadm/pages-needed-shared hugeadm --sysroot "$TREE" --pages-needed 4949
	golden hugeadm/pages-needed-shared-json hugeadm --sysroot "$TREE" --pages-needed 4949 --json
	run hugeadm --sysroot "$TREE" --pages-needed 4949 --json
	run jq -c '[.pages_needed[] | [.page_size, .pages, .heap, .anonymous, .shared, .sysv, .hugetlb]]' <<<"$output"
	assert_output '[[2097152,335,2,53,278,2,0],[1073741824,1,1,1,1,1,0]]'
}

@test "--pages-needed: programs built against libhugekit 1.1 to 1.3 keep their hk_pages_needed" {
	run nm -D --defined-only --with-symbol-versions "$(ls "$HK_BUILD_DIR"/lib/libhugekit.so.* | head -n 1)"
	assert_success
	assert_line --regexp ' T hk_pages_needed@HK_1\.1$'
	assert_line --regexp ' T hk_pages_needed@@HK_1\.4$'
}

@test "--pages-needed: an unknown pid or one that is not a number is an error, exit 1" {
	run hugeadm --sysroot "$TREE" --pages-needed 999
	assert_failure 1
	assert_output 'hugeadm:ERROR: 999: no such process'
	for bad in abc 12x -5 0 +7 "" " 5" "5 "; do
		run hugeadm --sysroot "$TREE" --pages-needed "$bad"
		assert_failure 1
		assert_output "hugeadm:ERROR: $bad: invalid process id for --pages-needed"
	done
}

@test "--pages-needed: an unknown pid fails before any other report is printed; given twice is an error" {
	run --separate-stderr hugeadm --sysroot "$TREE" --pool-list --usage --pages-needed 999
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" 'hugeadm:ERROR: 999: no such process'
	run --separate-stderr hugeadm --sysroot "$TREE" --pool-list --pages-needed 999 --json
	assert_failure 1
	assert_output ""
	run --separate-stderr hugeadm --sysroot "$TREE" --pages-needed 4242 --pages-needed 4949
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" 'hugeadm:ERROR: --pages-needed given twice (4242 and 4949): one process at a time'
}

@test "--usage with --pages-needed: one JSON document holds both" {
	run hugeadm --sysroot "$TREE" --usage --pages-needed 4343 --json
	assert_success
	run jq -c '[(.usage.totals[0].used), (.pages_needed[0].hugetlb)]' <<<"$output"
	assert_output '[12,6]'
}
