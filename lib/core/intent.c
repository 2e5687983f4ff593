// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The intent planner: what the administrator asked for (hugeadm's change
 * options, each an entry in the order given) into a plan. The entries are
 * planned in the order of every plan (enum hk_setting; within one setting,
 * in the order asked), each judged against the machine and against the
 * pools as the entries before it leave them (the pool planner's held
 * pools), then its items added. The caller is told each verdict and words
 * it; planning stops at the first entry that cannot be planned, so the
 * plan is all of the intent or is not run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct hk_intent {
	struct hk_ctx *ctx;
	struct hk_intent_entry *e;
	size_t n;
};

/* What one entry is planned with, and the verdict being made on it. */
struct step {
	struct hk_intent *in;
	struct hk_plan *plan;
	struct hk_pool_plan *pools;
	const struct hk_intent_entry *e;
	struct hk_intent_verdict v;
};

HK_EXPORT int hk_intent_new(struct hk_ctx *ctx, struct hk_intent **ret)
{
	struct hk_intent *in;

	if (!ctx || !ret)
		return -EINVAL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->ctx = hk_ref(ctx);
	*ret = in;
	return 0;
}

static void entry_free(struct hk_intent_entry *e)
{
	free((char *)e->page_size);
	free((int *)e->nodes);
	free((char *)e->knob);
	free((char *)e->value);
	free((char *)e->why);
}

HK_EXPORT struct hk_intent *hk_intent_unref(struct hk_intent *intent)
{
	if (!intent)
		return NULL;
	for (size_t i = 0; i < intent->n; i++)
		entry_free(&intent->e[i]);
	free(intent->e);
	hk_unref(intent->ctx);
	free(intent);
	return NULL;
}

static bool planned_here(enum hk_setting s)
{
	switch (s) {
	case HK_SETTING_ZONE_MOVABLE:
	case HK_SETTING_THP:
	case HK_SETTING_HVO:
	case HK_SETTING_POOL:
	case HK_SETTING_DEMOTE_SIZE:
	case HK_SETTING_DEMOTE:
	case HK_SETTING_MIN_FREE_KBYTES:
	case HK_SETTING_SHMMAX:
	case HK_SETTING_SHM_GROUP:
		return true;
	default:
		return false; /* mounts, cgroups, other sysctls: a configuration's (plan.c) */
	}
}

static int dup_opt(const char *s, const char **ret)
{
	*ret = s ? strdup(s) : NULL;
	return s && !*ret ? -ENOMEM : 0;
}

/* The entry's copy: what it points at owned by the intent. */
static int entry_copy(struct hk_intent_entry *to, const struct hk_intent_entry *from)
{
	int *nodes = NULL;
	int rc = 0;

	*to = *from;
	to->page_size = to->knob = to->value = to->why = NULL;
	to->nodes = NULL;
	if (from->nodes && from->n_nodes) {
		nodes = malloc(from->n_nodes * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		memcpy(nodes, from->nodes, from->n_nodes * sizeof(*nodes));
	}
	to->nodes = nodes;
	to->n_nodes = nodes ? from->n_nodes : 0;
	rc = dup_opt(from->page_size, &to->page_size);
	if (rc == 0)
		rc = dup_opt(from->knob, &to->knob);
	if (rc == 0)
		rc = dup_opt(from->value, &to->value);
	if (rc == 0)
		rc = dup_opt(from->why, &to->why);
	if (rc < 0)
		entry_free(to);
	return rc;
}

HK_EXPORT int hk_intent_add(struct hk_intent *intent, const struct hk_intent_entry *entry)
{
	struct hk_intent_entry *ne;
	int rc;

	if (!intent || !entry || entry->size < sizeof(*entry) || !planned_here(entry->setting))
		return -EINVAL;
	if (entry->setting == HK_SETTING_POOL && entry->field != HK_POOL_MINIMUM &&
	    entry->field != HK_POOL_MAXIMUM)
		return -EINVAL;
	if (intent->n >= INT32_MAX)
		return -ENOSPC;
	ne = realloc(intent->e, (intent->n + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	intent->e = ne;
	rc = entry_copy(&intent->e[intent->n], entry);
	if (rc < 0)
		return rc;
	return (int)intent->n++;
}

/* The verdict holds: told, and planning stops on it (or on the caller's word). */
static int stop(struct step *s, enum hk_intent_problem problem, int error)
{
	s->v.problem = problem;
	s->v.error = error;
	return 1;
}

/* Items [first, first + n) of the entry: rc is what an hk_plan_add_* returned. */
static int added(struct step *s, int rc)
{
	if (rc < 0)
		return stop(s, HK_INTENT_UNPLANNED, rc);
	if (s->v.n == 0)
		s->v.first = (size_t)rc;
	s->v.n++;
	return 0;
}

/* The entry's page size, read in its grammar, and its pool held: 0, or 1 (verdict made). */
static int page_size(struct step *s, bool legacy)
{
	const char *str = s->e->page_size ? s->e->page_size : "";
	uint64_t size = 0;
	int rc;

	if (strcmp(str, "DEFAULT") == 0)
		rc = hk_default_page_size(s->in->ctx, &size);
	else
		rc = legacy ? hk_parse_size_legacy(str, &size) : hk_parse_size(str, &size);
	if (rc == 0)
		rc = hk_pool_plan_load(s->pools, size);
	/* A size the kernel has no pool for, or a pool that cannot be read (EIO, EACCES). */
	if (rc == -ENOENT || rc == -EINVAL || rc == -ERANGE)
		return stop(s, HK_INTENT_UNKNOWN_SIZE, rc);
	if (rc < 0)
		return stop(s, HK_INTENT_UNREAD, rc);
	s->v.page_size = size;
	return 0;
}

static struct hk_pool_change pool_change(const struct step *s)
{
	const struct hk_intent_entry *e = s->e;

	return (struct hk_pool_change){
		.size = sizeof(struct hk_pool_change),
		.page_size = s->v.page_size,
		.field = e->field,
		.sign = e->sign,
		.pages = s->v.pages,
		.nodes = e->nodes,
		.n_nodes = e->n_nodes,
		.flags = e->flags & HK_INTENT_MEMPOLICY ? HK_POOL_SET_MEMPOLICY : 0,
	};
}

/*
 * A pool's Minimum or Maximum: judged by the pool planner (nodes, memory,
 * gigantic pools), after the checks of the entry itself; a memory amount
 * is whole pages, and one that makes no page is refused unless it is 0.
 */
static int plan_pool(struct step *s)
{
	const struct hk_intent_entry *e = s->e;
	struct hk_pool_change ch;
	size_t n = 0;
	int rc;

	if (page_size(s, e->flags & HK_INTENT_LEGACY_SIZE))
		return 1;
	if (e->nodes && (e->flags & HK_INTENT_MEMPOLICY))
		return stop(s, HK_INTENT_NODES_AND_MEMPOLICY, 0);
	s->v.pages = e->flags & HK_INTENT_BYTES ? e->number / s->v.page_size : e->number;
	ch = pool_change(s);
	s->v.pool.size = sizeof(s->v.pool);
	rc = hk_pool_change_check(s->pools, &ch, &s->v.pool);
	if (rc < 0)
		return stop(s, HK_INTENT_UNPLANNED, rc);
	if (s->v.pool.problem == HK_POOL_CHANGE_NO_NODE)
		return stop(s, HK_INTENT_POOL_NO_NODE, 0);
	if ((e->flags & HK_INTENT_BYTES) && e->number && !s->v.pages)
		return stop(s, HK_INTENT_LESS_THAN_A_PAGE, 0);
	if (s->v.pool.problem != HK_POOL_CHANGE_FITS)
		return stop(s, HK_INTENT_POOL, 0);
	rc = hk_plan_add_pool_change(s->plan, s->pools, &ch, e->why, &n);
	if (rc < 0)
		return stop(s, HK_INTENT_UNPLANNED, rc);
	s->v.first = (size_t)rc;
	s->v.n = n;
	return 0;
}

/* A demote's size, or a demote: whether the pool can (libhugekit's verdict), then its writes. */
static int plan_demote(struct step *s)
{
	const struct hk_intent_entry *e = s->e;
	bool to_size = e->setting == HK_SETTING_DEMOTE_SIZE;
	struct hk_demote_verdict *d = &s->v.demote;
	int rc;

	if (page_size(s, false))
		return 1;
	d->size = sizeof(*d);
	rc = to_size ? hk_pool_demote_size_check(s->pools, s->v.page_size, e->number, d)
		     : hk_pool_demote_check(s->pools, s->v.page_size, e->nodes, e->n_nodes,
					    e->number, d);
	if (rc < 0)
		return stop(s, HK_INTENT_UNREAD, rc);
	if (d->problem != HK_DEMOTE_FITS)
		return stop(s, HK_INTENT_DEMOTE, 0);
	if (to_size)
		return added(s, hk_plan_add_pool(s->in->ctx, s->plan, s->v.page_size, HK_NODE_ALL,
						 HK_POOL_DEMOTE_SIZE, e->number, 0, e->why));
	/* N to the pool's demote file, or to each listed node's. */
	for (size_t i = 0; i < (e->nodes ? e->n_nodes : 1); i++) {
		int node = e->nodes ? e->nodes[i] : HK_NODE_ALL;

		rc = added(s, hk_plan_add_pool_demote(s->in->ctx, s->plan, s->v.page_size, node,
						      e->number, e->why));
		if (rc)
			return rc;
	}
	return 0;
}

/* A THP knob: a mode must be one the kernel lists in the file itself. */
static int plan_thp(struct step *s)
{
	char *line = NULL;
	int rc = hk_thp_check(s->in->ctx, s->e->knob, s->e->value, &line);

	s->v.line = line;
	if (rc == -ENOENT)
		return stop(s, HK_INTENT_NO_KERNEL, rc);
	if (rc == 1)
		return stop(s, HK_INTENT_NOT_A_MODE, 0);
	if (rc < 0)
		return stop(s, HK_INTENT_UNREAD, rc);
	return added(s, hk_plan_add_thp(s->in->ctx, s->plan, s->e->knob, s->e->value, s->e->why));
}

/* The sysctls: the values given, or recommended from the pools the entries before leave. */
static int plan_sysctl(struct step *s)
{
	struct hk_ctx *ctx = s->in->ctx;
	enum hk_sysctl which;
	uint64_t v = s->e->number, cur;
	int rc;

	switch (s->e->setting) {
	case HK_SETTING_ZONE_MOVABLE:
		which = HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE;
		/* Removed from Linux: nothing to write. */
		if (hk_sysctl_read(ctx, which, &cur) == -ENOENT)
			return 0;
		break;
	case HK_SETTING_HVO:
		which = HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP;
		rc = hk_sysctl_read(ctx, which, &cur);
		if (rc == -ENOENT)
			return stop(s, HK_INTENT_NO_KERNEL, rc);
		if (rc < 0)
			return stop(s, HK_INTENT_UNREAD, rc);
		break;
	case HK_SETTING_MIN_FREE_KBYTES:
		which = HK_SYSCTL_MIN_FREE_KBYTES;
		rc = hk_recommended_min_free_kbytes(ctx, &v);
		if (rc < 0)
			return stop(s, HK_INTENT_UNREAD, rc);
		break;
	case HK_SETTING_SHMMAX:
		s->v.shmmax.size = sizeof(s->v.shmmax);
		rc = hk_plan_add_recommended_shmmax(ctx, s->plan, s->pools, s->e->why,
						    &s->v.shmmax);
		if (rc < 0)
			return stop(s, HK_INTENT_UNREAD, rc);
		s->v.first = s->v.shmmax.index;
		s->v.n = s->v.shmmax.added;
		return 0;
	default: /* HK_SETTING_SHM_GROUP */
		which = HK_SYSCTL_HUGETLB_SHM_GROUP;
		break;
	}
	return added(s, hk_plan_add_sysctl(ctx, s->plan, which, v, s->e->why));
}

static int plan_entry(struct step *s)
{
	switch (s->e->setting) {
	case HK_SETTING_POOL:
		return plan_pool(s);
	case HK_SETTING_DEMOTE_SIZE:
	case HK_SETTING_DEMOTE:
		return plan_demote(s);
	case HK_SETTING_THP:
		return plan_thp(s);
	default:
		return plan_sysctl(s);
	}
}

/* The entries in the order they are planned and run: by setting, then as asked. */
static size_t *entry_order(const struct hk_intent *in)
{
	size_t *order = malloc((in->n ? in->n : 1) * sizeof(*order));

	for (size_t i = 0; order && i < in->n; i++) {
		size_t j = i;

		for (; j > 0 && in->e[order[j - 1]].setting > in->e[i].setting; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	return order;
}

HK_EXPORT int hk_plan_from_intent(struct hk_intent *intent, struct hk_plan *plan,
				  struct hk_pool_plan *pools, hk_intent_fn *fn, void *data)
{
	size_t *order;
	int rc = 0;

	if (!intent || !plan || !pools || !fn)
		return -EINVAL;
	order = entry_order(intent);
	if (!order)
		return -ENOMEM;
	for (size_t k = 0; k < intent->n && rc == 0; k++) {
		struct step s = {.in = intent, .plan = plan, .pools = pools};
		int planned;

		s.e = &intent->e[order[k]];
		s.v = (struct hk_intent_verdict){.size = sizeof(s.v), .entry = order[k]};
		planned = plan_entry(&s);
		rc = fn(data, &s.v);
		if (rc == 0 && planned)
			rc = 1;
		free((char *)s.v.line);
	}
	free(order);
	return rc;
}
