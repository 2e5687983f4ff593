#!/usr/bin/env bats
# --sysroot DIR stays inside DIR: a symbolic link in the tree that leads out
# (absolute, or through "..") is an error that names the path, never a read or
# a write on the host; links that stay inside the tree are followed. And
# --sysroot '' is an error, not the running system.

load helpers

# host_file: a scratch file outside the tree, standing for a host file root must not touch.
host_file() {
	mkdir -p "$BATS_TEST_TMPDIR/host"
	printf 'host\n' > "$BATS_TEST_TMPDIR/host/file"
	printf '%s\n' "$BATS_TEST_TMPDIR/host/file"
}

@test "the attack: nr_hugepages links to a host file; the file is unchanged, exit 1" {
	local root host
	root=$(fixture x86-1node)
	host=$(host_file)
	ln -sf "$host" "$root/proc/sys/vm/nr_hugepages"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:3
	assert_failure 1
	assert_equal "$(cat "$host")" host
	assert_equal "${stderr_lines[0]}" "hugeadm:ERROR: $root/proc/sys/vm/nr_hugepages: a symbolic link on this path leads out of the tree $root; nothing outside it is read or written"
	assert_equal "${stderr_lines[1]}" "hugeadm:ERROR: /proc/sys/vm/nr_hugepages: cannot write 3: Invalid cross-device link"
	# The same through "..", and in a dry run (which only looks).
	ln -sf ../../../../host/file "$root/proc/sys/vm/nr_hugepages"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:3
	assert_failure 1
	assert_equal "$(cat "$host")" host
	assert_equal "${stderr_lines[0]}" "hugeadm:ERROR: $root/proc/sys/vm/nr_hugepages: a symbolic link on this path leads out of the tree $root; nothing outside it is read or written"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --dry-run --pool-pages-min 2M:3
	assert_failure 1
	refute_output --partial "echo 3 >"
}

@test "a linked directory in the middle of the path is refused for reads too" {
	local root
	root=$(fixture x86-1node)
	mkdir -p "$BATS_TEST_TMPDIR/host"
	cp -R "$root/sys/kernel/mm/hugepages" "$BATS_TEST_TMPDIR/host/"
	rm -rf "$root/sys/kernel/mm/hugepages"
	ln -s "$BATS_TEST_TMPDIR/host/hugepages" "$root/sys/kernel/mm/hugepages"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-list
	assert_failure 1
	assert_output ""
	assert_equal "${stderr_lines[0]}" "hugeadm:ERROR: $root/sys/kernel/mm/hugepages: a symbolic link on this path leads out of the tree $root; nothing outside it is read or written"
	run --separate-stderr "$PAGESIZE" --sysroot "$root" -a
	assert_failure 1
	[[ "$stderr" == *"pagesize: ERROR: $root/sys/kernel/mm/hugepages: a symbolic link on this path leads out of the tree $root"* ]]
}

@test "links that stay inside the tree are followed" {
	local root
	root=$(fixture x86-1node)
	mv "$root/proc/sys/vm/nr_hugepages" "$root/nr_hugepages.real"
	ln -s ../../../nr_hugepages.real "$root/proc/sys/vm/nr_hugepages"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --pool-pages-min 2M:30
	assert_success
	assert_equal "$(cat "$root/nr_hugepages.real")" 30
	[ -L "$root/proc/sys/vm/nr_hugepages" ]
}

@test "--sysroot '' is an error, not the running system" {
	run --separate-stderr "$HUGEADM" --sysroot '' --pool-list
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "hugeadm:ERROR: --sysroot: the directory is empty"
	run --separate-stderr "$HUGEADM" --sysroot= --pool-pages-min 2M:1
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --sysroot: the directory is empty"
	run --separate-stderr "$PAGESIZE" --sysroot ''
	assert_failure 1
	assert_output ""
	assert_equal "$stderr" "pagesize: --sysroot: the directory is empty"
}
