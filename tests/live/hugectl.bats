#!/usr/bin/env bats
# hugectl and the runtime on the running kernel: programs that know nothing of
# huge pages get their heap and shared memory on them.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
	HEAP_TEST="$HK_BUILD_DIR/tests/heap-test"
	SHM_TEST="$HK_BUILD_DIR/tests/shm-test"
	export HEAP_TEST SHM_TEST
	RT="$HK_BUILD_DIR/lib/libhugekit-rt.so.0"
	export RT
}

teardown_file() {
	live_restore
}

# percent LINE: the third field of heap-test's output, as an integer.
percent() {
	echo "$1" | awk '{ printf "%d\n", $3 }'
}

@test "hugectl --heap: at least 95 % of a 4-thread heap in hugetlb pages" {
	live_pool_free 200
	run --separate-stderr hugectl --heap "$HEAP_TEST"
	assert_success
	echo "# hugectl --heap: hugetlb kB, anon kB, % = $output" >&3
	[ "$(percent "$output")" -ge 95 ]
}

@test "HUGETLB_MORECORE=yes with the runtime preloaded, without hugectl: the same" {
	live_pool_free 200
	run --separate-stderr env HUGETLB_MORECORE=yes LD_PRELOAD="$RT" "$HEAP_TEST"
	assert_success
	echo "# HUGETLB_MORECORE=yes: $output" >&3
	[ "$(percent "$output")" -ge 95 ]
}

@test "without hugectl the same program has no huge pages (the baseline)" {
	live_pool_free 200
	run "$HEAP_TEST"
	assert_success
	[ "$(percent "$output")" -eq 0 ]
}

@test "an empty pool: the program runs to completion, exit 0, and is told once" {
	live_pool_free 0
	run --separate-stderr hugectl --heap "$HEAP_TEST"
	assert_success
	[ "$(percent "$output")" -eq 0 ]
	[ "$(grep -c 'no free huge pages' <<< "$stderr")" -eq 1 ]
	run --separate-stderr env HUGETLB_MORECORE=yes LD_PRELOAD="$RT" "$HEAP_TEST"
	assert_success
	[ "$(grep -c 'no free huge pages' <<< "$stderr")" -eq 1 ]
}

@test "a GLIBC_TUNABLES the user set is merged, never overwritten" {
	run --separate-stderr env GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.arena_max=2 \
		hugectl --dry-run --heap true
	assert_success
	assert_line "GLIBC_TUNABLES='glibc.malloc.hugetlb=1:glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=4194304'"
}

@test "hugectl --shm: a plain shmget segment lands in huge pages; an empty pool falls back" {
	live_pool_free 10
	run --separate-stderr hugectl --shm "$SHM_TEST"
	assert_success
	assert_equal "$output" 6144
	run --separate-stderr "$SHM_TEST"
	assert_equal "$output" 0
	live_pool_free 0
	run --separate-stderr hugectl --shm "$SHM_TEST"
	assert_success
	assert_equal "$output" 0
	[[ "$stderr" == *"falling back to base pages"* ]]
}

@test "hugectl --report: one summary at exit" {
	live_pool_free 200
	run --separate-stderr hugectl --heap --report "$HEAP_TEST"
	assert_success
	[[ "$stderr" == "hugekit report: "*" kB of anonymous and heap memory on huge pages"* ]]
	[[ "$stderr" == *"page size 2048 kB"* ]]
}

@test "hugectl passes the program's exit status; an exec failure is exit 1" {
	run hugectl --heap sh -c 'exit 7'
	assert_equal "$status" 7
	run --separate-stderr hugectl --heap /no/such/program
	assert_equal "$status" 1
	assert_equal "$stderr" "hugectl: ERROR: exec failed: No such file or directory"
}

@test "hugectl --membind 0: the program's huge pages come from node 0" {
	hk_need_cmd numactl numactl
	live_pool_free 200
	run --separate-stderr hugectl --membind 0 --heap sh -c 'grep -q "^Mems_allowed_list:" /proc/self/status; numactl --show | grep "^membind:"'
	assert_success
	assert_output "membind: 0 "
}

@test "LD_LIBRARY_PATH is left alone; the runtime is preloaded by its absolute path" {
	run --separate-stderr env LD_LIBRARY_PATH=/opt/x hugectl --dry-run --heap true
	assert_success
	refute_line --partial "LD_LIBRARY_PATH"
	assert_line --regexp "^LD_PRELOAD='/.*/libhugekit-rt\.so\.0'$"
}
