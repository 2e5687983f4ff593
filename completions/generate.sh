#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# generate.sh OUTDIR TOOL COMMAND...: write OUTDIR/zsh/_TOOL and
# OUTDIR/fish/TOOL.fish, the zsh and fish completions of TOOL, from its own
# option table (`COMMAND --list-options=table`, COMMAND being the built tool,
# behind the cross-compiling emulator where there is one) and values.tab
# beside this script, with generate.awk. completions/CMakeLists.txt runs it.
set -eu
[ $# -ge 3 ] || {
	echo "usage: generate.sh OUTDIR TOOL COMMAND..." >&2
	exit 2
}
out=$1
tool=$2
shift 2
here=$(dirname "$0")
mkdir -p "$out/zsh" "$out/fish"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tool's messages (an instrumented build's, say) only where it fails.
if ! "$@" --list-options=table >"$tmp/table" 2>"$tmp/err"; then
	cat "$tmp/err" >&2
	echo "generate.sh: '$* --list-options=table' failed" >&2
	exit 1
fi
for shell in zsh fish; do
	if [ "$shell" = zsh ]; then
		dest=$out/zsh/_$tool
	else
		dest=$out/fish/$tool.fish
	fi
	awk -v shell="$shell" -v tool="$tool" -f "$here/generate.awk" \
		"$here/values.tab" "$tmp/table" >"$tmp/$shell"
	mv -f "$tmp/$shell" "$dest"
done
