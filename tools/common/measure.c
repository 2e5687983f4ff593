// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "measure.h"

double hk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double hk_quantile(const double *v, size_t n, double q)
{
	double *s, pos, m;
	size_t i;

	if (n == 0 || !(q >= 0 && q <= 1))
		return NAN;
	s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	/* Linear between the two nearest ranks (the median of an even n: their mean). */
	pos = q * (double)(n - 1);
	i = (size_t)pos;
	m = i + 1 < n ? s[i] + (pos - (double)i) * (s[i + 1] - s[i]) : s[i];
	free(s);
	return m;
}

double hk_median(const double *v, size_t n)
{
	return hk_quantile(v, n, 0.5);
}

double hk_spread_pct(const double *v, size_t n, double median)
{
	double worst = 0;

	if (n == 0 || median == 0 || isnan(median))
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (fabs(v[i] - median) > worst)
			worst = fabs(v[i] - median);
	return worst / fabs(median) * 100;
}

int hk_tlb_estimate(const struct hk_tlb_counts *c, double cost_cycles, double hz,
		    struct hk_tlb_estimate *ret)
{
	double total;

	memset(ret, 0, sizeof(*ret));
	if (!c->has_dtlb && !c->has_itlb && !c->has_walk)
		return -EINVAL;
	ret->misses = (c->has_dtlb ? c->dtlb_misses : 0) + (c->has_itlb ? c->itlb_misses : 0);
	ret->misses_per_sec = c->seconds > 0 ? (double)ret->misses / c->seconds : NAN;
	ret->misses_per_kinstr = c->has_instructions && c->instructions > 0
					 ? (double)ret->misses * 1000 / (double)c->instructions
					 : NAN;
	if (c->has_walk) {
		ret->miss_cycles = (double)c->walk_cycles;
		ret->from_walk = true;
	} else if (cost_cycles > 0) {
		ret->miss_cycles = (double)ret->misses * cost_cycles;
	} else {
		ret->miss_cycles = NAN;
	}
	if (c->has_cycles && c->cycles > 0)
		total = (double)c->cycles;
	else if (c->seconds > 0 && hz > 0)
		total = c->seconds * hz;
	else
		total = NAN;
	ret->time_pct = ret->miss_cycles / total * 100;
	return 0;
}

double hk_saving_pct(double plain, double huge)
{
	if (!(plain > 0))
		return NAN;
	return (plain - huge) / plain * 100;
}
