// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm's plan: every change option becomes an action here, its argument
 * parsed at once; ha_plan_validate() then checks the whole list against the
 * machine (sizes, nodes, knobs, values) and resolves each action into
 * libhugekit's plan items (which file, which value, why), in the order they
 * run, before the first one runs. The pools are libhugekit's planner's
 * (ctl->pools, an hk_pool_plan): it decides what a pool option writes and
 * moves the pools as each write leaves them; this file turns its verdicts
 * into hugeadm's messages.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hugeadm.h"

struct ha_action *ha_new_action(struct hugeadm_ctl *ctl, enum ha_kind kind, const char *arg)
{
	struct ha_action *na = realloc(ctl->actions, (ctl->n_actions + 1) * sizeof(*na));

	if (!na) {
		ha_msg(ctl, HA_ERROR, "out of memory");
		exit(HK_EXIT_FAILURE);
	}
	ctl->actions = na;
	na = &ctl->actions[ctl->n_actions++];
	memset(na, 0, sizeof(*na));
	na->kind = kind;
	na->arg = arg;
	return na;
}

void ha_plan_free(struct hugeadm_ctl *ctl)
{
	for (size_t i = 0; i < ctl->n_actions; i++) {
		free(ctl->actions[i].size_str);
		free(ctl->actions[i].adj_str);
		free(ctl->actions[i].nodes);
		free(ctl->actions[i].sub);
		free(ctl->actions[i].owner_label);
	}
	hk_pool_plan_unref(ctl->pools);
	ctl->pools = NULL;
	free(ctl->actions);
	ctl->actions = NULL;
	free(ctl->pn);
	ctl->pn = NULL;
	ctl->n_pn = 0;
	ctl->n_actions = 0;
	hk_plan_unref(ctl->plan);
	ctl->plan = NULL;
}

const char *ha_action_why(const struct ha_action *a, char *buf, size_t sz)
{
	static const struct {
		const char *knob, *opt;
	} thp[] = {
		{"defrag", "--thp-defrag"},
		{"khugepaged/pages_to_scan", "--thp-khugepaged-pages"},
		{"khugepaged/scan_sleep_millisecs", "--thp-khugepaged-scan-sleep"},
		{"khugepaged/alloc_sleep_millisecs", "--thp-khugepaged-alloc-sleep"},
	};
	const char *opt = NULL;

	switch (a->kind) {
	case HA_POOL_MIN:
		opt = "--pool-pages-min";
		break;
	case HA_POOL_MAX:
		opt = "--pool-pages-max";
		break;
	case HA_VMEMMAP:
		opt = "--vmemmap-optimize";
		break;
	case HA_DEMOTE_SIZE:
		opt = "--pool-demote-size";
		break;
	case HA_SHM_GROUP:
		opt = "--set-shm-group";
		break;
	case HA_DEMOTE:
		opt = "--pool-demote";
		break;
	case HA_MOUNTS:
		/* The options without an argument, and those with a user or group. */
		if (!a->sub) {
			snprintf(buf, sz, "%s",
				 strcmp(a->base, HA_MOUNT_DIR) == 0 ? "--create-mounts"
								    : "--create-global-mounts");
			return buf;
		}
		opt = strcmp(a->base, HA_MOUNT_DIR "/user") == 0 ? "--create-user-mounts"
								 : "--create-group-mounts";
		break;
	case HA_THP:
		if (a->size)
			opt = "--thp-size";
		for (size_t i = 0; i < sizeof(thp) / sizeof(thp[0]) && !opt; i++)
			if (strcmp(a->knob, thp[i].knob) == 0)
				opt = thp[i].opt;
		break;
	default:
		break;
	}
	if (opt)
		snprintf(buf, sz, "%s %s", opt, a->arg);
	else
		snprintf(buf, sz, "%s", a->arg); /* the option itself: "--thp-never" */
	return buf;
}

int ha_plan_added(struct hugeadm_ctl *ctl, struct ha_action *a, int rc)
{
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "%s: cannot plan the change: %s", a->arg, strerror(-rc));
		return -1;
	}
	if (a->n_items == 0)
		a->first = (size_t)rc;
	a->n_items++;
	return 0;
}

/*
 * [+|-]AMOUNT: a page count, or a memory amount when suffixed (lib/common's
 * hk_parse_amount: the number may be hex or octal, as libhugetlbfs's
 * strtol(..., 0) took it; unlike libhugetlbfs, trailing text is an error).
 */
static int parse_adjustment(struct ha_action *a, const char *s)
{
	if (*s == '+' || *s == '-')
		a->sign = *s++;
	return hk_parse_amount(s, &a->amount, &a->by_bytes);
}

int ha_plan_pool(struct hugeadm_ctl *ctl, enum ha_kind kind, const char *arg)
{
	struct ha_action *a = ha_new_action(ctl, kind, arg);
	const char *colon = strchr(arg, ':');
	const char *at;
	int rc;

	if (!colon || colon == arg || !colon[1] || colon[1] == '@') {
		a->size_str = strndup(arg, colon ? (size_t)(colon - arg) : strlen(arg));
		ha_msg(ctl, HA_ERROR, "%s: invalid resize specification", a->size_str);
		return -1;
	}
	a->size_str = strndup(arg, (size_t)(colon - arg));
	at = strchr(colon + 1, '@');
	a->adj_str = at ? strndup(colon + 1, (size_t)(at - colon - 1)) : strdup(colon + 1);
	if (!a->size_str || !a->adj_str)
		return -1;
	if (parse_adjustment(a, a->adj_str) < 0) {
		ha_msg(ctl, HA_ERROR, "%s: invalid adjustment", a->adj_str);
		return -1;
	}
	if (!at)
		return 0;
	if (kind == HA_POOL_MAX) {
		ha_msg(ctl, HA_ERROR,
		       "%s: the pool maximum is global (overcommit has no per-node counter): "
		       "--pool-pages-max takes no @NODES",
		       arg);
		return -1;
	}
	rc = hk_nodelist_parse(at + 1, &a->nodes, &a->n_nodes);
	if (rc < 0 || a->n_nodes == 0) {
		ha_msg(ctl, HA_ERROR, "%s: invalid node list", at + 1);
		return -1;
	}
	return 0;
}

int ha_plan_simple(struct hugeadm_ctl *ctl, enum ha_kind kind, const char *knob, const char *value,
		   const char *arg)
{
	struct ha_action *a = ha_new_action(ctl, kind, arg);

	a->knob = knob;
	a->value = value;
	return 0;
}

/* A khugepaged knob: a decimal number from min to UINT32_MAX (the kernel's unsigned int). */
int ha_plan_number(struct hugeadm_ctl *ctl, const char *knob, const char *arg, uint64_t min)
{
	struct ha_action *a = ha_new_action(ctl, HA_THP, arg);
	uint64_t v;

	a->knob = knob;
	a->value = arg;
	if (hk_parse_size(arg, &v) < 0 || strspn(arg, "0123456789") != strlen(arg) || v < min ||
	    v > UINT32_MAX) {
		ha_msg(ctl, HA_ERROR, "%s: invalid value for %s (a number from %" PRIu64 " to %u)",
		       arg, knob, min, UINT32_MAX);
		return -1;
	}
	return 0;
}

/* --thp-size SIZE:MODE, for the per-size (multi-size THP) knobs of Linux 6.8. */
int ha_plan_thp_size(struct hugeadm_ctl *ctl, const char *arg)
{
	struct ha_action *a = ha_new_action(ctl, HA_THP, arg);
	const char *colon = strchr(arg, ':');
	uint64_t size;
	char *s;

	a->size_str = colon ? strndup(arg, (size_t)(colon - arg)) : strdup(arg);
	if (!a->size_str || !colon || !colon[1] || hk_parse_size(a->size_str, &size) < 0 ||
	    size < 1024) {
		ha_msg(ctl, HA_ERROR, "%s: invalid THP size setting (SIZE:MODE, e.g. 64K:always)",
		       arg);
		return -1;
	}
	if (asprintf(&s, "hugepages-%" PRIu64 "kB/enabled", size / 1024) < 0)
		return -1;
	a->adj_str = s; /* owns the knob string */
	a->knob = s;
	a->value = colon + 1;
	a->size = size;
	return 0;
}

int ha_plan_shm_group(struct hugeadm_ctl *ctl, const char *arg)
{
	struct ha_action *a = ha_new_action(ctl, HA_SHM_GROUP, arg);
	const struct group *gr = getgrnam(arg);
	uint64_t gid;

	if (!gr && hk_parse_size(arg, &gid) == 0 && strspn(arg, "0123456789") == strlen(arg) &&
	    gid <= UINT32_MAX)
		gr = getgrgid((gid_t)gid);
	if (!gr) {
		ha_msg(ctl, HA_ERROR, "Invalid group specification (%s)", arg);
		return -1;
	}
	a->u = gr->gr_gid;
	return 0;
}

static int validate_thp(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	char *line = NULL;
	int rc = hk_thp_check(ctl->ctx, a->knob, a->value, &line);

	if (rc == -ENOENT) {
		if (a->size)
			ha_msg(ctl, HA_ERROR, "%s: this kernel has no per-size THP setting for %s",
			       a->arg, a->size_str);
		else
			ha_msg(ctl, HA_ERROR, "this kernel has no transparent_hugepage/%s",
			       a->knob);
		return -1;
	}
	/* A mode must be one the kernel lists in the file itself (libhugekit's rule). */
	if (rc == 1)
		ha_msg(ctl, HA_ERROR, "%s: not a mode of transparent_hugepage/%s (%s)", a->value,
		       a->knob, line);
	else if (rc < 0)
		ha_msg(ctl, HA_ERROR, "transparent_hugepage/%s: %s", a->knob, strerror(-rc));
	free(line);
	return rc != 0 ? -1 : 0;
}

int ha_resolve_size(struct hugeadm_ctl *ctl, struct ha_action *a, bool legacy)
{
	uint64_t size;
	int rc;

	if (strcmp(a->size_str, "DEFAULT") == 0)
		rc = hk_default_page_size(ctl->ctx, &size);
	else if (legacy)
		rc = hk_parse_size_legacy(a->size_str, &size);
	else
		rc = hk_parse_size(a->size_str, &size);
	if (rc == 0)
		rc = ha_pools_load(ctl, size);
	if (rc == 0) {
		a->size = size;
		return 0;
	}
	/* A size the kernel has no pool for, or a pool that cannot be read (EIO, EACCES). */
	if (rc == -ENOENT || rc == -EINVAL || rc == -ERANGE)
		ha_msg(ctl, HA_ERROR, "%s: unknown page size", a->size_str);
	else
		ha_msg(ctl, HA_ERROR, "%s: cannot read the pool: %s", a->size_str, strerror(-rc));
	return -1;
}

int ha_pools_load(struct hugeadm_ctl *ctl, uint64_t size)
{
	int rc = ctl->pools ? 0 : hk_pool_plan_new(ctl->ctx, &ctl->pools);

	return rc < 0 ? rc : hk_pool_plan_load(ctl->pools, size);
}

uint64_t ha_action_pages(const struct ha_action *a, uint64_t size)
{
	return a->by_bytes ? a->amount / size : a->amount;
}

/* The change a pool option asks libhugekit's planner for. */
static struct hk_pool_change pool_change(const struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	return (struct hk_pool_change){
		.size = sizeof(struct hk_pool_change),
		.page_size = a->size,
		.field = a->kind == HA_POOL_MIN ? HK_POOL_MINIMUM : HK_POOL_MAXIMUM,
		.sign = a->sign,
		.pages = ha_action_pages(a, a->size),
		.nodes = a->nodes,
		.n_nodes = a->n_nodes,
		.flags = ctl->obey_mempolicy && !a->nodes ? HK_POOL_SET_MEMPOLICY : 0,
	};
}

/*
 * The planner's verdict as hugeadm says it. A memory amount that truncates
 * to no page is an error, unless it is 0; a count beyond MemTotal is an
 * error for a Minimum and for any decrease, a warning for a Maximum set or
 * raised (only a limit, which the kernel takes).
 */
static int judge_pool(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	struct hk_pool_change ch = pool_change(ctl, a);
	struct hk_pool_verdict v = {.size = sizeof(v)};
	int rc = hk_pool_change_check(ctl->pools, &ch, &v);
	char sz[32];

	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "%s: cannot plan the change: %s", a->arg, strerror(-rc));
		return -1;
	}
	hk_format_size(sz, sizeof(sz), a->size);
	if (v.problem == HK_POOL_CHANGE_NO_NODE) {
		ha_msg(ctl, HA_ERROR, "%s: node %d has no %s pool (no such NUMA node)", a->arg,
		       v.node, sz);
		return -1;
	}
	if (a->by_bytes && a->amount && !ch.pages) {
		ha_msg(ctl, HA_ERROR, "%s: %s is less than one %s page", a->arg, a->adj_str, sz);
		return -1;
	}
	if (v.limit_beyond_memory)
		ha_msg(ctl, HA_WARNING,
		       "%s: %" PRIu64 " pages of %s are more than the memory holds "
		       "(MemTotal %" PRIu64 " kB, %" PRIu64 " pages): the Maximum is only a limit",
		       a->arg, ch.pages, sz, v.mem_kb, v.mem_pages);
	switch (v.problem) {
	case HK_POOL_CHANGE_BEYOND_MEMORY:
		ha_msg(ctl, HA_ERROR,
		       "%s: %" PRIu64
		       " pages of %s are more than the memory holds (MemTotal %" PRIu64
		       " kB, %" PRIu64 " pages)",
		       a->arg, ch.pages, sz, v.mem_kb, v.mem_pages);
		return -1;
	case HK_POOL_CHANGE_MINIMUM_BEYOND_MEMORY:
		ha_msg(ctl, HA_ERROR,
		       "%s: a Minimum of %" PRIu64 " pages of %s is more than the memory holds "
		       "(MemTotal %" PRIu64 " kB, %" PRIu64 " pages)",
		       a->arg, v.minimum, sz, v.mem_kb, v.mem_pages);
		return -1;
	case HK_POOL_CHANGE_GIGANTIC:
		ha_msg(ctl, HA_ERROR,
		       "%s: %s pages are gigantic: the kernel cannot overcommit them, so their "
		       "maximum is their minimum. Use --pool-pages-min, or reserve them at boot "
		       "(hugepagesz=%s hugepages=N)",
		       a->arg, sz, sz);
		return -1;
	default:
		return 0;
	}
}

/* The change as libhugekit's planner resolves it, from the pools the plan leaves so far. */
static int resolve_pool(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	struct hk_pool_change ch = pool_change(ctl, a);
	char why[256];
	size_t n = 0;
	int rc = hk_plan_add_pool_change(ctl->plan, ctl->pools, &ch,
					 ha_action_why(a, why, sizeof(why)), &n);

	if (rc < 0)
		return ha_plan_added(ctl, a, rc);
	a->first = (size_t)rc;
	a->n_items = n;
	return 0;
}

bool ha_pool_planned(const struct hugeadm_ctl *ctl, const struct ha_action *a,
		     struct hk_pool_change_plan *ret)
{
	*ret = (struct hk_pool_change_plan){.size = sizeof(*ret)};
	return a->n_items && hk_plan_pool_change(ctl->plan, a->first, ret) == 0;
}

bool ha_pool_grows(const struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	struct hk_pool_change_plan cp;

	return ha_pool_planned(ctl, a, &cp) && cp.grows;
}

static int validate_pool(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	if (ha_resolve_size(ctl, a, true) < 0)
		return -1;
	if (a->nodes && ctl->obey_mempolicy) {
		ha_msg(ctl, HA_ERROR,
		       "%s: --obey-mempolicy and @NODES both choose the nodes: use one", a->arg);
		return -1;
	}
	if (judge_pool(ctl, a) < 0)
		return -1;
	return resolve_pool(ctl, a);
}

/*
 * --set-recommended-shmmax: the recommendation from the pools as the plan
 * leaves them in a->u, the current value in a->amount, and the item when
 * there is one to write (none when no pool has pages or shmmax is above:
 * never lowered). libhugekit computes it again from the pools the writes
 * leave when the plan runs.
 */
static int resolve_shmmax(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	struct hk_shmmax_plan sp = {.size = sizeof(sp)};
	char why[256];
	int rc = ctl->pools ? 0 : hk_pool_plan_new(ctl->ctx, &ctl->pools);

	if (rc == 0)
		rc = hk_plan_add_recommended_shmmax(ctl->ctx, ctl->plan, ctl->pools,
						    ha_action_why(a, why, sizeof(why)), &sp);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot compute the recommended shmmax: %s", strerror(-rc));
		return -1;
	}
	a->u = sp.recommended;
	a->amount = sp.current;
	a->first = sp.index;
	a->n_items = sp.added;
	return 0;
}

/* The sysctl settings: their values computed now, from the plan's pools where they depend on them. */
static int resolve_sysctl(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	enum hk_sysctl which;
	uint64_t v, cur;
	char why[256];
	int rc;

	ha_action_why(a, why, sizeof(why));
	switch (a->kind) {
	case HA_ZONE_MOVABLE:
		which = HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE;
		/* Removed from Linux: nothing to write (apply says so). */
		if (hk_sysctl_read(ctl->ctx, which, &cur) == -ENOENT)
			return 0;
		v = a->u;
		break;
	case HA_MIN_FREE_KBYTES:
		which = HK_SYSCTL_MIN_FREE_KBYTES;
		rc = hk_recommended_min_free_kbytes(ctl->ctx, &v);
		if (rc < 0) {
			ha_msg(ctl, HA_ERROR, "cannot compute the recommended min_free_kbytes: %s",
			       strerror(-rc));
			return -1;
		}
		break;
	case HA_SHMMAX:
		return resolve_shmmax(ctl, a);
	case HA_SHM_GROUP:
		which = HK_SYSCTL_HUGETLB_SHM_GROUP;
		v = a->u;
		break;
	default:
		return -1;
	}
	return ha_plan_added(ctl, a, hk_plan_add_sysctl(ctl->ctx, ctl->plan, which, v, why));
}

static int validate_one(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	bool alive = hk_is_live(ctl->ctx);
	char why[256];

	switch (a->kind) {
	case HA_POOL_MIN:
	case HA_POOL_MAX:
		return validate_pool(ctl, a);
	case HA_VMEMMAP:
	case HA_DEMOTE_SIZE:
	case HA_DEMOTE:
		return ha_validate_kernel(ctl, a);
	case HA_THP:
		if (validate_thp(ctl, a) < 0)
			return -1;
		return ha_plan_added(ctl, a,
				     hk_plan_add_thp(ctl->ctx, ctl->plan, a->knob, a->value,
						     ha_action_why(a, why, sizeof(why))));
	case HA_MOUNTS:
		return ha_validate_mounts(ctl, a);
	case HA_CLEAN_TEXT:
		/* The files are on the running system's mounts, never in a tree. */
		if (!alive) {
			ha_msg(ctl, HA_ERROR,
			       "--clean-shared-text is not supported with --sysroot");
			return -1;
		}
		return 0;
	case HA_UNMOUNT_ALL:
		if (!alive && !ctl->dry_run) {
			ha_msg(ctl, HA_ERROR, "--unmount-all is not supported with --sysroot");
			return -1;
		}
		return 0;
	case HA_ZONE_MOVABLE:
	case HA_MIN_FREE_KBYTES:
	case HA_SHMMAX:
	case HA_SHM_GROUP:
		return resolve_sysctl(ctl, a);
	}
	return -1;
}

/*
 * When an action runs: the place libhugekit gives what it sets (enum
 * hk_setting, the order of every plan); the operations that are not plan
 * items (shared text, unmount) before all of them.
 */
static int phase(enum ha_kind kind)
{
	static const int setting[] = {
		[HA_CLEAN_TEXT] = -2,
		[HA_UNMOUNT_ALL] = -1,
		[HA_ZONE_MOVABLE] = HK_SETTING_ZONE_MOVABLE,
		[HA_THP] = HK_SETTING_THP,
		[HA_VMEMMAP] = HK_SETTING_HVO,
		[HA_POOL_MIN] = HK_SETTING_POOL,
		[HA_POOL_MAX] = HK_SETTING_POOL,
		[HA_DEMOTE_SIZE] = HK_SETTING_DEMOTE_SIZE,
		[HA_DEMOTE] = HK_SETTING_DEMOTE,
		[HA_MIN_FREE_KBYTES] = HK_SETTING_MIN_FREE_KBYTES,
		[HA_SHMMAX] = HK_SETTING_SHMMAX,
		[HA_SHM_GROUP] = HK_SETTING_SHM_GROUP,
		[HA_MOUNTS] = HK_SETTING_MOUNT,
	};

	return setting[kind];
}

/*
 * The actions in the order they run, once, before they are validated: by
 * phase, and within one in command-line order (a stable insertion sort).
 * Validation, the plan, the dry run and the run all go through them in it.
 */
static void order_actions(struct hugeadm_ctl *ctl)
{
	for (size_t i = 1; i < ctl->n_actions; i++) {
		struct ha_action a = ctl->actions[i];
		size_t j = i;

		for (; j > 0 && phase(ctl->actions[j - 1].kind) > phase(a.kind); j--)
			ctl->actions[j] = ctl->actions[j - 1];
		ctl->actions[j] = a;
	}
}

int ha_plan_validate(struct hugeadm_ctl *ctl)
{
	int rc;

	if (ha_swap_validate(ctl) < 0)
		return -1;
	rc = hk_plan_new(&ctl->plan);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot plan the changes: %s", strerror(-rc));
		return -1;
	}
	/* In the order they run: each sees the pools as the ones before leave them. */
	order_actions(ctl);
	for (size_t i = 0; i < ctl->n_actions; i++)
		if (validate_one(ctl, &ctl->actions[i]) < 0)
			return -1;
	return 0;
}

int ha_plan_json(struct hugeadm_ctl *ctl)
{
	const struct hk_plan_item *items;
	struct hkt_json j;
	char why[256];

	ha_plan_notes(ctl);
	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	hkt_json_bool(&j, "dry_run", true);
	hkt_json_open_array(&j, "plan");
	for (size_t i = 0, n = hk_plan_items(ctl->plan, &items); i < n; i++)
		ha_json_plan_item(&j, &items[i]);
	hkt_json_close_array(&j);
	hkt_json_open_array(&j, "operations");
	for (size_t i = 0; i < ctl->n_actions; i++)
		if (ctl->actions[i].kind == HA_UNMOUNT_ALL || ctl->actions[i].kind == HA_CLEAN_TEXT)
			hkt_json_string(&j, NULL,
					ha_action_why(&ctl->actions[i], why, sizeof(why)));
	/* The swap a pool that grows gets (dd, mkswap, swapon; swapoff and rm unless --persist). */
	for (size_t i = 0; i < ctl->n_actions && (ctl->temp_swap || ctl->ramdisk_swap); i++) {
		char opt[64];

		if (ctl->actions[i].kind != HA_POOL_MIN && ctl->actions[i].kind != HA_POOL_MAX)
			continue;
		if (!ha_pool_grows(ctl, &ctl->actions[i]) || ctl->actions[i].nodes)
			continue;
		if (ctl->temp_swap)
			snprintf(opt, sizeof(opt), "--add-temp-swap=%d%s", ctl->temp_swap,
				 ctl->persist ? " --persist" : "");
		else
			snprintf(opt, sizeof(opt), "--add-ramdisk-swap%s",
				 ctl->persist ? " --persist" : "");
		hkt_json_string(&j, NULL, opt);
		break;
	}
	hkt_json_close_array(&j);
	hkt_json_close_object(&j);
	hkt_json_end(&j);
	return HK_EXIT_SUCCESS;
}
