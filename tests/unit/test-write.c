// SPDX-License-Identifier: GPL-2.0-or-later
/* libhugekit's writers on copied fixture trees: pools, nodes, sysctls, THP, dry run, lock. */
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
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "tree.h"

#define MiB (UINT64_C(1024) * 1024)
#define GiB (MiB * 1024)

/* The whole content of a file of the tree. */
static char *slurp(const struct tree *t, const char *rel)
{
	char path[4096], *buf = calloc(1, 4096);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 4095, f) < 4095);
	fclose(f);
	return buf;
}

static void assert_file(const struct tree *t, const char *rel, const char *want)
{
	char *got = slurp(t, rel);

	assert_string_equal(got, want);
	free(got);
}

static void test_pool_set_nr_default_size_goes_through_proc(void **state)
{
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_pool_set_nr(t.ctx, 2 * MiB, HK_NODE_ALL, 512, 0), 0);
	/* Exactly what `echo 512 > file` would leave, without the newline. */
	assert_file(&t, "proc/sys/vm/nr_hugepages", "512");
	assert_file(&t, "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "10\n");
	assert_int_equal(hk_pool_set_overcommit(t.ctx, 2 * MiB, 7), 0);
	assert_file(&t, "proc/sys/vm/nr_overcommit_hugepages", "7");
	assert_int_equal(hk_pool_set_nr(t.ctx, 2 * MiB, HK_NODE_ALL, 3, HK_POOL_SET_MEMPOLICY), 0);
	assert_file(&t, "proc/sys/vm/nr_hugepages_mempolicy", "3");
	tree_close(&t);
}

static void test_pool_set_nr_other_sizes_and_nodes_go_through_sys(void **state)
{
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_pool_set_nr(t.ctx, GiB, HK_NODE_ALL, 4, 0), 0);
	assert_file(&t, "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "4");
	assert_int_equal(hk_pool_set_nr(t.ctx, GiB, HK_NODE_ALL, 1, HK_POOL_SET_MEMPOLICY), 0);
	assert_file(&t, "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages_mempolicy", "1");
	assert_int_equal(hk_pool_set_nr(t.ctx, 2 * MiB, 1, 768, 0), 0);
	assert_file(&t, "sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages",
		    "768");
	assert_file(&t, "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
		    "16\n");
	tree_close(&t);
}

static void test_pool_set_rejects_what_does_not_exist(void **state)
{
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_pool_set_nr(t.ctx, 4 * MiB, HK_NODE_ALL, 1, 0), -ENOENT);
	assert_int_equal(hk_pool_set_nr(t.ctx, 2 * MiB, 7, 1, 0), -ENOENT);
	assert_int_equal(hk_pool_set_nr(t.ctx, 2 * MiB, -5, 1, 0), -EINVAL);
	/* Nodes have no mempolicy file, and no overcommit. */
	assert_int_equal(hk_pool_set_nr(t.ctx, 2 * MiB, 0, 1, HK_POOL_SET_MEMPOLICY), -EINVAL);
	assert_int_equal(hk_pool_set_nr(t.ctx, 1000, HK_NODE_ALL, 1, 0), -EINVAL);
	tree_close(&t);
}

static void test_pool_file(void **state)
{
	struct tree t;
	char *p = NULL;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_pool_file(t.ctx, 2 * MiB, HK_NODE_ALL, HK_POOL_NR, 0, &p), 0);
	assert_string_equal(p, "/proc/sys/vm/nr_hugepages");
	free(p);
	assert_int_equal(hk_pool_file(t.ctx, GiB, HK_NODE_ALL, HK_POOL_OVERCOMMIT, 0, &p), 0);
	assert_string_equal(p,
			    "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_overcommit_hugepages");
	free(p);
	assert_int_equal(hk_pool_file(t.ctx, 2 * MiB, 1, HK_POOL_NR, 0, &p), 0);
	assert_string_equal(
		p, "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages");
	free(p);
	assert_int_equal(hk_pool_file(t.ctx, 2 * MiB, 1, HK_POOL_OVERCOMMIT, 0, &p), -EINVAL);
	assert_int_equal(hk_pool_file(t.ctx, 2 * MiB, HK_NODE_ALL, HK_POOL_FREE, 0, &p), -EINVAL);
	tree_close(&t);
}

struct dry_log {
	char lines[8][160];
	int n;
};

static void dry(void *data, const char *path, const char *value)
{
	struct dry_log *log = data;

	assert_true(log->n < 8);
	snprintf(log->lines[log->n++], sizeof(log->lines[0]), "%s=%s", path, value);
}

static void test_dry_run_writes_nothing(void **state)
{
	struct dry_log log = {.n = 0};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_false(hk_is_dry_run(t.ctx));
	hk_set_dry_run(t.ctx, dry, &log);
	assert_true(hk_is_dry_run(t.ctx));
	assert_int_equal(hk_pool_set_nr(t.ctx, 2 * MiB, HK_NODE_ALL, 512, 0), 0);
	assert_int_equal(hk_sysctl_write(t.ctx, HK_SYSCTL_MIN_FREE_KBYTES, 112640), 0);
	assert_int_equal(hk_thp_write(t.ctx, "enabled", "always"), 0);
	/* A file that is missing is an error in a dry run too. */
	assert_int_equal(hk_sysctl_write(t.ctx, HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE, 1), -ENOENT);
	assert_int_equal(log.n, 3);
	assert_string_equal(log.lines[0], "/proc/sys/vm/nr_hugepages=512");
	assert_string_equal(log.lines[1], "/proc/sys/vm/min_free_kbytes=112640");
	assert_string_equal(log.lines[2], "/sys/kernel/mm/transparent_hugepage/enabled=always");
	assert_file(&t, "proc/sys/vm/nr_hugepages", "10\n");
	assert_file(&t, "proc/sys/vm/min_free_kbytes", "67584\n");
	assert_file(&t, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	hk_set_dry_run(t.ctx, NULL, NULL);
	assert_int_equal(hk_thp_write(t.ctx, "enabled", "never"), 0);
	assert_file(&t, "sys/kernel/mm/transparent_hugepage/enabled", "never");
	tree_close(&t);
}

static void test_sysctl_thp_and_compact_writes(void **state)
{
	char *v = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_sysctl_write(t.ctx, HK_SYSCTL_SHMMAX, 41943040), 0);
	assert_file(&t, "proc/sys/kernel/shmmax", "41943040");
	assert_int_equal(hk_thp_write(t.ctx, "khugepaged/pages_to_scan", "512"), 0);
	assert_file(&t, "sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan", "512");
	assert_int_equal(hk_thp_write(t.ctx, "../hugepages/x", "1"), -EINVAL);
	assert_int_equal(hk_thp_write(t.ctx, "khugepaged/../enabled", "1"), -EINVAL);
	assert_int_equal(hk_thp_modes(t.ctx, "defrag", &v), 0);
	assert_string_equal(v, "always defer defer+madvise [madvise] never");
	free(v);
	/* compact_memory and the node compact files are write-only triggers. */
	fixture_write(t.dir, "proc/sys/vm/compact_memory", "");
	fixture_write(t.dir, "sys/devices/system/node/node1/compact", "");
	assert_int_equal(hk_compact_memory(t.ctx, HK_NODE_ALL), 0);
	assert_file(&t, "proc/sys/vm/compact_memory", "1");
	assert_int_equal(hk_compact_memory(t.ctx, 1), 0);
	assert_file(&t, "sys/devices/system/node/node1/compact", "1");
	assert_int_equal(hk_compact_memory(t.ctx, 0), -ENOENT);
	assert_int_equal(hk_compact_memory(t.ctx, -7), -EINVAL);
	tree_close(&t);
}

static void test_lock_serializes_and_times_out(void **state)
{
	struct tree t;
	int fd = -1, fd2 = -1, other;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_lock(t.ctx, 0, &fd), 0);
	assert_true(fd >= 0);
	/* A second holder (another open file description) cannot have it meanwhile. */
	assert_int_equal(hk_lock(t.ctx, 100, &fd2), -ETIMEDOUT);
	hk_unlock(fd);
	assert_int_equal(hk_lock(t.ctx, 100, &fd2), 0);
	/* The lock of a tree is on the tree's directory: flock(1) on it sees it too. */
	other = open(t.dir, O_RDONLY | O_DIRECTORY);
	assert_true(other >= 0);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	hk_unlock(fd2);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
	close(other);
	/* ... and no file was added to the tree. */
	assert_int_equal(access(t.dir, F_OK), 0);
	{
		char p[4096];

		snprintf(p, sizeof(p), "%s/run", t.dir);
		assert_int_equal(access(p, F_OK), -1);
	}
	tree_close(&t);
}

/*
 * HK_DEBUG turns the library's debug messages on, except in a setuid or
 * file-capability program (AT_SECURE): tests/live/secure-env.bats runs this
 * test in a copy of this program given a file capability, as nobody, with
 * HK_EXPECT_SECURE=1 so that the test knows it must be in secure mode.
 */
static void test_hk_debug_only_when_not_secure(void **state)
{
	bool secure = getauxval(AT_SECURE) != 0;
	struct hk_ctx *ctx = NULL;

	(void)state;
	assert_int_equal(hk_new(NULL, &ctx), 0);
	if (getenv("HK_EXPECT_SECURE"))
		assert_true(secure);
	if (getenv("HK_DEBUG") && !secure)
		assert_int_equal(hk_get_log_priority(ctx), LOG_DEBUG);
	else
		assert_int_equal(hk_get_log_priority(ctx), LOG_ERR);
	hk_unref(ctx);
	/* "" is not the running system: the library refuses it as the tools do. */
	ctx = NULL;
	assert_int_equal(hk_new("", &ctx), -EINVAL);
	assert_null(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hk_debug_only_when_not_secure),
		cmocka_unit_test(test_pool_set_nr_default_size_goes_through_proc),
		cmocka_unit_test(test_pool_set_nr_other_sizes_and_nodes_go_through_sys),
		cmocka_unit_test(test_pool_set_rejects_what_does_not_exist),
		cmocka_unit_test(test_pool_file),
		cmocka_unit_test(test_dry_run_writes_nothing),
		cmocka_unit_test(test_sysctl_thp_and_compact_writes),
		cmocka_unit_test(test_lock_serializes_and_times_out),
	};

	/* One test by name (the live secure-environment test runs just its own). */
	if (getenv("HK_TEST_FILTER"))
		cmocka_set_test_filter(getenv("HK_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
