/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arithmetic shared by the measuring tools (tlbmiss_cost, cpupcstat): medians,
 * spreads and the article's estimate of the time spent in TLB misses. Pure
 * functions, no I/O, so that the unit tests reach every figure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in seconds. */
double hkt_now(void);

/* The q-quantile (0 to 1) of n values, linear between ranks; NaN when n is 0. */
double hkt_quantile(const double *v, size_t n, double q);
/* The median of n values (n > 0); v is left as it was. NaN when n is 0. */
double hkt_median(const double *v, size_t n);
/* The largest distance of a value from the median, in percent of |median|; NaN for a 0 median. */
double hkt_spread_pct(const double *v, size_t n, double median);

/* What the counters said about one run (a field is valid where its has_ flag is set). */
struct hkt_tlb_counts {
	uint64_t dtlb_misses, itlb_misses;
	uint64_t walk_cycles; /* page-walk cycles, where the CPU counts them */
	uint64_t cycles, instructions;
	bool has_dtlb, has_itlb, has_walk, has_cycles, has_instructions;
	double seconds; /* wall-clock time of the run */
};

struct hkt_tlb_estimate {
	uint64_t misses;	  /* dTLB + iTLB load misses */
	double misses_per_sec;	  /* NaN when seconds is 0 */
	double misses_per_kinstr; /* per 1000 instructions; NaN without instructions */
	double miss_cycles;	  /* walk cycles, or misses x cost */
	double time_pct;	  /* share of the time spent in TLB misses; NaN when unknown */
	bool from_walk;		  /* miss_cycles are counted walk cycles, not misses x cost */
};

/*
 * The article's TLBMissTime: the cycles spent in misses (counted page walks,
 * else misses x cost_cycles) over the cycles of the run (counted, else
 * seconds x hz). cost_cycles 0 means unknown. Returns 0, or -EINVAL when
 * there is nothing to estimate from (no miss counter).
 */
int hkt_tlb_estimate(const struct hkt_tlb_counts *c, double cost_cycles, double hz,
		     struct hkt_tlb_estimate *ret);

/* (plain - huge) / plain in percent: what huge pages saved; NaN for plain <= 0. */
double hkt_saving_pct(double plain, double huge);

/*
 * Measuring on a noisy machine (tlbmiss_cost, cpupcstat --compare): rounds of
 * paired samples (a, b: base and huge pages, or plain and under hugectl), each
 * round giving one value (a - b, or the saving of b over a in percent). The
 * estimate is the median of the values of the rounds kept; its interval is
 * the distribution-free one of a median (order statistics of the binomial
 * distribution), which holds whatever the noise's shape. Rounds go on until
 * the interval is within the bound or the budget (time, rounds) is spent.
 */

/* The confidence of every interval (two-sided). */
#define HK_CONFIDENCE 0.95

/*
 * The rank k (1-based) of the order statistics [x(k), x(n+1-k)] that cover
 * the median of n values with probability >= conf: the largest k with
 * 2 P(Bin(n, 1/2) <= k - 1) <= 1 - conf. 0 when n values are too few for any
 * (n < 6 at 95 %).
 */
size_t hkt_median_rank(size_t n, double conf);

/* An estimate and its interval; low is -INFINITY and high INFINITY where unbounded. */
struct hkt_interval {
	double est, low, high;
};

/* The median of v[n] and its interval at conf; est NaN when n is 0. */
void hkt_median_interval(const double *v, size_t n, double conf, struct hkt_interval *ret);

/* How narrow an interval must be: both sides within max(abs, pct % of |estimate|). */
struct hkt_bound {
	double abs, pct;
};

/* max(b->abs, b->pct % of |est|). */
double hkt_bound_of(const struct hkt_bound *b, double est);
/* Both sides of iv within hkt_bound_of(b, iv->est) of it (false when unbounded or NaN). */
bool hkt_within_bound(const struct hkt_interval *iv, const struct hkt_bound *b);

/*
 * What a round saw of the scheduler, taken before and after it: the thread's
 * context switches (getrusage RUSAGE_THREAD: ru_nvcsw + ru_nivcsw), its
 * CLOCK_MONOTONIC and its CPU time (CLOCK_THREAD_CPUTIME_ID).
 */
struct hkt_probe {
	uint64_t switches;
	double wall_s, cpu_s;
};

enum hkt_disturb {
	HK_KEPT = 0,
	HK_SWITCHED, /* the thread was switched out: another task ran in the round */
	HK_STALLED,  /* wall time ran HK_STALL_S past the thread's CPU time */
	HK_DISTURB_N
};

/* A round whose wall time exceeds its CPU time by more than this did not run throughout. */
#define HK_STALL_S 50e-6

/* The probe of the calling thread now; 0 or -errno. */
int hkt_probe_take(struct hkt_probe *p);
/* The discard rule: HK_KEPT, or why a round between the probes a and b is discarded. */
enum hkt_disturb hkt_disturbed(const struct hkt_probe *a, const struct hkt_probe *b);

/*
 * A round of cpupcstat --compare runs whole commands, which may wait (sleep,
 * read) or run threads; a wait is the command's own time. A run lost time to
 * other tasks when it was involuntarily switched out (nivcsw, the child's
 * rusage from wait4) and its wall time exceeds its CPU time (user + system,
 * of the command and what it waited for) by more than HK_RUN_LOST_PCT % of
 * the wall time, and at least HK_STALL_S. A command that runs threads in
 * parallel (CPU time above wall time) cannot be judged: it is kept.
 */
#define HK_RUN_LOST_PCT 2.0

/* HK_KEPT, or HK_SWITCHED for a command's run that lost time to other tasks. */
enum hkt_disturb hkt_run_disturbed(double wall_s, double cpu_s, uint64_t nivcsw);

/* One round: the pair, and whether it was disturbed (then its value is not used). */
struct hkt_sample {
	double a, b;
	enum hkt_disturb disturbed;
};

enum hkt_value_kind {
	HK_VALUE_DIFF,	 /* a - b */
	HK_VALUE_SAVING, /* hkt_saving_pct(a, b) */
};

enum hkt_stop {
	HK_STOP_NARROW, /* the interval came within the bound */
	HK_STOP_BUDGET, /* the time budget ran out */
	HK_STOP_ROUNDS, /* the most rounds were done */
};

struct hkt_measure_cfg {
	enum hkt_value_kind kind;
	struct hkt_bound bound;
	bool positive;	   /* measurable needs low > 0 too (a cost) */
	size_t min_rounds; /* kept rounds before the bound may stop it (at least 6) */
	size_t max_rounds; /* rounds done, kept or not */
	double budget_s;   /* time of the rounds, on clock() */
	/* One round into *s; 0, or a -errno that ends the measurement. */
	int (*sample)(void *ctx, size_t round, struct hkt_sample *s);
	/* Seconds, any origin (hkt_now for real rounds). */
	double (*clock)(void *ctx);
	void *ctx;
};

struct hkt_measure {
	double *values, *a, *b; /* of the rounds kept, in order; hkt_measure_fini frees them */
	size_t kept, rounds, discarded[HK_DISTURB_N];
	struct hkt_interval iv;
	double bound;  /* hkt_bound_of(cfg->bound, iv.est) */
	double used_s; /* clock time of the rounds */
	enum hkt_stop stop;
	bool narrow;	 /* hkt_within_bound */
	bool measurable; /* narrow, and low > 0 where cfg->positive */
};

/*
 * The rounds until the stop rule: the bound is checked once min_rounds are
 * kept and then at every quarter more kept (so that the stop is not a pick of
 * the luckiest moment); the budget and max_rounds before each round. Returns
 * 0, -ENOMEM, or the sample function's -errno (m holds what was measured).
 */
int hkt_measure_run(const struct hkt_measure_cfg *cfg, struct hkt_measure *m);
void hkt_measure_fini(struct hkt_measure *m);

struct hkt_json;

/*
 * The rounds, the interval and the verdict of m as members of the JSON object
 * open in j, the same keys in both tools: low, high, confidence, bound,
 * ABS_KEY (cfg->bound.abs), bound_pct, rounds, rounds_kept, rounds_discarded,
 * discarded_switched, discarded_stalled, max_rounds, budget_s,
 * budget_used_s, stopped, narrow, measurable, and reason when it is not.
 */
void hkt_measure_json(struct hkt_json *j, const struct hkt_measure *m,
		      const struct hkt_measure_cfg *cfg, const char *abs_key);

/* "narrow", "budget", "rounds". */
const char *hkt_stop_name(enum hkt_stop s);
/* "switched", "stalled". */
const char *hkt_disturb_name(enum hkt_disturb d);
/*
 * Why m is not measurable, in words (NULL when it is): too few rounds kept
 * for an interval, the interval wider than the bound, or (positive) an
 * interval that reaches 0.
 */
const char *hkt_measure_why_not(const struct hkt_measure *m, const struct hkt_measure_cfg *cfg);

/*
 * The fake sample source of the tools' test copies (built with
 * HK_MEASURE_FAKE, see tests/CMakeLists.txt): text of rounds "A B SECONDS
 * [switched|stalled]", separated by newlines or ';', used in turn and from
 * the start again; SECONDS is what the round takes on the fake clock. '#'
 * starts a comment that runs to the end of the round.
 */
struct hkt_fake {
	struct hkt_sample *s;
	double *secs;
	size_t n, next;
	double now;
};

/* Parse text into f; 0, -EINVAL (line *bad_line, 1-based) or -ENOMEM. */
int hkt_fake_parse(struct hkt_fake *f, const char *text, size_t *bad_line);
void hkt_fake_fini(struct hkt_fake *f);
/* The sample and clock functions of hkt_measure_cfg for a struct hkt_fake. */
int hkt_fake_sample(void *ctx, size_t round, struct hkt_sample *s);
double hkt_fake_clock(void *ctx);

/*
 * SECONDS as the tools take it: digits, optionally a '.' and more digits
 * (no sign, exponent or space), from min to max. 0 or -EINVAL.
 */
int hkt_parse_seconds(const char *s, double min, double max, double *ret);
