#!/usr/bin/env bats
# hugeadm's reports on fixture trees. The legacy text is libhugetlbfs 2.23's,
# byte for byte (the live tests compare with 2.23 itself on the running kernel).

load helpers

@test "--pool-list: Minimum, Current, Maximum and the default mark of each tree" {
	for t in x86-1node x86-2node arm64 mounts-long; do
		golden "hugeadm/$t-pool-list" "$HUGEADM" --sysroot "$(fixture "$t")" --pool-list
	done
}

@test "--pool-list on x86-2node: Minimum is nr - surplus, Maximum adds overcommit" {
	run "$HUGEADM" --sysroot "$(fixture x86-2node)" --pool-list
	assert_success
	assert_line --index 1 "   2097152       21       24       29        *"
	assert_line --index 2 "1073741824        2        2        2         "
}

@test "--page-sizes and --page-sizes-all" {
	for t in x86-1node x86-2node arm64 mounts-long; do
		golden "hugeadm/$t-page-sizes" "$HUGEADM" --sysroot "$(fixture "$t")" --page-sizes
		golden "hugeadm/$t-page-sizes-all" "$HUGEADM" --sysroot "$(fixture "$t")" --page-sizes-all
	done
}

@test "--page-sizes needs a pool maximum and a mount of that size" {
	local root
	root=$(fixture x86-1node)
	# 1G has a mount but no pool; give it a pool and it is listed.
	run "$HUGEADM" --sysroot "$root" --page-sizes
	assert_output "2097152"
	echo 1 > "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
	run "$HUGEADM" --sysroot "$root" --page-sizes
	assert_output "$(printf '2097152\n1073741824')"
}

@test "--list-all-mounts: column as wide as the longest path, escapes decoded, long lines read" {
	for t in x86-1node x86-2node mounts-long; do
		golden "hugeadm/$t-list-all-mounts" "$HUGEADM" --sysroot "$(fixture "$t")" --list-all-mounts
	done
}

@test "--list-all-mounts without mounts: the 2.23 error, exit 0" {
	golden "hugeadm/arm64-list-all-mounts" "$HUGEADM" --sysroot "$(fixture arm64)" --list-all-mounts
}

@test "--explain keeps the legacy paragraphs and adds nodes, THP and gigantic pages" {
	hk_need_root "the hugetlb_shm_group paragraph depends on the caller; goldens are for root"
	for t in x86-1node x86-2node arm64; do
		golden "hugeadm/$t-explain" "$HUGEADM" --sysroot "$(fixture "$t")" --explain
	done
}

@test "--explain shows shmmax as the unsigned value the kernel holds" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain
	assert_success
	assert_line "A /proc/sys/kernel/shmmax value of 18446744073692774399 bytes may be sub-optimal. To maximise"
	assert_line "  kernel.shmmax = 41943040"
}

@test "--explain --verbose 0 keeps stdout and silences warnings" {
	local root
	root=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --explain --verbose 0
	assert_success
	assert_equal "$stderr" ""
	assert_line "Total System Memory: 24105 MB"
}

@test "reports run in the 2.23 order whatever the command line order" {
	local root
	root=$(fixture x86-1node)
	run "$HUGEADM" --sysroot "$root" --page-sizes-all --pool-list --list-all-mounts
	assert_success
	assert_line --index 0 --regexp '^Mount Point +Options$'
	assert_line --index 3 --regexp '^ +Size  Minimum'
	assert_line --index 6 "2097152"
}

@test "long options may be abbreviated, as with getopt_long in 2.23" {
	run "$HUGEADM" --sysroot "$(fixture x86-1node)" --pool-l
	assert_success
	assert_line --index 0 --regexp '^ +Size  Minimum  Current  Maximum  Default$'
}

@test "--pool-list --per-node: one row per size and node" {
	golden "hugeadm/x86-2node-per-node" "$HUGEADM" --sysroot "$(fixture x86-2node)" --pool-list --per-node
	golden "hugeadm/x86-1node-per-node" "$HUGEADM" --sysroot "$(fixture x86-1node)" --pool-list --per-node
}

@test "--json: pools, per node, page sizes, mounts" {
	golden "hugeadm/x86-2node-pool-list-json" "$HUGEADM" --sysroot "$(fixture x86-2node)" --pool-list --json
	golden "hugeadm/x86-2node-per-node-json" "$HUGEADM" --sysroot "$(fixture x86-2node)" --pool-list --per-node --json
	golden "hugeadm/arm64-page-sizes-all-json" "$HUGEADM" --sysroot "$(fixture arm64)" --page-sizes-all --json
	golden "hugeadm/x86-1node-page-sizes-json" "$HUGEADM" --sysroot "$(fixture x86-1node)" --page-sizes --json
	golden "hugeadm/mounts-long-list-all-mounts-json" "$HUGEADM" --sysroot "$(fixture mounts-long)" --list-all-mounts --json
	golden "hugeadm/arm64-list-all-mounts-json" "$HUGEADM" --sysroot "$(fixture arm64)" --list-all-mounts --json
}

@test "--pool-list --json on x86-2node reports every number of the tree" {
	local root
	root=$(fixture x86-2node)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list --json
	assert_success
	# Compare each number with the files of the tree itself.
	python3 - "$root" "$output" <<'PY'
import json, os, sys
root, doc = sys.argv[1], json.loads(sys.argv[2])
def rd(*p):
    return int(open(os.path.join(root, *p)).read())
hp = "sys/kernel/mm/hugepages"
assert [p["size"] for p in doc["pools"]] == [2097152, 1073741824], doc
for p in doc["pools"]:
    d = "hugepages-%dkB" % (p["size"] // 1024)
    nr, surp = rd(hp, d, "nr_hugepages"), rd(hp, d, "surplus_hugepages")
    oc = rd(hp, d, "nr_overcommit_hugepages")
    assert p["current"] == nr and p["surplus"] == surp and p["overcommit"] == oc, p
    assert p["free"] == rd(hp, d, "free_hugepages") and p["reserved"] == rd(hp, d, "resv_hugepages"), p
    assert p["minimum"] == nr - surp and p["maximum"] == nr - surp + oc, p
    assert p["default"] == (p["size"] == 2097152), p
    assert [n["node"] for n in p["nodes"]] == [0, 1], p
    for n in p["nodes"]:
        nd = ("sys/devices/system/node", "node%d" % n["node"], "hugepages", d)
        assert n["total"] == rd(*nd, "nr_hugepages"), n
        assert n["free"] == rd(*nd, "free_hugepages"), n
        assert n["surplus"] == rd(*nd, "surplus_hugepages"), n
    assert sum(n["total"] for n in p["nodes"]) == p["current"], p
print("ok")
PY
}

@test "--json with several reports gives one JSON document" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --json --pool-list --list-all-mounts --page-sizes --page-sizes-all
	assert_success
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert sorted(d) == ["configured_page_sizes","mounts","page_sizes","pools"], d; assert d["configured_page_sizes"] == [2097152], d' "$output"
}

@test "a kernel without hugetlb: the 2.23 error, exit 1" {
	for o in --pool-list --page-sizes --page-sizes-all --list-all-mounts --explain; do
		golden "hugeadm/nohugetlb" "$HUGEADM" --sysroot "$(fixture nohugetlb)" "$o"
	done
}

@test "a corrupt counter is an error naming the pool, exit 1" {
	local root
	root=$(fixture x86-1node)
	echo garbage > "$root/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
	golden "hugeadm/corrupt-counter" "$HUGEADM" --sysroot "$root" --pool-list
}

@test "usage errors: message, Try line, exit 1, nothing printed on stdout" {
	local root
	root=$(fixture x86-1node)
	golden "hugeadm/no-operation" "$HUGEADM" --sysroot "$root"
	golden "hugeadm/stray-argument" "$HUGEADM" --sysroot "$root" --pool-list extra
	golden "hugeadm/bad-option" "$HUGEADM" --bogus
	golden "hugeadm/per-node-alone" "$HUGEADM" --sysroot "$root" --per-node
	golden "hugeadm/verbose-range" "$HUGEADM" --sysroot "$root" --verbose 100 --pool-list
	golden "hugeadm/verbose-junk" "$HUGEADM" --sysroot "$root" --verbose 2x --pool-list
	golden "hugeadm/missing-sysroot" "$HUGEADM" --sysroot /nonexistent/hk-tree --pool-list
}

@test "--help on stdout, exit 0; -V prints the version" {
	run --separate-stderr "$HUGEADM" --help
	assert_success
	assert_equal "$stderr" ""
	assert_output --partial "--pool-list"
	assert_output --partial "--per-node"
	run "$HUGEADM" -V
	assert_success
	assert_output --regexp "^hugeadm from hugekit [0-9.]+$"
}

@test "-v raises the level: library debug lines appear at 4" {
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture nohugetlb)" -v -v --pool-list
	assert_equal "$status" 1
	assert_equal "${stderr_lines[0]}" "hugeadm:DEBUG: no Hugepagesize in meminfo: kernel without hugetlb"
	assert_equal "${stderr_lines[1]}" "hugeadm:ERROR: kernel does not support huge pages"
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture nohugetlb)" --pool-list
	assert_equal "$stderr" "hugeadm:ERROR: kernel does not support huge pages"
}

@test "crafted mount points: one text line each, escaped as in the mount table; JSON stays valid UTF-8" {
	local root
	root=$(fixture x86-1node)
	# A newline, a tab and a backslash (escaped by the kernel), then bytes that are not
	# UTF-8: 0xff, a lone continuation byte, an overlong '/' (C0 AF); and a valid é.
	printf '47 27 0:42 / /mnt/a\\012b\\011c\\134d rw,relatime - hugetlbfs none rw,pagesize=2M\n' \
		>> "$root/proc/self/mountinfo"
	printf '48 27 0:43 / /mnt/\xff\x80\xc0\xaf\xc3\xa9 rw,relatime - hugetlbfs none rw,pagesize=2M\n' \
		>> "$root/proc/self/mountinfo"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --list-all-mounts
	assert_success
	assert_equal "${#lines[@]}" 5
	assert_line --index 0 --regexp '^Mount Point +Options$'
	assert_line --index 1 --regexp '^/dev/hugepages +rw,relatime,pagesize=2M$'
	assert_line --index 3 --regexp '^/mnt/a\\012b\\011c\\134d +rw,relatime,pagesize=2M$'
	# --explain holds the same table: nothing in it starts a line of its own.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --explain
	assert_success
	assert_line --regexp '^/mnt/a\\012b\\011c\\134d +rw,relatime,pagesize=2M$'
	refute_line --regexp '^b'
	"$HUGEADM" --sysroot "$root" --list-all-mounts --json > "$BATS_TEST_TMPDIR/json"
	python3 - "$BATS_TEST_TMPDIR/json" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
doc = json.loads(raw.decode("utf-8"))  # strict: fails on any invalid UTF-8
targets = [m["target"] for m in doc["mounts"]]
assert targets[2] == "/mnt/a\nb\tc\\d", targets
# Each byte that is not UTF-8 is \u00XX of its value; valid UTF-8 stays as it is.
assert targets[3] == "/mnt/\u00ff\u0080\u00c0\u00af\u00e9", targets
assert b'"/mnt/\\u00ff\\u0080\\u00c0\\u00af\xc3\xa9"' in raw, raw
PY
}

# ej FILTER: jq -c FILTER over the JSON document in $output.
ej() {
	jq -c "$1" <<<"$output"
}

# explain_both ROOT: --explain (text in $text, stderr in $text_err), then
# --explain --json in $output; both must succeed.
explain_both() {
	run --separate-stderr "$HUGEADM" --sysroot "$1" --explain
	assert_success
	text=$output text_err=$stderr
	run --separate-stderr "$HUGEADM" --sysroot "$1" --explain --json
	assert_success
	assert_equal "$stderr" ""
}

# hugetlbfs_mounts ROOT: "TARGET PAGESIZE-IN-BYTES" for each hugetlbfs line of the tree's mountinfo.
hugetlbfs_mounts() {
	local _id _parent _dev _root target _rest fs _src opts ps
	while read -r _id _parent _dev _root target _rest; do
		_rest=${_rest#* - }
		read -r fs _src opts <<<"$_rest"
		[ "$fs" = hugetlbfs ] || continue
		ps=$(tr , '\n' <<<"$opts" | sed -n 's/^pagesize=//p')
		case $ps in
		*M) ps=$((${ps%M} * 1048576)) ;;
		*G) ps=$((${ps%G} * 1073741824)) ;;
		esac
		printf '%s %s\n' "$target" "$ps"
	done < "$1/proc/self/mountinfo"
}

@test "--explain --json: mounts and configured sizes, with one hugetlbfs mount or none" {
	local root
	root=$(fixture x86-1node)
	# Only /dev/hugepages (2M) left: 2M is configured, 1G has no mount.
	sed -i '/pagesize-1GB/d' "$root/proc/self/mountinfo"
	assert_equal "$(hugetlbfs_mounts "$root")" "/dev/hugepages 2097152"
	explain_both "$root"
	assert_equal "$(ej '[.explain.mounts[] | "\(.target) \(.pagesize)"] | join("\n")')" \
		"\"$(hugetlbfs_mounts "$root")\""
	assert_equal "$(ej '.explain.mounts[0].options')" '"rw,relatime,pagesize=2M"'
	assert_equal "$(ej '.explain.configured_page_sizes')" "[2097152]"
	grep -qxF "/dev/hugepages       rw,relatime,pagesize=2M" <<<"$text"
	# The same mount objects as --list-all-mounts --json.
	local mounts
	mounts=$(ej '.explain.mounts')
	run --separate-stderr "$HUGEADM" --sysroot "$root" --list-all-mounts --json
	assert_equal "$(ej '.mounts')" "$mounts"
	# No hugetlbfs mount: the text says so, the JSON has [] and no configured size.
	sed -i '/ - hugetlbfs /d' "$root/proc/self/mountinfo"
	assert_equal "$(hugetlbfs_mounts "$root")" ""
	explain_both "$root"
	assert_equal "$(ej '.explain.mounts')" "[]"
	assert_equal "$(ej '.explain.configured_page_sizes')" "[]"
	[[ $text_err == *"No hugetlbfs mount points found"* ]] || fail "no mount error: $text_err"
	# Both mounts of the fixture, and a 1G pool: both sizes configured.
	root=$(fixture x86-1node)
	echo 1 > "$root/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
	explain_both "$root"
	assert_equal "$(ej '[.explain.mounts[] | "\(.target) \(.pagesize)"] | join("\n")')" \
		"$(jq -Rsc 'rtrimstr("\n")' <<<"$(hugetlbfs_mounts "$root")")"
	assert_equal "$(ej '.explain.configured_page_sizes')" "[2097152,1073741824]"
}

@test "--explain --json: shmmax now and recommended, as the text says them" {
	local root hp
	# The fixture's own value, above 2^53 (jq would round it): written exactly.
	run --separate-stderr "$HUGEADM" --sysroot "$(fixture x86-1node)" --explain --json
	assert_output --partial "\"current\": $(cat "$HK_FIXTURES/x86-1node/proc/sys/kernel/shmmax"),"
	root=$(fixture x86-1node)
	hp=$root/sys/kernel/mm/hugepages/hugepages-2048kB
	echo 68719476736 > "$root/proc/sys/kernel/shmmax"
	explain_both "$root"
	assert_equal "$(ej '.explain.shmmax.current')" "$(cat "$root/proc/sys/kernel/shmmax")"
	# 2M Maximum 20 (nr 10 + overcommit 10) x 2M; 1G Maximum 0.
	assert_equal "$(ej '.explain.shmmax.recommended')" $((20 * 2097152))
	grep -qxF "A /proc/sys/kernel/shmmax value of 68719476736 bytes may be sub-optimal. To maximise" <<<"$text"
	grep -qxF "  kernel.shmmax = 41943040" <<<"$text"
	# No pool configured: no recommendation (null), as the text warns.
	echo 0 > "$hp/nr_overcommit_hugepages"
	for f in nr_hugepages free_hugepages resv_hugepages; do echo 0 > "$hp/$f"; done
	explain_both "$root"
	assert_equal "$(ej '.explain.shmmax')" '{"current":68719476736,"recommended":null}'
	[[ $text_err == *"We can't make a shmmax recommendation until huge pages are configured!"* ]] ||
		fail "no shmmax warning: $text_err"
	# Unreadable: null.
	rm "$root/proc/sys/kernel/shmmax"
	explain_both "$root"
	assert_equal "$(ej '.explain.shmmax.current')" null
}

@test "--explain --json: hugetlb_shm_group's gid, group and whether the caller is in it" {
	local root gid name member
	root=$(fixture x86-1node)
	explain_both "$root"
	gid=$(cat "$root/proc/sys/vm/hugetlb_shm_group")
	name=$(getent group "$gid" | cut -d: -f1)
	assert_equal "$(ej '.explain.hugetlb_shm_group.gid')" "$gid"
	assert_equal "$(ej '.explain.hugetlb_shm_group.group')" "\"$name\""
	# Root, the caller's primary group, or a listed member (the password and group files).
	member=false
	if [ "$(id -u)" -eq 0 ] || [ "$(getent passwd "$(id -u)" | cut -d: -f4)" = "$gid" ] ||
		getent group "$gid" | cut -d: -f4 | tr , '\n' | grep -qxF "$(id -un)"; then
		member=true
	fi
	assert_equal "$(ej '.explain.hugetlb_shm_group.caller_member')" "$member"
	if [ "$member" = true ]; then
		grep -qxF "  vm.hugetlb_shm_group = $gid" <<<"$text"
	else
		[[ $text_err == *"is not a member of the hugetlb_shm_group $name (gid: $gid)!"* ]] || fail "$text_err"
	fi
	# A gid that names no group: group and caller_member null, as the text warns.
	gid=54321
	while getent group "$gid" > /dev/null; do gid=$((gid + 1)); done
	echo "$gid" > "$root/proc/sys/vm/hugetlb_shm_group"
	explain_both "$root"
	assert_equal "$(ej '.explain.hugetlb_shm_group')" "{\"gid\":$gid,\"group\":null,\"caller_member\":null}"
	[[ $text_err == *"Group ID $gid in hugetlb_shm_group doesn't appear to be a valid group!"* ]] || fail "$text_err"
	# No such sysctl: all null.
	rm "$root/proc/sys/vm/hugetlb_shm_group"
	explain_both "$root"
	assert_equal "$(ej '.explain.hugetlb_shm_group')" '{"gid":null,"group":null,"caller_member":null}'
}

@test "--explain --json: swap total and free, none or low as the text warns" {
	local root kb
	root=$(fixture x86-1node)
	# The fixture has no swap.
	explain_both "$root"
	kb=$(awk '$1 == "SwapTotal:" { print $2 }' "$root/proc/meminfo")
	assert_equal "$kb" 0
	assert_equal "$(ej '.explain.swap')" '{"total":0,"free":0,"configured":false,"low":false}'
	[[ $text_err == *"There is no swap space configured, resizing hugepage pool may fail"* ]] || fail "$text_err"
	grep -qxF "Note: Permanent swap space should be preferred when dynamic huge page pools are used." <<<"$text"
	# 8 GiB of swap, 4 GiB free: no warning.
	sed -i -e 's/^SwapTotal:.*/SwapTotal:       8388608 kB/' -e 's/^SwapFree:.*/SwapFree:        4194304 kB/' \
		"$root/proc/meminfo"
	explain_both "$root"
	assert_equal "$(ej '.explain.swap.total')" $(($(awk '$1 == "SwapTotal:" { print $2 }' "$root/proc/meminfo") * 1024))
	assert_equal "$(ej '.explain.swap.free')" $(($(awk '$1 == "SwapFree:" { print $2 }' "$root/proc/meminfo") * 1024))
	assert_equal "$(ej '[.explain.swap.configured, .explain.swap.low]')" "[true,false]"
	[[ $text_err != *swap* ]] || fail "a swap warning: $text_err"
	# 2048 kB free, one default (2M) page: low.
	sed -i 's/^SwapFree:.*/SwapFree:           2048 kB/' "$root/proc/meminfo"
	explain_both "$root"
	assert_equal "$(ej '.explain.swap')" '{"total":8589934592,"free":2097152,"configured":true,"low":true}'
	[[ $text_err == *"There is very little swap space free, resizing hugepage pool may fail"* ]] || fail "$text_err"
	# No Swap lines: unknown (null), told as no swap.
	sed -i '/^Swap/d' "$root/proc/meminfo"
	explain_both "$root"
	assert_equal "$(ej '.explain.swap')" '{"total":null,"free":null,"configured":false,"low":false}'
	[[ $text_err == *"There is no swap space configured"* ]] || fail "$text_err"
}
