// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hk-hold SIZE PAGES TOUCH: map PAGES huge pages of SIZE bytes (MAP_HUGETLB,
 * private, so they are reserved at mmap time), fault in TOUCH of them, print
 * "ready" and wait for a signal. The live tests use it to give the pools
 * reserved, used and surplus pages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

int main(int argc, char **argv)
{
	unsigned long size, pages, touch;
	int shift = 0;
	char *p;

	if (argc != 4) {
		fprintf(stderr, "usage: hk-hold SIZE PAGES TOUCH\n");
		return 2;
	}
	size = strtoul(argv[1], NULL, 0);
	pages = strtoul(argv[2], NULL, 0);
	touch = strtoul(argv[3], NULL, 0);
	while ((1UL << shift) < size)
		shift++;
	if (!size || (1UL << shift) != size || touch > pages) {
		fprintf(stderr, "hk-hold: bad arguments\n");
		return 2;
	}
	p = mmap(NULL, size * pages, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT), -1, 0);
	if (p == MAP_FAILED) {
		perror("hk-hold: mmap");
		return 1;
	}
	for (unsigned long i = 0; i < touch; i++)
		p[i * size] = 1;
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
