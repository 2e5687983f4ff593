#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
#
# contrib/rpm/hugekit.spec: `rpmbuild -bb` (Debian's rpm, --nodeps) builds the
# five packages of the Debian split from a tarball of this tree; every file the
# install makes is in exactly one package (rpmbuild fails on an unpackaged
# one); each library package provides its SONAME and the compat package
# libhugetlbfs.so.0; installed with `rpm --root` into a throwaway root, the
# tools run and programs linked with -lhugetlbfs (ours and 2.23's) run on the packaged
# runtime; `rpm -e` leaves nothing but rpm's database behind.

load helpers

# The build is made once, by the first test; the others read it.
RPMS="$BATS_FILE_TMPDIR/top/RPMS"
ROOT="$BATS_FILE_TMPDIR/root"
LIBDIR=usr/lib64

# project_version: the VERSION of project() in CMakeLists.txt.
project_version() {
	sed -n 's/^project(hugekit VERSION \([0-9.]*\) .*/\1/p' "$HK_SOURCE_DIR/CMakeLists.txt"
}

# tarball DIR VERSION: hugekit-VERSION.tar.gz of the tree as it is now (the
# files git tracks or would track, committed or not) in DIR.
tarball() {
	local list="$BATS_FILE_TMPDIR/files"

	if git -C "$HK_SOURCE_DIR" rev-parse --git-dir > /dev/null 2>&1; then
		git -C "$HK_SOURCE_DIR" ls-files --cached --others --exclude-standard |
			while IFS= read -r f; do [ ! -e "$HK_SOURCE_DIR/$f" ] || printf '%s\n' "$f"; done > "$list"
	else
		(cd "$HK_SOURCE_DIR" && find . -path ./build -prune -o ! -type d -print) > "$list"
	fi
	tar -C "$HK_SOURCE_DIR" -czf "$1/hugekit-$2.tar.gz" --transform "s,^\(\./\)\?,hugekit-$2/," -T "$list"
}

# pkg NAME: the path of package NAME's .rpm.
pkg() {
	local f

	for f in "$RPMS"/*/"$1-$(project_version)"-*.rpm; do
		[ -e "$f" ] && echo "$f" && return
	done
	fail "no package $1 in $RPMS"
}

need_build() {
	hk_need_cmd rpmbuild rpm
	[ -e "$BATS_FILE_TMPDIR/built" ] || fail "the package build (the first test) failed"
}

@test "rpmbuild -bb builds the five packages of the Debian split" {
	hk_need_cmd rpmbuild rpm
	local top="$BATS_FILE_TMPDIR/top" v

	v=$(project_version)
	mkdir -p "$top/SOURCES"
	tarball "$top/SOURCES" "$v"
	run rpmbuild -bb --nodeps --define "_topdir $top" --define "_smp_mflags -j$(nproc)" \
		"$HK_SOURCE_DIR/contrib/rpm/hugekit.spec"
	[ "$status" -eq 0 ] || echo "$output" | tail -40
	assert_success
	for p in hugekit hugekit-libs hugekit-rt hugekit-devel hugekit-compat; do
		pkg "$p" > /dev/null
	done
	run find "$RPMS" -name '*.rpm'
	assert_equal "$(echo "$output" | wc -l)" 5
	touch "$BATS_FILE_TMPDIR/built"
}

@test "the spec's Version is the project's" {
	run sed -n 's/^Version: *//p' "$HK_SOURCE_DIR/contrib/rpm/hugekit.spec"
	assert_output "$(project_version)"
}

# files NAME: the files (not directories) package NAME holds, one per line.
files() {
	rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$(pkg "$1")" | sed -n 's/^[^d][^ ]* //p'
}

@test "each package holds its part of the split" {
	need_build
	run files hugekit
	assert_line /usr/bin/hugeadm
	assert_line /usr/bin/pagesize
	assert_line /usr/bin/ld.hugetlbfs
	assert_line --regexp '^/usr/share/man/man8/hugeadm\.8(\.gz)?$'
	assert_line /usr/share/bash-completion/completions/hugeadm
	assert_line /usr/share/zsh/site-functions/_hugeadm
	assert_line /usr/share/fish/vendor_completions.d/hugeadm.fish
	assert_line --regexp '^/usr/share/man/man7/libhugekit-rt\.7(\.gz)?$'
	assert_line --regexp '^/usr/lib/systemd/system/hugekit.service$'
	refute_line --partial "/$LIBDIR/"
	refute_line --partial /usr/include/

	run files hugekit-libs
	assert_output --regexp "^/$LIBDIR/libhugekit\\.so\\.1
/$LIBDIR/libhugekit\\.so\\.1\\.[0-9.]+\$"

	run files hugekit-rt
	assert_line "/$LIBDIR/libhugekit-rt.so.0"
	assert_line --regexp "^/$LIBDIR/libhugekit-rt\\.so\\.0\\.[0-9.]+\$"
	refute_line --partial libhugetlbfs

	run files hugekit-devel
	assert_line /usr/include/hugekit/hugekit.h
	assert_line /usr/include/hugetlbfs.h
	assert_line "/$LIBDIR/libhugekit.so"
	assert_line "/$LIBDIR/libhugetlbfs.so"
	assert_line "/$LIBDIR/pkgconfig/libhugekit.pc"
	assert_line --regexp '^/usr/share/man/man3/get_huge_pages\.3(\.gz)?$'

	run files hugekit-compat
	assert_output "/$LIBDIR/libhugetlbfs.so.0"
}

@test "the libraries provide their SONAMEs; the tools require the runtime, and libmount and inih, not hugekit-libs" {
	need_build
	run rpm -qp --provides "$(pkg hugekit-libs)"
	assert_line 'libhugekit.so.1()(64bit)'
	run rpm -qp --provides "$(pkg hugekit-rt)"
	assert_line 'libhugekit-rt.so.0()(64bit)'
	run rpm -qp --provides "$(pkg hugekit-compat)"
	assert_line 'libhugetlbfs.so.0()(64bit)'
	run rpm -qp --obsoletes "$(pkg hugekit-compat)"
	assert_line 'libhugetlbfs < 2.25'
	run rpm -qp --obsoletes "$(pkg hugekit)"
	assert_line 'libhugetlbfs-utils < 2.25'
	# The tools link libhugekit statically; libhugekit dlopen()s libmount and inih.
	run rpm -qp --requires "$(pkg hugekit)"
	refute_line 'libhugekit.so.1()(64bit)'
	refute_line --regexp '^hugekit-libs'
	assert_line --regexp '^hugekit-rt\(x86-64\) = '
	assert_line 'libmount(x86-64)'
	assert_line 'inih(x86-64)'
}

@test "installed into a throwaway root: the tools run, -lhugetlbfs links and runs; rpm -e leaves nothing" {
	need_build
	local prog="$BATS_TEST_TMPDIR/uses-hugetlbfs"

	mkdir -p "$ROOT"
	run rpm --root "$ROOT" --dbpath /var/lib/rpm --initdb
	assert_success
	run rpm --root "$ROOT" --dbpath /var/lib/rpm --nodeps --noscripts -i "$RPMS"/*/*.rpm
	assert_success

	# The tools link libhugekit statically: no RUNPATH, and no libhugekit.so
	# loaded, even with the root's libdir on the loader's path.
	run readelf -d "$ROOT/usr/bin/hugeadm"
	refute_output --partial RUNPATH
	refute_output --partial libhugekit
	run --separate-stderr env LD_LIBRARY_PATH="$ROOT/$LIBDIR" LD_DEBUG=libs "$ROOT/usr/bin/pagesize" -a
	assert_success
	assert_line 2097152
	[[ $stderr == *"calling init: "*"/libc.so.6"* ]] || fail "the loader's account names no libc: $stderr"
	[[ $stderr != *libhugekit.so* ]] || fail "pagesize loads libhugekit.so: $stderr"
	run env LD_LIBRARY_PATH="$ROOT/$LIBDIR" "$ROOT/usr/bin/hugeadm" --sysroot "$HK_FIXTURES/x86-1node" --pool-list
	assert_success
	assert_line --partial 2097152
	# A program built against hugekit-devel (its libhugekit.pc) runs on hugekit-libs.
	printf '%s\n' '#include <stdio.h>' '#include <hugekit/hugekit.h>' \
		'int main(void) { printf("%s\n", hk_get_library_version()); return 0; }' > "$prog-hk.c"
	# shellcheck disable=SC2046 # pkg-config's words
	run gcc -o "$prog-hk" "$prog-hk.c" $(PKG_CONFIG_SYSROOT_DIR="$ROOT" PKG_CONFIG_PATH="$ROOT/$LIBDIR/pkgconfig" pkg-config --cflags --libs libhugekit) \
		-Wl,-rpath,"$ROOT/$LIBDIR"
	assert_success
	run --separate-stderr env -u LD_LIBRARY_PATH LD_DEBUG=libs "$prog-hk"
	assert_success
	assert_output "$(rpm -qp --qf '%{VERSION}' "$(pkg hugekit-libs)")"
	[[ $stderr == *"calling init: $ROOT/$LIBDIR/libhugekit.so.1"* ]] || fail "not the root's libhugekit: $stderr"

	# -lhugetlbfs with the packaged header and libhugetlbfs.so links the
	# runtime by its own SONAME; a program built against libhugetlbfs 2.23
	# (Debian's libhugetlbfs-dev) needs libhugetlbfs.so.0, which the compat
	# package's link gives it. Both run on the packaged runtime.
	printf '%s\n' '#include <stdio.h>' '#include <hugetlbfs.h>' \
		'int main(void) { printf("%ld\n", gethugepagesize()); return 0; }' > "$prog.c"
	run gcc -o "$prog" "$prog.c" -I"$ROOT/usr/include" -L"$ROOT/$LIBDIR" -lhugetlbfs \
		-Wl,-rpath,"$ROOT/$LIBDIR"
	assert_success
	run readelf -d "$prog"
	assert_line --partial '[libhugekit-rt.so.0]'
	run --separate-stderr env -u LD_LIBRARY_PATH LD_DEBUG=libs "$prog"
	assert_success
	assert_output "$(awk '/^Hugepagesize:/ { print $2 * 1024 }' /proc/meminfo)"
	[[ $stderr == *"calling init: $ROOT/$LIBDIR/libhugekit-rt.so.0"* ]] || fail "not the packaged runtime: $stderr"

	[ -e /usr/lib/x86_64-linux-gnu/libhugetlbfs.so ] ||
		hk_missing "no libhugetlbfs 2.23 to link against (apt-get install libhugetlbfs-dev)"
	run gcc -o "$prog-223" "$prog.c" -L/usr/lib/x86_64-linux-gnu -lhugetlbfs -Wl,-rpath,"$ROOT/$LIBDIR"
	assert_success
	run readelf -d "$prog-223"
	assert_line --partial '[libhugetlbfs.so.0]'
	run --separate-stderr env -u LD_LIBRARY_PATH LD_DEBUG=libs "$prog-223"
	assert_success
	assert_output "$(awk '/^Hugepagesize:/ { print $2 * 1024 }' /proc/meminfo)"
	[[ $stderr == *"calling init: $ROOT/$LIBDIR/libhugetlbfs.so.0"* ]] || fail "not the packaged name: $stderr"

	run rpm --root "$ROOT" --dbpath /var/lib/rpm --nodeps --noscripts -e hugekit hugekit-libs hugekit-rt hugekit-devel hugekit-compat
	assert_success
	run rpm --root "$ROOT" --dbpath /var/lib/rpm -qa
	assert_output ''
	# Nothing but rpm's own database (and empty directories no package owns).
	run find "$ROOT" -mindepth 1 ! -type d ! -path "$ROOT/var/lib/rpm/*"
	assert_output ''
}
