// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A program written for libhugetlbfs, for tests/package/debian.bats: built
 * with "cc lhugetlbfs.c -lhugetlbfs" against libhugetlbfs 2.23 (the
 * machine's libhugetlbfs-dev: it needs libhugetlbfs.so.0) or against the
 * packages (libhugekit-dev: it needs libhugekit-rt.so.0). Prints the default
 * huge page size, the number of huge page sizes, and the real file of the
 * library that gethugepagesize() came from.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <hugetlbfs.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	long sizes[16];
	int n = gethugepagesizes(sizes, 16);
	long dflt = gethugepagesize();
	void *fn = dlsym(RTLD_DEFAULT, "gethugepagesize");
	char real[PATH_MAX];
	Dl_info info;

	if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fname == NULL) {
		fprintf(stderr, "lhugetlbfs: gethugepagesize is in no library\n");
		return 1;
	}
	if (realpath(info.dli_fname, real) == NULL) {
		perror(info.dli_fname);
		return 1;
	}
	printf("%ld %d %s\n", dflt, n, real);
	return 0;
}
