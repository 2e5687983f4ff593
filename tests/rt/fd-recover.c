// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fd-recover: the runtime's first look at /proc fails for want of a file
 * descriptor; once descriptors are free again, the API works. Prints the
 * default huge page size seen with no descriptor left, then after: "-1 2097152".
 */
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include <hugetlbfs.h>

int main(void)
{
	struct rlimit rl = {64, 64};
	int fds[64], n = 0;
	long before, after;

	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 2;
	while (n < 64 && (fds[n] = dup(0)) >= 0)
		n++;
	before = gethugepagesize();
	while (n > 0)
		close(fds[--n]);
	after = gethugepagesize();
	printf("%ld %ld\n", before, after);
	return 0;
}
