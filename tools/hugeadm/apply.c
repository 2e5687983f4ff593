// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm changes the machine: after the whole plan has been validated and
 * resolved into libhugekit's plan items (plan.c, which leaves the actions in
 * the order they run: shared text, unmount, zone movable, THP, HVO, pools in
 * command-line order, demote, min_free_kbytes, shmmax, shm group, mounts),
 * each action runs under the machine-wide lock, its items through
 * libhugekit's executor (hk_run_items), which reads every write back; this
 * file words each step. A dry run runs the same items through libhugekit's
 * dry-run hook, which prints them as 2.23's shell commands and writes nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <time.h>
#include <unistd.h>

#include "hugeadm.h"

/* --hard gives up after this long, or after this many rounds without progress. */

static void dry_line(void *data, const char *path, const char *value)
{
	const struct hugeadm_ctl *ctl = data;
	const char *q = ctl->dry_quote ? ctl->dry_quote : "";

	printf("echo %s%s%s > %s\n", q, value, q, path);
}

static int check_caps(struct hugeadm_ctl *ctl)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (!caps || cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &v) < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the process capabilities: %m");
		cap_free(caps);
		return -1;
	}
	cap_free(caps);
	if (v != CAP_SET) {
		ha_msg(ctl, HA_ERROR,
		       "changing the huge page set-up needs the CAP_SYS_ADMIN capability "
		       "(run hugeadm as root); nothing was changed");
		return -1;
	}
	return 0;
}

/*
 * Without a kernel to answer (a dry run, or a --sysroot tree whose files are
 * plain files) hugeadm follows the pools in memory, changing them the way the
 * kernel would on each write; with one, it reads them back after each write.
 */
bool ha_simulated(const struct hugeadm_ctl *ctl)
{
	return ctl->dry_run || !hk_is_live(ctl->ctx);
}

/* The pool as the kernel has it now (*pool replaced). */
static int pool_now(struct hugeadm_ctl *ctl, uint64_t size, struct hk_pool **pool)
{
	int rc;

	hk_pool_unref(*pool);
	*pool = NULL;
	rc = hk_pool_read(ctl->ctx, size, pool);
	if (rc < 0)
		ha_msg(ctl, HA_ERROR, "cannot read the pool of %" PRIu64 " byte pages: %s", size,
		       strerror(-rc));
	return rc;
}

/*
 * libhugekit's executor tells each step of an option's items: a pool's write
 * is announced with 2.23's verbose line; a write the kernel read back
 * otherwise is an error, except a pool's Minimum (its caller reads the pool)
 * and where no kernel answers (a tree's plain files do not act like the
 * kernel's).
 */
static int option_step(void *data, const struct hk_run_step *st)
{
	const struct hugeadm_ctl *ctl = data;
	const struct hk_plan_item *it = st->item;
	bool thp = strncmp(it->item, "thp ", 4) == 0;
	const char *reached = st->reached ? st->reached : "";

	if (st->kind == HK_RUN_STEP_WRITE && it->page_size && it->field == HK_POOL_OVERCOMMIT)
		ha_msg(ctl, HA_INFO, "setting HUGEPAGES_OC to %" PRIu64, it->number);
	else if (st->kind == HK_RUN_STEP_WRITE && it->page_size && it->field == HK_POOL_MINIMUM)
		ha_msg(ctl, HA_INFO, "setting HUGEPAGES_TOTAL%s to %" PRIu64,
		       it->flags & HK_POOL_SET_MEMPOLICY ? "_MEMPOL" : "", it->number);
	if (st->kind == HK_RUN_STEP_SHORT &&
	    (ha_simulated(ctl) || (it->page_size && it->field == HK_POOL_MINIMUM)))
		return 0;
	if (st->kind == HK_RUN_STEP_SHORT && thp)
		ha_msg(ctl, HA_ERROR, "transparent_hugepage/%s: wrote '%s' but it reads '%s'",
		       it->item + 4, it->value, reached);
	else if (st->kind == HK_RUN_STEP_SHORT)
		ha_msg(ctl, HA_ERROR, "%s: wrote %s but it reads %s", it->path, it->value,
		       st->reached ? st->reached : "nothing");
	else if (st->kind == HK_RUN_STEP_FAILED && thp)
		ha_msg(ctl, HA_ERROR, "transparent_hugepage/%s: cannot write '%s': %s",
		       it->item + 4, it->value, strerror(-st->error));
	else if (st->kind == HK_RUN_STEP_FAILED)
		ha_msg(ctl, HA_ERROR, "%s: cannot write %s: %s", it->path, it->value,
		       strerror(-st->error));
	return st->kind == HK_RUN_STEP_SHORT ? -EAGAIN : 0;
}

/* Items [0, n) through libhugekit's executor, every value written (2.23's options did). */
static int run_items(struct hugeadm_ctl *ctl, const struct hk_plan_item *items, size_t n,
		     const char *quote)
{
	ctl->dry_quote = quote;
	return hk_run_items(ctl->run, items, n, option_step, ctl) < 0 ? -1 : 0;
}

/* The action's items (the array moves when the plan grows: fetch it again after an add). */
static const struct hk_plan_item *action_items(const struct hugeadm_ctl *ctl,
					       const struct ha_action *a)
{
	const struct hk_plan_item *items;

	hk_plan_items(ha_action_plan(ctl, a), &items);
	return items + a->first;
}

/* libhugetlbfs warned before growing a pool when swap was missing or short. */
void ha_check_swap(struct hugeadm_ctl *ctl)
{
	struct ha_swap_state st;

	ha_swap_state(ctl, &st);
	if (!st.none && !st.low)
		return;
	ha_msg(ctl, HA_WARNING,
	       st.none ? "There is no swap space configured, resizing hugepage pool may fail"
		       : "There is very little swap space free, resizing hugepage pool may fail");
	ha_msg(ctl, HA_WARNING,
	       "Use --add-temp-swap option to temporarily add swap during the resize");
}

static void gigantic_hint(struct hugeadm_ctl *ctl, uint64_t size)
{
	char sz[32];

	hk_format_size(sz, sizeof(sz), size);
	ha_msg(ctl, HA_WARNING,
	       "%s pages are gigantic: a running system seldom has free, aligned %s ranges left",
	       sz, sz);
	ha_msg(ctl, HA_WARNING,
	       "reserve them at boot with \"hugepagesz=%s hugepages=N\" (per node: "
	       "\"hugepages=0:N,1:M\"), or boot with \"hugetlb_cma=SIZE\" to allocate them at run "
	       "time",
	       sz);
}

/* Where a short pool's pages are: "reached per node: 0: 200, 1: 180". */
static void report_nodes(struct hugeadm_ctl *ctl, const struct hk_pool *pool)
{
	size_t n = hk_pool_node_count(pool), off = 0;
	char buf[512];

	if (n < 2)
		return;
	buf[0] = '\0';
	for (size_t k = 0; k < n && off < sizeof(buf); k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d: %" PRIu64,
					k ? ", " : "", hk_pool_node_id(pool, k),
					hk_pool_node_get(pool, k, HK_POOL_MINIMUM));
	ha_msg(ctl, HA_WARNING, "reached per node: %s", buf);
}

/*
 * A pool option's items: the overcommit written before the Minimum, the
 * Minimum (the pool's, or one item per listed node), the overcommit after.
 */
struct pool_goal {
	const struct ha_action *a;
	size_t nr, n_nr; /* the Minimum items, from the action's first */
};

static struct pool_goal pool_goal(const struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	const struct hk_plan_item *it = action_items(ctl, a);
	struct pool_goal g = {.a = a};

	while (g.nr < a->n_items && it[g.nr].field != HK_POOL_MINIMUM)
		g.nr++;
	while (g.nr + g.n_nr < a->n_items && it[g.nr + g.n_nr].field == HK_POOL_MINIMUM)
		g.n_nr++;
	return g;
}

uint64_t ha_pool_min_of(const struct hk_pool *pool, int node)
{
	if (node == HK_NODE_ALL)
		return hk_pool_get(pool, HK_POOL_MINIMUM);
	for (size_t k = 0; k < hk_pool_node_count(pool); k++)
		if (hk_pool_node_id(pool, k) == node)
			return hk_pool_node_get(pool, k, HK_POOL_MINIMUM);
	return 0;
}

/* 2.23's warning for each Minimum item that the kernel did not reach; true if any. */
static bool warn_short(struct hugeadm_ctl *ctl, const struct pool_goal *g,
		       const struct hk_pool *pool)
{
	bool any = false;

	for (size_t i = g->nr; i < g->nr + g->n_nr; i++) {
		const struct hk_plan_item *it = &action_items(ctl, g->a)[i];

		if (ha_pool_min_of(pool, it->node) == it->number)
			continue;
		if (it->node == HK_NODE_ALL) {
			ha_msg(ctl, HA_WARNING,
			       "failed to set pool minimum to %" PRIu64 " became %" PRIu64,
			       it->number, ha_pool_min_of(pool, it->node));
			report_nodes(ctl, pool);
		} else {
			ha_msg(ctl, HA_WARNING,
			       "failed to set pool minimum to %" PRIu64 " became %" PRIu64
			       " on node %d",
			       it->number, ha_pool_min_of(pool, it->node), it->node);
		}
		any = true;
	}
	return any;
}

/*
 * Before a grow without --hard: warn when the free lists hold fewer pages
 * than it needs. Surplus pages become persistent first and need no new page.
 */
static void warn_obtainable(struct hugeadm_ctl *ctl, const struct pool_goal *g)
{
	struct hk_pool *pool = NULL;

	if (ctl->hard || hk_pool_read(ctl->ctx, g->a->size, &pool) < 0)
		return;
	for (size_t i = g->nr; !hk_pool_is_gigantic(pool) && i < g->nr + g->n_nr; i++) {
		const struct hk_plan_item *it = &action_items(ctl, g->a)[i];

		uint64_t before = 0;

		hk_plan_item_before(ha_action_plan(ctl, g->a), g->a->first + i, &before);
		ha_warn_grow(ctl, pool, it->node, before, it->number);
	}
	hk_pool_unref(pool);
}

/*
 * The pool moved since it was planned (someone else wrote it): libhugekit
 * plans the change again from the kernel's pool, into a plan of its own.
 */
static int plan_again(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	struct hk_plan *again = NULL;
	struct hk_pool_change_plan cp;
	int rc = a->n_items ? hk_plan_pool_change_again(ctl->ctx, ha_action_plan(ctl, a), a->first,
							&again)
			    : 0;

	/* What fails here is, but for memory, reading the pool. */
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the pool of %" PRIu64 " byte pages: %s", a->size,
		       strerror(-rc));
		return -1;
	}
	if (rc == 0)
		return 0;
	ha_msg(ctl, HA_INFO, "%s: the pool changed since it was planned: planned again", a->arg);
	hk_plan_unref(a->again);
	a->again = again;
	a->first = 0;
	a->n_items = ha_pool_planned(ctl, a, &cp) ? cp.n : 0;
	return 0;
}

/* One pool option's run, told step by step by libhugekit's executor. */
struct pool_run {
	struct hugeadm_ctl *ctl;
	const struct ha_action *a;
	struct pool_goal g;
	struct hk_swap *swap; /* while the pool grows (--add-temp-swap, --add-ramdisk-swap) */
	bool swap_failed;
	bool is_short;
};

/* Before the first Minimum is written: swap while the pool grows, 2.23's warnings. */
static int before_grow(struct pool_run *p)
{
	struct hugeadm_ctl *ctl = p->ctl;
	const struct ha_action *a = p->a;

	if (!ha_pool_grows(ctl, a))
		return 0;
	if (!a->nodes && (ctl->temp_swap || ctl->ramdisk_swap) &&
	    ha_swap_add(ctl, a->size, &p->swap) < 0) {
		p->swap_failed = true;
		return 1;
	}
	ha_check_swap(ctl);
	warn_obtainable(ctl, &p->g);
	return 0;
}

/*
 * A pool option's step: before the Minimum, the grow's set-up; a whole
 * pool's Minimum short is said at once (2.23's warning, before the
 * overcommit that keeps the Maximum), and stops the run with --strict; the
 * nodes' are said once all are written.
 */
static int pool_step(void *data, const struct hk_run_step *st)
{
	struct pool_run *p = data;
	struct hugeadm_ctl *ctl = p->ctl;
	const struct hk_plan_item *it = st->item;
	struct hk_pool *pool = NULL;
	int rc;

	if (st->kind == HK_RUN_STEP_WRITE && st->index == p->g.nr && it->field == HK_POOL_MINIMUM &&
	    before_grow(p) != 0)
		return 1;
	rc = option_step(ctl, st);
	if (rc != 0 || st->kind != HK_RUN_STEP_SHORT || it->field != HK_POOL_MINIMUM ||
	    ha_simulated(ctl) || p->a->nodes)
		return rc;
	if (pool_now(ctl, p->a->size, &pool) < 0)
		return -1;
	p->is_short = warn_short(ctl, &p->g, pool);
	hk_pool_unref(pool);
	return p->is_short && ctl->strict ? 1 : 0;
}

/*
 * One --pool-pages-min or --pool-pages-max: its items as planned (libhugekit's
 * planner, through plan.c's ha_resolve_pool; planned again when the kernel's
 * pool moved since), run by libhugekit's executor: the overcommit first where
 * the Maximum grows, the Minimum read back (retried with --hard), the
 * overcommit after; when the Minimum came up short, the overcommit for what
 * was reached, so that the Maximum is still the one asked for
 * (HK_RUN_KEEP_MAXIMUM), or, with --strict, the run stops for the put-back.
 */
static int apply_pool(struct hugeadm_ctl *ctl, struct ha_action *a, bool *ret_short)
{
	struct pool_run p = {.ctl = ctl, .a = a};
	struct hk_pool_change_plan cp;
	struct hk_pool *pool = NULL;
	int rc = ha_simulated(ctl) ? 0 : plan_again(ctl, a);

	p.g = pool_goal(ctl, a);
	/* Without @NODES one Minimum item: from what it was to what it writes. */
	if (rc == 0 && !a->nodes && ha_pool_planned(ctl, a, &cp))
		ha_msg(ctl, HA_INFO, "%" PRIu64 ", %" PRIu64 " -> %" PRIu64 ", %" PRIu64,
		       cp.minimum_before, cp.maximum_before, cp.minimum_after, cp.maximum_after);
	ctl->dry_quote = "";
	if (rc == 0)
		rc = hk_run_items(ctl->run, action_items(ctl, a), a->n_items, pool_step, &p);
	if (p.swap)
		ha_swap_remove(ctl, p.swap);
	/* The nodes' Minimums, said once all are written (no overcommit follows them). */
	if (rc >= 0 && !p.swap_failed && a->nodes && !ha_simulated(ctl)) {
		if (pool_now(ctl, a->size, &pool) < 0)
			rc = -1;
		else
			p.is_short = warn_short(ctl, &p.g, pool);
		hk_pool_unref(pool);
	}
	if (rc >= 0 && p.is_short && hk_pool_plan_is_gigantic(ctl->pools, a->size))
		gigantic_hint(ctl, a->size);
	*ret_short = p.is_short;
	return rc < 0 || p.swap_failed ? -1 : 0;
}

/* The action's items (THP knobs, sysctls, a demote per node), with the dry run's quoting. */
int ha_apply_action_item(struct hugeadm_ctl *ctl, const struct ha_action *a, const char *quote)
{
	if (a->n_items == 0)
		return -1;
	return run_items(ctl, action_items(ctl, a), a->n_items, quote);
}

/*
 * A setting that resolved to no write says why: true when it did (zone
 * movable without its sysctl, shmmax with no huge pages or above the
 * recommendation). Also for --dry-run --json, which runs nothing.
 */
static bool say_unwritten(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	if (a->kind == HA_ZONE_MOVABLE && a->n_items == 0) {
		ha_msg(ctl, HA_WARNING,
		       "this kernel has no %s: the setting was removed from Linux; nothing changed",
		       hk_sysctl_path(HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE));
		return true;
	}
	if (a->kind != HA_SHMMAX)
		return false;
	if (a->u == 0) {
		/* 2.23's empty line, kept for scripts; not in the middle of a JSON document. */
		if (!ctl->json)
			printf("\n");
		ha_msg(ctl, HA_WARNING,
		       "We can only set a recommended shmmax when huge pages are configured!");
		return true;
	}
	/* libhugetlbfs lowered today's default (2^64 - 2^24 - 1); we never lower it. */
	if (a->amount > a->u) {
		ha_msg(ctl, HA_WARNING,
		       "kernel.shmmax is %" PRIu64 ", more than the recommended %" PRIu64
		       ": left as it is (hugeadm never lowers it)",
		       a->amount, a->u);
		return true;
	}
	return false;
}

static int apply_shmmax(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	/*
	 * A run: from the pools as the writes left them (one that came up short,
	 * or was planned again from what was there), not as they were planned.
	 */
	if (!ha_simulated(ctl) && ha_resolve_shmmax(ctl, a, true) < 0)
		return -1;
	if (say_unwritten(ctl, a))
		return 0;
	if (ha_apply_action_item(ctl, a, "") < 0)
		return -1;
	ha_msg(ctl, HA_INFO,
	       "To make shmmax settings persistent, add the following line to /etc/sysctl.conf:");
	ha_msg(ctl, HA_INFO, "  kernel.shmmax = %" PRIu64, a->u);
	return 0;
}

static int apply_one(struct hugeadm_ctl *ctl, struct ha_action *a, bool *ret_short)
{
	switch (a->kind) {
	case HA_CLEAN_TEXT:
		return ha_apply_clean_text(ctl, a);
	case HA_UNMOUNT_ALL:
		return ha_apply_unmount_all(ctl);
	case HA_MOUNTS:
		return ha_apply_mounts(ctl, a);
	case HA_ZONE_MOVABLE:
		return say_unwritten(ctl, a) ? 0 : ha_apply_action_item(ctl, a, "");
	case HA_THP:
		return ha_apply_action_item(ctl, a, "'");
	case HA_POOL_MIN:
	case HA_POOL_MAX:
		return apply_pool(ctl, a, ret_short);
	case HA_VMEMMAP:
	case HA_DEMOTE_SIZE:
	case HA_DEMOTE:
		return ha_apply_kernel(ctl, a, ret_short);
	case HA_MIN_FREE_KBYTES:
		return ha_apply_action_item(ctl, a, "\"");
	case HA_SHMMAX:
		return apply_shmmax(ctl, a);
	case HA_SHM_GROUP:
		if (ha_apply_action_item(ctl, a, "") < 0)
			return -1;
		ha_msg(ctl, HA_INFO,
		       "To make hugetlb_shm_group settings persistent, add the "
		       "following line to /etc/sysctl.conf:");
		ha_msg(ctl, HA_INFO, "  vm.hugetlb_shm_group = %" PRIu64, a->u);
		return 0;
	}
	return -1;
}

void ha_plan_notes(struct hugeadm_ctl *ctl)
{
	for (size_t i = 0; i < ctl->n_actions; i++)
		say_unwritten(ctl, &ctl->actions[i]);
}

int ha_lock(struct hugeadm_ctl *ctl, int *ret_fd)
{
	int rc;

	*ret_fd = -1;
	if ((ctl->n_actions == 0 && !ctl->apply) || ctl->dry_run)
		return 0;
	if (hk_is_live(ctl->ctx) && check_caps(ctl) < 0)
		return -1;
	rc = hk_lock(ctl->ctx, ctl->lock_timeout * 1000, ret_fd);
	if (rc == -ETIMEDOUT) {
		ha_msg(ctl, HA_ERROR,
		       "another program kept the huge page set-up locked for %d s "
		       "(see --lock-timeout); nothing was changed",
		       ctl->lock_timeout);
		return -1;
	}
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot take the lock: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * A change failed, or (--strict) a pool came up short: every file the run
 * wrote before is put back as it was (libhugekit's one put-back). Swap,
 * mounts, demoted pages and removed shared text are not files it can put back.
 */
static int put_back_all(struct hugeadm_ctl *ctl, const struct ha_action *a, bool failed)
{
	char why[256];
	size_t done = 0;

	ha_action_why(a, why, sizeof(why));
	if (hk_run_put_back(ctl->run, &done) < 0) {
		ha_msg(ctl, HA_ERROR, "%s: not every change could be put back (see above)", why);
		return -1;
	}
	if (done)
		ha_msg(ctl, HA_ERROR, "%s: %s: %zu %s put back as %s before this run", why,
		       failed ? "failed" : "came up short (--strict)", done,
		       hkt_plural(done, "file", "files"), done == 1 ? "it was" : "they were");
	return 0;
}

/*
 * The options write every value they are given (2.23 did); a pool that came
 * up short keeps the Maximum asked for, where a kernel answers.
 */
static unsigned run_flags(const struct hugeadm_ctl *ctl)
{
	return HK_RUN_ALWAYS | (ctl->hard ? HK_RUN_HARD : 0) |
	       (ha_simulated(ctl) ? 0 : HK_RUN_KEEP_MAXIMUM);
}

int ha_apply(struct hugeadm_ctl *ctl)
{
	const struct ha_action *stopped = NULL;
	const struct hk_plan_item *items;
	size_t n_planned;
	int rc = 0;

	if (ctl->n_actions == 0)
		return HK_EXIT_SUCCESS;
	if (hk_run_new(ctl->ctx, run_flags(ctl), &ctl->run) < 0) {
		ha_msg(ctl, HA_ERROR, "out of memory");
		return HK_EXIT_FAILURE;
	}
	if (ctl->dry_run)
		hk_set_dry_run(ctl->ctx, dry_line, ctl);
	n_planned = hk_plan_items(ctl->plan, &items);
	/* The actions in the order validation left them (plan.c's order_actions). */
	for (size_t i = 0; i < ctl->n_actions && rc == 0; i++) {
		bool short_now = false;

		rc = apply_one(ctl, &ctl->actions[i], &short_now);
		if (rc != 0 || (short_now && ctl->strict))
			stopped = &ctl->actions[i];
		if (short_now && ctl->strict) {
			if (ctl->actions[i].kind == HA_DEMOTE)
				ha_msg(ctl, HA_ERROR,
				       "%s: fewer pages were demoted than asked (--strict)",
				       ctl->actions[i].arg);
			else
				ha_msg(ctl, HA_ERROR,
				       "%s: the pool came up short; it was put back (--strict)",
				       ctl->actions[i].arg);
			rc = 1;
		}
	}
	hk_set_dry_run(ctl->ctx, NULL, NULL);
	/* The plan is what was printed and checked: never changed while it runs. */
	if (hk_plan_items(ctl->plan, &items) != n_planned) {
		ha_msg(ctl, HA_ERROR, "internal error: the plan changed while it ran");
		rc = -1;
	}
	/* A put-back that fails (a pool the kernel did not give back) is a failure, not a short pool. */
	if (stopped && !ctl->dry_run && put_back_all(ctl, stopped, rc < 0) < 0)
		rc = -1;
	hk_run_unref(ctl->run);
	ctl->run = NULL;
	if (rc < 0)
		return HK_EXIT_FAILURE;
	return rc > 0 ? HA_EXIT_SHORT : HK_EXIT_SUCCESS;
}
