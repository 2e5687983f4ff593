// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm's change options as actions: every one becomes an action here,
 * its argument parsed at once; ha_plan_validate() then hands the whole list to
 * libhugekit as one intent (hk_plan_from_intent), which orders it, judges
 * each entry against the machine and the pools as the entries before it
 * leave them, and resolves it into plan items (which file, which value,
 * why) before the first one runs; verdict.c words what it is told.
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
	case HA_CLEAN_TEXT:
		/* One user's: its own unit, apart from another --clean-shared-text. */
		if (a->sub) {
			snprintf(buf, sz, "%s=%s", a->arg, a->sub);
			return buf;
		}
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

int ha_pools_load(struct hugeadm_ctl *ctl, uint64_t size)
{
	int rc = ctl->pools ? 0 : hk_pool_plan_new(ctl->ctx, &ctl->pools);

	return rc < 0 ? rc : hk_pool_plan_load(ctl->pools, size);
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

/* What an action asks of libhugekit's intent. */
static enum hk_setting setting_of(enum ha_kind kind)
{
	static const enum hk_setting setting[] = {
		[HA_CLEAN_TEXT] = HK_SETTING_SHARED_TEXT,
		[HA_UNMOUNT_ALL] = HK_SETTING_UNMOUNT,
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

/* The option as an entry of the intent: what it sets, nothing resolved. */
static struct hk_intent_entry entry_of(const struct hugeadm_ctl *ctl, const struct ha_action *a,
				       char *why, size_t sz)
{
	bool pool = a->kind == HA_POOL_MIN || a->kind == HA_POOL_MAX;
	struct hk_intent_entry e = {
		.size = sizeof(e),
		.setting = setting_of(a->kind),
		.number = a->u,
		.knob = a->knob,
		.value = a->value,
		.why = ha_action_why(a, why, sz),
	};

	if (pool || a->kind == HA_DEMOTE || a->kind == HA_DEMOTE_SIZE)
		e.page_size = a->size_str;
	if (pool || a->kind == HA_DEMOTE) {
		e.number = a->amount;
		e.nodes = a->nodes;
		e.n_nodes = a->n_nodes;
	}
	if (a->kind == HA_MOUNTS) {
		e.base = a->base;
		e.sub = a->sub;
		e.uid = (uint32_t)a->uid;
		e.gid = (uint32_t)a->gid;
		e.mode = (uint32_t)a->mode;
		e.max_size = ctl->max_size;
		e.min_size = ctl->min_size;
		e.max_inodes = ctl->max_inodes > 0 ? (uint64_t)ctl->max_inodes : 0;
	}
	if (a->kind == HA_UNMOUNT_ALL)
		e.base = HA_MOUNT_DIR;
	if (a->kind == HA_CLEAN_TEXT) {
		e.uid = (uint32_t)a->uid;
		e.flags = a->sub ? HK_INTENT_ONE_UID : 0;
	}
	if (a->kind == HA_MOUNTS || a->kind == HA_UNMOUNT_ALL)
		e.flags = ctl->dry_run ? HK_INTENT_SHOW_ONLY : 0;
	if (pool) {
		e.field = a->kind == HA_POOL_MIN ? HK_POOL_MINIMUM : HK_POOL_MAXIMUM;
		e.sign = a->sign;
		e.flags = HK_INTENT_LEGACY_SIZE | (a->by_bytes ? HK_INTENT_BYTES : 0) |
			  (ctl->obey_mempolicy ? HK_INTENT_MEMPOLICY : 0);
	}
	return e;
}

/* The actions as the plan runs them: the intent's entries in the order libhugekit planned them. */
struct planning {
	struct hugeadm_ctl *ctl;
	size_t *of_entry; /* entry -> action */
	bool *told;	  /* entry: a verdict came (a mount entry has one per mount) */
	size_t *order;	  /* actions, in the order they run */
	size_t n_order;
};

static void run_in_order(struct planning *p, size_t action)
{
	p->order[p->n_order++] = action;
}

/* libhugekit's verdict on an entry: the action planned (warnings said), or why not said. */
static int verdict(void *data, const struct hk_intent_verdict *v)
{
	struct planning *p = data;
	struct ha_action *a = &p->ctl->actions[p->of_entry[v->entry]];

	if (v->page_size)
		a->size = v->page_size;
	if (ha_say_verdict(p->ctl, a, v) < 0)
		return -1;
	if (!p->told[v->entry]) {
		p->told[v->entry] = true;
		a->first = v->first;
		run_in_order(p, p->of_entry[v->entry]);
	}
	a->n_items += v->n;
	if (a->kind == HA_SHMMAX) {
		a->u = v->shmmax.recommended;
		a->amount = v->shmmax.current;
	}
	return 0;
}

/* The change options as one intent, planned by libhugekit into ctl->plan: 0, or -1 said. */
static int plan_intent(struct hugeadm_ctl *ctl, struct planning *p)
{
	struct hk_intent *in = NULL;
	size_t n = 0;
	int rc = hk_intent_new(ctl->ctx, &in);

	if (rc == 0 && !ctl->pools)
		rc = hk_pool_plan_new(ctl->ctx, &ctl->pools);
	for (size_t i = 0; rc >= 0 && i < ctl->n_actions; i++) {
		char why[256];
		struct hk_intent_entry e;

		e = entry_of(ctl, &ctl->actions[i], why, sizeof(why));
		rc = hk_intent_add(in, &e);
		if (rc >= 0)
			p->of_entry[n++] = i;
	}
	if (rc >= 0)
		rc = hk_plan_from_intent(in, ctl->plan, ctl->pools, verdict, p);
	hk_intent_unref(in);
	if (rc < -1)
		ha_msg(ctl, HA_ERROR, "cannot plan the changes: %s", strerror(-rc));
	return rc == 0 ? 0 : -1;
}

/* The actions in the order they run, from now on: the plan, the dry run and the run. */
static int reorder(struct hugeadm_ctl *ctl, const struct planning *p)
{
	struct ha_action *na = malloc((p->n_order ? p->n_order : 1) * sizeof(*na));

	if (!na) {
		ha_msg(ctl, HA_ERROR, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < p->n_order; i++)
		na[i] = ctl->actions[p->order[i]];
	free(ctl->actions);
	ctl->actions = na;
	return 0;
}

int ha_plan_validate(struct hugeadm_ctl *ctl)
{
	size_t n = ctl->n_actions ? ctl->n_actions : 1;
	struct planning p = {.ctl = ctl};
	int rc = 0;

	if (ha_swap_validate(ctl) < 0)
		return -1;
	p.of_entry = calloc(n, sizeof(*p.of_entry));
	p.told = calloc(n, sizeof(*p.told));
	p.order = calloc(n, sizeof(*p.order));
	if (!p.of_entry || !p.told || !p.order || hk_plan_new(&ctl->plan) < 0) {
		ha_msg(ctl, HA_ERROR, "cannot plan the changes: %s", strerror(ENOMEM));
		rc = -1;
	}
	if (rc == 0)
		rc = plan_intent(ctl, &p);
	/* Whole or not at all: n_order is n_actions here. */
	if (rc == 0)
		rc = reorder(ctl, &p);
	free(p.of_entry);
	free(p.told);
	free(p.order);
	return rc;
}

int ha_plan_json(struct hugeadm_ctl *ctl)
{
	struct hkt_json j;

	ha_plan_notes(ctl);
	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	hkt_json_bool(&j, "dry_run", true);
	hkt_json_open_array(&j, "plan");
	for (size_t i = 0, n = hk_plan_items(ctl->plan, NULL); i < n; i++)
		ha_json_plan_item(&j, hk_plan_item_at(ctl->plan, i));
	hkt_json_close_array(&j);
	hkt_json_open_array(&j, "operations");
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
