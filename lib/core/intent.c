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
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "usage.h"

struct hk_intent {
	struct hk_ctx *ctx;
	struct hk_intent_entry *e;
	size_t n;
	bool unmounted; /* an unmount entry was planned: the mounts after see none there */
};

/* What one entry is planned with, and the verdict being made on it. */
struct step {
	struct hk_intent *in;
	struct hk_plan *plan;
	struct hk_pool_plan *pools;
	const struct hk_intent_entry *e;
	struct hk_intent_verdict v;
	hk_intent_fn *fn;
	void *data;
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
	free((char *)e->base);
	free((char *)e->sub);
	free((char *)e->page_size);
	free((int *)e->nodes);
	free((uint64_t *)e->node_pages);
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
	case HK_SETTING_SYSCTL:
	case HK_SETTING_MOUNT:
	case HK_SETTING_UNMOUNT:
	case HK_SETTING_SHARED_TEXT:
	case HK_SETTING_CGROUP:
		return true;
	default:
		return false;
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

	/* An older caller's entry ends before the fields added since: those are 0. */
	memset(to, 0, sizeof(*to));
	memcpy(to, from, from->size < sizeof(*to) ? from->size : sizeof(*to));
	to->size = sizeof(*to);
	to->page_size = to->knob = to->value = to->why = to->base = to->sub = NULL;
	to->nodes = NULL;
	/* Counts per node are a pool state's (state_ok checked them): another's are not kept. */
	if (!(to->flags & HK_INTENT_STATE))
		to->node_pages = NULL;
	if (to->node_pages) {
		uint64_t *pages = malloc(to->n_nodes * sizeof(*pages));

		if (!pages)
			return -ENOMEM;
		memcpy(pages, to->node_pages, to->n_nodes * sizeof(*pages));
		to->node_pages = pages;
	}
	if (from->nodes && from->n_nodes) {
		nodes = malloc(from->n_nodes * sizeof(*nodes));
		if (!nodes) {
			free((uint64_t *)to->node_pages);
			return -ENOMEM;
		}
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
	if (rc == 0)
		rc = dup_opt(from->base, &to->base);
	if (rc == 0)
		rc = dup_opt(from->sub, &to->sub);
	if (rc < 0)
		entry_free(to);
	return rc;
}

/* A sysctl that no setting of its own sets: HK_SETTING_SYSCTL's. */
static bool other_sysctl(const char *key)
{
	switch (hkl_sysctl_of_key(key)) {
	case HK_SYSCTL_SHMALL:
	case HK_SYSCTL_COMPACTION_PROACTIVENESS:
		return true;
	default:
		return false;
	}
}

/* A pool's state as an entry can say it (entry->size: an older caller's has none). */
static bool state_ok(const struct hk_intent_entry *e)
{
	bool per_node = e->nodes && e->n_nodes;

	if (e->size < sizeof(*e) || e->setting != HK_SETTING_POOL || !e->page_size ||
	    (e->flags & (HK_INTENT_BYTES | HK_INTENT_MEMPOLICY | HK_INTENT_LEGACY_SIZE)))
		return false;
	/* Per node: a count for each listed node, and only with a minimum. */
	if (per_node != (e->node_pages != NULL) ||
	    (per_node && !(e->flags & HK_INTENT_HAS_MINIMUM)))
		return false;
	return !(e->flags & HK_INTENT_DEMOTE_DOWN) || (e->flags & HK_INTENT_HAS_MINIMUM);
}

HK_EXPORT int hk_intent_add(struct hk_intent *intent, const struct hk_intent_entry *entry)
{
	struct hk_intent_entry *ne;
	int rc;

	/* This library's entry, or an HK_1.6 caller's before node_pages: nothing between. */
	if (!intent || !entry ||
	    (entry->size != sizeof(*entry) &&
	     entry->size != offsetof(struct hk_intent_entry, node_pages)) ||
	    !planned_here(entry->setting))
		return -EINVAL;
	if ((entry->flags & HK_INTENT_STATE) && !state_ok(entry))
		return -EINVAL;
	if (entry->setting == HK_SETTING_POOL && !(entry->flags & HK_INTENT_STATE) &&
	    entry->field != HK_POOL_MINIMUM && entry->field != HK_POOL_MAXIMUM)
		return -EINVAL;
	if ((entry->setting == HK_SETTING_MOUNT || entry->setting == HK_SETTING_UNMOUNT) &&
	    (!entry->base || entry->base[0] != '/'))
		return -EINVAL;
	if (entry->setting == HK_SETTING_MOUNT &&
	    (((entry->flags & HK_INTENT_MAX_PERCENT) && entry->max_size > 100) ||
	     ((entry->flags & HK_INTENT_MIN_PERCENT) && entry->min_size > 100) ||
	     (!entry->page_size &&
	      (entry->flags & (HK_INTENT_MAX_PERCENT | HK_INTENT_MIN_PERCENT)))))
		return -EINVAL;
	if (entry->setting == HK_SETTING_SYSCTL && !other_sysctl(entry->knob))
		return -EINVAL;
	if (entry->setting == HK_SETTING_CGROUP &&
	    (!entry->sub || !hkl_cgroup_name_ok(entry->sub) || !entry->page_size || !entry->knob ||
	     (strcmp(entry->knob, "max") != 0 && strcmp(entry->knob, "rsvd.max") != 0) ||
	     (entry->value && strcmp(entry->value, "max") != 0)))
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
	/* Not a size, or one the kernel has no pool for; a pool's file it cannot read (EIO, garbage). */
	if (rc == -ENOENT || rc == -EINVAL || rc == -ERANGE)
		return stop(s, HK_INTENT_UNKNOWN_SIZE, rc);
	/* No pool of the size: no such page size here; one there that cannot be read: unread. */
	if (rc == 0 && !hkc_path_existsf(&s->in->ctx->path,
					 HK_SYS_HUGEPAGES "/hugepages-%" PRIu64 "kB", size / 1024))
		return stop(s, HK_INTENT_UNKNOWN_SIZE, -ENOENT);
	s->v.page_size = size; /* said with what could not be read */
	if (rc == 0)
		rc = hk_pool_plan_load(s->pools, size);
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

/* A pool's state being planned: the pool planner's intent and its parts. */
struct state {
	struct step *s;
	struct hkl_pool_intent in;
	struct hkl_pool_node_want *wants;
};

/*
 * Each write the pool planner plans for the state, as an item: each
 * demote down to the minimum where the pool (or node) has more (one the
 * kernel cannot make: the verdict, and its pages are not counted in), the
 * Minimum's items, the overcommit that gives the Maximum.
 */
static int state_write(void *data, int node, enum hk_pool_field field, uint64_t number,
		       uint64_t before, unsigned flags)
{
	struct state *st = data;
	struct step *s = st->s;
	struct hk_ctx *ctx = s->in->ctx;
	uint64_t size = s->v.page_size;
	int rc;

	(void)flags;
	if (field == HK_POOL_DEMOTE) {
		char *path = NULL;

		rc = hk_pool_file(ctx, size, node, HK_POOL_DEMOTE, 0, &path);
		free(path);
		if (rc == -ENOENT) {
			s->v.demote = (struct hk_demote_verdict){.size = sizeof(s->v.demote),
								 .problem = HK_DEMOTE_NO_KERNEL,
								 .node = node};
			stop(s, HK_INTENT_DEMOTE, 0);
			return 1;
		}
		if (rc < 0)
			return rc;
		/* Nothing above the minimum: the demote file is not written. */
		if (before <= number)
			return 0;
		rc = hkl_plan_add_demote_down(ctx, s->plan, size, node, number, s->e->why);
	} else {
		rc = hk_plan_add_pool(ctx, s->plan, size,
				      field == HK_POOL_MINIMUM ? node : HK_NODE_ALL, field, number,
				      0, s->e->why);
	}
	if (added(s, rc))
		return rc < 0 ? rc : -EIO;
	return 0;
}

/* The state's minimum and maximum as the pool planner takes them; false: a node it lacks (said). */
static bool state_intent(struct state *st)
{
	struct step *s = st->s;
	const struct hk_intent_entry *e = s->e;
	struct hkl_pool_intent *in = &st->in;

	*in = (struct hkl_pool_intent){.page_size = s->v.page_size,
				       .declare = true,
				       .max = e->flags & HK_INTENT_HAS_MAXIMUM ? HKL_MAX_SET
									       : HKL_MAX_FOLLOW,
				       .max_pages = e->maximum,
				       .demote = (e->flags & HK_INTENT_DEMOTE_DOWN) != 0,
				       .demote_to = e->demote_to};
	if (!(e->flags & HK_INTENT_HAS_MINIMUM))
		return true;
	if (!e->nodes) {
		in->min = HKL_MIN_POOL;
		in->min_pages = e->number;
		return true;
	}
	for (size_t i = 0; i < e->n_nodes; i++) {
		/* The nodes the pool planner holds: those the machine lists online. */
		if (!hkl_pool_plan_has_node(s->pools, s->v.page_size, e->nodes[i])) {
			s->v.pool = (struct hk_pool_verdict){.size = sizeof(s->v.pool),
							     .problem = HK_POOL_CHANGE_NO_NODE,
							     .node = e->nodes[i]};
			return false;
		}
		st->wants[i] =
			(struct hkl_pool_node_want){.node = e->nodes[i], .pages = e->node_pages[i]};
	}
	in->min = HKL_MIN_NODES;
	in->nodes = st->wants;
	in->n_nodes = e->n_nodes;
	return true;
}

/*
 * Its Maximum against the minimum the pool is left with (a gigantic
 * pool's is its minimum: no overcommit); incoming: what a larger pool's
 * demote planned before brings in.
 */
static int state_maximum(struct state *st, bool gigantic, uint64_t incoming)
{
	struct step *s = st->s;
	uint64_t min = 0, max = 0;
	bool oc_first = false;
	int rc;

	if (!(s->e->flags & HK_INTENT_HAS_MAXIMUM))
		return 0;
	rc = hkl_pool_plan_preview(s->pools, &st->in, &min, &max, &oc_first);
	if (rc < 0)
		return stop(s, HK_INTENT_UNREAD, rc);
	s->v.pages = s->e->maximum;
	s->v.min_pages = st->in.min == HKL_MIN_KEEP ? hk_pool_plan_get(s->pools, s->v.page_size,
								       HK_NODE_ALL, HK_POOL_MINIMUM)
						    : min;
	s->v.incoming = incoming;
	if (s->e->maximum < s->v.min_pages)
		return stop(s, HK_INTENT_MAX_BELOW_MIN, 0);
	if (gigantic && s->e->maximum != s->v.min_pages)
		return stop(s, HK_INTENT_GIGANTIC_MAX, 0);
	return 0;
}

/*
 * Whether the pool can demote (demote = yes) and its maximum, both judged:
 * 0; 1 when one does not hold (the other's problem told first, where both
 * do not), or the caller's word.
 */
static int state_judged(struct state *st, bool gigantic, uint64_t incoming)
{
	struct step *s = st->s;
	struct hk_intent_verdict demote = {0};
	char *path = NULL;
	int rc = 0;

	if (st->in.demote && hk_pool_file(s->in->ctx, s->v.page_size, HK_NODE_ALL, HK_POOL_DEMOTE,
					  0, &path) == -ENOENT) {
		s->v.demote = (struct hk_demote_verdict){.size = sizeof(s->v.demote),
							 .problem = HK_DEMOTE_NO_KERNEL,
							 .node = HK_NODE_ALL};
		stop(s, HK_INTENT_DEMOTE, 0);
		demote = s->v;
		s->v.problem = HK_INTENT_PLANNED;
		st->in.demote = false;
	}
	free(path);
	rc = state_maximum(st, gigantic, incoming);
	if (demote.problem == HK_INTENT_PLANNED)
		return rc;
	if (rc == 0) {
		s->v = demote;
		return 1;
	}
	rc = s->fn(s->data, &demote);
	return rc ? rc : 1;
}

/*
 * A pool's state (a configuration's [pool]): its nodes, its maximum
 * against the minimum it leaves, then the pool planner's writes, an item
 * for each limit said; demote = yes first, into pages of its demote_to.
 */
static int plan_pool_state(struct step *s)
{
	struct state st = {.s = s};
	struct hk_pool *now = NULL;
	uint64_t incoming;
	int rc;

	if (page_size(s, false))
		return 1;
	rc = hk_pool_read(s->in->ctx, s->v.page_size, &now);
	if (rc < 0)
		return stop(s, HK_INTENT_UNREAD, rc);
	incoming = hkc_sat_sub(
		hk_pool_plan_get(s->pools, s->v.page_size, HK_NODE_ALL, HK_POOL_MINIMUM),
		hk_pool_get(now, HK_POOL_MINIMUM));
	st.wants = calloc(s->e->n_nodes ? s->e->n_nodes : 1, sizeof(*st.wants));
	if (!st.wants)
		rc = stop(s, HK_INTENT_UNPLANNED, -ENOMEM);
	else if (!state_intent(&st))
		rc = stop(s, HK_INTENT_POOL_NO_NODE, 0);
	if (rc == 0 && !st.in.demote_to)
		st.in.demote_to = hk_pool_get(now, HK_POOL_DEMOTE_SIZE);
	if (rc == 0)
		rc = state_judged(&st, hk_pool_is_gigantic(now), incoming);
	if (rc == 0)
		rc = hkl_pool_plan_intent(s->pools, &st.in, state_write, &st);
	if (rc < 0)
		rc = stop(s, HK_INTENT_UNPLANNED, rc);
	else if (s->v.problem != HK_INTENT_PLANNED)
		rc = 1;
	free(st.wants);
	hk_pool_unref(now);
	return rc;
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

	if (e->flags & HK_INTENT_STATE)
		return plan_pool_state(s);

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
/*
 * The kernel has the sysctl's file, read before anything is written: 0;
 * else no such setting, or the file that could not be read (the verdict's
 * target): 1.
 */
static int sysctl_there(struct step *s, enum hk_sysctl which, bool *ret_gone)
{
	uint64_t cur;
	int rc = hk_sysctl_read(s->in->ctx, which, &cur);

	/* A setting removed from Linux (ret_gone given): nothing to write, and no problem. */
	if (rc == -ENOENT && ret_gone)
		*ret_gone = true;
	if (rc == -ENOENT)
		return ret_gone ? 0 : stop(s, HK_INTENT_NO_KERNEL, rc);
	if (rc < 0) {
		s->v.target = hk_sysctl_path(which);
		return stop(s, HK_INTENT_UNREAD, rc);
	}
	return 0;
}

static int plan_sysctl(struct step *s)
{
	struct hk_ctx *ctx = s->in->ctx;
	enum hk_sysctl which;
	uint64_t v = s->e->number;
	bool gone = false;
	int rc;

	switch (s->e->setting) {
	case HK_SETTING_ZONE_MOVABLE: /* removed from Linux in 5.x: nothing to write there */
		which = HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE;
		break;
	case HK_SETTING_HVO:
		which = HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP;
		break;
	case HK_SETTING_MIN_FREE_KBYTES:
		which = HK_SYSCTL_MIN_FREE_KBYTES;
		break;
	case HK_SETTING_SYSCTL:
		which = (enum hk_sysctl)hkl_sysctl_of_key(s->e->knob);
		break;
	case HK_SETTING_SHMMAX:
		which = HK_SYSCTL_SHMMAX;
		if (s->e->flags & HK_INTENT_GIVEN)
			break;
		rc = sysctl_there(s, which, NULL);
		if (rc)
			return rc;
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
	rc = sysctl_there(s, which, s->e->setting == HK_SETTING_ZONE_MOVABLE ? &gone : NULL);
	if (rc || gone)
		return rc;
	if (s->e->setting == HK_SETTING_MIN_FREE_KBYTES && !(s->e->flags & HK_INTENT_GIVEN) &&
	    (rc = hk_recommended_min_free_kbytes(ctx, &v)) < 0)
		return stop(s, HK_INTENT_UNREAD, rc);
	return added(s, hk_plan_add_sysctl(ctx, s->plan, which, v, s->e->why));
}

/* The verdict told: the caller's word when it stops, else planned (0, or 1: stop). */
static int tell(struct step *s, int planned)
{
	int rc = s->fn(s->data, &s->v);

	return rc ? rc : planned;
}

/* pagesize-2MB, pagesize-1GB, pagesize-64KB: 2.23's names (integer division). */
static void mount_name(char *buf, size_t sz, uint64_t size)
{
	if (size >= (UINT64_C(1) << 30))
		snprintf(buf, sz, "pagesize-%" PRIu64 "GB", size >> 30);
	else if (size >= (UINT64_C(1) << 20))
		snprintf(buf, sz, "pagesize-%" PRIu64 "MB", size >> 20);
	else
		snprintf(buf, sz, "pagesize-%" PRIu64 "KB", size >> 10);
}

/* A numeric mount option, as the kernel shows it; 0 when absent. */
static uint64_t option_u64(const struct hk_mounts *ms, size_t i, const char *name)
{
	char *v = NULL;
	uint64_t n = 0;

	if (hk_mount_option(ms, i, name, &v) == 0)
		hk_parse_size(v, &n);
	free(v);
	return n;
}

/*
 * The mount at i is the one asked for: hugetlbfs of that page size, the
 * same limits (the kernel keeps them in whole pages), the same owner and
 * mode of its root (fd, opened safely, or < 0; a tree's mount points are
 * not on this machine, so its options are all there is).
 */
static bool same_mount(const struct step *s, const struct hk_mounts *ms, size_t i, uint64_t size,
		       int fd)
{
	const struct hk_intent_entry *e = s->e;
	struct stat st;

	if (hk_mount_page_size(ms, i) != size)
		return false;
	if (option_u64(ms, i, "size") != e->max_size / size * size ||
	    option_u64(ms, i, "min_size") != e->min_size / size * size)
		return false;
	if (e->max_inodes && option_u64(ms, i, "nr_inodes") != e->max_inodes)
		return false;
	if (!hk_is_live(s->in->ctx))
		return true;
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	return st.st_uid == e->uid && st.st_gid == e->gid && (st.st_mode & 07777) == e->mode;
}

/*
 * The limits against the pool of the size as the entries before leave it.
 * The kernel refuses a reservation above the limit, in whole pages, and
 * one above the pool's Maximum (surplus pages count); --max-size is a
 * limit, not a reservation (mounts made at boot come before the pool is
 * sized): above the pool, or below one page, it is only a warning.
 */
static int mount_limits(struct step *s, uint64_t size)
{
	const struct hk_intent_entry *e = s->e;
	int rc = hk_pool_plan_load(s->pools, size);
	uint64_t max, min;

	if (rc < 0) {
		hkl_err(s->in->ctx, "%s: cannot read the pool: %s", s->v.target, strerror(-rc));
		return stop(s, HK_INTENT_UNREAD, rc);
	}
	s->v.pool_maximum = hk_pool_plan_get(s->pools, size, HK_NODE_ALL, HK_POOL_MAXIMUM);
	/* A percentage is of the pool when the mount is made: never above it. */
	max = e->flags & HK_INTENT_MAX_PERCENT ? 0 : e->max_size;
	min = e->flags & HK_INTENT_MIN_PERCENT ? 0 : e->min_size;
	s->v.max_pages = max / size;
	s->v.min_pages = min / size;
	if (max && min && s->v.min_pages > s->v.max_pages)
		return stop(s, HK_INTENT_MIN_OVER_MAX, 0);
	if (min && s->v.min_pages > s->v.pool_maximum)
		return stop(s, HK_INTENT_MIN_OVER_POOL, 0);
	if (max && s->v.max_pages > s->v.pool_maximum)
		s->v.warnings |= HK_INTENT_MAX_OVER_POOL;
	else if (max && s->v.max_pages == 0)
		s->v.warnings |= HK_INTENT_MAX_NO_PAGE;
	return 0;
}

/* The mount's options: 2.23's, its root's owner and mode (nothing chowned after), nosuid,nodev. */
static void mount_options(const struct hk_intent_entry *e, uint64_t size, char *buf, size_t sz)
{
	int n = snprintf(buf, sz, "pagesize=%" PRIu64, size);

	if (e->max_size)
		n += snprintf(buf + n, sz - (size_t)n, ",size=%" PRIu64 "%s", e->max_size,
			      e->flags & HK_INTENT_MAX_PERCENT ? "%" : "");
	if (e->min_size)
		n += snprintf(buf + n, sz - (size_t)n, ",min_size=%" PRIu64 "%s", e->min_size,
			      e->flags & HK_INTENT_MIN_PERCENT ? "%" : "");
	if (e->max_inodes)
		n += snprintf(buf + n, sz - (size_t)n, ",nr_inodes=%" PRIu64, e->max_inodes);
	snprintf(buf + n, sz - (size_t)n, ",uid=%u,gid=%u,mode=0%o,nosuid,nodev", e->uid, e->gid,
		 e->mode);
}

/*
 * One mount, of one page size: its directories as they are now (no
 * symlink, no stranger's: nothing is made yet), a mount there already
 * (kept only when it is the same), its limits, then its item: made by the
 * executor under base, one there kept (HK_MOUNT_KEEP), as 2.23 did.
 */
static int plan_mount(struct step *s, const struct hk_mounts *ms, uint64_t size, const char *target)
{
	const struct hk_intent_entry *e = s->e;
	char opts[320];
	struct hk_mount_request rq = {.size = sizeof(rq),
				      .path = target,
				      .base = e->base,
				      .uid = e->uid,
				      .gid = e->gid,
				      .mode = e->mode,
				      .options = opts,
				      .flags = HK_MOUNT_KEEP};
	int fd = -ENOENT, rc = 0;

	if (hk_is_live(s->in->ctx))
		fd = hk_mount_dir_open(s->in->ctx, &rq, false); /* logged */
	if (fd < 0 && fd != -ENOENT)
		return stop(s, HK_INTENT_UNREAD, fd);
	for (size_t i = 0; ms && i < hk_mounts_count(ms); i++) {
		if (strcmp(hk_mount_target(ms, i), target) != 0)
			continue;
		if (!s->in->unmounted && !same_mount(s, ms, i, size, fd)) {
			s->v.options = hk_mount_options(ms, i);
			rc = stop(s, HK_INTENT_MOUNTED_OTHERWISE, 0);
		}
		break;
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		rc = mount_limits(s, size);
	if (rc)
		return rc;
	mount_options(e, size, opts, sizeof(opts));
	return added(s, hk_plan_add_mount(s->plan, &rq, size, e->why));
}

/* Whether a limit given in bytes is not whole pages of size. */
static bool part_page(const struct hk_intent_entry *e, uint64_t size)
{
	return (!(e->flags & HK_INTENT_MAX_PERCENT) && e->max_size % size) ||
	       (!(e->flags & HK_INTENT_MIN_PERCENT) && e->min_size % size);
}

/*
 * A configuration's mount: one, of its page size, at base itself, made on
 * an empty mount point (one there is --check's to compare), its limits
 * against the pool as the entries before leave it.
 */
static int plan_one_mount(struct step *s)
{
	const struct hk_intent_entry *e = s->e;
	char opts[320];
	struct hk_mount_request rq = {.size = sizeof(rq),
				      .path = e->base,
				      .uid = e->uid,
				      .gid = e->gid,
				      .mode = e->mode,
				      .options = opts};
	int rc = page_size(s, false);

	if (rc)
		return rc;
	s->v.target = e->base;
	if (part_page(e, s->v.page_size))
		return stop(s, HK_INTENT_NOT_WHOLE_PAGES, 0);
	rc = mount_limits(s, s->v.page_size);
	if (rc)
		return rc;
	mount_options(e, s->v.page_size, opts, sizeof(opts));
	return added(s, hk_plan_add_mount(s->plan, &rq, s->v.page_size, e->why));
}

/* A mount of each page size, each told: 0, or what stopped planning. */
static int plan_mounts(struct step *s)
{
	const struct hk_intent_entry *e = s->e;
	struct hk_mounts *ms = NULL;
	uint64_t *sizes = NULL;
	size_t n = 0;
	int rc;

	if (e->page_size)
		return tell(s, plan_one_mount(s));
	/* A tree can be planned for (a dry run), not mounted in. */
	if (!hk_is_live(s->in->ctx) && !(e->flags & HK_INTENT_SHOW_ONLY))
		return tell(s, stop(s, HK_INTENT_NOT_LIVE, 0));
	rc = hk_page_sizes(s->in->ctx, &sizes, &n);
	if (rc == 0)
		rc = hk_mounts_read(s->in->ctx, &ms);
	if (rc < 0)
		rc = tell(s, stop(s, HK_INTENT_UNREAD, rc));
	else if (n == 0)
		rc = tell(s, 0); /* no page size: nothing to mount */
	for (size_t k = 0; rc == 0 && k < n; k++) {
		char name[64], target[4096];

		mount_name(name, sizeof(name), sizes[k]);
		if (e->sub)
			snprintf(target, sizeof(target), "%s/%s/%s", e->base, e->sub, name);
		else
			snprintf(target, sizeof(target), "%s/%s", e->base, name);
		s->v = (struct hk_intent_verdict){.size = sizeof(s->v),
						  .entry = s->v.entry,
						  .page_size = sizes[k],
						  .target = target};
		rc = tell(s, plan_mount(s, ms, sizes[k], target));
	}
	free(sizes);
	hk_mounts_unref(ms);
	return rc;
}

/* Whether target is below base: "/base/...", not "/base" itself nor "/basefoo". */
static bool below(const char *target, const char *base)
{
	size_t len = strlen(base);

	while (len > 1 && base[len - 1] == '/')
		len--;
	return strncmp(target, base, len) == 0 && target[len] == '/';
}

/*
 * The mounts under base taken down, last mounted first (a mount below
 * another comes off before it): those of 2.23's layout (.../pagesize-*),
 * each an item; the others left mounted, each told. Once per intent.
 */
static int plan_unmounts(struct step *s)
{
	const struct hk_intent_entry *e = s->e;
	struct hk_mounts *ms = NULL;
	size_t n = 0;
	int rc;

	if (!hk_is_live(s->in->ctx) && !(e->flags & HK_INTENT_SHOW_ONLY))
		return tell(s, stop(s, HK_INTENT_NOT_LIVE, 0));
	if (s->in->unmounted)
		return tell(s, 0);
	s->in->unmounted = true;
	rc = hk_mounts_read(s->in->ctx, &ms);
	if (rc < 0)
		return tell(s, stop(s, HK_INTENT_UNREAD, rc));
	for (size_t i = hk_mounts_count(ms); rc == 0 && i-- > 0;) {
		const char *t = hk_mount_target(ms, i), *last = strrchr(t, '/');

		if (!below(t, e->base))
			continue;
		s->v = (struct hk_intent_verdict){.size = sizeof(s->v),
						  .entry = s->v.entry,
						  .page_size = hk_mount_page_size(ms, i),
						  .target = t};
		if (strncmp(last, "/pagesize-", strlen("/pagesize-")) != 0)
			s->v.warnings = HK_INTENT_NOT_OURS;
		else if ((rc = added(s, hk_plan_add_unmount(s->plan, ms, i, e->why))) != 0)
			rc = tell(s, rc);
		n++;
		if (rc == 0)
			rc = tell(s, 0);
	}
	if (rc == 0 && n == 0)
		rc = tell(s, 0);
	hk_mounts_unref(ms);
	return rc;
}

/* A file of the walk, an item of the entry. */
static int add_text(void *data, const struct hk_shared_text *f)
{
	struct step *s = data;

	return added(s, hk_plan_add_shared_text(s->plan, f, s->e->why));
}

/*
 * The files of shared text removed, every user's or one uid's: each an item,
 * one verdict. They are the running system's: a tree has none.
 */
static int plan_shared_text(struct step *s)
{
	int64_t uid = s->e->flags & HK_INTENT_ONE_UID ? (int64_t)s->e->uid : -1;
	int rc;

	if (!hk_is_live(s->in->ctx)) /* the files are the running system's */
		return stop(s, HK_INTENT_NOT_LIVE, 0);
	rc = hk_shared_text_walk(s->in->ctx, uid, add_text, s);
	return rc < 0 ? stop(s, HK_INTENT_UNREAD, rc) : rc;
}

/* The item of that name, added once to the plan: 0 (there already, or added), or 1. */
static int once(struct step *s, struct hk_plan_item *it)
{
	for (size_t i = 0; i < hk_plan_items(s->plan, NULL); i++)
		if (strcmp(hk_plan_item_at(s->plan, i)->item, it->item) == 0)
			return 0;
	return added(s, hk_plan_add(s->plan, it));
}

/*
 * The cgroup's directories, from the top: each made where missing, and
 * with cgroup v2 the hugetlb controller given to it by its parent first.
 * The directories above it and the controllers are implied (their why).
 */
static int plan_cgroup_dirs(struct step *s, const struct hkc_cg_hier *cg)
{
	const char *name = s->e->sub;
	size_t len = strlen(name);
	char item[PATH_MAX + 32], path[PATH_MAX + 64];
	struct hk_plan_item it = {.size = sizeof(it), .item = item, .path = path, .why = "implied"};
	int rc = 0;

	for (size_t end = 1; rc == 0 && end <= len; end++) {
		if (end < len && name[end] != '/')
			continue;
		/* The parent of this level: the root, or name[0, plen). */
		const char *slash = memrchr(name, '/', end);
		int plen = slash ? (int)(slash - name) : 0;

		if (cg->version == 2) {
			snprintf(item, sizeof(item), "cgroup %s%.*s +hugetlb", plen ? "" : "/",
				 plen, name);
			snprintf(path, sizeof(path), "/%s%s%.*s/cgroup.subtree_control", cg->root,
				 plen ? "/" : "", plen, name);
			it.kind = HK_PLAN_CONTROLLER;
			it.value = "hugetlb";
			rc = once(s, &it);
		}
		snprintf(item, sizeof(item), "cgroup %.*s", (int)end, name);
		snprintf(path, sizeof(path), "/%s/%.*s", cg->root, (int)end, name);
		it.kind = HK_PLAN_MKDIR;
		it.value = "present";
		it.why = end == len ? s->e->why : "implied";
		if (rc == 0)
			rc = once(s, &it);
	}
	return rc;
}

/*
 * A hugetlb limit of a cgroup: the controller there (v2, or v1's
 * hierarchy), a page size of the machine, whole pages of it; the cgroup's
 * directories, then the limit ("max" written as -1 to v1).
 */
static int plan_cgroup(struct step *s)
{
	const struct hk_intent_entry *e = s->e;
	bool rsvd = strcmp(e->knob, "rsvd.max") == 0;
	struct hkc_cg_hier cg;
	char kname[32], file[96], item[PATH_MAX + 128], path[PATH_MAX + 128], value[32];
	struct hk_plan_item it = {.size = sizeof(it),
				  .kind = HK_PLAN_WRITE,
				  .item = item,
				  .path = path,
				  .value = value,
				  .why = e->why,
				  .node = HK_NODE_ALL,
				  .number = e->value ? 0 : e->number};
	int rc;

	if (!hkc_cg_hierarchy(s->in->ctx, &cg))
		return stop(s, HK_INTENT_NO_KERNEL, -ENOENT);
	rc = page_size(s, false);
	if (rc)
		return rc;
	if (it.number % s->v.page_size)
		return stop(s, HK_INTENT_NOT_WHOLE_PAGES, 0);
	rc = plan_cgroup_dirs(s, &cg);
	if (rc)
		return rc;
	hkc_cg_size_name(kname, sizeof(kname), s->v.page_size);
	snprintf(file, sizeof(file), "hugetlb.%s.%s", kname, rsvd ? cg.rsvd_max : cg.max);
	snprintf(path, sizeof(path), "/%s/%s/%s", cg.root, e->sub, file);
	snprintf(item, sizeof(item), "cgroup %s %s", e->sub, file);
	if (e->value)
		snprintf(value, sizeof(value), "max");
	else
		snprintf(value, sizeof(value), "%" PRIu64, it.number);
	it.page_size = s->v.page_size;
	return added(s, hk_plan_add(s->plan, &it));
}

/* The entry planned and its verdicts told: 0 goes on; else what planning returns. */
static int plan_entry(struct step *s)
{
	switch (s->e->setting) {
	case HK_SETTING_POOL:
		return tell(s, plan_pool(s));
	case HK_SETTING_DEMOTE_SIZE:
	case HK_SETTING_DEMOTE:
		return tell(s, plan_demote(s));
	case HK_SETTING_THP:
		return tell(s, plan_thp(s));
	case HK_SETTING_MOUNT:
		return plan_mounts(s);
	case HK_SETTING_UNMOUNT:
		return plan_unmounts(s);
	case HK_SETTING_SHARED_TEXT:
		return tell(s, plan_shared_text(s));
	case HK_SETTING_CGROUP:
		return tell(s, plan_cgroup(s));
	default:
		return tell(s, plan_sysctl(s));
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
		struct step s = {
			.in = intent, .plan = plan, .pools = pools, .fn = fn, .data = data};

		s.e = &intent->e[order[k]];
		s.v = (struct hk_intent_verdict){.size = sizeof(s.v), .entry = order[k]};
		rc = plan_entry(&s);
		free((char *)s.v.line);
	}
	free(order);
	return rc;
}
