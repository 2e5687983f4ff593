// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * collapse-hold MODE MIB: a program that knows nothing of huge pages for
 * hugectl --collapse (tests/live/collapse.bats). It mallocs MIB MiB, writes
 * every page of it (plain memory: no madvise, so with THP in madvise mode
 * it is on base pages), prints "ready" and waits for a signal. MODE:
 *   plain       as above;
 *   nohugepage  the block marked MADV_NOHUGEPAGE before it is written;
 *   nothp       prctl(PR_SET_THP_DISABLE) first: no THP for the process.
 * Its text holds 6 MiB of filler, linked 2 MiB-aligned (-z max-page-size),
 * so that its executable mapping has whole 2 MiB parts that agree with the
 * file's offsets: the text collapse is asked for, and the kernel answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

__asm__(".pushsection .text.filler,\"ax\",@progbits\n"
	".fill 6291456, 1, 0xcc\n"
	".popsection\n");

int main(int argc, char **argv)
{
	size_t size, page = (size_t)sysconf(_SC_PAGESIZE);
	char *p;

	if (argc != 3 || (size = strtoul(argv[2], NULL, 10) << 20) == 0) {
		fprintf(stderr, "usage: collapse-hold plain|nohugepage|nothp MIB\n");
		return 2;
	}
	if (strcmp(argv[1], "nothp") == 0 && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0) {
		perror("collapse-hold: prctl");
		return 1;
	}
	p = malloc(size);
	if (!p) {
		perror("collapse-hold: malloc");
		return 1;
	}
	if (strcmp(argv[1], "nohugepage") == 0) {
		char *a = (char *)((unsigned long)p & ~(page - 1));

		if (madvise(a, size + (size_t)(p - a), MADV_NOHUGEPAGE) < 0) {
			perror("collapse-hold: madvise");
			return 1;
		}
	}
	for (size_t i = 0; i < size; i += page)
		p[i] = (char)i | 1;
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
