#!/usr/bin/env bash
# Boots Debian's cloud kernel under QEMU with two NUMA nodes and runs a guest
# test script against the tools of BUILD_DIR.
#
#   tests/vm/run-vm-tests.sh BUILD_DIR [GUEST_SCRIPT]
#
# The kernel package (linux-image-cloud-amd64 and the image it depends on) is
# fetched once with `apt-get download` into ${HK_VM_CACHE:-BUILD_DIR/vm-cache}
# and unpacked with `dpkg-deb -x`, never installed; delete the cache to take a
# newer kernel. The initramfs holds busybox-static, the tools, libhugekit and
# every library ldd lists for them, and GUEST_SCRIPT (default
# tests/vm/guest-tests.sh), which prints `ok NAME` / `not ok NAME` lines. /init
# counts them, prints `HK-VM-RESULT: P passed, F failed` on the serial console
# and powers off. Exit 0 when F is 0 and P at least 1, 77 (skip) when QEMU,
# busybox, cpio or the kernel are missing, 1 otherwise.
#
# Environment: HK_VM_CACHE (cache dir), HK_VM_KERNEL (use this bzImage instead
# of Debian's; needs hugetlbfs, NUMA, devtmpfs and the 8250 console built in),
# HK_VM_ACCEL (kvm or tcg; default tcg, see below), HK_VM_TIMEOUT (seconds for
# QEMU, default 240), and for tests that boot with their own settings:
#   HK_VM_APPEND   extra kernel parameters, appended to the -append line after
#                  `console=ttyS0 panic=-1 quiet` (e.g. `hugepagesz=1G
#                  hugepages=0:2,1:1`); the guest sees them in /proc/cmdline.
#   HK_VM_NODE_MB  MiB of memory per NUMA node: one number for both nodes or
#                  `N0,N1` (default 640, which vm/numa's checks assume).
#   HK_VM_FILES    files (separated by spaces) copied into the guest's /hk/
#                  under their own names, e.g. what the guest script expects.
#   HK_VM_LOG      the console log (default BUILD_DIR/vm-tests.log).
#   HK_VM_CPU      QEMU's -cpu (default max: the host's flags under KVM,
#                  QEMU's full set under TCG, pdpe1gb for 1 GiB pages included
#                  where the host or QEMU has it; `max,pdpe1gb=off` boots a
#                  guest without 1 GiB pages). Guest scripts check for
#                  /sys/kernel/mm/hugepages/hugepages-1048576kB before testing
#                  1 GiB pages.
set -Eeuo pipefail
hk_me=run-vm-tests
# shellcheck source=tests/vm/host-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/host-lib.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}

die() {
	echo "run-vm-tests: $*" >&2
	exit 1
}

{ [ $# -ge 1 ] && [ $# -le 2 ]; } || die "usage: run-vm-tests.sh BUILD_DIR [GUEST_SCRIPT]"
[ -d "$1" ] || die "$1: no such build directory"
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
guest=${2:-$here/guest-tests.sh}
[ -f "$guest" ] || die "$guest: no such guest script"
cache=${HK_VM_CACHE:-$build/vm-cache}
vm_timeout=${HK_VM_TIMEOUT:-240}
vm_append=${HK_VM_APPEND:-}
vm_cpu=${HK_VM_CPU:-max}
case ${HK_VM_NODE_MB:-640} in
*,*) node0_mb=${HK_VM_NODE_MB%%,*} node1_mb=${HK_VM_NODE_MB#*,} ;;
*) node0_mb=${HK_VM_NODE_MB:-640} node1_mb=$node0_mb ;;
esac
for mb in "$node0_mb" "$node1_mb"; do
	case $mb in
	'' | *[!0-9]*) die "HK_VM_NODE_MB=${HK_VM_NODE_MB:-}: want MiB per node, N or N0,N1" ;;
	esac
	[ "$mb" -ge 256 ] || die "HK_VM_NODE_MB=${HK_VM_NODE_MB:-}: at least 256 MiB per node"
done
read -r -a guest_files <<< "${HK_VM_FILES:-}"
for f in "${guest_files[@]}"; do
	[ -f "$f" ] || die "HK_VM_FILES: $f: no such file"
done

for t in hugeadm pagesize; do
	[ -x "$build/tools/$t" ] || die "$build/tools/$t is not built"
done
compgen -G "$build/lib/libhugekit.so*" > /dev/null || die "$build/lib/libhugekit.so* is not built"

command -v qemu-system-x86_64 > /dev/null ||
	skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ]; then
		busybox=$b
		break
	fi
done
[ -n "$busybox" ] || skip "busybox is not installed (apt-get install busybox-static)"
for p in cpio gzip ldd timeout; do
	command -v "$p" > /dev/null || skip "$p is not installed"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/hk-vm.XXXXXX")
dl=
trap 'rm -rf "$work" ${dl:+"$dl"}' EXIT

# fetch_kernel: leaves $cache/vmlinuz and $cache/config, downloading once.
fetch_kernel() {
	local meta image deb
	[ -s "$cache/vmlinuz" ] && [ -s "$cache/config" ] && return 0
	command -v apt-get > /dev/null || skip "apt-get is missing; cannot download linux-image-cloud-amd64"
	command -v dpkg-deb > /dev/null || skip "dpkg-deb is missing; cannot unpack linux-image-cloud-amd64"
	mkdir -p "$cache"
	dl=$(mktemp -d "$cache/download.XXXXXX")
	# The metapackage names the versioned image package in its Depends.
	(cd "$dl" && apt-get download linux-image-cloud-amd64) > "$dl/apt.log" 2>&1 ||
		skip "apt-get download linux-image-cloud-amd64 failed: $(grep -m1 '^E:' "$dl/apt.log" || tail -n1 "$dl/apt.log")"
	meta=$(compgen -G "$dl/linux-image-cloud-amd64_*.deb" | head -n1)
	image=$(dpkg-deb -f "$meta" Depends | sed 's/[ ,(|].*//')
	case $image in
	linux-image-*) ;;
	*) skip "linux-image-cloud-amd64 depends on no kernel image ('$image')" ;;
	esac
	(cd "$dl" && apt-get download "$image") >> "$dl/apt.log" 2>&1 ||
		skip "apt-get download $image failed: $(grep -m1 '^E:' "$dl/apt.log" || tail -n1 "$dl/apt.log")"
	deb=$(compgen -G "$dl/${image}_*.deb" | head -n1)
	dpkg-deb -x "$deb" "$dl/root"
	mv "$meta" "$deb" "$cache/"
	cp "$dl"/root/boot/config-* "$cache/config"
	cp "$dl"/root/boot/vmlinuz-* "$cache/vmlinuz.tmp"
	mv "$cache/vmlinuz.tmp" "$cache/vmlinuz"
	rm -rf "$dl"
}

if [ -n "${HK_VM_KERNEL:-}" ]; then
	[ -r "$HK_VM_KERNEL" ] || skip "HK_VM_KERNEL=$HK_VM_KERNEL is not readable"
	kernel=$HK_VM_KERNEL
else
	fetch_kernel
	kernel=$cache/vmlinuz
	# Everything the guest needs is built into Debian's cloud kernel; no
	# modules are loaded. Say so plainly if a future package changes that.
	for opt in HUGETLBFS NUMA DEVTMPFS BLK_DEV_INITRD RD_GZIP SERIAL_8250_CONSOLE; do
		grep -qx "CONFIG_$opt=y" "$cache/config" ||
			skip "the cached kernel lacks CONFIG_$opt=y (see $cache/config)"
	done
fi

# The initramfs: busybox and its applets in /bin, the tools, every library in
# /lib under its soname, the loader at its own path, the guest script, /init.
root=$work/root
mkdir -p "$root"/{bin,dev,etc,lib,lib64,proc,run,sys,tmp,hk}
cp "$busybox" "$root/bin/busybox"
while read -r applet; do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done < <("$busybox" --list)
cp "$build/tools/hugeadm" "$build/tools/pagesize" "$root/bin/"
# A NUMA policy for one command (busybox has no numactl); the guest script
# skips what needs it when no C compiler is here.
extra=()
if command -v "${CC:-cc}" > /dev/null &&
	"${CC:-cc}" -O2 -o "$root/bin/mempolicy" "$here/mempolicy.c" 2> "$work/cc.log"; then
	extra+=("$root/bin/mempolicy")
else
	echo "HK-VM: cannot build tests/vm/mempolicy.c: $(head -n 1 "$work/cc.log" 2> /dev/null)"
fi
cp -a "$build"/lib/libhugekit.so* "$root/lib/"
# The libraries the tools open on first use (lib/core/dl.c, tools/common/lazy.c):
# dlopen() by SONAME, so ldd does not list them; with their own dependencies.
lazy=()
for so in libmount.so.1 libinih.so.1 libsmartcols.so.1; do
	# awk reads to the end: an early exit would be ldconfig's SIGPIPE, and
	# under pipefail a silent death of this script once the cache's listing
	# outgrows the pipe's 64 KiB (seen on CI's machine).
	path=$(ldconfig -p | awk -v so="$so" '$1 == so && p == "" { p = $NF } END { print p }')
	[ -n "$path" ] || die "$so is not installed (hugeadm loads it on first use)"
	cp -L "$path" "$root/lib/$so"
	lazy+=("$path")
done
for bin in "$build/tools/hugeadm" "$build/tools/pagesize" "$busybox" "${extra[@]}" "${lazy[@]}"; do
	# A static busybox makes ldd exit 1 ("not a dynamic executable").
	deps=$(ldd "$bin" 2> /dev/null) || continue
	if grep -q 'not found' <<< "$deps"; then
		die "ldd $bin: $(grep 'not found' <<< "$deps" | tr -s '\t\n' '  ')"
	fi
	while read -r name arrow path _; do
		if [ "$arrow" = "=>" ] && [ "${path#/}" != "$path" ]; then
			[ -e "$root/lib/$name" ] || cp -L "$path" "$root/lib/$name"
		elif [ "${name#/}" != "$name" ]; then
			mkdir -p "$root$(dirname "$name")"
			[ -e "$root$name" ] || cp -L "$name" "$root$name"
		fi
	done <<< "$deps"
done
cp "$guest" "$root/hk/guest-tests.sh"
cp "$here/guest-lib.sh" "$root/hk/guest-lib.sh"
for f in "${guest_files[@]}"; do
	cp "$f" "$root/hk/"
done
cat > "$root/init" << 'INIT'
#!/bin/sh
# PID 1 of the hugekit test VM: mount, run the guest script, report, power off.
export PATH=/bin LD_LIBRARY_PATH=/lib HOME=/tmp
# As in the host test suite: a UBSan report fails the tool in a dev build.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mkdir -p /run/lock
echo "HK-VM: guest up: kernel $(uname -r), nodes $(cat /sys/devices/system/node/online), cpus $(cat /sys/devices/system/cpu/online)"
{
	sh /hk/guest-tests.sh
	echo $? > /tmp/guest.rc
} 2>&1 | tee /tmp/guest.log
passed=$(grep -c '^ok ' /tmp/guest.log)
failed=$(grep -c '^not ok ' /tmp/guest.log)
rc=$(cat /tmp/guest.rc 2>/dev/null || echo 255)
if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
	echo "not ok guest-script (exit status $rc)"
	failed=1
fi
echo "HK-VM-RESULT: $passed passed, $failed failed"
sync
poweroff -f
echo o > /proc/sysrq-trigger
INIT
chmod 755 "$root/init" "$root/hk/guest-tests.sh"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$work/initrd.gz"

log=${HK_VM_LOG:-$build/vm-tests.log}

# run_qemu ACCEL: boots the guest, console in $log; sets status and elapsed.
run_qemu() {
	local accel_args=(-accel "$1")
	# -accel tcg after kvm: QEMU falls back when KVM cannot start at all.
	[ "$1" = kvm ] && accel_args+=(-accel tcg)
	rm -f "$log"
	echo "HK-VM: kernel $kernel, accel $1, cpu $vm_cpu, nodes ${node0_mb}M+${node1_mb}M, log $log"
	[ -z "$vm_append" ] || echo "HK-VM: kernel parameters added: $vm_append"
	local start
	start=$(date +%s)
	status=0
	# The subshell keeps bash's "Aborted" notice out of the output.
	(
		timeout "$vm_timeout" qemu-system-x86_64 "${accel_args[@]}" -cpu "$vm_cpu" \
			-machine q35 -m "$((node0_mb + node1_mb))M" -smp 2 \
			-object "memory-backend-ram,id=m0,size=${node0_mb}M" \
			-object "memory-backend-ram,id=m1,size=${node1_mb}M" \
			-numa node,nodeid=0,cpus=0,memdev=m0 \
			-numa node,nodeid=1,cpus=1,memdev=m1 \
			-kernel "$kernel" -initrd "$work/initrd.gz" \
			-append "console=ttyS0 panic=-1 quiet${vm_append:+ $vm_append}" \
			-nodefaults -display none -no-reboot \
			-serial "file:$log" < /dev/null
		exit "$?"
	) > "$work/qemu.out" 2>&1 || status=$?
	elapsed=$(($(date +%s) - start))
	# The serial console ends its lines with CR LF.
	sed -i 's/\r$//' "$log" 2> /dev/null || true
}

# TCG by default: the development machines are themselves VMs, and nested
# KVM there either aborts or hangs. HK_VM_ACCEL=kvm asks for it where it works.
# A boot that never reaches the guest script is tried once more: TCG boots
# have been seen to stall before the first console line, rarely.
accel=${HK_VM_ACCEL:-tcg}
for try in 1 2; do
	run_qemu "$accel"
	grep -q '^HK-VM: guest up' "$log" 2> /dev/null && break
	echo "HK-VM: try $try: the guest did not come up (qemu status $status)"
done

fail() {
	echo "run-vm-tests: $*" >&2
	if [ -s "$work/qemu.out" ]; then
		echo "--- qemu ---" >&2
		tail -n 20 "$work/qemu.out" >&2
	fi
	echo "--- last 40 lines of $log ---" >&2
	tail -n 40 "$log" >&2 2> /dev/null || true
	exit 1
}

[ -f "$log" ] || fail "qemu exited with status $status and wrote no console log"
grep -E '^(ok |not ok |skip |# |HK-VM)' "$log" || true
echo "HK-VM: booted and tested in $elapsed s"
[ "$status" != 124 ] || fail "qemu timed out after $vm_timeout s"
result=$(sed -n 's/^HK-VM-RESULT: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -n1)
[ -n "$result" ] || fail "no HK-VM-RESULT line (qemu exit status $status)"
read -r passed failed <<< "$result"
if [ "$failed" -ne 0 ] || [ "$passed" -lt 1 ]; then
	echo "run-vm-tests: $passed guest tests passed, $failed failed (console log: $log)" >&2
	exit 1
fi
