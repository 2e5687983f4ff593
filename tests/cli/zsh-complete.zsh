#!/usr/bin/env zsh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# zsh-complete.zsh DIR LINE: what zsh's own completion system (compinit, with
# DIR first in fpath) offers for LINE, typed into an interactive zsh on a
# pseudo-terminal (zsh/zpty) followed by a TAB: one candidate a line, as
# compadd got it, with its -P prefix and -S suffix ("2M:"), then
# "message: TEXT" for each _message. Exit 2 when the shell did not answer.
# For tests/cli/completion-shells.bats.
emulate -L zsh
zmodload zsh/zpty || exit 2
(( $# == 2 )) || { print -u2 "usage: zsh-complete.zsh DIR LINE"; exit 2 }
dir=$1
line=$2
setup=$(mktemp) || exit 2
trap 'rm -f $setup' EXIT

# The inner shell: no prompt, no user files, compinit without a dump file.
# Its compadd prints what it is given, between markers, and then adds it; a
# compadd that only asks (-O, -A, -D: _arguments matching its specs) is left alone.
cat >$setup <<EOF
PS1= PROMPT= RPROMPT=
unsetopt zle_bracketed_paste 2>/dev/null
fpath=(${(q)dir} \$fpath)
autoload -Uz compinit && compinit -u -D
zstyle ':completion:*' list-prompt ''
zstyle ':completion:*' menu no
LISTMAX=-1
compadd() {
	local -a hk_words hk_p hk_s
	if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
		builtin compadd "\$@"
		return
	fi
	builtin compadd -O hk_words "\$@"
	zparseopts -E - P:=hk_p S:=hk_s 2>/dev/null
	local w
	for w in \$hk_words; do
		print -r -- "HKCAND:\${hk_p[2]}\$w\${hk_s[2]}"
	done
	builtin compadd "\$@"
}
_message() {
	print -r -- "HKCAND:message: \${@[-1]}"
}
hk_done() {
	print -r -- HKDONE
}
comppostfuncs=(hk_done)
print -r -- HKREADY
EOF

zpty hk zsh -f -i || exit 2
# zpty -r with a pattern waits for it; give up after a while (zsh's own timeout).
hk_read() {
	local out
	zpty -r -m hk out "*$1*" || return 1
	print -r -- $out
}
zpty -w hk "source ${(q)setup}"
if ! hk_read HKREADY$'\r' >/dev/null; then
	zpty -d hk
	exit 2
fi
zpty -w -n hk "$line"$'\t'
out=$(hk_read HKDONE$'\r') || { zpty -d hk; exit 2 }
zpty -d hk
# A line's first candidate follows the echo of the line typed.
[[ -n $HK_RAW ]] && print -r -- ${(q+)out}
print -r -- ${(F)${(M)${(f)out//$'\r'/}:#*HKCAND:*}#*HKCAND:}
