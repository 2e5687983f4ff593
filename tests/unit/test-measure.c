// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The arithmetic of tlbmiss_cost and cpupcstat (tools/common/measure.c):
 * medians, spreads, the estimate of the time in TLB misses, the saving; the
 * interval of a median, the bound, the discard rule and the stop rule, on
 * synthetic rounds (struct hkt_fake) with a fake clock.
 * The counting path of cpupcstat cannot run on a machine without counters;
 * its figures are these functions, checked here on made-up counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "measure.h"

static void test_median(void **state)
{
	double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};

	(void)state;
	assert_true(hkt_median(odd, 3) == 3);
	/* v is left as it was */
	assert_true(odd[0] == 5 && odd[1] == 1 && odd[2] == 3);
	assert_true(hkt_median(even, 4) == 2.5);
	assert_true(hkt_median(one, 1) == 7);
	assert_true(isnan(hkt_median(one, 0)));
}

static void test_quantile(void **state)
{
	double v[] = {50, 10, 40, 20, 30, 60, 70, 80, 90, 100, 110};

	(void)state;
	/* 11 values, 10 to 110: the 10th percentile is rank 1 (20), linear between ranks */
	assert_true(fabs(hkt_quantile(v, 11, 0.1) - 20) < 1e-9);
	assert_true(fabs(hkt_quantile(v, 11, 0.15) - 25) < 1e-9);
	assert_true(hkt_quantile(v, 11, 0) == 10);
	assert_true(hkt_quantile(v, 11, 1) == 110);
	assert_true(isnan(hkt_quantile(v, 11, 1.5)));
	assert_true(isnan(hkt_quantile(v, 0, 0.1)));
}

static void test_spread(void **state)
{
	double v[] = {80, 100, 125};

	(void)state;
	/* 125 is 25 % above 100, 80 is 20 % below */
	assert_true(fabs(hkt_spread_pct(v, 3, 100) - 25) < 1e-9);
	assert_true(hkt_spread_pct(v, 1, 80) == 0);
	assert_true(isnan(hkt_spread_pct(v, 3, 0)));
	assert_true(isnan(hkt_spread_pct(v, 3, NAN)));
}

/* Misses x cost over the counted cycles: 1e6 misses x 100 cycles of 1e9 cycles = 10 %. */
static void test_estimate_cost(void **state)
{
	struct hkt_tlb_counts c = {
		.dtlb_misses = 800000,
		.itlb_misses = 200000,
		.cycles = 1000000000,
		.instructions = 2000000000,
		.has_dtlb = true,
		.has_itlb = true,
		.has_cycles = true,
		.has_instructions = true,
		.seconds = 0.5,
	};
	struct hkt_tlb_estimate e;

	(void)state;
	assert_int_equal(hkt_tlb_estimate(&c, 100, 0, &e), 0);
	assert_int_equal(e.misses, 1000000);
	assert_false(e.from_walk);
	assert_true(fabs(e.miss_cycles - 1e8) < 1e-3);
	assert_true(fabs(e.time_pct - 10) < 1e-9);
	assert_true(fabs(e.misses_per_sec - 2e6) < 1e-6);
	assert_true(fabs(e.misses_per_kinstr - 0.5) < 1e-12);
}

/* Counted walk cycles win over misses x cost; no cycles counter: seconds x hz. */
static void test_estimate_walk_and_clock(void **state)
{
	struct hkt_tlb_counts c = {
		.dtlb_misses = 1000,
		.walk_cycles = 30000000,
		.has_dtlb = true,
		.has_walk = true,
		.seconds = 0.1,
	};
	struct hkt_tlb_estimate e;

	(void)state;
	assert_int_equal(hkt_tlb_estimate(&c, 500, 2e9, &e), 0);
	assert_true(e.from_walk);
	/* 3e7 of 0.1 s x 2e9 Hz = 2e8 cycles: 15 % */
	assert_true(fabs(e.time_pct - 15) < 1e-9);
	assert_true(isnan(e.misses_per_kinstr));
}

/* No cost, no walk cycles, no clock: the share is unknown (NaN), never 0. */
static void test_estimate_unknown(void **state)
{
	struct hkt_tlb_counts c = {.dtlb_misses = 10, .has_dtlb = true, .seconds = 1};
	struct hkt_tlb_counts none = {.cycles = 5, .has_cycles = true};
	struct hkt_tlb_estimate e;

	(void)state;
	assert_int_equal(hkt_tlb_estimate(&c, 0, 1e9, &e), 0);
	assert_true(isnan(e.time_pct));
	assert_int_equal(hkt_tlb_estimate(&c, 100, 0, &e), 0);
	assert_true(isnan(e.time_pct));
	assert_int_equal(hkt_tlb_estimate(&none, 100, 1e9, &e), -EINVAL);
}

static void test_saving(void **state)
{
	(void)state;
	/* the earlier attempt's figures: 13.150 s plain, 3.814 s under hugectl --heap */
	assert_true(fabs(hkt_saving_pct(13.150, 3.814) - 71.0) < 0.01);
	assert_true(hkt_saving_pct(2, 2) == 0);
	assert_true(hkt_saving_pct(1, 1.5) < 0);
	assert_true(isnan(hkt_saving_pct(0, 1)));
}

/*
 * The order-statistic interval of a median: 2 P(Bin(n, 1/2) <= k - 1) <= 5 %.
 * n = 5: even [min, max] covers only 93.75 %: no interval. n = 6: 96.9 %, k = 1.
 * n = 20: P(X <= 5) = 2.07 %, P(X <= 6) = 5.77 %: k = 6 (the textbook value).
 */
static void test_median_rank(void **state)
{
	(void)state;
	assert_int_equal(hkt_median_rank(0, 0.95), 0);
	assert_int_equal(hkt_median_rank(5, 0.95), 0);
	assert_int_equal(hkt_median_rank(6, 0.95), 1);
	assert_int_equal(hkt_median_rank(20, 0.95), 6);
	assert_int_equal(hkt_median_rank(100, 0.95), 40);
	assert_int_equal(hkt_median_rank(10, 1.5), 0);
}

static void test_median_interval(void **state)
{
	double v[20], few[] = {3, 1, 2, 5, 4};
	struct hkt_interval iv;

	(void)state;
	/* 20 values 1..20 in a shuffled order: the 6th and the 15th smallest */
	for (int i = 0; i < 20; i++)
		v[i] = (double)((i * 7) % 20 + 1);
	hkt_median_interval(v, 20, HK_CONFIDENCE, &iv);
	assert_true(iv.est == 10.5);
	assert_true(iv.low == 6 && iv.high == 15);
	/* one wild value (noise only adds time) moves the interval by one rank at most */
	v[0] = 1e9;
	hkt_median_interval(v, 20, HK_CONFIDENCE, &iv);
	assert_true(iv.low == 7 && iv.high == 16);
	/* too few values: an estimate with an unbounded interval */
	hkt_median_interval(few, 5, HK_CONFIDENCE, &iv);
	assert_true(iv.est == 3);
	assert_true(isinf(iv.low) && iv.low < 0 && isinf(iv.high) && iv.high > 0);
}

static void test_bound(void **state)
{
	struct hkt_bound b = {5, 10};
	struct hkt_interval narrow = {100, 91, 109}, wide = {100, 85, 109}, small = {20, 16, 24},
			    none = {100, -INFINITY, INFINITY};

	(void)state;
	assert_true(hkt_bound_of(&b, 100) == 10);
	assert_true(hkt_bound_of(&b, -100) == 10);
	assert_true(hkt_bound_of(&b, 20) == 5);
	assert_true(hkt_within_bound(&narrow, &b));
	/* one side past the bound is enough to be wide */
	assert_false(hkt_within_bound(&wide, &b));
	/* a small estimate: the absolute part of the bound */
	assert_true(hkt_within_bound(&small, &b));
	assert_false(hkt_within_bound(&none, &b));
}

/* The discard rule: a context switch, or wall time past CPU time by more than HK_STALL_S. */
static void test_disturbed(void **state)
{
	struct hkt_probe a = {.switches = 7, .wall_s = 10, .cpu_s = 2};
	struct hkt_probe same = {.switches = 7, .wall_s = 10.001, .cpu_s = 2.001};
	struct hkt_probe sw = {.switches = 8, .wall_s = 10.001, .cpu_s = 2.001};
	struct hkt_probe stall = {.switches = 7, .wall_s = 10.001, .cpu_s = 2.001 - 2 * HK_STALL_S};
	struct hkt_probe now;

	(void)state;
	assert_int_equal(hkt_disturbed(&a, &same), HK_KEPT);
	assert_int_equal(hkt_disturbed(&a, &sw), HK_SWITCHED);
	assert_int_equal(hkt_disturbed(&a, &stall), HK_STALLED);
	assert_int_equal(hkt_probe_take(&now), 0);
	assert_true(now.wall_s > 0 && now.cpu_s > 0);
}

/*
 * A command's run: discarded only when it was switched out involuntarily and
 * lost more than HK_RUN_LOST_PCT % of its wall time (and HK_STALL_S) to it.
 */
static void test_run_disturbed(void **state)
{
	(void)state;
	/* a quiet CPU-bound run */
	assert_int_equal(hkt_run_disturbed(1.0, 0.995, 0), HK_KEPT);
	/* preempted, but lost under 2 %: kept */
	assert_int_equal(hkt_run_disturbed(1.0, 0.985, 5), HK_KEPT);
	/* preempted and lost 3 %: discarded */
	assert_int_equal(hkt_run_disturbed(1.0, 0.97, 1), HK_SWITCHED);
	/* the same loss without an involuntary switch is the command's own wait */
	assert_int_equal(hkt_run_disturbed(1.0, 0.5, 0), HK_KEPT);
	/* a short run: the loss must exceed HK_STALL_S too */
	assert_int_equal(hkt_run_disturbed(1e-3, 1e-3 - HK_STALL_S / 2, 1), HK_KEPT);
	assert_int_equal(hkt_run_disturbed(1e-3, 1e-3 - 2 * HK_STALL_S, 1), HK_SWITCHED);
	/* threads in parallel: CPU time above wall time, kept */
	assert_int_equal(hkt_run_disturbed(1.0, 1.9, 40), HK_KEPT);
}

/* run CFG on the fake rounds TEXT into m. */
static void run_fake(const char *text, struct hkt_measure_cfg *cfg, struct hkt_measure *m)
{
	static struct hkt_fake f;
	size_t bad = 0;

	hkt_fake_fini(&f);
	assert_int_equal(hkt_fake_parse(&f, text, &bad), 0);
	cfg->sample = hkt_fake_sample;
	cfg->clock = hkt_fake_clock;
	cfg->ctx = &f;
	assert_int_equal(hkt_measure_run(cfg, m), 0);
}

#define CFG(pos)                                                                                   \
	{                                                                                          \
		.kind = HK_VALUE_DIFF, .bound = {5, 10}, .positive = (pos), .min_rounds = 16,      \
		.max_rounds = 100000, .budget_s = 10,                                              \
	}

/* Narrow: rounds that agree stop at the first check (16 kept), measurable. */
static void test_stop_narrow(void **state)
{
	struct hkt_measure_cfg cfg = CFG(true);
	struct hkt_measure m;

	(void)state;
	run_fake("300 200 0.01; 301 200 0.01; 299 200 0.01; 302 200 0.01", &cfg, &m);
	assert_int_equal(m.stop, HK_STOP_NARROW);
	assert_int_equal(m.kept, 16);
	assert_int_equal(m.rounds, 16);
	assert_true(m.iv.low <= m.iv.est && m.iv.est <= m.iv.high);
	assert_true(m.iv.est >= 99 && m.iv.est <= 102);
	assert_true(m.narrow && m.measurable);
	assert_null(hkt_measure_why_not(&m, &cfg));
	assert_true(fabs(m.used_s - 0.16) < 1e-9);
	hkt_measure_fini(&m);
}

/* Wide: rounds that disagree run to the budget; not measurable, with the interval. */
static void test_stop_wide(void **state)
{
	static const char spread[] = "200 200 0.125; 300 200 0.125; 400 200 0.125; 500 200 0.125;"
				     "600 200 0.125; 700 200 0.125; 800 200 0.125; 900 200 0.125;"
				     "1000 200 0.125; 1100 200 0.125";
	struct hkt_measure_cfg cfg = CFG(true);
	struct hkt_measure m;

	(void)state;
	run_fake(spread, &cfg, &m);
	assert_int_equal(m.stop, HK_STOP_BUDGET);
	assert_int_equal(m.rounds, 80);
	assert_true(m.used_s >= cfg.budget_s);
	assert_false(m.narrow);
	assert_false(m.measurable);
	assert_true(m.iv.low <= m.iv.est && m.iv.est <= m.iv.high);
	assert_true(m.iv.high - m.iv.est > m.bound || m.iv.est - m.iv.low > m.bound);
	assert_string_equal(hkt_measure_why_not(&m, &cfg), "the interval is wider than the bound");
	hkt_measure_fini(&m);
	/* the same with a cap on the rounds */
	cfg.max_rounds = 30;
	run_fake(spread, &cfg, &m);
	assert_int_equal(m.stop, HK_STOP_ROUNDS);
	assert_int_equal(m.rounds, 30);
	assert_false(m.measurable);
	hkt_measure_fini(&m);
}

/* Disturbed rounds are counted and left out: the kept ones decide. */
static void test_discard(void **state)
{
	struct hkt_measure_cfg cfg = CFG(true);
	struct hkt_measure m;

	(void)state;
	run_fake("300 200 0.01; 9000 200 0.01 switched; 300 200 0.01; 300 9000 0.01 stalled", &cfg,
		 &m);
	assert_int_equal(m.kept, 16);
	assert_int_equal(m.discarded[HK_SWITCHED], 8);
	assert_int_equal(m.discarded[HK_STALLED], 7);
	assert_int_equal(m.kept + m.discarded[HK_SWITCHED] + m.discarded[HK_STALLED], m.rounds);
	assert_true(m.iv.est == 100 && m.iv.low == 100 && m.iv.high == 100);
	assert_true(m.measurable);
	hkt_measure_fini(&m);
	/* everything disturbed: no estimate, no interval, not measurable */
	run_fake("300 200 0.5 switched", &cfg, &m);
	assert_int_equal(m.kept, 0);
	assert_true(isnan(m.iv.est));
	assert_false(m.measurable);
	assert_string_equal(hkt_measure_why_not(&m, &cfg), "too few rounds kept for an interval");
	hkt_measure_fini(&m);
}

/* A narrow interval around 0 stops, but is no cost; with positive off it is a figure. */
static void test_zero(void **state)
{
	struct hkt_measure_cfg cfg = CFG(true);
	struct hkt_measure m;

	(void)state;
	run_fake("200 200 0.01; 201 200 0.01; 199 200 0.01", &cfg, &m);
	assert_int_equal(m.stop, HK_STOP_NARROW);
	assert_true(m.narrow);
	assert_false(m.measurable);
	assert_string_equal(hkt_measure_why_not(&m, &cfg),
			    "the interval reaches 0: huge pages were not faster");
	hkt_measure_fini(&m);
	cfg.positive = false;
	cfg.kind = HK_VALUE_SAVING;
	run_fake("200 200 0.01; 201 200 0.01; 199 200 0.01", &cfg, &m);
	assert_true(m.measurable);
	assert_true(fabs(m.iv.est) < 1);
	hkt_measure_fini(&m);
}

/* A costly pattern costs more than a cheap one: their intervals do not overlap. */
static void test_costly_above_cheap(void **state)
{
	struct hkt_measure_cfg cfg = CFG(true);
	struct hkt_measure cheap, costly;

	(void)state;
	run_fake("230 200 0.01; 260 200 0.01; 200 200 0.01; 900 200 0.01 switched", &cfg, &cheap);
	run_fake("330 200 0.01; 360 200 0.01; 300 200 0.01; 100 200 0.01 stalled", &cfg, &costly);
	assert_true(costly.iv.low > cheap.iv.high);
	hkt_measure_fini(&cheap);
	hkt_measure_fini(&costly);
}

static void test_fake_parse(void **state)
{
	struct hkt_fake f;
	size_t bad = 0;

	(void)state;
	assert_int_equal(hkt_fake_parse(&f, "1 2 0.5\n# a comment\n3 4 0 stalled", &bad), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.s[1].disturbed, HK_STALLED);
	hkt_fake_fini(&f);
	assert_int_equal(hkt_fake_parse(&f, "1 2 0.5; 1 2", &bad), -EINVAL);
	assert_int_equal(bad, 2);
	assert_int_equal(hkt_fake_parse(&f, "1 2 0.5 preempted", &bad), -EINVAL);
	assert_int_equal(hkt_fake_parse(&f, "1 2 -1", &bad), -EINVAL);
	assert_int_equal(hkt_fake_parse(&f, "", &bad), -EINVAL);
}

static void test_parse_seconds(void **state)
{
	double v = 0;

	(void)state;
	assert_int_equal(hkt_parse_seconds("5", 0.1, 3600, &v), 0);
	assert_true(v == 5);
	assert_int_equal(hkt_parse_seconds("0.5", 0.1, 3600, &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(hkt_parse_seconds("0.05", 0.1, 3600, &v), -EINVAL);
	assert_int_equal(hkt_parse_seconds("3601", 0.1, 3600, &v), -EINVAL);
	assert_int_equal(hkt_parse_seconds("-1", 0.1, 3600, &v), -EINVAL);
	assert_int_equal(hkt_parse_seconds("1e2", 0.1, 3600, &v), -EINVAL);
	assert_int_equal(hkt_parse_seconds("1.", 0.1, 3600, &v), -EINVAL);
	assert_int_equal(hkt_parse_seconds(".5", 0.1, 3600, &v), -EINVAL);
	assert_int_equal(hkt_parse_seconds(" 1", 0.1, 3600, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_estimate_cost),
		cmocka_unit_test(test_estimate_walk_and_clock),
		cmocka_unit_test(test_estimate_unknown),
		cmocka_unit_test(test_saving),
		cmocka_unit_test(test_median_rank),
		cmocka_unit_test(test_median_interval),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_disturbed),
		cmocka_unit_test(test_run_disturbed),
		cmocka_unit_test(test_stop_narrow),
		cmocka_unit_test(test_stop_wide),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_zero),
		cmocka_unit_test(test_costly_above_cheap),
		cmocka_unit_test(test_fake_parse),
		cmocka_unit_test(test_parse_seconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
