#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every tool's --help, as tools/common/opts.c prints it from the tool's option
# table: each visible option (--list-options=table) has its line, "-s, --long
# ARG", " -s ARG" or "     --long[=ARG]", with its description at column 31;
# a left part of 30 columns or more has the description on the next line, at
# column 31. On a terminal, into a pipe and into a file, the text is the same
# (tools/common/util.c gives stdout a static buffer but on a terminal).

load helpers

TOOLS=(pagesize hugeadm hugectl hugeedit tlbmiss_cost cpupcstat)

# help_aligned TOOL: says each option whose --help line is missing or whose
# description does not start at column 31; fails if any.
help_aligned() {
	"$1" --list-options=table > "$BATS_TEST_TMPDIR/table" || return
	"$1" --help > "$BATS_TEST_TMPDIR/help" || return
	awk -F'\t' -v tool="$1" '
		FNR == NR {
			left = $2 != "" ? " -" $2 ($1 != "" ? ", --" $1 : "") : "     --" $1
			if ($4 != "")
				left = left ($1 != "" && $3 == "optional" ? "[=" $4 "]" : " " $4)
			want[++n] = left
			next
		}
		{ line[FNR] = $0; last = FNR }
		END {
			blank = sprintf("%30s", "")
			for (i = 1; i <= n; i++) {
				w = want[i]
				ok = 0
				for (j = 1; j <= last; j++) {
					l = line[j]
					if (length(w) < 30 && substr(l, 1, 30) == sprintf("%-30s", w) &&
					    substr(l, 31, 1) ~ /[^ ]/)
						ok = 1
					if (length(w) >= 30 && l == w && substr(line[j + 1], 1, 30) == blank &&
					    substr(line[j + 1], 31, 1) ~ /[^ ]/)
						ok = 1
				}
				if (!ok) {
					printf "%s --help: no line \"%s\" with its description at column 31\n", tool, w
					bad = 1
				}
			}
			if (n == 0) {
				printf "%s --list-options=table: no options\n", tool
				bad = 1
			}
			exit bad
		}' "$BATS_TEST_TMPDIR/table" "$BATS_TEST_TMPDIR/help"
}

@test "every tool's --help: each option's line, its description at column 31" {
	local t
	for t in "${TOOLS[@]}"; do
		run help_aligned "$t"
		assert_success
	done
}

@test "--help with an optional argument: --opt[=ARG], aligned as the others" {
	run hugectl --help
	assert_success
	assert_line --regexp '^     --heap\[=SIZE\]            [^ ]'
	assert_line --regexp '^ -h, --help                   [^ ]'
}

@test "--help on a terminal, into a file and into a pipe: the same text, whole" {
	local t
	hk_need_cmd script bsdutils
	for t in "${TOOLS[@]}"; do
		"$t" --help > "$BATS_TEST_TMPDIR/file"
		[ "$(wc -l < "$BATS_TEST_TMPDIR/file")" -gt 5 ] || fail "$t --help: short: $(cat "$BATS_TEST_TMPDIR/file")"
		run --separate-stderr "$t" --help
		assert_success
		[ "$output" = "$(cat "$BATS_TEST_TMPDIR/file")" ] || fail "$t --help differs between a file and a pipe"
		# A terminal (script's pseudo-terminal): stdio's own line-buffered stdout, not the static buffer.
		script -qec "$t --help" /dev/null < /dev/null | tr -d '\r' > "$BATS_TEST_TMPDIR/tty"
		cmp "$BATS_TEST_TMPDIR/file" "$BATS_TEST_TMPDIR/tty" || fail "$t --help differs on a terminal"
	done
}
