// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hk-usage-hold PRIVATE SHARED SHM ATTACHED: hold 2 MiB huge pages of each
 * kind that hugeadm --usage tells apart: PRIVATE pages of a private anonymous
 * mapping and SHARED of a shared one (MAP_HUGETLB, all faulted), a SysV
 * SHM_HUGETLB segment of SHM pages, faulted and then detached (shmdt), and one
 * of ATTACHED pages that stays attached. Neither is IPC_RMID'd here: the test
 * removes them. Prints "shmid N M" (-1 for a segment of 0 pages) and "ready",
 * then waits for a signal, at most 600 s.
 *
 * hk-usage-hold heap MiB: malloc MiB of memory in blocks of 100 KiB (below
 * malloc's mmap threshold: the heap), write it all, print "ready" and wait
 * the same way: the process --pages-needed estimates.
 *
 * hk-usage-hold shared SHARED PRIVATE: map SHARED MiB of MAP_SHARED|MAP_ANONYMOUS
 * memory and PRIVATE MiB of private anonymous memory, each between two
 * PROT_NONE pages (so that neither merges with a neighbour), touch one page
 * of each, print "ready" and wait the same way: the database that
 * --pages-needed must count at its mappings' size. 0 maps nothing.
 *
 * hk-usage-hold plain MiB: an ordinary SysV segment (no SHM_HUGETLB, 4 kB
 * pages) of MiB, attached, every byte written, marked IPC_RMID (it goes
 * with the process); prints "shmid N" and waits the same way: a segment whose
 * rss is whole huge pages that --usage must not take for a huge one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#ifndef SHM_HUGETLB
#define SHM_HUGETLB 04000
#endif

#define HUGE (2UL << 20)

static char *map(unsigned long pages, int flags)
{
	char *p;

	if (!pages)
		return NULL;
	p = mmap(NULL, pages * HUGE, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS | MAP_HUGETLB,
		 -1, 0);
	if (p == MAP_FAILED) {
		perror("hk-usage-hold: mmap");
		exit(1);
	}
	for (unsigned long i = 0; i < pages; i++)
		p[i * HUGE] = 1;
	return p;
}

/* A segment of pages huge pages, faulted; detached when detach. -1: none asked. */
static int segment(unsigned long pages, int detach)
{
	char *p;
	int id;

	if (!pages)
		return -1;
	id = shmget(IPC_PRIVATE, pages * HUGE, IPC_CREAT | SHM_HUGETLB | 0600);
	if (id < 0) {
		perror("hk-usage-hold: shmget");
		exit(1);
	}
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		perror("hk-usage-hold: shmat");
		shmctl(id, IPC_RMID, NULL);
		exit(1);
	}
	for (unsigned long i = 0; i < pages; i++)
		p[i * HUGE] = 1;
	if (detach)
		shmdt(p);
	return id;
}

static int heap(unsigned long mib)
{
	const size_t block = 100 * 1024;

	for (unsigned long i = 0; i < mib * 1024 * 1024 / block; i++) {
		char *p = malloc(block);

		if (!p) {
			perror("hk-usage-hold: malloc");
			return 1;
		}
		memset(p, 1, block);
	}
	printf("ready\n");
	fflush(stdout);
	alarm(600);
	pause();
	return 0;
}

/* MiB of anonymous memory (flags MAP_SHARED or MAP_PRIVATE) between two guard pages, one page touched. */
static int guarded(unsigned long mib, int flags)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p;

	if (!mib)
		return 0;
	p = mmap(NULL, (mib << 20) + 2 * (size_t)pg, PROT_NONE, flags | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p + pg, mib << 20, PROT_READ | PROT_WRITE) < 0) {
		perror("hk-usage-hold: mmap");
		return 1;
	}
	p[pg] = 1;
	return 0;
}

static int database(unsigned long shared_mib, unsigned long private_mib)
{
	if (guarded(shared_mib, MAP_SHARED) || guarded(private_mib, MAP_PRIVATE))
		return 1;
	printf("ready\n");
	fflush(stdout);
	alarm(600);
	pause();
	return 0;
}

static int plain(unsigned long mib)
{
	int id = shmget(IPC_PRIVATE, mib << 20, IPC_CREAT | 0600);
	char *p;

	if (id < 0) {
		perror("hk-usage-hold: shmget");
		return 1;
	}
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1) {
		perror("hk-usage-hold: shmat");
		return 1;
	}
	memset(p, 1, mib << 20);
	printf("shmid %d\n", id);
	fflush(stdout);
	alarm(600);
	pause();
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long priv, shared, shm, attached;
	int id, id2;

	if (argc == 3 && strcmp(argv[1], "heap") == 0)
		return heap(strtoul(argv[2], NULL, 10));
	if (argc == 4 && strcmp(argv[1], "shared") == 0)
		return database(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "plain") == 0)
		return plain(strtoul(argv[2], NULL, 10));

	if (argc != 5) {
		fprintf(stderr,
			"usage: hk-usage-hold PRIVATE SHARED SHM ATTACHED | heap MiB | plain MiB |\n"
			"       shared SHARED PRIVATE\n");
		return 2;
	}
	priv = strtoul(argv[1], NULL, 10);
	shared = strtoul(argv[2], NULL, 10);
	shm = strtoul(argv[3], NULL, 10);
	attached = strtoul(argv[4], NULL, 10);
	map(priv, MAP_PRIVATE);
	map(shared, MAP_SHARED);
	id = segment(shm, 1);
	id2 = segment(attached, 0);
	printf("shmid %d %d\nready\n", id, id2);
	fflush(stdout);
	alarm(600);
	pause();
	return 0;
}
