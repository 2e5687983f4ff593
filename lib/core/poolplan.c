// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The pool planner: the pools as a plan leaves them, and what one change of
 * a pool's Minimum or Maximum writes, in which order, from there. hugeadm's
 * --pool-pages-min and --pool-pages-max are planned here, at validation from
 * the pools the earlier options leave, and again at apply time from the
 * kernel's pool when someone else wrote it in between.
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

/* The Minimum node k has after the change: its target when listed, else as it is. */
static uint64_t node_want(const struct held *h, const struct hk_pool_change *ch, size_t k)
{
	return listed(ch, h->ids[k]) ? hkp_adjust(ch->sign, h->node_min[k], ch->pages)
				     : h->node_min[k];
}

/*
 * The Minimum and Maximum the change leaves. With nodes: the nodes' sum, the
 * Maximum kept unless the Minimum passes it. A Minimum keeps the Maximum
 * unless it passes it; a Maximum keeps the Minimum unless it goes below it.
 * A gigantic pool has no overcommit: its Maximum follows its Minimum.
 */
static void targets(const struct held *h, const struct hk_pool_change *ch, uint64_t *ret_min,
		    uint64_t *ret_max)
{
	uint64_t max0 = hkp_pool_max(h->min, h->oc), min, max;

	if (ch->nodes) {
		min = 0;
		for (size_t k = 0; k < h->n_nodes; k++)
			min = hkp_sat_add(min, node_want(h, ch, k));
		max = min > max0 ? min : max0;
	} else if (ch->field == HK_POOL_MINIMUM) {
		min = hkp_adjust(ch->sign, h->min, ch->pages);
		max = min > max0 ? min : max0;
	} else {
		max = hkp_adjust(ch->sign, max0, ch->pages);
		min = max < h->min ? max : h->min;
	}
	if (h->gigantic && ch->field == HK_POOL_MINIMUM)
		max = min;
	*ret_min = min;
	*ret_max = max;
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
	const struct held *h;

	if (!ret || ret->size < sizeof(*ret) || !change_ok(pools, change))
		return -EINVAL;
	h = find(pools, change->page_size);
	if (!h)
		return -ENOENT;
	targets(h, change, &v.minimum, &v.maximum);
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

/* One pool item for the change, with the value its file has before it: the plan's index or -errno. */
static int add_item(struct hk_pool_plan *pp, struct hk_plan *plan, struct hkl_pool_group *g,
		    int node, enum hk_pool_field field, uint64_t v, uint64_t before, unsigned flags)
{
	int rc =
		hk_plan_add_pool(pp->ctx, plan, g->change.page_size, node, field, v, flags, g->why);

	if (rc >= 0)
		g->before[g->n++] = before;
	return rc;
}

/*
 * Without nodes: the overcommit first when the Maximum must grow (so that
 * growing never fails for lack of it), the Minimum, then the overcommit that
 * gives the Maximum asked for. With nodes: each listed node's persistent
 * pages, in node order; the overcommit is left alone.
 */
static int resolve(struct hk_pool_plan *pp, struct held *h, struct hk_plan *plan,
		   struct hkl_pool_group *g)
{
	const struct hk_pool_change *ch = &g->change;
	unsigned flags = ch->flags & HK_POOL_SET_MEMPOLICY;
	uint64_t min, max, oc;
	int rc = 0;

	targets(h, ch, &min, &max);
	g->min1 = min;
	g->max1 = max;
	if (!ch->nodes) {
		if (hkp_overcommit_first(min, h->oc, max, h->gigantic)) {
			oc = h->oc;
			h->oc = hkp_pool_oc(min, max);
			rc = add_item(pp, plan, g, HK_NODE_ALL, HK_POOL_OVERCOMMIT, h->oc, oc, 0);
		}
		if (rc >= 0) {
			uint64_t min0 = h->min;

			h->min = min;
			rc = add_item(pp, plan, g, HK_NODE_ALL, HK_POOL_MINIMUM, min, min0, flags);
		}
		if (rc >= 0 && !h->gigantic && hkp_pool_max(h->min, h->oc) != max) {
			oc = h->oc;
			h->oc = hkp_pool_oc(min, max);
			rc = add_item(pp, plan, g, HK_NODE_ALL, HK_POOL_OVERCOMMIT, h->oc, oc, 0);
		}
		return rc < 0 ? rc : 0;
	}
	for (size_t k = 0; k < h->n_nodes && rc >= 0; k++) {
		uint64_t want, was = h->node_min[k];

		if (!listed(ch, h->ids[k]))
			continue;
		want = node_want(h, ch, k);
		h->min = hkp_sat_add(hkp_sat_sub(h->min, h->node_min[k]), want);
		h->node_min[k] = want;
		rc = add_item(pp, plan, g, h->ids[k], HK_POOL_MINIMUM, want, was, 0);
	}
	return rc < 0 ? rc : 0;
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
