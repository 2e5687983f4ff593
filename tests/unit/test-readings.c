// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the measuring tools read through libhugekit (HK_1.6), on trees:
 * hk_range_huge_kb (smaps of a range), hk_process_threads (a task
 * directory), hk_cache_line_size; and hk_collapse on this process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "tree.h"

/* Two mappings on huge pages and one that is not, around 0x200000-0x800000. */
static const char smaps[] = "00200000-00400000 rw-p 00000000 00:00 0 \n"
			    "Size:               2048 kB\n"
			    "AnonHugePages:      2048 kB\n"
			    "Shared_Hugetlb:        0 kB\n"
			    "Private_Hugetlb:       0 kB\n"
			    "00400000-00600000 rw-s 00000000 00:10 7    /dev/hugepages/x\n"
			    "Size:               2048 kB\n"
			    "AnonHugePages:         0 kB\n"
			    "Shared_Hugetlb:     2048 kB\n"
			    "Private_Hugetlb:       0 kB\n"
			    "00600000-00800000 rw-p 00000000 00:00 0 \n"
			    "Size:               2048 kB\n"
			    "AnonHugePages:         0 kB\n"
			    "Shared_Hugetlb:        0 kB\n"
			    "Private_Hugetlb:       0 kB\n";

static void test_range_huge_kb(void **state)
{
	struct tree t;
	uint64_t kb = 1;

	(void)state;
	tree_open(&t, NULL);
	fixture_write(t.dir, "proc/self/smaps", smaps);
	/* The whole: both; a range inside the second only; one past them all: none. */
	assert_int_equal(hk_range_huge_kb(t.ctx, (void *)0x200000, 0x600000, &kb), 0);
	assert_true(kb == 4096);
	assert_int_equal(hk_range_huge_kb(t.ctx, (void *)0x480000, 0x1000, &kb), 0);
	assert_true(kb == 2048);
	assert_int_equal(hk_range_huge_kb(t.ctx, (void *)0x600000, 0x200000, &kb), 0);
	assert_true(kb == 0);
	/* The end is exclusive: a range that ends where the first begins is not in it. */
	assert_int_equal(hk_range_huge_kb(t.ctx, (void *)0x100000, 0x100000, &kb), 0);
	assert_true(kb == 0);
	assert_int_equal(hk_range_huge_kb(t.ctx, (void *)0x200000, 1, NULL), -EINVAL);
	tree_close(&t);
	/* No smaps there: the read's error. */
	tree_open(&t, NULL);
	assert_int_equal(hk_range_huge_kb(t.ctx, (void *)0x200000, 1, &kb), -ENOENT);
	tree_close(&t);
}

static void test_threads(void **state)
{
	struct tree t;
	int *tids = NULL;
	size_t n = 0;

	(void)state;
	tree_open(&t, NULL);
	fixture_write(t.dir, "proc/42/task/42/stat", "");
	fixture_write(t.dir, "proc/42/task/43/stat", "");
	fixture_write(t.dir, "proc/42/task/x1/stat", "");
	fixture_write(t.dir, "proc/7/task/none/stat", "");
	assert_int_equal(hk_process_threads(t.ctx, 42, &tids, &n), 0);
	assert_int_equal(n, 2);
	assert_true((tids[0] == 42 && tids[1] == 43) || (tids[0] == 43 && tids[1] == 42));
	free(tids);
	/* Gone, or no thread left: -ESRCH; a bad pid: -EINVAL. */
	assert_int_equal(hk_process_threads(t.ctx, 41, &tids, &n), -ESRCH);
	assert_int_equal(hk_process_threads(t.ctx, 7, &tids, &n), -ESRCH);
	assert_int_equal(hk_process_threads(t.ctx, 0, &tids, &n), -EINVAL);
	tree_close(&t);
}

static void test_cache_line(void **state)
{
	struct tree t;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, NULL);
	assert_int_equal(hk_cache_line_size(t.ctx, &v), -ENOENT);
	fixture_write(t.dir, "sys/devices/system/cpu/cpu0/cache/index2/coherency_line_size",
		      "64\n");
	assert_int_equal(hk_cache_line_size(t.ctx, &v), 0);
	assert_true(v == 64);
	tree_close(&t);
}

/* MADV_COLLAPSE reaches the kernel: a range with nothing mapped is its -ENOMEM (-EINVAL before 6.1). */
static void test_collapse(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int rc;

	(void)state;
	assert_true(p != MAP_FAILED);
	assert_int_equal(munmap(p, (size_t)page), 0);
	rc = hk_collapse(p, (size_t)page);
	assert_true(rc == -ENOMEM || rc == -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_huge_kb),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_cache_line),
		cmocka_unit_test(test_collapse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
