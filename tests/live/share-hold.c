// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * share-hold: a program that knows nothing of huge pages, with 6 MiB of text
 * (one function of no-ops), for the end-to-end test of shared text
 * (tests/live/share-text.bats). It runs the function, prints how its
 * middle is backed, "text <KernelPageSize> kB, <Shared_Hugetlb> kB shared,
 * <Private_Hugetlb> kB private", then "ready"; waits for a line on stdin;
 * then checks the function's bytes ("intact"), and exits 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BIG (6 << 20)

__attribute__((noinline)) static void big(void)
{
	__asm__ volatile(".fill 6291456,1,0x90");
}

static void backing(uintptr_t a)
{
	unsigned long s, e, v, kps = 0, sh = 0, pr = 0;
	char line[512];
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, ' ') < line + 40)
			in = a >= s && a < e;
		else if (in && sscanf(line, "KernelPageSize: %lu", &v) == 1)
			kps = v;
		else if (in && sscanf(line, "Shared_Hugetlb: %lu", &v) == 1)
			sh = v;
		else if (in && sscanf(line, "Private_Hugetlb: %lu", &v) == 1)
			pr = v;
	}
	if (f)
		fclose(f);
	printf("text %lu kB, %lu kB shared, %lu kB private\n", kps, sh, pr);
}

int main(void)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)big;
	char line[16];
	size_t i = 0;

	/* Run it (every page of it touched), then: the middle is in any aligned interior. */
	big();
	backing((uintptr_t)p + BIG / 2);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	while (i < BIG && p[i] != 0x90)
		i++;
	for (size_t n = 0; n < BIG - 64; n++)
		if (p[i + n] != 0x90)
			return 1;
	printf("intact\n");
	return 0;
}
