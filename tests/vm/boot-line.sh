#!/usr/bin/env bash
# Proves a per-node huge page boot line in the two-node VM: boots the guest of
# run-vm-tests.sh with the line on its kernel command line and checks there
# (tests/vm/guest-boot.sh) that every node has exactly the pages configured,
# for each size, in sysfs and in `hugeadm --pool-list --json`.
#
#   tests/vm/boot-line.sh BUILD_DIR
#
# The configuration is tests/vm/boot-line.conf (issue 11's INI syntax:
# `[pool SIZE]` sections with `minimum = COUNT@NODE, ...`). The line:
#   - when BUILD_DIR's hugeadm has --generate: the output of
#     `hugeadm --sysroot tests/fixtures/sysroot/x86-2node --generate boot
#     --config tests/vm/boot-line.conf` (the VM's shape: two nodes); of what it
#     prints, the first line that starts with `hugepagesz=` or
#     `default_hugepagesz=` (the kernel parameters), taken whole;
#   - else the fixed equivalent line below, and it says so.
# The expected counts are read from the configuration by this script, not from
# hugeadm, and go to the guest as /hk/boot-line.expect (`SIZE_KB NODE COUNT`),
# the line as /hk/boot-line.cmdline.
#
# The kernel's rules (kernel-parameters.txt, hugetlbpage.rst): `hugepages=`
# counts pages of the size named by the `hugepagesz=` before it (with none
# before it, of the default size); `hugepages=N0:C0,N1:C1` is the per-node
# form (5.16); each `hugepagesz=` once; `default_hugepagesz=` once. A size the
# CPU lacks (1G without pdpe1gb) makes the kernel ignore its `hugepages=`.
#
# Memory: 1 GiB pages come only from free, 1 GiB aligned ranges of a node. On
# q35 with more than 2.75 GiB the guest's RAM is 0-2G and from 4G up, node 0
# first. Node 0's low 2 GiB hold the kernel, the initramfs and the firmware
# tables, and each node's struct pages take the top of its memory, so a node
# of 2.5 GiB holds no 1 GiB page at node 0 and one at node 1 (seen: the
# kernel 6.1 then took node 0's page from node 1, and node 1 got none). Hence
# 4.5 GiB for node 0 (0-2G, 4G-6.5G: two free 1G ranges) and 2.5 GiB for node 1
# (6.5G-9G: one): HK_VM_NODE_MB, default 4608,2560, as in run-vm-tests.sh.
# The kernel boots with `nokaslr` before the line: Debian's kernel otherwise
# puts itself at a random physical address, sometimes inside one of those
# ranges (seen: node 0 then came up one page short), and the test would be
# flaky. Untouched guest memory costs the host nothing. Exit status as
# run-vm-tests.sh: 0 passed, 1 failed, 77 skipped.
set -Eeuo pipefail
hk_me=boot-line
# shellcheck source=tests/vm/host-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-lib.sh"

die() {
	echo "boot-line: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: boot-line.sh BUILD_DIR"
[ -d "$1" ] || die "$1: no such build directory"
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
conf=$here/boot-line.conf
hugeadm=$build/tools/hugeadm
[ -x "$hugeadm" ] || die "$hugeadm is not built"
fixed_line="hugepagesz=1G hugepages=0:2,1:1 hugepagesz=2M hugepages=0:64,1:32"

work=$(mktemp -d "${TMPDIR:-/tmp}/hk-boot-line.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The expected counts: `SIZE_KB NODE COUNT` for each COUNT@NODE of each
# [pool SIZE]; [boot] pools = all (for --generate) passes; anything else in
# the file is an error here.
awk '
	function kb(s,   n, u) {
		n = s; sub(/[KkMmGg]$/, "", n); u = substr(s, length(n) + 1)
		if (n !~ /^[0-9]+$/) return ""
		if (u == "K" || u == "k") return n
		if (u == "M" || u == "m") return n * 1024
		if (u == "G" || u == "g") return n * 1024 * 1024
		return ""
	}
	function bad(why) { printf "boot-line.conf:%d: %s\n", NR, why > "/dev/stderr"; err = 1; exit 1 }
	/^[ \t]*(#|;|$)/ { next }
	/^\[pool [^]]+\][ \t]*$/ {
		size = $2; sub(/\]$/, "", size); k = kb(size)
		if (k == "") bad("bad page size " size)
		next
	}
	# [boot]: for hugeadm --generate only; no pages of its own.
	/^\[boot\][ \t]*$/ { k = ""; boot = 1; next }
	boot && /^[ \t]*pools[ \t]*=[ \t]*all[ \t]*$/ { next }
	/^[ \t]*minimum[ \t]*=/ {
		if (k == "") bad("minimum outside a [pool SIZE] section")
		v = $0; sub(/^[^=]*=[ \t]*/, "", v)
		n = split(v, items, /[ \t]*,[ \t]*/)
		for (i = 1; i <= n; i++) {
			if (items[i] !~ /^[0-9]+@[0-9]+$/) bad("want COUNT@NODE, got \"" items[i] "\"")
			split(items[i], cn, "@")
			print k, cn[2], cn[1]
		}
		next
	}
	{ bad("not understood here: " $0) }
' "$conf" > "$work/boot-line.expect" || die "cannot read the expected counts from $conf"
[ -s "$work/boot-line.expect" ] || die "$conf configures no pages"

help=$("$hugeadm" --help 2>&1 || true)
if grep -q -- '--generate' <<< "$help"; then
	# For the VM's machine, not this one: two nodes, 2 MiB and 1 GiB pages,
	# as the fixture tree of such a machine describes it.
	"$hugeadm" --sysroot "$here/../fixtures/sysroot/x86-2node" --generate boot --config "$conf" \
		> "$work/generated" 2> "$work/generated.err" ||
		die "hugeadm --generate boot --config $conf failed: $(cat "$work/generated.err")"
	line=$(grep -m1 -E '^(default_)?hugepagesz=' "$work/generated") ||
		die "hugeadm --generate boot printed no line of kernel parameters:
$(cat "$work/generated")"
	echo "boot-line: the line from hugeadm --generate boot --config $conf: $line"
else
	line=$fixed_line
	echo "boot-line: NOTE: $hugeadm has no --generate yet: testing the FIXED line for $conf: $line"
fi
printf '%s\n' "$line" > "$work/boot-line.cmdline"
echo "boot-line: expected pages (size kB, node, count):"
sed 's/^/boot-line:   /' "$work/boot-line.expect"

log=$build/vm-boot-line.log
rc=0
HK_VM_APPEND="nokaslr $line" HK_VM_NODE_MB=${HK_VM_NODE_MB:-4608,2560} HK_VM_LOG=$log \
	HK_VM_FILES="$work/boot-line.cmdline $work/boot-line.expect" \
	bash "$here/run-vm-tests.sh" "$build" "$here/guest-boot.sh" || rc=$?
if grep -q '^skip 1048576kB' "$log" 2> /dev/null; then
	echo "boot-line: NOTE: the guest had no 1 GiB pages; only the other sizes were tested"
fi
exit "$rc"
