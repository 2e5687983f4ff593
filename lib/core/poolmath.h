/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pool arithmetic of libhugekit's planners, in one place so that no
 * result wraps (the unit tests include this header on its own). Private to
 * libhugekit: the tools ask the planner (poolplan.c), they do no sums. The rule:
 *
 * - Minimum = nr - surplus, 0 when a racy read has surplus above nr.
 * - Maximum = Minimum + overcommit, saturated: UINT64_MAX when the sum does
 *   not fit. A Maximum of UINT64_MAX means "unlimited": the kernel takes an
 *   overcommit of 18446744073709551615 and never reaches it.
 * - The overcommit for a Maximum: Maximum - Minimum, 0 below the Minimum, and
 *   UINT64_MAX (unlimited) for an unlimited Maximum.
 * - Relative amounts saturate: + stops at UINT64_MAX (unlimited), - at 0.
 * - One write order: the overcommit is written before the Minimum when the
 *   new Minimum with today's overcommit would leave the pool below the
 *   Maximum asked for (so that growing never fails for lack of it), after it
 *   otherwise; a gigantic pool has none.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define HKP_UNLIMITED UINT64_MAX

static inline uint64_t hkp_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t hkp_sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static inline uint64_t hkp_pool_min(uint64_t nr, uint64_t surplus)
{
	return hkp_sat_sub(nr, surplus);
}

static inline uint64_t hkp_pool_max(uint64_t min, uint64_t oc)
{
	return hkp_sat_add(min, oc);
}

static inline uint64_t hkp_pool_oc(uint64_t min, uint64_t max)
{
	return max == HKP_UNLIMITED ? HKP_UNLIMITED : hkp_sat_sub(max, min);
}

/* base moved by pages: sign '+' or '-', or 0 for an absolute count. */
static inline uint64_t hkp_adjust(char sign, uint64_t base, uint64_t pages)
{
	if (sign == '+')
		return hkp_sat_add(base, pages);
	if (sign == '-')
		return hkp_sat_sub(base, pages);
	return pages;
}

/* The write order's rule (above): whether the overcommit goes first. */
static inline bool hkp_overcommit_first(uint64_t new_min, uint64_t cur_oc, uint64_t max,
					bool gigantic)
{
	return !gigantic && hkp_pool_max(new_min, cur_oc) < max;
}

/* Bytes of pages pages of size bytes, saturated (kernel.shmmax's recommendation sums them). */
static inline uint64_t hkp_bytes(uint64_t pages, uint64_t size)
{
	return size && pages > UINT64_MAX / size ? UINT64_MAX : pages * size;
}

/*
 * A "recommended" kernel.shmmax is written only where it keeps or raises
 * what is set: never 0 (no huge pages: every shmget would fail) and never
 * below the current value (today's kernels default to 2^64 - 2^24 - 1,
 * which libhugetlbfs lowered). For the options and the configuration alike.
 */
static inline bool hkp_shmmax_written(uint64_t recommended, uint64_t current)
{
	return recommended != 0 && current <= recommended;
}
