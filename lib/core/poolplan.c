// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The pool planner: the pools as a plan leaves them, and what one change of
 * a pool writes, in which order, from there. One walk for both planners:
 * hugeadm's --pool-pages-min and --pool-pages-max (hk_pool_change, at
 * validation from the pools the earlier options leave, and again at apply
 * time from the kernel's pool when someone else wrote it in between) and a
 * configuration's [pool] sections (plan.c: minimum and maximum together,
 * per node, demote = yes), each turned into one intent (struct
 * hkl_pool_intent, internal.h).
 *
 * The pool as planned: Minimum (persistent pages), overcommit, and each
 * node's persistent pages; Maximum is Minimum + overcommit (poolmath.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "poolmath.h"

struct held {
	uint64_t size;
	bool gigantic;
	uint64_t min; /* persistent pages: Minimum */
	uint64_t oc;  /* overcommit */
	size_t n_nodes;
	int *ids;	    /* node numbers */
	uint64_t *node_min; /* each node's persistent pages */
};

struct hk_pool_plan {
	struct hk_ctx *ctx;
	struct held *h;
	size_t n;
};

HK_EXPORT int hk_pool_plan_new(struct hk_ctx *ctx, struct hk_pool_plan **ret_pools)
{
	struct hk_pool_plan *pp;

	if (!ctx || !ret_pools)
		return -EINVAL;
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	pp->ctx = hk_ref(ctx);
	*ret_pools = pp;
	return 0;
}

HK_EXPORT void hk_pool_plan_unref(struct hk_pool_plan *pools)
{
	if (!pools)
		return;
	for (size_t i = 0; i < pools->n; i++) {
		free(pools->h[i].ids);
		free(pools->h[i].node_min);
	}
	free(pools->h);
	hk_unref(pools->ctx);
	free(pools);
}

static const struct held *find(const struct hk_pool_plan *pp, uint64_t size)
{
	for (size_t i = 0; pp && i < pp->n; i++)
		if (pp->h[i].size == size)
			return &pp->h[i];
	return NULL;
}

/* The pool of size as the kernel has it now, into h: 0 or -errno (h untouched then). */
static int read_held(struct hk_ctx *ctx, uint64_t size, struct held *h)
{
	struct hk_pool *pool;
	struct held n = {.size = size};
	int rc = hk_pool_read(ctx, size, &pool);

	if (rc < 0)
		return rc;
	n.n_nodes = hk_pool_node_count(pool);
	n.ids = calloc(n.n_nodes ? n.n_nodes : 1, sizeof(*n.ids));
	n.node_min = calloc(n.n_nodes ? n.n_nodes : 1, sizeof(*n.node_min));
	if (!n.ids || !n.node_min) {
		free(n.ids);
		free(n.node_min);
		hk_pool_unref(pool);
		return -ENOMEM;
	}
	n.gigantic = hk_pool_is_gigantic(pool);
	n.min = hk_pool_get(pool, HK_POOL_MINIMUM);
	n.oc = hk_pool_get(pool, HK_POOL_OVERCOMMIT);
	for (size_t k = 0; k < n.n_nodes; k++) {
		n.ids[k] = hk_pool_node_id(pool, k);
		n.node_min[k] = hk_pool_node_get(pool, k, HK_POOL_MINIMUM);
	}
	hk_pool_unref(pool);
	*h = n;
	return 0;
}

bool hkl_pool_plan_has_node(const struct hk_pool_plan *pools, uint64_t size, int node)
{
	const struct held *h = find(pools, size);

	for (size_t k = 0; h && k < h->n_nodes; k++)
		if (h->ids[k] == node)
			return true;
	return false;
}

HK_EXPORT int hk_pool_plan_load(struct hk_pool_plan *pools, uint64_t page_size)
{
	struct held *nh;
	int rc;

	if (!pools)
		return -EINVAL;
	if (find(pools, page_size))
		return 0;
	nh = realloc(pools->h, (pools->n + 1) * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	pools->h = nh;
	rc = read_held(pools->ctx, page_size, &pools->h[pools->n]);
	if (rc < 0)
		return rc;
	pools->n++;
	return 0;
}

static ssize_t node_index(const struct held *h, int node)
{
	for (size_t k = 0; k < h->n_nodes; k++)
		if (h->ids[k] == node)
			return (ssize_t)k;
	return -1;
}

HK_EXPORT uint64_t hk_pool_plan_get(const struct hk_pool_plan *pools, uint64_t page_size, int node,
				    enum hk_pool_field field)
{
	const struct held *h = find(pools, page_size);
	ssize_t k;

	if (!h)
		return 0;
	if (node != HK_NODE_ALL) {
		k = node_index(h, node);
		return k >= 0 && field == HK_POOL_MINIMUM ? h->node_min[k] : 0;
	}
	switch (field) {
	case HK_POOL_MINIMUM:
		return h->min;
	case HK_POOL_OVERCOMMIT:
		return h->oc;
	case HK_POOL_MAXIMUM:
		return hkp_pool_max(h->min, h->oc);
	default:
		return 0;
	}
}

HK_EXPORT bool hk_pool_plan_has_node(const struct hk_pool_plan *pools, uint64_t page_size, int node)
{
	const struct held *h = find(pools, page_size);

	return h && node_index(h, node) >= 0;
}

HK_EXPORT bool hk_pool_plan_is_gigantic(const struct hk_pool_plan *pools, uint64_t page_size)
{
	const struct held *h = find(pools, page_size);

	return h && h->gigantic;
}

HK_EXPORT int hk_pool_plan_recommended_shmmax(struct hk_pool_plan *pools, uint64_t *ret)
{
	uint64_t *sizes = NULL, sum = 0;
	size_t n = 0;
	int rc;

	if (!pools || !ret)
		return -EINVAL;
	rc = hk_page_sizes(pools->ctx, &sizes, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint64_t max;

		rc = hk_pool_plan_load(pools, sizes[i]);
		if (rc < 0)
			break;
		max = hk_pool_plan_get(pools, sizes[i], HK_NODE_ALL, HK_POOL_MAXIMUM);
		sum = hkp_sat_add(sum, hkp_bytes(max, sizes[i]));
	}
	free(sizes);
	if (rc == 0)
		*ret = sum;
	return rc;
}

HK_EXPORT int hk_plan_add_recommended_shmmax(struct hk_ctx *ctx, struct hk_plan *plan,
					     struct hk_pool_plan *pools, const char *why,
					     struct hk_shmmax_plan *ret)
{
	struct hk_shmmax_plan sp = {.size = sizeof(sp)};
	int rc;

	if (!ctx || !plan || !ret || ret->size != sizeof(*ret) || (pools && pools->ctx != ctx))
		return -EINVAL;
	rc = pools ? hk_pool_plan_recommended_shmmax(pools, &sp.recommended)
		   : hk_recommended_shmmax(ctx, &sp.recommended);
	if (rc == 0)
		rc = hk_sysctl_read(ctx, HK_SYSCTL_SHMMAX, &sp.current);
	if (rc == 0 && hkp_shmmax_written(sp.recommended, sp.current)) {
		rc = hk_plan_add_sysctl(ctx, plan, HK_SYSCTL_SHMMAX, sp.recommended, why);
		sp.added = rc >= 0;
		sp.index = rc >= 0 ? (size_t)rc : 0;
	}
	/* Kept with or without its item: hk_run_plan computes it again from the pools written. */
	if (rc >= 0)
		rc = hkl_plan_keep_shmmax(plan, why, &sp);
	if (rc < 0)
		return rc;
	*ret = sp;
	return 0;
}

/* The pool's (HK_NODE_ALL) or a node's free and persistent pages now: false when it has no such node. */
static bool pages_now(const struct hk_pool *now, int node, uint64_t *ret_free, uint64_t *ret_min)
{
	if (node == HK_NODE_ALL) {
		*ret_free = hk_pool_get(now, HK_POOL_FREE);
		*ret_min = hk_pool_get(now, HK_POOL_MINIMUM);
		return true;
	}
	for (size_t k = 0; k < hk_pool_node_count(now); k++) {
		if (hk_pool_node_id(now, k) != node)
			continue;
		*ret_free = hk_pool_node_get(now, k, HK_POOL_FREE);
		*ret_min = hk_pool_node_get(now, k, HK_POOL_MINIMUM);
		return true;
	}
	return false;
}

HK_EXPORT uint64_t hk_pool_plan_free(const struct hk_pool_plan *pools, const struct hk_pool *now,
				     int node)
{
	uint64_t size, free_now, min_now, planned;

	if (!now || !pages_now(now, node, &free_now, &min_now))
		return 0;
	size = hk_pool_get(now, HK_POOL_SIZE);
	/* A pool the plan does not hold, or a node it does not know: as the kernel has it. */
	planned = find(pools, size) &&
				  (node == HK_NODE_ALL || hk_pool_plan_has_node(pools, size, node))
			  ? hk_pool_plan_get(pools, size, node, HK_POOL_MINIMUM)
			  : min_now;
	return hkp_sat_add(free_now, hkp_sat_sub(planned, min_now));
}

HK_EXPORT uint64_t hk_pool_new_pages(const struct hk_pool *pool, int node, uint64_t from,
				     uint64_t to)
{
	uint64_t surplus = 0;

	if (!pool)
		return 0;
	if (node == HK_NODE_ALL)
		surplus = hk_pool_get(pool, HK_POOL_SURPLUS);
	for (size_t k = 0; node != HK_NODE_ALL && k < hk_pool_node_count(pool); k++)
		if (hk_pool_node_id(pool, k) == node)
			surplus = hk_pool_node_get(pool, k, HK_POOL_SURPLUS);
	return hkp_sat_sub(hkp_sat_sub(to, from), surplus);
}

HK_EXPORT uint64_t hk_pool_overcommit_for(uint64_t minimum, uint64_t maximum)
{
	return hkp_pool_oc(minimum, maximum);
}

/* Whether the change's fields are ones the planner knows. */
static bool change_ok(const struct hk_pool_plan *pp, const struct hk_pool_change *ch)
{
	return pp && ch && ch->size >= sizeof(*ch) &&
	       (ch->field == HK_POOL_MINIMUM || ch->field == HK_POOL_MAXIMUM) &&
	       (ch->sign == 0 || ch->sign == '+' || ch->sign == '-') && (ch->nodes || !ch->n_nodes);
}

static bool listed(const struct hk_pool_change *ch, int node)
{
	for (size_t j = 0; ch->nodes && j < ch->n_nodes; j++)
		if (ch->nodes[j] == node)
			return true;
	return false;
}

/*
 * An option's change as the planner's intent: with nodes, the listed nodes
 * the pool has, in its node order (wants: room for h's nodes); a Minimum
 * keeps the Maximum; a Maximum keeps the Minimum unless it goes below it.
 */
static struct hkl_pool_intent intent_of(const struct held *h, const struct hk_pool_change *ch,
					struct hkl_pool_node_want *wants)
{
	struct hkl_pool_intent in = {.page_size = ch->page_size, .max = HKL_MAX_KEEP};

	if (ch->nodes) {
		in.min = HKL_MIN_NODES;
		in.nodes = wants;
		for (size_t k = 0; k < h->n_nodes; k++)
			if (listed(ch, h->ids[k]))
				wants[in.n_nodes++] = (struct hkl_pool_node_want){
					.node = h->ids[k], .sign = ch->sign, .pages = ch->pages};
	} else if (ch->field == HK_POOL_MINIMUM) {
		in.min = HKL_MIN_POOL;
		in.min_sign = ch->sign;
		in.min_pages = ch->pages;
		in.flags = ch->flags & HK_POOL_SET_MEMPOLICY;
	} else {
		in.min = HKL_MIN_KEEP;
		in.max = HKL_MAX_SET;
		in.max_sign = ch->sign;
		in.max_pages = ch->pages;
		in.flags = ch->flags & HK_POOL_SET_MEMPOLICY;
	}
	return in;
}

/* The wants of intent_of, for h's nodes: NULL when out of memory. */
static struct hkl_pool_node_want *wants_for(const struct held *h)
{
	return calloc(h->n_nodes ? h->n_nodes : 1, sizeof(struct hkl_pool_node_want));
}

/* What part i of the intent's Minimum (a listed node, or the pool's) asks of the have it has. */
static uint64_t part_target(const struct hkl_pool_intent *in, size_t i, uint64_t have)
{
	return in->min == HKL_MIN_NODES ? hkp_adjust(in->nodes[i].sign, have, in->nodes[i].pages)
					: hkp_adjust(in->min_sign, have, in->min_pages);
}

/* Node k's persistent pages after the intent: its target when listed, else as it is. */
static uint64_t node_target(const struct held *h, const struct hkl_pool_intent *in, size_t k)
{
	for (size_t j = 0; in->min == HKL_MIN_NODES && j < in->n_nodes; j++)
		if (in->nodes[j].node == h->ids[k])
			return part_target(in, j, h->node_min[k]);
	return h->node_min[k];
}

/* Whether the intent writes an overcommit: a Maximum said or kept for a whole pool; never a gigantic one. */
static bool overcommit_said(const struct held *h, const struct hkl_pool_intent *in)
{
	return !h->gigantic &&
	       (in->max == HKL_MAX_SET || (in->max == HKL_MAX_KEEP && in->min != HKL_MIN_NODES));
}

/*
 * The Minimum and Maximum the intent leaves, and whether its overcommit is
 * written first (the one order: struct hkl_pool_intent). A gigantic pool
 * has no overcommit: its Maximum follows its Minimum.
 */
static void targets(const struct held *h, const struct hkl_pool_intent *in, uint64_t *ret_min,
		    uint64_t *ret_max, bool *ret_oc_first)
{
	uint64_t max0 = hkp_pool_max(h->min, h->oc), min = h->min, max = max0, kept;

	if (in->max == HKL_MAX_SET)
		max = hkp_adjust(in->max_sign, max0, in->max_pages);
	if (in->min == HKL_MIN_POOL) {
		min = part_target(in, 0, h->min);
	} else if (in->min == HKL_MIN_NODES) {
		/* The pool's, each listed node moved: pages no node holds yet (demoted in) stay counted. */
		for (size_t k = 0; k < h->n_nodes; k++)
			min = hkp_sat_add(hkp_sat_sub(min, h->node_min[k]), node_target(h, in, k));
	} else if (in->max == HKL_MAX_SET && max < h->min) {
		min = max;
	}
	kept = min > max0 ? min : max0;
	if (in->max == HKL_MAX_KEEP)
		max = kept;
	else if (in->max == HKL_MAX_FOLLOW)
		max = hkp_pool_max(min, h->oc);
	if (h->gigantic && in->min != HKL_MIN_KEEP)
		max = min;
	*ret_min = min;
	*ret_max = max;
	*ret_oc_first =
		overcommit_said(h, in) &&
		hkp_overcommit_first(min, h->oc, in->min == HKL_MIN_KEEP ? max : kept, h->gigantic);
}

/*
 * Counts beyond memory: an error for a Minimum, whose pages the kernel must
 * allocate now, and for any decrease; for a Maximum set or raised only a
 * limit that surplus pages never reach (the kernel takes up to
 * 18446744073709551615): a warning. A tree without MemTotal has no bound.
 */
static void check_memory(struct hk_ctx *ctx, const struct hk_pool_change *ch,
			 struct hk_pool_verdict *v)
{
	uint64_t kb;

	if (hk_meminfo_read(ctx, "MemTotal", &kb) < 0)
		return;
	v->mem_kb = kb;
	v->mem_pages = kb / (ch->page_size / 1024);
	if (ch->field == HK_POOL_MAXIMUM && ch->sign != '-')
		v->limit_beyond_memory = ch->pages > v->mem_pages;
	else if (ch->pages > v->mem_pages)
		v->problem = HK_POOL_CHANGE_BEYOND_MEMORY;
	else if (ch->field == HK_POOL_MINIMUM && v->minimum > v->mem_pages)
		v->problem = HK_POOL_CHANGE_MINIMUM_BEYOND_MEMORY;
}

HK_EXPORT int hk_pool_change_check(struct hk_pool_plan *pools, const struct hk_pool_change *change,
				   struct hk_pool_verdict *ret)
{
	struct hk_pool_verdict v = {.size = sizeof(v), .node = HK_NODE_ALL};
	struct hkl_pool_node_want *wants;
	struct hkl_pool_intent in;
	const struct held *h;
	bool oc_first;

	if (!ret || ret->size < sizeof(*ret) || !change_ok(pools, change))
		return -EINVAL;
	h = find(pools, change->page_size);
	if (!h)
		return -ENOENT;
	wants = wants_for(h);
	if (!wants)
		return -ENOMEM;
	in = intent_of(h, change, wants);
	targets(h, &in, &v.minimum, &v.maximum, &oc_first);
	free(wants);
	for (size_t j = 0; j < change->n_nodes; j++) {
		if (node_index(h, change->nodes[j]) < 0) {
			v.problem = HK_POOL_CHANGE_NO_NODE;
			v.node = change->nodes[j];
			*ret = v;
			return 0;
		}
	}
	check_memory(pools->ctx, change, &v);
	if (v.problem == HK_POOL_CHANGE_FITS && h->gigantic && v.maximum > v.minimum)
		v.problem = HK_POOL_CHANGE_GIGANTIC;
	*ret = v;
	return 0;
}

/* size's held pool, to move (NULL: not held). */
static struct held *held_of(struct hk_pool_plan *pp, uint64_t size)
{
	const struct held *h = find(pp, size);

	return h ? &pp->h[h - pp->h] : NULL;
}

/*
 * pages of in's pool demoted on node: they join the pool of its demote_to
 * as persistent pages (of that node; of the pool for HK_NODE_ALL), which
 * the plan of that pool counts when it comes after.
 */
static void demoted(struct hk_pool_plan *pp, const struct hkl_pool_intent *in, int node,
		    uint64_t pages)
{
	struct held *t = in->demote_to && in->page_size % in->demote_to == 0
				 ? held_of(pp, in->demote_to)
				 : NULL;
	uint64_t ratio = t ? in->page_size / in->demote_to : 0;
	ssize_t k;

	if (!t || t->size >= in->page_size)
		return;
	pages = pages > UINT64_MAX / ratio ? UINT64_MAX : pages * ratio;
	t->min = hkp_sat_add(t->min, pages);
	k = node == HK_NODE_ALL ? -1 : node_index(t, node);
	if (k >= 0)
		t->node_min[k] = hkp_sat_add(t->node_min[k], pages);
}

/* What the walk of one intent keeps: its pool, where its writes go. */
struct walk {
	struct hk_pool_plan *pp;
	struct held *h;
	const struct hkl_pool_intent *in;
	hkl_pool_write_fn fn;
	void *data;
	uint64_t min, max; /* what the intent leaves (targets) */
};

/* Each part's demote down to its Minimum (told even when nothing is above it). */
static int demotes(const struct walk *w)
{
	const struct hkl_pool_intent *in = w->in;
	size_t n = in->min == HKL_MIN_NODES ? in->n_nodes : 1;
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		int node = in->min == HKL_MIN_NODES ? in->nodes[i].node : HK_NODE_ALL;
		ssize_t k = node == HK_NODE_ALL ? -1 : node_index(w->h, node);
		uint64_t have = node == HK_NODE_ALL ? w->h->min : k >= 0 ? w->h->node_min[k] : 0;
		uint64_t want = part_target(in, i, have);

		rc = w->fn(w->data, node, HK_POOL_DEMOTE, want, have, 0);
		if (rc == 0 && have > want)
			demoted(w->pp, in, node, have - want);
		/* 1: a demote the caller did not plan (the kernel cannot): nothing comes in. */
		rc = rc > 0 ? 0 : rc;
	}
	return rc;
}

/* The Minimum's writes: the whole pool's, or each listed node's in the order listed. */
static int minimums(const struct walk *w, uint64_t min)
{
	const struct hkl_pool_intent *in = w->in;
	struct held *h = w->h;
	uint64_t was = h->min;
	int rc = 0;

	if (in->min != HKL_MIN_NODES) {
		h->min = min;
		if (in->min == HKL_MIN_KEEP && in->declare)
			return 0;
		return w->fn(w->data, HK_NODE_ALL, HK_POOL_MINIMUM, min, was, in->flags);
	}
	for (size_t i = 0; i < in->n_nodes && rc == 0; i++) {
		ssize_t k = node_index(h, in->nodes[i].node);
		uint64_t have = k >= 0 ? h->node_min[k] : 0;
		uint64_t want = part_target(in, i, have);

		if (k >= 0) {
			h->min = hkp_sat_add(hkp_sat_sub(h->min, have), want);
			h->node_min[k] = want;
		}
		rc = w->fn(w->data, in->nodes[i].node, HK_POOL_MINIMUM, want, have, 0);
	}
	return rc;
}

/* The overcommit that gives max, told and held. */
static int overcommit(const struct walk *w, uint64_t min, uint64_t max)
{
	uint64_t was = w->h->oc;

	w->h->oc = hkp_pool_oc(min, max);
	return w->fn(w->data, HK_NODE_ALL, HK_POOL_OVERCOMMIT, w->h->oc, was, 0);
}

/*
 * The one walk (struct hkl_pool_intent): the overcommit first where the
 * order says, the demotes, the Minimum, the overcommit
 * after (a configuration's said one always; else where the pool does not
 * have the Maximum yet).
 */
static int walk(struct walk *w)
{
	uint64_t min, max;
	bool oc_first;
	int rc = 0;

	targets(w->h, w->in, &w->min, &w->max, &oc_first);
	min = w->min;
	max = w->max;
	if (oc_first)
		rc = overcommit(w, min, max);
	if (rc == 0 && w->in->demote && w->in->min != HKL_MIN_KEEP)
		rc = demotes(w);
	if (rc == 0)
		rc = minimums(w, min);
	if (rc == 0 && overcommit_said(w->h, w->in) &&
	    (w->in->declare ? !oc_first : hkp_pool_max(w->h->min, w->h->oc) != max))
		rc = overcommit(w, min, max);
	return rc;
}

int hkl_pool_plan_preview(struct hk_pool_plan *pools, const struct hkl_pool_intent *in,
			  uint64_t *ret_min, uint64_t *ret_max, bool *ret_oc_first)
{
	int rc = pools && in ? hk_pool_plan_load(pools, in->page_size) : -EINVAL;

	if (rc < 0)
		return rc;
	targets(find(pools, in->page_size), in, ret_min, ret_max, ret_oc_first);
	return 0;
}

int hkl_pool_plan_intent(struct hk_pool_plan *pools, const struct hkl_pool_intent *in,
			 hkl_pool_write_fn fn, void *data)
{
	struct walk w = {.pp = pools, .in = in, .fn = fn, .data = data};
	int rc;

	if (!pools || !in || !fn)
		return -EINVAL;
	/* The pool demoted into is held first: loading it may move the held pools. */
	if (in->demote && in->demote_to && in->demote_to < in->page_size)
		(void)hk_pool_plan_load(pools, in->demote_to);
	rc = hk_pool_plan_load(pools, in->page_size);
	if (rc < 0)
		return rc;
	w.h = held_of(pools, in->page_size);
	return walk(&w);
}

/* An option's change, planned by the walk: each write one of its group's items. */
struct group_walk {
	struct hk_pool_plan *pp;
	struct hk_plan *plan;
	struct hkl_pool_group *g;
};

static int group_write(void *data, int node, enum hk_pool_field field, uint64_t number,
		       uint64_t before, unsigned flags)
{
	struct group_walk *gw = data;
	int rc = hk_plan_add_pool(gw->pp->ctx, gw->plan, gw->g->change.page_size, node, field,
				  number, flags, gw->g->why);

	if (rc < 0)
		return rc;
	gw->g->before[gw->g->n++] = before;
	return 0;
}

static int resolve(struct hk_pool_plan *pp, struct held *h, struct hk_plan *plan,
		   struct hkl_pool_group *g)
{
	struct hkl_pool_node_want *wants = wants_for(h);
	struct group_walk gw = {.pp = pp, .plan = plan, .g = g};
	struct walk w = {.pp = pp, .h = h, .fn = group_write, .data = &gw};
	struct hkl_pool_intent in;
	int rc;

	if (!wants)
		return -ENOMEM;
	in = intent_of(h, &g->change, wants);
	w.in = &in;
	rc = walk(&w);
	g->min1 = w.min;
	g->max1 = w.max;
	free(wants);
	return rc;
}

void hkl_pool_group_fini(struct hkl_pool_group *g)
{
	free((int *)g->change.nodes);
	free(g->why);
	free(g->before);
	*g = (struct hkl_pool_group){0};
}

/* A group for change, planned from h: its copies made (0 or -ENOMEM). */
static int group_init(struct hkl_pool_group *g, const struct held *h,
		      const struct hk_pool_change *change, const char *why, size_t first)
{
	int *nodes = NULL;

	*g = (struct hkl_pool_group){.first = first, .min0 = h->min, .oc0 = h->oc};
	g->change = *change;
	g->change.size = sizeof(g->change);
	g->change.nodes = NULL;
	/* A nodes array, even an empty one, keeps the change a change of nodes. */
	if (change->nodes) {
		nodes = calloc(change->n_nodes ? change->n_nodes : 1, sizeof(*nodes));
		if (nodes && change->n_nodes)
			memcpy(nodes, change->nodes, change->n_nodes * sizeof(*nodes));
	}
	g->change.nodes = nodes;
	g->why = why ? strdup(why) : NULL;
	/* At most two overcommit items and one Minimum per node (or for the pool). */
	g->before = calloc(h->n_nodes + 3, sizeof(*g->before));
	if ((change->nodes && !nodes) || (why && !g->why) || !g->before) {
		hkl_pool_group_fini(g);
		return -ENOMEM;
	}
	return 0;
}

HK_EXPORT int hk_plan_add_pool_change(struct hk_plan *plan, struct hk_pool_plan *pools,
				      const struct hk_pool_change *change, const char *why,
				      size_t *ret_n)
{
	struct hkl_pool_group g;
	const struct hk_plan_item *items;
	const struct held *ch_pool;
	size_t first;
	int rc;

	if (!plan || !ret_n || !change_ok(pools, change))
		return -EINVAL;
	*ret_n = 0;
	ch_pool = find(pools, change->page_size);
	if (!ch_pool)
		return -ENOENT;
	for (size_t j = 0; j < change->n_nodes; j++)
		if (node_index(ch_pool, change->nodes[j]) < 0)
			return -ENOENT;
	first = hk_plan_items(plan, &items);
	rc = group_init(&g, ch_pool, change, why, first);
	if (rc < 0)
		return rc;
	/* The pool moves with each write: the held copy is the plan's (find gives it const). */
	rc = resolve(pools, &pools->h[ch_pool - pools->h], plan, &g);
	*ret_n = g.n;
	if (rc < 0 || g.n == 0) {
		hkl_pool_group_fini(&g);
		return rc < 0 ? rc : (int)first;
	}
	rc = hkl_plan_keep_group(plan, &g);
	return rc < 0 ? rc : (int)first;
}

HK_EXPORT int hk_plan_pool_change(const struct hk_plan *plan, size_t first,
				  struct hk_pool_change_plan *ret)
{
	const struct hkl_pool_group *g = hkl_plan_group(plan, first);
	const struct hk_plan_item *items;
	bool grows = false;

	if (!plan || !ret || ret->size != sizeof(*ret))
		return -EINVAL;
	if (!g || g->first != first)
		return -ENOENT;
	hk_plan_items(plan, &items);
	for (size_t i = 0; i < g->n; i++)
		if (items[g->first + i].field == HK_POOL_MINIMUM)
			grows |= items[g->first + i].number > g->before[i];
	*ret = (struct hk_pool_change_plan){
		.size = sizeof(*ret),
		.n = g->n,
		.minimum_before = g->min0,
		.maximum_before = hkp_pool_max(g->min0, g->oc0),
		.minimum_after = g->min1,
		.maximum_after = g->max1,
		.grows = grows,
	};
	return 0;
}

HK_EXPORT int hk_plan_item_before(const struct hk_plan *plan, size_t index, uint64_t *ret)
{
	const struct hkl_pool_group *g = hkl_plan_group(plan, index);

	if (!plan || !ret)
		return -EINVAL;
	if (!g)
		return -ENOENT;
	*ret = g->before[index - g->first];
	return 0;
}

/* Whether the kernel's pool now (h) differs from the one g was planned from. */
static bool moved(const struct hkl_pool_group *g, const struct hk_plan_item *items,
		  const struct held *h)
{
	if (h->oc != g->oc0)
		return true;
	for (size_t i = 0; i < g->n; i++) {
		const struct hk_plan_item *it = &items[g->first + i];
		ssize_t k = it->node == HK_NODE_ALL ? -1 : node_index(h, it->node);
		uint64_t now = it->node == HK_NODE_ALL ? h->min : k < 0 ? 0 : h->node_min[k];

		if (it->field == HK_POOL_MINIMUM && now != g->before[i])
			return true;
	}
	return false;
}

HK_EXPORT int hk_plan_pool_change_again(struct hk_ctx *ctx, const struct hk_plan *plan,
					size_t first, struct hk_plan **ret_again)
{
	const struct hkl_pool_group *g = hkl_plan_group(plan, first);
	const struct hk_plan_item *items;
	struct hk_pool_plan *pools = NULL;
	struct hk_plan *again = NULL;
	size_t n;
	int rc;

	if (!ctx || !plan || !ret_again)
		return -EINVAL;
	*ret_again = NULL;
	if (!g || g->first != first)
		return -ENOENT;
	/* The kernel's pool, read once: compared, and planned from when it moved. */
	rc = hk_pool_plan_new(ctx, &pools);
	if (rc == 0)
		rc = hk_pool_plan_load(pools, g->change.page_size);
	hk_plan_items(plan, &items);
	if (rc == 0 && !moved(g, items, find(pools, g->change.page_size))) {
		hk_pool_plan_unref(pools);
		return 0;
	}
	if (rc == 0)
		rc = hk_plan_new(&again);
	if (rc == 0)
		rc = hk_plan_add_pool_change(again, pools, &g->change, g->why, &n);
	hk_pool_plan_unref(pools);
	if (rc < 0) {
		hk_plan_unref(again);
		return rc;
	}
	*ret_again = again;
	return 1;
}

/* Whether any size of the kernel has demote files (then the kernel has demote). */
static bool kernel_demotes(struct hk_ctx *ctx)
{
	uint64_t *sizes;
	size_t n;
	bool any = false;

	if (hk_page_sizes(ctx, &sizes, &n) < 0)
		return false;
	for (size_t i = 0; i < n && !any; i++) {
		struct hk_pool *p;

		if (hk_pool_read(ctx, sizes[i], &p) == 0) {
			any = hk_pool_get(p, HK_POOL_DEMOTE_SIZE) != 0;
			hk_pool_unref(p);
		}
	}
	free(sizes);
	return any;
}

/* One listed node of a demote: its pool, its demote file, its free pages (planned grows counted). */
static void demote_node(struct hk_pool_plan *pools, const struct hk_pool *now, uint64_t size,
			int node, uint64_t pages, struct hk_demote_verdict *v)
{
	uint64_t free_now, min_now;
	char *path = NULL;
	int rc;

	v->node = node;
	if (!hk_pool_plan_has_node(pools, size, node) ||
	    !pages_now(now, node, &free_now, &min_now)) {
		v->problem = HK_DEMOTE_NO_NODE;
		return;
	}
	rc = hk_pool_file(pools->ctx, size, node, HK_POOL_DEMOTE, 0, &path);
	free(path);
	if (rc < 0) {
		v->problem = HK_DEMOTE_NO_NODE_FILE;
		v->error = rc;
		return;
	}
	v->free = hk_pool_plan_free(pools, now, node);
	if (pages > v->free)
		v->problem = HK_DEMOTE_NOT_FREE;
}

HK_EXPORT int hk_pool_demote_check(struct hk_pool_plan *pools, uint64_t page_size, const int *nodes,
				   size_t n_nodes, uint64_t pages, struct hk_demote_verdict *ret)
{
	struct hk_pool *now = NULL;
	int rc;

	if (!pools || !ret || ret->size != sizeof(*ret) || (n_nodes && !nodes))
		return -EINVAL;
	*ret = (struct hk_demote_verdict){.size = sizeof(*ret), .node = HK_NODE_ALL};
	rc = hk_pool_plan_load(pools, page_size);
	if (rc == 0)
		rc = hk_pool_read(pools->ctx, page_size, &now);
	if (rc < 0)
		return rc;
	if (!hk_pool_get(now, HK_POOL_DEMOTE_SIZE)) {
		ret->problem =
			kernel_demotes(pools->ctx) ? HK_DEMOTE_NO_SMALLER : HK_DEMOTE_NO_KERNEL;
	} else if (pages && !n_nodes) {
		ret->free = hk_pool_plan_free(pools, now, HK_NODE_ALL);
		if (pages > ret->free)
			ret->problem = HK_DEMOTE_NOT_FREE;
	}
	for (size_t i = 0; pages && ret->problem == HK_DEMOTE_FITS && i < n_nodes; i++)
		demote_node(pools, now, page_size, nodes[i], pages, ret);
	hk_pool_unref(now);
	return 0;
}

HK_EXPORT int hk_pool_demote_size_check(struct hk_pool_plan *pools, uint64_t page_size, uint64_t to,
					struct hk_demote_verdict *ret)
{
	int rc = hk_pool_demote_check(pools, page_size, NULL, 0, 0, ret);

	if (rc < 0 || ret->problem != HK_DEMOTE_FITS)
		return rc;
	if (to >= page_size || hk_pool_plan_load(pools, to) < 0)
		ret->problem = HK_DEMOTE_NOT_SMALLER;
	return 0;
}
