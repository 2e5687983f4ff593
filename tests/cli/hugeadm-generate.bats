#!/usr/bin/env bats
# hugeadm --generate boot|sysctl|units on fixture trees, from the configurations
# of tests/fixtures/generate, against golden files: the kernel command line,
# the sysctl.d file with "recommended" worked out on the tree, the units (with
# systemd-analyze verify, and names as systemd-escape makes them), --output,
# and errors that write nothing.

load helpers

setup() {
	CONF=$BATS_TEST_TMPDIR/conf
	cp -R "$HK_SOURCE_DIR/tests/fixtures/generate" "$CONF"
	# Configurations by relative name: the messages say "boot.conf:2:".
	cd "$CONF"
}

# gen ROOT ARGS...: hugeadm --sysroot ROOT ARGS..., its output with ROOT as
# @ROOT@, the test's directory as @TMP@ and the installed hugeadm's directory
# (the build's prefix) as @BINDIR@; its exit status kept.
gen() {
	local root=$1 rc=0
	shift
	"$HUGEADM" --sysroot "$root" "$@" > "$BATS_TEST_TMPDIR/gen.out" 2> "$BATS_TEST_TMPDIR/gen.err" || rc=$?
	sed -e "s|$root|@ROOT@|g; s|$BATS_TEST_TMPDIR|@TMP@|g" \
		-e 's|^ExecStart=/.*/hugeadm |ExecStart=@BINDIR@/hugeadm |' "$BATS_TEST_TMPDIR/gen.out"
	sed -e "s|$root|@ROOT@|g; s|$BATS_TEST_TMPDIR|@TMP@|g" "$BATS_TEST_TMPDIR/gen.err" >&2
	return "$rc"
}

# verify DIR: systemd-analyze verify on the units of DIR, hugekit.service's
# ExecStart pointed at a stand-in program (verify wants it executable); no
# complaint at all, warnings included.
verify() {
	local dir=$1
	command -v systemd-analyze > /dev/null || skip "no systemd-analyze (apt-get install systemd)"
	printf '#!/bin/sh\nexit 0\n' > "$BATS_TEST_TMPDIR/fake-hugeadm"
	chmod +x "$BATS_TEST_TMPDIR/fake-hugeadm"
	sed -i "s|^ExecStart=[^ ]*|ExecStart=$BATS_TEST_TMPDIR/fake-hugeadm|" "$dir/hugekit.service"
	run --separate-stderr bash -c 'cd "$1" && shift && systemd-analyze verify --man=no "$@"' verify "$dir" "${@:2}"
	assert_success
	assert_equal "$stderr" ""
}

@test "boot: gigantic pools per node on the command line, the 2M pool left to the service" {
	local root
	root=$(fixture x86-2node)
	golden hugeadm/generate-boot-numa gen "$root" --generate boot --config boot-numa.conf
	# stdout is one line of parameters, for scripts; the advice is on stderr.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate boot --config boot-numa.conf
	assert_output "hugepagesz=1G hugepages=0:4,1:4"
	assert_equal "${#lines[@]}" 1
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate boot --config boot-numa.conf --verbose 1
	assert_output "hugepagesz=1G hugepages=0:4,1:4"
	assert_equal "$stderr" ""
}

@test "boot: [boot] options, pools = all, sizes ascending with each hugepagesz before its hugepages" {
	local root
	root=$(fixture x86-2node)
	golden hugeadm/generate-boot-options gen "$root" --generate boot --config boot-options.conf
}

@test "boot: nothing to put on the line: empty output, exit 0, a note at -v" {
	local root
	root=$(fixture x86-2node)
	golden hugeadm/generate-boot-nothing gen "$root" --generate boot --config boot-nothing.conf
	golden hugeadm/generate-boot-nothing-v gen "$root" --generate boot --config boot-nothing.conf -v
}

@test "boot --output DIR: DIR/kernel-cmdline, comments then the parameters, and nothing else" {
	local root out="$BATS_TEST_TMPDIR/out"
	root=$(fixture x86-2node)
	mkdir "$out"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate boot --config boot-numa.conf --output "$out"
	assert_success
	assert_output ""
	assert_equal "$stderr" ""
	run ls -A "$out"
	assert_output kernel-cmdline
	golden hugeadm/generate-boot-output cat "$out/kernel-cmdline"
	# The last line is the parameters alone; the others are comments.
	assert_equal "$(grep -v '^#' "$out/kernel-cmdline")" "hugepagesz=1G hugepages=0:4,1:4"
	assert_equal "$(stat -c %a "$out/kernel-cmdline")" 644
}

@test "sysctl: the default files under --sysroot, recommended values worked out on the tree" {
	local root
	root=$(fixture x86-2node)
	mkdir -p "$root/etc/hugekit/conf.d"
	cp sysctl.conf "$root/etc/hugekit/hugekit.conf"
	cp sysctl-db.conf "$root/etc/hugekit/conf.d/50-db.conf"
	golden hugeadm/generate-sysctl gen "$root" --generate sysctl
	# The tree's numbers: 11 x 2048 kB x its zones; the pools' maximum in bytes.
	zones=$(grep -c '^Node .*, zone' "$root/proc/zoneinfo")
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate sysctl
	assert_line "vm.min_free_kbytes = $((11 * 2048 * zones))"
	refute_line --partial "nr_hugepages"
	# One plan: the value the boot's sysctl.d file sets is the one --apply writes.
	local shmmax
	shmmax=$(sed -n 's/^kernel.shmmax = //p' <<< "$output")
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply --dry-run --json
	assert_success
	assert_equal "$(python3 -c 'import json, sys; print([c["to"] for c in json.loads(sys.argv[1])["changes"] if c["item"] == "sysctl kernel.shmmax"])' "$output")" "['$shmmax']"
	# Into a directory: 90-hugekit.conf, the same text.
	mkdir "$BATS_TEST_TMPDIR/sysctl.d"
	"$HUGEADM" --sysroot "$root" --generate sysctl --output "$BATS_TEST_TMPDIR/sysctl.d"
	run ls -A "$BATS_TEST_TMPDIR/sysctl.d"
	assert_output 90-hugekit.conf
	assert_equal "$(cat "$BATS_TEST_TMPDIR/sysctl.d/90-hugekit.conf")" "$("$HUGEADM" --sysroot "$root" --generate sysctl)"
}

@test "units: hugekit.service and a .mount per [mount], odd paths escaped, on stdout" {
	local root
	root=$(fixture x86-2node)
	golden hugeadm/generate-units gen "$root" --generate units --config units.conf
}

@test "units --output DIR: the units and nothing else, and systemd-analyze verify takes them" {
	local root out="$BATS_TEST_TMPDIR/units"
	root=$(fixture x86-2node)
	mkdir "$out"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$out"
	assert_success
	assert_output ""
	run ls -A "$out"
	assert_output "$(printf '%s\n' 'dev-hugepages\x2d2M.mount' hugekit.service 'mnt-huge\x20pages.mount' srv-a.b.mount)"
	verify "$out" hugekit.service 'dev-hugepages\x2d2M.mount' 'mnt-huge\x20pages.mount' srv-a.b.mount
}

@test "units: names as systemd-escape --path --suffix=mount makes them" {
	local root out="$BATS_TEST_TMPDIR/units" p want
	command -v systemd-escape > /dev/null || skip "no systemd-escape (apt-get install systemd)"
	root=$(fixture x86-2node)
	local paths=(/dev/hugepages-2M '/mnt/huge pages' /srv/a.b /.hidden/x /srv/ñ '/x:y_z\w' /srv/50% /srv/a-b.c_d)
	: > odd.conf
	for p in "${paths[@]}"; do printf '[mount %s]\npagesize = 2M\n\n' "$p" >> odd.conf; done
	mkdir "$out"
	"$HUGEADM" --sysroot "$root" --generate units --config odd.conf --output "$out"
	want=$( (systemd-escape --path --suffix=mount "${paths[@]}" | tr ' ' '\n'; echo hugekit.service) | LC_ALL=C sort)
	run bash -c 'ls -A "$1" | LC_ALL=C sort' ls "$out"
	assert_output "$want"
	# And systemd reads each Where= back to its unit's name. (Not the one with
	# ':': systemd-analyze 252 verify cannot load a unit file named so from a
	# directory, "Couldn't process aliases", whatever the unit says.)
	mapfile -t units < <(cd "$out" && ls -A | grep -v :)
	verify "$out" "${units[@]}"
}

@test "the installed hugekit.service is the one --generate units writes, and verifies" {
	local root built=$HK_BUILD_DIR/data/hugekit.service
	[ -f "$built" ] || fail "$built is not built"
	root=$(fixture x86-1node)
	: > empty.conf
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config empty.conf
	assert_success
	# From [Unit] on: the headers differ (what made each).
	diff -u <(sed -n '/^\[Unit\]/,$p' "$built") <(sed -n '/^\[Unit\]/,$p' <<<"${output#\# hugekit.service$'\n'}") ||
		fail "data/systemd/hugekit.service.in and hugeadm --generate units differ"
	grep -q '^ExecStart=/.*/hugeadm --apply$' "$built"
	mkdir "$BATS_TEST_TMPDIR/installed"
	cp "$built" "$BATS_TEST_TMPDIR/installed/"
	verify "$BATS_TEST_TMPDIR/installed" hugekit.service
}

@test "errors: FILE:LINE of each problem, exit 1, nothing written" {
	local root out="$BATS_TEST_TMPDIR/out"
	root=$(fixture x86-2node)
	mkdir "$out"
	golden hugeadm/generate-bad-boot gen "$root" --generate boot --config bad-boot.conf --output "$out"
	golden hugeadm/generate-bad-units gen "$root" --generate units --config bad-units.conf --output "$out"
	golden hugeadm/generate-bad-syntax gen "$root" --generate sysctl --config bad-syntax.conf --output "$out"
	run ls -A "$out"
	assert_output ""
}

@test "errors: unknown kind, --output not a directory, a missing --config, options without --generate" {
	local root out="$BATS_TEST_TMPDIR/out"
	root=$(fixture x86-2node)
	mkdir "$out"
	golden hugeadm/generate-bad-kind gen "$root" --generate grub --config units.conf --output "$out"
	touch "$BATS_TEST_TMPDIR/file"
	golden hugeadm/generate-output-not-dir gen "$root" --generate units --config units.conf --output "$BATS_TEST_TMPDIR/file"
	golden hugeadm/generate-output-missing gen "$root" --generate units --config units.conf --output "$BATS_TEST_TMPDIR/nodir"
	golden hugeadm/generate-config-missing gen "$root" --generate units --config no-such.conf --output "$out"
	golden hugeadm/generate-without-generate gen "$root" --config units.conf --output "$out"
	golden hugeadm/generate-with-change gen "$root" --generate units --pool-pages-min 2M:10
	run ls -A "$out"
	assert_output ""
	assert_equal "$(cat "$BATS_TEST_TMPDIR/file")" ""
	[ ! -e "$BATS_TEST_TMPDIR/nodir" ]
	# And the tree is untouched: --generate only reads the machine.
	run diff -r "$HK_FIXTURES/x86-2node" "$root"
	assert_success
}
