#!/usr/bin/env bats
# The newer pool features on the running kernel: --pool-demote-size and
# --pool-demote on a real 1 GiB page (read back: 512 more free 2 MiB pages),
# the configuration's demote = yes doing the same through --apply,
# a demote the kernel refuses for a reserved page (--strict: exit 2), and
# --vmemmap-optimize toggled. Both pools, demote_size and
# hugetlb_optimize_vmemmap are put back as they were.

load live

G=/sys/kernel/mm/hugepages/hugepages-1048576kB
M=/sys/kernel/mm/hugepages/hugepages-2048kB
HVO=/proc/sys/vm/hugetlb_optimize_vmemmap

setup_file() {
	live_requirements
	live_lock
	live_save
	[ -e "$G/demote_size" ] && cat "$G/demote_size" > "$BATS_FILE_TMPDIR/demote_size"
	[ -e "$HVO" ] && cat "$HVO" > "$BATS_FILE_TMPDIR/hvo"
	return 0
}

teardown_file() {
	# HVO first: the pages freed by the restore below then need no struct pages back.
	[ -f "$BATS_FILE_TMPDIR/hvo" ] && cat "$BATS_FILE_TMPDIR/hvo" > "$HVO"
	[ -f "$BATS_FILE_TMPDIR/demote_size" ] && cat "$BATS_FILE_TMPDIR/demote_size" > "$G/demote_size"
	live_restore
}

# one_gig: one more 1 GiB page in the pool, or skip with the reason.
one_gig() {
	[ -e "$G/demote" ] || hk_skip "this kernel has no 1 GiB demote files (Linux 5.16 or later; none without 1 GiB pages)"
	G0=$(cat "$G/nr_hugepages")
	echo $((G0 + 1)) > "$G/nr_hugepages" || true
	[ "$(cat "$G/nr_hugepages")" -eq $((G0 + 1)) ] ||
		hk_skip "the kernel could not give a 1 GiB page now (no free aligned 1 GiB range)"
}

@test "--pool-demote: a 1G page becomes 512 free 2M pages, read back and said" {
	local m_nr m_free
	one_gig
	m_nr=$(cat "$M/nr_hugepages")
	m_free=$(cat "$M/free_hugepages")
	run --separate-stderr hugeadm --pool-demote-size 1G:2M --pool-demote 1G:1
	assert_success
	assert_output "Demoted 1 1G page into 512 2M pages"
	assert_equal "$(cat "$G/demote_size")" 2048kB
	assert_equal "$(cat "$G/nr_hugepages")" "$G0"
	assert_equal "$(cat "$M/nr_hugepages")" $((m_nr + 512))
	assert_equal "$(cat "$M/free_hugepages")" $((m_free + 512))
	echo "$m_nr" > "$M/nr_hugepages"
	assert_equal "$(cat "$M/nr_hugepages")" "$m_nr"
}

@test "--pool-demote of a reserved 1G page: the kernel demotes none; a warning, --strict exit 2" {
	local m_nr
	one_gig
	m_nr=$(cat "$M/nr_hugepages")
	[ "$(cat "$G/free_hugepages")" -eq 1 ] || hk_skip "other free 1 GiB pages would be demoted instead"
	# Reserve it (mapped, not faulted): free stays 1, resv becomes 1.
	live_hold $((1 << 30)) 1 0
	assert_equal "$(cat "$G/resv_hugepages")" 1
	run --separate-stderr hugeadm --pool-demote 1G:1
	assert_success
	assert_output ""
	assert_equal "$stderr" "hugeadm:WARNING: 1G:1: demoted 0 of 1 1G pages into 0 2M pages: the kernel demotes only free pages that no mapping has reserved"
	run --separate-stderr hugeadm --strict --pool-demote 1G:1
	assert_failure 2
	assert_equal "$(sed -n 2p <<<"$stderr")" "hugeadm:ERROR: 1G:1: fewer pages were demoted than asked (--strict)"
	assert_equal "$(cat "$G/nr_hugepages")" $((G0 + 1))
	assert_equal "$(cat "$M/nr_hugepages")" "$m_nr"
}

@test "[pool 1G] demote = yes: --apply shrinks the pool by demoting, the 2M pool gets the pages; idempotent" {
	local m_nr conf=$BATS_TEST_TMPDIR/demote.conf
	one_gig
	m_nr=$(cat "$M/nr_hugepages")
	printf '%s\n' '[pool 1G]' "minimum = $G0" 'demote = yes' 'demote_size = 2M' > "$conf"
	run --separate-stderr hugeadm --check "$conf"
	assert_failure 3
	assert_line "drift: pool 1G demote: is $((G0 + 1)), wanted $G0 ($conf:3)"
	run --separate-stderr hugeadm --apply "$conf"
	assert_success
	assert_line "changed: pool 1G demote: $((G0 + 1)) -> $G0 ($conf:3)"
	# Demoted, not freed: the minimum's own item had nothing left to do.
	refute_line --partial "changed: pool 1G minimum"
	assert_equal "$(cat "$G/nr_hugepages")" "$G0"
	assert_equal "$(cat "$M/nr_hugepages")" $((m_nr + 512))
	run --separate-stderr hugeadm --apply --json "$conf"
	assert_success
	run jq -c . <<< "$output"
	assert_output '{"changed":false,"changes":[],"short":[],"failed":[],"put_back":[]}'
	run --separate-stderr hugeadm --check "$conf"
	assert_success
	echo "$m_nr" > "$M/nr_hugepages"
	assert_equal "$(cat "$M/nr_hugepages")" "$m_nr"
}

@test "--vmemmap-optimize on and off, read back; --explain says the state" {
	[ -e "$HVO" ] || hk_skip "no $HVO on this kernel (Linux 5.19, CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP)"
	run --separate-stderr hugeadm --vmemmap-optimize on
	assert_success
	assert_equal "$(cat "$HVO")" 1
	run --separate-stderr hugeadm --explain
	assert_line "HugeTLB vmemmap optimization (vm.hugetlb_optimize_vmemmap): on"
	run --separate-stderr hugeadm --vmemmap-optimize off --explain --json
	assert_success
	assert_equal "$(cat "$HVO")" 0
	assert_equal "$(jq -c '.explain.vmemmap_optimize | [.available, .enabled]' <<<"$output")" '[true,false]'
}
