// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Preloaded into cpupcstat by tests/cli/tlb-tools.bats: a perf_event_open
 * that succeeds on a machine without counters. Each counter is a memfd that
 * holds one fixed u64 (what read() of a perf fd without read_format gives),
 * so the whole counting path runs: the ioctls fail on it (cpupcstat ignores
 * their result) and the read gets the value. Per counter opened:
 * cycles 1000000000, instructions 2000000000, dTLB load misses 3000000,
 * iTLB load misses 1000000, a raw event (walk cycles) 50000000.
 * Each open is also counted in $FAKE_PERF_LOG (one line "pid type config"),
 * when set. Other system calls go to libc's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t value_of(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_CPU_CYCLES)
		return 1000000000;
	if (a->type == PERF_TYPE_HARDWARE && a->config == PERF_COUNT_HW_INSTRUCTIONS)
		return 2000000000;
	if (a->type == PERF_TYPE_HW_CACHE && (a->config & 0xff) == PERF_COUNT_HW_CACHE_DTLB)
		return 3000000;
	if (a->type == PERF_TYPE_HW_CACHE && (a->config & 0xff) == PERF_COUNT_HW_CACHE_ITLB)
		return 1000000;
	return 50000000;
}

static long fake_open(const struct perf_event_attr *a, long pid, unsigned long flags)
{
	uint64_t v = value_of(a);
	const char *log = getenv("FAKE_PERF_LOG");
	int fd;

	if (pid != 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return -1;
	fd = memfd_create("fake-perf", (flags & PERF_FLAG_FD_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (pwrite(fd, &v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
		close(fd);
		errno = EIO;
		return -1;
	}
	if (log) {
		FILE *f = fopen(log, "a");

		if (f) {
			fprintf(f, "%ld %u %llu\n", pid, a->type, (unsigned long long)a->config);
			fclose(f);
		}
	}
	return fd;
}

long syscall(long nr, ...)
{
	long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	long arg[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		arg[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_perf_event_open)
		return fake_open((const struct perf_event_attr *)arg[0], arg[1],
				 (unsigned long)arg[4]);
	return real(nr, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
}
