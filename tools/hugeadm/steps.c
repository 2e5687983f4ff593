// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm changes the machine: after the whole plan has been validated and
 * resolved into libhugekit's plan items (actions.c, which leaves the actions in
 * the order they run: shared text, unmount, then libhugekit's order of the
 * intent: zone movable, THP, HVO, pools in command-line order, demote,
 * min_free_kbytes, shmmax, shm group; then mounts),
 * libhugekit's executor runs the plan in one walk under the machine-wide
 * lock (hk_run_plan), reading every write back; this file words each step
 * and each unit (one action's items).
 * A dry run runs the same plan through libhugekit's dry-run hook, which
 * prints its items as 2.23's shell commands and writes nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

/* capget(2) itself: libcap would be one more library loaded at every start. */
static int check_caps(struct hugeadm_ctl *ctl)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {0};

	if (syscall(SYS_capget, &h, d) < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the process capabilities: %m");
		return -1;
	}
	if (!(d[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32)))) {
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
 * A recommended shmmax that resolved to no write says why: true when it did
 * (no huge pages, or shmmax above the recommendation). Also for --dry-run
 * --json, which runs nothing.
 */
static bool say_shmmax(struct hugeadm_ctl *ctl, const struct hk_shmmax_plan *sp)
{
	if (sp->recommended == 0) {
		/* 2.23's empty line, kept for scripts; not in the middle of a JSON document. */
		if (!ctl->json)
			printf("\n");
		ha_msg(ctl, HA_WARNING,
		       "We can only set a recommended shmmax when huge pages are configured!");
		return true;
	}
	/* libhugetlbfs lowered today's default (2^64 - 2^24 - 1); we never lower it. */
	if (sp->current > sp->recommended) {
		ha_msg(ctl, HA_WARNING,
		       "kernel.shmmax is %" PRIu64 ", more than the recommended %" PRIu64
		       ": left as it is (hugeadm never lowers it)",
		       sp->current, sp->recommended);
		return true;
	}
	return false;
}

/* A setting that resolved to no write says why (zone movable without its sysctl, shmmax). */
static void say_unwritten(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	struct hk_shmmax_plan sp = {.size = sizeof(sp), .recommended = a->u, .current = a->amount};

	if (a->kind == HA_ZONE_MOVABLE && a->n_items == 0)
		ha_msg(ctl, HA_WARNING,
		       "this kernel has no %s: the setting was removed from Linux; nothing changed",
		       hk_sysctl_path(HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE));
	else if (a->kind == HA_SHMMAX)
		say_shmmax(ctl, &sp);
}

/*
 * The whole option plan's run: libhugekit's executor runs it in one walk,
 * unit by unit (a pool change, a recommended shmmax, the items of one
 * setting), and tells where each begins and ends; each unit is one action's,
 * in the order validation left them. This is what hugeadm says around them.
 */
struct option_run {
	struct hugeadm_ctl *ctl;
	size_t next;	     /* the action the next unit is */
	struct ha_action *a; /* the unit's action, between its BEGIN and END */
	/* The unit's items: in the plan run, or in the one its change was planned again into. */
	const struct hk_plan *plan;
	size_t first, n;
	/* A pool change's Minimum items [nr, nr + n_nr) of plan, and whether one grows. */
	size_t nr, n_nr;
	bool grows;
	uint64_t demoted; /* a demote: the pages its items read back as demoted */
	bool demote_read; /* ... where a kernel answers */
	struct hk_shmmax_plan sp;
	bool is_short;
	bool written;	   /* the last step was the item's WRITE */
	bool left_mounted; /* --unmount-all left one mounted: the run fails when its unit ends */
	struct ha_cleaned cleaned; /* --clean-shared-text */
	/* Where the run stopped: failed (said), or came up short with --strict. */
	const struct ha_action *stopped;
	bool failed, stopped_short;
	const struct ha_action *last; /* the last unit that ended */
	/* libhugekit put back what the run wrote (HK_RUN_PUT_BACK): how many, its error. */
	bool put_back;
	size_t n_put_back;
	int put_back_error;
};

/* What the callback returns to stop the run (hugeadm's own reasons, in the option_run). */
#define STOP 2

uint64_t ha_pool_min_of(const struct hk_pool *pool, int node)
{
	if (node == HK_NODE_ALL)
		return hk_pool_get(pool, HK_POOL_MINIMUM);
	for (size_t k = 0; k < hk_pool_node_count(pool); k++)
		if (hk_pool_node_id(pool, k) == node)
			return hk_pool_node_get(pool, k, HK_POOL_MINIMUM);
	return 0;
}

static const struct hk_plan_item *unit_item(const struct option_run *r, size_t i)
{

	return hk_plan_item_at(r->plan, i);
}

/* 2.23's warning for each Minimum item that the kernel did not reach; true if any. */
static bool warn_short(struct option_run *r, const struct hk_pool *pool)
{
	struct hugeadm_ctl *ctl = r->ctl;
	bool any = false;

	for (size_t i = r->nr; i < r->nr + r->n_nr; i++) {
		const struct hk_plan_item *it = unit_item(r, i);

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

/* The pool read back, and its short Minimums said: 0, or -1 (said). */
static int read_short(struct option_run *r)
{
	struct hk_pool *pool = NULL;

	if (pool_now(r->ctl, r->a->size, &pool) < 0)
		return -1;
	r->is_short = warn_short(r, pool);
	hk_pool_unref(pool);
	return 0;
}

/*
 * Before a grow without --hard: warn when the free lists hold fewer pages
 * than it needs. Surplus pages become persistent first and need no new page.
 */
static void warn_obtainable(struct option_run *r)
{
	struct hugeadm_ctl *ctl = r->ctl;
	struct hk_pool *pool = NULL;

	if (ctl->hard || hk_pool_read(ctl->ctx, r->a->size, &pool) < 0)
		return;
	for (size_t i = r->nr; !hk_pool_is_gigantic(pool) && i < r->nr + r->n_nr; i++) {
		uint64_t before = 0;

		hk_plan_item_before(r->plan, i, &before);
		ha_warn_grow(ctl, pool, unit_item(r, i)->node, before, unit_item(r, i)->number);
	}
	hk_pool_unref(pool);
}

/* Before the first Minimum is written (after the swap the run adds for it): 2.23's warnings. */
static void before_grow(struct option_run *r)
{
	if (!r->grows)
		return;
	ha_check_swap(r->ctl);
	warn_obtainable(r);
}

/*
 * A pool change's step: before the Minimum, the grow's set-up; a whole
 * pool's Minimum short is said at once (2.23's warning, before the
 * overcommit that keeps the Maximum), and stops the run with --strict; the
 * nodes' are said once all are written.
 */
static int pool_step(struct option_run *r, const struct hk_run_step *st)
{
	struct hugeadm_ctl *ctl = r->ctl;
	const struct hk_plan_item *it = st->item;
	int rc;

	if (st->kind == HK_RUN_STEP_WRITE && st->index == r->nr && it->field == HK_POOL_MINIMUM)
		before_grow(r);
	rc = option_step(ctl, st);
	if (rc != 0 || st->kind != HK_RUN_STEP_SHORT || it->field != HK_POOL_MINIMUM ||
	    ha_simulated(ctl) || r->a->nodes)
		return rc;
	if (read_short(r) < 0) {
		r->failed = true;
		return STOP;
	}
	return 0;
}

/* Whether the action is run as a unit of the plan (not an operation, not a setting unwritten). */
static bool has_unit(const struct ha_action *a)
{
	switch (a->kind) {
	case HA_SHMMAX:
		return true; /* the library computes it again, item or not */
	default:
		return a->n_items > 0;
	}
}

/* The unit's action: the next one that has a unit, of the unit's kind. */
static int unit_action(struct option_run *r, const struct hk_run_step *st)
{
	struct hugeadm_ctl *ctl = r->ctl;
	struct ha_action *a;
	bool pool;

	if (r->a)
		return 0;
	while (r->next < ctl->n_actions && !has_unit(&ctl->actions[r->next]))
		r->next++;
	a = r->next < ctl->n_actions ? &ctl->actions[r->next] : NULL;
	pool = a && (a->kind == HA_POOL_MIN || a->kind == HA_POOL_MAX);
	if (!a || (st->unit == HK_RUN_UNIT_SHMMAX) != (a->kind == HA_SHMMAX) ||
	    (st->unit == HK_RUN_UNIT_POOL_CHANGE) != pool ||
	    (st->plan == ctl->plan && st->unit != HK_RUN_UNIT_SHMMAX &&
	     (a->first != st->first || a->n_items != st->n))) {
		ha_msg(ctl, HA_ERROR, "internal error: the plan's units are not the options'");
		r->failed = true;
		/* What was written so far is put back all the same (in the last action's name). */
		r->stopped = a ? a : &ctl->actions[ctl->n_actions - 1];
		return STOP;
	}
	r->a = a;
	return 0;
}

/* Where the pool change runs from: its Minimum items, whether it grows, 2.23's -v line. */
static void pool_begin(struct option_run *r)
{
	struct hk_pool_change_plan cp = {.size = sizeof(cp)};
	bool planned = r->n && hk_plan_pool_change(r->plan, r->first, &cp) == 0;

	r->nr = r->first;
	while (r->nr < r->first + r->n && unit_item(r, r->nr)->field != HK_POOL_MINIMUM)
		r->nr++;
	for (r->n_nr = 0; r->nr + r->n_nr < r->first + r->n &&
			  unit_item(r, r->nr + r->n_nr)->field == HK_POOL_MINIMUM;)
		r->n_nr++;
	r->grows = planned && cp.grows;
	r->is_short = false;
	/* Without @NODES one Minimum item: from what it was to what it writes. */
	if (planned && !r->a->nodes)
		ha_msg(r->ctl, HA_INFO, "%" PRIu64 ", %" PRIu64 " -> %" PRIu64 ", %" PRIu64,
		       cp.minimum_before, cp.maximum_before, cp.minimum_after, cp.maximum_after);
}

/* A unit begins: its items, the dry run's quoting of them, what is said before. */
static int unit_begin(struct option_run *r, const struct hk_run_step *st)
{
	struct hugeadm_ctl *ctl = r->ctl;
	int rc = unit_action(r, st);

	if (rc != 0)
		return rc;
	r->plan = st->plan;
	r->first = st->first;
	r->n = st->n;
	ctl->dry_quote = r->a->kind == HA_THP ? "'" : r->a->kind == HA_MIN_FREE_KBYTES ? "\"" : "";
	switch (r->a->kind) {
	case HA_POOL_MIN:
	case HA_POOL_MAX:
		pool_begin(r);
		return 0;
	case HA_DEMOTE:
		r->demoted = 0;
		r->demote_read = false;
		return 0;
	case HA_SHMMAX:
		/* From the pools as the writes left them where a kernel answers. */
		r->sp = *st->shmmax;
		say_shmmax(ctl, &r->sp);
		return 0;
	case HA_MOUNTS:
		ha_mounts_begin(ctl, r->a);
		return 0;
	default:
		return 0;
	}
}

/* A pool change ends (its swap taken away before): the nodes' shortfall, the gigantic hint. */
static void pool_end(struct option_run *r, int error)
{
	struct hugeadm_ctl *ctl = r->ctl;

	if (error < 0 || r->failed)
		return;
	/* The nodes' Minimums, said once all are written (no overcommit follows them). */
	if (r->a->nodes && !ha_simulated(ctl) && read_short(r) < 0) {
		r->failed = true;
		return;
	}
	if (r->is_short && hk_pool_plan_is_gigantic(ctl->pools, r->a->size))
		gigantic_hint(ctl, r->a->size);
}

/* What is said once the unit's items are written (error: what stopped the run in it). */
static void unit_said(struct option_run *r, int error)
{
	struct hugeadm_ctl *ctl = r->ctl;
	const struct ha_action *a = r->a;

	switch (a->kind) {
	case HA_POOL_MIN:
	case HA_POOL_MAX:
		pool_end(r, error);
		return;
	case HA_UNMOUNT_ALL:
		/* The others taken down all the same; nothing after them runs. */
		r->failed |= r->left_mounted;
		return;
	case HA_CLEAN_TEXT:
		r->failed |= ha_clean_said(ctl, &r->cleaned) < 0;
		return;
	case HA_DEMOTE:
		if (error == 0 && !r->failed && r->demote_read)
			r->failed = ha_demote_said(ctl, a, r->demoted) < 0;
		return;
	default:
		break;
	}
	if (error != 0 || r->failed)
		return;
	if (a->kind == HA_VMEMMAP && !ha_simulated(ctl))
		ha_msg(ctl, HA_INFO, "HVO is %s for the huge pages allocated from now on",
		       a->u ? "on" : "off");
	if ((a->kind == HA_SHMMAX && r->n) || a->kind == HA_SHM_GROUP) {
		bool shmmax = a->kind == HA_SHMMAX;

		ha_msg(ctl, HA_INFO,
		       "To make %s settings persistent, add the following line to /etc/sysctl.conf:",
		       shmmax ? "shmmax" : "hugetlb_shm_group");
		ha_msg(ctl, HA_INFO, "  %s = %" PRIu64,
		       shmmax ? "kernel.shmmax" : "vm.hugetlb_shm_group",
		       shmmax ? r->sp.recommended : a->u);
	}
}

/* A unit ends: what is said after it; where the run stops, in which action. */
static int unit_end(struct option_run *r, const struct hk_run_step *st)
{
	if (!r->a)
		return 0;
	unit_said(r, st->error);
	if (st->error != 0 || r->failed)
		r->stopped = r->a;
	r->last = r->a;
	r->a = NULL;
	r->next++;
	return r->failed ? STOP : 0;
}

/* A --pool-demote's item, written: the pages the executor read back as demoted, counted. */
static int demote_step(struct option_run *r, const struct hk_run_step *st)
{
	uint64_t n;

	if (st->kind != HK_RUN_STEP_DONE && st->kind != HK_RUN_STEP_SHORT)
		return option_step(r->ctl, st);
	if (st->reached && hk_parse_size(st->reached, &n) == 0) {
		r->demoted += n;
		r->demote_read = true;
	}
	return 0;
}

static int run_step(void *data, const struct hk_run_step *st)
{
	struct option_run *r = data;
	int rc;

	switch (st->kind) {
	case HK_RUN_STEP_AGAIN:
		rc = unit_action(r, st);
		if (rc == 0 && st->error < 0 && st->unit == HK_RUN_UNIT_SHMMAX) {
			ha_msg(r->ctl, HA_ERROR, "cannot compute the recommended shmmax: %s",
			       strerror(-st->error));
			r->failed = true;
		} else if (rc == 0 && st->error < 0) {
			/* What fails here is, but for memory, reading the pool. */
			ha_msg(r->ctl, HA_ERROR,
			       "cannot read the pool of %" PRIu64 " byte pages: %s", r->a->size,
			       strerror(-st->error));
			r->failed = true;
		} else if (rc == 0 && st->unit == HK_RUN_UNIT_POOL_CHANGE) {
			ha_msg(r->ctl, HA_INFO,
			       "%s: the pool changed since it was planned: planned again",
			       r->a->arg);
		}
		if (r->failed)
			r->stopped = r->a;
		return r->failed ? STOP : rc;
	case HK_RUN_STEP_BEGIN:
		return unit_begin(r, st);
	case HK_RUN_STEP_END:
		return unit_end(r, st);
	case HK_RUN_STEP_SWAP:
	case HK_RUN_STEP_UNSWAP:
		if (ha_swap_step(r->ctl, st) == 0)
			return 0;
		r->failed = true;
		return STOP;
	case HK_RUN_STEP_PUT_BACK:
		/* Said once the run has returned, after why it stopped. */
		r->put_back = true;
		r->n_put_back = st->put_back;
		r->put_back_error = st->error;
		return 0;
	default:
		if (r->a && st->unit == HK_RUN_UNIT_POOL_CHANGE)
			return pool_step(r, st);
		if (r->a && r->a->kind == HA_MOUNTS) {
			rc = ha_mount_step(r->ctl, r->a, st, r->written);
			r->written = st->kind == HK_RUN_STEP_WRITE;
			return rc;
		}
		if (r->a && r->a->kind == HA_CLEAN_TEXT)
			return ha_clean_step(r->ctl, st, &r->cleaned);
		if (r->a && r->a->kind == HA_DEMOTE)
			return demote_step(r, st);
		if (r->a && r->a->kind == HA_UNMOUNT_ALL) {
			r->left_mounted |= ha_unmount_step(r->ctl, st) > 0;
			return 0;
		}
		return option_step(r->ctl, st);
	}
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
 * A change failed, or (--strict) a pool came up short: libhugekit's executor
 * put back every file the run wrote and every mount it made (its one
 * put-back, HK_RUN_PUT_BACK, which counts each as a file). Swap, demoted
 * pages and removed shared text are not things it can put back. -1 when not
 * everything could be.
 */
static int say_put_back(struct hugeadm_ctl *ctl, const struct option_run *r, bool failed)
{
	char why[256];

	if (!r->put_back)
		return 0;
	ha_action_why(r->stopped, why, sizeof(why));
	if (r->put_back_error < 0) {
		ha_msg(ctl, HA_ERROR, "%s: not every change could be put back (see above)", why);
		return -1;
	}
	if (r->n_put_back)
		ha_msg(ctl, HA_ERROR, "%s: %s: %zu %s put back as %s before this run", why,
		       failed ? "failed" : "came up short (--strict)", r->n_put_back,
		       hkt_plural(r->n_put_back, "file", "files"),
		       r->n_put_back == 1 ? "it was" : "they were");
	return 0;
}

/*
 * The options write every value they are given (2.23 did); a pool that came
 * up short keeps the Maximum asked for, where a kernel answers; all or
 * nothing (--strict: a shortfall too).
 */
static unsigned run_flags(const struct hugeadm_ctl *ctl)
{
	return HK_RUN_ALWAYS | HK_RUN_PUT_BACK | (ctl->hard ? HK_RUN_HARD : 0) |
	       (ctl->strict ? HK_RUN_STRICT : 0) | (ha_simulated(ctl) ? 0 : HK_RUN_KEEP_MAXIMUM);
}

/*
 * Before the plan, in the order validation left them: what
 * --clean-shared-text, --unmount-all and a zone movable setting found
 * nothing to do for.
 * 0, or -1 after a message.
 */
static int run_operations(struct hugeadm_ctl *ctl)
{
	for (size_t i = 0; i < ctl->n_actions; i++) {
		struct ha_action *a = &ctl->actions[i];

		if (a->kind == HA_CLEAN_TEXT && a->n_items == 0 &&
		    ha_clean_said(ctl, &(struct ha_cleaned){0}) < 0)
			return -1;
		else if (a->kind == HA_UNMOUNT_ALL && a->n_items == 0)
			ha_msg(ctl, HA_INFO, "no hugetlbfs mounts under %s", HA_MOUNT_DIR);
		else if (a->kind == HA_ZONE_MOVABLE && a->n_items == 0)
			say_unwritten(ctl, a);
	}
	return 0;
}

/*
 * The plan, in one walk of libhugekit's executor, which puts back all it
 * wrote where the run stops early: 0, 1 (--strict: came up short), or -1.
 */
static int run_plan(struct hugeadm_ctl *ctl)
{
	struct option_run r = {.ctl = ctl};
	int rc;

	if (ctl->dry_run)
		hk_set_dry_run(ctl->ctx, dry_line, ctl);
	rc = hk_run_plan(ctl->run, ctl->plan, run_step, &r);
	hk_set_dry_run(ctl->ctx, NULL, NULL);
	/* What stops the run outside a step (memory): said, and put back all the same. */
	if (rc < 0 && !r.stopped && !r.failed) {
		ha_msg(ctl, HA_ERROR, "cannot run the plan: %s", strerror(-rc));
		r.stopped = &ctl->actions[ctl->n_actions - 1];
	}
	/* Put back with neither a failure nor a stop of hugeadm's: --strict, after the unit that came up short. */
	if (r.put_back && rc >= 0 && !r.failed && !r.stopped) {
		r.stopped = r.last ? r.last : &ctl->actions[ctl->n_actions - 1];
		r.stopped_short = true;
	}
	/* Not where the put-back failed: said next, and that is a failure (exit 1). */
	if (r.stopped_short && r.stopped->kind == HA_DEMOTE && !r.put_back_error)
		ha_msg(ctl, HA_ERROR, "%s: fewer pages were demoted than asked (--strict)",
		       r.stopped->arg);
	else if (r.stopped_short && !r.put_back_error)
		ha_msg(ctl, HA_ERROR, "%s: the pool came up short; it was put back (--strict)",
		       r.stopped->arg);
	if (say_put_back(ctl, &r, !r.stopped_short) < 0)
		return -1;
	if (rc < 0 || r.failed)
		return -1;
	return r.stopped_short ? 1 : 0;
}

int ha_apply(struct hugeadm_ctl *ctl)
{
	size_t n_planned;
	int rc;

	if (ctl->n_actions == 0)
		return HK_EXIT_SUCCESS;
	if (hk_run_new(ctl->ctx, run_flags(ctl), &ctl->run) < 0 || ha_run_swap(ctl) < 0) {
		ha_msg(ctl, HA_ERROR, "out of memory");
		return HK_EXIT_FAILURE;
	}
	n_planned = hk_plan_items(ctl->plan, NULL);
	rc = run_operations(ctl);
	if (rc == 0)
		rc = run_plan(ctl);
	/* The plan is what was printed and checked: never changed while it runs. */
	if (hk_plan_items(ctl->plan, NULL) != n_planned) {
		ha_msg(ctl, HA_ERROR, "internal error: the plan changed while it ran");
		rc = -1;
	}
	hk_run_unref(ctl->run);
	ctl->run = NULL;
	if (rc < 0)
		return HK_EXIT_FAILURE;
	return rc > 0 ? HA_EXIT_SHORT : HK_EXIT_SUCCESS;
}
