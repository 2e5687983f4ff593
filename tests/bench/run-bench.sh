#!/usr/bin/env bash
# run-bench.sh BUILD_DIR [MiB] [ITERS]: the heap benchmarks, side by side in one run.
#   1. random read-modify-write over MiB of memory: plain malloc (base pages),
#      malloc under `hugectl --heap`, and explicit MAP_HUGETLB; the ratios.
#   2. 4 threads of small malloc/free: plain vs `hugectl --heap` (allocator cost).
#   3. fork: a fork+exit loop, and fork of a large heap whose child writes one
#      byte; plain, `hugectl --heap` (each child copies onto huge pages of its
#      own), with HK_RT_FORK=base (onto base pages, the rule before) and with
#      HK_RT_FORK=share (they share them, copy-on-write).
# Sets the 2 MiB pool for the run (as root, under the live-test lock) and puts it
# back. Prints times and ratios; it never fails on a time (machines are noisy).
set -euo pipefail
build=${1:?usage: run-bench.sh BUILD_DIR [MiB] [ITERS]}
mib=${2:-4096}
iters=${3:-30000000}
bench="$build/tests/heap-bench"
hugectl="$build/tools/hugectl"
pool=/sys/kernel/mm/hugepages/hugepages-2048kB

if [ "$(id -u)" -ne 0 ] || [ ! -d "$pool" ]; then
	echo "SKIP: the benchmark needs root and 2 MiB huge pages"
	exit 77
fi
# Two copies of the array never live at once: one array plus the heap's slack.
# The fork benchmark's heap: a quarter of MiB, at most 256 MiB.
fmib=$((mib / 4 > 256 ? 256 : mib / 4))
forks=$((iters / 100000 > 200 ? 200 : (iters / 100000 < 20 ? 20 : iters / 100000)))
# shellcheck source=tests/bench/pool.bash
. "$(dirname "$0")/pool.bash"
bench_pool $((mib / 2 + 64))

# The same work gives the same checksum whatever backs the memory: a wrong
# result under hugectl would be a bug, not noise.
sums=$("$bench" random-malloc 16 100000 | awk '{ print $3 }')
sumh=$("$hugectl" --heap "$bench" random-malloc 16 100000 | awk '{ print $3 }')
sume=$("$bench" random-hugetlb 16 100000 | awk '{ print $3 }')
if [ "$sums" != "$sumh" ] || [ "$sums" != "$sume" ]; then
	echo "heap-bench: checksums differ: plain $sums, hugectl $sumh, explicit $sume" >&2
	exit 1
fi

# best of 3: the least disturbed run of each.
best() {
	local t min=""
	for _ in 1 2 3; do
		t=$("$@" | awk '{ print $2 }')
		if [ -z "$min" ] || awk -v a="$t" -v b="$min" 'BEGIN { exit !(a < b) }'; then min=$t; fi
	done
	echo "$min"
}

echo "heap-bench: random read-modify-write, $iters accesses over $mib MiB (best of 3)"
plain=$(best "$bench" random-malloc "$mib" "$iters")
heap=$(best "$hugectl" --heap "$bench" random-malloc "$mib" "$iters")
explicit=$(best "$bench" random-hugetlb "$mib" "$iters")
printf '  plain malloc (base pages)   %8.3f s\n' "$plain"
printf '  hugectl --heap              %8.3f s\n' "$heap"
printf '  explicit MAP_HUGETLB        %8.3f s\n' "$explicit"
awk -v p="$plain" -v h="$heap" -v e="$explicit" 'BEGIN {
	printf "  speed-up of hugectl --heap over plain: %.2fx\n", p / h
	printf "  hugectl --heap vs explicit MAP_HUGETLB: %+.1f %% time\n", (h / e - 1) * 100
}'

echo "heap-bench: 4 threads x $((iters / 10)) malloc/write/free of 64..4096 B (best of 3)"
aplain=$(best "$bench" alloc 0 $((iters / 10)))
aheap=$(best "$hugectl" --heap "$bench" alloc 0 $((iters / 10)))
printf '  plain                       %8.3f s\n' "$aplain"
printf '  hugectl --heap              %8.3f s\n' "$aheap"
awk -v p="$aplain" -v h="$aheap" 'BEGIN { printf "  allocator time under hugectl --heap: %+.1f %%\n", (h / p - 1) * 100 }'

echo "heap-bench: fork + wait, $forks times (best of 3); ms per fork"
fork_row() {
	local what=$1 heap=$2 p h b s
	p=$(best "$bench" fork "$heap" "$forks")
	h=$(best "$hugectl" --heap "$bench" fork "$heap" "$forks")
	b=$(best env HK_RT_FORK=base "$hugectl" --heap "$bench" fork "$heap" "$forks")
	s=$(best env HK_RT_FORK=share "$hugectl" --heap "$bench" fork "$heap" "$forks")
	awk -v w="$what" -v p="$p" -v h="$h" -v b="$b" -v s="$s" 'BEGIN {
		printf "  %-28s plain %7.3f  hugectl --heap %7.3f  (copy on base pages %7.3f, shared %7.3f)  huge/base copy %.2fx  move/shared %.2fx  hugectl/plain %.2fx\n",
			w, p * 1000, h * 1000, b * 1000, s * 1000, h / b, h / s, h / p
	}'
}
fork_row "fork+exit, small heap" 0
fork_row "fork of a $fmib MiB heap" "$fmib"
