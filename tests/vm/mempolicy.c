// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mempolicy bind|preferred NODE CMD [ARG]...: run CMD under a NUMA memory
 * policy, for the VM test (busybox has no numactl). With preferred, CMD's own
 * memory may still come from the other nodes, while hugeadm --obey-mempolicy
 * grows the pool on NODE alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_PREFERRED 1
#define MPOL_BIND 2

int main(int argc, char **argv)
{
	unsigned long mask;
	char *end;
	long node;
	int mode;

	if (argc < 4) {
		fprintf(stderr, "usage: mempolicy bind|preferred NODE CMD [ARG]...\n");
		return 2;
	}
	if (strcmp(argv[1], "bind") == 0)
		mode = MPOL_BIND;
	else if (strcmp(argv[1], "preferred") == 0)
		mode = MPOL_PREFERRED;
	else {
		fprintf(stderr, "mempolicy: %s: not bind or preferred\n", argv[1]);
		return 2;
	}
	errno = 0;
	node = strtol(argv[2], &end, 10);
	if (errno || *end || end == argv[2] || node < 0 || node >= 64) {
		fprintf(stderr, "mempolicy: %s: not a node number\n", argv[2]);
		return 2;
	}
	mask = 1UL << node;
	if (syscall(SYS_set_mempolicy, mode, &mask, 64UL) < 0) {
		perror("mempolicy: set_mempolicy");
		return 1;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "mempolicy: %s: %s\n", argv[3], strerror(errno));
	return 127;
}
