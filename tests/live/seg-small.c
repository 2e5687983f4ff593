// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seg-small: a small program with a 64-byte object in each part: text (a
 * function), rodata, data and bss. The live tests link it the ways programs
 * are linked for huge pages (libhugetlbfs 2.23's linker scripts xB and xBDT,
 * ld.hugetlbfs --hugetlbfs-align, -z max-page-size=0x200000, hugeedit) and
 * check where each object lives.
 *   seg-small: checks every object's value, then prints one line per part
 *     from its own /proc/self/smaps, "text|rodata|data|bss hugetlb|thp|base",
 *     then "data-perms PERMS" (of the mapping holding the data object),
 *     then "brk near" when the program break starts below the end of the
 *     2 MiB page holding the end of the last segment (the whole segment
 *     cannot be had there), else "brk far", then "ok".
 * Exit 0 when every check held; else the failed check on stderr, exit 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HUGE_2M ((uintptr_t)2 << 20)

char small_data[64] = "small data, initialized";
static char small_bss[64];
const char small_ro[64] = "small rodata";

__attribute__((noinline)) int small_text(int x)
{
	return x * 7 + 1;
}

/* How the mapping holding addr is backed; its permissions into perms (5 bytes). */
static const char *backing(const void *addr, char *perms)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	uintptr_t a, b, x = (uintptr_t)addr;
	bool in = false;
	const char *how = "none";
	unsigned long kb;

	if (!f)
		return "unreadable";
	while (fgets(line, sizeof(line), f)) {
		char p[5];

		if (sscanf(line, "%lx-%lx %4s ", &a, &b, p) == 3 &&
		    strchr(line, ' ') > strchr(line, '-')) {
			in = a <= x && x < b;
			if (in)
				memcpy(perms, p, sizeof(p));
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "KernelPageSize: %lu kB", &kb) == 1)
			how = kb > 4 ? "hugetlb" : "base";
		else if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 && kb &&
			 !strcmp(how, "base"))
			how = "thp";
	}
	fclose(f);
	return how;
}

static int last_end(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t *end = data;

	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD && info->dlpi_addr + p->p_vaddr + p->p_memsz > *end)
			*end = info->dlpi_addr + p->p_vaddr + p->p_memsz;
	}
	return 1; /* the executable only */
}

/* start_brk: the 47th field of /proc/self/stat. */
static uintptr_t start_brk(void)
{
	char buf[2048], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	unsigned long v = 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* Field 3 follows ") ": 44 more fields to the 47th. */
	for (int field = 2; p && field < 47; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoul(p + 1, NULL, 10);
	return v;
}

int main(void)
{
	uintptr_t end = 0;
	char perms[5] = "?", ignored[5];

	if (small_text(3) != 22)
		return fputs("seg-small: text\n", stderr), 1;
	if (strcmp(small_ro, "small rodata") != 0)
		return fputs("seg-small: rodata\n", stderr), 1;
	if (strcmp(small_data, "small data, initialized") != 0)
		return fputs("seg-small: data\n", stderr), 1;
	for (size_t i = 0; i < sizeof(small_bss); i++)
		if (small_bss[i])
			return fputs("seg-small: bss not zero\n", stderr), 1;
	small_bss[63] = 'b';
	small_data[0] = 'S';
	if (small_bss[63] != 'b' || small_data[0] != 'S')
		return fputs("seg-small: write\n", stderr), 1;
	printf("text %s\n", backing((void *)small_text, ignored));
	printf("rodata %s\n", backing(small_ro, ignored));
	printf("data %s\n", backing(small_data, perms));
	printf("bss %s\n", backing(small_bss, ignored));
	printf("data-perms %s\n", perms);
	dl_iterate_phdr(last_end, &end);
	printf("brk %s\n", start_brk() < ((end + HUGE_2M - 1) & ~(HUGE_2M - 1)) ? "near" : "far");
	puts("ok");
	return 0;
}
