#!/usr/bin/env bash
# tlb-bench.sh BUILD_DIR [MiB] [ITERS]: the figures of the README's tlbmiss_cost
# and cpupcstat sections (not run by ctest: minutes, and GiB of huge pages).
#   1. tlbmiss_cost three times: each figure and its distance from the median
#      of the three (the issue's target: within 25 %).
#   2. cpupcstat --compare on random access over MiB (heap-bench random-malloc):
#      plain vs hugectl --heap, saving_pct (the target: 20 % or more).
#   3. cpupcstat --compare on a shell loop: saving_pct near 0.
# Sets the 2 MiB pool for the run (as root, under the live-test lock) and puts it
# back. Prints figures; it never fails on a time.
set -euo pipefail
build=${1:?usage: tlb-bench.sh BUILD_DIR [MiB] [ITERS]}
mib=${2:-2048}
iters=${3:-30000000}
tools="$build/tools"
bench="$build/tests/heap-bench"

if [ "$(id -u)" -ne 0 ] || [ ! -d /sys/kernel/mm/hugepages/hugepages-2048kB ]; then
	echo "SKIP: the benchmark needs root and 2 MiB huge pages"
	exit 77
fi
# shellcheck source=tests/bench/pool.bash
. "$(dirname "$0")/pool.bash"
# The heap's array and its slack; tlbmiss_cost's 512 MiB fit in the same pages.
bench_pool $((mib / 2 + 64))

# json_num KEY: the number (or null) after "KEY": in the JSON on stdin.
json_num() {
	sed -n "s/.*\"$1\": *\([-0-9.a-z]*\).*/\1/p" | head -n 1
}

echo "tlbmiss_cost: three runs ($tools/tlbmiss_cost --json): each one's estimate and 95 % interval"
for i in 1 2 3; do
	out=$("$tools/tlbmiss_cost" --json)
	printf '  run %d: TLB_MISS_COST=%s, estimate %s, interval %s to %s (backing %s, %s of %s rounds discarded, stopped: %s)\n' \
		"$i" "$(json_num tlb_miss_cost <<< "$out")" "$(json_num estimate <<< "$out")" \
		"$(json_num low <<< "$out")" "$(json_num high <<< "$out")" \
		"$(sed -n 's/.*"backing": "\(.*\)".*/\1/p' <<< "$out")" \
		"$(json_num rounds_discarded <<< "$out")" "$(json_num rounds <<< "$out")" \
		"$(sed -n 's/.*"stopped": "\(.*\)".*/\1/p' <<< "$out")"
done

# compare_line OUT: the medians, the saving with its interval, the rounds, from --json.
compare_line() {
	printf '  plain %s s, hugectl --heap %s s: saving_pct %s, 95 %% interval %s to %s, measurable %s (%s rounds, %s discarded, stopped: %s)\n' \
		"$(json_num median_s <<< "$1")" "$(sed -n '/"huge"/,$p' <<< "$1" | json_num median_s)" \
		"$(json_num saving_pct <<< "$1")" "$(json_num low <<< "$1")" "$(json_num high <<< "$1")" \
		"$(sed -n 's/.*"measurable": \(.*\),*/\1/p' <<< "$1" | tr -d ,)" \
		"$(json_num rounds <<< "$1")" "$(json_num rounds_discarded <<< "$1")" \
		"$(sed -n 's/.*"stopped": "\(.*\)".*/\1/p' <<< "$1")"
}

echo "cpupcstat --compare: random read-modify-write, $iters accesses over $mib MiB (target: saving 20 % or more)"
echo "  ($tools/cpupcstat --compare --budget 120 -- $bench random-malloc $mib $iters)"
compare_line "$("$tools/cpupcstat" --compare --budget 120 --json -- "$bench" random-malloc "$mib" "$iters")"

# shellcheck disable=SC2016 # the loop is for sh -c, not for this shell
loop='i=0; while [ $i -lt 1000000 ]; do i=$((i + 1)); done'
echo "cpupcstat --compare: a shell loop (target: near 0)"
echo "  ($tools/cpupcstat --compare --budget 60 -- sh -c '$loop')"
compare_line "$("$tools/cpupcstat" --compare --budget 60 --json -- sh -c "$loop")"
