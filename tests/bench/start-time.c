// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * start-time N PROGRAM-A [ARG...] -- PROGRAM-B [ARG...]
 *   Runs A and B N times each, interleaved (A B, then B A, ...: each pair
 *   shares the machine's noise and neither always goes first), with stdin,
 *   stdout and stderr on /dev/null, and times each run from posix_spawn() to
 *   the end of its wait (CLOCK_MONOTONIC): no shell between, so the figure is
 *   the program's own start, run and exit. Prints "median-A-us median-B-us
 *   failures-A failures-B ratio low high" (a run that exits non-zero counts as
 *   a failure and its time is kept: start-bench.sh refuses to compare failed
 *   runs). ratio is the median of the N paired ratios A/B (run i of A against
 *   run i of B, next to each other in time), low and high the bounds of its
 *   95 % confidence interval by order statistics (no assumption on the
 *   distribution): the ranks n/2 -+ 0.98 sqrt(n) of the sorted ratios.
 * Time is measured here, compared by start-bench.sh.
 */
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One run of argv; its wall time in microseconds, -1 if it could not start. */
static double run_once(char **argv, const posix_spawn_file_actions_t *fa, int *failed)
{
	double t0 = now_us();
	pid_t pid;
	int st;

	if (posix_spawn(&pid, argv[0], fa, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		(*failed)++;
	return now_us() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The output line; sorts t[0] and t[1] after taking the paired ratios. */
static void report(double *t[2], int n, const int fail[2])
{
	double *r = calloc((size_t)n, sizeof(double)), h = 0.98 * sqrt((double)n);
	int lo, hi;

	if (!r) {
		perror("start-time");
		exit(2);
	}
	for (int i = 0; i < n; i++)
		r[i] = t[0][i] / t[1][i];
	qsort(r, (size_t)n, sizeof(*r), cmp_double);
	lo = (int)floor(n / 2.0 - h);
	hi = (int)ceil(n / 2.0 + h);
	lo = lo < 0 ? 0 : lo;
	hi = hi > n - 1 ? n - 1 : hi;
	printf("%.1f %.1f %d %d %.4f %.4f %.4f\n", median(t[0], n), median(t[1], n), fail[0],
	       fail[1], median(r, n), r[lo], r[hi]);
	free(r);
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	int n = argc > 1 ? atoi(argv[1]) : 0, split = 0, fail[2] = {0, 0};
	char **cmd[2];
	double *t[2];

	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			split = i;
	if (n < 1 || split <= 2 || split == argc - 1) {
		fprintf(stderr, "usage: start-time N PROGRAM-A [ARG...] -- PROGRAM-B [ARG...]\n");
		return 2;
	}
	argv[split] = NULL;
	cmd[0] = argv + 2;
	cmd[1] = argv + split + 1;
	t[0] = calloc((size_t)n, sizeof(double));
	t[1] = calloc((size_t)n, sizeof(double));
	if (!t[0] || !t[1] || posix_spawn_file_actions_init(&fa) != 0)
		return 2;
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			int w = (i + k) % 2;

			t[w][i] = run_once(cmd[w], &fa, &fail[w]);
			if (t[w][i] < 0) {
				fprintf(stderr, "start-time: cannot run %s\n", cmd[w][0]);
				return 2;
			}
		}
	report(t, n, fail);
	posix_spawn_file_actions_destroy(&fa);
	free(t[0]);
	free(t[1]);
	return 0;
}
