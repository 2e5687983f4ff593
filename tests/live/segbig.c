// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * segbig: a big program that checks its own segments, built by
 * tests/live/gen-segbig.py with a generated part (functions, data, bss).
 *
 *   segbig [check]   touch everything, then print per range (text = the R+X
 *                    PT_LOAD, data = the file part of the RW PT_LOAD after
 *                    RELRO, bss = its zero-filled tail) the size and the
 *                    percentages on hugetlb pages (KernelPageSize above the
 *                    base page size) and on transparent huge pages
 *                    (AnonHugePages), from /proc/self/smaps:
 *                      range text bytes 16777216 hugetlb 93.75 thp 0.00
 *                    then check that every function answers, the data is
 *                    intact, the text is r-x, RELRO r--, nothing is writable
 *                    and executable, and that a forked child can write its
 *                    data and bss and exit 0. One "fail: ..." line per
 *                    problem; exit status 1 when there was one.
 *   segbig hold      the same, then "ready" and wait until standard input
 *                    ends (a second running copy for the shared text test)
 *   segbig bench N   N calls of the functions in a random order (a fixed
 *                    seed): the iTLB-bound benchmark; prints the seconds
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The generated part. */
extern long (*const seg_funcs[])(long);
extern const size_t seg_nfuncs;
extern unsigned char *const seg_data_p;
extern const size_t seg_data_pages;
extern unsigned char *const seg_bss_p;
extern const size_t seg_bss_size;

/* A small initialized variable of the checker itself, in the same segment. */
long seg_small[4] = {11, 22, 33, 44};

enum {
	TEXT,
	DATA,
	BSS,
	RELRO,
	NRANGES
};
static const char *const names[] = {"text", "data", "bss", "relro"};

static uintptr_t lo[NRANGES], hi[NRANGES];
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("fail: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failures++;
}

static int main_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), relro_end = 0;

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_GNU_RELRO) {
			lo[RELRO] = info->dlpi_addr + p->p_vaddr;
			relro_end = lo[RELRO] + p->p_memsz;
			hi[RELRO] = relro_end & ~(page - 1);
		}
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + p->p_vaddr;

		if (p->p_type != PT_LOAD)
			continue;
		if ((p->p_flags & PF_X) && !hi[TEXT]) {
			lo[TEXT] = s & ~(page - 1);
			hi[TEXT] = (s + p->p_memsz + page - 1) & ~(page - 1);
		} else if (p->p_flags & PF_W) {
			lo[DATA] = s > relro_end ? s : relro_end;
			hi[DATA] = lo[BSS] = s + p->p_filesz;
			hi[BSS] = s + p->p_memsz;
		}
	}
	return 1; /* the first object is the program */
}

/* Read every page of the text and data, write every page of the bss. */
volatile unsigned char seg_sink;

static void touch(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (uintptr_t a = lo[TEXT]; a < hi[TEXT]; a += page)
		seg_sink = *(volatile const unsigned char *)a;
	for (uintptr_t a = lo[DATA]; a < hi[DATA]; a += page)
		seg_sink = *(volatile const unsigned char *)a;
	for (size_t i = 0; i < seg_bss_size; i += page)
		seg_bss_p[i] = (unsigned char)(i / page);
}

static void fractions(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	size_t base_kb = (size_t)sysconf(_SC_PAGESIZE) / 1024;
	uintptr_t vs = 0, ve = 0;
	size_t kps = 0, thp = 0, v;
	double huge[NRANGES] = {0}, anon[NRANGES] = {0};
	char line[512];

	if (!f) {
		fail("cannot open /proc/self/smaps");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *sp = strchr(line, ' ');
		uintptr_t a, b;

		/* A mapping's first line: its first word is the range, without ':'. */
		if (sp && !memchr(line, ':', (size_t)(sp - line)) &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2) {
			vs = a, ve = b;
			kps = thp = 0;
		} else if (sscanf(line, "KernelPageSize: %zu kB", &v) == 1)
			kps = v;
		else if (sscanf(line, "AnonHugePages: %zu kB", &v) == 1)
			thp = v * 1024;
		else if (!strncmp(line, "VmFlags:", 8))
			for (int r = TEXT; r <= BSS; r++) {
				uintptr_t s = vs > lo[r] ? vs : lo[r], e = ve < hi[r] ? ve : hi[r];

				if (e <= s)
					continue;
				if (kps > base_kb)
					huge[r] += (double)(e - s);
				anon[r] += (double)(thp < e - s ? thp : e - s);
			}
	}
	fclose(f);
	for (int r = TEXT; r <= BSS; r++) {
		double n = hi[r] > lo[r] ? (double)(hi[r] - lo[r]) : 1;

		printf("range %s bytes %lu hugetlb %.2f thp %.2f\n", names[r],
		       (unsigned long)(hi[r] - lo[r]), 100 * huge[r] / n, 100 * anon[r] / n);
	}
}

static void check_functions(void)
{
	size_t bad = 0;

	for (size_t i = 0; i < seg_nfuncs; i++)
		if (seg_funcs[i](5) != 5 + 7919 * (long)i + 1)
			bad++;
	if (bad)
		fail("%zu of %zu functions answered wrong", bad, seg_nfuncs);
	else
		printf("functions %zu ok\n", seg_nfuncs);
}

/* Page k of the data: the quad k, then 0x5a bytes; the bss as touch() wrote it. */
static size_t bad_data(long delta)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bad = 0;

	for (size_t k = 0; k < seg_data_pages; k++) {
		const unsigned char *p = seg_data_p + k * 4096;
		long q;

		memcpy(&q, p, sizeof(q));
		if (q != (long)k + delta)
			bad++;
		else
			for (size_t j = 8; j < 4096; j += 509)
				bad += p[j] != 0x5a;
	}
	for (size_t i = 0; i < seg_bss_size; i += page)
		bad += seg_bss_p[i] != (unsigned char)(i / page + (size_t)delta);
	bad += seg_small[2] != 33 + delta;
	return bad;
}

/* The protections of every mapping that meets [s, e) are PERMS. */
static void check_perms(const char *what, uintptr_t s, uintptr_t e, const char *perms)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], p[5];
	uintptr_t a, b;
	bool seen = false;

	if (!f) {
		fail("cannot open /proc/self/maps");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %4s", &a, &b, p) != 3)
			continue;
		if (p[1] == 'w' && p[2] == 'x')
			fail("%s: a writable and executable mapping: %s", what, line);
		if (b <= s || a >= e)
			continue;
		seen = true;
		if (strncmp(p, perms, 3) != 0)
			fail("%s is %s, not %s: %s", what, p, perms, line);
	}
	fclose(f);
	if (!seen)
		fail("%s: no mapping", what);
	else
		printf("%s %s ok\n", what, perms);
}

/* A child writes all of its data and bss, checks them, and exits 0. */
static void check_fork(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		fail("fork: %m");
		return;
	}
	if (pid == 0) {
		for (size_t k = 0; k < seg_data_pages; k++) {
			long q = (long)k + 1;

			memcpy(seg_data_p + k * 4096, &q, sizeof(q));
		}
		for (size_t i = 0; i < seg_bss_size; i += page)
			seg_bss_p[i]++;
		seg_small[2]++;
		_exit(bad_data(1) ? 3 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		fail("the forked child did not exit 0 (status 0x%x)", status);
	else if (bad_data(0))
		fail("the parent's data changed with the child's writes");
	else
		printf("fork ok\n");
}

static int bench(long n)
{
	size_t *order = malloc(seg_nfuncs * sizeof(*order));
	uint64_t x = 88172645463325252ULL;
	struct timespec t0, t1;
	long sum = 0;

	if (!order)
		return 1;
	for (size_t i = 0; i < seg_nfuncs; i++)
		order[i] = i;
	for (size_t i = seg_nfuncs - 1; i > 0; i--) {
		size_t j, t;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = (size_t)(x % (i + 1));
		t = order[i], order[i] = order[j], order[j] = t;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long k = 0; k < n; k++)
		sum += seg_funcs[order[(size_t)k % seg_nfuncs]](k);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("seconds %.6f sum %ld\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, sum);
	free(order);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "check";
	char c;

	dl_iterate_phdr(main_object, NULL);
	if (!strcmp(mode, "bench") && argc > 2)
		return bench(atol(argv[2]));
	touch();
	fractions();
	check_functions();
	if (bad_data(0))
		fail("the data is not what the program was built with");
	else
		printf("data ok\n");
	check_perms("text", lo[TEXT], hi[TEXT], "r-x");
	if (hi[RELRO] > lo[RELRO])
		check_perms("relro", lo[RELRO], hi[RELRO], "r--");
	check_fork();
	fflush(stdout);
	if (!strcmp(mode, "hold")) {
		printf("ready\n");
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	return failures ? 1 : 0;
}
