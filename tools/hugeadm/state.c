// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pool states as hugeadm reasons about them: Minimum (persistent pages),
 * overcommit, and each node's persistent pages. Validation moves a planned
 * copy forward option by option; a dry run does the same instead of writing;
 * a real run re-reads the kernel.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"

static void state_clear(struct ha_pool_state *st)
{
	free(st->ids);
	free(st->node_min);
	st->ids = NULL;
	st->node_min = NULL;
	st->n_nodes = 0;
}

int ha_state_load(struct hugeadm_ctl *ctl, struct ha_pool_state *st, uint64_t size)
{
	struct hk_pool *pool;
	size_t n;
	int rc;

	rc = hk_pool_read(ctl->ctx, size, &pool);
	if (rc < 0)
		return rc;
	state_clear(st);
	n = hk_pool_node_count(pool);
	st->ids = calloc(n ? n : 1, sizeof(*st->ids));
	st->node_min = calloc(n ? n : 1, sizeof(*st->node_min));
	if (!st->ids || !st->node_min) {
		hk_pool_unref(pool);
		state_clear(st);
		return -ENOMEM;
	}
	st->size = size;
	st->gigantic = hk_pool_is_gigantic(pool);
	st->min = hk_pool_get(pool, HK_POOL_MINIMUM);
	st->oc = hk_pool_get(pool, HK_POOL_OVERCOMMIT);
	st->n_nodes = n;
	for (size_t k = 0; k < n; k++) {
		uint64_t nr = hk_pool_node_get(pool, k, HK_POOL_NR);
		uint64_t surp = hk_pool_node_get(pool, k, HK_POOL_SURPLUS);

		st->ids[k] = hk_pool_node_id(pool, k);
		st->node_min[k] = ha_pool_min(nr, surp);
	}
	hk_pool_unref(pool);
	return 0;
}

int ha_state_get(struct hugeadm_ctl *ctl, struct ha_states *t, uint64_t size,
		 struct ha_pool_state **ret)
{
	struct ha_pool_state *ns;
	int rc;

	for (size_t i = 0; i < t->n; i++) {
		if (t->s[i].size == size) {
			if (ret)
				*ret = &t->s[i];
			return 0;
		}
	}
	ns = realloc(t->s, (t->n + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	t->s = ns;
	memset(&t->s[t->n], 0, sizeof(t->s[t->n]));
	rc = ha_state_load(ctl, &t->s[t->n], size);
	if (rc < 0)
		return rc;
	if (ret)
		*ret = &t->s[t->n];
	t->n++;
	return 0;
}

void ha_states_free(struct ha_states *t)
{
	for (size_t i = 0; i < t->n; i++)
		state_clear(&t->s[i]);
	free(t->s);
	t->s = NULL;
	t->n = 0;
}

int ha_state_node(const struct ha_pool_state *st, int node)
{
	for (size_t k = 0; k < st->n_nodes; k++)
		if (st->ids[k] == node)
			return (int)k;
	return -1;
}

uint64_t ha_action_pages(const struct ha_action *a, uint64_t size)
{
	return a->by_bytes ? a->amount / size : a->amount;
}

uint64_t ha_state_max(const struct ha_pool_state *st)
{
	return ha_pool_max(st->min, st->oc);
}

/* Whether NODE is one of the action's @NODES. */
bool ha_node_listed(const struct ha_action *a, int node)
{
	for (size_t j = 0; j < a->n_nodes; j++)
		if (a->nodes[j] == node)
			return true;
	return false;
}

/* The Minimum node k is to have after the action: its target if listed, else as it is. */
uint64_t ha_node_want(const struct ha_action *a, const struct ha_pool_state *st, size_t k)
{
	return ha_node_listed(a, st->ids[k]) ? ha_node_target(a, st, k) : st->node_min[k];
}

/*
 * Relative to a base, saturating (poolmath.h): libhugetlbfs stopped at 0 and
 * at LONG_MAX; here + stops at UINT64_MAX, an unlimited Maximum. Counts beyond
 * memory never get here for a Minimum (ha_plan_validate refuses them).
 */
static uint64_t adjust(const struct ha_action *a, uint64_t base, uint64_t size)
{
	return ha_adjust(a->sign, base, ha_action_pages(a, size));
}

uint64_t ha_node_target(const struct ha_action *a, const struct ha_pool_state *st, size_t k)
{
	return adjust(a, st->node_min[k], st->size);
}

void ha_pool_targets(const struct ha_action *a, const struct ha_pool_state *st, uint64_t *ret_min,
		     uint64_t *ret_max)
{
	uint64_t min0 = st->min, max0 = ha_state_max(st), min, max;

	if (a->nodes) {
		min = 0;
		for (size_t k = 0; k < st->n_nodes; k++)
			min = ha_sat_add(min, ha_node_want(a, st, k));
		max = min > max0 ? min : max0;
	} else if (a->kind == HA_POOL_MIN) {
		min = adjust(a, min0, st->size);
		max = min > max0 ? min : max0;
	} else {
		max = adjust(a, max0, st->size);
		min = max < min0 ? max : min0;
	}
	/* Gigantic pools have no overcommit: their maximum follows the minimum. */
	if (st->gigantic && a->kind == HA_POOL_MIN)
		max = min;
	*ret_min = min;
	*ret_max = max;
}
