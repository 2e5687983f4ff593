// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The libhugetlbfs API of libhugekit-rt (lib/runtime/api.c): argument checks
 * and what needs no huge page. The library is built without sanitizers and
 * loaded with dlopen() from $HK_BUILD_DIR/lib (or ../lib next to this test),
 * so this test links nothing of it, but for the region table
 * (lib/runtime/regions.c), which is compiled in, with the sanitizers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hugetlbfs.h>
#include <pthread.h>

#include "regions.h"

static struct {
	void *handle;
	__typeof__(gethugepagesize) *gethugepagesize;
	__typeof__(gethugepagesizes) *gethugepagesizes;
	__typeof__(getpagesizes) *getpagesizes;
	__typeof__(hugetlbfs_test_path) *hugetlbfs_test_path;
	__typeof__(hugetlbfs_find_path_for_size) *hugetlbfs_find_path_for_size;
	__typeof__(hugetlbfs_unlinked_fd_for_size) *hugetlbfs_unlinked_fd_for_size;
	__typeof__(free_huge_pages) *free_huge_pages;
	__typeof__(free_hugepage_region) *free_hugepage_region;
} rt;

/* The kernel's default huge page size from /proc/meminfo, 0 when there is none. */
static long meminfo_default(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static void *sym(const char *name)
{
	void *p = dlsym(rt.handle, name);

	if (!p)
		print_error("dlsym(%s): %s\n", name, dlerror());
	return p;
}

static int load_rt(void **state)
{
	const char *dir = getenv("HK_BUILD_DIR");
	char path[PATH_MAX], exe[PATH_MAX];
	ssize_t n;

	(void)state;
	if (dir && *dir) {
		n = snprintf(path, sizeof(path), "%s/lib/libhugekit-rt.so", dir);
	} else {
		/* build/<preset>/tests/test-rt-api -> build/<preset>/lib/libhugekit-rt.so */
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return -1;
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		n = snprintf(path, sizeof(path), "%s/../lib/libhugekit-rt.so", exe);
	}
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	/* Nothing of libhugetlbfs's environment: the defaults, and no preload work. */
	static const char *const vars[] = {"HUGETLB_MORECORE",	   "HUGETLB_SHM",
					   "HUGETLB_PATH",	   "HUGETLB_DEFAULT_PAGE_SIZE",
					   "HUGETLB_RESTRICT_EXE", "HUGETLB_NO_RESERVE"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);

	/* Never closed: the library keeps what it found for the life of the process. */
	rt.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!rt.handle) {
		print_error("dlopen(%s): %s\n", path, dlerror());
		return -1;
	}
	rt.gethugepagesize = (__typeof__(rt.gethugepagesize))sym("gethugepagesize");
	rt.gethugepagesizes = (__typeof__(rt.gethugepagesizes))sym("gethugepagesizes");
	rt.getpagesizes = (__typeof__(rt.getpagesizes))sym("getpagesizes");
	rt.hugetlbfs_test_path = (__typeof__(rt.hugetlbfs_test_path))sym("hugetlbfs_test_path");
	rt.hugetlbfs_find_path_for_size =
		(__typeof__(rt.hugetlbfs_find_path_for_size))sym("hugetlbfs_find_path_for_size");
	rt.hugetlbfs_unlinked_fd_for_size = (__typeof__(rt.hugetlbfs_unlinked_fd_for_size))sym(
		"hugetlbfs_unlinked_fd_for_size");
	rt.free_huge_pages = (__typeof__(rt.free_huge_pages))sym("free_huge_pages");
	rt.free_hugepage_region = (__typeof__(rt.free_hugepage_region))sym("free_hugepage_region");
	return rt.gethugepagesize && rt.gethugepagesizes && rt.getpagesizes &&
			       rt.hugetlbfs_test_path && rt.hugetlbfs_find_path_for_size &&
			       rt.hugetlbfs_unlinked_fd_for_size && rt.free_huge_pages &&
			       rt.free_hugepage_region
		       ? 0
		       : -1;
}

static void test_gethugepagesizes_args(void **state)
{
	long sizes[64];
	int n;

	(void)state;
	errno = 0;
	assert_int_equal(rt.gethugepagesizes(NULL, -1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(rt.gethugepagesizes(sizes, -1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(rt.gethugepagesizes(NULL, 1), -1);
	assert_int_equal(errno, EINVAL);

	n = rt.gethugepagesizes(NULL, 0);
	assert_in_range(n, 0, 64);
	assert_int_equal(rt.gethugepagesizes(sizes, 0), 0);
	if (meminfo_default() == 0) {
		assert_int_equal(n, 0);
		return;
	}
	assert_true(n >= 1);
	assert_int_equal(rt.gethugepagesizes(sizes, 64), n);
	assert_int_equal(sizes[0], meminfo_default());
	for (int i = 1; i < n; i++)
		assert_int_not_equal(sizes[i], sizes[0]);
	/* A short array gets the first sizes. */
	sizes[1] = 0;
	assert_int_equal(rt.gethugepagesizes(sizes, 1), 1);
	assert_int_equal(sizes[0], meminfo_default());
	assert_int_equal(sizes[1], 0);
}

static void test_getpagesizes_args(void **state)
{
	long sizes[65];
	int n;

	(void)state;
	errno = 0;
	assert_int_equal(rt.getpagesizes(NULL, -1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(rt.getpagesizes(sizes, -3), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(rt.getpagesizes(NULL, 2), -1);
	assert_int_equal(errno, EINVAL);

	n = rt.gethugepagesizes(NULL, 0);
	assert_int_equal(rt.getpagesizes(NULL, 0), n + 1);
	assert_int_equal(rt.getpagesizes(sizes, 0), 0);
	/* Room for one: the base page only. */
	assert_int_equal(rt.getpagesizes(sizes, 1), 1);
	assert_int_equal(sizes[0], sysconf(_SC_PAGESIZE));
	assert_int_equal(rt.getpagesizes(sizes, 65), n + 1);
	assert_int_equal(sizes[0], sysconf(_SC_PAGESIZE));
	if (n > 0)
		assert_int_equal(sizes[1], meminfo_default());
}

static void test_gethugepagesize(void **state)
{
	long def = meminfo_default();

	(void)state;
	errno = EBADF;
	if (def) {
		assert_int_equal(rt.gethugepagesize(), def);
		assert_int_equal(errno, 0);
	} else {
		assert_int_equal(rt.gethugepagesize(), -1);
		assert_int_equal(errno, ENOSYS);
	}
}

static void test_test_path(void **state)
{
	char dir[] = "/tmp/hk-rt-api.XXXXXX";

	(void)state;
	assert_int_equal(rt.hugetlbfs_test_path("/"), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rt.hugetlbfs_test_path(dir), 0);
	assert_int_equal(rmdir(dir), 0);
	errno = 0;
	assert_int_equal(rt.hugetlbfs_test_path(dir), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rt.hugetlbfs_test_path("/nonexistent/hugekit/path"), -1);
}

static void test_unknown_size(void **state)
{
	(void)state;
	assert_null(rt.hugetlbfs_find_path_for_size(12345));
	assert_null(rt.hugetlbfs_find_path_for_size(-1));
	assert_int_equal(rt.hugetlbfs_unlinked_fd_for_size(12345), -1);
}

/* Whether the page at p is still mapped. */
static bool mapped(void *p)
{
	unsigned char vec;

	return mincore(p, 1, &vec) == 0;
}

static void test_free_unknown(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char not_mapped_by_us[64];
	char on_stack = 7;

	(void)state;
	assert_true(p != MAP_FAILED);
	p[0] = 42;
	p[page] = 43;
	/* Each says "invalid or double free" and unmaps nothing. */
	rt.free_huge_pages(p);
	rt.free_huge_pages(p + page);
	rt.free_hugepage_region(p);
	rt.free_hugepage_region(p + 64);
	rt.free_huge_pages(not_mapped_by_us);
	rt.free_hugepage_region(&on_stack);
	rt.free_huge_pages(NULL);
	rt.free_hugepage_region(NULL);
	assert_true(mapped(p));
	assert_true(mapped(p + page));
	assert_int_equal(p[0], 42);
	assert_int_equal(p[page], 43);
	assert_int_equal(on_stack, 7);
	assert_int_equal(munmap(p, 2 * page), 0);
	assert_false(mapped(p));
}

/* ---- the region table (regions.c) ------------------------------------- */

#define PAGE ((uintptr_t)2 << 20)

/* n keys (2 MiB aligned, from from) whose home slot in a table of cap is slot. */
static size_t colliding(uintptr_t from, size_t cap, size_t slot, uintptr_t *keys, size_t n)
{
	size_t got = 0;

	for (uintptr_t k = from; got < n; k += PAGE)
		if (rt_regions_slot(k, cap) == slot)
			keys[got++] = k;
	return got;
}

static struct rt_region reg(uintptr_t start)
{
	return (struct rt_region){start, 3 * PAGE, PAGE};
}

static bool take(struct rt_regions *t, uintptr_t key)
{
	struct rt_region r;

	return rt_regions_take(t, &key, 1, key, &r) && r.start == key && r.len == 3 * PAGE;
}

static void test_regions_collisions(void **state)
{
	struct rt_regions t = RT_REGIONS_INIT;
	struct rt_region r = reg(PAGE);
	uintptr_t k[6], unknown;

	(void)state;
	/* The first add makes 64 slots: five keys share slot 10, a sixth is never added. */
	assert_int_equal(rt_regions_add(&t, &r), 0);
	assert_int_equal(t.cap, 64);
	assert_true(take(&t, PAGE));
	assert_int_equal(colliding(PAGE, 64, 10, k, 6), 6);
	unknown = k[5];
	for (int i = 0; i < 5; i++) {
		r = reg(k[i]);
		assert_int_equal(rt_regions_add(&t, &r), 0);
	}
	assert_int_equal(t.n, 5);
	/* Delete in the middle of the chain: the ones probed past it are still found. */
	assert_true(take(&t, k[2]));
	assert_false(rt_regions_has(&t, k[2]));
	for (int i = 0; i < 5; i++)
		if (i != 2)
			assert_true(rt_regions_has(&t, k[i]));
	/* Deleting what is not there, twice, or never was: false, nothing changes. */
	assert_false(take(&t, k[2]));
	assert_false(take(&t, unknown));
	assert_false(take(&t, 0));
	assert_int_equal(t.n, 4);
	/* Re-insert after delete, and the same start again replaces, not adds. */
	r = reg(k[2]);
	assert_int_equal(rt_regions_add(&t, &r), 0);
	assert_int_equal(rt_regions_add(&t, &r), 0);
	assert_int_equal(t.n, 5);
	/* The head of the chain goes first, then the rest in any order. */
	assert_true(take(&t, k[0]));
	for (int i = 4; i >= 1; i--)
		assert_true(take(&t, k[i]));
	assert_int_equal(t.n, 0);
	for (size_t i = 0; i < t.cap; i++)
		assert_int_equal(t.slots[i].start, 0);
	rt_regions_fini(&t);
}

static void test_regions_wrap(void **state)
{
	struct rt_regions t = RT_REGIONS_INIT;
	struct rt_region r;
	uintptr_t end[3], zero[2];

	(void)state;
	/* Three keys at home in the last slot wrap to slots 0 and 1, where two others live. */
	assert_int_equal(colliding(PAGE, 64, 63, end, 3), 3);
	assert_int_equal(colliding(PAGE, 64, 0, zero, 2), 2);
	for (int i = 0; i < 3; i++) {
		r = reg(end[i]);
		assert_int_equal(rt_regions_add(&t, &r), 0);
	}
	for (int i = 0; i < 2; i++) {
		r = reg(zero[i]);
		assert_int_equal(rt_regions_add(&t, &r), 0);
	}
	assert_true(take(&t, end[0]));
	for (int i = 1; i < 3; i++)
		assert_true(rt_regions_has(&t, end[i]));
	for (int i = 0; i < 2; i++)
		assert_true(rt_regions_has(&t, zero[i]));
	assert_true(take(&t, zero[0]));
	assert_true(rt_regions_has(&t, zero[1]));
	assert_true(take(&t, end[2]));
	assert_true(take(&t, end[1]));
	assert_true(take(&t, zero[1]));
	assert_int_equal(t.n, 0);
	rt_regions_fini(&t);
}

static void test_regions_inside(void **state)
{
	struct rt_regions t = RT_REGIONS_INIT;
	struct rt_region r = {4 * PAGE, 3 * PAGE, PAGE}, got;
	uintptr_t key = 4 * PAGE;

	(void)state;
	assert_int_equal(rt_regions_add(&t, &r), 0);
	/* Not in the first page, or before the start: not this region, which stays. */
	assert_false(rt_regions_take(&t, &key, 1, key + PAGE, &got));
	assert_false(rt_regions_take(&t, &key, 1, key - 1, &got));
	assert_true(rt_regions_has(&t, key));
	assert_true(rt_regions_take(&t, &key, 1, key + PAGE - 1, &got));
	assert_int_equal(got.start, key);
	rt_regions_fini(&t);
}

/* A random mix of adds and takes over few keys (so that chains form), against a plain array. */
static void test_regions_model(void **state)
{
	struct rt_regions t = RT_REGIONS_INIT;
	bool in[300] = {false};
	uint64_t s = 88172645463325252ull;
	size_t n = 0;

	(void)state;
	for (int op = 0; op < 200000; op++) {
		size_t i;
		uintptr_t key;

		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		i = (size_t)(s % 300);
		key = (i + 1) * PAGE;
		if (s & (1u << 20)) {
			struct rt_region r = reg(key);

			assert_int_equal(rt_regions_add(&t, &r), 0);
			n += !in[i];
			in[i] = true;
		} else {
			assert_int_equal(take(&t, key), in[i]);
			n -= in[i];
			in[i] = false;
		}
		assert_int_equal(t.n, n);
		if (op % 997 == 0)
			for (size_t j = 0; j < 300; j++)
				assert_int_equal(rt_regions_has(&t, (j + 1) * PAGE), in[j]);
	}
	rt_regions_fini(&t);
}

static void test_regions_growth(void **state)
{
	struct rt_regions t = RT_REGIONS_INIT;
	enum {
		N = 20000
	};

	(void)state;
	for (uintptr_t i = 1; i <= N; i++) {
		struct rt_region r = reg(i * PAGE);

		assert_int_equal(rt_regions_add(&t, &r), 0);
		assert_true(t.n * 4 <= t.cap * 3);
	}
	assert_int_equal(t.n, N);
	assert_true(t.cap >= 32768);
	for (uintptr_t i = 1; i <= N; i++)
		assert_true(rt_regions_has(&t, i * PAGE));
	/* Every other one out, then the rest. */
	for (uintptr_t i = 1; i <= N; i += 2)
		assert_true(take(&t, i * PAGE));
	for (uintptr_t i = 1; i <= N; i++)
		assert_int_equal(rt_regions_has(&t, i * PAGE), i % 2 == 0);
	for (uintptr_t i = 2; i <= N; i += 2)
		assert_true(take(&t, i * PAGE));
	assert_int_equal(t.n, 0);
	rt_regions_fini(&t);
}

static struct rt_regions shared = RT_REGIONS_INIT;

static void *regions_worker(void *arg)
{
	uintptr_t base = ((uintptr_t)arg + 1) << 40;
	long bad = 0;

	for (int round = 0; round < 20; round++) {
		for (uintptr_t i = 0; i < 500; i++) {
			struct rt_region r = reg(base + i * PAGE);

			bad += rt_regions_add(&shared, &r) != 0;
		}
		for (uintptr_t i = 0; i < 500; i++)
			bad += !rt_regions_has(&shared, base + i * PAGE);
		for (uintptr_t i = 0; i < 500; i++)
			bad += !take(&shared, base + i * PAGE);
		bad += take(&shared, base);
	}
	return (void *)bad;
}

static void test_regions_threads(void **state)
{
	pthread_t t[8];

	(void)state;
	for (uintptr_t i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&t[i], NULL, regions_worker, (void *)i), 0);
	for (int i = 0; i < 8; i++) {
		void *bad;

		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
	assert_int_equal(shared.n, 0);
	rt_regions_fini(&shared);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gethugepagesizes_args),
		cmocka_unit_test(test_getpagesizes_args),
		cmocka_unit_test(test_gethugepagesize),
		cmocka_unit_test(test_test_path),
		cmocka_unit_test(test_unknown_size),
		cmocka_unit_test(test_free_unknown),
	};

	const struct CMUnitTest table[] = {
		cmocka_unit_test(test_regions_collisions), cmocka_unit_test(test_regions_wrap),
		cmocka_unit_test(test_regions_inside),	   cmocka_unit_test(test_regions_model),
		cmocka_unit_test(test_regions_growth),	   cmocka_unit_test(test_regions_threads),
	};

	return cmocka_run_group_tests(table, NULL, NULL) |
	       cmocka_run_group_tests(tests, load_rt, NULL);
}
