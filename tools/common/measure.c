// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "measure.h"
#include "util.h"

double hkt_now(void)
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

double hkt_quantile(const double *v, size_t n, double q)
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

double hkt_median(const double *v, size_t n)
{
	return hkt_quantile(v, n, 0.5);
}

double hkt_spread_pct(const double *v, size_t n, double median)
{
	double worst = 0;

	if (n == 0 || median == 0 || isnan(median))
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (fabs(v[i] - median) > worst)
			worst = fabs(v[i] - median);
	return worst / fabs(median) * 100;
}

int hkt_tlb_estimate(const struct hkt_tlb_counts *c, double cost_cycles, double hz,
		     struct hkt_tlb_estimate *ret)
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

double hkt_saving_pct(double plain, double huge)
{
	if (!(plain > 0))
		return NAN;
	return (plain - huge) / plain * 100;
}

size_t hkt_median_rank(size_t n, double conf)
{
	double alpha = (1 - conf) / 2, cdf = 0, lfact_n;
	size_t k = 0;

	if (n == 0 || !(conf > 0 && conf < 1))
		return 0;
	lfact_n = lgamma((double)n + 1);
	/* P(X <= i) for X ~ Bin(n, 1/2), summed while it stays within alpha. */
	for (size_t i = 0; i < (n + 1) / 2; i++) {
		cdf += exp(lfact_n - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) -
			   (double)n * M_LN2);
		if (cdf > alpha)
			break;
		k = i + 1;
	}
	return k;
}

void hkt_median_interval(const double *v, size_t n, double conf, struct hkt_interval *ret)
{
	size_t k = hkt_median_rank(n, conf);
	double *s;

	ret->est = hkt_median(v, n);
	ret->low = -INFINITY;
	ret->high = INFINITY;
	if (k == 0)
		return;
	s = malloc(n * sizeof(*s));
	if (!s)
		return;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	ret->low = s[k - 1];
	ret->high = s[n - k];
	free(s);
}

double hkt_bound_of(const struct hkt_bound *b, double est)
{
	double rel = fabs(est) * b->pct / 100;

	return rel > b->abs ? rel : b->abs;
}

bool hkt_within_bound(const struct hkt_interval *iv, const struct hkt_bound *b)
{
	double w = hkt_bound_of(b, iv->est);

	/* NaN and the infinities fail both comparisons */
	return iv->high - iv->est <= w && iv->est - iv->low <= w;
}

int hkt_probe_take(struct hkt_probe *p)
{
	struct timespec w, c;
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0 || clock_gettime(CLOCK_MONOTONIC, &w) < 0 ||
	    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c) < 0)
		return -errno;
	p->switches = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
	p->wall_s = (double)w.tv_sec + (double)w.tv_nsec / 1e9;
	p->cpu_s = (double)c.tv_sec + (double)c.tv_nsec / 1e9;
	return 0;
}

enum hkt_disturb hkt_disturbed(const struct hkt_probe *a, const struct hkt_probe *b)
{
	if (b->switches != a->switches)
		return HK_SWITCHED;
	if ((b->wall_s - a->wall_s) - (b->cpu_s - a->cpu_s) > HK_STALL_S)
		return HK_STALLED;
	return HK_KEPT;
}

enum hkt_disturb hkt_run_disturbed(double wall_s, double cpu_s, uint64_t nivcsw)
{
	double lost = wall_s - cpu_s, allowed = wall_s * HK_RUN_LOST_PCT / 100;

	if (nivcsw > 0 && lost > (allowed > HK_STALL_S ? allowed : HK_STALL_S))
		return HK_SWITCHED;
	return HK_KEPT;
}

/* Room for one more kept round in the three arrays of m (cap doubles from 64). */
static int grow(struct hkt_measure *m, size_t *cap)
{
	double **arr[] = {&m->values, &m->a, &m->b};
	size_t c = *cap ? *cap * 2 : 64;

	if (m->kept < *cap)
		return 0;
	for (size_t i = 0; i < 3; i++) {
		double *p = realloc(*arr[i], c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*arr[i] = p;
	}
	*cap = c;
	return 0;
}

static void judge(const struct hkt_measure_cfg *cfg, struct hkt_measure *m)
{
	hkt_median_interval(m->values, m->kept, HK_CONFIDENCE, &m->iv);
	m->bound = hkt_bound_of(&cfg->bound, m->iv.est);
	m->narrow = hkt_within_bound(&m->iv, &cfg->bound);
	m->measurable = m->narrow && (!cfg->positive || m->iv.low > 0);
}

int hkt_measure_run(const struct hkt_measure_cfg *cfg, struct hkt_measure *m)
{
	size_t cap = 0, next_check = cfg->min_rounds < 6 ? 6 : cfg->min_rounds;
	double t0 = cfg->clock(cfg->ctx);
	int rc = 0;

	memset(m, 0, sizeof(*m));
	m->stop = HK_STOP_BUDGET;
	for (;;) {
		struct hkt_sample s = {0};

		m->used_s = cfg->clock(cfg->ctx) - t0;
		if (m->used_s >= cfg->budget_s) {
			m->stop = HK_STOP_BUDGET;
			break;
		}
		if (m->rounds >= cfg->max_rounds) {
			m->stop = HK_STOP_ROUNDS;
			break;
		}
		rc = cfg->sample(cfg->ctx, m->rounds, &s);
		if (rc < 0)
			break;
		m->rounds++;
		if (s.disturbed != HK_KEPT) {
			m->discarded[s.disturbed < HK_DISTURB_N ? s.disturbed : HK_STALLED]++;
			continue;
		}
		if (grow(m, &cap) < 0) {
			rc = -ENOMEM;
			break;
		}
		m->values[m->kept] =
			cfg->kind == HK_VALUE_DIFF ? s.a - s.b : hkt_saving_pct(s.a, s.b);
		m->a[m->kept] = s.a;
		m->b[m->kept] = s.b;
		m->kept++;
		if (m->kept < next_check)
			continue;
		next_check = m->kept + (m->kept / 4 > 4 ? m->kept / 4 : 4);
		judge(cfg, m);
		if (m->narrow) {
			m->used_s = cfg->clock(cfg->ctx) - t0;
			m->stop = HK_STOP_NARROW;
			break;
		}
	}
	judge(cfg, m);
	return rc;
}

void hkt_measure_fini(struct hkt_measure *m)
{
	free(m->values);
	free(m->a);
	free(m->b);
	m->values = m->a = m->b = NULL;
}

const char *hkt_stop_name(enum hkt_stop s)
{
	return s == HK_STOP_NARROW ? "narrow" : s == HK_STOP_ROUNDS ? "rounds" : "budget";
}

const char *hkt_disturb_name(enum hkt_disturb d)
{
	return d == HK_SWITCHED ? "switched" : d == HK_STALLED ? "stalled" : "kept";
}

const char *hkt_measure_why_not(const struct hkt_measure *m, const struct hkt_measure_cfg *cfg)
{
	if (m->measurable)
		return NULL;
	if (hkt_median_rank(m->kept, HK_CONFIDENCE) == 0)
		return "too few rounds kept for an interval";
	if (!m->narrow)
		return "the interval is wider than the bound";
	(void)cfg;
	return "the interval reaches 0: huge pages were not faster";
}

void hkt_fake_fini(struct hkt_fake *f)
{
	free(f->s);
	free(f->secs);
	memset(f, 0, sizeof(*f));
}

int hkt_fake_parse(struct hkt_fake *f, const char *text, size_t *bad_line)
{
	size_t line = 0;

	memset(f, 0, sizeof(*f));
	while (*text) {
		size_t len = strcspn(text, "\n;");
		bool end = text[len] != 0;
		char buf[256], word[16], extra;
		struct hkt_sample s = {0};
		double secs;
		int n;

		line++;
		if (len >= sizeof(buf))
			goto bad;
		memcpy(buf, text, len);
		buf[len] = 0;
		text += len + end;
		if (strchr(buf, '#'))
			*strchr(buf, '#') = 0;
		if (strspn(buf, " \t") == strlen(buf))
			continue;
		n = sscanf(buf, "%lf %lf %lf %15s %c", &s.a, &s.b, &secs, word, &extra);
		if (n < 3 || n > 4 || !isfinite(s.a) || !isfinite(s.b) || !(secs >= 0))
			goto bad;
		if (n == 4 && !strcmp(word, "switched"))
			s.disturbed = HK_SWITCHED;
		else if (n == 4 && !strcmp(word, "stalled"))
			s.disturbed = HK_STALLED;
		else if (n == 4)
			goto bad;
		if (f->n % 64 == 0) {
			struct hkt_sample *ns = realloc(f->s, (f->n + 64) * sizeof(*ns));
			double *nt;

			if (ns)
				f->s = ns;
			nt = ns ? realloc(f->secs, (f->n + 64) * sizeof(*nt)) : NULL;
			if (!nt) {
				hkt_fake_fini(f);
				return -ENOMEM;
			}
			f->secs = nt;
		}
		f->s[f->n] = s;
		f->secs[f->n++] = secs;
	}
	if (f->n)
		return 0;
bad:
	hkt_fake_fini(f);
	*bad_line = line;
	return -EINVAL;
}

int hkt_fake_sample(void *ctx, size_t round, struct hkt_sample *s)
{
	struct hkt_fake *f = ctx;

	(void)round;
	*s = f->s[f->next];
	f->now += f->secs[f->next];
	f->next = (f->next + 1) % f->n;
	return 0;
}

double hkt_fake_clock(void *ctx)
{
	return ((struct hkt_fake *)ctx)->now;
}

int hkt_parse_seconds(const char *s, double min, double max, double *ret)
{
	size_t i = strspn(s, "0123456789"), f = 0;
	double v;

	if (s[i] == '.')
		f = strspn(s + i + 1, "0123456789") + 1;
	if (i == 0 || f == 1 || s[i + f] || i > 9)
		return -EINVAL;
	v = strtod(s, NULL);
	if (!(v >= min && v <= max))
		return -EINVAL;
	*ret = v;
	return 0;
}

void hkt_measure_json(struct hkt_json *j, const struct hkt_measure *m,
		      const struct hkt_measure_cfg *cfg, const char *abs_key)
{
	const char *why = hkt_measure_why_not(m, cfg);

	hkt_json_double(j, "low", m->iv.low, 2);
	hkt_json_double(j, "high", m->iv.high, 2);
	hkt_json_double(j, "confidence", HK_CONFIDENCE, 2);
	hkt_json_double(j, "bound", m->bound, 2);
	hkt_json_double(j, abs_key, cfg->bound.abs, 1);
	hkt_json_double(j, "bound_pct", cfg->bound.pct, 1);
	hkt_json_u64(j, "rounds", m->rounds);
	hkt_json_u64(j, "rounds_kept", m->kept);
	hkt_json_u64(j, "rounds_discarded", m->discarded[HK_SWITCHED] + m->discarded[HK_STALLED]);
	hkt_json_u64(j, "discarded_switched", m->discarded[HK_SWITCHED]);
	hkt_json_u64(j, "discarded_stalled", m->discarded[HK_STALLED]);
	hkt_json_u64(j, "max_rounds", cfg->max_rounds);
	hkt_json_double(j, "budget_s", cfg->budget_s, 3);
	hkt_json_double(j, "budget_used_s", m->used_s, 3);
	hkt_json_string(j, "stopped", hkt_stop_name(m->stop));
	hkt_json_bool(j, "narrow", m->narrow);
	hkt_json_bool(j, "measurable", m->measurable);
	if (why)
		hkt_json_string(j, "reason", why);
}
