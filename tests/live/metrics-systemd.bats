#!/usr/bin/env bats
# The units `hugeadm --generate units` makes from a [metrics] section, run by
# systemd itself: this machine's own systemd booted as PID 1 of a
# systemd-nspawn container whose root is an overlay of / (a tmpfs on top:
# nothing written there reaches the machine; nspawn mounts /proc/sys and /sys
# read-only and the network is private), with the generated
# hugekit-metrics.service and .timer in its /etc/systemd/system and the
# build's hugeadm where ExecStart names it. A checker unit waits for the
# service's second run, reports to a directory bound from the machine, and
# powers the container off. The service runs with all of its sandbox
# (ProtectSystem=strict, RestrictSUIDSGID=, which makes openat2(2) answer
# ENOSYS, ...): written atomically twice (a new inode each run), the
# Prometheus text promtool takes, nothing else left in the directory.
#
# The work directory is under /var/tmp: nspawn mounts a tmpfs on the
# container's /tmp. What the container reads from it (the configuration, the
# checker's script) and what it writes there (the textfile directory, the
# report) are bound into it, not read through the overlay's lower layer (a
# /var/tmp of its own file system would not be there). The checker also asks
# systemd to run a probe with the unit's RestrictSUIDSGID= and reports what
# openat2(2) answered there: ENOSYS, so the run took hugeadm's walk.

load live

setup_file() {
	if live_usable; then
		live_lock
	fi
}

setup() {
	live_requirements
	hk_need_cmd systemd-nspawn systemd-container
	hk_need_cmd promtool prometheus
	[ -x /lib/systemd/systemd ] || hk_missing "no /lib/systemd/systemd (apt-get install systemd)"
	W=$(mktemp -d /var/tmp/hk-systemd.XXXXXX)
	chmod 0755 "$W"
	ROOT=$W/root
	mkdir -p "$W/up" "$ROOT" "$W/tf" "$W/out" "$W/units" "$W/conf"
	chmod 0755 "$W/tf" "$W/conf"
	mount -t tmpfs -o size=256m hk-systemd "$W/up" || hk_missing "cannot mount a tmpfs for the container's overlay"
	mkdir -p "$W/up/u" "$W/up/w"
	mount -t overlay hk-systemd -o "lowerdir=/,upperdir=$W/up/u,workdir=$W/up/w" "$ROOT" ||
		hk_missing "cannot mount an overlay of / (the container's root)"
}

teardown() {
	if [ -n "${ROOT:-}" ]; then
		mountpoint -q "$ROOT" && { umount "$ROOT" || umount -l "$ROOT"; }
		mountpoint -q "$W/up" && { umount "$W/up" || umount -l "$W/up"; }
		rm -rf "$W"
	fi
}

teardown_file() {
	live_restore
}

# The checker: waits (60 s at most) until hugekit.prom has been replaced once
# (a second run of the service), then reports what systemd says.
write_checker() {
	cat > "$ROOT/etc/systemd/system/hk-check.service" <<EOF
[Unit]
Description=hugekit test: two runs of hugekit-metrics.service, reported, then power off
After=hk-probe.service

[Service]
Type=oneshot
ExecStart=/bin/sh $W/conf/check.sh
ExecStopPost=/bin/systemctl poweroff --no-block
EOF
	cat > "$ROOT/etc/systemd/system/hk-test.target" <<EOF
[Unit]
Description=hugekit test
Requires=sysinit.target
After=sysinit.target
Wants=hugekit-metrics.timer hk-check.service hk-probe.service
EOF
	cat > "$W/conf/check.sh" <<EOF
#!/bin/sh
f=$W/tf/hugekit.prom
i=0 first= ino=
while [ \$i -lt 600 ]; do
	if [ -e "\$f" ]; then
		ino=\$(stat -c %i "\$f")
		[ -n "\$first" ] || first=\$ino
		[ "\$ino" != "\$first" ] && break
	fi
	sleep 0.1
	i=\$((i + 1))
done
# The second run done (its result recorded) before asking about it.
i=0
while [ \$i -lt 100 ] && [ "\$(systemctl show -P ActiveState hugekit-metrics.service)" != inactive ]; do
	sleep 0.1
	i=\$((i + 1))
done
echo "\$first \$ino" > $W/out/inodes
cp "\$f" $W/out/hugekit.prom
systemctl show hugekit-metrics.service -p Result -p ExecMainStatus > $W/out/service
systemctl is-active hugekit-metrics.timer > $W/out/timer
journalctl -b -u hugekit-metrics.service -o cat --no-pager > $W/out/journal 2>&1
EOF
	# What openat2 answers under the unit's RestrictSUIDSGID= (ENOSYS is 38).
	cat > "$W/conf/probe.py" <<'EOF'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(437, -100, b"/", None, 0)
print(ctypes.get_errno())
EOF
	cat > "$ROOT/etc/systemd/system/hk-probe.service" <<EOF
[Unit]
Description=hugekit test: what openat2 answers under RestrictSUIDSGID=

[Service]
Type=oneshot
RestrictSUIDSGID=yes
StandardOutput=truncate:$W/out/openat2-errno
ExecStart=/usr/bin/python3 $W/conf/probe.py
EOF
}

@test "systemd runs the generated hugekit-metrics.timer and .service: hugekit.prom written twice, atomically, with the service's whole sandbox" {
	local exec
	printf '[metrics]\ntextfile_dir = %s\ninterval = 1s\n' "$W/tf" > "$W/conf/m.conf"
	hugeadm --generate units --config "$W/conf/m.conf" --output "$W/units"
	# Where the unit runs hugeadm from (the configured prefix's bindir): the build's hugeadm there.
	exec=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$W/units/hugekit-metrics.service")
	[ -n "$exec" ]
	mkdir -p "$ROOT$(dirname "$exec")"
	cp "$HK_BUILD_DIR/tools/hugeadm" "$ROOT$exec"
	cp "$W/units/hugekit-metrics.service" "$W/units/hugekit-metrics.timer" "$ROOT/etc/systemd/system/"
	write_checker
	run timeout -k 30 180 systemd-nspawn --register=no --keep-unit --private-network --quiet -D "$ROOT" \
		--bind="$W/tf" --bind="$W/out" --bind-ro="$W/conf" -b systemd.unit=hk-test.target
	echo "# container: exit $status" >&3
	[ -s "$W/out/service" ] || fail "the checker did not report: the container's console:
$(tail -n 30 <<<"$output")"
	run cat "$W/out/service"
	assert_line Result=success
	assert_line ExecMainStatus=0
	run cat "$W/out/journal"
	refute_output --partial ERROR
	refute_output --partial "Failed"
	[ "$(grep -c 'Deactivated successfully' "$W/out/journal")" -ge 2 ] ||
		fail "fewer than two runs: $(cat "$W/out/journal")"
	read -r first last < "$W/out/inodes"
	[ -n "$first" ] && [ -n "$last" ] && [ "$first" != "$last" ] ||
		fail "hugekit.prom was not replaced by a second run (inodes '$first' '$last')"
	assert_equal "$(cat "$W/out/timer")" active
	# The sandbox made openat2 answer ENOSYS: the runs went through hk_walk_open.
	assert_equal "$(cat "$W/out/openat2-errno")" 38
	run promtool check metrics < "$W/out/hugekit.prom"
	assert_success
	grep -q '^hugekit_pool_pages{page_size="2097152"} [0-9]' "$W/out/hugekit.prom"
	grep -qx 'hugekit_metrics_errors 0' "$W/out/hugekit.prom"
	# Only the file: no new file left behind by a run.
	assert_equal "$(ls -A "$W/tf")" hugekit.prom
	assert_equal "$(stat -c '%a %U' "$W/tf/hugekit.prom")" "644 root"
}
