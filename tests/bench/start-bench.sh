#!/usr/bin/env bash
# start-bench.sh BUILD_DIR [N]: how fast the tools start, against libhugetlbfs
# 2.23's (Debian's libhugetlbfs-bin, in /usr/bin), side by side in one run.
# For each command, tests/start-time runs ours and 2.23's N times each (default
# 400), interleaved (ours, 2.23, then 2.23, ours, ...), so that both share the
# machine's noise, and times each run from posix_spawn() to its exit, with no
# shell between; it prints the median of each, the ratio ours / 2.23 (below
# 1: ours starts faster: the median of the paired ratios, each run of ours
# against the 2.23 run next to it) with its 95 % confidence interval, and what
# the interval says: "faster" (all of it below 1), "slower" (all of it above)
# or "same" (it holds 1: no difference this run can tell). Then the number of shared objects each run loads, at
# start and by dlopen (the dynamic loader's LD_DEBUG=files account: the loader
# itself and the vDSO are not counted).
# Use a release build (no sanitizers: the script refuses a build whose tools
# load libasan). 2.23's hugeadm --pool-list needs root. Prints times and
# ratios; it never fails on a time (machines are noisy).
set -euo pipefail
build=${1:?usage: start-bench.sh BUILD_DIR [N]}
n=${2:-400}
timer="$build/tests/start-time"
old=/usr/bin

if [ ! -x "$timer" ]; then
	echo "start-bench: $timer is not built" >&2
	exit 1
fi
if [ ! -x "$old/pagesize" ] || [ ! -x "$old/hugeadm" ] || [ ! -x "$old/hugectl" ]; then
	echo "SKIP: libhugetlbfs 2.23's tools are not in $old (apt-get install libhugetlbfs-bin)"
	exit 77
fi

# objects CMD...: the shared objects CMD's process loads (LD_DEBUG=files).
objects() {
	LD_DEBUG=files "$@" 2>&1 > /dev/null | sed -n 's/^ *[0-9]*:[[:space:]]*file=\([^ ]*\) .*/\1/p' |
		sort -u
}

if objects "$build/tools/pagesize" -a | grep -q '^libasan'; then
	echo "start-bench: $build is a sanitizer build: time a release build (cmake --preset release)" >&2
	exit 1
fi

cmds=("pagesize -a" "hugectl --help" "hugeadm --pool-list")
if [ "$(id -u)" -ne 0 ]; then
	echo "start-bench: not root: hugeadm --pool-list left out (2.23's needs root)"
	cmds=("${cmds[@]:0:2}")
fi

echo "start-bench: $n runs of each, interleaved with libhugetlbfs 2.23 ($old), median wall time"
printf '  %-22s %10s %10s %7s %15s %7s   %s\n' command hugekit 2.23 ratio "95 % interval" verdict \
	"shared objects (hugekit / 2.23)"
for c in "${cmds[@]}"; do
	read -r -a argv <<< "$c"
	read -r ours theirs fo ft ratio lo hi < <("$timer" "$n" "$build/tools/${argv[0]}" "${argv[@]:1}" -- \
		"$old/${argv[0]}" "${argv[@]:1}")
	if [ "$fo" -ne 0 ] || [ "$ft" -ne 0 ]; then
		echo "start-bench: $c failed ($fo of ours, $ft of 2.23's runs): not compared" >&2
		exit 1
	fi
	objs_ours=$(objects "$build/tools/${argv[0]}" "${argv[@]:1}")
	objs_theirs=$(objects "$old/${argv[0]}" "${argv[@]:1}")
	awk -v c="$c" -v o="$ours" -v t="$theirs" -v r="$ratio" -v lo="$lo" -v hi="$hi" \
		-v no="$(grep -c . <<< "$objs_ours")" -v nt="$(grep -c . <<< "$objs_theirs")" \
		-v names="$(paste -sd ' ' <<< "$objs_ours")" 'BEGIN {
		v = hi < 1 ? "faster" : lo > 1 ? "slower" : "same"
		printf "  %-22s %7.0f us %7.0f us %7.3f   %.3f - %.3f %7s   %d / %d (%s)\n",
			c, o, t, r, lo, hi, v, no, nt, names
	}'
done
