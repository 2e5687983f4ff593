// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fork-test: programs that fork after their heap is on huge pages.
 *   fork-test prefork N MiB: a heap block of MiB, then N workers forked at
 *     once, each writes all of the block and checks it; the parent writes it
 *     too while they run. Exit 0 when every worker exited 0.
 *   fork-test system N: 4 threads that malloc and write, while the main
 *     thread calls system("exit 3") N times. Exit 0 when each returned 3.
 *   fork-test threads N: 4 threads, each with its own malloc arena, wait
 *     while the main thread forks N children one after the other, each of
 *     which mallocs and writes. Exit 0 when every child exited 0.
 *   fork-test race PAGES THREADS N: PAGES private huge pages (MAP_HUGETLB),
 *     filled; THREADS threads keep writing to them while the main thread
 *     forks N children one after the other, each of which checks that it
 *     sees the data. Prints "wrong W killed K of N": W children saw other
 *     data, K died of a signal. Exit 1 when W > 0.
 *   fork-test readonly: a private huge page, filled, then made read-only;
 *     every other free page of the pool taken; a child makes the page
 *     writable again, writes and checks it. Exit 0 when the child exited 0
 *     (it dies of SIGBUS when the page was left shared with the parent).
 *   fork-test workers N MiB HOW: a heap block of MiB, then N workers made
 *     one after the other by HOW (fork, _Fork, or clone without CLONE_VM),
 *     The parent prints "free F" (HugePages_Free just before the first
 *     worker); each writes all of the block, checks it, prints "worker I huge H
 *     base B" (kB of the block on huge and on base pages, from its own
 *     /proc/self/smaps), waits until every worker is made (all hold their
 *     copies at once) and exits with exit(0) (its atexit work runs: the
 *     runtime's report). The parent writes its block while they run. Exit
 *     0 when every worker exited 0 and the parent's block is intact.
 *   fork-test failing SECONDS: a 16 MiB heap block; a thread forks children
 *     that exit at once, while the main thread forks children that live 3 s,
 *     as many as RLIMIT_NPROC lets it (run it with a small one), for
 *     SECONDS. Exit 1 when a fork() of the thread that failed took more than
 *     a second (it waited for the main thread's child).
 *   fork-test clonefiles N: a 16 MiB heap block, then N times a child made
 *     by clone(CLONE_FILES) (no CLONE_VM: the memory is copied, the file
 *     descriptors shared) that opens a file and keeps it 100 ms, while the
 *     parent opens 4 and keeps them 200 ms. Exit 1 when a descriptor of
 *     either was closed under it (the runtime's pipes closed twice in the
 *     shared table), or the child's copy of the block was wrong.
 * The others print nothing on success; the reason on failure.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stop;

/* Wait for n workers; 1 when one did not exit 0 or the parent's block (all 9) changed. */
static int reap(int n, const unsigned char *block, size_t len)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "fork-test: a worker ended with status %#x\n", st);
			bad = 1;
		}
	}
	for (size_t k = 0; k < len; k += 4096)
		if (block[k] != 9)
			bad = 1;
	return bad;
}

static int prefork(int n, size_t mib)
{
	size_t len = mib << 20;
	unsigned char *block = malloc(len);
	int bad = 0;

	if (!block)
		return 1;
	memset(block, 1, len);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			/* The worker's own heap: more blocks, and the parent's one rewritten. */
			char *mine = malloc(1 << 20);

			if (!mine)
				_exit(2);
			memset(mine, i, 1 << 20);
			memset(block, (unsigned char)(i + 2), len);
			for (size_t k = 0; k < len; k += 4096)
				if (block[k] != (unsigned char)(i + 2))
					_exit(3);
			_exit(0);
		}
	}
	memset(block, 9, len);
	bad = reap(n, block, len);
	free(block);
	return bad;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		char *p = malloc(4096);

		if (p)
			memset(p, 5, 4096);
		free(p);
	}
	return NULL;
}

/* kB of [p, p + len) on huge pages (*huge) and on base pages (*base), from /proc/self/smaps. */
static void backing(const void *p, size_t len, unsigned long *huge, unsigned long *base)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t s = (uintptr_t)p, e = s + len, a = 0, b = 0;
	char line[512];
	unsigned long kb;

	*huge = *base = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2 &&
		    strchr(line, ' ') > strchr(line, '-'))
			continue;
		if (sscanf(line, "KernelPageSize: %lu kB", &kb) == 1 && a < e && b > s) {
			uintptr_t lo = a > s ? a : s, hi = b < e ? b : e;

			*(kb > 4 ? huge : base) += (hi - lo) / 1024;
		}
	}
	fclose(f);
}

/* HugePages_Free of /proc/meminfo. */
static unsigned long free_pages(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long v = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %lu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

struct worker {
	unsigned char *block;
	size_t len;
	int i;
	int gate[2]; /* closed by the parent once every worker is made */
};

/* A worker: its copy of the block written, checked, and where it lives said. */
static int work(void *arg)
{
	const struct worker *w = arg;
	unsigned long huge, base;
	char out[128];
	int n;

	memset(w->block, (unsigned char)(w->i + 2), w->len);
	for (size_t k = 0; k < w->len; k += 4096)
		if (w->block[k] != (unsigned char)(w->i + 2))
			exit(3);
	backing(w->block, w->len, &huge, &base);
	n = snprintf(out, sizeof(out), "worker %d huge %lu base %lu\n", w->i, huge, base);
	if (write(STDOUT_FILENO, out, (size_t)n) != n)
		exit(4);
	close(w->gate[1]);
	while (read(w->gate[0], out, 1) > 0)
		;
	exit(0);
}

pid_t _Fork(void);

static pid_t spawn(const char *how, struct worker *w, char *stack, size_t stack_len)
{
	pid_t pid;

	if (strcmp(how, "clone") == 0)
		return clone(work, stack + stack_len, SIGCHLD, w);
	pid = strcmp(how, "_Fork") == 0 ? _Fork() : fork();
	if (pid == 0)
		work(w);
	return pid;
}

static int workers(int n, size_t mib, const char *how)
{
	size_t len = mib << 20, stack_len = 256 << 10;
	unsigned char *block = malloc(len);
	char *stack = malloc(stack_len);
	int gate[2];

	if (!block || !stack || pipe(gate) < 0)
		return 1;
	memset(block, 1, len);
	printf("free %lu\n", free_pages());
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		struct worker w = {.block = block, .len = len, .i = i, .gate = {gate[0], gate[1]}};

		if (spawn(how, &w, stack, stack_len) < 0) {
			perror(how);
			return 1;
		}
	}
	memset(block, 9, len);
	close(gate[1]);
	return reap(n, block, len);
}

static int with_system(int n)
{
	pthread_t t[4];
	int bad = 0;

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, churn, NULL) != 0)
			return 1;
	for (int i = 0; i < n; i++) {
		int st = system("exit 3");

		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 3) {
			fprintf(stderr, "fork-test: system() returned %#x\n", st);
			bad = 1;
		}
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return bad;
}

/* fork_wait BODY ARG: run BODY(ARG) in a child (it ends with _exit), wait; its status, or -1. */
static int fork_wait(void (*body)(void *), void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0)
		body(arg);
	return waitpid(pid, &st, 0) < 0 ? -1 : st;
}

static pthread_barrier_t arenas_made, forks_done;

static void malloc_child(void *arg)
{
	char *q = malloc(100);

	(void)arg;
	if (!q)
		_exit(2);
	memset(q, 2, 100);
	_exit(0);
}

static void *arena_user(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		char *p = malloc(1000);

		if (p)
			memset(p, 3, 1000);
	}
	pthread_barrier_wait(&arenas_made);
	pthread_barrier_wait(&forks_done);
	return NULL;
}

static int threads_fork(int n)
{
	pthread_t t[4];
	int bad = 0;

	pthread_barrier_init(&arenas_made, NULL, 5);
	pthread_barrier_init(&forks_done, NULL, 5);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, arena_user, NULL) != 0)
			return 1;
	pthread_barrier_wait(&arenas_made);
	for (int i = 0; i < n; i++) {
		int st = fork_wait(malloc_child, NULL);

		if (st < 0)
			return 1;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "fork-test: a child ended with status %#x\n", st);
			bad = 1;
		}
	}
	pthread_barrier_wait(&forks_done);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return bad;
}

#define RACE_PAGE ((size_t)2 << 20)

static unsigned char *race_map;
static size_t race_pages;

static void *race_writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		for (size_t i = 0; i < race_pages && !atomic_load(&stop); i++)
			race_map[i * RACE_PAGE + 100] = 0x5a;
	return NULL;
}

/* The child of race(): its copy of the data must be the parent's, or it ends with 3. */
static void race_child(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < race_pages; i++)
		if (race_map[i * RACE_PAGE + 7] != 0x5a)
			_exit(3);
	_exit(0);
}

static int race(size_t pages, int nthreads, int n)
{
	pthread_t t[8];
	int wrong = 0, killed = 0;

	if (nthreads < 1 || nthreads > 8)
		return 2;
	race_pages = pages;
	race_map = mmap(NULL, pages * RACE_PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (race_map == MAP_FAILED) {
		perror("fork-test: mmap MAP_HUGETLB");
		return 2;
	}
	for (size_t i = 0; i < pages; i++)
		memset(race_map + i * RACE_PAGE, 0x5a, 4096);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, race_writer, NULL) != 0)
			return 2;
	for (int r = 0; r < n; r++) {
		int st = fork_wait(race_child, NULL);

		if (st < 0)
			return 2;
		if (WIFSIGNALED(st))
			killed++;
		else if (WEXITSTATUS(st) != 0)
			wrong++;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("wrong %d killed %d of %d\n", wrong, killed, n);
	return wrong > 0;
}

static unsigned char *ro_map;

static void readonly_child(void *arg)
{
	(void)arg;
	if (mprotect(ro_map, RACE_PAGE, PROT_READ | PROT_WRITE) != 0)
		_exit(4);
	memset(ro_map, 0x33, RACE_PAGE);
	for (size_t k = 0; k < RACE_PAGE; k += 4096)
		if (ro_map[k] != 0x33)
			_exit(3);
	_exit(0);
}

static int readonly(void)
{
	int st, taken = 0;

	ro_map = mmap(NULL, RACE_PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (ro_map == MAP_FAILED) {
		perror("fork-test: mmap MAP_HUGETLB");
		return 2;
	}
	memset(ro_map, 0x5a, RACE_PAGE);
	if (mprotect(ro_map, RACE_PAGE, PROT_READ) != 0)
		return 2;
	/* The rest of the pool, so that a copy-on-write in the child finds no page. */
	for (;;) {
		unsigned char *p = mmap(NULL, RACE_PAGE, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

		if (p == MAP_FAILED)
			break;
		p[0] = 1;
		taken++;
	}
	st = fork_wait(readonly_child, NULL);
	if (st < 0)
		return 2;
	if (WIFSIGNALED(st)) {
		printf("child killed by signal %d (%d pages taken)\n", WTERMSIG(st), taken);
		return 1;
	}
	return WEXITSTATUS(st);
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The thread of failing(): forks until stop; the longest failed fork(), in seconds. */
static void *short_forks(void *arg)
{
	double *worst = arg;

	while (!atomic_load(&stop)) {
		double t0 = seconds();
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0 && seconds() - t0 > *worst)
			*worst = seconds() - t0;
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

static int failing(int secs)
{
	unsigned char *block = malloc(16 << 20);
	double worst = 0, end = seconds() + secs;
	pthread_t t;

	if (!block || pthread_create(&t, NULL, short_forks, &worst) != 0)
		return 1;
	memset(block, 1, 16 << 20);
	while (seconds() < end) {
		pid_t pid = fork();

		if (pid == 0) {
			sleep(3);
			_exit(0);
		}
		if (pid < 0)
			usleep(500);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	printf("slowest failed fork %.3f s\n", worst);
	return worst > 1;
}

static unsigned char *files_block;
static size_t files_len;

/* The child of clone_files(): its own descriptor stays open while it sleeps. */
static int files_child(void *arg)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	(void)arg;
	usleep(100000);
	if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
		fprintf(stderr, "fork-test: the child's descriptor %d was closed under it\n", fd);
		return 1;
	}
	for (size_t k = 0; k < files_len; k += 4096)
		if (files_block[k] != 5)
			return 3;
	return 0;
}

static int clone_files(int n)
{
	size_t stack_len = 256 << 10;
	char *stack = malloc(stack_len);
	int bad = 0;

	files_len = 16 << 20;
	files_block = malloc(files_len);
	if (!files_block || !stack)
		return 1;
	memset(files_block, 5, files_len);
	for (int i = 0; i < n; i++) {
		int fds[4], st;
		pid_t pid = clone(files_child, stack + stack_len, CLONE_FILES | SIGCHLD, NULL);

		if (pid < 0) {
			perror("clone");
			return 1;
		}
		for (int j = 0; j < 4; j++)
			fds[j] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		usleep(200000);
		for (int j = 0; j < 4; j++) {
			if (fds[j] < 0 || fcntl(fds[j], F_GETFD) < 0) {
				fprintf(stderr,
					"fork-test: the parent's descriptor %d was closed under it\n",
					fds[j]);
				bad = 1;
			} else {
				close(fds[j]);
			}
		}
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "fork-test: a child ended with status %#x\n", st);
			bad = 1;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "prefork") == 0)
		return prefork(atoi(argv[2]), strtoul(argv[3], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "system") == 0)
		return with_system(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "threads") == 0)
		return threads_fork(atoi(argv[2]));
	if (argc == 5 && strcmp(argv[1], "race") == 0)
		return race(strtoul(argv[2], NULL, 10), atoi(argv[3]), atoi(argv[4]));
	if (argc == 2 && strcmp(argv[1], "readonly") == 0)
		return readonly();
	if (argc == 5 && strcmp(argv[1], "workers") == 0)
		return workers(atoi(argv[2]), strtoul(argv[3], NULL, 10), argv[4]);
	if (argc == 3 && strcmp(argv[1], "failing") == 0)
		return failing(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "clonefiles") == 0)
		return clone_files(atoi(argv[2]));
	fprintf(stderr,
		"usage: fork-test prefork N MiB | system N | threads N | race PAGES "
		"THREADS N | readonly | workers N MiB fork|_Fork|clone | clonefiles N | failing SECONDS\n");
	return 2;
}
