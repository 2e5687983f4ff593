#!/usr/bin/env bats
# The Debian packages (debian/): dpkg-buildpackage -us -uc -b builds them from
# a copy of the tree (once, in setup_file: about 30 s on 2 cores); lintian
# finds no error and no warning; the libraries' packages hold files named
# after their SONAMEs; no file of libhugetlbfs-bin, libhugetlbfs0 or
# libhugetlbfs-dev is in a package that does not Conflict with and Replace
# it. Then tests/package/debroot.sh installs them in a throwaway root made of
# this machine's files (an overlay on /, in a private mount namespace: the
# real root is never written, libhugetlbfs-bin stays installed here), in place
# of libhugetlbfs 2.23, runs pagesize -a, hugeadm --pool-list, a program
# linked against 2.23's libhugetlbfs.so.0 and one built there with
# -lhugetlbfs, purges them and finds nothing left behind. Nothing in it
# changes the kernel's state, so it takes no live lock. As root.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
load ../common

: "${HK_SOURCE_DIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
OURS=(hugekit libhugekit1 libhugekit-dev libhugekit-rt0 hugekit-compat)
REPLACED=(libhugetlbfs-bin libhugetlbfs0 libhugetlbfs-dev)
TOOLS=(pagesize hugeadm hugectl hugeedit ld.hugetlbfs tlbmiss_cost cpupcstat)

# usable: root and the tools of the README's test command (setup_file cannot
# skip; setup() says what is missing).
usable() {
	[ "$(id -u)" -eq 0 ] && command -v dpkg-buildpackage dh lintian unshare cc > /dev/null
}

setup_file() {
	export PKG=$BATS_FILE_TMPDIR/pkg
	mkdir -p "$PKG/src"
	usable || return 0
	# A copy of the tree (what a checkout holds, without builds), so that the
	# build's files (obj-*, debian/tmp, ../*.deb) stay out of the checkout.
	tar -C "$HK_SOURCE_DIR" --exclude=./.git --exclude='./build*' --exclude='./obj-*' \
		--exclude=./debian/tmp --exclude=./debian/.debhelper -cf - . | tar -C "$PKG/src" -xf -
	(cd "$PKG/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
		> "$PKG/build.log" 2>&1 && echo 0 > "$PKG/build.rc" || echo $? > "$PKG/build.rc"
}

setup() {
	hk_need_root "dpkg-buildpackage, unshare and chroot"
	hk_need_cmd dpkg-buildpackage dpkg-dev
	hk_need_cmd dh debhelper
	hk_need_cmd lintian lintian
	hk_need_cmd unshare util-linux
	hk_need_cmd cc gcc
	[ "$(cat "$PKG/build.rc")" = 0 ] ||
		fail "dpkg-buildpackage -us -uc -b failed (exit $(cat "$PKG/build.rc")): $(tail -40 "$PKG/build.log")"
}

# deb NAME: the .deb of package NAME.
deb() {
	local f=("$PKG/${1}"_*_*.deb)
	[ -f "${f[0]}" ] || fail "no .deb of $1 in $PKG"
	echo "${f[0]}"
}

# contents NAME: the paths (and "-> target" of links) package NAME ships.
contents() {
	dpkg-deb -c "$(deb "$1")" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +\./, ""); print }'
}

@test "dpkg-buildpackage -us -uc -b builds the five packages (every installed file in one, symbols files exact)" {
	for p in "${OURS[@]}"; do deb "$p" > /dev/null; done
	# dh_missing --fail-missing and dpkg-gensymbols -c4 ran, and passed.
	assert grep -q 'dh_missing --fail-missing' "$PKG/build.log"
	assert grep -q 'dh_makeshlibs -- -c4' "$PKG/build.log"
	run contents hugekit
	for t in "${TOOLS[@]}"; do
		assert_line "/usr/bin/$t"
		assert_line --regexp "^/usr/share/man/man[18]/$t\.[18]\.gz"
		[ "$t" = ld.hugetlbfs ] || assert_line "/usr/share/bash-completion/completions/$t"
	done
	assert_line "/lib/systemd/system/hugekit.service"
	assert_line "/usr/share/man/man7/hugeedit.7.gz -> ../man1/hugeedit.1.gz"
	run contents libhugekit-dev
	for f in /usr/include/hugekit/hugekit.h /usr/include/hugekit/version.h /usr/include/hugetlbfs.h \
		/usr/share/man/man3/get_huge_pages.3.gz; do
		assert_line "$f"
	done
	assert_line --regexp '^/usr/lib/[^/]+/libhugetlbfs\.so -> libhugekit-rt\.so$'
	assert_line --regexp '^/usr/lib/[^/]+/libhugekit\.so -> libhugekit\.so\.1$'
	assert_line --regexp '^/usr/lib/[^/]+/pkgconfig/libhugekit\.pc$'
	run contents hugekit-compat
	assert_line --regexp '^/usr/lib/[^/]+/libhugetlbfs\.so\.0 -> libhugekit-rt\.so\.0$'
	# libhugetlbfs(7): a .so stub (its page is in hugekit, another package).
	assert_line "/usr/share/man/man7/libhugetlbfs.7.gz"
	run sh -c "dpkg-deb --fsys-tarfile '$(deb hugekit-compat)' | tar -xOf - ./usr/share/man/man7/libhugetlbfs.7.gz | zcat"
	assert_output ".so man7/libhugekit-rt.7"
	# libhugekit.pc: /usr spelled out, so that pkg-config filters the
	# system's -I and -L (lib/CMakeLists.txt, HK_PC_RELOCATABLE).
	run sh -c "dpkg-deb --fsys-tarfile '$(deb libhugekit-dev)' | tar -xOf - --wildcards '*/libhugekit.pc'"
	assert_line 'prefix=/usr'
	assert_line --regexp '^libdir=\$\{prefix\}/lib/[a-z0-9_]+-linux-gnu[a-z0-9_]*$'
}

@test "each library package holds its SONAME and a real file named after it" {
	local p so d f
	for p in libhugekit1:libhugekit.so.1 libhugekit-rt0:libhugekit-rt.so.0; do
		so=${p#*:}
		p=${p%:*}
		d=$BATS_TEST_TMPDIR/$p
		dpkg-deb -x "$(deb "$p")" "$d"
		f=$(find "$d" -type f -name 'lib*.so*')
		[ "$(wc -l <<<"$f")" = 1 ] || fail "$p: not one library file: $f"
		assert_equal "$(objdump -p "$f" | awk '$1 == "SONAME" { print $2 }')" "$so"
		[[ $(basename "$f") == "$so".* ]] || fail "$p: the real file $(basename "$f") is not named after its SONAME $so"
		assert_equal "$(readlink "$(dirname "$f")/$so")" "$(basename "$f")"
		# The package's name is the SONAME's (Debian policy 8.1).
		assert_equal "$(sed -E 's/\.so\.([0-9]+)$/\1/' <<<"$so")" "$p"
	done
}

@test "lintian: no error and no warning" {
	run lintian --fail-on error,warning --display-level '>=warning' "$PKG"/hugekit_*.changes
	assert_success
	refute_output --regexp '^[EW]: '
}

@test "a file of libhugetlbfs 2.23's packages is only in a package that Conflicts with and Replaces that package" {
	local r p f hit rel
	for r in "${REPLACED[@]}"; do
		dpkg-query -W "$r" > /dev/null 2>&1 || hk_missing "$r is not installed (apt-get install $r)"
	done
	for p in "${OURS[@]}"; do
		contents "$p" | sed 's/ -> .*//' > "$BATS_TEST_TMPDIR/$p.files"
		for r in "${REPLACED[@]}"; do
			hit=$(dpkg-query -L "$r" | while read -r f; do
				[ -d "$f" ] || ! grep -qxF "$f" "$BATS_TEST_TMPDIR/$p.files" || echo "$f"
			done)
			[ -n "$hit" ] || continue
			for rel in Conflicts Replaces; do
				[[ ", $(dpkg-deb -f "$(deb "$p")" "$rel"), " == *", $r"[,\ ]* ]] ||
					fail "$p ships $r's $(head -1 <<<"$hit") but has no $rel: $r"
			done
		done
	done
}

@test "hugekit's tools link libhugekit statically: no libhugekit1, but libhugekit's dlopen()ed libmount1 and libinih1" {
	local dep d=$BATS_TEST_TMPDIR/hugekit
	dep=$(dpkg-deb -f "$(deb hugekit)" Depends)
	[[ ", $dep," != *", libhugekit1"[\ ,]* ]] || fail "hugekit depends on libhugekit1: $dep"
	[[ ", $dep," == *", libmount1"[\ ,]* ]] || fail "hugekit does not depend on libmount1: $dep"
	[[ ", $dep," == *", libinih1"[\ ,]* ]] || fail "hugekit does not depend on libinih1: $dep"
	dpkg-deb -x "$(deb hugekit)" "$d"
	run readelf -d "$d/usr/bin/pagesize" "$d/usr/bin/hugeadm" "$d/usr/bin/hugectl"
	assert_success
	assert_line --partial '[libc.so.6]'
	refute_output --partial libhugekit
	refute_output --partial RUNPATH
}

@test "installed in a throwaway root in place of libhugetlbfs 2.23: the tools and -lhugetlbfs programs run, dpkg -P leaves nothing" {
	local out=$BATS_TEST_TMPDIR/out d=$BATS_TEST_TMPDIR/debs r rc=0 p
	for r in "${REPLACED[@]}"; do
		dpkg-query -W "$r" > /dev/null 2>&1 || hk_missing "$r is not installed (apt-get install $r)"
	done
	mkdir "$out" "$d"
	for p in "${OURS[@]}"; do cp "$(deb "$p")" "$d/"; done
	# A program built for libhugetlbfs 2.23 (it needs libhugetlbfs.so.0), here.
	cc -Wall -Werror "$BATS_TEST_DIRNAME/lhugetlbfs.c" -o "$BATS_TEST_TMPDIR/lh-host" -lhugetlbfs
	run objdump -p "$BATS_TEST_TMPDIR/lh-host"
	assert_line --regexp 'NEEDED +libhugetlbfs\.so\.0'
	run -0 "$BATS_TEST_TMPDIR/lh-host"
	local host_lh=$output
	unshare -m --propagation private bash "$BATS_TEST_DIRNAME/debroot.sh" "$d" "$out" \
		"$BATS_TEST_TMPDIR/lh-host" "$BATS_TEST_DIRNAME" || rc=$?
	[ "$rc" != 77 ] || hk_missing "no overlay of / can be mounted here: $(cat "$out/overlay.err")"
	assert_equal "$rc" 0

	# Installed in their place: dpkg removed libhugetlbfs-bin, libhugetlbfs0, libhugetlbfs-dev.
	run cat "$out/status.txt"
	for p in "${OURS[@]}"; do assert_line "$p ii "; done
	for r in "${REPLACED[@]}"; do assert_line "$r un "; done
	refute grep -q 'exit' "$out/install.log"

	# The packages' tools: pagesize -a prints what 2.23's prints here.
	assert_equal "$(cat "$out/version.txt")" "hugeadm from hugekit $(dpkg-deb -f "$(deb hugekit)" Version)"
	assert_equal "$(cat "$out/pagesize.txt")" "$(/usr/bin/pagesize -a)"
	run cat "$out/pool-list.txt"
	assert_line --index 0 --regexp '^ +Size +Minimum +Current +Maximum +Default$'
	assert_equal "${#lines[@]}" $((1 + $(find /sys/kernel/mm/hugepages -mindepth 1 -maxdepth 1 | wc -l)))

	# 2.23's program runs on the packaged libhugetlbfs.so.0, that is libhugekit-rt,
	# with 2.23's answers; one built there with -lhugetlbfs needs libhugekit-rt.so.0.
	run cat "$out/lh-host.txt"
	assert_output --regexp '^[0-9]+ [0-9]+ /usr/lib/[^/]+/libhugekit-rt\.so\.0\.[0-9]+\.[0-9]+$'
	assert_equal "${output% *}" "${host_lh% *}"
	run cat "$out/lh-pkg.txt"
	assert_output --regexp '^[0-9]+ [0-9]+ /usr/lib/[^/]+/libhugekit-rt\.so\.0\.[0-9]+\.[0-9]+$'
	assert_equal "${output% *}" "${host_lh% *}"
	assert_equal "$(head -1 "$out/lh-pkg.needed")" libhugekit-rt.so.0
	# pkg-config's flags for libhugekit build a program that runs.
	assert_equal "$(cat "$out/hk-pc.txt")" "$(dpkg-deb -f "$(deb libhugekit1)" Version)"

	# dpkg -P: nothing of ours left, libhugetlbfs's files gone with the packages.
	refute grep -q 'exit' "$out/purge.log"
	refute grep -q hugekit "$out/ldcache.txt"
	assert_equal "$(cat "$out/replaced-left.txt")" ""
	for p in "${OURS[@]}"; do contents "$p" | sed 's/ -> .*//; s|/$||'; done > "$BATS_TEST_TMPDIR/ours.files"
	for r in "${REPLACED[@]}"; do dpkg-query -L "$r"; done > "$BATS_TEST_TMPDIR/replaced.files"
	while read -r what p; do
		case $what:$p in
		# dpkg's database and log, and the caches its triggers refresh.
		changed:/var/lib/dpkg/* | changed:/var/log/* | changed:/var/cache/man/* | \
			changed:/var/cache/ldconfig/* | changed:/etc/ld.so.cache) ;;
		gone:/var/lib/dpkg/info/libhugetlbfs*) ;;
		gone:*)
			# libhugetlbfs's, or a file no package owned here that one of ours
			# replaced (dpkg takes it over, and its purge removes it).
			grep -qxF "$p" "$BATS_TEST_TMPDIR/replaced.files" "$BATS_TEST_TMPDIR/ours.files" ||
				fail "the root lost $p, which is neither libhugetlbfs's nor ours"
			;;
		*) fail "dpkg -P left $what $p" ;;
		esac
	done < "$out/upper.txt"
}
