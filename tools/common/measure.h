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
double hk_now(void);

/* The q-quantile (0 to 1) of n values, linear between ranks; NaN when n is 0. */
double hk_quantile(const double *v, size_t n, double q);
/* The median of n values (n > 0); v is left as it was. NaN when n is 0. */
double hk_median(const double *v, size_t n);
/* The largest distance of a value from the median, in percent of |median|; NaN for a 0 median. */
double hk_spread_pct(const double *v, size_t n, double median);

/* What the counters said about one run (a field is valid where its has_ flag is set). */
struct hk_tlb_counts {
	uint64_t dtlb_misses, itlb_misses;
	uint64_t walk_cycles; /* page-walk cycles, where the CPU counts them */
	uint64_t cycles, instructions;
	bool has_dtlb, has_itlb, has_walk, has_cycles, has_instructions;
	double seconds; /* wall-clock time of the run */
};

struct hk_tlb_estimate {
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
int hk_tlb_estimate(const struct hk_tlb_counts *c, double cost_cycles, double hz,
		    struct hk_tlb_estimate *ret);

/* (plain - huge) / plain in percent: what huge pages saved; NaN for plain <= 0. */
double hk_saving_pct(double plain, double huge);
