#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check-options.sh - every option a tool accepts is documented and completed.
#
# For each tool, `$HK_BUILD_DIR/tools/<tool> --list-options` names its visible
# options, one a line. Each long option must be an option entry in the OPTIONS
# section of man/<tool>.<section>.scd (a line such as "*-a*, *--all*" or
# "*--sysroot* _DIR_") and a word in completions/bash/<tool>; each short
# option must be an entry in the man page too. Run by ctest, which sets
# HK_BUILD_DIR and HK_SOURCE_DIR; by hand:
#
#	HK_BUILD_DIR=build/dev HK_SOURCE_DIR=. bash tests/check/check-options.sh

set -u

tools=(pagesize hugeadm hugectl)
failures=0
total=0

fail() {
	echo "check-options: $*" >&2
	failures=$((failures + 1))
}

# re_escape STRING: STRING as an extended regular expression.
re_escape() {
	sed 's/[][\.*^$+?(){}|/]/\\&/g' <<<"$1"
}

# man_options FILE: the option entries of the OPTIONS section of an scdoc
# page, the lines that start with a bold option.
man_options() {
	awk '/^# / { in_opts = ($0 == "# OPTIONS") } in_opts && /^\*-/' "$1"
}

# in_man OPTION ENTRIES: OPTION is set in bold on one of the entry lines.
in_man() {
	grep -qE "(^|[^[:alnum:]-])\*$(re_escape "$1")\*" <<<"$2"
}

# in_completion OPTION FILE: OPTION is a whole word of FILE, outside comments.
in_completion() {
	sed 's/^[[:space:]]*#.*//' "$2" |
		grep -qE "(^|[^[:alnum:]-])$(re_escape "$1")([^[:alnum:]-]|$)"
}

if [[ -z ${HK_BUILD_DIR-} || -z ${HK_SOURCE_DIR-} ]]; then
	echo "check-options: HK_BUILD_DIR and HK_SOURCE_DIR must be set" >&2
	exit 1
fi

for tool in "${tools[@]}"; do
	bin=$HK_BUILD_DIR/tools/$tool
	comp=$HK_SOURCE_DIR/completions/bash/$tool
	shopt -s nullglob
	pages=("$HK_SOURCE_DIR"/man/"$tool".[0-9]*.scd)
	shopt -u nullglob

	if [[ ! -x $bin ]]; then
		fail "$tool: $bin is not built"
		continue
	fi
	if ! list=$("$bin" --list-options); then
		fail "$tool: '$bin --list-options' failed"
		continue
	fi
	mapfile -t opts < <(grep -E '^--?[[:alnum:]]' <<<"$list")
	if ((${#opts[@]} == 0)); then
		fail "$tool: '$tool --list-options' lists no options"
		continue
	fi
	if ((${#pages[@]} != 1)); then
		fail "$tool: expected one man page man/$tool.<section>.scd, found ${#pages[@]}"
		continue
	fi
	page=${pages[0]}
	entries=$(man_options "$page")
	if [[ ! -f $comp ]]; then
		fail "$tool: no completion file completions/bash/$tool"
		continue
	fi

	nlong=0
	nshort=0
	missing=0
	for opt in "${opts[@]}"; do
		if ! in_man "$opt" "$entries"; then
			fail "$tool: option $opt is missing from the OPTIONS section of ${page#"$HK_SOURCE_DIR"/}"
			missing=$((missing + 1))
		fi
		if [[ $opt == --* ]]; then
			nlong=$((nlong + 1))
			if ! in_completion "$opt" "$comp"; then
				fail "$tool: option $opt is missing from completions/bash/$tool"
				missing=$((missing + 1))
			fi
		else
			nshort=$((nshort + 1))
		fi
	done
	total=$((total + nlong))
	if ((missing == 0)); then
		echo "check-options: $tool: $nlong long options in ${page#"$HK_SOURCE_DIR"/} and completions/bash/$tool, $nshort short options in the man page"
	else
		echo "check-options: $tool: $missing missing of $nlong long and $nshort short options"
	fi
done

if ((failures > 0)); then
	echo "check-options: FAILED, $failures problem(s)" >&2
	exit 1
fi
echo "check-options: ${#tools[@]} tools, $total options, all documented"
