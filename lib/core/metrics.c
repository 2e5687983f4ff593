// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The huge page state as metric families for Prometheus (hugeadm
 * --metrics): the pools per page size and node, what a grow could get now,
 * the THP settings and counters, the hugetlb cgroups and whether the machine
 * still matches its configuration. The library reads and decides what each
 * sample is; the tool writes the exposition format.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "usage.h"

/* The families, in the order they are listed. */
enum fam_id {
	F_POOL,
	F_POOL_FREE,
	F_POOL_RESV,
	F_POOL_SURPLUS,
	F_POOL_MIN,
	F_POOL_MAX,
	F_POOL_OBTAINABLE,
	F_POOL_DEFAULT,
	F_NODE,
	F_NODE_FREE,
	F_NODE_SURPLUS,
	F_NODE_MIN,
	F_NODE_OBTAINABLE,
	F_THP_INFO,
	F_THP_FIRST_COUNTER, /* the vmstat counters, in thp_counters' order */
	F_THP_LAST_COUNTER = F_THP_FIRST_COUNTER + 15,
	F_MTHP_FIRST, /* the mTHP stats, in mthp_stats' order */
	F_MTHP_LAST = F_MTHP_FIRST + 6,
	F_CG_USAGE,
	F_CG_LIMIT,
	F_CG_RSVD_USAGE,
	F_CG_RSVD_LIMIT,
	F_CG_REFUSED,
	F_CONFIG_PRESENT,
	F_CONFIG_VALID,
	F_CONFIG_ITEMS,
	F_CONFIG_DRIFT,
	F_CONFIG_DRIFTED,
	F_ERRORS,
	F_COUNT
};

#define G HK_METRIC_GAUGE
#define C HK_METRIC_COUNTER

struct fam_def {
	const char *name;
	enum hk_metric_type type;
	const char *help;
};

static const struct fam_def pool_defs[] = {
	{"hugekit_pool_pages", G, "Huge pages in the pool, persistent and surplus (nr_hugepages)."},
	{"hugekit_pool_free_pages", G, "Huge pages of the pool that are free (free_hugepages)."},
	{"hugekit_pool_reserved_pages", G,
	 "Huge pages reserved for mappings and not yet faulted in (resv_hugepages)."},
	{"hugekit_pool_surplus_pages", G,
	 "Huge pages above the persistent pool, from overcommit (surplus_hugepages)."},
	{"hugekit_pool_minimum_pages", G, "Persistent huge pages of the pool (nr - surplus)."},
	{"hugekit_pool_maximum_pages", G,
	 "Huge pages the pool may reach with overcommit (minimum + nr_overcommit_hugepages)."},
	{"hugekit_pool_obtainable_pages", G,
	 "Huge pages free in one piece in the buddy allocator now: what a grow would likely get "
	 "without compaction (none for gigantic sizes)."},
	{"hugekit_pool_default", G, "1 for the kernel's default huge page size, else 0."},
	{"hugekit_node_pool_pages", G, "Huge pages of the pool on the NUMA node (nr_hugepages)."},
	{"hugekit_node_pool_free_pages", G, "Free huge pages of the pool on the NUMA node."},
	{"hugekit_node_pool_surplus_pages", G, "Surplus huge pages of the pool on the NUMA node."},
	{"hugekit_node_pool_minimum_pages", G,
	 "Persistent huge pages of the pool on the NUMA node (nr - surplus)."},
	{"hugekit_node_pool_obtainable_pages", G,
	 "Huge pages free in one piece on the NUMA node now (none for gigantic sizes)."},
	{"hugekit_thp_info", G,
	 "Transparent huge page settings as labels (enabled, defrag, shmem_enabled); always 1."},
};

/* /proc/vmstat's counters: each a counter family named for it. */
static const struct {
	const char *key;
	const char *name;
	const char *help;
} thp_counters[] = {
	{"thp_fault_alloc", "hugekit_thp_fault_alloc_total",
	 "Page faults that got a transparent huge page (thp_fault_alloc)."},
	{"thp_fault_fallback", "hugekit_thp_fault_fallback_total",
	 "Page faults that wanted a transparent huge page and got base pages "
	 "(thp_fault_fallback)."},
	{"thp_fault_fallback_charge", "hugekit_thp_fault_fallback_charge_total",
	 "Of those, the ones a memory cgroup's charge refused (thp_fault_fallback_charge)."},
	{"thp_collapse_alloc", "hugekit_thp_collapse_alloc_total",
	 "Huge pages khugepaged allocated to collapse base pages (thp_collapse_alloc)."},
	{"thp_collapse_alloc_failed", "hugekit_thp_collapse_alloc_failed_total",
	 "Huge pages khugepaged could not allocate (thp_collapse_alloc_failed)."},
	{"thp_file_alloc", "hugekit_thp_file_alloc_total",
	 "Transparent huge pages allocated for shmem and files (thp_file_alloc)."},
	{"thp_file_fallback", "hugekit_thp_file_fallback_total",
	 "Shmem and file allocations that fell back to base pages (thp_file_fallback)."},
	{"thp_split_page", "hugekit_thp_split_page_total",
	 "Transparent huge pages split into base pages (thp_split_page)."},
	{"thp_split_page_failed", "hugekit_thp_split_page_failed_total",
	 "Splits of a transparent huge page that failed (thp_split_page_failed)."},
	{"thp_deferred_split_page", "hugekit_thp_deferred_split_page_total",
	 "Transparent huge pages queued to be split (thp_deferred_split_page)."},
	{"thp_split_pmd", "hugekit_thp_split_pmd_total",
	 "PMD mappings of transparent huge pages split into PTEs (thp_split_pmd)."},
	{"thp_swpout", "hugekit_thp_swpout_total",
	 "Transparent huge pages swapped out whole (thp_swpout)."},
	{"thp_swpout_fallback", "hugekit_thp_swpout_fallback_total",
	 "Transparent huge pages split before they were swapped out (thp_swpout_fallback)."},
	{"compact_stall", "hugekit_compact_stall_total",
	 "Allocations that stalled for direct compaction (compact_stall)."},
	{"compact_success", "hugekit_compact_success_total",
	 "Direct compactions that freed a page of the order asked (compact_success)."},
	{"compact_fail", "hugekit_compact_fail_total",
	 "Direct compactions that did not (compact_fail)."},
};

/* Each mTHP size's stats (hugepages-<kB>kB/stats), labelled page_size. */
static const struct {
	const char *key;
	const char *name;
	enum hk_metric_type type;
	const char *help;
} mthp_stats[] = {
	{"anon_fault_alloc", "hugekit_mthp_anon_fault_alloc_total", C,
	 "Anonymous page faults that got a huge page of the size (mTHP anon_fault_alloc)."},
	{"anon_fault_fallback", "hugekit_mthp_anon_fault_fallback_total", C,
	 "Anonymous page faults that wanted the size and fell back (mTHP anon_fault_fallback)."},
	{"swpout", "hugekit_mthp_swpout_total", C,
	 "Huge pages of the size swapped out whole (mTHP swpout)."},
	{"swpout_fallback", "hugekit_mthp_swpout_fallback_total", C,
	 "Huge pages of the size split before swap-out (mTHP swpout_fallback)."},
	{"split", "hugekit_mthp_split_total", C, "Huge pages of the size split (mTHP split)."},
	{"split_failed", "hugekit_mthp_split_failed_total", C,
	 "Splits of a huge page of the size that failed (mTHP split_failed)."},
	{"nr_anon", "hugekit_mthp_anon_pages", G,
	 "Anonymous huge pages of the size in use now (mTHP nr_anon)."},
};

static const struct fam_def other_defs[] = {
	{"hugekit_cgroup_usage_bytes", G,
	 "Huge page memory charged to the hugetlb cgroup (hugetlb.SIZE.current)."},
	{"hugekit_cgroup_limit_bytes", G,
	 "The hugetlb cgroup's limit (hugetlb.SIZE.max; +Inf: none)."},
	{"hugekit_cgroup_reserved_usage_bytes", G,
	 "Huge page memory reserved and charged to the cgroup (hugetlb.SIZE.rsvd.current)."},
	{"hugekit_cgroup_reserved_limit_bytes", G,
	 "The cgroup's limit of reservations (hugetlb.SIZE.rsvd.max; +Inf: none)."},
	{"hugekit_cgroup_limit_refusals_total", C,
	 "Charges the cgroup's hugetlb limits refused, below it too (hugetlb.SIZE.events max)."},
	{"hugekit_config_present", G,
	 "1 when a hugekit configuration exists (/etc/hugekit/hugekit.conf, conf.d/*.conf)."},
	{"hugekit_config_valid", G,
	 "1 when the configuration reads and resolves against this machine, else 0."},
	{"hugekit_config_items", G, "Settings the configuration resolves to (hugeadm --check)."},
	{"hugekit_config_drift", G,
	 "1 when the machine differs from the configuration (hugeadm --check exit 3), else 0."},
	{"hugekit_config_drifted_items", G,
	 "Settings of the configuration the machine differs from now."},
	{"hugekit_metrics_errors", G,
	 "Parts of the huge page state that could not be read for this snapshot (see hugeadm's "
	 "messages)."},
};

#undef G
#undef C

#define N_THP (sizeof(thp_counters) / sizeof(thp_counters[0]))
#define N_MTHP (sizeof(mthp_stats) / sizeof(mthp_stats[0]))

_Static_assert(F_THP_LAST_COUNTER - F_THP_FIRST_COUNTER + 1 == N_THP, "thp_counters");
_Static_assert(F_MTHP_LAST - F_MTHP_FIRST + 1 == N_MTHP, "mthp_stats");
_Static_assert(sizeof(pool_defs) / sizeof(pool_defs[0]) == F_THP_INFO + 1, "pool_defs");
_Static_assert(sizeof(other_defs) / sizeof(other_defs[0]) == F_COUNT - F_CG_USAGE, "other_defs");

struct fam_state {
	struct hk_metric_family pub;
	struct hk_metric_sample *samples;
	size_t cap;
};

struct hk_metrics {
	struct fam_state f[F_COUNT];
	unsigned errors;
	bool nomem;
	bool buddy_failed; /* said once: every size and node would fail the same way */
};

static struct hk_metric_family fam_pub(enum fam_id i)
{
	if (i <= F_THP_INFO)
		return (struct hk_metric_family){pool_defs[i].name, pool_defs[i].type,
						 pool_defs[i].help, 0};
	if (i <= F_THP_LAST_COUNTER) {
		size_t k = (size_t)(i - F_THP_FIRST_COUNTER);

		return (struct hk_metric_family){thp_counters[k].name, HK_METRIC_COUNTER,
						 thp_counters[k].help, 0};
	}
	if (i <= F_MTHP_LAST) {
		size_t k = (size_t)(i - F_MTHP_FIRST);

		return (struct hk_metric_family){mthp_stats[k].name, mthp_stats[k].type,
						 mthp_stats[k].help, 0};
	}
	return (struct hk_metric_family){other_defs[i - F_CG_USAGE].name,
					 other_defs[i - F_CG_USAGE].type,
					 other_defs[i - F_CG_USAGE].help, 0};
}

/*
 * A sample of family i: value and the labels, name and value pairs ending
 * in NULL (copied). Out of memory is remembered and returned at the end.
 */
static void add(struct hk_metrics *m, enum fam_id i, double value, ...)
{
	struct fam_state *f = &m->f[i];
	const char *l[9];
	size_t n = 0;
	char **labels;
	va_list ap;

	va_start(ap, value);
	while (n < 8 && (l[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	l[n] = NULL;
	if (m->nomem)
		return;
	if (f->pub.n_samples == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 4;
		struct hk_metric_sample *s = realloc(f->samples, cap * sizeof(*s));

		if (!s) {
			m->nomem = true;
			return;
		}
		f->samples = s;
		f->cap = cap;
	}
	labels = calloc(n + 1, sizeof(*labels));
	for (size_t k = 0; labels && k < n; k++)
		if (!(labels[k] = strdup(l[k]))) {
			for (size_t j = 0; j < k; j++)
				free(labels[j]);
			free(labels);
			labels = NULL;
		}
	if (!labels) {
		m->nomem = true;
		return;
	}
	f->samples[f->pub.n_samples++] =
		(struct hk_metric_sample){(const char *const *)labels, value};
}

/* What could not be read: said, and counted. */
static void failed(struct hk_ctx *ctx, struct hk_metrics *m, int rc, const char *fmt, ...)
	HK_PRINTF(4, 5);

static void failed(struct hk_ctx *ctx, struct hk_metrics *m, int rc, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	hkl_warn(ctx, "metrics: cannot read %s: %s", what, strerror(-rc));
	m->errors++;
}

/* The free lists: no buddyinfo (an old dump) and a gigantic size are no failure. */
static void obtainable(struct hk_ctx *ctx, struct hk_metrics *m, uint64_t size, int node,
		       const char *sz, const char *nd)
{
	uint64_t n;
	int rc;

	if (m->buddy_failed)
		return;
	rc = hk_buddy_obtainable(ctx, size, node, &n);
	if (rc == 0 && node == HK_NODE_ALL)
		add(m, F_POOL_OBTAINABLE, (double)n, "page_size", sz, NULL);
	else if (rc == 0)
		add(m, F_NODE_OBTAINABLE, (double)n, "page_size", sz, "node", nd, NULL);
	else if (rc != -ENOENT && rc != -ERANGE) {
		failed(ctx, m, rc, "the free page lists (buddyinfo)");
		m->buddy_failed = true;
	}
}

static void pool_nodes(struct hk_ctx *ctx, struct hk_metrics *m, const struct hk_pool *p,
		       const char *sz)
{
	uint64_t size = hk_pool_get(p, HK_POOL_SIZE);

	for (size_t k = 0; k < hk_pool_node_count(p); k++) {
		char nd[16];

		snprintf(nd, sizeof(nd), "%d", hk_pool_node_id(p, k));
		add(m, F_NODE, (double)hk_pool_node_get(p, k, HK_POOL_NR), "page_size", sz, "node",
		    nd, NULL);
		add(m, F_NODE_FREE, (double)hk_pool_node_get(p, k, HK_POOL_FREE), "page_size", sz,
		    "node", nd, NULL);
		add(m, F_NODE_SURPLUS, (double)hk_pool_node_get(p, k, HK_POOL_SURPLUS), "page_size",
		    sz, "node", nd, NULL);
		add(m, F_NODE_MIN, (double)hk_pool_node_get(p, k, HK_POOL_MINIMUM), "page_size", sz,
		    "node", nd, NULL);
		obtainable(ctx, m, size, hk_pool_node_id(p, k), sz, nd);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void pools(struct hk_ctx *ctx, struct hk_metrics *m)
{
	static const enum hk_pool_field fields[] = {HK_POOL_NR,	     HK_POOL_FREE,
						    HK_POOL_RESV,    HK_POOL_SURPLUS,
						    HK_POOL_MINIMUM, HK_POOL_MAXIMUM};
	uint64_t *sizes = NULL;
	size_t n = 0;
	int rc = hk_page_sizes(ctx, &sizes, &n);

	if (rc < 0) {
		if (rc != -EOPNOTSUPP)
			failed(ctx, m, rc, "the huge page sizes");
		return;
	}
	qsort(sizes, n, sizeof(*sizes), cmp_u64);
	for (size_t i = 0; i < n; i++) {
		struct hk_pool *p;
		char sz[32];

		snprintf(sz, sizeof(sz), "%" PRIu64, sizes[i]);
		rc = hk_pool_read(ctx, sizes[i], &p);
		if (rc < 0) {
			failed(ctx, m, rc, "the pool of %s", sz);
			continue;
		}
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			add(m, (enum fam_id)(F_POOL + f), (double)hk_pool_get(p, fields[f]),
			    "page_size", sz, NULL);
		obtainable(ctx, m, sizes[i], HK_NODE_ALL, sz, NULL);
		add(m, F_POOL_DEFAULT, hk_pool_is_default(p) ? 1 : 0, "page_size", sz, NULL);
		pool_nodes(ctx, m, p, sz);
		hk_pool_unref(p);
	}
	free(sizes);
}

/* A THP knob's selected value; NULL when the kernel has none (or failed: counted). */
static char *thp_knob(struct hk_ctx *ctx, struct hk_metrics *m, const char *knob)
{
	char *v = NULL;
	int rc = hk_thp_read(ctx, knob, &v);

	if (rc < 0 && rc != -ENOENT)
		failed(ctx, m, rc, "transparent_hugepage/%s", knob);
	return rc < 0 ? NULL : v;
}

static void thp(struct hk_ctx *ctx, struct hk_metrics *m)
{
	char *en = thp_knob(ctx, m, "enabled"), *df = thp_knob(ctx, m, "defrag");
	char *sh = thp_knob(ctx, m, "shmem_enabled");
	uint64_t *sizes = NULL;
	size_t n = 0;

	if (en)
		add(m, F_THP_INFO, 1, "enabled", en, "defrag", df ? df : "", "shmem_enabled",
		    sh ? sh : "", NULL);
	free(en);
	free(df);
	free(sh);
	for (size_t i = 0; i < N_THP; i++) {
		uint64_t v;
		int rc = hk_vmstat_read(ctx, thp_counters[i].key, &v);

		if (rc == 0)
			add(m, (enum fam_id)(F_THP_FIRST_COUNTER + i), (double)v, NULL);
		else if (rc != -ENOENT)
			failed(ctx, m, rc, "the vmstat counter %s", thp_counters[i].key);
	}
	if (hk_thp_sizes(ctx, &sizes, &n) < 0)
		return;
	for (size_t s = 0; s < N_MTHP; s++)
		for (size_t i = 0; i < n; i++) {
			char sz[32];
			uint64_t v;
			int rc = hk_thp_stat_read(ctx, sizes[i], mthp_stats[s].key, &v);

			snprintf(sz, sizeof(sz), "%" PRIu64, sizes[i]);
			if (rc == 0)
				add(m, (enum fam_id)(F_MTHP_FIRST + s), (double)v, "page_size", sz,
				    NULL);
			else if (rc != -ENOENT)
				failed(ctx, m, rc, "the mTHP stat %s of %s", mthp_stats[s].key, sz);
		}
	free(sizes);
}

/* A cgroup file's bytes as a sample value: UINT64_MAX is "max", no limit. */
static double bytes_or_inf(uint64_t v)
{
	return v == UINT64_MAX ? INFINITY : (double)v;
}

static void cgroups(struct hk_ctx *ctx, struct hk_metrics *m)
{
	const struct hk_usage_cgroup *cg;
	struct hk_usage *u;
	size_t n;
	int rc = hkl_usage_cgroups_read(ctx, &u);

	if (rc < 0) {
		if (rc == -ENOMEM)
			m->nomem = true;
		else
			failed(ctx, m, rc, "the hugetlb cgroups");
		return;
	}
	n = hk_usage_cgroups(u, &cg);
	for (size_t i = 0; i < n; i++) {
		char sz[32];

		snprintf(sz, sizeof(sz), "%" PRIu64, cg[i].page_size);
		add(m, F_CG_USAGE, (double)cg[i].current, "cgroup", cg[i].path, "page_size", sz,
		    NULL);
		add(m, F_CG_LIMIT, bytes_or_inf(cg[i].max), "cgroup", cg[i].path, "page_size", sz,
		    NULL);
		add(m, F_CG_RSVD_USAGE, (double)cg[i].rsvd_current, "cgroup", cg[i].path,
		    "page_size", sz, NULL);
		add(m, F_CG_RSVD_LIMIT, bytes_or_inf(cg[i].rsvd_max), "cgroup", cg[i].path,
		    "page_size", sz, NULL);
		if (cg[i].events_max != UINT64_MAX)
			add(m, F_CG_REFUSED, (double)cg[i].events_max, "cgroup", cg[i].path,
			    "page_size", sz, NULL);
	}
	if (hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS)) {
		hkl_warn(ctx, "metrics: %u hugetlb cgroups could not be read",
			 hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS));
		m->errors += hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS);
	}
	hk_usage_unref(u);
}

/* A problem of the configuration: logged (the metric says it is not valid). */
static void config_problem(void *data, const char *file, unsigned line, const char *msg)
{
	struct hk_ctx *ctx = data;

	if (file && line)
		hkl_warn(ctx, "%s:%u: %s", file, line, msg);
	else
		hkl_warn(ctx, "%s%s%s", file ? file : "", file ? ": " : "", msg);
}

/* Its items against the machine: hugeadm --check's comparison. */
static void config_drift(struct hk_ctx *ctx, struct hk_metrics *m, const struct hk_plan *plan)
{
	size_t n = hk_plan_items(plan, NULL), drifted = 0;
	bool unread = false;

	for (size_t i = 0; i < n; i++) {
		const struct hk_plan_item *it = hk_plan_item_at(plan, i);
		int rc = hk_plan_item_check(ctx, it, NULL);

		if (rc < 0) {
			failed(ctx, m, rc, "%s (%s)", it->path, it->item);
			unread = true;
		}
		drifted += rc == 0;
	}
	add(m, F_CONFIG_ITEMS, (double)n, NULL);
	/* An item that cannot be read is not known to match: no verdict. */
	if (unread)
		return;
	add(m, F_CONFIG_DRIFT, drifted ? 1 : 0, NULL);
	add(m, F_CONFIG_DRIFTED, (double)drifted, NULL);
}

static void config(struct hk_ctx *ctx, struct hk_metrics *m, const char *path)
{
	struct hk_config *cfg = NULL;
	struct hk_plan *plan = NULL;
	int rc = hk_config_load(ctx, path, config_problem, ctx, &cfg);

	if (rc == -ENOENT || (rc == 0 && hk_config_files(cfg, NULL) == 0)) {
		add(m, F_CONFIG_PRESENT, 0, NULL);
		hk_config_unref(cfg);
		return;
	}
	if (rc < 0 && rc != -EINVAL) {
		failed(ctx, m, rc, "the configuration");
		return;
	}
	add(m, F_CONFIG_PRESENT, 1, NULL);
	if (rc == 0)
		rc = hk_plan_from_config(ctx, cfg, config_problem, ctx, &plan);
	hk_config_unref(cfg);
	if (rc < 0 && rc != -EINVAL) {
		failed(ctx, m, rc, "the configuration's plan");
		return;
	}
	add(m, F_CONFIG_VALID, rc == 0 ? 1 : 0, NULL);
	if (plan)
		config_drift(ctx, m, plan);
	hk_plan_unref(plan);
}

HK_EXPORT void hk_metrics_free(struct hk_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < F_COUNT; i++) {
		for (size_t k = 0; k < m->f[i].pub.n_samples; k++) {
			char **l = (char **)m->f[i].samples[k].labels;

			for (size_t j = 0; l[j]; j++)
				free(l[j]);
			free(l);
		}
		free(m->f[i].samples);
	}
	free(m);
}

HK_EXPORT int hk_metrics_read(struct hk_ctx *ctx, const char *config_path, unsigned flags,
			      struct hk_metrics **ret)
{
	struct hk_metrics *m;

	if (flags)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < F_COUNT; i++)
		m->f[i].pub = fam_pub((enum fam_id)i);
	pools(ctx, m);
	thp(ctx, m);
	cgroups(ctx, m);
	config(ctx, m, config_path);
	add(m, F_ERRORS, (double)m->errors, NULL);
	if (m->nomem) {
		hk_metrics_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

HK_EXPORT size_t hk_metrics_family_count(const struct hk_metrics *m)
{
	(void)m;
	return F_COUNT;
}

HK_EXPORT const struct hk_metric_family *hk_metrics_family_at(const struct hk_metrics *m, size_t i)
{
	return i < F_COUNT ? &m->f[i].pub : NULL;
}

HK_EXPORT const struct hk_metric_sample *hk_metrics_sample_at(const struct hk_metrics *m, size_t i,
							      size_t k)
{
	if (i >= F_COUNT || k >= m->f[i].pub.n_samples)
		return NULL;
	return &m->f[i].samples[k];
}

HK_EXPORT unsigned hk_metrics_errors(const struct hk_metrics *m)
{
	return m->errors;
}
