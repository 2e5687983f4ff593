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
	hk_need_cmd systemd-analyze systemd
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
	# Below the recommendation, which is written only to raise shmmax.
	echo 33554432 > "$root/proc/sys/kernel/shmmax"
	golden hugeadm/generate-sysctl gen "$root" --generate sysctl
	# The tree's numbers: 11 x 2048 kB x its zones; the pools' maximum in bytes.
	zones=$(grep -c '^Node .*, zone' "$root/proc/zoneinfo")
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate sysctl
	assert_line "vm.min_free_kbytes = $((11 * 2048 * zones))"
	refute_line --partial "nr_hugepages"
	# One plan: the value --apply raises a lower shmmax to is the one the file names;
	# the file itself never sets shmmax (at boot the kernel's default is above it).
	local shmmax
	refute_line --regexp '^kernel.shmmax'
	shmmax=$(sed -n 's/^# raises a lower value to \([0-9]*\) .*/\1/p' <<< "$output")
	[ -n "$shmmax" ] || fail "no recommended shmmax named: $output"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply --dry-run --json
	assert_success
	assert_equal "$(python3 -c 'import json, sys; print([c["to"] for c in json.loads(sys.argv[1])["changes"] if c["item"] == "sysctl kernel.shmmax"])' "$output")" "['$shmmax']"
	# Into a directory: 90-hugekit.conf, the same text.
	mkdir "$BATS_TEST_TMPDIR/sysctl.d"
	"$HUGEADM" --sysroot "$root" --generate sysctl --output "$BATS_TEST_TMPDIR/sysctl.d"
	run ls -A "$BATS_TEST_TMPDIR/sysctl.d"
	assert_output 90-hugekit.conf
	assert_equal "$(cat "$BATS_TEST_TMPDIR/sysctl.d/90-hugekit.conf")" "$("$HUGEADM" --sysroot "$root" --generate sysctl)"
	# At the kernel's default, above the recommendation: no line, as --apply writes none.
	echo 18446744073692774399 > "$root/proc/sys/kernel/shmmax"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate sysctl
	assert_success
	refute_line --partial "kernel.shmmax"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply --dry-run --json
	assert_success
	refute_output --partial "sysctl kernel.shmmax"
}

@test "units: hugekit.service and a .mount per [mount], odd paths escaped, on stdout" {
	local root
	root=$(fixture x86-2node)
	golden hugeadm/generate-units gen "$root" --generate units --config units.conf
}

@test "units: a mount with user= alone gets the user's group, as --apply gives it; the service applies --config FILE" {
	local root gid opts
	root=$(fixture x86-2node)
	gid=$(id -g nobody)
	[ "$gid" -ne 0 ] || fail "nobody's primary group is root's: the case cannot show"
	printf '[mount /srv/n]\npagesize = 2M\nuser = nobody\n' > user.conf
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config user.conf
	assert_success
	opts=$(sed -n 's/^Options=//p' <<< "$output")
	assert_equal "$opts" "nosuid,nodev,pagesize=2M,uid=$(id -u nobody),gid=$gid"
	assert_line --regexp "^ExecStart=/.*/hugeadm --apply $CONF/user.conf\$"
	assert_line "RequiresMountsFor=$CONF/user.conf"
	# The same owner in the plan --apply runs.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply user.conf --dry-run --json
	assert_success
	[[ $output == *"uid=$(id -u nobody),gid=$gid,"* ]] || fail "--apply's mount: $output"
	# A group given is the group; the service of the default configuration applies it.
	printf '[mount /srv/n]\npagesize = 2M\nuser = nobody\ngroup = root\n' > user.conf
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config user.conf
	assert_line "Options=nosuid,nodev,pagesize=2M,uid=$(id -u nobody),gid=0"
	mkdir -p "$root/etc/hugekit"
	cp user.conf "$root/etc/hugekit/hugekit.conf"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units
	assert_success
	assert_line --regexp "^ExecStart=/.*/hugeadm --apply\$"
	refute_line --partial "RequiresMountsFor=/etc"
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
	hk_need_cmd systemd-escape systemd
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
	# No configuration in the tree: the service of the default one, nothing else.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units
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

# The files --output DIR holds, each "NAME SIZE", and no other.
listing() {
	(cd "$1" && find . -mindepth 1 -printf '%P %s\n' | LC_ALL=C sort)
}

@test "--output through a symbolic link, at DIR or in a parent: refused, nothing written at the link's target" {
	local root out="$BATS_TEST_TMPDIR/out"
	root=$(fixture x86-2node)
	mkdir -m 0700 "$out" "$BATS_TEST_TMPDIR/real"
	ln -s "$out" "$BATS_TEST_TMPDIR/link"
	ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/parent"
	mkdir -m 0700 "$BATS_TEST_TMPDIR/real/units"
	for dir in "$BATS_TEST_TMPDIR/link" "$BATS_TEST_TMPDIR/link/" "$BATS_TEST_TMPDIR/parent/units"; do
		run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$dir"
		assert_failure 1
		assert_output ""
		assert_equal "$stderr" "hugeadm:ERROR: --output $dir: a symbolic link is in its path: not followed (name the directory itself)"
	done
	# Relative: from the working directory (its path is the kernel's, with no link), no link followed.
	run --separate-stderr bash -c 'cd "$1" && hugeadm --sysroot "$2" --generate units --config "$3" --output link' \
		rel "$BATS_TEST_TMPDIR" "$root" "$CONF/units.conf"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --output link: a symbolic link is in its path: not followed (name the directory itself)"
	assert_equal "$(ls -A "$out" "$BATS_TEST_TMPDIR/real/units")" "$(printf '%s:\n\n%s:' "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/real/units")"
	# The same directories named by their own paths are fine, relative ones too.
	"$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$BATS_TEST_TMPDIR/real/units"
	[ -s "$BATS_TEST_TMPDIR/real/units/hugekit.service" ]
	(cd "$BATS_TEST_TMPDIR/parent" && "$HUGEADM" --sysroot "$root" --generate sysctl --config "$CONF/sysctl.conf" --output units)
	[ -s "$BATS_TEST_TMPDIR/real/units/90-hugekit.conf" ]
}

@test "--output without openat2 (ENOSYS: a kernel before 5.6, systemd's RestrictSUIDSGID=): the walk refuses the same links and writes DIR" {
	local root n=$HK_BUILD_DIR/tests/no-openat2 dir
	root=$(fixture x86-2node)
	mkdir -m 0700 "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/real/units"
	ln -s "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/link"
	ln -s "$BATS_TEST_TMPDIR/real" "$BATS_TEST_TMPDIR/parent"
	for dir in "$BATS_TEST_TMPDIR/link" "$BATS_TEST_TMPDIR/link/" "$BATS_TEST_TMPDIR/parent/units"; do
		run --separate-stderr "$n" "$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$dir"
		assert_failure 1
		assert_equal "$stderr" "hugeadm:ERROR: --output $dir: a symbolic link is in its path: not followed (name the directory itself)"
	done
	run --separate-stderr bash -c 'cd "$1" && "$2" hugeadm --sysroot "$3" --generate units --config "$4" --output link' \
		rel "$BATS_TEST_TMPDIR" "$n" "$root" "$CONF/units.conf"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --output link: a symbolic link is in its path: not followed (name the directory itself)"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/real/units")" "$(printf '%s:\n\n%s:' "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/real/units")"
	run --separate-stderr "$n" "$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$BATS_TEST_TMPDIR/nodir"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --output $BATS_TEST_TMPDIR/nodir: No such file or directory"
	# By its own path, absolute and relative, and "/" spelled twice in it: written.
	run --separate-stderr "$n" "$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$BATS_TEST_TMPDIR//real/units/"
	assert_success
	assert_equal "$stderr" ""
	[ -s "$BATS_TEST_TMPDIR/real/units/hugekit.service" ]
	(cd "$BATS_TEST_TMPDIR/real" && "$n" "$HUGEADM" --sysroot "$root" --generate sysctl --config "$CONF/sysctl.conf" --output units)
	[ -s "$BATS_TEST_TMPDIR/real/units/90-hugekit.conf" ]
}

@test "--output DIR of another user, writable by its group or by others (/tmp): refused, naming DIR and why" {
	local root dir
	root=$(fixture x86-2node)
	hk_need_root "to give a directory to another user"
	dir=$BATS_TEST_TMPDIR/nobodys
	mkdir -m 0700 "$dir"
	chown nobody "$dir"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$dir"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --output $dir: owned by nobody (uid $(id -u nobody)), not by the user running hugeadm (uid 0): not writing there"
	dir=$BATS_TEST_TMPDIR/group
	mkdir -m 0770 "$dir"
	chmod 0770 "$dir"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate sysctl --config sysctl.conf --output "$dir"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --output $dir: writable by its group (mode 0770): they could plant or replace its files; name a directory only its owner can write to (mktemp -d)"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate boot --config boot-numa.conf --output /tmp
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: --output /tmp: writable by others (mode $(stat -c %04a /tmp)): they could plant or replace its files; name a directory only its owner can write to (mktemp -d)"
	assert_equal "$(ls -A "$BATS_TEST_TMPDIR/nobodys" "$BATS_TEST_TMPDIR/group")" "$(printf '%s:\n\n%s:' "$BATS_TEST_TMPDIR/group" "$BATS_TEST_TMPDIR/nobodys")"
	[ ! -e /tmp/kernel-cmdline ] || [ /tmp/kernel-cmdline -ot "$BATS_TEST_TMPDIR/group" ]
	# A 0700 mktemp -d under /tmp, the caller's own, is fine.
	dir=$(mktemp -d /tmp/hk-gen.XXXXXX)
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate boot --config boot-numa.conf --output "$dir"
	rm -rf "$dir"
	assert_success
	assert_equal "$stderr" ""
}

@test "names planted in DIR, 2.23-style predictable ones and many others, neither stop the run nor get written" {
	local root out="$BATS_TEST_TMPDIR/out" i name mode
	root=$(fixture x86-2node)
	unshare --pid --fork true 2> /dev/null || hk_skip "cannot make a PID namespace (unshare --pid): hugeadm's pid is not predictable"
	mkdir -m 0700 "$out"
	# As pid 1, the names hugeadm once tried, all 100 of them, for each file; and 1000 more.
	for name in hugekit.service 'dev-hugepages\x2d2M.mount' 'mnt-huge\x20pages.mount' srv-a.b.mount 90-hugekit.conf; do
		for i in $(seq 0 99); do
			printf 'planted\n' > "$out/$(printf '.%s.%06x' "$name" $(((2654435761 + i * 40503) & 0xffffff)))"
		done
	done
	for i in $(seq 1000); do : > "$out/.hugekit.service.$i"; done
	listing "$out" > "$BATS_TEST_TMPDIR/before"
	for mode in "" named; do
		run --separate-stderr env HK_TMPFILE="$mode" unshare --pid --fork "$HUGEADM" --sysroot "$root" --generate units --config units.conf --output "$out"
		assert_success
		assert_equal "$stderr" ""
		# Whole, and the planted names as they were: nothing else in DIR.
		diff -u <("$HUGEADM" --sysroot "$root" --generate units --config units.conf | sed -n '/^# hugekit.service$/,/^$/{/^# hugekit.service$/d;/^$/d;p}') \
			<(sed '/^$/,$d' "$out/hugekit.service") || fail "hugekit.service is not whole"
		diff -u <(sed 's/\(\.mount\|\.service\) [0-9]*$/\1 N/' "$BATS_TEST_TMPDIR/before" | grep -v -e '^hugekit.service' -e '\.mount N$') \
			<(listing "$out" | grep -v -e '^hugekit.service ' -e '^[a-z].*\.mount [0-9]*$') || fail "DIR holds other files than the units and the planted names"
		grep -L planted "$out"/.*.*[0-9a-f] | grep -v '\.hugekit\.service\.[0-9]*$' && fail "a planted file was written"
		rm -f "$out/hugekit.service" "$out"/*.mount
	done
	true
}

@test "each file is synced before it gets its name, and the directory after (strace)" {
	local root out="$BATS_TEST_TMPDIR/out" log="$BATS_TEST_TMPDIR/strace"
	root=$(fixture x86-2node)
	command -v strace > /dev/null || fail "no strace (apt-get install strace)"
	mkdir -m 0700 "$out"
	# (LeakSanitizer cannot run under ptrace.)
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	strace -f -o "$log" -e trace=openat,openat2,fsync,fdatasync,linkat,renameat,renameat2 \
		"$HUGEADM" --sysroot "$root" --generate sysctl --config sysctl.conf --output "$out"
	# O_TMPFILE in DIR, synced, linked in under a random name, renamed over the name, DIR synced.
	run python3 - "$log" "$out" <<'PY'
import re, sys
log, out = sys.argv[1], sys.argv[2]
fds, steps = {}, []
for line in open(log):
    m = re.search(r'openat2?\(AT_FDCWD, "(%s)", .*O_DIRECTORY.* = (\d+)' % re.escape(out), line)
    if m: fds[m.group(2)] = 'DIR'
    m = re.search(r'openat\((\d+), "\.", O_RDWR\|O_CLOEXEC\|O_TMPFILE.* = (\d+)', line)
    if m and fds.get(m.group(1)) == 'DIR': fds[m.group(2)] = 'FILE'; steps.append('tmpfile')
    m = re.search(r'fsync\((\d+)\) += 0', line)
    if m and m.group(1) in fds: steps.append('fsync ' + fds[m.group(1)])
    if re.search(r'linkat\(\d+, "", \d+, "\.90-hugekit\.conf\.[A-Za-z0-9]{16}", AT_EMPTY_PATH\) = 0', line): steps.append('link')
    if re.search(r'renameat2?\(\d+, "\.90-hugekit\.conf\.[A-Za-z0-9]{16}", \d+, "90-hugekit\.conf".* = 0', line): steps.append('rename')
print(' '.join(steps))
PY
	assert_output "tmpfile fsync FILE link rename fsync DIR"
	# Where the filesystem has no O_TMPFILE: a random name, made O_EXCL, synced, renamed, DIR synced.
	HK_TMPFILE=named strace -f -o "$log" -e trace=openat,fsync,renameat,renameat2 \
		"$HUGEADM" --sysroot "$root" --generate sysctl --config sysctl.conf --output "$out"
	grep -E -A3 'openat\([0-9]+, "\.90-hugekit\.conf\.[A-Za-z0-9]{16}", O_RDWR\|O_CREAT\|O_EXCL\|O_NOFOLLOW\|O_CLOEXEC, 0644\) = [0-9]+' "$log" > "$BATS_TEST_TMPDIR/named" ||
		fail "no O_EXCL random name: $(cat "$log")"
	run grep -c -E '^[0-9]+ +(fsync\([0-9]+\) += 0|renameat2?\(.*"90-hugekit.conf".* = 0)' "$log"
	assert_output 3
	assert_equal "$(cat "$out/90-hugekit.conf")" "$("$HUGEADM" --sysroot "$root" --generate sysctl --config sysctl.conf)"
	run ls -A "$out"
	assert_output 90-hugekit.conf
}

@test "a configuration whose path holds a newline and [Service]/ExecStartPre= or a sysctl: refused, nothing written" {
	local root out="$BATS_TEST_TMPDIR/out" d kind
	root=$(fixture x86-2node)
	mkdir -m 0700 "$out"
	d=$BATS_TEST_TMPDIR/$'x\n[Service]\nExecStartPre=/tmp/evil.sh\nkernel.core_pattern=|/tmp/evil.sh\n#'
	mkdir -p "$d"
	cp units.conf "$d/c"
	for kind in units sysctl boot; do
		run --separate-stderr "$HUGEADM" --sysroot "$root" --generate "$kind" --config "$d/c" --output "$out"
		assert_failure 1
		assert_output ""
		assert_equal "$stderr" "hugeadm:ERROR: the configuration file name '$BATS_TEST_TMPDIR/x\\012[Service]\\012ExecStartPre=/tmp/evil.sh\\012kernel.core_pattern=|/tmp/evil.sh\\012#/c' has a control character: it cannot be written into a generated file"
	done
	# On stdout too: a file made by redirection is as much a unit.
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config "$d/c"
	assert_failure 1
	assert_output ""
	run ls -A "$out"
	assert_output ""
}

@test "units: '%', ';', a blank, quotes, '\$' and '\\' in mount points are escaped as systemd reads them, and verify" {
	local root out="$BATS_TEST_TMPDIR/units" p want
	root=$(fixture x86-2node)
	command -v systemd-escape > /dev/null || fail "no systemd-escape (apt-get install systemd)"
	local paths=("/srv/50%;x y/h" "/srv/it's \"q\"/h" '/srv/$HOME\w/h' '/srv/%n;/h')
	: > odd.conf
	for p in "${paths[@]}"; do printf '[mount %s]\npagesize = 2M\n\n' "$p" >> odd.conf; done
	mkdir -m 0700 "$out"
	"$HUGEADM" --sysroot "$root" --generate units --config odd.conf --output "$out"
	want=$( (systemd-escape --path --suffix=mount "${paths[@]}" | tr ' ' '\n'; echo hugekit.service) | LC_ALL=C sort)
	run bash -c 'ls -A "$1" | LC_ALL=C sort' ls "$out"
	assert_output "$want"
	# Where= and Description= as written, '%' doubled; RequiresMountsFor= quoted as systemd unquotes.
	run grep -h '^Where=' "$out"/*.mount
	assert_output --partial 'Where=/srv/50%%;x y/h'
	assert_output --partial "Where=/srv/it's \"q\"/h"
	assert_output --partial 'Where=/srv/$HOME\w/h'
	assert_output --partial 'Where=/srv/%%n;/h'
	run grep '^RequiresMountsFor=' "$out/hugekit.service"
	assert_output "$(printf '%s\n' "RequiresMountsFor=$CONF/odd.conf" 'RequiresMountsFor="/srv/50%%;x y"' 'RequiresMountsFor="/srv/it'"'"'s \"q\""' 'RequiresMountsFor="/srv/$HOME\\w"' 'RequiresMountsFor=/srv/%%n;')"
	mapfile -t units < <(cd "$out" && ls -A)
	verify "$out" "${units[@]}"
}

@test "a [mount] path that ends in '\\' or a blank: refused by the parser at FILE:LINE, nothing written" {
	local root out="$BATS_TEST_TMPDIR/out"
	root=$(fixture x86-2node)
	mkdir -m 0700 "$out"
	printf '[pool 2M]\nminimum = 2\n\n[mount /mnt/h\\]\npagesize = 2M\n' > bs.conf
	run --separate-stderr "$HUGEADM" --sysroot "$root" --generate units --config bs.conf --output "$out"
	assert_failure 1
	assert_equal "$stderr" "hugeadm:ERROR: bs.conf:4: [mount /mnt/h\\]: the mount point must not end in '\\' or a blank"
	run --separate-stderr "$HUGEADM" --sysroot "$root" --apply bs.conf --dry-run
	assert_failure 1
	assert_equal "${stderr%%$'\n'*}" "hugeadm:ERROR: bs.conf:4: [mount /mnt/h\\]: the mount point must not end in '\\' or a blank"
	run ls -A "$out"
	assert_output ""
}
