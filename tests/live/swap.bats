#!/usr/bin/env bats
# --add-temp-swap never swaps off or removes a file this run did not create,
# and a later run removes the swapfile-<PID> that a killed run left (after
# swapoff), saying so. Each test cleans up the files it made.

load live

setup_file() {
	live_requirements
	live_lock
	live_save
	hk_need_cmd mkswap util-linux
}

teardown_file() {
	live_restore
}

D=/sys/kernel/mm/hugepages/hugepages-2048kB
DIR=/var/lib/hugetlbfs/swap/temp

setup() {
	echo 0 > "$D/nr_overcommit_hugepages"
	echo 0 > "$D/nr_hugepages"
	MADE=()
	BEFORE=$(ls -A "$DIR" 2> /dev/null || true)
}

# Swap off and remove what a test (or a broken hugeadm) made, whatever happened.
teardown() {
	local f
	for f in "${MADE[@]}" "$DIR"/*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		grep -qxF "$(basename "$f")" <<< "$BEFORE" && continue
		swapoff "$f" 2> /dev/null || true
		rm -f "$f"
	done
	[ -z "${PIDS:-}" ] || kill $PIDS 2> /dev/null || true
}

# dead_pid: the PID of a process that has exited.
dead_pid() {
	local pid
	sh -c 'exit 0' &
	pid=$!
	wait "$pid"
	echo "$pid"
}

# swap_file PATH: a 2 MiB swap file made as a run of hugeadm makes it.
swap_file() {
	mkdir -p "$DIR"
	MADE+=("$1")
	dd if=/dev/zero of="$1" bs=1M count=2 status=none
	chmod 600 "$1"
	mkswap "$1" > /dev/null
}

in_swaps() {
	grep -q "^$1 " /proc/swaps
}

@test "a run killed mid-way leaves swapfile-<PID>; the next run removes it and says so" {
	local fake="$BATS_TEST_TMPDIR/bin" pid left
	mkdir -p "$fake"
	# A mkswap that waits, so SIGKILL lands while the file exists (no handler runs for it).
	printf '#!/bin/sh\necho $$ > %s/mkswap.pid\nexec sleep 60\n' "$BATS_TEST_TMPDIR" > "$fake/mkswap"
	chmod +x "$fake/mkswap"
	PATH="$fake:$PATH" hugeadm --add-temp-swap=1 --pool-pages-min 2M:+1 2> /dev/null &
	pid=$!
	live_wait_file "$BATS_TEST_TMPDIR/mkswap.pid" 100 "hugeadm never ran mkswap"
	PIDS=$(cat "$BATS_TEST_TMPDIR/mkswap.pid")
	kill -KILL "$pid"
	wait "$pid" || true
	left="$DIR/swapfile-$pid"
	MADE+=("$left")
	[ -f "$left" ] || fail "the killed run left no $left"
	run --separate-stderr hugeadm --add-temp-swap=1 --pool-pages-min 2M:+1
	assert_success
	[[ "$stderr" == *"removed $left, left by hugeadm run $pid that was killed (swapoff first)"* ]]
	[ ! -e "$left" ]
	assert_equal "$(ls "$DIR")" ""
}

@test "a killed run's file still in use as swap is swapped off, then removed" {
	local pid f
	pid=$(dead_pid)
	f="$DIR/swapfile-$pid"
	swap_file "$f"
	swapon "$f"
	in_swaps "$f"
	run --separate-stderr hugeadm --add-temp-swap=1 --pool-pages-min 2M:+1
	assert_success
	[[ "$stderr" == *"hugeadm:WARNING: removed $f, left by hugeadm run $pid that was killed (swapoff first)"* ]]
	if in_swaps "$f"; then fail "$f is still in use as swap"; fi
	[ ! -e "$f" ]
}

@test "files this run did not create are never swapped off or removed" {
	local live_pid f mine target
	# A running program's file, in use as swap: left alone.
	sleep 60 &
	live_pid=$!
	PIDS="$live_pid"
	f="$DIR/swapfile-$live_pid"
	swap_file "$f"
	swapon "$f"
	# A link at a dead PID's name: not followed, not removed.
	target="$BATS_TEST_TMPDIR/target"
	echo keep > "$target"
	mine="$DIR/swapfile-$(dead_pid)"
	ln -s "$target" "$mine"
	MADE+=("$mine")
	# A file at the very name this run would use (its PID, through exec): refused.
	run --separate-stderr bash -c 'f='"$DIR"'/swapfile-$$; echo someone > "$f"; exec hugeadm --add-temp-swap=1 --pool-pages-min 2M:+1'
	assert_success
	[[ "$stderr" == *"hugeadm:WARNING: Couldn't create $DIR/swapfile-"*": it exists, and this run did not create it: left alone"* ]]
	f2=$(ls "$DIR"/swapfile-* | grep -v -e "swapfile-$live_pid\$" -e "$mine\$")
	MADE+=("$f2")
	assert_equal "$(cat "$f2")" someone
	in_swaps "$f"
	[ -f "$f" ]
	[ -L "$mine" ]
	assert_equal "$(cat "$target")" keep
	# The pool grew all the same, as with swap that cannot be set up.
	assert_equal "$(cat "$D/nr_hugepages")" 1
}

@test "--persist: the file is renamed .persist and later runs leave it" {
	local f
	run --separate-stderr hugeadm --add-temp-swap=1 --persist --pool-pages-min 2M:+1
	assert_success
	f=$(ls "$DIR"/swapfile-*.persist)
	MADE+=("$f")
	in_swaps "$f"
	run --separate-stderr hugeadm --add-temp-swap=1 --pool-pages-min 2M:+1
	assert_success
	in_swaps "$f"
	assert_equal "$(ls "$DIR")" "$(basename "$f")"
}

@test "--apply: [apply] temp_swap and persist add swap while the pool grows, as the options do" {
	local f conf="$BATS_TEST_TMPDIR/swap.conf"
	printf '[pool 2M]\nminimum = 2\n[apply]\ntemp_swap = 1\npersist = yes\n' > "$conf"
	# A dry run prints the swap's commands around the write, and makes nothing.
	run --separate-stderr hugeadm --apply "$conf" --dry-run
	assert_success
	assert_line --regexp '^dd bs=1024 count=2048 if=/dev/zero of=/var/lib/hugetlbfs/swap/temp/swapfile-[0-9]+$'
	assert_line --regexp '^swapon /var/lib/hugetlbfs/swap/temp/swapfile-[0-9]+$'
	assert_line "echo 2 > /proc/sys/vm/nr_hugepages"
	assert_equal "$(ls -A "$DIR" 2> /dev/null || true)" "$BEFORE"
	run --separate-stderr hugeadm --apply "$conf"
	assert_success
	f=$(ls "$DIR"/swapfile-*.persist)
	MADE+=("$f")
	in_swaps "$f"
	assert_equal "$(cat "$D/nr_hugepages")" 2
}

@test "--apply --add-temp-swap: the swap is there while the pool grows, gone after" {
	local conf="$BATS_TEST_TMPDIR/swap.conf"
	printf '[pool 2M]\nminimum = 1\n' > "$conf"
	run --separate-stderr hugeadm --apply "$conf" --add-temp-swap=1 --verbose 3
	assert_success
	# Swapped on before the pool's write (the library's "FILE = VALUE" line).
	grep -nE '^hugeadm:INFO: (swapon /var/lib/hugetlbfs/swap/temp/swapfile-[0-9]+|/proc/sys/vm/nr_hugepages = 1)$' <<< "$stderr" | cut -d: -f3- > "$BATS_TEST_TMPDIR/order"
	run cat "$BATS_TEST_TMPDIR/order"
	assert_line --index 0 --regexp '^INFO: swapon /var/lib/hugetlbfs/swap/temp/swapfile-[0-9]+$'
	assert_line --index 1 'INFO: /proc/sys/vm/nr_hugepages = 1'
	assert_equal "$(cat "$D/nr_hugepages")" 1
	# Nothing left: not persisted.
	assert_equal "$(ls -A "$DIR" 2> /dev/null || true)" "$BEFORE"
}

@test "--persist with a pool grown twice: each swap file keeps a name of its own" {
	local files f
	run --separate-stderr hugeadm --add-temp-swap=1 --persist --pool-pages-min 2M:+1 --pool-pages-min 2M:+1
	assert_success
	mapfile -t files < <(ls "$DIR"/swapfile-*.persist)
	MADE+=("${files[@]}")
	# Before: the second file was renamed over the first, in use, which kept no name.
	assert_equal "${#files[@]}" 2
	for f in "${files[@]}"; do
		in_swaps "$f" || fail "$f is not in use as swap: $(cat /proc/swaps)"
	done
	assert_equal "$(grep -c '^/var/lib/hugetlbfs/swap/temp/' /proc/swaps)" 2
}
