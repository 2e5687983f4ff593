// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shm-test: a program that knows nothing of huge pages makes a 6 MiB SysV
 * segment with plain shmget, writes it, and prints from /proc/self/smaps how
 * much of it is in hugetlb pages: "segment_hugetlb_kb".
 */
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

int main(void)
{
	size_t size = 6u << 20;
	unsigned long huge = 0, v;
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	char line[256], *p;
	int in_seg = 0;
	FILE *f;

	if (id < 0) {
		perror("shmget");
		return 1;
	}
	p = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1) {
		perror("shmat");
		return 1;
	}
	memset(p, 3, size);
	f = fopen("/proc/self/smaps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8];

		/* A mapping's first line: "start-end perms offset dev inode path". */
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3)
			in_seg = strstr(line, "SYSV") != NULL;
		else if (in_seg && sscanf(line, "Shared_Hugetlb: %lu", &v) == 1)
			huge += v;
		else if (in_seg && sscanf(line, "Private_Hugetlb: %lu", &v) == 1)
			huge += v;
	}
	if (f)
		fclose(f);
	printf("%lu\n", huge);
	return 0;
}
