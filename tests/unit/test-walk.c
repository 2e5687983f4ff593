// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The symlink-safe walk (lib/common/walk.c, public as hk_walk): names one at
 * a time, no link followed unless asked, as root only root's links, at most
 * 40, and each failure with what the message needs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "fixture.h"
#include "path.h"

/* lib/common/paths.h's HK_PROC_SELF_FD: the tests spell /proc themselves. */
#define HK_TEST_PROC_SELF_FD "proc/self/fd"

struct fx {
	char *dir;
	char path[4096];
};

/* dir/NAME */
static const char *at(struct fx *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	return f->path;
}

static void fx_open(struct fx *f)
{
	f->dir = fixture_empty();
	fixture_write(f->dir, "d/file", "x");
	assert_int_equal(symlink("file", at(f, "d/link")), 0);
	assert_int_equal(symlink("d", at(f, "dlink")), 0);
}

static int walk(const char *name, unsigned flags, struct hk_walk *w)
{
	*w = (struct hk_walk){.size = sizeof(*w)};
	return hk_walk(name, flags, w);
}

static void test_plain(void **state)
{
	struct hk_walk w;
	struct fx f;
	char want[4096];

	(void)state;
	fx_open(&f);
	assert_int_equal(walk(at(&f, "d/file"), 0, &w), 0);
	assert_string_equal(w.base, "file");
	snprintf(want, sizeof(want), "%s/d", f.dir);
	assert_string_equal(w.path, want);
	assert_true(S_ISREG(w.mode));
	assert_true(w.dirfd >= 0 && w.fd >= 0);
	hk_walk_fini(&w);
	assert_true(w.dirfd == -1 && w.fd == -1 && !w.path);
	/* "..", "." and "//" as a name lookup does them. */
	assert_int_equal(walk(at(&f, "d/../d//./file"), 0, &w), 0);
	assert_string_equal(w.path, want);
	hk_walk_fini(&w);
	fixture_remove(f.dir);
}

static void test_links(void **state)
{
	struct hk_walk w;
	struct fx f;
	char want[4096];

	(void)state;
	fx_open(&f);
	/* Not followed unless asked: at the end or on the way. */
	assert_int_equal(walk(at(&f, "d/link"), 0, &w), -ELOOP);
	assert_int_equal(w.problem, HK_WALK_FAILED);
	hk_walk_fini(&w);
	assert_int_equal(walk(at(&f, "dlink/file"), 0, &w), -ELOOP);
	hk_walk_fini(&w);
	/* Followed: by content, the path as walked. */
	assert_int_equal(walk(at(&f, "dlink/link"), HK_WALK_LINKS, &w), 0);
	snprintf(want, sizeof(want), "%s/d", f.dir);
	assert_string_equal(w.path, want);
	assert_string_equal(w.base, "file");
	hk_walk_fini(&w);
	/* An absolute link starts again from "/". */
	snprintf(want, sizeof(want), "%s/d", f.dir);
	assert_int_equal(symlink(want, at(&f, "abs")), 0);
	assert_int_equal(walk(at(&f, "abs/file"), HK_WALK_LINKS, &w), 0);
	assert_string_equal(w.path, want);
	hk_walk_fini(&w);
	/* A loop: 40 links at most. */
	assert_int_equal(symlink("loop", at(&f, "loop")), 0);
	assert_int_equal(walk(at(&f, "loop"), HK_WALK_LINKS, &w), -ELOOP);
	hk_walk_fini(&w);
	fixture_remove(f.dir);
}

/* As root, a link of another user is not followed with HK_WALK_ROOT_LINKS, and says whose it is. */
static void test_root_links(void **state)
{
	struct hk_walk w;
	struct fx f;
	char want[4096];

	(void)state;
	if (geteuid() != 0) {
		printf("SKIP: test_root_links needs root (lchown)\n");
		skip();
	}
	fx_open(&f);
	assert_int_equal(lchown(at(&f, "dlink"), 65534, 65534), 0);
	assert_int_equal(walk(at(&f, "dlink/file"), HK_WALK_LINKS | HK_WALK_ROOT_LINKS, &w),
			 -EPERM);
	assert_int_equal(w.problem, HK_WALK_LINK_NOT_ROOTS);
	assert_int_equal(w.link_uid, 65534);
	snprintf(want, sizeof(want), "%s/dlink", f.dir);
	assert_string_equal(w.where, want);
	hk_walk_fini(&w);
	/* Without the rule it is followed; root's own link is followed with it. */
	assert_int_equal(walk(at(&f, "dlink/file"), HK_WALK_LINKS, &w), 0);
	hk_walk_fini(&w);
	assert_int_equal(walk(at(&f, "d/link"), HK_WALK_LINKS | HK_WALK_ROOT_LINKS, &w), 0);
	hk_walk_fini(&w);
	fixture_remove(f.dir);
}

static void test_errors(void **state)
{
	struct hk_walk w;
	struct fx f;

	(void)state;
	fx_open(&f);
	assert_int_equal(walk("", 0, &w), -ENOENT);
	hk_walk_fini(&w);
	/* A trailing "/" ends the name at the directory (the last name, not followed). */
	assert_int_equal(walk(at(&f, "d/"), 0, &w), 0);
	assert_string_equal(w.base, "d");
	assert_true(S_ISDIR(w.mode));
	hk_walk_fini(&w);
	assert_int_equal(walk("/", 0, &w), -EISDIR);
	hk_walk_fini(&w);
	assert_int_equal(walk(at(&f, "d/file/x"), 0, &w), -ENOTDIR);
	hk_walk_fini(&w);
	assert_int_equal(walk(at(&f, "d/none"), 0, &w), -ENOENT);
	assert_int_equal(w.problem, HK_WALK_FAILED);
	assert_int_equal(w.error, ENOENT);
	hk_walk_fini(&w);
	w.size = 0;
	assert_int_equal(hk_walk("/", 0, &w), -EINVAL);
	/* Relative: from the working directory. */
	assert_int_equal(chdir(f.dir), 0);
	assert_int_equal(walk("d/file", 0, &w), 0);
	assert_string_equal(w.base, "file");
	hk_walk_fini(&w);
	assert_int_equal(chdir("/"), 0);
	fixture_remove(f.dir);
}

/*
 * hk_walk_open: no link followed anywhere, by openat2(2) (walked false) or,
 * as where openat2 answers ENOSYS, by the walk (walked true): the same rules.
 */
static void walk_open_cases(bool walked)
{
	struct stat a, b;
	struct fx f;
	int fd;

	hkc_path_no_openat2 = walked;
	fx_open(&f);
	fd = hk_walk_open(at(&f, "d"), O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(at(&f, "d"), &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	assert_int_not_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	/* A link at the end or on the way: not followed. */
	assert_int_equal(hk_walk_open(at(&f, "dlink"), O_RDONLY | O_DIRECTORY), -ELOOP);
	assert_int_equal(hk_walk_open(at(&f, "dlink/"), O_RDONLY | O_DIRECTORY), -ELOOP);
	assert_int_equal(hk_walk_open(at(&f, "dlink/file"), O_RDONLY), -ELOOP);
	assert_int_equal(hk_walk_open(at(&f, "d/link"), O_RDONLY), -ELOOP);
	/* The file itself, by its own path; a file is not a directory. */
	fd = hk_walk_open(at(&f, "d/../d//file"), O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(hk_walk_open(at(&f, "d/file"), O_RDONLY | O_DIRECTORY), -ENOTDIR);
	assert_int_equal(hk_walk_open(at(&f, "d/file/"), O_RDONLY), -ENOTDIR);
	/* Nothing is made: the name must be there. */
	assert_int_equal(hk_walk_open(at(&f, "d/new"), O_WRONLY | O_CREAT), -EINVAL);
	assert_int_equal(hk_walk_open(at(&f, "d"), O_WRONLY | O_TMPFILE), -EINVAL);
	assert_int_equal(access(at(&f, "d/new"), F_OK), -1);
	/* The file walked, written through the descriptor. */
	fd = hk_walk_open(at(&f, "d/file"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "y", 1), 1);
	close(fd);
	assert_int_equal(stat(at(&f, "d/file"), &a), 0);
	assert_int_equal(a.st_size, 2);
	assert_int_equal(hk_walk_open(at(&f, "d/none"), O_RDONLY), -ENOENT);
	assert_int_equal(hk_walk_open("", O_RDONLY), -ENOENT);
	assert_int_equal(hk_walk_open(NULL, O_RDONLY), -EINVAL);
	/* The root, however spelled, has no link to follow. */
	fd = hk_walk_open("//", O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat("/", &b), 0);
	assert_true(a.st_ino == b.st_ino);
	close(fd);
	/* Relative: from the working directory. */
	assert_int_equal(chdir(f.dir), 0);
	fd = hk_walk_open("d", O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(hk_walk_open("dlink", O_RDONLY | O_DIRECTORY), -ELOOP);
	assert_int_equal(chdir("/"), 0);
	fixture_remove(f.dir);
	hkc_path_no_openat2 = false;
}

static void test_walk_open(void **state)
{
	(void)state;
	walk_open_cases(false);
}

static void test_walk_open_walked(void **state)
{
	(void)state;
	walk_open_cases(true);
}

/*
 * Without /proc (a mount namespace of a child where it is unmounted): the
 * last name opened by its name, held to be the file walked. Root only (else
 * a printed skip).
 */
static void test_walk_open_no_proc(void **state)
{
	struct fx f;
	pid_t pid;
	int st = 0;

	(void)state;
	if (geteuid() != 0) {
		print_message("skip: not root: cannot unmount /proc in a mount namespace\n");
		skip();
	}
	fx_open(&f);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct stat a, b;
		int fd;

		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    umount2("/proc", MNT_DETACH) < 0)
			_exit(77);
		if (access("/" HK_TEST_PROC_SELF_FD, F_OK) == 0)
			_exit(78);
		hkc_path_no_openat2 = true;
		fd = hk_walk_open(at(&f, "d"), O_RDONLY | O_DIRECTORY);
		if (fd < 0 || fstat(fd, &a) < 0 || stat(at(&f, "d"), &b) < 0 ||
		    a.st_ino != b.st_ino)
			_exit(1);
		close(fd);
		if (hk_walk_open(at(&f, "dlink"), O_RDONLY | O_DIRECTORY) != -ELOOP ||
		    hk_walk_open(at(&f, "d/file"), O_RDONLY | O_DIRECTORY) != -ENOTDIR)
			_exit(2);
		fd = hk_walk_open(at(&f, "d/file"), O_RDONLY);
		_exit(fd >= 0 ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		print_message("skip: no mount namespace with /proc unmounted here\n");
		fixture_remove(f.dir);
		skip();
	}
	assert_int_equal(WEXITSTATUS(st), 0);
	fixture_remove(f.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_root_links),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_walk_open),
		cmocka_unit_test(test_walk_open_walked),
		cmocka_unit_test(test_walk_open_no_proc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
