// SPDX-License-Identifier: GPL-2.0-or-later
/* Page size discovery (lib/common/pagesizes.c) on the fixture trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "pagesizes.h"
#include "path.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)

struct tree {
	char *dir;
	struct hkc_path p;
};

static void tree_open(struct tree *t, const char *name)
{
	t->dir = fixture_copy(name);
	assert_int_equal(hkc_path_init(&t->p, t->dir), 0);
	assert_false(t->p.live);
}

static void tree_close(struct tree *t)
{
	hkc_path_fini(&t->p);
	fixture_remove(t->dir);
}

static void check_sizes(struct tree *t, const uint64_t *want, size_t n_want)
{
	uint64_t *sizes = NULL;
	size_t n = 999;

	assert_int_equal(hkc_page_sizes(&t->p, &sizes, &n), 0);
	assert_non_null(sizes);
	if (n != n_want) {
		print_error("%s: %zu sizes, expected %zu\n", t->dir, n, n_want);
		free(sizes);
		fail();
	}
	for (size_t i = 0; i < n; i++) {
		if (sizes[i] != want[i]) {
			print_error("%s: size[%zu] = %llu, expected %llu\n", t->dir, i,
				    (unsigned long long)sizes[i], (unsigned long long)want[i]);
			free(sizes);
			fail();
		}
	}
	free(sizes);
}

static void check_x86(const char *name)
{
	static const uint64_t want[] = {2 * MiB, GiB};
	struct tree t;
	uint64_t v = 0;

	tree_open(&t, name);
	assert_int_equal(hkc_default_page_size(&t.p, &v), 0);
	assert_int_equal(v, 2 * MiB);
	check_sizes(&t, want, 2);
	v = 0;
	assert_int_equal(hkc_base_page_size(&t.p, &v), 0);
	assert_int_equal(v, 4096);
	tree_close(&t);
}

static void test_x86_1node(void **state)
{
	(void)state;
	check_x86("x86-1node");
}

static void test_x86_2node(void **state)
{
	(void)state;
	check_x86("x86-2node");
}

static void test_mounts_long(void **state)
{
	(void)state;
	check_x86("mounts-long");
}

static void test_arm64(void **state)
{
	static const uint64_t want[] = {2 * MiB, 64 * KiB, 32 * MiB, GiB};
	struct tree t;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "arm64");
	assert_int_equal(hkc_default_page_size(&t.p, &v), 0);
	assert_int_equal(v, 2 * MiB);
	check_sizes(&t, want, 4);
	v = 0;
	assert_int_equal(hkc_base_page_size(&t.p, &v), 0);
	assert_int_equal(v, 4096);
	tree_close(&t);
}

static void test_arm64_64k_base(void **state)
{
	struct tree t;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "arm64");
	/* The base page comes from the tree's smaps, not from this machine. */
	fixture_write(t.dir, "proc/self/smaps",
		      "aaaac0000000-aaaac0010000 r-xp 00000000 fe:01 1234 /usr/bin/cat\n"
		      "Size:                 64 kB\n"
		      "KernelPageSize:       64 kB\n"
		      "MMUPageSize:          64 kB\n");
	assert_int_equal(hkc_base_page_size(&t.p, &v), 0);
	assert_int_equal(v, 64 * KiB);
	tree_close(&t);
}

static void test_base_without_smaps(void **state)
{
	/* A tree that does not say its base page size: this machine's. */
	struct tree t;
	char *path;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "arm64");
	assert_true(asprintf(&path, "%s/proc/self/smaps", t.dir) > 0);
	assert_int_equal(remove(path), 0);
	free(path);
	assert_int_equal(hkc_base_page_size(&t.p, &v), 0);
	assert_int_equal(v, (uint64_t)sysconf(_SC_PAGESIZE));
	tree_close(&t);
}

static void test_nohugetlb(void **state)
{
	struct tree t;
	uint64_t v = 77;

	(void)state;
	tree_open(&t, "nohugetlb");
	assert_int_equal(hkc_default_page_size(&t.p, &v), -ENOENT);
	assert_int_equal(v, 77);
	check_sizes(&t, NULL, 0);
	assert_int_equal(hkc_base_page_size(&t.p, &v), 0);
	assert_int_equal(v, 4096);
	tree_close(&t);
}

static void test_default_1g(void **state)
{
	static const uint64_t want[] = {GiB, 2 * MiB};
	struct tree t;
	char *meminfo = NULL, *at;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hkc_path_read_allf(&t.p, &meminfo, NULL, "proc/meminfo"), 0);
	at = strstr(meminfo, "Hugepagesize:");
	assert_non_null(at);
	/* "Hugepagesize:       2048 kB" -> "Hugepagesize:    1048576 kB", same length. */
	memcpy(at, "Hugepagesize:    1048576 kB", strlen("Hugepagesize:    1048576 kB"));
	fixture_write(t.dir, "proc/meminfo", meminfo);
	free(meminfo);

	assert_int_equal(hkc_default_page_size(&t.p, &v), 0);
	assert_int_equal(v, GiB);
	check_sizes(&t, want, 2);
	tree_close(&t);
}

static void test_no_sysfs_dir(void **state)
{
	/* meminfo has a default but sys/kernel/mm/hugepages is gone: an empty list. */
	struct tree t;
	uint64_t v = 0;

	(void)state;
	t.dir = fixture_empty();
	fixture_write(t.dir, "proc/meminfo", "MemTotal: 1 kB\nHugepagesize:    2048 kB\n");
	assert_int_equal(hkc_path_init(&t.p, t.dir), 0);
	assert_int_equal(hkc_default_page_size(&t.p, &v), 0);
	assert_int_equal(v, 2 * MiB);
	check_sizes(&t, NULL, 0);
	tree_close(&t);
}

static void test_junk_dirs_ignored(void **state)
{
	static const uint64_t want[] = {2 * MiB, GiB};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-kB/x", "");
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-12MB/x", "");
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-0kB/x", "");
	fixture_write(t.dir, "sys/kernel/mm/hugepages/other/x", "");
	check_sizes(&t, want, 2);
	tree_close(&t);
}

static void test_bad_hugepagesize(void **state)
{
	struct tree t;
	uint64_t v = 3;

	(void)state;
	t.dir = fixture_empty();
	assert_int_equal(hkc_path_init(&t.p, t.dir), 0);
	/* No meminfo at all. */
	assert_int_equal(hkc_default_page_size(&t.p, &v), -ENOENT);
	fixture_write(t.dir, "proc/meminfo", "Hugepagesize:       0 kB\n");
	assert_int_equal(hkc_default_page_size(&t.p, &v), -EINVAL);
	fixture_write(t.dir, "proc/meminfo", "Hugepagesize:       x kB\n");
	assert_int_equal(hkc_default_page_size(&t.p, &v), -EINVAL);
	assert_int_equal(v, 3);
	tree_close(&t);
}

static void test_base_live(void **state)
{
	struct hkc_path p;
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hkc_path_init(&p, "/"), 0);
	assert_int_equal(hkc_base_page_size(&p, &v), 0);
	assert_int_equal(v, (uint64_t)sysconf(_SC_PAGESIZE));
	hkc_path_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_1node),	 cmocka_unit_test(test_x86_2node),
		cmocka_unit_test(test_mounts_long),	 cmocka_unit_test(test_arm64),
		cmocka_unit_test(test_arm64_64k_base),	 cmocka_unit_test(test_base_without_smaps),
		cmocka_unit_test(test_nohugetlb),	 cmocka_unit_test(test_default_1g),
		cmocka_unit_test(test_no_sysfs_dir),	 cmocka_unit_test(test_junk_dirs_ignored),
		cmocka_unit_test(test_bad_hugepagesize), cmocka_unit_test(test_base_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
