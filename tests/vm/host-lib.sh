# shellcheck shell=bash
# Sourced by the host side of the VM tests (run-vm-tests.sh, boot-line.sh)
# right after `set -Eeuo pipefail`, with hk_me set to the script's name.
#
# set -e alone dies without a word: on_err says where, once (not again in a
# command substitution's subshell, nor at the call of the function that failed).
# shellcheck disable=SC2317 # called by the trap
on_err() {
	local rc=$?
	[ "$BASH_SUBSHELL" -eq 0 ] && [ -z "${err_said:-}" ] || return 0
	err_said=1
	echo "${hk_me:-${0##*/}}: line $1: a command failed (status $rc)" >&2
}
trap 'on_err $LINENO' ERR
