#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check-options.sh - every option a tool accepts is documented and completed,
# and every option the documentation and completion name is accepted.
#
# For each tool, `$HK_BUILD_DIR/tools/<tool> --list-options` names its visible
# options, one a line. Each long option must be an option entry in the OPTIONS
# section of man/<tool>.<section>.scd (a line such as "*-a*, *--all*" or
# "*--sysroot* _DIR_"); each short option must be an entry in the man page
# too. completions/bash/<tool> must take its options from the tool's table
# (it calls `<tool> --list-options`).
#
# The other way: every option the man page's SYNOPSIS and OPTIONS entries set
# in bold, and every long option word of the completion (the options it
# completes values for), must be listed by
# --list-options (an abbreviation or a hidden option is not enough). Every
# option of all three is also put to the tool's getopt ("tool --opt=x" or
# "tool -xx", then an unknown option, so that the tool stops while parsing and
# never runs anything): getopt must not call it unrecognized or invalid.
# Run by ctest, which sets HK_BUILD_DIR and HK_SOURCE_DIR; by hand:
#
#	HK_BUILD_DIR=build/dev HK_SOURCE_DIR=. bash tests/check/check-options.sh

set -u

tools=(pagesize hugeadm hugectl hugeedit)
# The measuring tools (issue #10, TLB part).
tools+=(tlbmiss_cost cpupcstat)
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

# man_named FILE: the options the SYNOPSIS and the OPTIONS entries of an
# scdoc page set in bold ("*--pool-list*", "*--heap*[=_SIZE_]"), one a line;
# prefix forms such as "*--thp-*..." are left out.
man_named() {
	awk '/^# / { s = $0 } s == "# SYNOPSIS" || (s == "# OPTIONS" && /^\*-/)' "$1" |
		grep -oE '\*--?[[:alnum:]][[:alnum:]_-]*[*=[]' | sed 's/^\*//; s/.$//' | grep -v -- '-$' | sort -u
}

# completion_named FILE: the long options the completion names, outside comments
# (not --list-options, which it asks the tool with).
completion_named() {
	sed 's/^[[:space:]]*#.*//' "$1" | grep -oE '(^|[^[:alnum:]_-])--[[:alnum:]][[:alnum:]_-]*' |
		sed 's/^[^-]*//' | grep -v -- '-$' | grep -vx -- --list-options | sort -u
}

# getopt_accepts TOOL OPTION: the tool's getopt knows OPTION (or takes it as
# an abbreviation). The unknown option after it makes the tool stop while
# parsing; "=x" and "-xx" give an argument without eating that option.
getopt_accepts() {
	local probe err
	if [[ $2 == --* ]]; then probe=$2=x; else probe=$2${2#-}; fi
	err=$(timeout 20 "$1" "$probe" --hk-check-no-such-option 2>&1 > /dev/null < /dev/null)
	! grep -qE "unrecognized option '$(re_escape "$probe")'|invalid option -- '$(re_escape "${2#-}")'" <<<"$err"
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
	# The completion's options are the tool's table: it asks the tool.
	if ! in_completion --list-options "$comp"; then
		fail "$tool: completions/bash/$tool does not take its options from '$tool --list-options'"
		missing=$((missing + 1))
	fi
	for opt in "${opts[@]}"; do
		if ! in_man "$opt" "$entries"; then
			fail "$tool: option $opt is missing from the OPTIONS section of ${page#"$HK_SOURCE_DIR"/}"
			missing=$((missing + 1))
		fi
		if [[ $opt == --* ]]; then
			nlong=$((nlong + 1))
		else
			nshort=$((nshort + 1))
		fi
	done
	total=$((total + nlong))

	# The other way round: what the documentation and completion name exists.
	mapfile -t named < <(man_named "$page")
	mapfile -t completed < <(completion_named "$comp")
	declare -A ok=()
	while read -r opt; do
		getopt_accepts "$bin" "$opt" && ok[$opt]=1 || ok[$opt]=0
	done < <(printf '%s\n' "${opts[@]}" "${named[@]}" "${completed[@]}" | sort -u)
	for opt in "${opts[@]}"; do
		if ((!ok[$opt])); then
			fail "$tool: '$tool --list-options' lists $opt, which its getopt rejects"
			missing=$((missing + 1))
		fi
	done
	for where in "${page#"$HK_SOURCE_DIR"/}" "completions/bash/$tool"; do
		if [[ $where == completions/* ]]; then set -- "${completed[@]}"; else set -- "${named[@]}"; fi
		for opt; do
			if ((!ok[$opt])); then
				fail "$tool: $where names $opt, which $tool does not accept"
				missing=$((missing + 1))
			elif ! grep -qxF -- "$opt" <<<"$list"; then
				fail "$tool: $where names $opt, which '$tool --list-options' does not list (hidden, or an abbreviation)"
				missing=$((missing + 1))
			fi
		done
	done
	unset ok

	if ((missing == 0)); then
		echo "check-options: $tool: $nlong long options in ${page#"$HK_SOURCE_DIR"/} (completions/bash/$tool takes them from --list-options), $nshort short options in the man page; the ${#named[@]} options the man page names and the ${#completed[@]} the completion names are accepted"
	else
		echo "check-options: $tool: $missing missing of $nlong long and $nshort short options"
	fi
done

# The README's --sysroot section names the tools that take it ("`a` and `b`
# take `--sysroot DIR`"): exactly those whose table lists --sysroot.
# shellcheck disable=SC2016 # the backquotes are the README's, not expansions
said=$(awk '/^## --sysroot$/ { f = 1; next } /^## / { f = 0 } f && /take `--sysroot DIR`/ { print; exit }' \
	"$HK_SOURCE_DIR/README.md" | sed 's/take `--sysroot DIR`.*//' | grep -o '`[a-z_.]*`' | tr -d '`' | sort | xargs)
have=$(for tool in "${tools[@]}"; do
	"$HK_BUILD_DIR/tools/$tool" --list-options | grep -qxF -- --sysroot && echo "$tool"
done | sort | xargs)
if [ "$said" != "$have" ]; then
	fail "README.md's --sysroot section says '$said' take --sysroot; the tools that do: '$have'"
else
	echo "check-options: README.md names the tools that take --sysroot: $have"
fi

if ((failures > 0)); then
	echo "check-options: FAILED, $failures problem(s)" >&2
	exit 1
fi
echo "check-options: ${#tools[@]} tools, $total options, all documented; every documented or completed option is accepted"
