#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installs hugekit's .debs in a throwaway root made of this machine's own
# files, runs them there, purges them, and says what the purge left behind;
# for tests/package/debian.bats. The real root is never written: the root is
# an overlay (lower: /, upper and work: a tmpfs) in a private mount namespace,
# so every mount goes away with this script. Run it as
#
#   unshare -m --propagation private bash debroot.sh DEBDIR OUT HOSTPROG SRC
#
# DEBDIR: the five .debs; OUT: where the results go; HOSTPROG: a program
# linked against this machine's libhugetlbfs 2.23 (it needs
# libhugetlbfs.so.0); SRC: tests/package (lhugetlbfs.c). In OUT:
#   install.log purge.log      dpkg -i and dpkg -P, in the root
#   status.txt                 each package's status after the install
#   version.txt pagesize.txt pool-list.txt   hugeadm --version, pagesize -a, hugeadm --pool-list
#   lh-host.txt                HOSTPROG's output in the root
#   lh-pkg.txt lh-pkg.needed   lhugetlbfs.c built in the root with -lhugetlbfs: output, DT_NEEDED
#   hk-pc.txt                  a program built with pkg-config's flags for libhugekit: output
#   ldcache.txt                ldconfig -p after the purge
#   upper.txt                  what the root's life changed on /: "gone PATH" (removed),
#                              "new PATH" (a file or directory / does not have),
#                              "changed PATH" (a file / has, written)
#   replaced-left.txt          the files of libhugetlbfs-bin, libhugetlbfs0 and
#                              libhugetlbfs-dev (as / has them) still there after the purge
# Exit status: 0 (the results say the rest), 77 when no overlay can be made
# here, 1 on an error of the script itself.
set -euo pipefail
debs=$(realpath "$1")
out=$(realpath "$2")
hostprog=$(realpath "$3")
src=$(realpath "$4")

t=$(mktemp -d /tmp/hk-debroot.XXXXXX)
trap 'umount -R "$t" 2> /dev/null || true; rmdir "$t"' EXIT
mount -t tmpfs -o mode=0755 hk-debroot "$t"
mkdir "$t/upper" "$t/work" "$t/root"
if ! mount -t overlay overlay -o "lowerdir=/,upperdir=$t/upper,workdir=$t/work" "$t/root" 2> "$out/overlay.err"; then
	exit 77
fi
r=$t/root
mount --rbind /dev "$r/dev"
mount -t proc proc "$r/proc"
mount --rbind /sys "$r/sys"
# No /run/systemd/system in the root: the maintainer scripts start and
# reload nothing of the machine's systemd.
mount -t tmpfs tmpfs "$r/run"
mount -t tmpfs tmpfs "$r/tmp"
mkdir "$r/tmp/hk"
cp "$debs"/*.deb "$src/lhugetlbfs.c" "$r/tmp/hk/"
cp "$hostprog" "$r/tmp/hk/lh-host"
in_root() { chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C "$@"; }

replaced=(libhugetlbfs-bin libhugetlbfs0 libhugetlbfs-dev)
ours=(hugekit libhugekit1 libhugekit-dev libhugekit-rt0 hugekit-compat)
files=()
for p in "${ours[@]}"; do
	f=("$r"/tmp/hk/"${p}"_*.deb)
	files+=("${f[0]#"$r"}")
done
in_root dpkg -i "${files[@]}" > "$out/install.log" 2>&1 ||
	echo "dpkg -i: exit $?" >> "$out/install.log"
# shellcheck disable=SC2016 # dpkg-query's format
in_root dpkg-query -W -f '${Package} ${db:Status-Abbrev}\n' "${ours[@]}" "${replaced[@]}" > "$out/status.txt" 2>&1 || true
{ in_root hugeadm --version 2>&1 || echo "exit $?"; } > "$out/version.txt"
{ in_root pagesize -a 2>&1 || echo "exit $?"; } > "$out/pagesize.txt"
{ in_root hugeadm --pool-list 2>&1 || echo "exit $?"; } > "$out/pool-list.txt"
{ in_root /tmp/hk/lh-host 2>&1 || echo "exit $?"; } > "$out/lh-host.txt"
{ in_root sh -c 'cd /tmp/hk && cc -Wall -Werror lhugetlbfs.c -o lh-pkg -lhugetlbfs && ./lh-pkg' 2>&1 ||
	echo "exit $?"; } > "$out/lh-pkg.txt"
{ in_root readelf -d /tmp/hk/lh-pkg 2>&1 | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; } > "$out/lh-pkg.needed"
cat > "$r/tmp/hk/hk-pc.c" <<'C'
#include <hugekit/hugekit.h>
#include <stdio.h>
int main(void)
{
	printf("%s\n", hk_get_library_version());
	return 0;
}
C
# shellcheck disable=SC2016 # expanded in the root
{ in_root sh -c 'cd /tmp/hk && cc -Wall -Werror hk-pc.c -o hk-pc $(pkg-config --cflags --libs libhugekit) && ./hk-pc' 2>&1 ||
	echo "exit $?"; } > "$out/hk-pc.txt"

in_root dpkg -P "${ours[@]}" > "$out/purge.log" 2>&1 ||
	echo "dpkg -P: exit $?" >> "$out/purge.log"
in_root ldconfig -p > "$out/ldcache.txt" 2>&1 || true

# What the root changed, against / (the lower layer, unchanged by the root).
(
	cd "$t/upper"
	find . -mindepth 1 -printf '%y %P\n' | while read -r type p; do
		if [ "$type" = c ] && [ "$(stat -c %t:%T "$p")" = 0:0 ]; then
			echo "gone /$p"
		elif [ "$type" = d ]; then
			[ -d "/$p" ] || echo "new /$p"
		elif [ -e "/$p" ] || [ -L "/$p" ]; then
			echo "changed /$p"
		else
			echo "new /$p"
		fi
	done
) | sort > "$out/upper.txt"
for p in "${replaced[@]}"; do
	dpkg-query -L "$p" 2> /dev/null || true
done | while read -r f; do
	if { [ -e "$r$f" ] || [ -L "$r$f" ]; } && [ ! -d "$r$f" ]; then echo "$f"; fi
done > "$out/replaced-left.txt"
