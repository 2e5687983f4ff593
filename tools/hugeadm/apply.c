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
static bool simulated(const struct hugeadm_ctl *ctl)
{
	return ctl->dry_run || !hk_is_live(ctl->ctx);
}

/* The pool as it is now: re-read from the kernel, or the simulation's. */
static int pool_now(struct hugeadm_ctl *ctl, uint64_t size, struct ha_pool_state *mine,
		    struct ha_pool_state **ret)
{
	int rc;

	if (simulated(ctl))
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
	if (!simulated(ctl))
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
	if (simulated(ctl))
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

	ha_format_size(sz, sizeof(sz), size);
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

static bool node_listed(const struct ha_action *a, int node)
{
	for (size_t j = 0; j < a->n_nodes; j++)
		if (a->nodes[j] == node)
			return true;
	return false;
}

/*
 * @NODES: each listed node's own nr_hugepages, relative to that node's
 * persistent pages. The overcommit count is left alone: the pool's Maximum
 * moves with its Minimum.
 */
static int apply_pool_nodes(struct hugeadm_ctl *ctl, const struct ha_action *a, bool *ret_short)
{
	struct ha_pool_state mine = {0}, *st;
	uint64_t *want = NULL, *before = NULL;
	long long deadline = now_s() + HARD_TIMEOUT_S;
	int rc = -1, stalls = 0;
	bool grow = false;
	size_t n;

	if (pool_now(ctl, a->size, &mine, &st) < 0)
		return -1;
	n = st->n_nodes;
	want = calloc(n ? n : 1, sizeof(*want));
	before = calloc(n ? n : 1, sizeof(*before));
	if (!want || !before)
		goto out;
	for (size_t k = 0; k < n; k++) {
		before[k] = st->node_min[k];
		want[k] = node_listed(a, st->ids[k]) ? ha_node_target(a, st, k) : st->node_min[k];
		grow |= want[k] > before[k];
	}
	if (grow)
		ha_check_swap(ctl);
	for (;;) {
		uint64_t got = 0, goal = 0;

		for (size_t k = 0; k < n; k++)
			if (node_listed(a, st->ids[k]) && set_nr(ctl, st, st->ids[k], want[k]) < 0)
				goto out;
		if (pool_now(ctl, a->size, &mine, &st) < 0)
			goto out;
		for (size_t k = 0; k < n; k++) {
			got += st->node_min[k];
			goal += want[k];
		}
		if (!ctl->hard || got >= goal || now_s() >= deadline || stalls >= HARD_STALLS)
			break;
		ha_msg(ctl, HA_INFO, "retrying: %" PRIu64 " of %" PRIu64 " pages on the nodes", got,
		       goal);
		compact(ctl, a);
		sleep(1);
		stalls++;
	}
	for (size_t k = 0; k < n; k++) {
		if (!node_listed(a, st->ids[k]) || st->node_min[k] == want[k])
			continue;
		ha_msg(ctl, HA_WARNING,
		       "failed to set pool minimum to %" PRIu64 " became %" PRIu64 " on node %d",
		       want[k], st->node_min[k], st->ids[k]);
		*ret_short = true;
	}
	if (*ret_short && st->gigantic)
		gigantic_hint(ctl, a->size);
	if (*ret_short && ctl->strict) {
		for (size_t k = 0; k < n; k++)
			if (node_listed(a, st->ids[k]) &&
			    set_nr(ctl, st, st->ids[k], before[k]) < 0)
				goto out;
	}
	rc = 0;
out:
	free(want);
	free(before);
	free(mine.ids);
	free(mine.node_min);
	return rc;
}

static int apply_pool(struct hugeadm_ctl *ctl, const struct ha_action *a, bool *ret_short)
{
	struct ha_pool_state mine = {0}, *st;
	uint64_t min0, oc0, min, max, got, last;
	long long deadline = now_s() + HARD_TIMEOUT_S;
	struct ha_swap *swap = NULL;
	int rc = -1, stalls = 0;

	if (a->nodes)
		return apply_pool_nodes(ctl, a, ret_short);
	if (pool_now(ctl, a->size, &mine, &st) < 0)
		return -1;
	min0 = st->min;
	oc0 = st->oc;
	ha_pool_targets(a, st, &min, &max);
	ha_msg(ctl, HA_INFO, "%" PRIu64 ", %" PRIu64 " -> %" PRIu64 ", %" PRIu64, min0,
	       ha_pool_max(min0, oc0), min, max);
	/* Room to overcommit first, so that growing never fails for lack of it. */
	if (!st->gigantic && ha_pool_max(min, oc0) < max &&
	    set_oc(ctl, st, ha_pool_oc(min, max)) < 0)
		goto out;
	if (min > min0) {
		if ((ctl->temp_swap || ctl->ramdisk_swap) && ha_swap_add(ctl, a->size, &swap) < 0)
			goto out;
		ha_check_swap(ctl);
	}
	if (set_nr(ctl, st, HK_NODE_ALL, min) < 0 || pool_now(ctl, a->size, &mine, &st) < 0)
		goto out;
	got = last = st->min;
	while (ctl->hard && got < min && now_s() < deadline && stalls < HARD_STALLS) {
		ha_msg(ctl, HA_INFO,
		       "Retrying allocation HUGEPAGES_TOTAL to %" PRIu64 " current %" PRIu64, min,
		       got);
		compact(ctl, a);
		sleep(1);
		if (set_nr(ctl, st, HK_NODE_ALL, min) < 0 || pool_now(ctl, a->size, &mine, &st) < 0)
			goto out;
		got = st->min;
		stalls = got > last ? 0 : stalls + 1;
		last = got;
	}
	if (got != min) {
		ha_msg(ctl, HA_WARNING, "failed to set pool minimum to %" PRIu64 " became %" PRIu64,
		       min, got);
		*ret_short = true;
		report_nodes(ctl, st);
		if (st->gigantic)
			gigantic_hint(ctl, a->size);
		if (ctl->strict) {
			/* Put the pool back as it was, then say so. */
			if (set_nr(ctl, st, HK_NODE_ALL, min0) < 0 ||
			    (!st->gigantic && st->oc != oc0 && set_oc(ctl, st, oc0) < 0))
				goto out;
			rc = 0;
			goto out;
		}
		min = got;
	}
	/* The kernel kept the overcommit count; make the Maximum the one asked for. */
	if (!st->gigantic && ha_pool_max(min, st->oc) != max &&
	    set_oc(ctl, st, ha_pool_oc(min, max)) < 0)
		goto out;
	rc = 0;
out:
	if (swap)
		ha_swap_remove(ctl, swap);
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

	if (rc < 0 || !simulated(ctl)) {
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
		sum = bytes > UINT64_MAX - sum ? UINT64_MAX : sum + bytes;
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
	if (ctl->n_actions == 0 || ctl->dry_run)
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
	bool shortfall = false;
	int rc = 0;

	if (ctl->n_actions == 0)
		return HK_EXIT_SUCCESS;
	if (ctl->dry_run)
		hk_set_dry_run(ctl->ctx, dry_line, ctl);
	for (int p = HA_UNMOUNT_ALL; p <= HA_MOUNTS && rc == 0; p++) {
		for (size_t i = 0; i < ctl->n_actions && rc == 0; i++) {
			bool short_now = false;

			if (phase(ctl->actions[i].kind) != p)
				continue;
			rc = apply_one(ctl, &ctl->actions[i], &short_now);
			shortfall |= short_now;
			if (short_now && ctl->strict) {
				ha_msg(ctl, HA_ERROR,
				       "%s: the pool came up short; it was put back (--strict)",
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
