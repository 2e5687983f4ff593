// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The arithmetic of tlbmiss_cost and cpupcstat (tools/common/measure.c):
 * medians, spreads, the estimate of the time in TLB misses, the saving.
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
	assert_true(hk_median(odd, 3) == 3);
	/* v is left as it was */
	assert_true(odd[0] == 5 && odd[1] == 1 && odd[2] == 3);
	assert_true(hk_median(even, 4) == 2.5);
	assert_true(hk_median(one, 1) == 7);
	assert_true(isnan(hk_median(one, 0)));
}

static void test_quantile(void **state)
{
	double v[] = {50, 10, 40, 20, 30, 60, 70, 80, 90, 100, 110};

	(void)state;
	/* 11 values, 10 to 110: the 10th percentile is rank 1 (20), linear between ranks */
	assert_true(fabs(hk_quantile(v, 11, 0.1) - 20) < 1e-9);
	assert_true(fabs(hk_quantile(v, 11, 0.15) - 25) < 1e-9);
	assert_true(hk_quantile(v, 11, 0) == 10);
	assert_true(hk_quantile(v, 11, 1) == 110);
	assert_true(isnan(hk_quantile(v, 11, 1.5)));
	assert_true(isnan(hk_quantile(v, 0, 0.1)));
}

static void test_spread(void **state)
{
	double v[] = {80, 100, 125};

	(void)state;
	/* 125 is 25 % above 100, 80 is 20 % below */
	assert_true(fabs(hk_spread_pct(v, 3, 100) - 25) < 1e-9);
	assert_true(hk_spread_pct(v, 1, 80) == 0);
	assert_true(isnan(hk_spread_pct(v, 3, 0)));
	assert_true(isnan(hk_spread_pct(v, 3, NAN)));
}

/* Misses x cost over the counted cycles: 1e6 misses x 100 cycles of 1e9 cycles = 10 %. */
static void test_estimate_cost(void **state)
{
	struct hk_tlb_counts c = {
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
	struct hk_tlb_estimate e;

	(void)state;
	assert_int_equal(hk_tlb_estimate(&c, 100, 0, &e), 0);
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
	struct hk_tlb_counts c = {
		.dtlb_misses = 1000,
		.walk_cycles = 30000000,
		.has_dtlb = true,
		.has_walk = true,
		.seconds = 0.1,
	};
	struct hk_tlb_estimate e;

	(void)state;
	assert_int_equal(hk_tlb_estimate(&c, 500, 2e9, &e), 0);
	assert_true(e.from_walk);
	/* 3e7 of 0.1 s x 2e9 Hz = 2e8 cycles: 15 % */
	assert_true(fabs(e.time_pct - 15) < 1e-9);
	assert_true(isnan(e.misses_per_kinstr));
}

/* No cost, no walk cycles, no clock: the share is unknown (NaN), never 0. */
static void test_estimate_unknown(void **state)
{
	struct hk_tlb_counts c = {.dtlb_misses = 10, .has_dtlb = true, .seconds = 1};
	struct hk_tlb_counts none = {.cycles = 5, .has_cycles = true};
	struct hk_tlb_estimate e;

	(void)state;
	assert_int_equal(hk_tlb_estimate(&c, 0, 1e9, &e), 0);
	assert_true(isnan(e.time_pct));
	assert_int_equal(hk_tlb_estimate(&c, 100, 0, &e), 0);
	assert_true(isnan(e.time_pct));
	assert_int_equal(hk_tlb_estimate(&none, 100, 1e9, &e), -EINVAL);
}

static void test_saving(void **state)
{
	(void)state;
	/* the earlier attempt's figures: 13.150 s plain, 3.814 s under hugectl --heap */
	assert_true(fabs(hk_saving_pct(13.150, 3.814) - 71.0) < 0.01);
	assert_true(hk_saving_pct(2, 2) == 0);
	assert_true(hk_saving_pct(1, 1.5) < 0);
	assert_true(isnan(hk_saving_pct(0, 1)));
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
