// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A program written for libhugetlbfs's API: it includes <hugetlbfs.h> and
 * nothing of hugekit, so it builds against libhugetlbfs 2.23's header and
 * library as well as against hugekit's, and the binary built for
 * libhugetlbfs must run against libhugekit-rt (tests/cli/rt-api.bats).
 *
 *   legacy-api               needs about 12 free huge pages of the default size
 *   legacy-api --empty-pool  the pool has no page to give: huge allocations
 *                            fail with ENOMEM, GHR_FALLBACK still gives memory
 *
 * Prints "ok N - ..." or "not ok N - ..." per check, then "1..N"; exits 1
 * when a check failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hugetlbfs.h>

#define MiB (1024UL * 1024)
#define NTHREADS 4
#define ROUNDS 64

static int n_checks, n_failed;
static long hps, base;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++n_checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		n_failed++;
}

struct vma {
	int found;
	unsigned long start, end;
	long private_hugetlb_kb, kernel_page_kb;
};

/* The /proc/self/smaps entry of the mapping that holds addr. */
static struct vma vma_of(const void *addr)
{
	struct vma v = {0, 0, 0, -1, -1};
	unsigned long a = (unsigned long)addr, s, e;
	char line[512];
	int in = 0;
	long kb;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		/* "start-end perms ..." opens an entry; "Name: value" lines follow. */
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
			in = a >= s && a < e;
			if (in) {
				v.found = 1;
				v.start = s;
				v.end = e;
			}
		} else if (in && sscanf(line, "Private_Hugetlb: %ld kB", &kb) == 1) {
			v.private_hugetlb_kb = kb;
		} else if (in && sscanf(line, "KernelPageSize: %ld kB", &kb) == 1) {
			v.kernel_page_kb = kb;
		}
	}
	fclose(f);
	return v;
}

static int on_huge_pages(const void *addr)
{
	struct vma v = vma_of(addr);

	return v.found && (v.private_hugetlb_kb > 0 || v.kernel_page_kb == hps / 1024);
}

static int is_mapped(const void *addr)
{
	return vma_of(addr).found;
}

/* The file that provides the API: libhugekit-rt, or libhugetlbfs. */
static void print_runtime(void)
{
	char line[4096], *path;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		path = strchr(line, '/');
		if (path && (strstr(path, "libhugekit-rt") || strstr(path, "libhugetlbfs")) &&
		    strstr(line, " r-xp ")) {
			printf("# runtime: %s", path);
			break;
		}
	}
	fclose(f);
}

static void check_sizes(void)
{
	long sizes[64];
	int n, m;

	errno = 12345;
	hps = gethugepagesize();
	check(hps > 0 && errno == 0, "gethugepagesize() = %ld, errno %d", hps, errno);
	base = sysconf(_SC_PAGESIZE);

	n = gethugepagesizes(NULL, 0);
	check(n >= 1 && n <= 64, "gethugepagesizes(NULL, 0) = %d", n);
	if (n < 1 || n > 64)
		return;
	m = gethugepagesizes(sizes, n);
	check(m == n && sizes[0] == hps, "gethugepagesizes(ps, %d) = %d, default %ld first", n, m,
	      sizes[0]);
	check(gethugepagesizes(sizes, -1) == -1 && errno == EINVAL,
	      "gethugepagesizes(ps, -1): EINVAL");

	m = getpagesizes(NULL, 0);
	check(m == n + 1, "getpagesizes(NULL, 0) = %d", m);
	m = getpagesizes(sizes, n + 1);
	check(m == n + 1 && sizes[0] == base && sizes[1] == hps,
	      "getpagesizes(ps, %d) = %d: %ld, %ld, ...", n + 1, m, sizes[0], sizes[1]);
	check(getpagesizes(NULL, 3) == -1 && errno == EINVAL, "getpagesizes(NULL, 3): EINVAL");
}

static void check_paths(void)
{
	const char *path = hugetlbfs_find_path();
	int fd;

	check(hugetlbfs_test_path("/proc") == 0, "hugetlbfs_test_path(\"/proc\") = 0");
	check(hugetlbfs_test_path("/nonexistent/hugekit") == -1,
	      "hugetlbfs_test_path of a missing path = -1");
	if (!path) {
		check(hugetlbfs_unlinked_fd() == -1,
		      "no hugetlbfs mount: hugetlbfs_unlinked_fd() = -1");
		return;
	}
	check(hugetlbfs_test_path(path) == 1, "hugetlbfs_find_path() = %s, on hugetlbfs", path);
	fd = hugetlbfs_unlinked_fd();
	check(fd >= 0, "hugetlbfs_unlinked_fd() = %d", fd);
	if (fd >= 0)
		close(fd);
}

static void check_huge_pages(void)
{
	size_t len = 4 * MiB;
	struct vma v;
	char *p;

	p = get_huge_pages(len, GHP_DEFAULT);
	check(p != NULL, "get_huge_pages(4 MiB, GHP_DEFAULT) = %p", (void *)p);
	if (!p)
		return;
	check((uintptr_t)p % (uintptr_t)hps == 0, "the region starts on a huge page");
	memset(p, 0xa5, len);
	v = vma_of(p);
	printf("# coverage: Private_Hugetlb %ld kB of %zu kB written, KernelPageSize %ld kB\n",
	       v.private_hugetlb_kb, len / 1024, v.kernel_page_kb);
	check(on_huge_pages(p), "its smaps entry: Private_Hugetlb %ld kB, KernelPageSize %ld kB",
	      v.private_hugetlb_kb, v.kernel_page_kb);
	check(p[len - 1] == (char)0xa5, "the whole region is writable");
	free_huge_pages(p);
	check(!is_mapped(p), "free_huge_pages() unmapped it");
}

static void check_region(size_t len, ghr_t flags, const char *name)
{
	size_t rounded = (len + (size_t)hps - 1) / (size_t)hps * (size_t)hps;
	size_t off;
	char *p;

	p = get_hugepage_region(len, flags);
	check(p != NULL, "get_hugepage_region(%zu, %s) = %p", len, name, (void *)p);
	if (!p)
		return;
	off = (uintptr_t)p % (uintptr_t)hps;
	if (flags & GHR_COLOR)
		check(off + len <= rounded && off % 64 == 0,
		      "coloured by %zu bytes, within the rounding", off);
	else
		check(off == 0, "not coloured: starts on a huge page");
	memset(p, 0x5a, len);
	check(on_huge_pages(p) && p[len - 1] == 0x5a, "on huge pages, writable");
	free_hugepage_region(p);
	check(!is_mapped(p), "free_hugepage_region() unmapped it");
}

static void check_fork(void)
{
	size_t len = 2 * MiB;
	char *p = get_huge_pages(len, GHP_DEFAULT);
	int status = -1;
	pid_t pid;

	check(p != NULL, "get_huge_pages(2 MiB) before fork()");
	if (!p)
		return;
	memset(p, 'P', len);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int ok = p[0] == 'P' && p[len - 1] == 'P';

		memset(p, 'C', len);
		free_huge_pages(p);
		ok = ok && !is_mapped(p);
		_exit(ok ? 0 : 1);
	}
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
	check(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child sees the region, writes it and frees it (status %d)", status);
	check(p[0] == 'P' && p[len - 1] == 'P', "the parent's copy is its own");
	free_huge_pages(p);
	check(!is_mapped(p), "the parent frees it too");
}

static void *thread_main(void *arg)
{
	long id = (long)(intptr_t)arg, bad = 0;

	for (int i = 0; i < ROUNDS; i++) {
		size_t rlen = 100000 + (size_t)i * 64;
		char *a = get_huge_pages(2 * MiB, GHP_DEFAULT);
		char *b = get_hugepage_region(rlen, GHR_DEFAULT);

		if (!a || !b) {
			bad++;
		} else {
			memset(a, (int)id, 2 * MiB);
			memset(b, (int)id, rlen);
			sched_yield();
			bad += a[2 * MiB - 1] != (char)id || b[rlen - 1] != (char)id;
		}
		free_huge_pages(a);
		free_hugepage_region(b);
	}
	return (void *)(intptr_t)bad;
}

static void check_threads(void)
{
	pthread_t t[NTHREADS];
	long bad = 0;
	void *r;

	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)(i + 1)) != 0)
			bad += ROUNDS;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &r);
		bad += (long)(intptr_t)r;
	}
	check(bad == 0,
	      "%d threads x %d rounds of get_huge_pages/get_hugepage_region/free: %ld failed",
	      NTHREADS, ROUNDS, bad);
}

static void check_empty_pool(void)
{
	size_t len = 3 * MiB;
	struct vma v;
	char *p;

	errno = 0;
	p = get_huge_pages(2 * MiB, GHP_DEFAULT);
	check(p == NULL && errno == ENOMEM, "empty pool: get_huge_pages() = NULL, errno %d (%s)",
	      errno, strerror(errno));
	if (p)
		free_huge_pages(p);
	p = get_hugepage_region(2 * MiB, GHR_STRICT);
	check(p == NULL, "empty pool: get_hugepage_region(GHR_STRICT) = NULL");
	if (p)
		free_hugepage_region(p);

	p = get_hugepage_region(len, GHR_FALLBACK);
	check(p != NULL, "empty pool: get_hugepage_region(3 MiB, GHR_FALLBACK) = %p", (void *)p);
	if (p) {
		memset(p, 1, len);
		v = vma_of(p);
		check(v.found && v.kernel_page_kb == base / 1024 && v.private_hugetlb_kb <= 0,
		      "on base pages (KernelPageSize %ld kB), writable", v.kernel_page_kb);
		free_hugepage_region(p);
		check(!is_mapped(p), "free_hugepage_region() unmapped it");
	}
	len = 100000;
	p = get_hugepage_region(len, GHR_DEFAULT);
	check(p != NULL && (uintptr_t)p % (uintptr_t)base + len <=
				   (len + (size_t)base - 1) / (size_t)base * (size_t)base,
	      "empty pool: get_hugepage_region(100000, GHR_DEFAULT) = %p, coloured within a page",
	      (void *)p);
	if (p) {
		memset(p, 2, len);
		free_hugepage_region(p);
		check(!is_mapped(p), "free_hugepage_region() of the coloured pointer unmapped it");
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	print_runtime();
	check_sizes();
	if (hps <= 0) {
		printf("1..%d\n", n_checks);
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "--empty-pool") == 0) {
		check_empty_pool();
	} else {
		check_paths();
		check_huge_pages();
		check_region(3 * MiB + 100, GHR_DEFAULT, "GHR_DEFAULT");
		check_region(1 * MiB, GHR_STRICT, "GHR_STRICT");
		check_fork();
		check_threads();
	}
	printf("1..%d\n", n_checks);
	return n_failed ? 1 : 0;
}
