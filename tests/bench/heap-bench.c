// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * heap-bench MODE MiB ITERS
 *   MODE random-malloc:  random read-modify-write over a malloc'd array (the
 *                        heap: base pages, or huge pages under hugectl --heap)
 *   MODE random-hugetlb: the same over an explicit mmap(MAP_HUGETLB) array
 *   MODE alloc:          4 threads, each ITERS x (malloc 64..4096 B, write, free)
 *   MODE fork:           a heap block of MiB (0: none), written, then ITERS x
 *                        (fork, the child writes one byte of the block and
 *                        exits, wait); seconds is per fork
 * Prints "MODE seconds checksum". Time is measured here, compared by run-bench.sh.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t random_rmw(uint64_t *a, size_t n, long iters)
{
	uint64_t s = 88172645463325252ull, sum = 0;

	for (long i = 0; i < iters; i++) {
		size_t k = xorshift(&s) % n;

		a[k] += i;
		sum += a[k];
	}
	return sum;
}

static long alloc_iters;

static void *alloc_worker(void *arg)
{
	uint64_t s = (uintptr_t)arg + 1, sum = 0;
	void *keep[64] = {0};

	for (long i = 0; i < alloc_iters; i++) {
		size_t sz = 64 + xorshift(&s) % 4032;
		unsigned slot = (unsigned)(xorshift(&s) % 64);

		free(keep[slot]);
		keep[slot] = malloc(sz);
		if (keep[slot]) {
			memset(keep[slot], (int)i, sz);
			sum += ((unsigned char *)keep[slot])[sz - 1];
		}
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
	size_t mib, n;
	uint64_t *a, sum = 0;
	long iters;
	double t0, t1;

	if (argc != 4) {
		fprintf(stderr,
			"usage: heap-bench random-malloc|random-hugetlb|alloc|fork MiB ITERS\n");
		return 2;
	}
	mib = strtoul(argv[2], NULL, 10);
	iters = strtol(argv[3], NULL, 10);
	n = mib * (1u << 20) / sizeof(uint64_t);
	if (strcmp(argv[1], "fork") == 0) {
		unsigned char *block = mib ? malloc(mib << 20) : NULL;

		if (mib && !block)
			return 1;
		if (block)
			memset(block, 1, mib << 20);
		t0 = now();
		for (long i = 0; i < iters; i++) {
			pid_t pid = fork();
			int st;

			if (pid < 0)
				return 1;
			if (pid == 0) {
				if (block)
					block[((size_t)i * 4096) % (mib << 20)] = 2;
				_exit(0);
			}
			if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				fprintf(stderr, "heap-bench: a child ended with status %#x\n", st);
				return 1;
			}
			sum += (uint64_t)st;
		}
		t1 = now();
		t1 = t0 + (t1 - t0) / (double)(iters > 0 ? iters : 1);
		free(block);
	} else if (strcmp(argv[1], "alloc") == 0) {
		pthread_t t[4];

		alloc_iters = iters;
		t0 = now();
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, alloc_worker, (void *)(uintptr_t)i);
		for (int i = 0; i < 4; i++) {
			void *r;

			pthread_join(t[i], &r);
			sum += (uintptr_t)r;
		}
		t1 = now();
	} else {
		if (strcmp(argv[1], "random-hugetlb") == 0) {
			a = mmap(NULL, n * sizeof(*a), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
			if (a == MAP_FAILED) {
				perror("mmap(MAP_HUGETLB)");
				return 1;
			}
		} else {
			a = malloc(n * sizeof(*a));
			if (!a)
				return 1;
		}
		memset(a, 0, n * sizeof(*a)); /* fault everything in before timing */
		t0 = now();
		sum = random_rmw(a, n, iters);
		t1 = now();
	}
	printf("%s %.6f %llu\n", argv[1], t1 - t0, (unsigned long long)sum);
	return 0;
}
