// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One call of the libhugetlbfs API per run, its result on stdout, for the
 * tests of mount discovery and the environment (tests/cli/rt-api.bats):
 *
 *   api-probe size            gethugepagesize(): "<size> errno=<n>"
 *   api-probe sizes           gethugepagesizes(): the sizes, space-separated
 *   api-probe path [SIZE]     hugetlbfs_find_path[_for_size](): the path or "(null)"
 *   api-probe fd [SIZE]       hugetlbfs_unlinked_fd[_for_size](): "hugetlbfs <page size>",
 *                             "unlinked" when the file has no name, or "-1"
 *   api-probe test PATH       hugetlbfs_test_path(): 1, 0 or -1
 *   api-probe alloc LEN       get_huge_pages(LEN): "<KernelPageSize> kB" or "NULL errno=<n>"
 *   api-probe bad-free        free_huge_pages()/free_hugepage_region() of pointers they
 *                             never returned: "still mapped" when nothing was unmapped
 *   api-probe many N          N regions from get_hugepage_region(GHR_DEFAULT) live at
 *                             once, freed in a shuffled order through the pointers it
 *                             returned: "N freed" when each was unmapped by its free
 *                             and nothing else; run with HUGETLB_DEFAULT_PAGE_SIZE=none,
 *                             the regions fall back to base pages
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <hugetlbfs.h>

static long size_arg(int argc, char **argv)
{
	return argc > 2 ? strtol(argv[2], NULL, 0) : 0;
}

static long kernel_page_kb(const void *addr)
{
	unsigned long a = (unsigned long)addr, s, e;
	char line[512];
	long kb, ret = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2)
			in = a >= s && a < e;
		else if (in && sscanf(line, "KernelPageSize: %ld kB", &kb) == 1)
			ret = kb;
	}
	fclose(f);
	return ret;
}

static int probe_fd(int argc, char **argv)
{
	struct statfs sf;
	struct stat st;
	int fd = argc > 2 ? hugetlbfs_unlinked_fd_for_size(size_arg(argc, argv))
			  : hugetlbfs_unlinked_fd();

	if (fd < 0) {
		printf("-1\n");
		return 1;
	}
	if (fstatfs(fd, &sf) < 0 || fstat(fd, &st) < 0)
		return 1;
	printf("%s %ld%s\n", (unsigned int)sf.f_type == HUGETLBFS_MAGIC ? "hugetlbfs" : "other",
	       (long)sf.f_bsize, st.st_nlink == 0 ? " unlinked" : "");
	close(fd);
	return 0;
}

static int probe_bad_free(void)
{
	long base = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)base * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char stack = 0;

	if (p == MAP_FAILED)
		return 1;
	p[0] = 1;
	free_huge_pages(p);
	free_huge_pages(&stack);
	free_hugepage_region(p + 8);
	free_hugepage_region(p);
	free_huge_pages(NULL);
	printf("%s\n", kernel_page_kb(p) > 0 && p[0] == 1 ? "still mapped" : "unmapped");
	return munmap(p, (size_t)base * 2) == 0 ? 0 : 1;
}

/* Whether the page holding addr is mapped. */
static int mapped(const void *addr)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
	unsigned char vec;

	return mincore((void *)((unsigned long)addr & ~(page - 1)), 1, &vec) == 0;
}

static int probe_many(long n)
{
	char **p = calloc((size_t)n, sizeof(*p));
	size_t *len = calloc((size_t)n, sizeof(*len));
	long freed = 0, bad = 0;

	if (!p || !len || n < 2)
		return 1;
	srand(1);
	for (long i = 0; i < n; i++) {
		len[i] = 1 + (size_t)rand() % 20000;
		p[i] = get_hugepage_region(len[i], GHR_DEFAULT);
		if (!p[i])
			return 1;
		memset(p[i], (int)(i & 0x7f), len[i]);
	}
	/* Shuffle, then free one by one; the others must stay intact. */
	for (long i = n - 1; i > 0; i--) {
		long j = rand() % (i + 1);
		char *tp = p[i];
		size_t tl = len[i];

		p[i] = p[j], len[i] = len[j];
		p[j] = tp, len[j] = tl;
	}
	for (long i = 0; i < n; i++) {
		free_hugepage_region(p[i]);
		freed += !mapped(p[i]);
		if (i + 1 < n)
			bad += p[i + 1][len[i + 1] - 1] != p[i + 1][0];
	}
	printf("%ld freed%s\n", freed, bad ? ", others damaged" : "");
	free(p);
	free(len);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (strcmp(cmd, "size") == 0) {
		long s = gethugepagesize();

		printf("%ld errno=%d\n", s, errno);
		return 0;
	}
	if (strcmp(cmd, "sizes") == 0) {
		long sizes[32];
		int n = gethugepagesizes(sizes, 32);

		for (int i = 0; i < n; i++)
			printf("%s%ld", i ? " " : "", sizes[i]);
		printf("\n");
		return n < 0;
	}
	if (strcmp(cmd, "path") == 0) {
		const char *p = argc > 2 ? hugetlbfs_find_path_for_size(size_arg(argc, argv))
					 : hugetlbfs_find_path();

		printf("%s\n", p ? p : "(null)");
		return 0;
	}
	if (strcmp(cmd, "fd") == 0)
		return probe_fd(argc, argv);
	if (strcmp(cmd, "test") == 0 && argc > 2) {
		printf("%d\n", hugetlbfs_test_path(argv[2]));
		return 0;
	}
	if (strcmp(cmd, "alloc") == 0 && argc > 2) {
		size_t len = (size_t)strtoul(argv[2], NULL, 0);
		char *p = get_huge_pages(len, GHP_DEFAULT);

		if (!p) {
			printf("NULL errno=%d\n", errno);
			return 0;
		}
		memset(p, 1, len);
		printf("%ld kB\n", kernel_page_kb(p));
		free_huge_pages(p);
		return 0;
	}
	if (strcmp(cmd, "bad-free") == 0)
		return probe_bad_free();
	if (strcmp(cmd, "many") == 0 && argc > 2)
		return probe_many(strtol(argv[2], NULL, 0));
	fprintf(stderr,
		"usage: api-probe size|sizes|path [SIZE]|fd [SIZE]|test PATH|alloc LEN|bad-free|many N\n");
	return 2;
}
