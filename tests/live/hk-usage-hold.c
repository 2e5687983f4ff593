// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hk-usage-hold PRIVATE SHARED SHM: hold 2 MiB huge pages of each kind that
 * hugeadm --usage tells apart: PRIVATE pages of a private anonymous mapping
 * and SHARED of a shared one (MAP_HUGETLB, all faulted), and a SysV
 * SHM_HUGETLB segment of SHM pages, faulted and then detached (shmdt; never
 * IPC_RMID: the test removes it). Prints "shmid N" (-1 when SHM is 0) and
 * "ready", then waits for a signal, at most 600 s.
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

int main(int argc, char **argv)
{
	unsigned long priv, shared, shm;
	int id = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: hk-usage-hold PRIVATE SHARED SHM\n");
		return 2;
	}
	priv = strtoul(argv[1], NULL, 10);
	shared = strtoul(argv[2], NULL, 10);
	shm = strtoul(argv[3], NULL, 10);
	map(priv, MAP_PRIVATE);
	map(shared, MAP_SHARED);
	if (shm) {
		char *p;

		id = shmget(IPC_PRIVATE, shm * HUGE, IPC_CREAT | SHM_HUGETLB | 0600);
		if (id < 0) {
			perror("hk-usage-hold: shmget");
			return 1;
		}
		p = shmat(id, NULL, 0);
		if (p == (void *)-1) {
			perror("hk-usage-hold: shmat");
			shmctl(id, IPC_RMID, NULL);
			return 1;
		}
		for (unsigned long i = 0; i < shm; i++)
			p[i * HUGE] = 1;
		shmdt(p);
	}
	printf("shmid %d\nready\n", id);
	fflush(stdout);
	alarm(600);
	pause();
	return 0;
}
