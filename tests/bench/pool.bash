# shellcheck shell=bash
# Sourced by the benchmarks: the 2 MiB pool for a run, under the live-test lock.

BENCH_POOL=/sys/kernel/mm/hugepages/hugepages-2048kB

# bench_pool NEED [CLEANUP]: take the live-test lock, set the 2 MiB pool to
# NEED persistent pages without overcommit, and put the old values back at
# exit, then run the command CLEANUP; exit 77 (a skip) when the kernel gives
# fewer pages.
bench_pool() {
	local need=$1 got
	BENCH_CLEANUP=${2:-:}
	exec 9> /run/lock/hugekit-live-tests.lock
	flock -w 900 9
	BENCH_OLD_NR=$(cat "$BENCH_POOL/nr_hugepages")
	BENCH_OLD_OC=$(cat "$BENCH_POOL/nr_overcommit_hugepages")
	trap 'echo "$BENCH_OLD_OC" > "$BENCH_POOL/nr_overcommit_hugepages"; echo "$BENCH_OLD_NR" > "$BENCH_POOL/nr_hugepages"; $BENCH_CLEANUP' EXIT
	echo 0 > "$BENCH_POOL/nr_overcommit_hugepages"
	echo "$need" > "$BENCH_POOL/nr_hugepages"
	got=$(cat "$BENCH_POOL/nr_hugepages")
	if [ "$got" -lt "$need" ]; then
		echo "SKIP: only $got of $need 2 MiB pages could be allocated"
		exit 77
	fi
}
