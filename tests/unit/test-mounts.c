// SPDX-License-Identifier: GPL-2.0-or-later
/* hugetlbfs mount discovery (lib/core/mounts.c) from <sysroot>/proc/self/mountinfo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "tree.h"

#define MiB (UINT64_C(1024) * 1024)
#define GiB (MiB * 1024)

struct mount_want {
	const char *target;
	const char *options;
	uint64_t page_size;
};

static void check_mounts(struct hk_ctx *ctx, const struct mount_want *want, size_t n_want)
{
	struct hk_mounts *ms = NULL;

	assert_int_equal(hk_mounts_read(ctx, &ms), 0);
	assert_non_null(ms);
	assert_int_equal(hk_mounts_count(ms), n_want);
	for (size_t i = 0; i < n_want; i++) {
		assert_non_null(hk_mount_target(ms, i));
		assert_string_equal(hk_mount_target(ms, i), want[i].target);
		assert_non_null(hk_mount_options(ms, i));
		assert_string_equal(hk_mount_options(ms, i), want[i].options);
		assert_int_equal(hk_mount_page_size(ms, i), want[i].page_size);
		/* mountinfo's first field: what --unmount-all checks the mount it opens against. */
		assert_true(hk_mount_id(ms, i) > 0);
	}
	/* Out of range. */
	assert_null(hk_mount_target(ms, n_want));
	assert_null(hk_mount_options(ms, n_want));
	assert_int_equal(hk_mount_page_size(ms, n_want), 0);
	assert_int_equal(hk_mount_id(ms, n_want), -1);
	hk_mounts_unref(ms);
}

static void test_x86_1node(void **state)
{
	static const struct mount_want want[] = {
		{"/dev/hugepages", "rw,relatime,pagesize=2M", 2 * MiB},
		{"/var/lib/hugetlbfs/pagesize-1GB", "rw,relatime,pagesize=1024M", GiB},
	};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	check_mounts(t.ctx, want, 2);
	tree_close(&t);
}

static void test_x86_2node(void **state)
{
	static const struct mount_want want[] = {
		{"/dev/hugepages", "rw,relatime,pagesize=2M", 2 * MiB},
	};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	check_mounts(t.ctx, want, 1);
	tree_close(&t);
}

static void test_mounts_long(void **state)
{
	static const struct mount_want want[] = {
		{"/dev/hugepages", "rw,relatime,pagesize=2M", 2 * MiB},
		{"/var/lib/hugetlbfs/pagesize-1GB", "rw,relatime,pagesize=1024M", GiB},
		{"/mnt/huge 2m",
		 "rw,relatime,uid=1000,gid=1000,mode=1770,pagesize=2M,size=67108864", 2 * MiB},
		{"/dev/hugepages1G", "rw,relatime,pagesize=1024M", GiB},
	};
	struct tree t;
	FILE *f;
	char *path;
	size_t longest = 0, cur = 0;
	int c;

	(void)state;
	tree_open(&t, "mounts-long");
	/* The fixture does have a line far longer than any fixed buffer. */
	assert_true(asprintf(&path, "%s/proc/self/mountinfo", t.dir) > 0);
	f = fopen(path, "r");
	free(path);
	assert_non_null(f);
	while ((c = fgetc(f)) != EOF) {
		if (c == '\n') {
			longest = cur > longest ? cur : longest;
			cur = 0;
		} else {
			cur++;
		}
	}
	fclose(f);
	assert_true(longest > 8192);

	check_mounts(t.ctx, want, 4);
	tree_close(&t);
}

static void test_arm64_none(void **state)
{
	struct hk_mounts *ms = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, "arm64");
	assert_int_equal(hk_mounts_read(t.ctx, &ms), 0);
	assert_non_null(ms);
	assert_int_equal(hk_mounts_count(ms), 0);
	assert_null(hk_mount_target(ms, 0));
	hk_mounts_unref(ms);
	tree_close(&t);

	tree_open(&t, "nohugetlb");
	check_mounts(t.ctx, NULL, 0);
	tree_close(&t);
}

static unsigned n_warnings;

static void count_log(void *data, int priority, const char *msg)
{
	(void)data;
	(void)msg;
	if (priority == LOG_WARNING)
		n_warnings++;
}

static void test_garbage_line(void **state)
{
	static const struct mount_want want[] = {
		{"/dev/hugepages", "rw,relatime,pagesize=2M", 2 * MiB},
		{"/mnt/one", "rw,nosuid,pagesize=1G", GiB},
	};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	fixture_write(
		t.dir, "proc/self/mountinfo",
		"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
		"45 24 0:40 / /dev/hugepages rw,relatime shared:21 - hugetlbfs hugetlbfs rw,pagesize=2M\n"
		"this line is garbage\n"
		"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
		"46 27 0:41 / /mnt/one rw,nosuid - hugetlbfs none rw,pagesize=1G\n");
	hk_set_log_fn(t.ctx, count_log, NULL);
	hk_set_log_priority(t.ctx, LOG_DEBUG);
	n_warnings = 0;
	check_mounts(t.ctx, want, 2);
	/* The bad line is reported, not silently dropped. */
	assert_int_equal(n_warnings, 1);
	tree_close(&t);
}

static void test_default_page_size_fallback(void **state)
{
	/* Without pagesize= (or with one that does not parse) a mount uses the default size. */
	static const struct mount_want want[] = {
		{"/mnt/a", "rw,relatime", 2 * MiB},
		{"/mnt/b", "rw,relatime,pagesize=1G", GiB},
		{"/mnt/c", "rw,relatime,pagesize=2.5M", 2 * MiB},
		{"/mnt/d", "rw,relatime,pagesize=1048576k", GiB},
		{"/mnt/tab\tand\\slash", "rw,pagesize=2M", 2 * MiB},
	};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	fixture_write(
		t.dir, "proc/self/mountinfo",
		"50 27 0:50 / /mnt/a rw,relatime - hugetlbfs none rw\n"
		"51 27 0:51 / /mnt/b rw,relatime - hugetlbfs none rw,pagesize=1G\n"
		"52 27 0:52 / /mnt/c rw,relatime - hugetlbfs none rw,pagesize=2.5M\n"
		"53 27 0:53 / /mnt/d rw,relatime - hugetlbfs none rw,pagesize=1048576k\n"
		"54 27 0:54 / /mnt/e rw,relatime - tmpfs tmpfs rw,size=1024k\n"
		"55 27 0:55 / /mnt/tab\\011and\\134slash rw - hugetlbfs none rw,pagesize=2M\n");
	check_mounts(t.ctx, want, 5);
	tree_close(&t);
}

static void test_missing_mountinfo(void **state)
{
	struct hk_mounts *ms = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, NULL);
	assert_int_equal(hk_mounts_read(t.ctx, &ms), -ENOENT);
	assert_null(ms);
	tree_close(&t);
}

static void test_empty_mountinfo(void **state)
{
	struct hk_mounts *ms = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, NULL);
	fixture_write(t.dir, "proc/self/mountinfo", "");
	assert_int_equal(hk_mounts_read(t.ctx, &ms), 0);
	assert_int_equal(hk_mounts_count(ms), 0);
	hk_mounts_unref(ms);
	tree_close(&t);
}

/* Mounting is for the running system only, and only on a directory's descriptor. */
static void keep_log(void *data, int priority, const char *msg)
{
	(void)priority;
	snprintf(data, 256, "%s", msg);
}

static void test_mount_fd_refused(void **state)
{
	static char logged[256];
	struct hk_ctx *live = NULL;
	char path[4096];
	struct tree t;
	int fd;

	(void)state;
	tree_open(&t, "x86-1node");
	fd = open(t.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(hk_mount_hugetlbfs_fd(t.ctx, fd, "pagesize=2M"), -EOPNOTSUPP);
	assert_int_equal(hk_new(NULL, &live), 0);
	assert_int_equal(hk_mount_hugetlbfs_fd(live, -1, "pagesize=2M"), -EINVAL);
	assert_int_equal(hk_mount_hugetlbfs_fd(live, fd, NULL), -EINVAL);
	assert_int_equal(hk_mount_hugetlbfs_fd_id(live, fd, "pagesize=2M", NULL), -EINVAL);
	/*
	 * Every mount is nosuid,nodev: "suid" or "dev" is refused, said, before any
	 * mount is tried (hugetlbfs would refuse them as parameters too, unsaid).
	 */
	hk_set_log_fn(live, keep_log, &logged);
	assert_int_equal(hk_mount_hugetlbfs_fd(live, fd, "pagesize=2M,suid"), -EINVAL);
	assert_non_null(strstr(logged, "hugetlbfs is mounted nosuid,nodev, never suid or dev"));
	logged[0] = '\0';
	assert_int_equal(hk_mount_hugetlbfs_fd(live, fd, "dev,pagesize=2M"), -EINVAL);
	assert_non_null(strstr(logged, "-o dev,pagesize=2M: hugetlbfs is mounted nosuid,nodev"));
	assert_int_equal(hk_mount_hugetlbfs(live, t.dir, "pagesize=2M,suid"), -EINVAL);
	/* Unmounting by descriptor: the running system only, one name, no path. */
	assert_int_equal(hk_umount_fd(t.ctx, fd, NULL, 0), -EOPNOTSUPP);
	assert_int_equal(hk_umount_fd(live, -1, NULL, 0), -EINVAL);
	assert_int_equal(hk_umount_fd(live, fd, "a/b", 0), -EINVAL);
	assert_int_equal(hk_umount_fd(live, fd, "", 0), -EINVAL);
	/* Unmounting one of a table: the running system only, an entry of it. */
	{
		struct hk_mounts *ms = NULL;

		assert_int_equal(hk_mounts_read(t.ctx, &ms), 0);
		assert_int_equal(hk_mount_unmount(t.ctx, ms, 0), -EOPNOTSUPP);
		assert_int_equal(hk_mount_unmount(live, ms, hk_mounts_count(ms)), -EINVAL);
		assert_int_equal(hk_mount_unmount(live, NULL, 0), -EINVAL);
		assert_int_equal(hk_mount_unmount(NULL, ms, 0), -EINVAL);
		hk_mounts_unref(ms);
	}
	close(fd);
	/* A file is not a mount point: refused before any mount is tried. */
	fixture_write(t.dir, "file", "x");
	snprintf(path, sizeof(path), "%s/file", t.dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(hk_mount_hugetlbfs_fd(live, fd, "pagesize=2M"), -ENOTDIR);
	close(fd);
	hk_unref(live);
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_1node),
		cmocka_unit_test(test_x86_2node),
		cmocka_unit_test(test_mounts_long),
		cmocka_unit_test(test_arm64_none),
		cmocka_unit_test(test_garbage_line),
		cmocka_unit_test(test_default_page_size_fallback),
		cmocka_unit_test(test_missing_mountinfo),
		cmocka_unit_test(test_empty_mountinfo),
		cmocka_unit_test(test_mount_fd_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
