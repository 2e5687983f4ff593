#!/usr/bin/env bats
# hugeadm --list-shared-text and --clean-shared-text on real hugetlbfs mounts.
# The files are made by tests/rt/share-probe (the runtime's share.c) as root
# and as nobody, in a private mount namespace (unshare -m --propagation
# private) with a tmpfs on /mnt and a 1777 hugetlbfs mount at /mnt/h, bound
# again at /mnt/b: everything goes with the namespace. daemon plays a user
# who puts things where hugeadm, as root, removes files.

# The scripts run in the namespace are single-quoted on purpose: they expand there.
# shellcheck disable=SC2016

SHARE_NEEDS=jq
load share

# in_ns SCRIPT: SCRIPT in share_ns (share.bash), after /mnt/h was bound again
# at /mnt/b and nobody made prog (2 pages) and "it's" (1 page), and root made
# prog (1 page); files lists every file under /mnt/h.
in_ns() {
	share_ns '
		files() { find /mnt/h -mindepth 2 | sort; }
		mkdir /mnt/b && mount --bind /mnt/h /mnt/b
		as nobody "$P" fd prog k1 200000 2 1 > /dev/null
		as nobody "$P" fd "it'"'"'s" k1 400000 1 1 > /dev/null
		"$P" fd prog k1 200000 1 1 > /dev/null
		'"$1"
}

@test "--list-shared-text: a table, or JSON, of each file once (a bound mount is not listed twice)" {
	run --separate-stderr in_ns '
		touch /mnt/h/elflink-uid-0/.hugekit-tmp-77-0
		hugeadm --list-shared-text
		hugeadm --list-shared-text --json | jq -c ".shared_text[]"'
	assert_success
	assert_equal "$stderr" ""
	assert_line --index 0 --regexp '^User +Pages +Size +File +Executable +Key$'
	assert_line --index 1 --regexp '^root +0 +0 /mnt/h/elflink-uid-0/.hugekit-tmp-77-0 +\(being made, or left by a crash\) +-$'
	assert_line --index 2 --regexp '^root +1 +2M /mnt/h/elflink-uid-0/prog.k1.200000 +prog +k1$'
	assert_line --index 3 --regexp "^nobody +1 +2M /mnt/h/elflink-uid-65534/it's.k1.400000 +it's +k1$"
	assert_line --index 4 --regexp '^nobody +2 +4M /mnt/h/elflink-uid-65534/prog.k1.200000 +prog +k1$'
	assert_line --index 5 '{"user":"root","uid":0,"file":"/mnt/h/elflink-uid-0/.hugekit-tmp-77-0","page_size":2097152,"pages":0,"size":0,"unfinished":true,"executable":null,"key":null,"offset":null,"libhugetlbfs":false}'
	assert_line --index 8 '{"user":"nobody","uid":65534,"file":"/mnt/h/elflink-uid-65534/prog.k1.200000","page_size":2097152,"pages":2,"size":4194304,"unfinished":false,"executable":"prog","key":"k1","offset":2097152,"libhugetlbfs":false}'
	assert_equal "${#lines[@]}" 9
}

@test "--dry-run --clean-shared-text prints rm lines and removes nothing" {
	run --separate-stderr in_ns '
		files > /mnt/before; f0=$(pages)
		hugeadm --dry-run --clean-shared-text
		hugeadm --dry-run --clean-shared-text=65534
		files | diff /mnt/before - && echo unchanged
		echo "pages freed $(($(pages) - f0))"'
	assert_success
	assert_output "HUGETLB_VERBOSE='2'
rm -f -- '/mnt/h/elflink-uid-0/prog.k1.200000'
rm -f -- '/mnt/h/elflink-uid-65534/it'\\''s.k1.400000'
rm -f -- '/mnt/h/elflink-uid-65534/prog.k1.200000'
HUGETLB_VERBOSE='2'
rm -f -- '/mnt/h/elflink-uid-65534/it'\\''s.k1.400000'
rm -f -- '/mnt/h/elflink-uid-65534/prog.k1.200000'
unchanged
pages freed 0"
}

@test "--dry-run --json: each file is an item of the plan (its pages), before the pools; nothing removed" {
	run --separate-stderr in_ns '
		files > /mnt/before
		hugeadm --dry-run --json --clean-shared-text=nobody --pool-pages-min 2M:+1 |
			jq -c ".plan[] | [.item, .value]"
		files | diff /mnt/before - && echo unchanged'
	assert_success
	assert_line --index 0 "[\"remove /mnt/h/elflink-uid-65534/it's.k1.400000\",\"1\"]"
	assert_line --index 1 '["remove /mnt/h/elflink-uid-65534/prog.k1.200000","2"]'
	assert_line --index 2 --regexp '^\["pool 2M minimum","[0-9]+"\]$'
	assert_line --index 3 "unchanged"
}

@test "planned, then swapped before the run for a FIFO or another user's directory: nothing removed" {
	hk_need_built "$HK_BUILD_DIR/tests/plan-race"
	# What was planned is nobody's two files; between the plan and the run
	# nobody puts a FIFO in place of one (hugetlbfs makes no symbolic link)
	# and moves its directory away, and daemon makes a directory of that name
	# with a file of the other's name (tests/live/plan-race.c runs the plan
	# through libhugekit, as hugeadm does).
	run --separate-stderr in_ns '
		cat > /mnt/swap.sh <<"EOS"
D=/mnt/h/elflink-uid-65534
as() { u=$1; shift; setpriv --reuid "$u" --regid "$(id -g "$u")" --clear-groups -- "$@"; }
as nobody sh -c "rm $D/prog.k1.200000 && mkfifo $D/prog.k1.200000 && mv $D /mnt/h/moved"
as daemon mkdir $D
as daemon touch "$D/$(ls /mnt/h/moved | grep k1.400000)"
EOS
		'"$HK_BUILD_DIR"'/tests/plan-race text 65534 "bash /mnt/swap.sh"
		ls -n /mnt/h/elflink-uid-65534 | awk "NR > 1 { print \$3, \$9 }"
		ls /mnt/h/moved'
	assert_success
	assert_output "ALREADY /mnt/h/elflink-uid-65534/it's.k1.400000
ALREADY /mnt/h/elflink-uid-65534/prog.k1.200000
rc=0
1 it's.k1.400000
it's.k1.400000
prog.k1.200000"
	# The walks that look each planned file up again are quiet: what they
	# pass over was (or, a stranger's since, is) no file of the plan.
	[[ "$stderr" != *"skipped"* && "$stderr" != *"left alone"* ]] || fail "$stderr"
}

@test "files that cannot be removed (a mount made read-only meanwhile): each told with its error, none stops the others, the run is short (1)" {
	hk_need_built "$HK_BUILD_DIR/tests/plan-race"
	run --separate-stderr in_ns '
		'"$HK_BUILD_DIR"'/tests/plan-race text 65534 "mount -o remount,ro,bind /mnt/h"
		ls /mnt/h/elflink-uid-65534'
	assert_success
	assert_output "SHORT Read-only file system /mnt/h/elflink-uid-65534/it's.k1.400000
SHORT Read-only file system /mnt/h/elflink-uid-65534/prog.k1.200000
rc=1
it's.k1.400000
prog.k1.200000"
}

@test "two --clean-shared-text options, one user each: both run, each file once" {
	run --separate-stderr in_ns '
		hugeadm -v --clean-shared-text=nobody --clean-shared-text=root --clean-shared-text=nobody
		echo "rc=$? left: $(files | wc -l)"'
	assert_success
	assert_line "rc=0 left: 0"
	assert_equal "$(grep -c "INFO: removed " <<< "$stderr")" 3
	[[ "$stderr" != *"internal error"* ]] || fail "$stderr"
}

@test "many files: the directory read once to plan, each removal looks up one name (strace counts getdents64)" {
	hk_need_cmd strace strace
	run --separate-stderr in_ns '
		for i in $(seq 1 300); do echo "/mnt/h/elflink-uid-65534/f$i.k1.0"; done |
			as nobody xargs touch
		strace -f -qq -y -o /mnt/trace -e trace=getdents64,unlinkat hugeadm --clean-shared-text=nobody
		echo "unlinkat $(grep -c "^[0-9]* *unlinkat(.*= 0$" /mnt/trace)"
		echo "reads of the directory $(grep -c "getdents64([0-9]*</mnt/h/elflink-uid-65534>" /mnt/trace)"
		echo "left: $(files | wc -l)"'
	assert_success
	assert_line "unlinkat 302"
	assert_line "left: 1"
	# Planning reads the directory once (getdents64 until it returns 0); each
	# removal looks up its one name, however many files there are.
	local n
	n=$(sed -n 's/^reads of the directory //p' <<< "$output")
	[ "$n" -ge 1 ] && [ "$n" -le 4 ] || fail "the directory was read $n times for 302 files"
}

@test "a file name with a newline and an escape: one table line, one rm word, removed" {
	run --separate-stderr in_ns '
		as nobody touch "/mnt/h/elflink-uid-65534/x
y$(printf "\033")[2J"
		hugeadm --list-shared-text | grep -c "elflink-uid-65534/x"
		hugeadm --dry-run --clean-shared-text=65534 | grep -F "65534/x"
		hugeadm --clean-shared-text=65534
		ls -b /mnt/h/elflink-uid-65534 | grep -c "^x" || true'
	assert_success
	assert_line --index 0 "1"
	assert_line --index 1 "rm -f -- \$'/mnt/h/elflink-uid-65534/x\\012y\\033[2J'"
	assert_line --index 2 "0"
	[[ $output != *$'\033'* ]] || fail "an escape reached the terminal: $output"
}

@test "--clean-shared-text=nobody removes nobody's files only; then every user's, and the pages go back" {
	run --separate-stderr in_ns '
		f0=$(pages)
		hugeadm --clean-shared-text=nobody
		files
		echo "pages freed $(($(pages) - f0))"
		hugeadm -v --clean-shared-text
		files
		echo "pages freed $(($(pages) - f0))"'
	assert_success
	assert_output "/mnt/h/elflink-uid-0/prog.k1.200000
pages freed 3
pages freed 4"
	[[ "$stderr" == *"hugeadm:INFO: removed /mnt/h/elflink-uid-0/prog.k1.200000 (1 page)"* ]]
	[[ "$stderr" == *"hugeadm:INFO: 1 file of shared text removed, 1 huge page freed (when no program maps them any more)"* ]]
}

@test "a file in use is removed safely: the program keeps its text, the pages go when it ends" {
	run --separate-stderr in_ns '
		f0=$(pages)
		mkfifo /mnt/in
		as nobody "$P" fd prog k1 200000 2 1 hold < /mnt/in > /mnt/out &
		exec 3> /mnt/in
		while ! grep -q "^free" /mnt/out; do sleep 0.1; done
		hugeadm --clean-shared-text=nobody
		echo "freed while mapped $(($(pages) - f0))"
		echo go >&3; exec 3>&-; wait
		cat /mnt/out
		echo "freed after $(($(pages) - f0))"'
	assert_success
	assert_line "found"
	assert_line "same after"
	# "it's" (1 page) at once; prog (2 pages) when the program unmaps it.
	assert_line "freed while mapped 1"
	assert_line "freed after 3"
}

@test "never follows or removes what users put there: foreign directories, subdirectories, FIFOs" {
	run --separate-stderr in_ns '
		# daemon makes elflink-uid-0 on the second mount (root'"'"'s name) and fills it.
		mkdir /mnt/h2 && mount -t hugetlbfs -o mode=1777 none /mnt/h2
		as daemon mkdir -m 0777 /mnt/h2/elflink-uid-0 /mnt/h2/elflink-uid-65534 /mnt/h2/hugekit-text-0
		as daemon touch /mnt/h2/elflink-uid-0/x /mnt/h2/elflink-uid-65534/y /mnt/h2/hugekit-text-0/x_64_2
		# nobody puts a directory and a FIFO in its own.
		as nobody mkdir /mnt/h/elflink-uid-65534/sub
		as nobody touch /mnt/h/elflink-uid-65534/sub/z
		as nobody mkfifo /mnt/h/elflink-uid-65534/fifo
		# Neither elflink-uid-<uid> nor hugekit-text-<uid>: left alone.
		as daemon mkdir /mnt/h/elflink-uid-00 /mnt/h/elflink-uid-x /mnt/h/hugekit-text-00 /mnt/h/hugekit-text-x
		as daemon touch /mnt/h/elflink-uid-00/a /mnt/h/elflink-uid-x/b /mnt/h/hugekit-text-00/c /mnt/h/hugekit-text-x/d
		hugeadm --clean-shared-text
		echo "rc=$?"
		files; find /mnt/h2 -mindepth 2 | sort'
	assert_success
	assert_line "rc=0"
	assert_output --partial "/mnt/h/elflink-uid-00/a
/mnt/h/elflink-uid-65534/fifo
/mnt/h/elflink-uid-65534/sub
/mnt/h/elflink-uid-65534/sub/z
/mnt/h/elflink-uid-x/b
/mnt/h/hugekit-text-00/c
/mnt/h/hugekit-text-x/d
/mnt/h2/elflink-uid-0/x
/mnt/h2/elflink-uid-65534/y
/mnt/h2/hugekit-text-0/x_64_2"
	refute_output --partial "prog"
	[[ "$stderr" == *"hugeadm:WARNING: /mnt/h2/elflink-uid-0 is owned by uid 1, not 0: skipped"* ]]
	[[ "$stderr" == *"hugeadm:WARNING: /mnt/h2/elflink-uid-65534 is owned by uid 1, not 65534: skipped"* ]]
	[[ "$stderr" == *"hugeadm:WARNING: /mnt/h2/hugekit-text-0 is owned by uid 1, not 0: skipped"* ]]
	[[ "$stderr" == *"hugeadm:WARNING: /mnt/h/elflink-uid-65534/sub is not a regular file: left alone"* ]]
	[[ "$stderr" == *"hugeadm:WARNING: /mnt/h/elflink-uid-65534/fifo is not a regular file: left alone"* ]]
	# Told once, when planned: the run's walks to each file are quiet.
	assert_equal "$(grep -c "fifo is not a regular file" <<< "$stderr")" 1
}

@test "a user: --list-shared-text shows their own files; --clean-shared-text needs root" {
	run --separate-stderr in_ns '
		as nobody hugeadm --list-shared-text | sed -n "2,\$p" | cut -c1-10
		rc=0; as nobody hugeadm --clean-shared-text=nobody || rc=$?
		echo "rc=$rc"
		files | wc -l'
	assert_line --index 0 "nobody    "
	assert_line --index 1 "nobody    "
	assert_line "rc=1"
	assert_line "3"
	[[ "$stderr" == *"changing the huge page set-up needs the CAP_SYS_ADMIN capability"* ]]
}

@test "2.23's files in elflink-uid-UID (a finished one, a crash's .tmp) and the old hugekit-text-UID's: listed, removed, their pages back" {
	run --separate-stderr in_ns '
		D=/mnt/h/elflink-uid-65534 O=/mnt/h/hugekit-text-65534
		# Named as 2.23 names its files (the probe'"'"'s text, renamed), and a
		# file of the directory the runtime used before 2.23'"'"'s layout.
		as nobody "$P" fd x k1 0 2 3 > /dev/null
		as nobody mv $D/x.k1.0 $D/prog_64_3
		as nobody touch $D/prog_64_2.tmp
		as nobody mkdir -m 0700 $O
		as nobody "$P" fd y k1 0 1 4 > /dev/null
		as nobody mv $D/y.k1.0 $O/y.k1.0
		hugeadm --list-shared-text
		hugeadm --list-shared-text --json | jq -c ".shared_text[] | select(.libhugetlbfs or (.file | test(\"hugekit-text\")))"
		f0=$(pages)
		hugeadm -v --clean-shared-text=nobody
		echo "pages freed $(($(pages) - f0))"
		files'
	assert_success
	assert_line --index 0 --regexp '^User +Pages +Size +File +Executable +Key$'
	assert_line --index 1 --regexp '^root +1 +2M /mnt/h/elflink-uid-0/prog.k1.200000 +prog +k1$'
	assert_line --index 2 --regexp "^nobody +1 +2M /mnt/h/elflink-uid-65534/it's.k1.400000 +it's +k1$"
	assert_line --index 3 --regexp '^nobody +2 +4M /mnt/h/elflink-uid-65534/prog.k1.200000 +prog +k1$'
	assert_line --index 4 --regexp '^nobody +0 +0 /mnt/h/elflink-uid-65534/prog_64_2.tmp +\(being made, or left by a crash\) +\(libhugetlbfs\)$'
	assert_line --index 5 --regexp '^nobody +2 +4M /mnt/h/elflink-uid-65534/prog_64_3 +prog +\(libhugetlbfs\)$'
	assert_line --index 6 --regexp '^nobody +1 +2M /mnt/h/hugekit-text-65534/y.k1.0 +y +k1$'
	assert_line --index 7 '{"user":"nobody","uid":65534,"file":"/mnt/h/elflink-uid-65534/prog_64_2.tmp","page_size":2097152,"pages":0,"size":0,"unfinished":true,"executable":"prog","key":null,"offset":null,"libhugetlbfs":true}'
	assert_line --index 8 '{"user":"nobody","uid":65534,"file":"/mnt/h/elflink-uid-65534/prog_64_3","page_size":2097152,"pages":2,"size":4194304,"unfinished":false,"executable":"prog","key":null,"offset":null,"libhugetlbfs":true}'
	assert_line --index 9 '{"user":"nobody","uid":65534,"file":"/mnt/h/hugekit-text-65534/y.k1.0","page_size":2097152,"pages":1,"size":2097152,"unfinished":false,"executable":"y","key":"k1","offset":0,"libhugetlbfs":false}'
	# it's (1), prog (2), prog_64_3 (2), y (1): root's file stays.
	assert_line --index 10 "pages freed 6"
	assert_line --index 11 "/mnt/h/elflink-uid-0/prog.k1.200000"
	assert_equal "${#lines[@]}" 12
	[[ "$stderr" == *"hugeadm:INFO: removed /mnt/h/elflink-uid-65534/prog_64_3 (2 pages)"* ]]
	[[ "$stderr" == *"hugeadm:INFO: removed /mnt/h/hugekit-text-65534/y.k1.0 (1 page)"* ]]
	[[ "$stderr" == *"hugeadm:INFO: 5 files of shared text removed, 6 huge pages freed (when no program maps them any more)"* ]]
}

@test "libhugetlbfs 2.23 (a program linked with it, HUGETLB_SHARE=1) and the runtime share elflink-uid-UID: both run, every file listed, removed, the pages back" {
	local src="$BATS_TEST_TMPDIR/p223.c"
	hk_need_cmd gcc gcc
	hk_need_built "$HK_BUILD_DIR/lib/libhugekit-rt.so.0" "the runtime"
	printf '%s\n' '#include <stdio.h>' 'int main(void) { puts("hello from 2.23"); return 0; }' > "$src"
	# What ld.hugetlbfs --hugetlbfs-align does on x86-64: segments 2 MiB apart.
	gcc -no-pie -o "$BATS_TEST_TMPDIR/p223" "$src" -Wl,-zmax-page-size=0x200000 \
		-Wl,-zcommon-page-size=0x200000 -Wl,--no-as-needed -lhugetlbfs 2> /dev/null ||
		hk_missing "libhugetlbfs 2.23 cannot be linked (apt-get install libhugetlbfs-dev)"
	run --separate-stderr share_ns '
		D=/mnt/h/elflink-uid-65534
		cp '"$BATS_TEST_TMPDIR/p223"' /mnt/p223 && chmod 0755 /mnt/p223
		l223() { as nobody env HUGETLB_ELFMAP=R HUGETLB_SHARE=1 /mnt/p223; }
		ours() {
			as nobody env LD_PRELOAD='"$SHARE_STAGE/lib/libhugekit-rt.so.0"' HUGETLB_ELFMAP=R \
				HUGETLB_SHARE=1 HUGETLB_VERBOSE=3 timeout 60 '"$SHARE_STAGE/tests/share-hold-nopie"' \
				< /dev/null 2>&1 | grep "intact\|shared\|WARNING" || true
		}
		f0=$(pages)
		l223
		echo "2.23 made: $(ls $D | tr "\n" " ")"
		ours
		l223
		hugeadm --list-shared-text | awk "NR > 1 { print \$1, \$4, \$5, \$6 }"
		echo "held: $((f0 - $(pages)))"
		hugeadm --clean-shared-text=nobody
		echo "left: $(ls -A $D | wc -l), pages back: $(($(pages) - f0))"'
	assert_success
	local made
	made=$(sed -n 's/^2.23 made: //p' <<< "$output")
	[[ "$made" == p223_64_* ]] || hk_skip "libhugetlbfs 2.23 shares no text on this machine: $output $stderr"
	assert_line --index 0 "hello from 2.23"
	# The runtime used 2.23's directory as it found it; 2.23 ran again beside our file.
	assert_line "intact"
	assert_line --regexp '^libhugetlbfs: INFO: segment [0-9]+ \(text\): .* shared \(file made\)[:;] '
	refute_line --partial "WARNING"
	assert_equal "$(grep -c '^hello from 2.23$' <<< "$output")" 2
	local f n=0
	for f in $made; do
		assert_line "nobody /mnt/h/elflink-uid-65534/$f p223 (libhugetlbfs)"
		n=$((n + 1))
	done
	[ "$n" -ge 1 ]
	assert_line --regexp '^nobody /mnt/h/elflink-uid-65534/share-hold-nopie\.[0-9a-f]+\.[0-9a-f]+ share-hold-nopie [0-9a-f]+$'
	# 2.23's (a page each) and ours (the text: 2 pages) held until removed.
	assert_line "held: $((n + 2))"
	assert_line "left: 0, pages back: 0"
}
