// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * heap-test: the workload. 4 threads, each makes 200 blocks of 200 KiB
 * and 100000 of 100 bytes and writes them. Then prints the share of its
 * anonymous memory that is in hugetlb pages, from /proc/self/smaps_rollup:
 * "hugetlb_kb anon_kb percent".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *arg)
{
	void **small = malloc(100000 * sizeof(*small));
	void **big = malloc(200 * sizeof(*big));

	(void)arg;
	if (!small || !big)
		return NULL;
	for (int i = 0; i < 200; i++) {
		big[i] = malloc(200 * 1024);
		if (big[i])
			memset(big[i], 1, 200 * 1024);
	}
	for (int i = 0; i < 100000; i++) {
		small[i] = malloc(100);
		if (small[i])
			memset(small[i], 2, 100);
	}
	return small;
}

int main(void)
{
	unsigned long anon = 0, huge = 0, v;
	pthread_t t[4];
	char line[256];
	FILE *f;

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0)
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	f = fopen("/proc/self/smaps_rollup", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Anonymous: %lu", &v) == 1)
			anon = v;
		else if (sscanf(line, "Private_Hugetlb: %lu", &v) == 1)
			huge = v;
	}
	fclose(f);
	printf("%lu %lu %.1f\n", huge, anon, 100.0 * (double)huge / (double)(huge + anon));
	return 0;
}
