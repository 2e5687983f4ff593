// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libhugekit's verdicts on the change options, as hugeadm says them: the
 * library plans the options' intent (hk_plan_from_intent) and judges each
 * entry against the machine; this file only words what it is told, in
 * 2.23's words where 2.23 had them.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "hugeadm.h"

/* What could not be read for the entry's judgement. */
static void say_unread(struct hugeadm_ctl *ctl, const struct ha_action *a,
		       const struct hk_intent_verdict *v)
{
	const char *err = strerror(-v->error);

	if (a->size_str && a->kind != HA_THP &&
	    (!v->page_size || (a->kind != HA_DEMOTE && a->kind != HA_DEMOTE_SIZE)))
		ha_msg(ctl, HA_ERROR, "%s: cannot read the pool: %s", a->size_str, err);
	else if (a->kind == HA_DEMOTE || a->kind == HA_DEMOTE_SIZE)
		ha_msg(ctl, HA_ERROR, "%s: cannot read the pool: %s", a->arg, err);
	else if (a->kind == HA_THP)
		ha_msg(ctl, HA_ERROR, "transparent_hugepage/%s: %s", a->knob, err);
	else if (a->kind == HA_VMEMMAP)
		ha_msg(ctl, HA_ERROR, "%s: %s", hk_sysctl_path(HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP),
		       err);
	else if (v->target) /* a sysctl's own file */
		ha_msg(ctl, HA_ERROR, "cannot read %s: %s", v->target, err);
	else
		ha_msg(ctl, HA_ERROR, "cannot compute the recommended %s: %s",
		       a->kind == HA_SHMMAX ? "shmmax" : "min_free_kbytes", err);
}

/* A file the kernel lacks: a THP knob, HVO's sysctl. */
static void say_no_kernel(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	if (a->kind == HA_VMEMMAP)
		ha_msg(ctl, HA_ERROR,
		       "--vmemmap-optimize: the kernel has no %s (Linux 5.19 or later, "
		       "built with CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP)",
		       hk_sysctl_path(HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP));
	else if (a->size)
		ha_msg(ctl, HA_ERROR, "%s: this kernel has no per-size THP setting for %s", a->arg,
		       a->size_str);
	else if (a->knob)
		ha_msg(ctl, HA_ERROR, "this kernel has no transparent_hugepage/%s", a->knob);
	else /* a sysctl: shmmax, min_free_kbytes, the shm group */
		ha_msg(ctl, HA_ERROR, "the kernel has no %s",
		       hk_sysctl_path(a->kind == HA_SHMMAX ? HK_SYSCTL_SHMMAX
				      : a->kind == HA_MIN_FREE_KBYTES
					      ? HK_SYSCTL_MIN_FREE_KBYTES
					      : HK_SYSCTL_HUGETLB_SHM_GROUP));
}

/*
 * A pool change that does not fit. A count beyond MemTotal is an error for
 * a Minimum and for any decrease, a warning for a Maximum set or raised
 * (only a limit, which the kernel takes): said before, with any verdict.
 */
static void say_pool(struct hugeadm_ctl *ctl, const struct ha_action *a,
		     const struct hk_intent_verdict *v, const char *sz)
{
	const struct hk_pool_verdict *pv = &v->pool;

	switch (pv->problem) {
	case HK_POOL_CHANGE_BEYOND_MEMORY:
		ha_msg(ctl, HA_ERROR,
		       "%s: %" PRIu64
		       " pages of %s are more than the memory holds (MemTotal %" PRIu64
		       " kB, %" PRIu64 " pages)",
		       a->arg, v->pages, sz, pv->mem_kb, pv->mem_pages);
		break;
	case HK_POOL_CHANGE_MINIMUM_BEYOND_MEMORY:
		ha_msg(ctl, HA_ERROR,
		       "%s: a Minimum of %" PRIu64 " pages of %s is more than the memory holds "
		       "(MemTotal %" PRIu64 " kB, %" PRIu64 " pages)",
		       a->arg, pv->minimum, sz, pv->mem_kb, pv->mem_pages);
		break;
	case HK_POOL_CHANGE_GIGANTIC:
		ha_msg(ctl, HA_ERROR,
		       "%s: %s pages are gigantic: the kernel cannot overcommit them, so their "
		       "maximum is their minimum. Use --pool-pages-min, or reserve them at boot "
		       "(hugepagesz=%s hugepages=N)",
		       a->arg, sz, sz);
		break;
	default:
		break;
	}
}

/* A demote, or a demote's size, the pool cannot have. */
static void say_demote(struct hugeadm_ctl *ctl, const struct ha_action *a,
		       const struct hk_demote_verdict *d, const char *sz)
{
	char to[32];

	switch (d->problem) {
	case HK_DEMOTE_NO_KERNEL:
		ha_msg(ctl, HA_ERROR, "%s: the kernel has no demote (Linux 5.16 or later)", a->arg);
		break;
	case HK_DEMOTE_NO_SMALLER:
		ha_msg(ctl, HA_ERROR, "%s: %s pages cannot be demoted: no smaller huge page size",
		       a->arg, sz);
		break;
	case HK_DEMOTE_NOT_SMALLER:
		hk_format_size(to, sizeof(to), a->u);
		ha_msg(ctl, HA_ERROR, "%s: %s is not a huge page size smaller than %s", a->arg, to,
		       sz);
		break;
	case HK_DEMOTE_NO_NODE:
		ha_msg(ctl, HA_ERROR, "%s: node %d has no %s pool (no such NUMA node)", a->arg,
		       d->node, sz);
		break;
	case HK_DEMOTE_NO_NODE_FILE:
		ha_msg(ctl, HA_ERROR, "%s: node %d has no demote file: %s", a->arg, d->node,
		       strerror(-d->error));
		break;
	case HK_DEMOTE_NOT_FREE:
		if (d->node == HK_NODE_ALL)
			ha_msg(ctl, HA_ERROR,
			       "%s: %" PRIu64 " pages to demote, but the %s pool has %" PRIu64
			       " free",
			       a->arg, a->amount, sz, d->free);
		else
			ha_msg(ctl, HA_ERROR,
			       "%s: %" PRIu64 " pages to demote on node %d, but it has %" PRIu64
			       " free %s pages",
			       a->arg, a->amount, d->node, d->free, sz);
		break;
	case HK_DEMOTE_FITS:
		break;
	}
}

/* A mount's limits against the pool, and a mount there already: 2.23 had none of these. */
static void say_mount(struct hugeadm_ctl *ctl, const struct hk_intent_verdict *v, const char *sz)
{
	switch (v->problem) {
	case HK_INTENT_NOT_LIVE:
		ha_msg(ctl, HA_ERROR,
		       "mounts cannot be created with --sysroot (--dry-run can plan them)");
		break;
	case HK_INTENT_MOUNTED_OTHERWISE:
		ha_msg(ctl, HA_ERROR,
		       "%s is already mounted with other options (%s): left as it is; "
		       "unmount it first (hugeadm --unmount-all)",
		       v->target, v->options);
		break;
	case HK_INTENT_MIN_OVER_MAX:
		ha_msg(ctl, HA_ERROR,
		       "--min-size %" PRIu64 " is more than --max-size %" PRIu64
		       " for the %s mount (%" PRIu64 " pages against %" PRIu64 ")",
		       ctl->min_size, ctl->max_size, sz, v->min_pages, v->max_pages);
		break;
	case HK_INTENT_MIN_OVER_POOL:
		ha_msg(ctl, HA_ERROR,
		       "--min-size %" PRIu64 " reserves more than the %s pool can hold (%" PRIu64
		       " pages)",
		       ctl->min_size, sz, v->pool_maximum);
		break;
	case HK_INTENT_UNREAD:
		/* The mount's directories and pool: said by libhugekit. */
		if (!v->target)
			ha_msg(ctl, HA_ERROR, "cannot read the page sizes or mounts: %s",
			       strerror(-v->error));
		break;
	default:
		break;
	}
}

/* A mount's warnings: planned all the same. */
static void warn_mount(struct hugeadm_ctl *ctl, const struct hk_intent_verdict *v, const char *sz)
{
	if (v->warnings & HK_INTENT_MAX_OVER_POOL)
		ha_msg(ctl, HA_WARNING,
		       "--max-size %" PRIu64 " is more than the %s pool holds now (%" PRIu64
		       " pages): the mount is limited to %" PRIu64 " pages all the same",
		       ctl->max_size, sz, v->pool_maximum, v->max_pages);
	if (v->warnings & HK_INTENT_MAX_NO_PAGE)
		ha_msg(ctl, HA_WARNING,
		       "the %s mount can hold no page: --max-size %" PRIu64
		       " is less than one %s page",
		       sz, ctl->max_size, sz);
}

/* --clean-shared-text's: the files are the running system's; a walk that failed. */
static int say_clean(struct hugeadm_ctl *ctl, const struct hk_intent_verdict *v)
{
	if (v->problem == HK_INTENT_NOT_LIVE)
		ha_msg(ctl, HA_ERROR, "--clean-shared-text is not supported with --sysroot");
	else if (v->problem == HK_INTENT_UNREAD)
		ha_msg(ctl, HA_ERROR, "cannot read the files of shared text: %s",
		       strerror(-v->error));
	else if (v->problem == HK_INTENT_UNPLANNED)
		ha_msg(ctl, HA_ERROR, "--clean-shared-text: cannot plan the change: %s",
		       strerror(-v->error));
	return v->problem == HK_INTENT_PLANNED ? 0 : -1;
}

/* --unmount-all's: the mounts under hugeadm's directory that are not its own, left mounted. */
static int say_unmount(struct hugeadm_ctl *ctl, const struct hk_intent_verdict *v)
{
	if (v->warnings & HK_INTENT_NOT_OURS)
		ha_msg(ctl, HA_WARNING, "%s is not one of hugeadm's mounts: left mounted",
		       v->target);
	if (v->problem == HK_INTENT_NOT_LIVE)
		ha_msg(ctl, HA_ERROR, "--unmount-all is not supported with --sysroot");
	else if (v->problem == HK_INTENT_UNREAD)
		ha_msg(ctl, HA_ERROR, "cannot read the mount table: %s", strerror(-v->error));
	else if (v->problem == HK_INTENT_UNPLANNED)
		ha_msg(ctl, HA_ERROR, "%s: cannot plan the change: %s", v->target,
		       strerror(-v->error));
	return v->problem == HK_INTENT_PLANNED ? 0 : -1;
}

int ha_say_verdict(struct hugeadm_ctl *ctl, const struct ha_action *a,
		   const struct hk_intent_verdict *v)
{
	char sz[32];

	hk_format_size(sz, sizeof(sz), v->page_size);
	if (a->kind == HA_UNMOUNT_ALL)
		return say_unmount(ctl, v);
	if (a->kind == HA_CLEAN_TEXT)
		return say_clean(ctl, v);
	if (a->kind == HA_MOUNTS) {
		warn_mount(ctl, v, sz);
		if (v->problem == HK_INTENT_PLANNED)
			return 0;
		if (v->problem != HK_INTENT_UNPLANNED) {
			say_mount(ctl, v, sz);
			return -1;
		}
	}
	if (v->pool.limit_beyond_memory &&
	    (v->problem == HK_INTENT_PLANNED || v->problem == HK_INTENT_POOL))
		ha_msg(ctl, HA_WARNING,
		       "%s: %" PRIu64 " pages of %s are more than the memory holds "
		       "(MemTotal %" PRIu64 " kB, %" PRIu64 " pages): the Maximum is only a limit",
		       a->arg, v->pages, sz, v->pool.mem_kb, v->pool.mem_pages);
	switch (v->problem) {
	case HK_INTENT_PLANNED:
		return 0;
	case HK_INTENT_UNKNOWN_SIZE:
		ha_msg(ctl, HA_ERROR, "%s: unknown page size", a->size_str);
		break;
	case HK_INTENT_UNREAD:
		say_unread(ctl, a, v);
		break;
	case HK_INTENT_NODES_AND_MEMPOLICY:
		ha_msg(ctl, HA_ERROR,
		       "%s: --obey-mempolicy and @NODES both choose the nodes: use one", a->arg);
		break;
	case HK_INTENT_POOL_NO_NODE:
		ha_msg(ctl, HA_ERROR, "%s: node %d has no %s pool (no such NUMA node)", a->arg,
		       v->pool.node, sz);
		break;
	case HK_INTENT_LESS_THAN_A_PAGE:
		ha_msg(ctl, HA_ERROR, "%s: %s is less than one %s page", a->arg, a->adj_str, sz);
		break;
	case HK_INTENT_POOL:
		say_pool(ctl, a, v, sz);
		break;
	case HK_INTENT_DEMOTE:
		say_demote(ctl, a, &v->demote, sz);
		break;
	case HK_INTENT_NO_KERNEL:
		say_no_kernel(ctl, a);
		break;
	case HK_INTENT_NOT_A_MODE:
		ha_msg(ctl, HA_ERROR, "%s: not a mode of transparent_hugepage/%s (%s)", a->value,
		       a->knob, v->line ? v->line : "");
		break;
	case HK_INTENT_UNPLANNED:
		ha_msg(ctl, HA_ERROR, "%s: cannot plan the change: %s", a->arg,
		       strerror(-v->error));
		break;
	default:
		say_mount(ctl, v, sz);
		break;
	}
	return -1;
}
