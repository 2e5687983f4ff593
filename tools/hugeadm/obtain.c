// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the kernel could give now, for --pool-list --json, --explain and the
 * warning before a grow: pages free in one piece in the buddy allocator
 * (hk_buddy_obtainable), and how well transparent huge pages do.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"

int ha_obtainable(struct hugeadm_ctl *ctl, uint64_t size, int node, uint64_t *ret)
{
	int rc;

	/* Said once: the same file would fail the same way for every pool and node. */
	if (ctl->obtain_failed)
		return -EIO;
	rc = hk_buddy_obtainable(ctl->ctx, size, node, ret);

	/* No buddyinfo (an old dump) or a gigantic size: nothing to say, not a failure. */
	if (rc < 0 && rc != -ENOENT && rc != -ERANGE) {
		ha_msg(ctl, HA_ERROR, "cannot read the free page lists (buddyinfo): %s",
		       strerror(-rc));
		ctl->obtain_failed = true;
	}
	return rc;
}

void ha_json_obtainable(struct hugeadm_ctl *ctl, struct hkt_json *j, uint64_t size, int node)
{
	uint64_t n;

	if (ha_obtainable(ctl, size, node, &n) == 0)
		hkt_json_u64(j, "obtainable", n);
	else
		hkt_json_null(j, "obtainable");
}

/*
 * How gigantic pages can be had, since the buddy allocator never holds one:
 * from the CMA area hugetlb_cma= set aside at boot (an estimate: CmaFree
 * counts every CMA area, and others may be using it), else only at boot.
 * *ret_cma: the pages CmaFree holds; -1 without hugetlb_cma, -2 without CmaFree.
 */
static void gigantic_how(struct hugeadm_ctl *ctl, char *buf, size_t len, uint64_t size,
			 int64_t *ret_cma)
{
	uint64_t cma, cma_free;
	char sz[32], *param = NULL;

	hk_format_size(sz, sizeof(sz), size);
	*ret_cma = -1;
	if (ha_hugetlb_cma(ctl, &cma) < 0 || hk_kernel_param(ctl->ctx, "hugetlb_cma", &param) < 0) {
		snprintf(
			buf, len,
			"gigantic: not from the free lists; reserve at boot (\"hugepagesz=%s "
			"hugepages=N\") or set aside CMA (\"hugetlb_cma=SIZE\") to grow at run time",
			sz);
		return;
	}
	if (hk_meminfo_read(ctl->ctx, "CmaFree", &cma_free) < 0) {
		*ret_cma = -2;
		snprintf(buf, len,
			 "gigantic: not from the free lists; hugetlb_cma=%s is set, but the kernel "
			 "shows no CmaFree",
			 param);
	} else {
		*ret_cma = (int64_t)(cma_free * 1024 / size);
		snprintf(buf, len,
			 "gigantic: not from the free lists; hugetlb_cma=%s is set: about %" PRId64
			 " pages from CMA at run time (CmaFree %" PRIu64 " kB, an estimate)",
			 param, *ret_cma, cma_free);
	}
	free(param);
}

void ha_json_gigantic_how(struct hugeadm_ctl *ctl, struct hkt_json *j, uint64_t size)
{
	char how[256];
	int64_t cma;

	gigantic_how(ctl, how, sizeof(how), size, &cma);
	hkt_json_string(j, "how", how);
	if (cma >= 0)
		hkt_json_u64(j, "cma_obtainable", (uint64_t)cma);
	else
		hkt_json_null(j, "cma_obtainable");
}

void ha_explain_obtainable(struct hugeadm_ctl *ctl, struct hk_pool *const *pools, size_t n)
{
	bool header = false;

	for (size_t i = 0; i < n; i++) {
		const struct hk_pool *p = pools[i];
		uint64_t size = hk_pool_get(p, HK_POOL_SIZE), all;
		char sz[32], line[256];
		int rc;

		rc = ha_obtainable(ctl, size, HK_NODE_ALL, &all);
		if (rc < 0 && rc != -ERANGE)
			continue;
		if (!header) {
			printf("\nGrowing a pool now would likely get, without compaction:\n");
			header = true;
		}
		hk_format_size(sz, sizeof(sz), size);
		if (rc == -ERANGE) {
			int64_t cma;

			gigantic_how(ctl, line, sizeof(line), size, &cma);
			printf("  %s pages: %s\n", sz, line);
			continue;
		}
		printf("  %s pages: up to %" PRIu64 " more pages", sz, all);
		for (size_t k = 0, shown = 0;
		     hk_pool_node_count(p) > 1 && k < hk_pool_node_count(p); k++) {
			uint64_t on;

			if (ha_obtainable(ctl, size, hk_pool_node_id(p, k), &on) == 0)
				printf("%snode %d: %" PRIu64, shown++ ? ", " : " (",
				       hk_pool_node_id(p, k), on);
			if (k + 1 == hk_pool_node_count(p) && shown)
				printf(")");
		}
		printf("\n");
	}
}

/* The PMD-size counters of /proc/vmstat, in this order in text and JSON. */
static const char *const thp_counters[] = {
	"thp_fault_alloc",
	"thp_fault_fallback",
	"thp_fault_fallback_charge",
	"thp_collapse_alloc",
	"thp_collapse_alloc_failed",
	"thp_split_page",
	"thp_split_page_failed",
	"thp_deferred_split_page",
	"thp_swpout",
	"thp_swpout_fallback",
	"compact_stall",
	"compact_success",
	"compact_fail",
};

/* Each mTHP size's counters (6.18 has these; older kernels fewer, newer more). */
static const char *const mthp_stats[] = {
	"anon_fault_alloc", "anon_fault_fallback", "anon_fault_fallback_charge",
	"shmem_alloc",	    "shmem_fallback",	   "split",
	"split_failed",	    "split_deferred",	   "nr_anon",
	"swpout",	    "swpout_fallback",
};

#define N_THP (sizeof(thp_counters) / sizeof(thp_counters[0]))
#define N_MTHP (sizeof(mthp_stats) / sizeof(mthp_stats[0]))

struct thp_numbers {
	bool have[N_THP];
	uint64_t v[N_THP];
};

static uint64_t thp_get(const struct thp_numbers *t, const char *name)
{
	for (size_t i = 0; i < N_THP; i++)
		if (strcmp(thp_counters[i], name) == 0)
			return t->have[i] ? t->v[i] : 0;
	return 0;
}

/* false when the kernel has no vmstat THP counters at all. */
static bool thp_load(struct hugeadm_ctl *ctl, struct thp_numbers *t)
{
	bool any = false;

	for (size_t i = 0; i < N_THP; i++) {
		t->have[i] = hk_vmstat_read(ctl->ctx, thp_counters[i], &t->v[i]) == 0;
		any |= t->have[i] && strncmp(thp_counters[i], "thp_", 4) == 0;
	}
	return any;
}

/*
 * The one-line verdict. *ret_pct is the share of huge page faults that got a
 * huge page, or -1 when there were none.
 */
static void thp_verdict(const struct thp_numbers *t, char *buf, size_t len, int *ret_pct)
{
	uint64_t ok = thp_get(t, "thp_fault_alloc"), fb = thp_get(t, "thp_fault_fallback");
	uint64_t coll = thp_get(t, "thp_collapse_alloc");
	uint64_t pct;

	*ret_pct = -1;
	if (ok + fb == 0 || ok + fb < ok) {
		snprintf(buf, len,
			 "THP: no huge page faults counted yet; %" PRIu64
			 " collapses by khugepaged",
			 coll);
		return;
	}
	pct = (uint64_t)((double)ok * 100.0 / (double)(ok + fb));
	*ret_pct = (int)pct;
	if (pct >= 90)
		snprintf(buf, len,
			 "THP: %" PRIu64 " %% of huge page faults got a huge page; %" PRIu64
			 " collapses by khugepaged",
			 pct, coll);
	else if (pct >= 50)
		snprintf(buf, len,
			 "THP: %" PRIu64 " %% of huge page faults got a huge page; the rest fell "
			 "back: memory is getting fragmented, see compaction",
			 pct);
	else
		snprintf(buf, len,
			 "THP: most faults fell back (%" PRIu64 " %% got a huge page): memory is "
			 "fragmented, see compaction",
			 pct);
}

void ha_explain_thp(struct hugeadm_ctl *ctl)
{
	struct thp_numbers t;
	uint64_t *sizes = NULL;
	size_t n = 0;
	char line[256];
	int pct;

	if (!thp_load(ctl, &t))
		return;
	thp_verdict(&t, line, sizeof(line), &pct);
	printf("%s\n", line);
	printf("  compaction: %" PRIu64 " stalls, %" PRIu64 " succeeded, %" PRIu64 " failed\n",
	       thp_get(&t, "compact_stall"), thp_get(&t, "compact_success"),
	       thp_get(&t, "compact_fail"));
	if (hk_thp_sizes(ctl->ctx, &sizes, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t ok, fb;
		char sz[32];

		if (hk_thp_stat_read(ctl->ctx, sizes[i], "anon_fault_alloc", &ok) < 0 ||
		    hk_thp_stat_read(ctl->ctx, sizes[i], "anon_fault_fallback", &fb) < 0 ||
		    ok + fb == 0)
			continue;
		hk_format_size(sz, sizeof(sz), sizes[i]);
		printf("  %s: %" PRIu64 " anonymous faults got a huge page, %" PRIu64
		       " fell back\n",
		       sz, ok, fb);
	}
	free(sizes);
}

void ha_json_thp(struct hugeadm_ctl *ctl, struct hkt_json *j)
{
	struct thp_numbers t;
	uint64_t *sizes = NULL;
	size_t n = 0;
	char line[256], *v;
	int pct;

	hkt_json_open_object(j, "thp");
	for (size_t k = 0; k < 2; k++) {
		const char *knob = k ? "defrag" : "enabled";

		if (hk_thp_read(ctl->ctx, knob, &v) == 0) {
			hkt_json_string(j, knob, v);
			free(v);
		} else {
			hkt_json_null(j, knob);
		}
	}
	if (!thp_load(ctl, &t)) {
		hkt_json_null(j, "counters");
		hkt_json_null(j, "fault_alloc_pct");
		hkt_json_null(j, "verdict");
	} else {
		hkt_json_open_object(j, "counters");
		for (size_t i = 0; i < N_THP; i++)
			if (t.have[i])
				hkt_json_u64(j, thp_counters[i], t.v[i]);
		hkt_json_close_object(j);
		thp_verdict(&t, line, sizeof(line), &pct);
		if (pct < 0)
			hkt_json_null(j, "fault_alloc_pct");
		else
			hkt_json_int(j, "fault_alloc_pct", pct);
		hkt_json_string(j, "verdict", line);
	}
	hkt_json_open_array(j, "sizes");
	if (hk_thp_sizes(ctl->ctx, &sizes, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			hkt_json_open_object(j, NULL);
			hkt_json_u64(j, "size", sizes[i]);
			hkt_json_open_object(j, "stats");
			for (size_t s = 0; s < N_MTHP; s++) {
				uint64_t x;

				if (hk_thp_stat_read(ctl->ctx, sizes[i], mthp_stats[s], &x) == 0)
					hkt_json_u64(j, mthp_stats[s], x);
			}
			hkt_json_close_object(j);
			hkt_json_close_object(j);
		}
		free(sizes);
	}
	hkt_json_close_array(j);
	hkt_json_close_object(j);
}

void ha_warn_obtainable(struct hugeadm_ctl *ctl, uint64_t size, int node, uint64_t need)
{
	uint64_t obt;
	char sz[32], where[32] = "";

	if (ctl->hard || need == 0 || ha_obtainable(ctl, size, node, &obt) < 0 || need <= obt)
		return;
	hk_format_size(sz, sizeof(sz), size);
	if (node != HK_NODE_ALL)
		snprintf(where, sizeof(where), " on node %d", node);
	/* --apply has no --hard: the kernel compacts as it allocates, and a short pool is said. */
	ha_msg(ctl, HA_WARNING,
	       "%s pages%s: %" PRIu64 " more requested but only %" PRIu64
	       " obtainable now without compaction; %s",
	       sz, where, need, obt,
	       ctl->apply ? "what the kernel cannot find is reported short (pools that must be "
			    "had: hugeadm --generate boot)"
			  : "--hard compacts memory and retries");
}

void ha_warn_grow(struct hugeadm_ctl *ctl, const struct hk_pool *pool, int node, uint64_t from,
		  uint64_t to)
{
	ha_warn_obtainable(ctl, hk_pool_get(pool, HK_POOL_SIZE), node,
			   hk_pool_new_pages(pool, node, from, to));
}
