// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libhugekit's walk of a mount path (hk_mount_dir_open) on a scratch
 * directory: levels made with their owner and mode, and refused where a
 * user could have put something: a symbolic link, a file, a stranger's
 * directory, a root directory others or its group may write. Mounting
 * itself (hk_mount_make) is live/mounts' and live/config's; here only what
 * it refuses before mounting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "tree.h"

static char logged[1024];

static void keep_log(void *data, int priority, const char *msg)
{
	(void)data;
	(void)priority;
	snprintf(logged, sizeof(logged), "%s", msg);
}

struct scratch {
	struct tree t; /* an empty tree, for a context that is not the running system's */
	struct hk_ctx *live;
	char *base;
};

/*
 * The scratch directory: under a root directory no one else may write (the
 * walk refuses /tmp, 1777, above a base, as hugeadm would): /run, /var/lib
 * or /root, the first that is. NULL when none is.
 */
static char *root_only_dir(void)
{
	static const char *const parents[] = {"/run", "/var/lib", "/root"};
	struct stat st;
	char *dir;

	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
		if (stat(parents[i], &st) < 0 || st.st_uid != 0 || (st.st_mode & 022) ||
		    asprintf(&dir, "%s/hk-unit-mount-XXXXXX", parents[i]) < 0)
			continue;
		if (mkdtemp(dir))
			return dir;
		free(dir);
	}
	return NULL;
}

static void scratch_open(struct scratch *s)
{
	tree_open(&s->t, NULL);
	assert_int_equal(hk_new(NULL, &s->live), 0);
	hk_set_log_fn(s->live, keep_log, NULL);
	hk_set_log_priority(s->live, LOG_ERR);
	s->base = root_only_dir();
	logged[0] = '\0';
}

static void scratch_close(struct scratch *s)
{
	if (s->base)
		fixture_remove(s->base);
	hk_unref(s->live);
	tree_close(&s->t);
}

/* Running as root, with a root-only scratch directory: else a printed skip. */
static bool can_walk(struct scratch *s)
{
	if (geteuid() != 0) {
		print_message("skip: not root: cannot make directories for other users\n");
		return false;
	}
	scratch_open(s);
	if (s->base)
		return true;
	print_message("skip: no root-only directory (/run, /var/lib, /root) to work in\n");
	scratch_close(s);
	return false;
}

static struct hk_mount_request request(const char *path, const char *base)
{
	return (struct hk_mount_request){.size = sizeof(struct hk_mount_request),
					 .path = path,
					 .base = base,
					 .uid = 65534,
					 .gid = 65534,
					 .mode = 0750,
					 .options = "pagesize=2M"};
}

static void check_owned(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_gid, gid);
	assert_int_equal(st.st_mode & 07777, mode);
}

/* Levels below the base are made with the request's owner and mode; a second walk finds them. */
static void test_made(void **state)
{
	struct scratch s;
	struct hk_mount_request rq;
	char path[4200], level[4200];
	int fd;

	(void)state;
	if (!can_walk(&s))
		skip();
	snprintf(path, sizeof(path), "%s/user/nobody/pagesize-2MB", s.base);
	rq = request(path, s.base);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -ENOENT);
	assert_string_equal(logged, ""); /* missing without create: not an error */
	fd = hk_mount_dir_open(s.live, &rq, true);
	assert_true(fd >= 0);
	close(fd);
	snprintf(level, sizeof(level), "%s/user", s.base);
	check_owned(level, 65534, 65534, 0750);
	check_owned(path, 65534, 65534, 0750);
	/* A base spelled with doubled slashes ends at the same level: user2 is nobody's. */
	snprintf(level, sizeof(level), "/%s", s.base);
	snprintf(path, sizeof(path), "/%s/user2/pagesize-2MB", s.base);
	rq = request(path, level);
	fd = hk_mount_dir_open(s.live, &rq, true);
	assert_true(fd >= 0);
	close(fd);
	snprintf(level, sizeof(level), "%s/user2", s.base);
	check_owned(level, 65534, 65534, 0750);
	snprintf(path, sizeof(path), "%s/user/nobody/pagesize-2MB", s.base);
	/* Doubled slashes are one: the same levels, found. */
	snprintf(level, sizeof(level), "%s//user//nobody/pagesize-2MB", s.base);
	rq = request(level, s.base);
	fd = hk_mount_dir_open(s.live, &rq, false);
	assert_true(fd >= 0);
	close(fd);
	rq = request(path, s.base);
	fd = hk_mount_dir_open(s.live, &rq, false);
	assert_true(fd >= 0);
	/* A directory, not a mount's root. */
	assert_true(hk_mount_root_id(fd) == 0);
	close(fd);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(hk_mount_root_id(fd) != 0);
	close(fd);
	/* Without a base the levels above the mount point are root's: user is not. */
	rq = request(path, NULL);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EPERM);
	assert_non_null(strstr(logged, "/user is owned by nobody (uid 65534), expected root"));
	scratch_close(&s);
}

/* What a user could have put on the way is refused, said with its path, nothing made after it. */
static void test_refused(void **state)
{
	struct scratch s;
	struct hk_mount_request rq;
	char path[4200], p2[4200];

	(void)state;
	if (!can_walk(&s))
		skip();
	/* A symbolic link to a directory the user wants root to mount on. */
	snprintf(p2, sizeof(p2), "%s/victim", s.base);
	assert_int_equal(mkdir(p2, 0755), 0);
	snprintf(p2, sizeof(p2), "%s/link", s.base);
	assert_int_equal(symlink("victim", p2), 0);
	snprintf(path, sizeof(path), "%s/link/mnt", s.base);
	rq = request(path, s.base);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, true), -ELOOP);
	assert_non_null(strstr(logged, "/link is a symbolic link: not following it"));
	snprintf(p2, sizeof(p2), "%s/victim/mnt", s.base);
	assert_int_equal(access(p2, F_OK), -1);
	/* A file where a directory goes. */
	fixture_write(s.base, "file", "x");
	snprintf(path, sizeof(path), "%s/file/mnt", s.base);
	rq = request(path, s.base);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, true), -ENOTDIR);
	assert_non_null(strstr(logged, "/file is not a directory: not mounting there"));
	/* A stranger's directory among the request's levels. */
	snprintf(p2, sizeof(p2), "%s/other", s.base);
	assert_int_equal(mkdir(p2, 0755), 0);
	assert_int_equal(chown(p2, 1234, 1234), 0);
	snprintf(path, sizeof(path), "%s/other/mnt", s.base);
	rq = request(path, s.base);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, true), -EPERM);
	assert_non_null(strstr(logged, "/other is owned by"));
	assert_non_null(strstr(logged, "(uid 1234), expected root or nobody: not using it"));
	/* A root directory above the base that others or its group may write. */
	snprintf(p2, sizeof(p2), "%s/open", s.base);
	assert_int_equal(mkdir(p2, 0755), 0);
	assert_int_equal(chmod(p2, 01777), 0);
	snprintf(path, sizeof(path), "%s/open/sub/mnt", s.base);
	rq = request(path, p2);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, true), -EPERM);
	assert_non_null(strstr(logged, "/open is writable by others (mode 1777): not using it"));
	assert_int_equal(chmod(p2, 0775), 0);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, true), -EPERM);
	assert_non_null(strstr(logged, "/open is writable by its group (mode 0775): not using it"));
	snprintf(p2, sizeof(p2), "%s/open/sub", s.base);
	assert_int_equal(access(p2, F_OK), -1);
	scratch_close(&s);
}

/* Requests the walk cannot read, and mounting in a tree. */
static void test_invalid(void **state)
{
	struct scratch s;
	struct hk_mount_request rq;
	char path[4200];
	int fd = 7;

	(void)state;
	scratch_open(&s);
	snprintf(path, sizeof(path), "%s/mnt", s.t.dir);
	rq = request("relative/mnt", NULL);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	rq = request(path, "/elsewhere");
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	/* A base is a whole directory of the path, not the start of a name. */
	rq = request("/var/lib/hugetlbfs2/mnt", "/var/lib/hugetlbfs");
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	rq = request(path, path);
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	/* Levels are counted by name: no "." or ".." in the path or the base. */
	rq = request("/var/lib/hugetlbfs/../mnt", "/var/lib/hugetlbfs");
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	rq = request("/var/./lib/hugetlbfs/mnt", "/var/./lib");
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	rq = request("/var/lib/hugetlbfs/mnt/.", "/var/lib/hugetlbfs");
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	rq = request(path, NULL);
	rq.size = sizeof(rq) - 1;
	assert_int_equal(hk_mount_dir_open(s.live, &rq, false), -EINVAL);
	assert_int_equal(hk_mount_make(s.live, &rq, &fd), -EINVAL);
	assert_int_equal(fd, 7);
	rq = request(path, NULL);
	rq.flags = 0x80;
	assert_int_equal(hk_mount_make(s.live, &rq, &fd), -EINVAL);
	rq.flags = HK_MOUNT_EMPTY;
	assert_int_equal(hk_mount_make(s.t.ctx, &rq, &fd), -EOPNOTSUPP);
	assert_int_equal(fd, -1);
	assert_int_equal(hk_mount_dir_open(NULL, &rq, false), -EINVAL);
	scratch_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
