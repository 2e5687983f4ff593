// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cpupcstat: how much of a program's time goes to TLB misses.
 *
 * With hardware counters (perf_event_open: dTLB and iTLB load misses, cycles,
 * instructions, and page-walk cycles where a raw event for them is given) it
 * counts a command or a running process and prints the miss rate and the
 * article's estimate of the time spent in misses: walk cycles, or misses times
 * the cost of one miss (tlbmiss_cost's figure), over the cycles of the run.
 *
 * Without counters (a VM, a paranoid kernel) it says so in one line. --compare
 * needs none: it runs the command plain and under hugectl in rounds (one run
 * each way, the order alternating), discards the rounds where a run lost time
 * to other tasks, and reports the median saving of the rounds kept with its
 * 95 % interval; rounds go on until the interval is within the bound or the
 * budget is spent (tools/common/measure.h holds the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "measure-fake.h"
#include "measure.h"
#include "opts.h"
#include "util.h"

enum {
	OPT_COMPARE = HK_OPT_LONG_BASE,
	OPT_WALK_EVENT,
	OPT_BUDGET,
	OPT_HEAP, /* OPT_HEAP to OPT_THP: in the order of hugectl_flag */
	OPT_SHM,
	OPT_TEXT,
	OPT_DATA,
	OPT_BSS,
	OPT_THP,
};

// clang-format off
static const struct hkt_opt opts[] = {
	{ "pid",          'p', HK_ARG_REQUIRED, 'p', "PID", "count a running process instead of a command", 0 },
	{ "time",         't', HK_ARG_REQUIRED, 't', "SECONDS", "how long to count the process (default 10)", 0 },
	{ "cost",         'c', HK_ARG_REQUIRED, 'c', "CYCLES", "the cost of one TLB miss (default: measured\nby tlbmiss_cost when walk cycles are not counted)", 0 },
	{ "walk-event",   0,   HK_ARG_REQUIRED, OPT_WALK_EVENT, "RAW", "the CPU's raw event for page-walk cycles\n(rNNN or NNN, hex)", 0 },
	{ "compare",      0,   HK_ARG_NONE,     OPT_COMPARE, NULL, "run the command plain and under hugectl, alternately;\nno counters needed", 0 },
	{ "runs",         'n', HK_ARG_REQUIRED, 'n', "N", "--compare: at most N rounds, one run each way\n(default 30)", 0 },
	{ "budget",       0,   HK_ARG_REQUIRED, OPT_BUDGET, "SECONDS", "--compare: start no round after SECONDS\n(default 60)", 0 },
	{ "heap",         0,   HK_ARG_NONE,     OPT_HEAP, NULL, "--compare: hugectl --heap (the default)", 0 },
	{ "shm",          0,   HK_ARG_NONE,     OPT_SHM, NULL, "--compare: hugectl --shm", 0 },
	{ "text",         0,   HK_ARG_NONE,     OPT_TEXT, NULL, "--compare: hugectl --text", 0 },
	{ "data",         0,   HK_ARG_NONE,     OPT_DATA, NULL, "--compare: hugectl --data", 0 },
	{ "bss",          0,   HK_ARG_NONE,     OPT_BSS, NULL, "--compare: hugectl --bss", 0 },
	{ "segments",     0,   HK_ARG_NONE,     'S', NULL, "--compare: hugectl --text --data --bss", 0 },
	{ "thp",          0,   HK_ARG_NONE,     OPT_THP, NULL, "--compare: hugectl --thp (transparent huge pages)", 0 },
	{ "json",         'J', HK_ARG_NONE,     'J', NULL, "print the report as JSON", 0 },
	{ "help",         'h', HK_ARG_NONE,     'h', NULL, "display this help", 0 },
	{ "version",      'V', HK_ARG_NONE,     'V', NULL, "display version", 0 },
	{ "list-options", 0,   HK_ARG_NONE,     HK_OPT_LIST_OPTIONS, NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

/* hugectl's option for each of ours, OPT_HEAP to OPT_THP in order. */
static const char *const hugectl_flag[] = {"--heap", "--shm", "--text", "--data", "--bss", "--thp"};

#define MAX_RUNS 10000
/* --compare's bound: the interval within max(1 point, 10 % of the saving). */
#define BOUND_POINTS 1.0
#define BOUND_PCT 10.0
#define MAX_TIME 86400

__attribute__((noreturn)) static void usage(void)
{
	printf("Usage:\n %s [options] [--] command [arguments]\n %s [options] -p PID\n\n",
	       hkt_prog(), hkt_prog());
	printf("How much of a program's time goes to TLB misses: with hardware counters,\n"
	       "the miss rate and the share of the time; without, --compare runs it plain\n"
	       "and on huge pages (hugectl) and reports the time each way.\n\n");
	printf("Options:\n");
	hkt_opts_print_help(stdout, opts);
	printf("\nSee cpupcstat(8).\n");
	exit(HK_EXIT_SUCCESS);
}

/* A whole positive number within [1, max] or exit with a message naming the option. */
static uint64_t parse_num(const char *opt, const char *s, uint64_t max)
{
	uint64_t v;

	if (hk_parse_count(s, &v) < 0 || v < 1 || v > max) {
		fprintf(stderr, "%s: %s: '%s' is not a number from 1 to %" PRIu64 "\n", hkt_prog(),
			opt, s, max);
		hkt_errtryhelp();
	}
	return v;
}

/*
 * A raw perf event as perf spells it: rNNN, or NNN, with 1 to 16 hex digits,
 * not 0; nothing else (no sign, space or 0x). Else exit with a message naming
 * the option and the value.
 */
static uint64_t parse_raw_event(const char *opt, const char *s)
{
	const char *d = s + (*s == 'r');
	uint64_t v = 0;
	size_t n = strspn(d, "0123456789abcdefABCDEF");

	if (n == 0 || n > 16 || d[n]) {
		fprintf(stderr, "%s: %s: '%s' is not a raw event (rNNN, hex digits)\n", hkt_prog(),
			opt, s);
		hkt_errtryhelp();
	}
	for (size_t i = 0; i < n; i++)
		v = v << 4 | (uint64_t)(d[i] <= '9' ? d[i] - '0' : (d[i] | 0x20) - 'a' + 10);
	if (!v) {
		fprintf(stderr, "%s: %s: '%s' is not a raw event (0 is none)\n", hkt_prog(), opt,
			s);
		hkt_errtryhelp();
	}
	return v;
}

/*
 * perf_event_open, or the error HK_FAULT_PERF names (ENOENT, EOPNOTSUPP,
 * EACCES, ...): the tests' way to the paths of a machine without counters,
 * or with them, whichever this one is.
 */
static int perf_open(struct perf_event_attr *a, pid_t pid, int group)
{
	const char *f = secure_getenv("HK_FAULT_PERF");
	long fd;

	if (f && *f) {
		if (!strcmp(f, "EACCES"))
			return -EACCES;
		if (!strcmp(f, "EOPNOTSUPP"))
			return -EOPNOTSUPP;
		return -ENOENT;
	}
	fd = syscall(SYS_perf_event_open, a, pid, -1, group, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

enum {
	EV_CYCLES,
	EV_INSTR,
	EV_DTLB,
	EV_ITLB,
	EV_WALK,
	EV_N
};

struct counters {
	int fd[EV_N];
};

static void counters_close(struct counters *c)
{
	for (int i = 0; i < EV_N; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
}

/*
 * Open the counters for pid (disabled; enabled at exec when on_exec). The
 * dTLB counter is the one that must exist; the others are taken where the
 * CPU has them. Returns 0 or the -errno of the dTLB counter.
 */
static int counters_open(struct counters *c, pid_t pid, bool on_exec, uint64_t walk_raw)
{
	static const struct {
		uint32_t type;
		uint64_t config;
	} ev[EV_N] = {
		[EV_CYCLES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
		[EV_INSTR] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
		[EV_DTLB] = {PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB |
							 (PERF_COUNT_HW_CACHE_OP_READ << 8) |
							 (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
		[EV_ITLB] = {PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_ITLB |
							 (PERF_COUNT_HW_CACHE_OP_READ << 8) |
							 (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
		[EV_WALK] = {PERF_TYPE_RAW, 0},
	};
	int rc = 0;

	for (int i = 0; i < EV_N; i++) {
		struct perf_event_attr a = {0};

		c->fd[i] = -1;
		if (i == EV_WALK && !walk_raw)
			continue;
		a.size = sizeof(a);
		a.type = ev[i].type;
		a.config = i == EV_WALK ? walk_raw : ev[i].config;
		a.disabled = 1;
		a.enable_on_exec = on_exec;
		a.inherit = 1;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		c->fd[i] = perf_open(&a, pid, -1);
		if (c->fd[i] < 0) {
			if (i == EV_DTLB)
				rc = c->fd[i];
			c->fd[i] = -1;
		}
	}
	if (rc < 0)
		counters_close(c);
	return rc;
}

static void counters_ioctl(struct counters *c, unsigned long req)
{
	for (int i = 0; i < EV_N; i++)
		if (c->fd[i] >= 0)
			(void)ioctl(c->fd[i], req, 0);
}

/* Add the counts of c to out (a counter is had when one thread's could be read). */
static void counters_read(struct counters *c, struct hkt_tlb_counts *out)
{
	uint64_t *val[EV_N] = {&out->cycles, &out->instructions, &out->dtlb_misses,
			       &out->itlb_misses, &out->walk_cycles};
	bool *has[EV_N] = {&out->has_cycles, &out->has_instructions, &out->has_dtlb, &out->has_itlb,
			   &out->has_walk};
	uint64_t v;

	for (int i = 0; i < EV_N; i++)
		if (c->fd[i] >= 0 && read(c->fd[i], &v, sizeof(v)) == (ssize_t)sizeof(v)) {
			*val[i] += v;
			*has[i] = true;
		}
}

/* The counters of each thread of a process (perf_event_open counts one thread). */
struct threads {
	struct counters *c;
	size_t n;
};

static void threads_close(struct threads *t)
{
	for (size_t i = 0; i < t->n; i++)
		counters_close(&t->c[i]);
	free(t->c);
	t->c = NULL;
	t->n = 0;
}

static void threads_ioctl(struct threads *t, unsigned long req)
{
	for (size_t i = 0; i < t->n; i++)
		counters_ioctl(&t->c[i], req);
}

static void threads_read(struct threads *t, struct hkt_tlb_counts *out)
{
	for (size_t i = 0; i < t->n; i++)
		counters_read(&t->c[i], out);
}

/*
 * Open the counters of each thread of pid, from its task directory; a thread
 * that ends meanwhile is left out. Returns 0, -ESRCH when no thread is left,
 * or the -errno of the first thread whose dTLB counter could not be opened
 * (or of the directory).
 */
static int threads_open(struct threads *t, pid_t pid, uint64_t walk_raw)
{
	struct hk_ctx *ctx = NULL;
	int *tids = NULL;
	size_t n = 0;
	int rc;

	t->c = NULL;
	t->n = 0;
	rc = hk_new(NULL, &ctx);
	if (rc == 0)
		rc = hk_process_threads(ctx, (int)pid, &tids, &n);
	hk_unref(ctx);
	if (rc == 0 && !(t->c = calloc(n, sizeof(*t->c))))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		rc = counters_open(&t->c[t->n], (pid_t)tids[i], false, walk_raw);
		if (rc == 0)
			t->n++;
		else if (rc == -ESRCH)
			rc = 0; /* ended meanwhile */
	}
	free(tids);
	if (rc == 0 && t->n == 0)
		rc = -ESRCH;
	if (rc < 0)
		threads_close(t);
	return rc;
}

/* The one line of a machine without counters; true when it was that, not another failure. */
static bool say_no_counters(int err, bool json)
{
	bool none = err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -EINVAL;
	const char *why = none ? "no hardware TLB counters on this machine"
			       : "the hardware counters are not allowed "
				 "(kernel.perf_event_paranoid, CAP_PERFMON)";

	if (json) {
		struct hkt_json j;

		hkt_json_init(&j, stdout);
		hkt_json_open_object(&j, NULL);
		hkt_json_open_object(&j, "cpupcstat");
		hkt_json_bool(&j, "counters", false);
		hkt_json_string(&j, "reason", why);
		hkt_json_string(&j, "error", strerror(-err));
		hkt_json_bool(&j, "compare_available", true);
		hkt_json_close_object(&j);
		hkt_json_close_object(&j);
		hkt_json_end(&j);
	}
	fprintf(stderr, "%s: %s (perf_event_open: %s); --compare measures without them\n",
		hkt_prog(), why, strerror(-err));
	return none;
}

/*
 * A child running argv with its stdout on our stderr (ours is the report's); -errno.
 * With a gate (a pipe, or -1s), the child waits until the parent closes the
 * pipe's write end; the child's own copy of that end is closed first, or the
 * read would never see the end of the pipe.
 */
/*
 * In a child before it execs what the caller named (the command, or a
 * tlbmiss_cost found on the caller's PATH): a set-user-ID or file-capability
 * cpupcstat (for the counters) runs it with the caller's identity, never its
 * own. Exits 127 when the privileges cannot be given up.
 */
static void child_drop_privileges(void)
{
	int rc;

	if (!hk_privileged_for_other())
		return;
	rc = hk_drop_privileges();
	if (rc < 0) {
		fprintf(stderr, "%s: cannot give up privileges: %s\n", hkt_prog(), strerror(-rc));
		_exit(127);
	}
}

static pid_t spawn(char *const *argv, const int gate[2])
{
	pid_t pid = fork();

	if (pid == 0) {
		char c;

		child_drop_privileges();

		if (gate[0] >= 0) {
			close(gate[1]);
			/* Wait for the counters: the parent closes its end when they are open. */
			while (read(gate[0], &c, 1) < 0 && errno == EINTR)
				;
			close(gate[0]);
		}
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", hkt_prog(), argv[0], strerror(errno));
		_exit(127);
	}
	return pid < 0 ? -errno : pid;
}

/* Wait for pid; 0 when it exited with 0, else a message and -1. */
static int reap(pid_t pid, const char *what)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "%s: waitpid: %s\n", hkt_prog(), strerror(errno));
			return -1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		fprintf(stderr, "%s: %s exited with status %d\n", hkt_prog(), what,
			WEXITSTATUS(st));
	else
		fprintf(stderr, "%s: %s was killed by signal %d\n", hkt_prog(), what, WTERMSIG(st));
	return -1;
}

/* The tool NAME beside this program when it was run by a path, else NAME (found on PATH). */
static char *sibling(const char *argv0, const char *name)
{
	const char *slash = strrchr(argv0, '/');
	char *p;

	if (!slash)
		return strdup(name);
	if (asprintf(&p, "%.*s/%s", (int)(slash - argv0), argv0, name) < 0)
		return NULL;
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return strdup(name);
}

/* The tlbmiss_cost figure, measured by the tlbmiss_cost beside us or on PATH; 0 when none. */
static double measure_cost(const char *argv0)
{
	char *tool = sibling(argv0, "tlbmiss_cost"), line[128];
	double cost = 0, v;
	int fd[2], st;
	pid_t pid;
	FILE *f;

	if (!tool || pipe2(fd, O_CLOEXEC) < 0) {
		free(tool);
		return 0;
	}
	fprintf(stderr, "%s: measuring the cost of a TLB miss (%s)\n", hkt_prog(), tool);
	pid = fork();
	if (pid == 0) {
		child_drop_privileges();
		if (dup2(fd[1], STDOUT_FILENO) < 0)
			_exit(127);
		execlp(tool, tool, "--quiet", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = pid > 0 ? fdopen(fd[0], "r") : NULL;
	if (!f)
		close(fd[0]);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "TLB_MISS_COST=%lf", &v) == 1)
			cost = v;
	if (f)
		fclose(f);
	if (pid > 0 && (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)))
		cost = 0;
	free(tool);
	return cost;
}

struct plan {
	char **cmd;
	pid_t pid;
	uint64_t time_s, runs, walk_raw;
	double cost, budget_s;
	bool compare, json;
	const char *huge_opts[8];
	size_t n_huge;
};

static void add_huge_opt(struct plan *p, const char *o)
{
	for (size_t i = 0; i < p->n_huge; i++)
		if (!strcmp(p->huge_opts[i], o))
			return;
	if (p->n_huge < sizeof(p->huge_opts) / sizeof(p->huge_opts[0]) - 1)
		p->huge_opts[p->n_huge++] = o;
}

/* --compare's commands, and how each way's runs went. */
struct compare {
	char **argv[2]; /* plain, under hugectl */
};

/*
 * Run argv once: its wall time (fork to reap) and whether it lost time to
 * other tasks (hkt_run_disturbed). 0, or -ECHILD after a message when it
 * failed, or -errno of fork.
 */
static int time_run(char **argv, const char *what, double *wall, enum hkt_disturb *d)
{
	double t0 = hkt_now(), cpu;
	pid_t pid = spawn(argv, (const int[2]){-1, -1});
	struct rusage ru;
	int st;

	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", hkt_prog(), strerror(-pid));
		return pid;
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "%s: waitpid: %s\n", hkt_prog(), strerror(errno));
			return -ECHILD;
		}
	*wall = hkt_now() - t0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		if (WIFEXITED(st))
			fprintf(stderr, "%s: %s exited with status %d\n", hkt_prog(), what,
				WEXITSTATUS(st));
		else
			fprintf(stderr, "%s: %s was killed by signal %d\n", hkt_prog(), what,
				WTERMSIG(st));
		return -ECHILD;
	}
	cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	      ru.ru_stime.tv_usec / 1e6;
	*d = hkt_run_disturbed(*wall, cpu, (uint64_t)ru.ru_nivcsw);
	return 0;
}

/* hkt_measure_cfg's sample: one round, plain first in even rounds, hugectl first in odd ones. */
static int compare_sample(void *ctx, size_t round, struct hkt_sample *s)
{
	struct compare *c = ctx;

	for (int i = 0; i < 2; i++) {
		int way = (int)((round + (size_t)i) % 2);
		enum hkt_disturb d = HK_KEPT;
		char what[64];
		int rc;

		snprintf(what, sizeof(what), "run %zu %s", round + 1,
			 way ? "under hugectl" : "plain");
		rc = time_run(c->argv[way], what, way ? &s->b : &s->a, &d);
		if (rc < 0)
			return rc;
		if (d != HK_KEPT)
			s->disturbed = d;
	}
	return 0;
}

static double compare_clock(void *ctx)
{
	(void)ctx;
	return hkt_now();
}

static void json_way(struct hkt_json *j, const char *key, const double *t, size_t n)
{
	double m = hkt_median(t, n);

	hkt_json_open_object(j, key);
	hkt_json_double(j, "median_s", m, 6);
	hkt_json_double(j, "spread_pct", hkt_spread_pct(t, n, m), 1);
	hkt_json_open_array(j, "times_s");
	for (size_t i = 0; i < n; i++)
		hkt_json_double(j, NULL, t[i], 6);
	hkt_json_close_array(j);
	hkt_json_close_object(j);
}

static void compare_json(const struct plan *p, const struct hkt_measure *m,
			 const struct hkt_measure_cfg *cfg)
{
	struct hkt_json j;

	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	hkt_json_open_object(&j, "cpupcstat");
	hkt_json_string(&j, "mode", "compare");
	hkt_json_open_array(&j, "command");
	for (size_t i = 0; p->cmd[i]; i++)
		hkt_json_string(&j, NULL, p->cmd[i]);
	hkt_json_close_array(&j);
	hkt_json_open_array(&j, "hugectl");
	for (size_t i = 0; i < p->n_huge; i++)
		hkt_json_string(&j, NULL, p->huge_opts[i]);
	hkt_json_close_array(&j);
	hkt_json_u64(&j, "runs", m->kept);
	json_way(&j, "plain", m->a, m->kept);
	json_way(&j, "huge", m->b, m->kept);
	hkt_json_double(&j, "saving_pct", m->iv.est, 2);
	hkt_measure_json(&j, m, cfg, "bound_points");
	hkt_json_close_object(&j);
	hkt_json_close_object(&j);
	hkt_json_end(&j);
}

/* "%.Nf" of v into buf, or "unknown" for NaN and infinities; buf. */
static const char *fmt_known(char *buf, size_t n, int prec, double v)
{
	if (isfinite(v))
		snprintf(buf, n, "%.*f", prec, v);
	else
		snprintf(buf, n, "unknown");
	return buf;
}

/*
 * The report: the rounds and why it is not measurable (with the interval,
 * where there is one) on stderr; the medians, the interval, the verdict and
 * the saving on stdout, "unknown" for what no round kept could give.
 */
static void compare_text(const struct plan *p, const struct hkt_measure *m,
			 const struct hkt_measure_cfg *cfg)
{
	const char *why = hkt_measure_why_not(m, cfg);
	bool has_iv = isfinite(m->iv.low) && isfinite(m->iv.high);
	char b1[32], b2[32];

	fprintf(stderr,
		"%s: %zu rounds: %zu kept, %zu discarded (a run lost time to other tasks); "
		"%.2f s of %.2f s; stopped: %s\n",
		hkt_prog(), m->rounds, m->kept,
		m->discarded[HK_SWITCHED] + m->discarded[HK_STALLED], m->used_s, cfg->budget_s,
		hkt_stop_name(m->stop));
	if (why && has_iv)
		fprintf(stderr,
			"%s: not measurable: %s (95 %% interval %.1f to %.1f %%, bound %.1f)\n",
			hkt_prog(), why, m->iv.low, m->iv.high, m->bound);
	else if (why)
		fprintf(stderr, "%s: not measurable: %s (%zu kept, 6 needed)\n", hkt_prog(), why,
			m->kept);
	printf("runs: %zu each way, alternately, median wall-clock time\n", m->kept);
	printf("plain:    %10s%s\n", fmt_known(b1, sizeof(b1), 3, hkt_median(m->a, m->kept)),
	       m->kept ? " s" : "");
	printf("hugectl");
	for (size_t i = 0; i < p->n_huge; i++)
		printf(" %s", p->huge_opts[i]);
	printf(": %s%s\n", fmt_known(b1, sizeof(b1), 3, hkt_median(m->b, m->kept)),
	       m->kept ? " s" : "");
	if (has_iv)
		printf("interval_pct=%s,%s\n", fmt_known(b1, sizeof(b1), 1, m->iv.low),
		       fmt_known(b2, sizeof(b2), 1, m->iv.high));
	else
		printf("interval_pct=unknown\n");
	printf("measurable=%s\n", m->measurable ? "yes" : "no");
	printf("saving_pct=%s\n", fmt_known(b1, sizeof(b1), 1, m->iv.est));
}

static int do_compare(struct plan *p, const char *argv0)
{
	struct compare c = {{p->cmd, NULL}};
	struct hkt_measure_cfg cfg = {
		.kind = HK_VALUE_SAVING,
		.bound = {BOUND_POINTS, BOUND_PCT},
		.positive = false,
		.min_rounds = 6,
		.max_rounds = p->runs,
		.budget_s = p->budget_s,
		.sample = compare_sample,
		.clock = compare_clock,
		.ctx = &c,
	};
	struct hkt_measure m = {0};
	size_t ncmd = 0, k = 0;
	char **hargv, *hugectl;
	int rc = -1;
#ifdef HK_MEASURE_FAKE
	struct hkt_fake f = {0};

	if (getauxval(AT_SECURE) && getenv("HK_MEASURE_FAKE"))
		fprintf(stderr, "%s: a privileged run ignores HK_MEASURE_FAKE\n", hkt_prog());
	if (hkt_fake_hook(&f, &cfg) < 0)
		return -1;
#endif

	while (p->cmd[ncmd])
		ncmd++;
	hugectl = sibling(argv0, "hugectl");
	hargv = calloc(ncmd + p->n_huge + 3, sizeof(*hargv));
	if (!hugectl || !hargv) {
		fprintf(stderr, "%s: %s\n", hkt_prog(), strerror(ENOMEM));
		goto out;
	}
	hargv[k++] = hugectl;
	for (size_t i = 0; i < p->n_huge; i++)
		hargv[k++] = (char *)p->huge_opts[i];
	hargv[k++] = (char *)"--";
	for (size_t i = 0; i < ncmd; i++)
		hargv[k++] = p->cmd[i];
	c.argv[1] = hargv;
	rc = hkt_measure_run(&cfg, &m);
	if (rc == -ENOMEM)
		fprintf(stderr, "%s: %s\n", hkt_prog(), strerror(ENOMEM));
	if (rc < 0)
		goto out;
	if (p->json)
		compare_json(p, &m, &cfg);
	else
		compare_text(p, &m, &cfg);
out:
	hkt_measure_fini(&m);
#ifdef HK_MEASURE_FAKE
	hkt_fake_fini(&f);
#endif
	free(hargv);
	free(hugectl);
	return rc < 0 ? -1 : 0;
}

/* What do_count counts: the command, behind its start gate, or each thread of --pid's process. */
struct target {
	pid_t pid;
	int gate[2];	   /* the command's start gate (spawn) */
	struct counters c; /* the command's counters */
	struct threads th; /* --pid's, one set per thread */
	size_t nthreads;   /* --pid's threads counted */
};

/* The command started, waiting at its gate, or --pid's process found; -1 after a message. */
static int target_start(struct target *t, const struct plan *p)
{
	if (!p->cmd) {
		if (kill(t->pid, 0) < 0 && errno == ESRCH) {
			fprintf(stderr, "%s: --pid: no process %d\n", hkt_prog(), (int)t->pid);
			return -1;
		}
		return 0;
	}
	if (pipe2(t->gate, O_CLOEXEC) < 0) {
		fprintf(stderr, "%s: pipe: %s\n", hkt_prog(), strerror(errno));
		return -1;
	}
	t->pid = spawn(p->cmd, t->gate);
	close(t->gate[0]);
	if (t->pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", hkt_prog(), strerror(-t->pid));
		close(t->gate[1]);
		return -1;
	}
	return 0;
}

/* The target's counters opened; -1 after a message, the command killed and reaped. */
static int target_open(struct target *t, const struct plan *p)
{
	int rc;

	if (p->cmd) {
		rc = counters_open(&t->c, t->pid, true, p->walk_raw);
	} else {
		rc = threads_open(&t->th, t->pid, p->walk_raw);
		if (rc == -ESRCH) {
			fprintf(stderr, "%s: --pid: no process %d\n", hkt_prog(), (int)t->pid);
			return -1;
		}
	}
	if (rc < 0) {
		say_no_counters(rc, p->json);
		if (p->cmd) {
			kill(t->pid, SIGKILL);
			close(t->gate[1]);
			waitpid(t->pid, NULL, 0);
		}
		return -1;
	}
	return 0;
}

/*
 * Count: the command from its exec to its end, or --pid's process for
 * --time seconds (or until it ends); the counts added to *cnt, the counters
 * closed. -1 after a message when the command failed.
 */
static int target_count(struct target *t, const struct plan *p, struct hkt_tlb_counts *cnt)
{
	double t0 = hkt_now();

	if (p->cmd) {
		close(t->gate[1]); /* the child execs; its counters start there */
		if (reap(t->pid, p->cmd[0]) < 0) {
			counters_close(&t->c);
			return -1;
		}
	} else {
		threads_ioctl(&t->th, PERF_EVENT_IOC_ENABLE);
		for (uint64_t i = 0; i < p->time_s * 10 && kill(t->pid, 0) == 0; i++)
			nanosleep(&(struct timespec){0, 100000000}, NULL);
		threads_ioctl(&t->th, PERF_EVENT_IOC_DISABLE);
	}
	cnt->seconds = hkt_now() - t0;
	t->nthreads = t->th.n;
	if (p->cmd) {
		counters_read(&t->c, cnt);
		counters_close(&t->c);
	} else {
		threads_read(&t->th, cnt);
		threads_close(&t->th);
	}
	return 0;
}

/* A count under key, or null where the counter was not had. */
static void json_count(struct hkt_json *j, const char *key, bool has, uint64_t v)
{
	if (has)
		hkt_json_u64(j, key, v);
	else
		hkt_json_null(j, key);
}

/* The report of a count as JSON. */
static void count_json(const struct plan *p, const struct target *t,
		       const struct hkt_tlb_counts *cnt, const struct hkt_tlb_estimate *est)
{
	struct hkt_json j;

	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	hkt_json_open_object(&j, "cpupcstat");
	hkt_json_string(&j, "mode", "count");
	hkt_json_bool(&j, "counters", true);
	hkt_json_int(&j, "pid", t->pid);
	if (!p->cmd)
		hkt_json_u64(&j, "threads", t->nthreads);
	hkt_json_double(&j, "seconds", cnt->seconds, 3);
	hkt_json_u64(&j, "dtlb_load_misses", cnt->dtlb_misses);
	json_count(&j, "itlb_load_misses", cnt->has_itlb, cnt->itlb_misses);
	json_count(&j, "walk_cycles", cnt->has_walk, cnt->walk_cycles);
	json_count(&j, "cycles", cnt->has_cycles, cnt->cycles);
	json_count(&j, "instructions", cnt->has_instructions, cnt->instructions);
	hkt_json_double(&j, "misses_per_sec", est->misses_per_sec, 0);
	hkt_json_double(&j, "misses_per_kinstr", est->misses_per_kinstr, 3);
	hkt_json_double(&j, "tlb_miss_cost", est->from_walk ? NAN : p->cost, 1);
	hkt_json_string(&j, "estimate_from", est->from_walk ? "walk_cycles" : "misses_x_cost");
	hkt_json_double(&j, "tlb_miss_time_pct", est->time_pct, 2);
	hkt_json_close_object(&j);
	hkt_json_close_object(&j);
	hkt_json_end(&j);
}

/* The report of a count as text. */
static void count_text(const struct hkt_tlb_counts *cnt, const struct hkt_tlb_estimate *est)
{
	printf("%-28s %" PRIu64 "\n", "dTLB load misses:", cnt->dtlb_misses);
	if (cnt->has_itlb)
		printf("%-28s %" PRIu64 "\n", "iTLB load misses:", cnt->itlb_misses);
	printf("%-28s %.0f\n", "misses/s:", est->misses_per_sec);
	if (!isnan(est->misses_per_kinstr))
		printf("%-28s %.3f\n", "misses/1000 instructions:", est->misses_per_kinstr);
	if (isnan(est->time_pct))
		printf("%-28s unknown (no cost of a miss, see --cost; or no cycles counted)\n",
		       "time in TLB misses:");
	else
		printf("%-28s %.2f %% (%s)\n", "time in TLB misses:", est->time_pct,
		       est->from_walk ? "walk cycles" : "misses x cost");
}

/* Count the command or --pid's process with the hardware counters and report; -1 (said). */
static int do_count(struct plan *p, const char *argv0)
{
	struct target t = {.pid = p->pid, .gate = {-1, -1}};
	struct hkt_tlb_counts cnt = {0};
	struct hkt_tlb_estimate est;
	double hz = 0;

	if (target_start(&t, p) < 0 || target_open(&t, p) < 0 || target_count(&t, p, &cnt) < 0)
		return -1;
	if (!cnt.has_walk && !(p->cost > 0))
		p->cost = measure_cost(argv0);
	if (hkt_tlb_estimate(&cnt, p->cost, hz, &est) < 0) {
		fprintf(stderr, "%s: the TLB counters could not be read\n", hkt_prog());
		return -1;
	}
	if (p->json)
		count_json(p, &t, &cnt, &est);
	else
		count_text(&cnt, &est);
	return 0;
}

/* The options and the command into *p; exits on a usage error, -1 when getopt cannot start. */
static int parse_options(int argc, char **argv, struct plan *p, bool *have_pid)
{
	struct hkt_getopt g;
	int c;

	if (hkt_getopt_init(&g, opts, "+") < 0)
		return -1;
	while ((c = hkt_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			p->pid = (pid_t)parse_num("--pid", optarg, INT32_MAX);
			*have_pid = true;
			break;
		case 't':
			p->time_s = parse_num("--time", optarg, MAX_TIME);
			break;
		case 'c':
			p->cost = (double)parse_num("--cost", optarg, 1000000);
			break;
		case OPT_WALK_EVENT:
			p->walk_raw = parse_raw_event("--walk-event", optarg);
			break;
		case OPT_COMPARE:
			p->compare = true;
			break;
		case 'n':
			p->runs = parse_num("--runs", optarg, MAX_RUNS);
			break;
		case OPT_BUDGET:
			if (hkt_parse_seconds(optarg, 0.1, MAX_TIME, &p->budget_s) < 0) {
				fprintf(stderr,
					"%s: --budget: '%s' is not a number of seconds from 0.1 to %d\n",
					hkt_prog(), optarg, MAX_TIME);
				hkt_errtryhelp();
			}
			break;
		case OPT_HEAP:
		case OPT_SHM:
		case OPT_TEXT:
		case OPT_DATA:
		case OPT_BSS:
		case OPT_THP:
			add_huge_opt(p, hugectl_flag[c - OPT_HEAP]);
			break;
		case 'S':
			for (int i = OPT_TEXT; i <= OPT_BSS; i++)
				add_huge_opt(p, hugectl_flag[i - OPT_HEAP]);
			break;
		case 'J':
			p->json = true;
			break;
		default:
			hkt_opts_standard(c, opts, usage);
		}
	}
	if (optind < argc)
		p->cmd = argv + optind;
	return 0;
}

/* The options that go together, or exit; hugectl --heap where none is named. */
static void check_plan(struct plan *p, bool have_pid)
{
	if (have_pid && p->cmd) {
		fprintf(stderr, "%s: --pid and a command: give one of them\n", hkt_prog());
		hkt_errtryhelp();
	}
	if (!have_pid && !p->cmd) {
		fprintf(stderr, "%s: no command and no --pid\n", hkt_prog());
		hkt_errtryhelp();
	}
	if (p->compare && !p->cmd) {
		fprintf(stderr, "%s: --compare runs a command; it cannot take --pid\n", hkt_prog());
		hkt_errtryhelp();
	}
	if (!p->compare && p->n_huge) {
		fprintf(stderr, "%s: %s is for --compare\n", hkt_prog(), p->huge_opts[0]);
		hkt_errtryhelp();
	}
	if (p->n_huge == 0)
		add_huge_opt(p, "--heap");
}

int main(int argc, char **argv)
{
	struct plan p = {.time_s = 10, .runs = 30, .budget_s = 60};
	bool have_pid = false;

	hkt_close_stdout_atexit();
	if (parse_options(argc, argv, &p, &have_pid) < 0)
		return HK_EXIT_FAILURE;
	check_plan(&p, have_pid);
	if (p.compare)
		return do_compare(&p, argv[0]) < 0 ? HK_EXIT_FAILURE : HK_EXIT_SUCCESS;
	return do_count(&p, argv[0]) < 0 ? HK_EXIT_FAILURE : HK_EXIT_SUCCESS;
}
