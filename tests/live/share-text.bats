#!/usr/bin/env bats
# Shared text (lib/runtime/share.c, HUGETLB_SHARE=1) on the running kernel,
# through tests/rt/share-probe, which calls rt_share_text_fd() on a buffer of
# two 2 MiB pages and maps the descriptor it gets as the runtime does.
#
# Each test runs in a private mount namespace (unshare -m --propagation
# private) with an empty tmpfs on /mnt and a 1777 hugetlbfs mount at /mnt/h,
# as a machine-wide mount would be: the files and their pages go with the
# namespace. The victim is nobody (its directory /mnt/h/elflink-uid-65534);
# the attacker is daemon, another user who may write the mount. An attack
# must end in a refusal with a warning naming the file: nothing of the
# attacker's mapped, nothing of the victim's or the attacker's changed, no
# huge page taken.

# The scripts run in the namespace are single-quoted on purpose: they expand there.
# shellcheck disable=SC2016

load share

# in_ns SCRIPT: SCRIPT in share_ns (share.bash), where also: text [SEED [PAGES]]
# runs the probe as the victim for the text "prog" (key k1, offset 200000);
# state lists every file under /mnt/h with its owner, mode, links, size and
# checksum; replay CMD... runs CMD and prints "rc=N" when it fails,
# "unchanged" when state is the same after it, and "pages taken N".
in_ns() {
	share_ns '
		text() { as nobody timeout 20 "$P" fd prog k1 200000 "${2:-2}" "${1:-1}"; }
		state() {
			find /mnt/h -mindepth 1 | sort | while read -r f; do
				if [ -f "$f" ] && [ ! -L "$f" ] && [ -r "$f" ]; then
					echo "$(stat -c "%n %U %a %h %s" "$f") $(cksum < "$f")"
				else
					stat -c "%n %U %a %F" "$f"
				fi
			done
		}
		replay() {
			state > /mnt/before; f0=$(pages)
			"$@" || echo "rc=$?"
			state | diff /mnt/before - && echo unchanged
			echo "pages taken $((f0 - $(pages)))"
		}
		D=/mnt/h/elflink-uid-65534
		A=/mnt/h/elflink-uid-1
		'"$1"
}

# A refusal: the probe said ERR, the warning names the file and the reason,
# nothing changed (the script printed "unchanged") and no page was taken.
assert_refused() {
	assert_line "$1"
	assert_line "unchanged"
	assert_line "pages taken 0"
	refute_line "same"
	[[ "$stderr" == *"libhugetlbfs: WARNING: shared text: $2"* ]] ||
		fail "no warning \"$2\" in: $stderr"
}

@test "the first call makes the file, the second finds it: the pool gives its pages once" {
	run --separate-stderr in_ns '
		f0=$(pages)
		text > /mnt/1; text > /mnt/2
		cat /mnt/1 /mnt/2
		echo "pages taken $((f0 - $(pages)))"
		[ "$(grep inode /mnt/1)" = "$(grep inode /mnt/2)" ] && echo "one inode"
		stat -c "%n %U %a" $D $D/*'
	assert_success
	assert_equal "$(grep -c same <<< "$output")" 2
	assert_line --index 0 "made"
	assert_line --index 4 "found"
	assert_line "one inode"
	# Two pages in the file, none for either mapping (free while mapped: 8 - 2).
	assert_line "pages taken 2"
	assert_equal "$(grep -c '^free 6$' <<< "$output")" 2
	assert_line "/mnt/h/elflink-uid-65534 nobody 700"
	assert_line "/mnt/h/elflink-uid-65534/prog.k1.200000 nobody 400"
	assert_equal "$stderr" ""
}

@test "four processes at once: one makes the file, the others use it, no temporary file stays" {
	run --separate-stderr in_ns '
		f0=$(pages)
		for i in 1 2 3 4; do text > /mnt/out.$i & done
		wait
		cat /mnt/out.* | grep -v "^inode\|^free" | sort | uniq -c | sed "s/^ *//"
		echo "pages taken $((f0 - $(pages)))"
		ls -A $D'
	assert_success
	assert_line "1 made"
	assert_line "3 found"
	assert_line "4 same"
	assert_line "pages taken 2"
	assert_equal "$(grep -c '^prog\|^\.' <<< "$output")" 1
	assert_line "prog.k1.200000"
}

@test "another range, build or page count gets its own file; a stale one is never mapped" {
	run --separate-stderr in_ns '
		text 1 > /dev/null
		state > /mnt/before; f0=$(pages)
		# Same name, other contents (a program changed in place), or other sizes.
		for args in "2 2" "1 1" "1 3"; do
			text $args || echo "rc=$?"
		done
		state | diff /mnt/before - && echo unchanged
		echo "pages taken $((f0 - $(pages)))"
		as nobody "$P" fd prog k2 200000 2 1 | sed -n 1p
		as nobody "$P" fd prog k1 600000 2 1 | sed -n 1p'
	assert_equal "$(grep -c '^error ESTALE$' <<< "$output")" 3
	assert_line "unchanged"
	assert_line "pages taken 0"
	refute_line "same"
	assert_equal "$(grep -c "prog.k1.200000: its contents are not this program's: not mapping it" <<< "$stderr")" 1
	assert_equal "$(grep -c "prog.k1.200000: its size is not the text's: not mapping it" <<< "$stderr")" 2
	assert_equal "$(grep -c '^made$' <<< "$output")" 2
}

@test "(1) another user made the directory first, with the right file in it: refused" {
	local victim
	# nobody could not enter a 0700 directory of daemon's; root can, and must not use it.
	for victim in nobody:0755:65534 root:0700:0; do
		run --separate-stderr in_ns '
			IFS=: read -r V mode uid <<< "'"$victim"'"
			# The attacker makes a perfect copy in its own directory and renames it to the victim'"'"'s.
			as daemon "$P" fd prog k1 200000 2 1 > /dev/null
			as daemon chmod $mode $A
			as daemon mv $A /mnt/h/elflink-uid-$uid
			replay as $V timeout 20 "$P" fd prog k1 200000 2 1'
		assert_refused "error EACCES" "/mnt/h/elflink-uid-${victim##*:}: owned by another user: not using it"
		assert_line "rc=1"
	done
}

# hugetlbfs_symlinks: skip where this kernel makes no symbolic link on hugetlbfs
# (6.18 answers EINVAL: there, nobody can stage these attacks).
hugetlbfs_symlinks() {
	run unshare -m --propagation private bash -c '
		mount -t tmpfs hk-share /mnt && mkdir /mnt/h && mount -t hugetlbfs none /mnt/h
		ln -s /x /mnt/h/l'
	[ "$status" -eq 0 ] || hk_skip "no symbolic links on hugetlbfs with this kernel ($output)"
}

@test "(2) a symbolic link in place of the directory, to the attacker's or to anywhere: refused" {
	local target
	hugetlbfs_symlinks
	for target in /mnt/h/elflink-uid-1 /mnt/victim /nonexistent; do
		run --separate-stderr in_ns '
			as daemon "$P" fd prog k1 200000 2 1 > /dev/null
			as daemon chmod 0755 $A
			install -d -o nobody -m 0700 /mnt/victim
			as daemon ln -s '"$target"' $D
			state > /mnt/before; ls -A /mnt/victim >> /mnt/before; f0=$(pages)
			text || echo "rc=$?"
			{ state; ls -A /mnt/victim; } | diff /mnt/before - && echo unchanged
			echo "pages taken $((f0 - $(pages)))"'
		assert_refused "error EACCES" "/mnt/h/elflink-uid-65534: not a directory (a symbolic link?): not using it"
	done
}

# plant_file SETUP WANT: the victim's file made, then SETUP run (F is the
# file); the victim's next call must be refused with the reason WANT.
plant_file() {
	run --separate-stderr in_ns '
		as daemon "$P" fd prog k1 200000 2 1 > /dev/null
		as daemon chmod 0755 $A
		text > /dev/null
		F=$D/prog.k1.200000
		'"$1"'
		replay text'
	assert_refused "error EACCES" "/mnt/h/elflink-uid-65534/prog.k1.200000: $2: not mapping it"
}

@test "(3) a hard link, FIFO, foreign or loose file in place of the file: refused" {
	local plant want
	while IFS='|' read -r plant want; do
		plant_file "$plant" "$want"
	done <<- 'EOF'
		as nobody ln $F $D/other|it has more than one name (a hard link)
		rm $F && as nobody mkfifo -m 0400 $F|not a regular file
		chown daemon $F|Permission denied
		chown daemon $F && chmod 0444 $F|owned by another user
		chmod 0444 $F|its mode is not 0400 or 0500
		chmod 0600 $F|its mode is not 0400 or 0500
	EOF
}

@test "(3b) a symbolic link to the attacker's copy in place of the file: refused" {
	hugetlbfs_symlinks
	plant_file 'rm $F && as nobody ln -s $A/prog.k1.200000 $F' "a symbolic link"
}

@test "(4) a file of the right size without its pages is not read (no page taken, no SIGBUS)" {
	run --separate-stderr in_ns '
		as nobody mkdir -m 0700 $D
		as nobody truncate -s 4M $D/prog.k1.200000
		as nobody chmod 0400 $D/prog.k1.200000
		replay text'
	assert_refused "error ESTALE" "/mnt/h/elflink-uid-65534/prog.k1.200000: pages are missing from it: not mapping it"
}

@test "(5) a directory of the victim's that others may enter is not used" {
	run --separate-stderr in_ns '
		text > /dev/null
		chmod 0711 $D
		replay text'
	assert_refused "error EACCES" "/mnt/h/elflink-uid-65534: its mode is not 0700: not using it"
}

@test "(6) a refused directory on the first mount: the next mount of the page size is used" {
	run --separate-stderr in_ns '
		as daemon mkdir -m 0777 $D
		mkdir /mnt/h2 && mount -t hugetlbfs -o mode=1777 none /mnt/h2
		text
		stat -c "%n %U %a" /mnt/h2/elflink-uid-65534/*
		ls -A $D | wc -l'
	assert_success
	assert_line "made"
	assert_line "same"
	assert_line "/mnt/h2/elflink-uid-65534/prog.k1.200000 nobody 400"
	assert_line --index 5 "0"
	[[ "$stderr" == *"/mnt/h/elflink-uid-65534: owned by another user: not using it"* ]]
}

@test "(7) HUGETLB_SHARE_PATH: only a hugetlbfs mount of the size, not noexec; read-only: nothing made" {
	run --separate-stderr in_ns '
		mkdir /mnt/nx /mnt/ro
		mount -t hugetlbfs -o mode=1777,noexec none /mnt/nx
		mount -t hugetlbfs -o mode=1777,ro none /mnt/ro
		for p in /mnt /mnt/nx /mnt/missing /mnt/ro; do
			HUGETLB_SHARE_PATH=$p text || echo "rc=$?"
		done
		ls -A /mnt/nx /mnt/ro /mnt/h | grep -c elflink || true
		HUGETLB_SHARE_PATH=/mnt/h text'
	assert_equal "$(grep -c '^error ENOENT$' <<< "$output")" 4
	assert_line "0"
	assert_line "made"
	[[ "$stderr" == *"HUGETLB_SHARE_PATH=/mnt: not on hugetlbfs (a hugetlbfs mount of 2048 kB pages is needed): text not shared"* ]]
	[[ "$stderr" == *"HUGETLB_SHARE_PATH=/mnt/nx: on a noexec mount"* ]]
	[[ "$stderr" == *"HUGETLB_SHARE_PATH=/mnt/missing: No such file or directory"* ]]
	[[ "$stderr" == *"HUGETLB_SHARE_PATH=/mnt/ro: cannot make elflink-uid-65534 there: text not shared"* ]]
}

@test "(8) an empty pool while the file is made: an error, no SIGBUS, no file left" {
	live_pool_free 1
	run --separate-stderr in_ns '
		f0=$(pages)
		HUGETLB_VERBOSE=3 text || echo "rc=$?"
		echo "pages taken $((f0 - $(pages)))"
		ls -A $D'
	assert_line "error ENOMEM"
	assert_line "rc=1"
	assert_line "pages taken 0"
	refute_line --partial "prog"
	refute_line --partial ".hugekit-tmp"
	[[ "$stderr" == *"libhugetlbfs: INFO: shared text: /mnt/h/elflink-uid-65534/prog.k1.200000: Cannot allocate memory"* ]]
}

@test "root's files are root's: elflink-uid-0, made without following anything" {
	run --separate-stderr in_ns '
		"$P" fd prog k1 200000 2 1
		stat -c "%n %U %a" /mnt/h/elflink-uid-0 /mnt/h/elflink-uid-0/*'
	assert_success
	assert_line "made"
	assert_line "same"
	assert_line "/mnt/h/elflink-uid-0 root 700"
	assert_line "/mnt/h/elflink-uid-0/prog.k1.200000 root 400"
}

# two_copies PROGRAM [WRAPPER]: PROGRAM (build/dev/tests, as staged for nobody), under WRAPPER
# (a command such as setarch) when given, run by nobody twice at once with
# the runtime preloaded, HUGETLB_ELFMAP=R HUGETLB_SHARE=1; prints both outputs
# and messages, the pages each start took, and the files.
two_copies() {
	run --separate-stderr in_ns '
		B='"$SHARE_STAGE/tests/$1"' L='"$SHARE_STAGE/lib/libhugekit-rt.so.0"' W="'"${2:-}"'"
		start() {
			as nobody env LD_PRELOAD=$L HUGETLB_ELFMAP=R HUGETLB_SHARE=1 HUGETLB_VERBOSE=3 \
				timeout 60 $W $B < /mnt/in$1 > /mnt/out$1 2> /mnt/err$1 &
			for _ in $(seq 300); do grep -q ready /mnt/out$1 && return 0; sleep 0.1; done
			echo "copy $1 never got ready"; cat /mnt/err$1; return 1
		}
		# Opened read-write first: the copies open them without waiting for a writer.
		mkfifo /mnt/in1 /mnt/in2
		exec 3<> /mnt/in1 4<> /mnt/in2
		f0=$(pages)
		start 1; f1=$(pages)
		start 2; f2=$(pages)
		echo go >&3; echo go >&4; exec 3>&- 4>&-; wait
		cat /mnt/out1 /mnt/out2
		grep -h "shared\|share" /mnt/err1 /mnt/err2 || true
		echo "first took $((f0 - f1)), second took $((f1 - f2))"
		find /mnt/h -mindepth 2'
}

@test "end to end: two copies of a program, the second takes no new huge page" {
	hk_need_built "$HK_BUILD_DIR/lib/libhugekit-rt.so.0" "the runtime"
	local prog
	# Load addresses that are multiples of 2 MiB: not a PIE, or a PIE aligned so.
	for prog in share-hold-nopie share-hold-2m; do
		two_copies "$prog"
		assert_success
		assert_equal "$(grep -c '^intact$' <<< "$output")" 2
		# On huge pages both. smaps counts the file's pages in each private
		# mapping as Private_Hugetlb (6.18): the pool is what tells they are the same.
		assert_equal "$(grep -c '^text 2048 kB, ' <<< "$output")" 2
		refute_line --regexp '^text .*, 0 kB shared, 0 kB private$'
		assert_line --regexp '^first took [1-9][0-9]*, second took 0$'
		assert_line --regexp "^/mnt/h/elflink-uid-65534/$prog\.[0-9a-f]+\.[0-9a-f]+$"
	done
}

@test "end to end: a PIE at a random 4 KiB address is not shared (no file per start), runs all the same" {
	hk_need_built "$HK_BUILD_DIR/lib/libhugekit-rt.so.0" "the runtime"
	# Without address randomization: at a random address one start in 512 is on a
	# 2 MiB boundary and rightly shared; the kernel's fixed PIE base
	# (0x555555554000) is 4 KiB aligned only, every time.
	two_copies share-hold "setarch $(uname -m) -R"
	assert_success
	assert_equal "$(grep -c '^intact$' <<< "$output")" 2
	assert_equal "$(grep -c '^text 2048 kB, ' <<< "$output")" 2
	assert_equal "$(grep -c "shared text: share-hold is not loaded at a 2048 kB boundary (a PIE with p_align 4 kB): each copy keeps its own; run hugeedit --align on it" <<< "$output")" 2
	# Private copies: pages for each, no file.
	assert_line --regexp '^first took [1-9][0-9]*, second took [1-9][0-9]*$'
	refute_line --partial "/mnt/h/"
}

# run_prog NAME: share-hold-nopie, as nobody, with the runtime preloaded
# (HUGETLB_ELFMAP=R HUGETLB_SHARE=1 HUGETLB_VERBOSE=3), its input closed: its
# output and messages into /mnt/NAME.
RUN_PROG='
	run_prog() {
		as nobody env LD_PRELOAD='"$SHARE_STAGE/lib/libhugekit-rt.so.0"' HUGETLB_ELFMAP=R \
			HUGETLB_SHARE=1 HUGETLB_VERBOSE=3 timeout 60 '"$SHARE_STAGE/tests/share-hold-nopie"' \
			< /dev/null > /mnt/$1 2>&1 || echo "rc=$?"
	}'

@test "2.23's elflink-uid-UID, made before (0700): used; 2.23's file and a file of ours with other contents never mapped" {
	hk_need_built "$HK_BUILD_DIR/lib/libhugekit-rt.so.0" "the runtime"
	run --separate-stderr in_ns "$RUN_PROG"'
		# libhugetlbfs 2.23 made the directory (0700, as it does).
		as nobody mkdir -m 0700 $D
		run_prog first
		grep -c "shared (file made)" /mnt/first
		name=$(ls $D); size=$(stat -c %s "$D/$name")
		# 2.23 names its files <exe>_<bits>_<phdr index>: this one holds the
		# very text (renamed from ours). A file of our name now holds other
		# text of the same size, ours, 0400, every page there.
		as nobody mv "$D/$name" $D/share-hold-nopie_64_3
		as nobody "$P" fd prog k1 200000 $((size / 2097152)) 9 > /dev/null
		as nobody mv $D/prog.k1.200000 "$D/$name"
		replay run_prog second
		cat /mnt/second
		stat -c "%a" $D; echo "files: $(ls $D | tr "\n" " ")"'
	assert_success
	assert_line --index 0 "1"
	assert_line "unchanged"
	assert_line "pages taken 0"
	# The program ran right on huge pages, from a private copy.
	assert_line "intact"
	assert_line --regexp '^text 2048 kB, '
	assert_line --regexp "^libhugetlbfs: WARNING: shared text: /mnt/h/elflink-uid-65534/share-hold-nopie\.[0-9a-f]+\.[0-9a-f]+: its contents are not this program's: not mapping it \(remove it: hugeadm --clean-shared-text\)$"
	assert_line --regexp '^libhugetlbfs: INFO: segment [0-9]+ \(text\): not shared \(Stale file handle\): a private copy$'
	refute_line --partial "shared (file"
	refute_line --partial "share-hold-nopie_64_3:"
	assert_line "700"
	assert_line --regexp '^files: share-hold-nopie\.[0-9a-f]+\.[0-9a-f]+ share-hold-nopie_64_3 $'
}
