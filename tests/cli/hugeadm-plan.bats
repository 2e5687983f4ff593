#!/usr/bin/env bats
# hugeadm's change options go through libhugekit's plan, the engine that
# --apply uses: --dry-run --json prints the resolved writes (item, file, value,
# the option each comes from) and stays dry; the items are the ones a
# configuration asking the same gives; operations (unmount, shared text) are named.

load helpers

json() {
	python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$output" "$1"
}

# sums DIR: a checksum of every file of a tree.
sums() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum)
}

@test "--dry-run --json: the plan of every change option, in the order it runs, and the tree stays as it was" {
	local root before
	root=$(fixture x86-2node)
	before=$(sums "$root")
	golden "hugeadm/plan-json" "$HUGEADM" --sysroot "$root" --dry-run --json \
		--pool-pages-min 2M:30 --pool-pages-max 2M:40 --pool-pages-min 2M:+2@1 \
		--pool-pages-max 1G:1 --set-recommended-shmmax --thp-never --thp-defrag defer \
		--set-recommended-min_free_kbytes --set-shm-group root --enable-zone-movable
	assert_equal "$(sums "$root")" "$before"
}

@test "--dry-run --json and 2.23's dry run are the same writes" {
	local root
	root=$(fixture x86-2node)
	local -a opts=(--pool-pages-min 2M:30 --pool-pages-max 2M:40 --pool-pages-min 2M:+2
		--pool-pages-max 1G:1 --thp-madvise --set-recommended-min_free_kbytes)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run "${opts[@]}"
	assert_success
	local shell=$output
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --json "${opts[@]}"
	assert_success
	assert_equal "$(json '"\n".join("echo %s > %s" % (i["value"], i["path"]) for i in d["plan"])')" \
		"$(sed -n "s/^echo [\"']\{0,1\}\([^\"' ]*\)[\"']\{0,1\} > /echo \1 > /p" <<< "$shell")"
}

@test "the items of the options are the items of a configuration that asks the same" {
	local root conf
	root=$(fixture x86-2node)
	conf=$BATS_TEST_TMPDIR/same.conf
	printf '%s\n' '[thp]' 'enabled = never' '[pool 2M]' 'minimum = 30' 'maximum = 40' \
		'[pool 1G]' 'minimum = 3' '[sysctl]' 'vm.hugetlb_shm_group = 1' > "$conf"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --json --thp-never \
		--pool-pages-min 2M:30 --pool-pages-max 2M:40 --pool-pages-min 1G:+1 --set-shm-group 1
	assert_success
	# The last write to each item is what the options leave.
	local options
	options=$(json 'sorted({i["item"]: (i["path"], i["value"]) for i in d["plan"]}.items())')
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$conf" --dry-run --json
	assert_success
	assert_equal "$(json 'd["dry_run"], d["changed"], d["failed"]')" "(True, True, [])"
	assert_equal "$(json 'sorted({c["item"]: (c["path"], c["to"]) for c in d["changes"]}.items())')" \
		"$options"
	assert_equal "$options" "[('pool 1G minimum', ('/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages', '3')), ('pool 2M minimum', ('/proc/sys/vm/nr_hugepages', '30')), ('pool 2M overcommit', ('/proc/sys/vm/nr_overcommit_hugepages', '10')), ('sysctl vm.hugetlb_shm_group', ('/proc/sys/vm/hugetlb_shm_group', '1')), ('thp enabled', ('/sys/kernel/mm/transparent_hugepage/enabled', 'never'))]"
}

@test "--apply --dry-run --json: the changes --apply would make, no shell lines, nothing written" {
	local root before conf
	root=$(fixture x86-2node)
	conf=$BATS_TEST_TMPDIR/c.conf
	printf '%s\n' '[pool 2M]' 'minimum = 24' '[thp]' 'defrag = defer' > "$conf"
	before=$(sums "$root")
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$conf" --dry-run --json
	assert_success
	assert_equal "$(json '[(c["item"], c["from"], c["to"]) for c in d["changes"]]')" \
		"[('thp defrag', 'madvise', 'defer'), ('pool 2M minimum', '21', '24')]"
	assert_equal "$(sums "$root")" "$before"
	# The same run for real says what it changed, without "dry_run".
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$conf" --json
	assert_success
	assert_equal "$(json '"dry_run" in d, len(d["changes"])')" "(False, 2)"
}

@test "mounts, unmounts and demotes are items of the plan" {
	local root
	root=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --json --create-user-mounts nobody \
		--max-size 64M
	assert_success
	assert_equal "$(json '[(i["item"], i["value"], i["why"]) for i in d["plan"]]')" \
		"[('mount /var/lib/hugetlbfs/user/nobody/pagesize-2MB', 'pagesize=2097152,size=67108864,uid=65534,gid=0,mode=0700,nosuid,nodev', '--create-user-mounts nobody'), ('mount /var/lib/hugetlbfs/user/nobody/pagesize-1GB', 'pagesize=1073741824,size=67108864,uid=65534,gid=0,mode=0700,nosuid,nodev', '--create-user-mounts nobody')]"
	# A configuration's mount is the same item (the intent's, one mount at its path).
	local first
	first=$(json '[(i["item"], i["value"]) for i in d["plan"]][0]')
	printf '[mount /var/lib/hugetlbfs/user/nobody/pagesize-2MB]\npagesize = 2M\nuser = nobody\ngroup = root\nmode = 0700\nsize = 64M\n' \
		> "$BATS_TEST_TMPDIR/m.conf"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$BATS_TEST_TMPDIR/m.conf" --dry-run --json
	assert_success
	assert_equal "$(json '[(i["item"], i["to"]) for i in d["changes"]][0]')" "$first"
	root=$(fixture arm64)
	# The page to demote is one the pool option adds first; the unmount comes first of all.
	echo "50 27 0:50 / /var/lib/hugetlbfs/pagesize-1GB rw,relatime - hugetlbfs none rw,pagesize=1024M" >> "$root/proc/self/mountinfo"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --json --pool-demote-size 1G:2M \
		--pool-demote 1G:1 --unmount-all --pool-pages-min 1G:+1
	assert_success
	assert_equal "$(json '[(i["item"], i["value"]) for i in d["plan"]], d["operations"]')" \
		"([('unmount /var/lib/hugetlbfs/pagesize-1GB', 'rw,relatime,pagesize=1024M'), ('pool 1G minimum', '1'), ('pool 1G demote_size', '2048kB'), ('pool 1G demote', '1')], [])"
}

@test "--dry-run --json: bad options are refused as without --json; no report beside the plan" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --json --pool-pages-min 3M:1
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "hugeadm:ERROR: 3M: unknown page size"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --json --pool-list --pool-pages-min 2M:1
	assert_failure 1
	assert_output ""
	grep -qF -- "--dry-run --json prints the plan of changes, no report" <<< "$stderr"
}

@test "--dry-run --json: a setting with nothing to write says why on stderr, as the run would" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --json --set-recommended-shmmax \
		--enable-zone-movable
	assert_success
	assert_equal "$(json 'd["plan"], d["operations"]')" "([], [])"
	grep -qF "hugeadm:WARNING: kernel.shmmax is 18446744073692774399, more than the recommended" <<< "$stderr"
	grep -qF "hugeadm:WARNING: this kernel has no /proc/sys/vm/hugepages_treat_as_movable" <<< "$stderr"
}

@test "--apply --dry-run --json: a mount point with a quote, a backslash and a C1 control stays one valid string" {
	local root conf
	root=$(fixture x86-2node)
	conf=$BATS_TEST_TMPDIR/odd.conf
	printf '[mount /mnt/a"b\\c\xc2\x9bd]\npagesize = 2M\n' > "$conf"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply "$conf" --dry-run --json
	assert_success
	# Escaped in the document (no raw C1 byte), and the same name once parsed.
	refute_output --partial $'\xc2\x9b'
	assert_equal "$(json 'd["changes"][0]["path"] == "/mnt/a\"b\\c\u009bd"')" True
}
