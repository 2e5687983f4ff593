// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm changes the machine: after the whole plan has been validated, the
 * actions run in a fixed order (zone movable, THP, pools in command-line
 * order, min_free_kbytes, shmmax, shm group), under the machine-wide lock,
 * and every pool write is read back. A dry run prints the writes as shell
 * commands instead (through libhugekit's dry-run hook) and writes nothing.
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
#define HARD_TIMEOUT_S 30
#define HARD_STALLS 3

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

/* The pool as it is now: re-read from the kernel, or the simulation's. */
static int pool_now(struct hugeadm_ctl *ctl, uint64_t size, struct ha_pool_state *mine,
		    struct ha_pool_state **ret)
{
	int rc;

	if (ha_simulated(ctl))
		return ha_state_get(ctl, &ctl->dry_states, size, ret);
	rc = ha_state_load(ctl, mine, size);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the pool of %" PRIu64 " byte pages: %s", size,
		       strerror(-rc));
		return rc;
	}
	*ret = mine;
	return 0;
}

static int report_write(struct hugeadm_ctl *ctl, int rc, uint64_t size, int node,
			enum hk_pool_field field, unsigned flags, uint64_t value)
{
	char *path = NULL;

	if (rc >= 0)
		return 0;
	hk_pool_file(ctl->ctx, size, node, field, flags, &path);
	ha_msg(ctl, HA_ERROR, "%s: cannot write %" PRIu64 ": %s", path ? path : "pool", value,
	       strerror(-rc));
	free(path);
	return -1;
}

/* Write a pool's (or a node's) persistent size; a simulation moves its state as the kernel would. */
static int set_nr(struct hugeadm_ctl *ctl, struct ha_pool_state *st, int node, uint64_t v)
{
	unsigned flags = node == HK_NODE_ALL && ctl->obey_mempolicy ? HK_POOL_SET_MEMPOLICY : 0;
	int k;

	ha_msg(ctl, HA_INFO, "setting HUGEPAGES_TOTAL%s to %" PRIu64, flags ? "_MEMPOL" : "", v);
	ctl->dry_quote = "";
	if (report_write(ctl, hk_pool_set_nr(ctl->ctx, st->size, node, v, flags), st->size, node,
			 HK_POOL_NR, flags, v) < 0)
		return -1;
	if (!ha_simulated(ctl))
		return 0;
	if (node == HK_NODE_ALL) {
		st->min = v;
	} else if ((k = ha_state_node(st, node)) >= 0) {
		st->min = ha_sat_add(ha_sat_sub(st->min, st->node_min[k]), v);
		st->node_min[k] = v;
	}
	return 0;
}

static int set_oc(struct hugeadm_ctl *ctl, struct ha_pool_state *st, uint64_t v)
{
	ha_msg(ctl, HA_INFO, "setting HUGEPAGES_OC to %" PRIu64, v);
	ctl->dry_quote = "";
	if (report_write(ctl, hk_pool_set_overcommit(ctl->ctx, st->size, v), st->size, HK_NODE_ALL,
			 HK_POOL_OVERCOMMIT, 0, v) < 0)
		return -1;
	if (ha_simulated(ctl))
		st->oc = v;
	return 0;
}

/* libhugetlbfs warned before growing a pool when swap was missing or short. */
void ha_check_swap(struct hugeadm_ctl *ctl)
{
	uint64_t total = 0, free_kb = 0, def = 0;

	hk_meminfo_read(ctl->ctx, "SwapTotal", &total);
	hk_default_page_size(ctl->ctx, &def);
	if (total == 0) {
		ha_msg(ctl, HA_WARNING,
		       "There is no swap space configured, resizing hugepage pool may fail");
		ha_msg(ctl, HA_WARNING,
		       "Use --add-temp-swap option to temporarily add swap during the resize");
		return;
	}
	hk_meminfo_read(ctl->ctx, "SwapFree", &free_kb);
	if (free_kb * 1024 <= def) {
		ha_msg(ctl, HA_WARNING,
		       "There is very little swap space free, resizing hugepage pool may fail");
		ha_msg(ctl, HA_WARNING,
		       "Use --add-temp-swap option to temporarily add swap during the resize");
	}
}

static long long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void compact(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	int rc = hk_compact_memory(ctl->ctx, HK_NODE_ALL);

	if (rc < 0 && rc != -ENOENT)
		ha_msg(ctl, HA_WARNING, "cannot compact memory: %s", strerror(-rc));
	for (size_t j = 0; a->nodes && j < a->n_nodes; j++)
		hk_compact_memory(ctl->ctx, a->nodes[j]);
}

static void gigantic_hint(struct hugeadm_ctl *ctl, uint64_t size)
{
	char sz[32];

	hkc_format_size(sz, sizeof(sz), size);
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
static void report_nodes(struct hugeadm_ctl *ctl, const struct ha_pool_state *st)
{
	char buf[512];
	size_t off = 0;

	if (st->n_nodes < 2)
		return;
	buf[0] = '\0';
	for (size_t k = 0; k < st->n_nodes && off < sizeof(buf); k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d: %" PRIu64,
					k ? ", " : "", st->ids[k], st->node_min[k]);
	ha_msg(ctl, HA_WARNING, "reached per node: %s", buf);
}

/*
 * What a pool option asks of the kernel: without @NODES, the pool's Minimum;
 * with @NODES, each listed node's own persistent pages, relative to that
 * node's (want, indexed like the state's nodes; before holds where they were).
 */
struct pool_goal {
	const struct ha_action *a;
	uint64_t min;
	uint64_t *want, *before;
};

/* One round of writes: the pool's nr_hugepages, or each listed node's. */
static int write_goal(struct hugeadm_ctl *ctl, const struct pool_goal *g, struct ha_pool_state *st)
{
	if (!g->a->nodes)
		return set_nr(ctl, st, HK_NODE_ALL, g->min);
	for (size_t k = 0; k < st->n_nodes; k++)
		if (ha_node_listed(g->a, st->ids[k]) && set_nr(ctl, st, st->ids[k], g->want[k]) < 0)
			return -1;
	return 0;
}

/* The pages reached (and the pages asked for, in *ret_goal); *ret_below when short of them. */
static uint64_t reached(const struct pool_goal *g, const struct ha_pool_state *st,
			uint64_t *ret_goal, bool *ret_below)
{
	uint64_t got = 0, goal = 0;

	*ret_below = false;
	if (!g->a->nodes) {
		*ret_goal = g->min;
		*ret_below = st->min < g->min;
		return st->min;
	}
	for (size_t k = 0; k < st->n_nodes; k++) {
		if (!ha_node_listed(g->a, st->ids[k]))
			continue;
		got = ha_sat_add(got, st->node_min[k]);
		goal = ha_sat_add(goal, g->want[k]);
		*ret_below |= st->node_min[k] < g->want[k];
	}
	*ret_goal = goal;
	return got;
}

/*
 * Write the goal and read the pool back. With --hard, while it is short:
 * compact memory, wait a second and write again, until it has its pages,
 * HARD_STALLS rounds in a row have brought no page, or HARD_TIMEOUT_S have
 * passed. One loop, so that --hard means the same with and without @NODES.
 */
static int write_and_retry(struct hugeadm_ctl *ctl, const struct pool_goal *g,
			   struct ha_pool_state *mine, struct ha_pool_state **st)
{
	long long deadline = now_s() + HARD_TIMEOUT_S;
	int rounds = 0, stalls = 0;
	uint64_t got, last, goal;
	bool below;

	if (write_goal(ctl, g, *st) < 0 || pool_now(ctl, g->a->size, mine, st) < 0)
		return -1;
	last = reached(g, *st, &goal, &below);
	while (ctl->hard && below) {
		if (stalls >= HARD_STALLS) {
			ha_msg(ctl, HA_INFO,
			       "--hard: giving up after %d rounds, the last %d without progress",
			       rounds, HARD_STALLS);
			break;
		}
		if (now_s() >= deadline) {
			ha_msg(ctl, HA_INFO, "--hard: giving up after %d rounds and %d seconds",
			       rounds, HARD_TIMEOUT_S);
			break;
		}
		if (g->a->nodes)
			ha_msg(ctl, HA_INFO,
			       "retrying: %" PRIu64 " of %" PRIu64 " pages on the nodes", last,
			       goal);
		else
			ha_msg(ctl, HA_INFO,
			       "Retrying allocation HUGEPAGES_TOTAL to %" PRIu64
			       " current %" PRIu64,
			       goal, last);
		compact(ctl, g->a);
		sleep(1);
		if (write_goal(ctl, g, *st) < 0 || pool_now(ctl, g->a->size, mine, st) < 0)
			return -1;
		got = reached(g, *st, &goal, &below);
		rounds++;
		stalls = got > last ? 0 : stalls + 1;
		last = got;
	}
	return 0;
}

/* 2.23's warning for each part of the goal that the kernel did not reach; true if any. */
static bool warn_short(struct hugeadm_ctl *ctl, const struct pool_goal *g,
		       const struct ha_pool_state *st)
{
	bool any = false;

	if (!g->a->nodes) {
		if (st->min == g->min)
			return false;
		ha_msg(ctl, HA_WARNING, "failed to set pool minimum to %" PRIu64 " became %" PRIu64,
		       g->min, st->min);
		report_nodes(ctl, st);
		return true;
	}
	for (size_t k = 0; k < st->n_nodes; k++) {
		if (!ha_node_listed(g->a, st->ids[k]) || st->node_min[k] == g->want[k])
			continue;
		ha_msg(ctl, HA_WARNING,
		       "failed to set pool minimum to %" PRIu64 " became %" PRIu64 " on node %d",
		       g->want[k], st->node_min[k], st->ids[k]);
		any = true;
	}
	return any;
}

/* --strict: put the pool (or the listed nodes) back as it was, and check that it is. */
static int put_back(struct hugeadm_ctl *ctl, const struct pool_goal *g, uint64_t min0, uint64_t oc0,
		    struct ha_pool_state *mine, struct ha_pool_state **st)
{
	struct pool_goal old = {.a = g->a, .min = min0, .want = g->before};
	uint64_t got, goal;
	bool below;

	if (write_goal(ctl, &old, *st) < 0 ||
	    (!g->a->nodes && !(*st)->gigantic && (*st)->oc != oc0 && set_oc(ctl, *st, oc0) < 0) ||
	    pool_now(ctl, g->a->size, mine, st) < 0)
		return -1;
	got = reached(&old, *st, &goal, &below);
	if (got != goal) {
		ha_msg(ctl, HA_ERROR,
		       "%s: could not put the pool back: %" PRIu64 " pages instead of %" PRIu64,
		       g->a->arg, got, goal);
		return -1;
	}
	return 0;
}

/*
 * Before a grow without --hard: warn when the free lists hold fewer pages
 * than it needs. Surplus pages become persistent first and need no new page.
 */
static void warn_obtainable(struct hugeadm_ctl *ctl, const struct pool_goal *g,
			    const struct ha_pool_state *st, uint64_t min0)
{
	struct hk_pool *pool = NULL;

	if (ctl->hard || st->gigantic || hk_pool_read(ctl->ctx, g->a->size, &pool) < 0)
		return;
	if (!g->a->nodes) {
		uint64_t need = ha_sat_sub(g->min, min0),
			 surplus = hk_pool_get(pool, HK_POOL_SURPLUS);

		ha_warn_obtainable(ctl, g->a->size, HK_NODE_ALL, ha_sat_sub(need, surplus));
	}
	for (size_t k = 0; g->a->nodes && k < st->n_nodes; k++) {
		uint64_t need = ha_sat_sub(g->want[k], g->before[k]), surplus = 0;

		for (size_t i = 0; i < hk_pool_node_count(pool); i++)
			if (hk_pool_node_id(pool, i) == st->ids[k])
				surplus = hk_pool_node_get(pool, i, HK_POOL_SURPLUS);
		if (ha_node_listed(g->a, st->ids[k]))
			ha_warn_obtainable(ctl, g->a->size, st->ids[k], ha_sat_sub(need, surplus));
	}
	hk_pool_unref(pool);
}

/*
 * One --pool-pages-min or --pool-pages-max. Without @NODES: the pool's
 * Minimum and Maximum, overcommit first when it must grow. With @NODES: each
 * listed node's nr_hugepages; the overcommit count is left alone, so the
 * pool's Maximum moves with its Minimum.
 */
static int apply_pool(struct hugeadm_ctl *ctl, const struct ha_action *a, bool *ret_short)
{
	struct ha_pool_state mine = {0}, *st;
	struct pool_goal g = {.a = a};
	uint64_t min0, oc0, max;
	struct ha_swap *swap = NULL;
	bool grows = false;
	int rc = -1;

	if (pool_now(ctl, a->size, &mine, &st) < 0)
		return -1;
	min0 = st->min;
	oc0 = st->oc;
	ha_pool_targets(a, st, &g.min, &max);
	if (a->nodes) {
		size_t n = st->n_nodes ? st->n_nodes : 1;

		g.want = calloc(n, sizeof(*g.want));
		g.before = calloc(n, sizeof(*g.before));
		if (!g.want || !g.before) {
			ha_msg(ctl, HA_ERROR, "out of memory");
			goto out;
		}
		for (size_t k = 0; k < st->n_nodes; k++) {
			g.before[k] = st->node_min[k];
			g.want[k] = ha_node_want(a, st, k);
			grows |= g.want[k] > g.before[k];
		}
	} else {
		grows = g.min > min0;
		ha_msg(ctl, HA_INFO, "%" PRIu64 ", %" PRIu64 " -> %" PRIu64 ", %" PRIu64, min0,
		       ha_pool_max(min0, oc0), g.min, max);
		/* Room to overcommit first, so that growing never fails for lack of it. */
		if (!st->gigantic && ha_pool_max(g.min, oc0) < max &&
		    set_oc(ctl, st, ha_pool_oc(g.min, max)) < 0)
			goto out;
		if (grows && (ctl->temp_swap || ctl->ramdisk_swap) &&
		    ha_swap_add(ctl, a->size, &swap) < 0)
			goto out;
	}
	if (grows)
		ha_check_swap(ctl);
	if (grows)
		warn_obtainable(ctl, &g, st, min0);
	if (write_and_retry(ctl, &g, &mine, &st) < 0)
		goto out;
	*ret_short = warn_short(ctl, &g, st);
	if (*ret_short && st->gigantic)
		gigantic_hint(ctl, a->size);
	if (*ret_short && ctl->strict) {
		rc = put_back(ctl, &g, min0, oc0, &mine, &st);
		goto out;
	}
	/* The kernel kept the overcommit count; make the Maximum the one asked for. */
	if (!a->nodes && !st->gigantic && ha_pool_max(st->min, st->oc) != max &&
	    set_oc(ctl, st, ha_pool_oc(st->min, max)) < 0)
		goto out;
	rc = 0;
out:
	if (swap)
		ha_swap_remove(ctl, swap);
	free(g.want);
	free(g.before);
	free(mine.ids);
	free(mine.node_min);
	return rc;
}

static int apply_thp(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	int rc;

	ctl->dry_quote = "'";
	rc = hk_thp_write(ctl->ctx, a->knob, a->value);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "transparent_hugepage/%s: cannot write '%s': %s", a->knob,
		       a->value, strerror(-rc));
		return -1;
	}
	return 0;
}

static int write_sysctl(struct hugeadm_ctl *ctl, enum hk_sysctl which, uint64_t v, const char *q)
{
	int rc;

	ctl->dry_quote = q;
	rc = hk_sysctl_write(ctl->ctx, which, v);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "%s: cannot write %" PRIu64 ": %s", hk_sysctl_path(which), v,
		       strerror(-rc));
		return -1;
	}
	return 0;
}

static int apply_zone_movable(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	uint64_t cur;

	if (hk_sysctl_read(ctl->ctx, HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE, &cur) == -ENOENT) {
		ha_msg(ctl, HA_WARNING,
		       "this kernel has no %s: the setting was removed from Linux; nothing changed",
		       hk_sysctl_path(HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE));
		return 0;
	}
	return write_sysctl(ctl, HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE, a->u, "");
}

/* The shmmax recommendation from the pools as they are after this run's changes. */
static int planned_shmmax(struct hugeadm_ctl *ctl, uint64_t *ret)
{
	uint64_t *sizes, sum = 0;
	size_t n;
	int rc = hk_page_sizes(ctl->ctx, &sizes, &n);

	if (rc < 0 || !ha_simulated(ctl)) {
		if (rc == 0)
			free(sizes);
		return rc < 0 ? rc : hk_recommended_shmmax(ctl->ctx, ret);
	}
	for (size_t i = 0; i < n; i++) {
		struct ha_pool_state *st;
		uint64_t max, bytes;

		rc = ha_state_get(ctl, &ctl->dry_states, sizes[i], &st);
		if (rc < 0)
			break;
		max = ha_state_max(st);
		bytes = max > UINT64_MAX / sizes[i] ? UINT64_MAX : max * sizes[i];
		sum = ha_sat_add(sum, bytes);
	}
	free(sizes);
	*ret = sum;
	return rc;
}

static int apply_shmmax(struct hugeadm_ctl *ctl)
{
	uint64_t rec, cur;
	int rc = planned_shmmax(ctl, &rec);

	if (rc == 0)
		rc = hk_sysctl_read(ctl->ctx, HK_SYSCTL_SHMMAX, &cur);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot compute the recommended shmmax: %s", strerror(-rc));
		return -1;
	}
	if (rec == 0) {
		/* 2.23's empty line, kept for scripts; not in the middle of a JSON document. */
		if (!ctl->json)
			printf("\n");
		ha_msg(ctl, HA_WARNING,
		       "We can only set a recommended shmmax when huge pages are configured!");
		return 0;
	}
	/* libhugetlbfs lowered today's default (2^64 - 2^24 - 1); we never lower it. */
	if (cur > rec) {
		ha_msg(ctl, HA_WARNING,
		       "kernel.shmmax is %" PRIu64 ", more than the recommended %" PRIu64
		       ": left as it is (hugeadm never lowers it)",
		       cur, rec);
		return 0;
	}
	if (write_sysctl(ctl, HK_SYSCTL_SHMMAX, rec, "") < 0)
		return -1;
	ha_msg(ctl, HA_INFO,
	       "To make shmmax settings persistent, add the following line to /etc/sysctl.conf:");
	ha_msg(ctl, HA_INFO, "  kernel.shmmax = %" PRIu64, rec);
	return 0;
}

static int apply_one(struct hugeadm_ctl *ctl, const struct ha_action *a, bool *ret_short)
{
	uint64_t v;
	int rc;

	switch (a->kind) {
	case HA_CLEAN_TEXT:
		return ha_apply_clean_text(ctl, a);
	case HA_UNMOUNT_ALL:
		return ha_apply_unmount_all(ctl);
	case HA_MOUNTS:
		return ha_apply_mounts(ctl, a);
	case HA_ZONE_MOVABLE:
		return apply_zone_movable(ctl, a);
	case HA_THP:
		return apply_thp(ctl, a);
	case HA_POOL_MIN:
	case HA_POOL_MAX:
		return apply_pool(ctl, a, ret_short);
	case HA_VMEMMAP:
	case HA_DEMOTE_SIZE:
	case HA_DEMOTE:
		return ha_apply_kernel(ctl, a, ret_short);
	case HA_MIN_FREE_KBYTES:
		rc = hk_recommended_min_free_kbytes(ctl->ctx, &v);
		if (rc < 0) {
			ha_msg(ctl, HA_ERROR, "cannot compute the recommended min_free_kbytes: %s",
			       strerror(-rc));
			return -1;
		}
		return write_sysctl(ctl, HK_SYSCTL_MIN_FREE_KBYTES, v, "\"");
	case HA_SHMMAX:
		return apply_shmmax(ctl);
	case HA_SHM_GROUP:
		if (write_sysctl(ctl, HK_SYSCTL_HUGETLB_SHM_GROUP, a->u, "") < 0)
			return -1;
		ha_msg(ctl, HA_INFO,
		       "To make hugetlb_shm_group settings persistent, add the "
		       "following line to /etc/sysctl.conf:");
		ha_msg(ctl, HA_INFO, "  vm.hugetlb_shm_group = %" PRIu64, a->u);
		return 0;
	}
	return -1;
}

/* The order actions run in; pools keep their command-line order among themselves. */
static int phase(enum ha_kind kind)
{
	return kind == HA_POOL_MAX ? HA_POOL_MIN : (int)kind;
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

int ha_apply(struct hugeadm_ctl *ctl)
{
	int rc = 0;

	if (ctl->n_actions == 0)
		return HK_EXIT_SUCCESS;
	if (ctl->dry_run)
		hk_set_dry_run(ctl->ctx, dry_line, ctl);
	for (int p = HA_CLEAN_TEXT; p <= HA_MOUNTS && rc == 0; p++) {
		for (size_t i = 0; i < ctl->n_actions && rc == 0; i++) {
			bool short_now = false;

			if (phase(ctl->actions[i].kind) != p)
				continue;
			rc = apply_one(ctl, &ctl->actions[i], &short_now);
			if (short_now && ctl->strict) {
				if (ctl->actions[i].kind == HA_DEMOTE)
					ha_msg(ctl, HA_ERROR,
					       "%s: fewer pages were demoted than asked (--strict)",
					       ctl->actions[i].arg);
				else
					ha_msg(ctl, HA_ERROR,
					       "%s: the pool came up short; it was put back "
					       "(--strict)",
					       ctl->actions[i].arg);
				rc = 1;
			}
		}
	}
	hk_set_dry_run(ctl->ctx, NULL, NULL);
	if (rc < 0)
		return HK_EXIT_FAILURE;
	return rc > 0 ? HA_EXIT_SHORT : HK_EXIT_SUCCESS;
}
