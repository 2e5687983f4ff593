#!/usr/bin/env bats
# The key of shared text (lib/runtime/share.c, rt_share_key): the GNU build-id
# read from the program's own PT_NOTE in memory, else the device, inode and
# modification time (ns) of the executable, through the path layer.

load helpers

PROBE="$HK_BUILD_DIR/tests/rt-share-probe"

@test "a program with a build-id: its hex digits, as readelf shows them" {
	hk_need_cmd readelf binutils
	local id
	id=$(readelf -n "$PROBE" | sed -n 's/^ *Build ID: *//p')
	[ -n "$id" ] || hk_missing "the probe was linked without a build-id"
	run --separate-stderr "$PROBE" key
	assert_success
	assert_output "$id"
}

@test "a program without one: d<dev>-i<ino>-m<mtime ns> of the executable" {
	local bin="$PROBE-nobid" mtime
	if command -v readelf > /dev/null; then
		run readelf -n "$bin"
		refute_output --partial "Build ID"
	fi
	mtime=$(stat -c %.9Y "$bin")
	run --separate-stderr "$bin" key
	assert_success
	assert_output "d$(stat -c %d "$bin")-i$(stat -c %i "$bin")-m${mtime/./}"
	# Another modification time is another key.
	cp -p "$bin" "$BATS_TEST_TMPDIR/p"
	touch -d @1000000000.5 "$BATS_TEST_TMPDIR/p"
	run --separate-stderr "$BATS_TEST_TMPDIR/p" key
	assert_output "d$(stat -c %d "$BATS_TEST_TMPDIR/p")-i$(stat -c %i "$BATS_TEST_TMPDIR/p")-m1000000000500000000"
}
