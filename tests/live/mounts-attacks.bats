#!/usr/bin/env bats
# The attacks on hugeadm's mount directories, replayed. Each test runs in a
# private mount namespace (unshare -m --propagation private) over an empty
# tmpfs on /var/lib, so the machine's own /var/lib is never touched and every
# mount made there goes away with the namespace. A "victim" directory stands
# for /etc: it must never be mounted over, chowned or chmodded.
#
# The directory user/USER belongs to USER (2.23's layout) and group/GROUP is
# writable by GROUP: whatever they hold is the user's to change, so a symlink
# there, or anywhere below /var/lib/hugetlbfs, must stop hugeadm with one error
# naming the path, exit 1, nothing mounted and nothing chowned.

# The scripts run in the namespace are single-quoted on purpose: they expand there.
# shellcheck disable=SC2016,SC2154

load live

setup_file() {
	live_requirements
	hk_need_cmd unshare util-linux
	hk_need_cmd setpriv util-linux
	hk_need_user nobody
	hk_need_user -g daemon
	live_lock
}

teardown_file() {
	live_restore
}

M=/var/lib/hugetlbfs
V=/var/lib/victim

# in_ns SCRIPT: run the bash SCRIPT in a new mount namespace where /var/lib is
# an empty tmpfs (root 0755) holding the victim (root:root 0755, one file), and
# /tmp an empty tmpfs of its own (mode 1777): the machine's /tmp is never
# touched (a chmod there once left it 0777 for everyone).
# as_user USER GROUP CMD... runs CMD with that uid and gid only; state prints
# the victim's owner, mode and contents and every hugetlbfs mount.
in_ns() {
	unshare -m --propagation private env PATH="$PATH" ASAN_OPTIONS=detect_leaks=0 \
		bash -euo pipefail -c '
		as_user() { local u=$1 g=$2; shift 2; setpriv --reuid "$u" --regid "$g" --clear-groups -- "$@"; }
		state() { stat -c "victim %a %U:%G" '"$V"'; ls -A '"$V"'; findmnt -rn -t hugetlbfs -o TARGET | grep "^/var/lib/" || true; }
		mount -t tmpfs -o mode=0755 hk-attack /var/lib
		mount -t tmpfs -o mode=1777 hk-attack-tmp /tmp
		mkdir -m 0755 '"$V"' && touch '"$V"'/passwd
		'"$1"
}

# fake_size KB: the namespace script lines that put an empty pool of KB kB
# pages (all its counts 0) beside the real 2 MiB one in sysfs.
fake_size() {
	local d=/sys/kernel/mm/hugepages
	cat <<-EOF
		mkdir /tmp/real.\$\$
		mount --bind $d/hugepages-2048kB /tmp/real.\$\$
		mount -t tmpfs hp $d
		mkdir $d/hugepages-2048kB $d/hugepages-$1kB
		mount --bind /tmp/real.\$\$ $d/hugepages-2048kB
		for f in nr_hugepages free_hugepages resv_hugepages surplus_hugepages nr_overcommit_hugepages; do echo 0 > $d/hugepages-$1kB/\$f; done
	EOF
}

# replay_swap OPTION ARG DIR GROUP: hugeadm OPTION ARG makes its mounts and
# takes them down; then a user of group GROUP, who may write DIR, swaps DIR's
# pagesize-2MB for a link to the victim, and hugeadm OPTION ARG runs again.
replay_swap() {
	run --separate-stderr in_ns '
		hugeadm '"$1 $2"'
		hugeadm --unmount-all
		as_user nobody '"$4"' sh -c "rmdir '"$3"'/pagesize-2MB && ln -s '"$V $3"'/pagesize-2MB"
		state > /tmp/before.$$
		rc=0; hugeadm '"$1 $2"' || rc=$?
		echo "rc=$rc"
		state | diff /tmp/before.$$ - && echo "victim unchanged"
		state'
	assert_equal "$stderr" "hugeadm:ERROR: $3/pagesize-2MB is a symbolic link: not following it (remove it, then run hugeadm again)"
	assert_line "rc=1"
	assert_line "victim unchanged"
	assert_line "victim 755 root:root"
	# Nothing mounted at all, neither on the victim nor elsewhere.
	refute_line --partial "/var/lib/"
}

@test "(1) user mounts: the user swaps pagesize-2MB for a symlink to the victim" {
	# The user owns user/nobody (2.23's layout).
	replay_swap --create-user-mounts nobody "$M/user/nobody" nogroup
}

@test "(2) group mounts: a member of the group swaps pagesize-2MB for a symlink" {
	# group/daemon is root:daemon 0070 (2.23's layout): writable by the group.
	replay_swap --create-group-mounts daemon "$M/group/daemon" daemon
}

@test "(3) a symlink at an intermediate level: hugetlbfs, user/, user/USER, group/GROUP" {
	local link
	for link in "$M" "$M/user" "$M/user/nobody" "$M/group/daemon"; do
		run --separate-stderr in_ns '
			mkdir -p '"$M"'/user '"$M"'/group
			rm -rf '"$link"'
			ln -s '"$V"' '"$link"'
			state > /tmp/before.$$
			rc=0; hugeadm --create-user-mounts nobody --create-group-mounts daemon || rc=$?
			echo "rc=$rc"
			state | diff /tmp/before.$$ - && echo "victim unchanged"
			# Nothing was created inside the victim either.
			ls -A '"$V"''
		assert_equal "$stderr" "hugeadm:ERROR: $link is a symbolic link: not following it (remove it, then run hugeadm again)"
		assert_line "rc=1"
		assert_line "victim unchanged"
		refute_line --partial "pagesize"
	done
}

@test "(4) a directory with an unexpected owner or mode is not used" {
	local setup want
	while IFS='|' read -r setup want; do
		run --separate-stderr in_ns '
			mkdir -p '"$M"'/user/nobody '"$M"'/group
			chown nobody:root '"$M"'/user/nobody && chmod 0700 '"$M"'/user/nobody
			'"$setup"'
			rc=0; hugeadm --create-user-mounts nobody || rc=$?
			echo "rc=$rc"
			findmnt -rn -t hugetlbfs -o TARGET | grep "^/var/lib/" || echo "nothing mounted"'
		assert_equal "$stderr" "hugeadm:ERROR: $want"
		assert_line "rc=1"
		assert_line "nothing mounted"
	done <<- EOF
		chown nobody $M/user|$M/user is owned by nobody (uid 65534), expected root: not using it
		chown daemon $M/user/nobody|$M/user/nobody is owned by daemon (uid 1), expected root or nobody: not using it
		chmod 0777 $M|$M is writable by others (mode 0777): not using it
		chgrp daemon $M/user && chmod 0775 $M/user|$M/user is writable by its group (mode 0775): not using it
		chmod 0757 /var/lib|/var/lib is writable by others (mode 0757): not using it
		mkdir $M/user/nobody/pagesize-2MB && chown daemon $M/user/nobody/pagesize-2MB|$M/user/nobody/pagesize-2MB is owned by daemon (uid 1), expected root or nobody: not using it
	EOF
}

@test "(4b) the layouts of 2.23 and of earlier hugekit are accepted as they are" {
	run --separate-stderr in_ns '
		# 2.23: user/USER is USER:root 0700, group/GROUP root:GROUP 0070, the roots 0770 and 1777.
		install -d -m 0755 '"$M"' '"$M"'/user '"$M"'/group '"$M"'/global
		install -d -m 0700 -o nobody -g root '"$M"'/user/nobody '"$M"'/user/nobody/pagesize-2MB
		install -d -m 0070 -o root -g daemon '"$M"'/group/daemon '"$M"'/group/daemon/pagesize-2MB
		install -d -m 1777 '"$M"'/global/pagesize-2MB
		install -d -m 0770 '"$M"'/pagesize-2MB
		hugeadm --create-mounts --create-user-mounts nobody --create-group-mounts daemon --create-global-mounts
		echo "rc=$?"
		echo "mounts=$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^/var/lib/")"
		# The modes and owners stayed as 2.23 made them.
		stat -c "%n %a %U:%G" '"$M"'/user/nobody '"$M"'/group/daemon'
	assert_success
	assert_line "rc=0"
	# One mount per page size under each of the four directories.
	assert_line "mounts=$((4 * $(find "$HP" -mindepth 1 -maxdepth 1 -name 'hugepages-*' | wc -l)))"
	assert_line "$M/user/nobody 700 nobody:root"
	assert_line "$M/group/daemon 70 root:daemon"
}

@test "(4c) 2.23's own mounts and directories: found as already mounted, then mounted on again" {
	local legacy
	legacy=$(legacy_tool hugeadm)
	[ -n "$legacy" ] || hk_missing "libhugetlbfs-bin (2.23) is not installed"
	run --separate-stderr in_ns '
		all="--create-mounts --create-user-mounts nobody --create-group-mounts daemon --create-global-mounts"
		'"$legacy"' $all 2> /dev/null
		hugeadm $all 2> /tmp/err.$$
		echo "second run rc=$? already=$(grep -c "is already mounted\.$" /tmp/err.$$)"
		hugeadm --unmount-all
		hugeadm $all
		echo "on 2.23 directories rc=$?"
		echo "mounts=$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^/var/lib/")"'
	assert_success
	local n
	n=$(find "$HP" -mindepth 1 -maxdepth 1 -name 'hugepages-*' | wc -l)
	assert_line "second run rc=0 already=$((4 * n))"
	assert_line "on 2.23 directories rc=0"
	assert_line "mounts=$((4 * n))"
}

@test "(5) the first run never chowns or mounts by path (strace)" {
	hk_need_cmd strace strace
	run --separate-stderr in_ns '
		strace -f -qq -s 256 -o /tmp/trace.$$ -e trace=chown,lchown,fchownat,chmod,fchmodat,fchown,fchmod,mount,move_mount \
			hugeadm --create-user-mounts nobody --create-group-mounts daemon
		echo "rc=$?"
		cat /tmp/trace.$$'
	assert_success
	assert_line "rc=0"
	# By descriptor only: fchown/fchmod on the directory just made, the mount by move_mount.
	refute_line --regexp '(^|[^f])(l?chown|fchownat|chmod|fchmodat)\('
	assert_line --regexp 'fchown\([0-9]+, 65534, 0\) += 0'
	assert_line --regexp 'move_mount\([0-9]+, "", [0-9]+, "", MOVE_MOUNT_F_EMPTY_PATH\|MOVE_MOUNT_T_EMPTY_PATH\) += 0'
	refute_line --regexp '^[0-9]+ +mount\('
}

@test "(5b) without the new mount API: mount(2) on /proc/self/fd/N of the checked directory" {
	hk_need_cmd strace strace
	run --separate-stderr in_ns '
		HK_MOUNT_API=mount strace -f -qq -s 256 -o /tmp/trace.$$ -e trace=mount,move_mount,fsopen \
			hugeadm --create-user-mounts nobody
		echo "rc=$?"
		cat /tmp/trace.$$
		findmnt -rn -t hugetlbfs -o TARGET,OPTIONS | grep "^/var/lib/"
		hugeadm --create-user-mounts nobody'
	assert_line "rc=0"
	# nosuid,nodev as mount(2)'s flags: hugetlbfs refuses them among its options.
	assert_line --regexp 'mount\("none", "/proc/self/fd/[0-9]+", "hugetlbfs", MS_NOSUID\|MS_NODEV, "pagesize=2097152,uid=65534,gid=0,mode=0700"\) += 0'
	refute_line --regexp 'move_mount|fsopen'
	assert_line "$M/user/nobody/pagesize-2MB rw,nosuid,nodev,relatime,uid=65534,mode=700,pagesize=2M"
	# The second run finds it: idempotent through either path.
	[[ "$stderr" == *"Directory $M/user/nobody/pagesize-2MB is already mounted."* ]]
}

@test "(5c) the first-run race: a user swapping in symlinks meanwhile never reaches the victim" {
	local runs=40
	# The attacker, as nobody, bounded by a count: whenever user/nobody exists (hugeadm
	# makes it and gives it to nobody), swap the mount point for a link to the victim.
	export HK_ATTACK='
import os, sys
p, v = sys.argv[1], sys.argv[2]
for _ in range(300000):
    for f in (os.rmdir, lambda x: os.symlink(v, x), os.unlink):
        try:
            f(p)
        except OSError:
            pass
'
	run --separate-stderr in_ns '
		mkdir -p '"$M"'/user
		P='"$M"'/user/nobody/pagesize-2MB
		victim() { stat -c "%a %U:%G" '"$V"'; ls -A '"$V"'; mountpoint -q '"$V"' && echo mounted; true; }
		victim > /tmp/before.$$
		touched=0 mounted=0 refused=0
		for i in $(seq '"$runs"'); do
			rm -rf '"$M"'/user/nobody
			setpriv --reuid nobody --regid nogroup --clear-groups -- /usr/bin/python3 -c "$HK_ATTACK" "$P" '"$V"' &
			attacker=$!
			if hugeadm --create-user-mounts nobody 2>> /tmp/err.$$; then mounted=$((mounted+1)); else refused=$((refused+1)); fi
			kill $attacker 2>/dev/null || true
			wait $attacker 2>/dev/null || true
			victim | diff /tmp/before.$$ - > /dev/null || touched=$((touched+1))
			hugeadm --unmount-all
		done
		echo "touched=$touched"
		echo "runs=$((mounted+refused)) mounted=$mounted refused=$refused" >&2
		echo "runs=$((mounted+refused))"
		# Each refusal is an error that names the path.
		grep -v -e "is a symbolic link: not following it" -e "changed while it was being created" \
			-e "Unable to open dir" -e "Unable to mount" -e "is not a directory: not mounting there" /tmp/err.$$ || echo "no other error"'
	echo "# $stderr" >&3
	assert_success
	assert_line "touched=0"
	assert_line "runs=$runs"
	assert_line "no other error"
}

@test "(7) --unmount-all: a path that leads elsewhere than the mount table says is left alone" {
	# The state at the instant of the race of ns-e2e2: hugeadm read the mount table
	# (a hugetlbfs mount at user/nobody/d/pagesize-2MB), then the user swapped d
	# for another directory where pagesize-2MB is a symlink to the victim, a mount
	# point. Here root's tmpfs over d stands for the swapped directory.
	run --separate-stderr in_ns '
		mount -t tmpfs victimfs '"$V"'
		hugeadm --create-user-mounts nobody
		U='"$M"'/user/nobody
		as_user nobody nogroup mkdir -p $U/d/pagesize-2MB
		mount -t hugetlbfs none $U/d/pagesize-2MB
		mount -t tmpfs -o mode=0777 swapped $U/d
		as_user nobody nogroup ln -s '"$V"' $U/d/pagesize-2MB
		rc=0; hugeadm --unmount-all || rc=$?
		echo "rc=$rc"
		mountpoint -q '"$V"' && echo "victim mounted"
		findmnt -rn -t hugetlbfs -o TARGET | grep "^/var/lib/" || true'
	assert_line "victim mounted"
	assert_equal "$stderr" "hugeadm:WARNING: $M/user/nobody/d/pagesize-2MB is not the mount the mount table shows there (a symbolic link or moved): not unmounting it"
	assert_line "rc=1"
	# The hidden mount stays, hugeadm's own one came off all the same.
	assert_line "$M/user/nobody/d/pagesize-2MB"
	refute_line "$M/user/nobody/pagesize-2MB"
}

@test "(7e) --unmount-all: another mount where the table shows hugeadm's is left mounted" {
	# As (7), but the swapped directory holds a real directory pagesize-2MB with
	# a mount of its own on it (a user's mount, here root's tmpfs): the walk
	# follows no link and gets there, and only the mount id tells them apart.
	run --separate-stderr in_ns '
		hugeadm --create-user-mounts nobody
		U='"$M"'/user/nobody
		as_user nobody nogroup mkdir -p $U/d/pagesize-2MB
		mount -t hugetlbfs none $U/d/pagesize-2MB
		mount -t tmpfs -o mode=0777 swapped $U/d
		mkdir $U/d/pagesize-2MB
		mount -t tmpfs other $U/d/pagesize-2MB
		rc=0; hugeadm --unmount-all || rc=$?
		echo "rc=$rc"
		findmnt -rn -S other -o TARGET'
	assert_equal "$stderr" "hugeadm:WARNING: $M/user/nobody/d/pagesize-2MB is not the mount the mount table shows there (a symbolic link or moved): not unmounting it"
	assert_line "rc=1"
	assert_line "$M/user/nobody/d/pagesize-2MB"
}

@test "(7f) an unmount planned for hugeadm's mount leaves what is put in its place between plan and run" {
	# The instant between hugeadm's plan of --unmount-all and its run, replayed
	# through libhugekit's own calls (tests/live/plan-race.c): the mount
	# planned for goes, and another file system is mounted at the same path.
	# The executor takes down a hugetlbfs mount there, nothing else.
	run --separate-stderr in_ns '
		hugeadm --create-mounts
		P='"$M"'/pagesize-2MB
		'"$HK_BUILD_DIR"'/tests/plan-race unmount $P "umount $P && mount -t tmpfs other $P"
		findmnt -rn -S other -o TARGET'
	assert_success
	assert_line "ALREADY"
	refute_line "DONE"
	assert_line "rc=0"
	assert_line "$M/pagesize-2MB"
	assert_equal "$stderr" ""
}

@test "(7b) --unmount-all takes down hugeadm's own layout only (pagesize-*)" {
	# Where ns-e2e2's first stage put root's mount: a name of the user's choosing.
	run --separate-stderr in_ns '
		U='"$M"'/user/nobody
		hugeadm --create-user-mounts nobody
		as_user nobody nogroup mkdir -p $U/d2/victim
		mount -t hugetlbfs none $U/d2/victim
		rc=0; hugeadm --unmount-all || rc=$?
		echo "rc=$rc"
		findmnt -rn -t hugetlbfs -o TARGET | grep "^/var/lib/" || true'
	assert_equal "$stderr" "hugeadm:WARNING: $M/user/nobody/d2/victim is not one of hugeadm's mounts: left mounted"
	assert_line "rc=0"
	assert_line "$M/user/nobody/d2/victim"
	refute_line "$M/user/nobody/pagesize-2MB"
}

# The executor's put-back of hugeadm's own mounts: a run whose second mount
# the kernel refuses (a page size it does not have, 4 MiB, faked beside the
# real 2 MiB one) takes the first down again, with everything else the run
# changed, and says so; the directories stay (2.23's).
@test "(7f) a --create-*-mounts run that fails half-way takes its mounts down again" {
	run --separate-stderr in_ns '
		'"$(fake_size 4096)"'
		rc=0; hugeadm -v --create-user-mounts nobody || rc=$?
		echo "rc=$rc"
		echo "mounts=$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^/var/lib/" || true)"
		[ -d '"$M"'/user/nobody/pagesize-2MB ] && echo "directory stays"'
	assert_line "rc=1"
	assert_line "mounts=0"
	assert_line "directory stays"
	[[ $stderr == *"hugeadm:INFO: mount $M/user/nobody/pagesize-2MB: put back as it was"* ]] || fail "$stderr"
	[[ $stderr == *"hugeadm:ERROR: --create-user-mounts nobody: failed: 1 file put back as it was before this run"* ]] || fail "$stderr"
}

# The race of "changed while it was being created", made certain: a shim
# gives every pagesize-* directory to nobody as soon as mkdirat(2) has made
# it, as a user who won the race would. hugeadm says it once (the executor's
# step must not add "already mounted with other options" after it), mounts
# nothing, exit 1.
@test "(7g) a directory changed while it was being created: one error, nothing mounted" {
	hk_need_cmd gcc gcc
	# Outside /tmp, which the namespace covers with a tmpfs of its own.
	local dir shim
	dir=$(mktemp -d /dev/shm/hk-shim.XXXXXX)
	shim="$dir/chown-shim.so"
	cat > "$BATS_TEST_TMPDIR/shim.c" <<-'EOF'
		#define _GNU_SOURCE
		#include <dlfcn.h>
		#include <fcntl.h>
		#include <string.h>
		#include <sys/stat.h>
		#include <unistd.h>
		int mkdirat(int dirfd, const char *name, mode_t mode)
		{
			int (*real)(int, const char *, mode_t) =
				(int (*)(int, const char *, mode_t))dlsym(RTLD_NEXT, "mkdirat");
			int rc = real(dirfd, name, mode);

			if (rc == 0 && strncmp(name, "pagesize-", 9) == 0)
				fchownat(dirfd, name, 65534, 65534, AT_SYMLINK_NOFOLLOW);
			return rc;
		}
	EOF
	gcc -shared -fPIC -o "$shim" "$BATS_TEST_TMPDIR/shim.c" -ldl
	chmod 0755 "$dir"
	run --separate-stderr in_ns '
		rc=0
		ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 LD_PRELOAD='"$shim"' hugeadm --create-mounts || rc=$?
		echo "rc=$rc"
		echo "mounts=$(findmnt -rn -t hugetlbfs -o TARGET | grep -c "^/var/lib/" || true)"'
	rm -rf "$dir"
	assert_line "rc=1"
	assert_line "mounts=0"
	assert_equal "$stderr" "hugeadm:ERROR: $M/pagesize-2MB changed while it was being created: not using it"
}

# replay_rename_race one|two: ns.sh's race, bounded, with one page size (2 MiB) or
# two (a fake 1 GiB one beside it, whose mount fails: the run rolls back the first).
replay_rename_race() {
	local runs=20
	# The attacker, as nobody: on hugeadm's second open of pagesize-2MB (the one it
	# mounts on), rename it away and put a symlink to the victim in its place, and
	# make pagesize-1GB a symlink so that the second mount fails and the run rolls back.
	export HK_ATTACK='
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
fd = libc.inotify_init()
libc.inotify_add_watch(fd, b"pagesize-2MB", 0x20)
open(sys.argv[3], "w").close()
seen = 0
while True:
    buf = os.read(fd, 4096)
    i = 0
    while i < len(buf):
        wd, mask, cookie, n = struct.unpack_from("iIII", buf, i)
        i += 16 + n
        seen += mask & 0x20 != 0
        if seen == 2:
            os.rename("pagesize-2MB", "x")
            os.symlink(sys.argv[2], "pagesize-2MB")
            if os.path.isdir("pagesize-1GB"):
                os.rmdir("pagesize-1GB")
                os.symlink("/", "pagesize-1GB")
            sys.exit(0)
'
	run --separate-stderr in_ns '
		mount -t tmpfs victimfs '"$V"'
		# A second page size (1 GiB) beside the real 2 MiB one: two mounts to make.
		if [ '"$1"' = two ]; then
		'"$(fake_size 1048576)"'
		fi
		U='"$M"'/user/nobody
		hugeadm --create-user-mounts nobody 2> /dev/null || true
		hugeadm --unmount-all
		won=0
		for i in $(seq '"$runs"'); do
			for d in x pagesize-2MB pagesize-1GB; do
				if [ ! -L $U/$d ] && mountpoint -q $U/$d; then echo "left mounted: $d" >&2; umount $U/$d; fi
			done
			rm -rf $U/x $U/pagesize-2MB $U/pagesize-1GB /tmp/ready.$$
			as_user nobody nogroup mkdir $U/pagesize-2MB
			[ '"$1"' = one ] || as_user nobody nogroup mkdir $U/pagesize-1GB
			# Not through the as_user function: $! must be the attacker itself.
			setpriv --reuid nobody --regid nogroup --clear-groups -- /usr/bin/python3 -c "$HK_ATTACK" $U '"$V"' /tmp/ready.$$ 2> /dev/null &
			attacker=$!
			until [ -e /tmp/ready.$$ ]; do sleep 0.01; done
			hugeadm --create-user-mounts nobody 2>> /tmp/err.$$ || true
			kill $attacker 2>/dev/null || true
			wait $attacker 2>/dev/null || true
			mountpoint -q $U/x && won=$((won+1))
			mountpoint -q '"$V"' || { echo "victim unmounted on run $i"; break; }
		done
		echo "mount landed on the renamed directory (and stayed) in $won runs"
		mountpoint -q '"$V"' && echo "victim mounted"
		echo "refused as moved in $(grep -c "moved while it was being mounted" /tmp/err.$$ || true) runs" >&2
		sort -u /tmp/err.$$ >&2'
	echo "# $stderr" >&3
	assert_line "victim mounted"
	assert_line "mount landed on the renamed directory (and stayed) in 0 runs"
}

@test "(7c) the rename race of ns.sh: the mount never stays on the renamed directory" {
	replay_rename_race one
}

@test "(7d) the rename race of ns.sh: a rollback never unmounts by the user's path" {
	replay_rename_race two
}

@test "(6) a crafted mount point cannot forge output: one text line each, valid UTF-8 JSON" {
	# A newline, a tab, 0xff, a lone continuation byte, an overlong '/' (C0 AF).
	export HK_CHECK_JSON='
import json, sys
doc = json.loads(sys.stdin.buffer.read().decode("utf-8"))  # strict UTF-8
t = [m["target"] for m in doc["mounts"] if m["target"].startswith("/var/lib/x")]
assert t == ["/var/lib/x\nFAKE-mount rw\tpagesize=2M\u00ff\u0080\u00c0\u00af"], t
print("json ok")
'
	run --separate-stderr in_ns '
		d=$(printf "/var/lib/x\nFAKE-mount rw\tpagesize=2M\xff\x80\xc0\xaf")
		mkdir "$d"
		mount -t hugetlbfs none "$d"
		echo "mounts=$(findmnt -rn -t hugetlbfs | wc -l)"
		hugeadm --list-all-mounts > /tmp/list.$$
		echo "lines=$(wc -l < /tmp/list.$$)"
		echo "forged=$(grep -c "^FAKE" /tmp/list.$$ || true)"
		grep -a -o -F "/var/lib/x\012FAKE-mount rw\011pagesize=2M" /tmp/list.$$
		echo "forged in --explain=$(hugeadm --explain | grep -c "^FAKE" || true)"
		hugeadm --list-all-mounts --json | /usr/bin/python3 -c "$HK_CHECK_JSON"'
	assert_success
	# The header and one line per mount, no more: the forged line is not one.
	assert_line "lines=$(($(sed -n 's/^mounts=//p' <<< "$output") + 1))"
	assert_line "forged=0"
	assert_line "/var/lib/x\\012FAKE-mount rw\\011pagesize=2M"
	assert_line "forged in --explain=0"
	assert_line "json ok"
}
