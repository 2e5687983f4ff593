#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2016 # run --separate-stderr sets stderr; the programs expand $
# A launched program never fails because of the runtime: programs that fork
# under hugectl --heap with a pool of 1 page and of a few pages, no
# overcommit; bash under libhugetlbfs's environment; one warning per run.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
	FORK_TEST="$HK_BUILD_DIR/tests/fork-test"
	HEAP_TEST="$HK_BUILD_DIR/tests/heap-test"
	RT="$HK_BUILD_DIR/lib/libhugekit-rt.so.0"
	export FORK_TEST HEAP_TEST RT
}

teardown_file() {
	live_restore
}

# A bash loop of 50 subshells and command substitutions, each changing variables and arrays.
# shellcheck disable=SC2016 # expanded by the launched bash
SUBSHELLS='declare -a big; for ((i = 0; i < 20000; i++)); do big[i]=$i; done
n=0
for ((i = 0; i < 50; i++)); do
	( x=$i; big[i]=changed; big+=(more "$x"); s=${big[*]}; [ ${#s} -gt 0 ] ) || exit 9
	y=$(z=$i; big[7]=$z; echo "${big[7]}")
	[ "$y" = "$i" ] || exit 8
	n=$((n + 1))
done
echo "$n"'

# python3: forked children write to a 20 MiB list while the parent keeps its own.
PYFORK='import os
l = list(range(2_500_000))
for k in range(8):
    pid = os.fork()
    if pid == 0:
        for j in range(0, len(l), 97):
            l[j] = -j
        os._exit(0 if all(l[j] == -j for j in range(0, len(l), 97)) else 3)
    l[k] = k + 1
    _, st = os.waitpid(pid, 0)
    if st != 0:
        raise SystemExit(f"child {k}: status {st}")
print(sum(l[:8]))'

python() {
	hk_need_cmd python3 python3
	python3 "$@"
}

# for_pools CMD...: CMD with a pool of 1, then of 8 free pages. CMD runs as a
# plain command, errexit on: an assertion that fails in it fails the test
# (`CMD || return 1` would turn errexit off inside it, and only its last
# command would count).
for_pools() {
	local n
	for n in 1 8; do
		live_pool_free "$n"
		"$@"
	done
}

subshells() {
	run --separate-stderr hugectl --heap bash -c "$SUBSHELLS"
	assert_success
	assert_output 50
}

@test "a bash loop of 50 subshells and \$(...) under hugectl --heap, pool of 1 and of 8 pages" {
	for_pools subshells
}

pyfork() {
	hk_need_cmd python3 python3
	run --separate-stderr hugectl --heap python3 -c "$PYFORK"
	assert_success
	assert_output 36
}

@test "python3 children write to a 20 MiB list after os.fork, pool of 1 and of 8 pages" {
	for_pools pyfork
}

prefork() {
	run --separate-stderr hugectl --heap "$FORK_TEST" prefork 8 16
	assert_success
}

@test "a prefork server: 8 workers write the parent's 16 MiB block, pool of 1 and of 8 pages" {
	for_pools prefork
}

# workers POOL HOW: fork-test's prefork server (8 workers, a 16 MiB block,
# made by HOW: fork, _Fork or clone without CLONE_VM, all alive at once)
# under hugectl --heap --report=all with a pool of POOL free pages. The
# parent takes 10 of them (the block's 18 MiB chunk and the main arena's 2
# MiB); it prints the free pages left (free F), each worker how much of its
# own copy of the block is on huge pages, and each worker's report.
workers() {
	live_pool_free "$1"
	run --separate-stderr hugectl --heap --report=all "$FORK_TEST" workers 8 16 "$2"
	printf '# %s\n# stderr: %s\n' "$output" "$stderr"
	assert_success
}

# count REGEX TEXT: lines of TEXT that match.
count() {
	grep -c -E "$1" <<< "$2" || true
}

# served HOW: the rule. Each worker's copy takes 10 pages, given worker after
# worker while free pages last; a worker that gets only part of them has that
# part on huge pages and the rest on base pages; one warning for the run.
served() {
	local free full part have
	free=$(sed -n 's/^free //p' <<< "$output")
	full=$((free / 10 > 8 ? 8 : free / 10))
	part=$((full < 8 && free % 10 > 1 ? 1 : 0))
	have=$(count '^worker [0-7] huge 16384 base 0$' "$output")
	[ "$have" = "$full" ] || fail "$1: $have workers all on huge pages, want $full of $free free pages"
	[ "$(count '^worker [0-7] huge [1-9][0-9]* base [1-9][0-9]*$' "$output")" = "$part" ] ||
		fail "$1: want $part worker partly on huge pages"
	[ "$(count '^worker [0-7] huge 0 base 16384$' "$output")" = $((8 - full - part)) ] ||
		fail "$1: want $((8 - full - part)) workers on base pages"
	[ "$(count 'WARNING: a forked child' "$stderr")" = $((full == 8 ? 0 : 1)) ] ||
		fail "$1: want one warning when a worker falls back, none else"
	# Each worker's report says what its heap had.
	[ "$(count '^hugekit report \(pid [0-9]+\): 20480 kB of anonymous and heap memory on huge pages' "$stderr")" = "$full" ] ||
		fail "$1: want $full reports of 20480 kB on huge pages"
}

@test "clone(CLONE_FILES) without CLONE_VM: no descriptor of the parent or the child closed under it" {
	live_pool_free 100
	run --separate-stderr hugectl --heap "$FORK_TEST" clonefiles 10
	printf '# stderr: %s\n' "$stderr"
	assert_success
}

@test "a thread's fork() that fails while another thread forks a long-lived child returns at once" {
	hk_need_cmd setpriv util-linux
	hk_need_cmd prlimit util-linux
	live_pool_free 100
	# nobody: root is not held to RLIMIT_NPROC. 12 tasks: the two threads and 10 children.
	run --separate-stderr prlimit --nproc=12 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		hugectl --heap "$FORK_TEST" failing 8
	printf '# %s\n# stderr: %s\n' "$output" "$stderr"
	assert_success
}

@test "a prefork server (fork, _Fork, clone): room for all 8 workers, each worker's heap on huge pages, its report says so" {
	for how in fork _Fork clone; do
		workers 100 "$how"
		assert_line "free 90"
		served "$how"
	done
}

@test "the same with room for half the workers, for 4.5, for none: the pages that cannot be had fall back, one warning, no SIGBUS" {
	for how in fork _Fork clone; do
		workers 50 "$how"
		assert_line "free 40"
		served "$how"
		workers 55 "$how"
		served "$how"
		workers 10 "$how"
		assert_line "free 0"
		served "$how"
	done
}

@test "a hugetlb cgroup limit of 15 pages, pool of 100: worker 0 gets the 5 pages left, the others base pages, no SIGBUS" {
	local root
	root=$(live_cgroup_root) || hk_missing "no cgroup v2 hierarchy with the hugetlb controller here"
	live_pool_free 100
	# The group, its limit and the controller are put back by the script's own trap.
	run --separate-stderr bash -c '
		root=$1 cg=$1/hk-fork-test.$$
		saved=$(cat "$root/cgroup.subtree_control")
		trap "rmdir \"\$cg\"; grep -qw hugetlb <<< \"\$saved\" || echo -hugetlb > \"\$root/cgroup.subtree_control\"" EXIT
		grep -qw hugetlb <<< "$saved" || echo +hugetlb > "$root/cgroup.subtree_control"
		mkdir "$cg" && echo $((15 * 2097152)) > "$cg/hugetlb.2MB.max" || exit 99
		sh -c "echo \$\$ > \"\$1/cgroup.procs\" && exec hugectl --heap \"\$2\" workers 8 16 fork" sh "$cg" "$2"
	' bash "$root" "$FORK_TEST"
	printf '# %s\n# stderr: %s\n' "$output" "$stderr"
	assert_success
	assert_line "free 90"
	assert_line --regexp '^worker 0 huge 102[0-9][0-9] base [0-9]+$'
	assert_equal "$(count '^worker [1-7] huge 0 base 16384$' "$output")" 7
	assert_equal "$(count 'WARNING: a forked child .* hugetlb cgroup' "$stderr")" 1
	# The script put the group back.
	[ -z "$(find "$root" -maxdepth 1 -name 'hk-fork-test.*')" ]
}

@test "--report (not =all): the launched program's report only, not its forked workers'" {
	live_pool_free 100
	run --separate-stderr hugectl --heap --report "$FORK_TEST" workers 8 16 fork
	assert_success
	assert_equal "$(count '^hugekit report' "$stderr")" 1
	[[ "$stderr" == *"hugekit report: "* ]]
}

threaded_system() {
	run --separate-stderr hugectl --heap "$FORK_TEST" system 20
	assert_success
}

@test "system() from a threaded program, pool of 1 and of 8 pages" {
	for_pools threaded_system
}

threads_fork() {
	run --separate-stderr hugectl --heap "$FORK_TEST" threads 10
	assert_success
}

@test "a threaded program (an arena per thread) forks children that malloc, pool of 1 and of 8 pages" {
	for_pools threads_fork
}

@test "threads write to 36 shared huge pages while the program forks, no spare page: no child sees wrong data" {
	# The parent's other threads do not wait for the child's copy: each write of theirs to a
	# page shared with the child, with no free page in the pool, takes the page from the
	# child. The child may die of SIGBUS (the kernel's, as with HK_RT_FORK=share); it must
	# never go on with zeros where its data was.
	live_pool_free 40
	run --separate-stderr hugectl --heap "$FORK_TEST" race 36 2 20
	echo "$output $stderr"
	assert_success
	assert_output --regexp '^wrong 0 killed [0-9]+ of 20$'
}

@test "a huge page the program made read-only, then writable again in a child, with no free page: the child writes it" {
	# Only the program's own text and rodata on huge pages stay shared in a child;
	# any other read-only mapping may become writable and must move.
	live_pool_free 4
	run --separate-stderr hugectl --heap "$FORK_TEST" readonly
	echo "$output $stderr"
	assert_success
}

@test "without the move (HK_RT_FORK=share), the same children die: the tests above can fail" {
	live_pool_free 1
	run --separate-stderr env HK_RT_FORK=share hugectl --heap "$FORK_TEST" prefork 8 16
	assert_failure
	[[ "$stderr" == *"fork-test: a worker ended with status 0x7"* ]]
}

# starts CMD...: run CMD with the runtime preloaded and HUGETLB_MORECORE=yes;
# $output is the program's, the number of starts is in $starts (1 + restarts).
starts() {
	run --separate-stderr timeout 20 env HUGETLB_MORECORE=yes HUGETLB_VERBOSE=3 LD_PRELOAD="$RT" "$@"
	starts=$((1 + $(grep -c 'INFO: starting again' <<< "$stderr")))
}

@test "HUGETLB_MORECORE=yes, runtime preloaded: bash, a bash script, dash, python3, a C program start twice and run" {
	local script="$BATS_TEST_TMPDIR/script.sh"
	live_pool_free 8
	printf '#!/bin/bash\necho "script $1"\n' > "$script"
	chmod +x "$script"

	starts bash -c 'echo "bash $0"' arg0
	assert_success
	assert_output "bash arg0"
	assert_equal "$starts" 2
	starts "$script" one
	assert_success
	assert_output "script one"
	assert_equal "$starts" 2
	starts dash -c 'echo dash'
	assert_success
	assert_output dash
	assert_equal "$starts" 2
	if command -v python3 > /dev/null; then
		starts python3 -c 'import sys; print("python", sys.argv[1])' x
		assert_success
		assert_output "python x"
		# A shim (pyenv's is a bash script) starts twice; python3 after it inherits the tunables.
		assert_equal "$starts" 2
	fi
	starts "$HEAP_TEST"
	assert_success
	assert_equal "$starts" 2
	# The second start has the heap on huge pages, and exec -a's argv[0] survives it.
	starts bash -c 'exec -a renamed bash -c "echo \$0"'
	assert_success
	assert_output renamed
}

@test "the guard and the pid stay out of a program's children; the tunables stay in" {
	live_pool_free 8
	# shellcheck disable=SC2016
	run --separate-stderr env HUGETLB_MORECORE=yes LD_PRELOAD="$RT" bash -c 'env | grep -E "^(HK_RT_REEXEC|HK_RT_PID|GLIBC_TUNABLES)=" | sort'
	assert_success
	assert_line --index 0 --partial "GLIBC_TUNABLES=glibc.malloc.hugetlb=2"
	assert_line --index 1 --regexp '^HK_RT_PID=[0-9]+$'
	refute_line --partial HK_RT_REEXEC
}

@test "an empty pool: one warning for a whole shell loop, not one per process" {
	live_pool_free 0
	run --separate-stderr hugectl --heap bash -c 'for i in 1 2 3 4 5 6 7 8; do (true); /bin/true; x=$(echo); done'
	assert_success
	assert_equal "$(grep -c 'no free huge pages' <<< "$stderr")" 1
	# At -v the children say it too.
	run --separate-stderr hugectl -v --heap bash -c 'for i in 1 2; do /bin/true; done'
	[ "$(grep -c 'no free huge pages' <<< "$stderr")" -ge 2 ]
}

@test "an empty pool: one warning when the launched program executes others in its place (a shim)" {
	live_pool_free 0
	# A wrapper script that execs bash, which execs dash, which execs the program: one
	# process, four images (pyenv's python3 shim is such a chain).
	printf '#!/bin/bash\nexec bash -c "exec dash -c \\"exec %s\\""\n' "$HK_BUILD_DIR/tests/heap-test" > "$BATS_TEST_TMPDIR/shim"
	chmod +x "$BATS_TEST_TMPDIR/shim"
	run --separate-stderr hugectl --heap "$BATS_TEST_TMPDIR/shim"
	assert_success
	assert_equal "$(grep -c 'no free huge pages' <<< "$stderr")" 1
}

@test "a pool of 1 page that the program's own start takes: no warning that the heap is on base pages" {
	live_pool_free 1
	# shellcheck disable=SC2016 # $$ is bash's, in the launched program
	run --separate-stderr hugectl --heap bash -c 'awk "/^Private_Hugetlb/ { print \$2 }" /proc/$$/smaps_rollup'
	assert_success
	# The page is the program's own (taken by a malloc before the runtime looked) ...
	[ "$output" -gt 0 ] || hk_skip "bash took no huge page at start here ($output kB)"
	# ... so the heap is on huge pages, and saying otherwise would be wrong.
	[[ "$stderr" != *"no free huge pages"* ]] || fail "warned: $stderr"
}

@test "--report: the launched program only; --report=all: its children too" {
	live_pool_free 8
	run --separate-stderr hugectl --heap --report bash -c '/bin/true; /bin/true; :'
	assert_success
	assert_equal "$(grep -c '^hugekit report' <<< "$stderr")" 1
	[[ "$stderr" == "hugekit report: "* ]]
	run --separate-stderr hugectl --heap --report=all bash -c '/bin/true; /bin/true; :'
	assert_success
	assert_equal "$(grep -c '^hugekit report: ' <<< "$stderr")" 1
	assert_equal "$(grep -c '^hugekit report (pid [0-9]*): ' <<< "$stderr")" 2
}
