#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Mutation testing, on demand (not part of ctest): each mutant of
# tests/mutation/mutants is one deliberate bug; the test named as its killer
# must fail with it. The working tree is never modified: its files (what git
# lists, committed or not) are copied to a private directory, each mutant is
# applied there, the copy is rebuilt incrementally in its own build directory
# and only the killing test(s) run (ctest -R '^name$'). The file is put back
# after each mutant, and on exit, error or interrupt (trap).
#
#   tests/mutation/run.sh [options] [ID|PREFIX ...]
#     ID or PREFIX      mutants whose id is, or starts with, one of these (e.g. 003 0 live)
#     -l, --list        list the mutants and their killers, run nothing
#     -c, --check       check that every mutant's text is found once in this tree, run nothing
#     -b, --baseline    run the killers without mutants (each must pass), then stop
#     -j N              build jobs (default 2)
#     -h, --help
#   Environment:
#     HK_MUTATION_DIR   the private copy and its build (default /var/tmp/hugekit-mutation);
#                       reached by the tests that run as nobody, so not under a 0700 home
#     HK_MUTATION_TIMEOUT  seconds per test (default 900)
#
# The build is Debug -O1 -g without sanitizers and without -Werror (faster to
# rebuild than the dev preset's ASan build; a mutant is about behaviour, and
# a warning must not turn it invalid). Results: killed (a killer failed),
# survived (all passed), invalid (the text is not found exactly once, the
# build fails, or no test has the killer's name: reported, not counted).
# Prints a table and "killed/valid = X %"; exits 1 under 90 %, 2 on a setup
# error. Logs: $HK_MUTATION_DIR/logs/ID.log.

set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
list=$here/mutants
helper=$here/mutant.py
work=${HK_MUTATION_DIR:-/var/tmp/hugekit-mutation}
timeout=${HK_MUTATION_TIMEOUT:-900}
jobs=2
mode=run
want=()

usage() { sed -n '/^#   tests/,/^# error/s/^# \{0,1\}//p' "$0"; }

while [ $# -gt 0 ]; do
	case $1 in
	-l | --list) mode=list ;;
	-c | --check) mode=check ;;
	-b | --baseline) mode=baseline ;;
	-j) jobs=${2:?-j needs a number}; shift ;;
	-j*) jobs=${1#-j} ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) want+=("$1") ;;
	esac
	shift
done

mapfile -t all < <(python3 "$helper" list "$list") || exit 2

# The mutants asked for: id<TAB>file<TAB>killers<TAB>why
chosen=()
for line in "${all[@]}"; do
	id=${line%%$'\t'*}
	if [ ${#want[@]} -eq 0 ]; then
		chosen+=("$line")
		continue
	fi
	for w in "${want[@]}"; do
		if [[ $id == "$w"* ]]; then
			chosen+=("$line")
			break
		fi
	done
done
if [ ${#chosen[@]} -eq 0 ]; then
	echo "run.sh: no mutant matches: ${want[*]}" >&2
	exit 2
fi

case $mode in
list)
	printf '%s\n' "${chosen[@]}" | awk -F'\t' '{ printf "%-32s %-40s %s\n", $1, $2, $3 }'
	exit 0
	;;
check)
	python3 "$helper" check "$list" "$root"
	exit
	;;
esac

umask 022
mkdir -p "$work" || exit 2
chmod 0755 "$work"
src=$work/src
build=$work/build
logs=$work/logs
mkdir -p "$src" "$logs"

# One run at a time per copy.
exec 8> "$work/.lock"
flock -n 8 || { echo "run.sh: another run holds $work/.lock" >&2; exit 2; }

# The file a mutant changed, put back on any exit; the copy is re-synced at
# the next start anyway (a file that differs from the tree is copied again).
current=
restore() {
	if [ -n "$current" ]; then
		python3 "$helper" restore "$root" "$src" "$current" ||
			echo "run.sh: could not put back $src/$current (the next run re-syncs it)" >&2
		current=
	fi
}
trap restore EXIT
trap 'restore; echo "run.sh: interrupted" >&2; trap - EXIT; exit 130' INT TERM HUP

python3 "$helper" sync "$root" "$src" || exit 2

build_copy() {
	if [ ! -f "$build/CMakeCache.txt" ]; then
		nice -n 10 cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Debug '-DCMAKE_C_FLAGS=-O1 -g' \
			-DHK_SANITIZE=OFF -DHK_WERROR=OFF -DBUILD_TESTING=ON > "$1" 2>&1 || return 1
	fi
	nice -n 10 cmake --build "$build" -j"$jobs" >> "$1" 2>&1
}

# run_killers LOG KILLERS...: 0 all passed, 1 one failed, 2 a name matched no test.
run_killers() {
	local log=$1 k rc=0
	shift
	for k in "$@"; do
		if ! nice -n 10 ctest --test-dir "$build" -R "^${k}\$" --no-tests=error \
			--timeout "$timeout" --output-on-failure >> "$log" 2>&1; then
			grep -q 'No tests were found' "$log" && return 2
			rc=1
			break # killed: the other killers need not run
		fi
	done
	return $rc
}

echo "run.sh: building the copy in $build (nice -n 10, -j$jobs)"
if ! build_copy "$logs/build-baseline.log"; then
	echo "run.sh: the unmutated copy does not build: see $logs/build-baseline.log" >&2
	exit 2
fi

if [ "$mode" = baseline ]; then
	declare -A seen=()
	bad=0
	for line in "${chosen[@]}"; do
		IFS=$'\t' read -r _ _ killers _ <<< "$line"
		for k in $killers; do
			[ -n "${seen[$k]:-}" ] && continue
			seen[$k]=1
			log=$logs/baseline-${k//\//_}.log
			: > "$log"
			start=$SECONDS
			run_killers "$log" "$k"
			case $? in
			0) r=pass ;;
			1) r=FAIL; bad=1 ;;
			*) r="NO SUCH TEST"; bad=1 ;;
			esac
			printf '%-28s %-13s %4ss\n' "$k" "$r" "$((SECONDS - start))"
		done
	done
	exit $bad
fi

results=$work/results.tsv
: > "$results"
killed=0 survived=0 invalid=0
t0=$SECONDS
for line in "${chosen[@]}"; do
	IFS=$'\t' read -r id file killers _ <<< "$line"
	log=$logs/$id.log
	: > "$log"
	start=$SECONDS
	current=$file
	if ! python3 "$helper" apply "$list" "$id" "$src" >> "$log" 2>&1; then
		result="invalid (does not apply)"
	elif ! build_copy "$log"; then
		result="invalid (does not build)"
	else
		# shellcheck disable=SC2086 # killers are words
		run_killers "$log" $killers
		case $? in
		0) result=survived ;;
		1) result=killed ;;
		*) result="invalid (no such test)" ;;
		esac
	fi
	restore
	case $result in
	killed) killed=$((killed + 1)) ;;
	survived) survived=$((survived + 1)) ;;
	*) invalid=$((invalid + 1)) ;;
	esac
	printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$file" "$killers" "$result" "$((SECONDS - start))" >> "$results"
	printf '%-32s %-10s %5ss  %s\n' "$id" "${result%% *}" "$((SECONDS - start))" "$killers"
done

# Leave the build as the unmutated copy (the last mutant's objects rebuilt).
build_copy "$logs/build-after.log" || echo "run.sh: rebuilding the unmutated copy failed" >&2

echo
printf '%-32s %-44s %-26s %s\n' ID FILE KILLER RESULT
awk -F'\t' '{ printf "%-32s %-44s %-26s %s\n", $1, $2, $3, $4 }' "$results"
valid=$((killed + survived))
echo
echo "mutants: ${#chosen[@]}; killed $killed, survived $survived, invalid $invalid; $((SECONDS - t0)) s"
if [ "$valid" -eq 0 ]; then
	echo "killed/valid = 0/0"
	exit 1
fi
pct=$((killed * 1000 / valid))
echo "killed/valid = $killed/$valid = $((pct / 10)).$((pct % 10)) %"
[ "$pct" -ge 900 ]
