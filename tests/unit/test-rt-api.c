// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The libhugetlbfs API of libhugekit-rt (lib/runtime/api.c): argument checks
 * and what needs no huge page. The library is built without sanitizers and
 * loaded with dlopen() from $HK_BUILD_DIR/lib (or ../lib next to this test),
 * so this test links nothing of it.
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

	return cmocka_run_group_tests(tests, load_rt, NULL);
}
