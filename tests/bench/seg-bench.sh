#!/usr/bin/env bash
# seg-bench.sh BUILD_DIR [RUNS]: program segments on huge pages, side by side
# in one run, best of RUNS (default 5) for each, the runs interleaved.
#   1. gcc: `gcc -O2 -c big.c` (tests/live/gen-bigc.py, cc1 busy for seconds),
#      plain vs `hugectl --text`; the object files must be identical.
#   2. g++: `g++ -O2 -c big.cpp` (the standard containers and algorithms):
#      cc1plus, 21 MiB of text, plain vs `hugectl --text`.
#   3. iTLB-bound: segbig with 64 MiB of text (tests/live/gen-segbig.py),
#      calls to 16384 functions 4 KiB apart in a random order: plain vs
#      `hugectl --text` (hugetlb) vs `hugectl --text --thp`.
# Prints times, the ratios hugekit / plain (below 1: faster), and the fraction
# of the text on huge pages measured from smaps while the program ran. Sets
# the 2 MiB pool for the run (as root, under the live-test lock) and puts it
# back. It never fails on a time (machines are noisy).
set -euo pipefail
build=${1:?usage: seg-bench.sh BUILD_DIR [RUNS]}
runs=${2:-5}
src=$(cd "$(dirname "$0")/../.." && pwd)
hugectl="$build/tools/hugectl"
segstat="$src/tests/live/segstat.py"
thp=/sys/kernel/mm/transparent_hugepage/enabled
work=$(mktemp -d)

if [ "$(id -u)" -ne 0 ] || [ ! -d /sys/kernel/mm/hugepages/hugepages-2048kB ]; then
	echo "SKIP: the benchmark needs root and 2 MiB huge pages"
	exit 77
fi
echo "seg-bench: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, kernel $(uname -r)"
if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
	echo "seg-bench: hardware performance counters exist; iTLB misses are not measured here, times only"
else
	echo "seg-bench: this machine has no hardware performance counters (no PMU in" \
		"/sys/bus/event_source/devices): iTLB misses cannot be counted, times only"
fi

# The program for 3, made before the lock (it takes a while).
segbig="$build/tests/segbig/segbig-text64"
mkdir -p "${segbig%/*}"
python3 "$src/tests/live/gen-segbig.py" --text-mib 64 --data-mib 0 --bss-mib 0 "$segbig"

# The largest text here is 64 MiB: 32 pages, and a few for the compilers.
# shellcheck source=tests/bench/pool.bash
. "$src/tests/bench/pool.bash"
bench_pool 48 "rm -rf $work"

# secs CMD...: the wall-clock seconds CMD takes (its output dropped).
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" > /dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# min A B: the smaller.
min() {
	awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'
}

# text_sampled NAME CMD...: run CMD, sample the text of its process NAME (a
# child of CMD, or CMD itself) from smaps every 0.2 s; print the largest
# percentage of its text on hugetlb pages and on THP, "H T".
text_sampled() {
	local name=$1 pid p best_h=0 best_t=0 h t
	shift
	"$@" > /dev/null &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		p=$( { pgrep -x "$name" -P "$pid" || pgrep -x "$name" | grep -x "$pid" || true; } | head -n 1)
		if [ -n "$p" ] && read -r h t < <(python3 "$segstat" pid "$p" 2> /dev/null |
			awk '$1 == "text" { print $4, $6 }'); then
			best_h=$(awk -v a="$h" -v b="$best_h" 'BEGIN { print (a > b ? a : b) }')
			best_t=$(awk -v a="$t" -v b="$best_t" 'BEGIN { print (a > b ? a : b) }')
		fi
		sleep 0.2
	done
	wait "$pid"
	echo "$best_h $best_t"
}

# compiler_row WHAT COMPILER PROC SOURCE: best of $runs of plain and hugectl
# --text, interleaved; the objects compared; cc1's text measured.
compiler_row() {
	local what=$1 cc=$2 proc=$3 file=$4 p="" h="" i frac
	"$cc" -O2 -c "$file" -o "$work/plain.o"
	"$hugectl" --text "$cc" -O2 -c "$file" -o "$work/huge.o"
	if ! cmp -s "$work/plain.o" "$work/huge.o"; then
		echo "seg-bench: $what: the object files differ" >&2
		exit 1
	fi
	for ((i = 0; i < runs; i++)); do
		p=$(min "$(secs "$cc" -O2 -c "$file" -o "$work/plain.o")" "$p")
		h=$(min "$(secs "$hugectl" --text "$cc" -O2 -c "$file" -o "$work/huge.o")" "$h")
	done
	frac=$(text_sampled "$proc" "$hugectl" --text "$cc" -O2 -c "$file" -o "$work/huge.o")
	printf '  %-32s plain %7.3f s   hugectl --text %7.3f s   ratio %.3f   %s text on hugetlb: %s %%\n' \
		"$what" "$p" "$h" "$(awk -v a="$h" -v b="$p" 'BEGIN { print a / b }')" "$proc" "${frac%% *}"
}

echo "seg-bench: compilers, best of $runs (wall clock; ratio = hugectl / plain)"
python3 "$src/tests/live/gen-bigc.py" 150 "$work/big.c"
compiler_row "gcc -O2 -c big.c (150 fns)" gcc cc1 "$work/big.c"
python3 "$src/tests/live/gen-bigc.py" 10 "$work/big.cpp"
compiler_row "g++ -O2 -c big.cpp (10 classes)" g++ cc1plus "$work/big.cpp"

calls=${SEG_BENCH_CALLS:-5000000}
echo "seg-bench: iTLB-bound, $calls calls in a random order to 16384 functions over 64 MiB of text, best of $runs"
sum=$("$segbig" bench 100000 | awk '{ print $4 }')
for v in "" "--text" "--text --thp"; do
	# shellcheck disable=SC2086 # the options are words
	s=$("$hugectl" $v "$segbig" bench 100000 | awk '{ print $4 }')
	[ "$s" = "$sum" ] || {
		echo "seg-bench: checksums differ: plain $sum, hugectl $v $s" >&2
		exit 1
	}
done
p="" h="" t=""
for ((i = 0; i < runs; i++)); do
	p=$(min "$("$segbig" bench "$calls" | awk '{ print $2 }')" "$p")
	h=$(min "$("$hugectl" --text "$segbig" bench "$calls" | awk '{ print $2 }')" "$h")
	if grep -q '\[never\]' "$thp"; then
		t=""
	else
		t=$(min "$("$hugectl" --text --thp "$segbig" bench "$calls" | awk '{ print $2 }')" "$t")
	fi
done
fh=$("$hugectl" --text "$segbig" check | awk '$2 == "text" { print $6 }')
ft=$("$hugectl" --text --thp "$segbig" check | awk '$2 == "text" { print $8 }')
printf '  plain (base pages)               %8.3f s\n' "$p"
printf '  hugectl --text (hugetlb)         %8.3f s   ratio %.3f   text on hugetlb: %s %%\n' \
	"$h" "$(awk -v a="$h" -v b="$p" 'BEGIN { print a / b }')" "$fh"
if [ -n "$t" ]; then
	printf '  hugectl --text --thp             %8.3f s   ratio %.3f   text on THP: %s %%\n' \
		"$t" "$(awk -v a="$t" -v b="$p" 'BEGIN { print a / b }')" "$ft"
else
	echo "  hugectl --text --thp: skipped, transparent huge pages are off ($thp: never)"
fi
