#!/usr/bin/env bats
# hugeadm --list-shared-text and --clean-shared-text without a kernel: the
# command line, --sysroot and the completion. What they find and remove on
# real hugetlbfs mounts is in tests/live/hugeadm-shared-text.bats.

load helpers

@test "--clean-shared-text=USER: an unknown user is an error before anything is read" {
	run --separate-stderr "$HUGEADM" --clean-shared-text=hk-no-such-user --sysroot /nonexistent
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --clean-shared-text: hk-no-such-user: no such user"
	assert_output ""
	# A number is a uid, also of a user who is gone; an empty name is not a user.
	run --separate-stderr "$HUGEADM" --clean-shared-text= --dry-run --sysroot "$(fixture x86-1node)"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --clean-shared-text: : no such user"
}

@test "both need the running system: with --sysroot an error, nothing done" {
	local tree
	tree=$(fixture x86-1node)
	run --separate-stderr "$HUGEADM" --sysroot "$tree" --list-shared-text
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --list-shared-text is not supported with --sysroot"
	assert_output ""
	for args in "--clean-shared-text" "--clean-shared-text=4242 --dry-run" "--clean-shared-text=root"; do
		# shellcheck disable=SC2086 # the options are words
		run --separate-stderr "$HUGEADM" --sysroot "$tree" $args --pool-pages-min 2M:5
		assert_failure 1
		assert_equal "$stderr" "hugeadm:ERROR: --clean-shared-text is not supported with --sysroot"
		# Validated before the first change: the pool of the tree is as it was.
		run cat "$tree/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
		assert_output "$(cat "$HK_FIXTURES/x86-1node/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")"
	done
}

@test "--dry-run --json: --clean-shared-text's files are items of the plan (none here), no operation; not with a report" {
	run --separate-stderr "$HUGEADM" --json --dry-run --clean-shared-text
	assert_success
	assert_equal "$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["plan"], d["operations"])' "$output")" \
		"[] []"
	run --separate-stderr "$HUGEADM" --json --dry-run --clean-shared-text --list-shared-text
	assert_failure 1
	assert_equal "$stderr" "hugeadm: --dry-run --json prints the plan of changes, no report
Try 'hugeadm --help' for more information."
}

@test "--help names both options; the completion offers them and users after '='" {
	run "$HUGEADM" --help
	assert_line --partial "--clean-shared-text[=USER]"
	assert_line --partial "--list-shared-text"
	run bash -c '
		source "$1"
		COMP_WORDS=(hugeadm --list-sh); COMP_CWORD=1; _hugeadm; printf "%s\n" "${COMPREPLY[@]}"
		COMP_WORDS=(hugeadm --clean-shared-text = ro); COMP_CWORD=3; _hugeadm; printf "%s\n" "${COMPREPLY[@]}"
		COMP_WORDS=(hugeadm --clean-shared-text --pool-l); COMP_CWORD=2; _hugeadm; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$HK_SOURCE_DIR/completions/bash/hugeadm"
	assert_success
	assert_line --index 0 "--list-shared-text"
	assert_line "root"
	assert_line "--pool-list"
}
