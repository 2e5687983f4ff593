// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The plan: a configuration resolved against this machine into the writes
 * that make the machine match it, in the order they are applied (enum
 * phase: the order of hugeadm's options). Each item knows the file it writes, the
 * value, and the setting it comes from; hk_plan_item_check() compares it with
 * the machine and hk_plan_item_apply() writes it and reads it back.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "paths.h"
#include "poolmath.h"
#include "usage.h"

/*
 * The order items are applied in, the order hugeadm's options run in: THP,
 * HVO (it acts on the pages allocated after it), the pools,
 * the other sysctls (min_free_kbytes, shmmax, the shm group), mounts, cgroups.
 */
/* The items are kept per setting (enum hk_setting: the order of every plan) until the end. */
#define PH_N (HK_SETTING_CGROUP + 1)

struct hk_plan {
	struct hk_plan_item *items;
	size_t n;
	/* The pool changes that added items (poolplan.c). */
	struct hkl_pool_group *groups;
	size_t n_groups;
	/* The recommended shmmax planned (poolplan.c), with or without an item. */
	struct hkl_shmmax_mark *marks;
	size_t n_marks;
	/* The base of each mount item that has one (hk_plan_add_mount). */
	struct mount_base {
		size_t index;
		char *base;
	} * bases;
	size_t n_bases;
};

/* What the build keeps while it resolves a configuration. */
struct build {
	struct hk_ctx *ctx;
	const struct hk_config *cfg; /* its hidden files: their values are not quoted */
	hk_config_error_fn fn;
	void *data;
	unsigned errors;
	int rc; /* the first system error (-errno); errors count the rest */
	struct hk_plan_item *ph[PH_N];
	size_t n_ph[PH_N];
	uint64_t *sizes;
	size_t n_sizes;
	/*
	 * The pools as the plan leaves them, the options' planner's: each
	 * [pool] planned by it (demoting pools first: the pages they demote
	 * join the smaller pool), "recommended" shmmax summed from it.
	 */
	struct hk_pool_plan *held;
	/* Per machine size: the [pool] section planned for it (one per pool, however spelled). */
	const struct hk_config_entry **pool_heads;
	bool no_cgroups;		/* no hugetlb cgroup controller: said once */
	const struct mount_keys *mount; /* the [mount] being planned, for its verdict's words */
	const struct pool_keys *pool;	/* the [pool] being planned: its items' keys, its words */
	/* kernel.shmmax = recommended: planned as the options' unit, where its place is. */
	const struct hk_config_entry *shmmax;
};

static void problem(struct build *b, const struct hk_config_entry *e, const char *fmt, ...)
	HK_PRINTF(3, 4);

static void problem(struct build *b, const struct hk_config_entry *e, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	b->errors++;
	if (e && hkl_config_hidden(b->cfg, e->file))
		snprintf(msg, sizeof(msg), "%s", HKC_HIDDEN_PROBLEM);
	hkl_dbg(b->ctx, "%s:%u: %s", e ? e->file : "-", e ? e->line : 0, msg);
	if (b->fn)
		b->fn(b->data, e ? e->file : NULL, e ? e->line : 0, msg);
}

/* e with the line of its [section] header: for a problem of the section as a whole. */
static const struct hk_config_entry *
at_section(const struct build *b, const struct hk_config_entry *e, struct hk_config_entry *buf)
{
	*buf = *e;
	buf->line = hkl_config_section_line(b->cfg, e);
	return buf;
}

static void sys_error(struct build *b, int rc)
{
	/* -EINVAL is the plan's "problems said": a system error is never taken for it. */
	if (!b->rc)
		b->rc = rc == -EINVAL ? -EIO : rc;
}

static void item_free(struct hk_plan_item *it)
{
	free((char *)it->item);
	free((char *)it->path);
	free((char *)it->value);
	free((char *)it->why);
	free((char *)it->file);
}

/*
 * Fill it from the arguments, every string copied (why and file may be
 * NULL: "implied", no file): 0, or -ENOMEM with it left empty.
 */
static int item_init(struct hk_plan_item *it, enum hk_plan_kind kind, const char *item,
		     const char *path, const char *value, const char *why, const char *file,
		     unsigned line)
{
	memset(it, 0, sizeof(*it));
	it->size = sizeof(*it);
	it->kind = kind;
	it->node = HK_NODE_ALL;
	it->field = HK_POOL_SIZE;
	it->item = strdup(item);
	it->path = strdup(path);
	it->value = strdup(value ? value : "");
	it->why = strdup(why ? why : "implied");
	it->file = file ? strdup(file) : NULL;
	it->line = line;
	if (!it->item || !it->path || !it->value || !it->why || (file && !it->file)) {
		item_free(it);
		memset(it, 0, sizeof(*it));
		return -ENOMEM;
	}
	return 0;
}

/* An item's why: the setting as written ("[pool 2M] minimum = 512"), or "implied". */
static void why_of(const struct hk_config_entry *e, char *why, size_t sz)
{
	if (e && e->key && e->name)
		snprintf(why, sz, "[%s %s] %s = %s", e->section, e->name, e->key, e->value);
	else if (e && e->key)
		snprintf(why, sz, "[%s] %s = %s", e->section, e->key, e->value);
	else if (e)
		snprintf(why, sz, "[%s %s]", e->section, e->name ? e->name : "");
	else
		snprintf(why, sz, "implied");
}

/*
 * Add an item to a phase: every string copied. item and why are formats
 * joined by the caller; path is absolute.
 */
static struct hk_plan_item *add(struct build *b, enum hk_setting ph, enum hk_plan_kind kind,
				const struct hk_config_entry *e, const char *item, const char *path,
				const char *value)
{
	struct hk_plan_item *na = realloc(b->ph[ph], (b->n_ph[ph] + 1) * sizeof(*na));
	struct hk_plan_item *it;
	char why[512];

	if (!na) {
		sys_error(b, -ENOMEM);
		return NULL;
	}
	b->ph[ph] = na;
	it = &na[b->n_ph[ph]];
	why_of(e, why, sizeof(why));
	if (item_init(it, kind, item, path, value, why, e ? e->file : NULL, e ? e->line : 0) < 0) {
		sys_error(b, -ENOMEM);
		return NULL;
	}
	b->n_ph[ph]++;
	return it;
}

static bool find_item(const struct build *b, enum hk_setting ph, const char *item)
{
	for (size_t i = 0; i < b->n_ph[ph]; i++)
		if (strcmp(b->ph[ph][i].item, item) == 0)
			return true;
	return false;
}

static ssize_t size_index(const struct build *b, uint64_t size)
{
	for (size_t i = 0; i < b->n_sizes; i++)
		if (b->sizes[i] == size)
			return (ssize_t)i;
	return -1;
}

/* The machine's sizes, for messages: "2M, 1G". */
static void sizes_list(const struct build *b, char *buf, size_t sz)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < b->n_sizes && n < sz; i++) {
		char s[32];

		hkc_format_size(s, sizeof(s), b->sizes[i]);
		n += (size_t)snprintf(buf + n, sz - n, "%s%s", i ? ", " : "", s);
	}
	if (!b->n_sizes)
		snprintf(buf, sz, "none");
}

/* s is not a page size, or not one of the machine's: said. */
static void no_size(struct build *b, const struct hk_config_entry *e, const char *what,
		    const char *s)
{
	uint64_t size;
	char list[256];

	if (hk_parse_size(s, &size) < 0) {
		problem(b, e, "%s '%s': not a page size", what, s);
		return;
	}
	sizes_list(b, list, sizeof(list));
	problem(b, e, "%s '%s': this machine has no such huge page size (it has %s)", what, s,
		list);
}

/* A page size of the section or key that the machine has; 0 after a problem. */
static uint64_t machine_size(struct build *b, const struct hk_config_entry *e, const char *what,
			     const char *s)
{
	uint64_t size;

	if (hk_parse_size(s, &size) < 0 || size_index(b, size) < 0) {
		no_size(b, e, what, s);
		return 0;
	}
	return size;
}

/*
 * A pool item's name and file: "pool 2M minimum", "pool 2M node 1 minimum",
 * "pool 2M overcommit" (the overcommit that gives it), "pool 2M demote_size".
 */
static int pool_names(struct hk_ctx *ctx, uint64_t size, int node, enum hk_pool_field field,
		      unsigned flags, char *item, size_t sz, char **ret_path)
{
	char sname[32];
	enum hk_pool_field file = field == HK_POOL_MINIMUM ? HK_POOL_NR : field;

	hkc_format_size(sname, sizeof(sname), size);
	if (field == HK_POOL_OVERCOMMIT)
		snprintf(item, sz, "pool %s overcommit", sname);
	else if (field == HK_POOL_DEMOTE_SIZE)
		snprintf(item, sz, "pool %s demote_size", sname);
	else if (node == HK_NODE_ALL)
		snprintf(item, sz, "pool %s minimum", sname);
	else
		snprintf(item, sz, "pool %s node %d minimum", sname, node);
	return hk_pool_file(ctx, size, field == HK_POOL_MINIMUM ? node : HK_NODE_ALL, file, flags,
			    ret_path);
}

/* A pool item's value: pages, or "2048kB" for demote_size (number: its bytes). */
static void pool_value(enum hk_pool_field field, uint64_t number, char *buf, size_t sz)
{
	if (field == HK_POOL_DEMOTE_SIZE)
		snprintf(buf, sz, "%" PRIu64 "kB", number / 1024);
	else
		snprintf(buf, sz, "%" PRIu64, number);
}

/* A demote item's name: "pool 1G demote", "pool 1G node 0 demote". */
static void demote_name(uint64_t size, int node, char *item, size_t sz)
{
	char sname[32];

	hkc_format_size(sname, sizeof(sname), size);
	if (node == HK_NODE_ALL)
		snprintf(item, sz, "pool %s demote", sname);
	else
		snprintf(item, sz, "pool %s node %d demote", sname, node);
}

/* The words of a THP mode line, for a message: "always madvise never". */
static void mode_words(const char *line, char *buf, size_t sz)
{
	size_t n = 0;

	for (const char *p = line; *p && n + 1 < sz; p++)
		if (*p != '[' && *p != ']' && *p != '\n')
			buf[n++] = *p;
	buf[n] = '\0';
}

static bool mode_offered(const char *line, const char *value)
{
	size_t len = strlen(value);

	/* One word: not empty (strstr would find it everywhere), no brackets, no blank. */
	if (!len || strpbrk(value, " []\n"))
		return false;

	for (const char *p = line; (p = strstr(p, value)); p += len) {
		bool start = p == line || p[-1] == ' ' || p[-1] == '[';
		char after = p[len];

		if (start && (after == '\0' || after == ' ' || after == ']' || after == '\n'))
			return true;
	}
	return false;
}

HK_EXPORT int hk_thp_check(struct hk_ctx *ctx, const char *knob, const char *value, char **ret_line)
{
	char *line = NULL;
	int rc;

	if (ret_line)
		*ret_line = NULL;
	if (!ctx || !knob || !value)
		return -EINVAL;
	rc = hk_thp_modes(ctx, knob, &line);
	if (rc < 0)
		return rc;
	/* A mode must be one the kernel lists in the file itself: 1 when it is not. */
	rc = strchr(line, '[') && !mode_offered(line, value) ? 1 : 0;
	if (ret_line)
		*ret_line = line;
	else
		free(line);
	return rc;
}

/* A key's verdict, worded as a configuration's problem (1: said). */
struct key_verdict {
	struct build *b;
	const struct hk_config_entry *e;
	const struct hk_intent_entry *ie;
	size_t first, n;
};

static int mount_said(const struct key_verdict *t, const struct hk_intent_verdict *v);
static int pool_said(const struct key_verdict *t, const struct hk_intent_verdict *v);
static const struct hk_config_entry *pool_key(const struct pool_keys *k, enum hk_pool_field field);

/* What the judgement of a key needed and could not read, at the key's line. */
static void unread(const struct key_verdict *t, const struct hk_intent_verdict *v)
{
	const struct hk_config_entry *e = t->e;
	const char *err = strerror(v->error < 0 ? -v->error : EIO);
	char sname[32] = "";

	if (strcmp(e->section, "sysctl") == 0 && v->target)
		problem(t->b, e, "[sysctl] %s: cannot read %s: %s", e->key, v->target, err);
	else if (strcmp(e->section, "sysctl") == 0)
		problem(t->b, e, "[sysctl] %s = %s: cannot compute it: %s", e->key, e->value, err);
	else {
		if (v->page_size)
			hkc_format_size(sname, sizeof(sname), v->page_size);
		problem(t->b, e, "[%s%s%s]: cannot read the %s%spool: %s", e->section,
			e->name ? " " : "", e->name ? e->name : "", sname, *sname ? " " : "", err);
	}
}

static int key_said(void *data, const struct hk_intent_verdict *v)
{
	struct key_verdict *t = data;
	const struct hk_config_entry *e = t->e;
	char words[256];

	if (v->problem != HK_INTENT_PLANNED && t->b->mount && mount_said(t, v))
		return 1;
	if (v->problem != HK_INTENT_PLANNED && t->b->pool && pool_said(t, v))
		return 1;
	switch (v->problem) {
	case HK_INTENT_PLANNED:
		t->first = v->first;
		t->n = v->n;
		return 0;
	case HK_INTENT_NO_KERNEL:
		if (strcmp(e->section, "cgroup") == 0) {
			problem(t->b, e,
				"[cgroup %s]: no hugetlb cgroup controller here (not in "
				"%s/cgroup.controllers or %s/cgroup.controllers, no cgroup v1 "
				"hugetlb hierarchy)",
				e->name, HK_ABS(HK_SYS_CGROUP), HK_ABS(HK_SYS_CGROUP_UNIFIED));
			t->b->no_cgroups = true;
		} else if (strcmp(e->section, "thp") == 0)
			problem(t->b, e, "[thp] %s: the kernel has no such knob (%s/%s)", e->key,
				HK_ABS(HK_SYS_THP), e->key);
		else
			problem(t->b, e, "[sysctl] %s: the kernel has no such setting (%s)", e->key,
				hk_sysctl_path((enum hk_sysctl)hkl_sysctl_of_key(e->key)));
		return 1;
	case HK_INTENT_NOT_A_MODE:
		mode_words(v->line ? v->line : "", words, sizeof(words));
		problem(t->b, e, "[thp] %s '%s': the kernel offers %s", e->key, e->value,
			hkc_trim(words));
		return 1;
	case HK_INTENT_UNKNOWN_SIZE:
		no_size(t->b, e, e->key, t->ie->page_size);
		return 1;
	case HK_INTENT_NOT_WHOLE_PAGES:
		problem(t->b, e, "%s '%s': not a whole number of pages of that size", e->key,
			e->value);
		return 1;
	case HK_INTENT_UNREAD:
		unread(t, v);
		return 1;
	default:
		sys_error(t->b, v->error < 0 ? v->error : -EIO);
		return 1;
	}
}

/*
 * An item of the intent in phase ph, at the key's place (why, file, line),
 * or implied by it (a cgroup's parent, a controller). A directory or a
 * controller is a state, once in the plan: where the first key that needs
 * it put it.
 */
static void add_planned(struct build *b, enum hk_setting ph, const struct hk_config_entry *e,
			const struct hk_plan_item *it)
{
	bool implied = strcmp(it->why, "implied") == 0;
	struct hk_plan_item *na;

	if ((it->kind == HK_PLAN_MKDIR || it->kind == HK_PLAN_CONTROLLER) &&
	    find_item(b, ph, it->item))
		return;
	/* A pool's item: at the key it comes from (the overcommit of no maximum: implied). */
	if (b->pool)
		e = pool_key(b->pool, it->field);
	na = add(b, ph, it->kind, implied ? NULL : e, it->item, it->path, it->value);
	if (na) {
		na->page_size = it->page_size;
		na->node = it->node;
		na->field = it->field;
		na->number = it->number;
		na->uid = it->uid;
		na->gid = it->gid;
		na->mode = it->mode;
		na->flags = it->flags;
	}
}

/*
 * A configuration's key is an entry of libhugekit's intent, as hugeadm's
 * options are: judged and made items there (hk_plan_from_intent); here
 * they only get their place (why, file, line) in phase ph.
 */
static void plan_by_intent(struct build *b, const struct hk_config_entry *e,
			   struct hk_intent_entry *ie, enum hk_setting ph)
{
	struct key_verdict t = {.b = b, .e = e, .ie = ie};
	struct hk_intent *in = NULL;
	struct hk_plan *one = NULL;
	int rc = hk_intent_new(b->ctx, &in);

	ie->size = sizeof(*ie);
	ie->why = e->key;
	if (rc == 0)
		rc = hk_intent_add(in, ie);
	if (rc >= 0)
		rc = hk_plan_new(&one);
	if (rc >= 0)
		rc = hk_plan_from_intent(in, one, b->held, key_said, &t);
	if (rc < 0)
		sys_error(b, rc);
	for (size_t i = t.first; rc == 0 && i < t.first + t.n; i++)
		add_planned(b, ph, e, hk_plan_item_at(one, i));
	hk_plan_unref(one);
	hk_intent_unref(in);
}

/* The entries of one [pool SIZE] section, by key; NULL when not set. */
struct pool_keys {
	const struct hk_config_entry *head, *minimum, *maximum, *demote_size, *demote;
};

/* demote_size = SIZE: an entry of the intent (as --pool-demote-size), in its pool's place. */
static void plan_demote_size(struct build *b, const char *name, const struct pool_keys *k)
{
	uint64_t to = machine_size(b, k->demote_size, "demote_size", k->demote_size->value);
	struct hk_intent_entry ie = {
		.setting = HK_SETTING_DEMOTE_SIZE, .page_size = name, .number = to};

	if (!to)
		return;
	b->pool = k;
	plan_by_intent(b, k->demote_size, &ie, HK_SETTING_POOL);
	b->pool = NULL;
}

/* minimum = N or N@NODE, ...: into ie (per node: nodes and their pages, allocated); false after a problem. */
static bool pool_minimum(struct build *b, const struct hk_config_entry *e, uint64_t size,
			 struct hk_intent_entry *ie)
{
	size_t max = 1, n = 0;
	struct hkl_pool_part *parts;
	char why[1200];
	bool ok;

	/* One part per comma-separated piece. */
	for (const char *c = e->value; *c; c++)
		max += *c == ',';
	parts = calloc(max, sizeof(*parts));
	if (!parts) {
		sys_error(b, -ENOMEM);
		return false;
	}
	ok = hkl_pool_parts(e->value, size, true, parts, max, &n, why, sizeof(why)) == 0;
	if (!ok)
		problem(b, e, "[pool] minimum %s", why);
	if (ok && strchr(e->value, '@')) {
		int *nodes = calloc(n, sizeof(*nodes));
		uint64_t *pages = calloc(n, sizeof(*pages));

		for (size_t i = 0; nodes && pages && i < n; i++) {
			nodes[i] = parts[i].node;
			pages[i] = parts[i].pages;
		}
		ie->nodes = nodes;
		ie->node_pages = pages;
		ie->n_nodes = n;
		ok = nodes && pages;
		if (!ok)
			sys_error(b, -ENOMEM);
	} else if (ok) {
		ie->number = parts[0].pages;
	}
	free(parts);
	if (ok)
		ie->flags |= HK_INTENT_HAS_MINIMUM;
	return ok;
}

/*
 * One [pool SIZE]: an entry of the intent, the pool's state (minimum and
 * maximum together, per node, demote = yes), planned by the pool planner
 * over the pools as the plan leaves them, as the options' changes are;
 * demote_size before its demotes, else after the pool's items.
 */
static void plan_pool(struct build *b, uint64_t size, const char *name, const struct pool_keys *k)
{
	struct hk_intent_entry ie = {
		.setting = HK_SETTING_POOL, .flags = HK_INTENT_STATE, .page_size = name};
	bool demote = k->demote && strcmp(k->demote->value, "yes") == 0, ok = true;

	if (k->minimum)
		ok = pool_minimum(b, k->minimum, size, &ie);
	if (k->maximum && hkl_pool_pages(k->maximum->value, size, &ie.maximum) < 0) {
		problem(b, k->maximum, "maximum '%s': not a page count or a size",
			k->maximum->value);
		ok = false;
	} else if (k->maximum) {
		ie.flags |= HK_INTENT_HAS_MAXIMUM;
	}
	if (demote && !k->minimum) {
		problem(b, k->demote, "demote = yes: no minimum in [pool] to shrink to");
		ok = false;
	}
	ie.flags |= demote ? HK_INTENT_DEMOTE_DOWN : 0;
	/* The size its demoted pages become: the configured one, else the kernel's. */
	if (k->demote_size && hk_parse_size(k->demote_size->value, &ie.demote_to) < 0)
		ie.demote_to = 0;
	if (k->demote_size && demote)
		plan_demote_size(b, name, k);
	/*
	 * After a problem of its keys, what is left is still judged (and said):
	 * its maximum against the pool now where its demote had no minimum;
	 * nothing to compare a maximum with after a bad minimum.
	 */
	if (!ok && k->minimum && !(ie.flags & HK_INTENT_HAS_MINIMUM))
		ie.flags &= ~(unsigned)HK_INTENT_HAS_MAXIMUM;
	if (!ok && !(ie.flags & HK_INTENT_HAS_MINIMUM))
		ie.flags &= ~(unsigned)HK_INTENT_DEMOTE_DOWN;
	b->pool = k;
	plan_by_intent(b, k->head, &ie, HK_SETTING_POOL);
	b->pool = NULL;
	if (k->demote_size && !demote)
		plan_demote_size(b, name, k);
	free((int *)ie.nodes);
	free((uint64_t *)ie.node_pages);
}

/* The key a pool's item comes from: its minimum, maximum, demote or demote_size. */
static const struct hk_config_entry *pool_key(const struct pool_keys *k, enum hk_pool_field field)
{
	switch (field) {
	case HK_POOL_MINIMUM:
		return k->minimum;
	case HK_POOL_OVERCOMMIT:
		return k->maximum;
	case HK_POOL_DEMOTE:
		return k->demote;
	default:
		return k->demote_size;
	}
}

/* A [pool]'s verdict in the words of its keys (1: said). */
static int pool_said(const struct key_verdict *t, const struct hk_intent_verdict *v)
{
	const struct pool_keys *k = t->b->pool;
	const struct hk_intent_entry *ie = t->ie;
	const char *now = k->minimum ? "" : " the pool has now";
	uint64_t pages = 0;

	switch (v->problem) {
	case HK_INTENT_POOL_NO_NODE:
		for (size_t i = 0; i < ie->n_nodes; i++)
			if (ie->nodes[i] == v->pool.node)
				pages = ie->node_pages[i];
		problem(t->b, k->minimum,
			"minimum %" PRIu64 "@%d: this machine has no NUMA node %d", pages,
			v->pool.node, v->pool.node);
		return 1;
	case HK_INTENT_MAX_BELOW_MIN:
		if (v->incoming && !k->minimum)
			problem(t->b, k->maximum,
				"maximum %" PRIu64 " is below the minimum %" PRIu64
				" the pool has after the demote of a larger pool (%" PRIu64
				" pages come in): set a minimum for it",
				v->pages, v->min_pages, v->incoming);
		else
			problem(t->b, k->maximum,
				"maximum %" PRIu64 " is below the minimum %" PRIu64 "%s", v->pages,
				v->min_pages, now);
		return 1;
	case HK_INTENT_GIGANTIC_MAX:
		problem(t->b, k->maximum,
			"maximum %" PRIu64
			": gigantic pages cannot be overcommitted; the maximum of "
			"this pool is its minimum (%" PRIu64 ")",
			v->pages, v->min_pages);
		return 1;
	case HK_INTENT_DEMOTE:
		if (ie->setting == HK_SETTING_DEMOTE_SIZE &&
		    v->demote.problem == HK_DEMOTE_NOT_SMALLER)
			problem(t->b, k->demote_size,
				"demote_size %s is not below the pool's page size",
				k->demote_size->value);
		else
			problem(t->b,
				ie->setting == HK_SETTING_DEMOTE_SIZE ? k->demote_size : k->demote,
				"%s: the kernel cannot demote these pages (Linux 5.16 or later, and a "
				"page size that has a smaller one)",
				ie->setting == HK_SETTING_DEMOTE_SIZE ? "demote_size" : "demote");
		return 1;
	default:
		return 0;
	}
}

/* A [thp] key: an entry of the intent, as --thp-* and --thp-defrag. */
static void plan_thp(struct build *b, const struct hk_config_entry *e)
{
	struct hk_intent_entry ie = {.setting = HK_SETTING_THP, .knob = e->key, .value = e->value};

	plan_by_intent(b, e, &ie, HK_SETTING_THP);
}

/* A user or group (group true) by name or number: its id, or -1. */
static long account_id(const char *s, bool group)
{
	uint64_t v;

	if (hkc_parse_u64_strict(s, &v) == 0)
		return v <= UINT32_MAX - 1 ? (long)v : -1;
	if (group) {
		struct group *gr = getgrnam(s);

		return gr ? (long)gr->gr_gid : -1;
	}
	struct passwd *pw = getpwnam(s);

	return pw ? (long)pw->pw_uid : -1;
}

/* The setting a [sysctl] key is, for its place in the plan. */
static enum hk_setting sysctl_setting(const char *key)
{
	static const struct {
		const char *key;
		enum hk_setting setting;
	} settings[] = {
		{"vm.hugetlb_optimize_vmemmap", HK_SETTING_HVO},
		{"vm.min_free_kbytes", HK_SETTING_MIN_FREE_KBYTES},
		{"kernel.shmmax", HK_SETTING_SHMMAX},
		{"vm.hugetlb_shm_group", HK_SETTING_SHM_GROUP},
	};

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (strcmp(key, settings[i].key) == 0)
			return settings[i].setting;
	return HK_SETTING_SYSCTL;
}

/* When a [sysctl] key is planned: the three of hugeadm's options first, any other as the rest. */
static int planned_as(const char *key)
{
	enum hk_setting s = sysctl_setting(key);

	return s >= HK_SETTING_MIN_FREE_KBYTES && s <= HK_SETTING_SHM_GROUP ? (int)s
									    : HK_SETTING_SYSCTL;
}

/*
 * A [sysctl] key: an entry of the intent, as hugeadm's options are (the
 * recommended values too: computed from the pools the plan leaves), in its
 * setting's place. Its value was checked when the file was read.
 */
static void plan_sysctl(struct build *b, const struct hk_config_entry *e)
{
	struct hk_intent_entry ie = {.setting = sysctl_setting(e->key), .knob = e->key};
	const char *v = e->value;
	long gid;

	if (strcmp(v, "recommended") == 0 && ie.setting == HK_SETTING_SHMMAX) {
		/*
		 * The options' unit (hk_plan_add_recommended_shmmax), put in its
		 * place when the plan is put together: the executor computes it
		 * again from the pools the writes left, as for
		 * --set-recommended-shmmax.
		 */
		uint64_t cur;

		if (hk_sysctl_read(b->ctx, HK_SYSCTL_SHMMAX, &cur) == -ENOENT)
			problem(b, e, "[sysctl] %s: the kernel has no such setting (%s)", e->key,
				hk_sysctl_path(HK_SYSCTL_SHMMAX));
		else
			b->shmmax = e;
		return;
	}
	if (ie.setting == HK_SETTING_SHM_GROUP && (gid = account_id(v, true)) < 0) {
		problem(b, e, "vm.hugetlb_shm_group '%s': no such group", v);
		return;
	}
	if (ie.setting == HK_SETTING_SHM_GROUP)
		ie.number = (uint64_t)gid;
	else if (ie.setting == HK_SETTING_HVO)
		ie.number = strcmp(v, "0") != 0;
	else if (strcmp(v, "recommended") != 0 && hkc_parse_u64_strict(v, &ie.number) < 0 &&
		 hk_parse_size(v, &ie.number) < 0) {
		problem(b, e, "[sysctl] %s '%s': not a number", e->key, v);
		return;
	}
	/* A number given, not the recommendation (min_free_kbytes, shmmax). */
	if (strcmp(v, "recommended") != 0)
		ie.flags = HK_INTENT_GIVEN;
	plan_by_intent(b, e, &ie, ie.setting);
}

struct mount_keys {
	const struct hk_config_entry *head; /* any entry of the section, for its place */
	const struct hk_config_entry *pagesize, *user, *group, *mode, *size, *min_size, *nr_inodes;
};

/* size or min_size (percent: its flag): bytes, or "N%" of the pool; false after a problem. */
static bool mount_limit(struct build *b, const struct hk_config_entry *e, unsigned percent,
			struct hk_intent_entry *ie, uint64_t *ret)
{
	size_t len = strlen(e->value);
	char num[32];
	bool ok;

	if (len > 1 && e->value[len - 1] == '%') {
		snprintf(num, sizeof(num), "%.*s", (int)(len - 1), e->value);
		ok = len - 1 < sizeof(num) && hkc_parse_u64_strict(num, ret) == 0 && *ret <= 100;
		if (ok)
			ie->flags |= percent;
	} else {
		ok = hk_parse_size(e->value, ret) == 0 || hkc_parse_u64_strict(e->value, ret) == 0;
	}
	if (!ok) {
		problem(b, e, "%s '%s': not a size or a percentage", e->key, e->value);
		return false;
	}
	/* hugetlbfs takes size=0 as a limit of no page (min_size=0 reserves none). */
	if (*ret == 0 && percent == HK_INTENT_MAX_PERCENT) {
		problem(b, e, "%s '%s': no page could be used there (leave size out for no limit)",
			e->key, e->value);
		return false;
	}
	return true;
}

/* The mount's owner, mode, limits and inodes into ie; each problem said. */
static void mount_entry(struct build *b, const struct mount_keys *k, struct hk_intent_entry *ie)
{
	long uid = 0, gid = 0;

	if (k->user && (uid = account_id(k->user->value, false)) < 0)
		problem(b, k->user, "user '%s': no such user", k->user->value);
	if (k->group && (gid = account_id(k->group->value, true)) < 0)
		problem(b, k->group, "group '%s': no such group", k->group->value);
	if (k->user && !k->group && uid > 0) {
		struct passwd *pw = getpwuid((uid_t)uid);

		gid = pw ? (long)pw->pw_gid : 0;
	}
	ie->uid = (uint32_t)(uid > 0 ? uid : 0);
	ie->gid = (uint32_t)(gid > 0 ? gid : 0);
	ie->mode = 0755;
	if (k->mode && hkc_parse_mode(k->mode->value, &ie->mode) < 0)
		problem(b, k->mode, "mode '%s': not an octal mode", k->mode->value);
	if (k->size)
		mount_limit(b, k->size, HK_INTENT_MAX_PERCENT, ie, &ie->max_size);
	if (k->min_size)
		mount_limit(b, k->min_size, HK_INTENT_MIN_PERCENT, ie, &ie->min_size);
	if (k->nr_inodes && ((hkc_parse_u64_strict(k->nr_inodes->value, &ie->max_inodes) < 0 &&
			      hk_parse_size(k->nr_inodes->value, &ie->max_inodes) < 0) ||
			     ie->max_inodes == 0))
		problem(b, k->nr_inodes, "nr_inodes '%s': not a number of files (1 or more)",
			k->nr_inodes->value);
}

/* A [mount PATH]: an entry of the intent, one mount of its page size (the default one). */
static void plan_mount(struct build *b, const char *target, const struct mount_keys *k)
{
	struct hk_intent_entry ie = {.setting = HK_SETTING_MOUNT,
				     .base = target,
				     .page_size = k->pagesize ? k->pagesize->value : "DEFAULT"};
	unsigned before = b->errors;

	mount_entry(b, k, &ie);
	/* After a problem of its keys, the page size is still judged (and said). */
	if (b->errors != before)
		ie = (struct hk_intent_entry){
			.setting = HK_SETTING_MOUNT, .base = target, .page_size = ie.page_size};
	b->mount = k;
	plan_by_intent(b, k->head, &ie, HK_SETTING_MOUNT);
	b->mount = NULL;
}

/*
 * A [mount]'s verdict in the words of its keys (1: said): its page size,
 * limits that are not whole pages, a reservation above its limit or above
 * the pool the plan leaves.
 */
static int mount_said(const struct key_verdict *t, const struct hk_intent_verdict *v)
{
	struct build *b = t->b;
	const struct mount_keys *k = b->mount;
	const struct hk_intent_entry *ie = t->ie;
	const struct hk_config_entry *lim[] = {k->size, k->min_size};
	const uint64_t bytes[] = {ie->max_size, ie->min_size};
	const unsigned percent[] = {HK_INTENT_MAX_PERCENT, HK_INTENT_MIN_PERCENT};
	struct hk_config_entry h;
	char sname[32];

	hkc_format_size(sname, sizeof(sname), v->page_size);
	switch (v->problem) {
	case HK_INTENT_UNKNOWN_SIZE:
		if (k->pagesize)
			no_size(b, k->pagesize, "pagesize", k->pagesize->value);
		else
			problem(b, at_section(b, k->head, &h),
				"[mount %s]: this machine has no huge pages", v->target);
		return 1;
	case HK_INTENT_NOT_WHOLE_PAGES:
		/* Each limit that is not: size, min_size. */
		for (size_t i = 0; i < 2; i++)
			if (lim[i] && !(ie->flags & percent[i]) && v->page_size &&
			    bytes[i] % v->page_size)
				problem(b, lim[i], "%s '%s': not a whole number of %s pages",
					lim[i]->key, lim[i]->value, sname);
		return 1;
	case HK_INTENT_MIN_OVER_MAX:
		problem(b, k->min_size, "min_size '%s': more pages than size '%s'",
			k->min_size->value, k->size->value);
		return 1;
	case HK_INTENT_MIN_OVER_POOL:
		problem(b, k->min_size,
			"min_size '%s': reserves %" PRIu64 " %s pages, more than the pool's "
			"maximum (%" PRIu64 ")",
			k->min_size->value, v->min_pages, sname, v->pool_maximum);
		return 1;
	default:
		return 0;
	}
}

/* A [cgroup NAME] key, hugetlb.SIZE.max or hugetlb.SIZE.rsvd.max: an entry of the intent. */
static void plan_cgroup_limit(struct build *b, const struct hk_config_entry *e)
{
	const char *sz = e->key + strlen("hugetlb."), *dot = strchr(sz, '.');
	char sbuf[32];
	struct hk_intent_entry ie = {.setting = HK_SETTING_CGROUP,
				     .sub = e->name + (e->name[0] == '/'),
				     .page_size = sbuf,
				     .knob = dot ? dot + 1 : ""};

	snprintf(sbuf, sizeof(sbuf), "%.*s", dot ? (int)(dot - sz) : 0, sz);
	if (strcmp(e->value, "max") == 0)
		ie.value = "max";
	else if (hk_parse_size(e->value, &ie.number) < 0 &&
		 hkc_parse_u64_strict(e->value, &ie.number) < 0) {
		problem(b, e, "%s '%s': not a size or 'max'", e->key, e->value);
		return;
	}
	plan_by_intent(b, e, &ie, HK_SETTING_CGROUP);
}

/* Mount points and cgroup names as sections: in order of first appearance. */
struct names {
	const char **v;
	size_t n;
};

static int names_add(struct names *ns, const char *name)
{
	const char **nv;

	for (size_t i = 0; i < ns->n; i++)
		if (strcmp(ns->v[i], name) == 0)
			return 0;
	nv = realloc(ns->v, (ns->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	ns->v = nv;
	ns->v[ns->n++] = name;
	return 0;
}

static bool is(const struct hk_config_entry *e, const char *section, const char *name)
{
	return strcmp(e->section, section) == 0 &&
	       (!name || (e->name && strcmp(e->name, name) == 0));
}

/* The size of a [pool NAME] that has demote = yes, else 0. */
static uint64_t demoting(const char *name, const struct hk_config_entry *es, size_t n)
{
	uint64_t size = 0;

	for (size_t i = 0; i < n; i++)
		if (is(&es[i], "pool", name) && strcmp(es[i].key, "demote") == 0 &&
		    strcmp(es[i].value, "yes") == 0 && hk_parse_size(name, &size) == 0)
			return size;
	return 0;
}

/* Pools with demote = yes first, largest first; the others after, in the files' order. */
static void order_pools(struct names *pools, const struct hk_config_entry *es, size_t n)
{
	for (size_t i = 1; i < pools->n; i++) {
		const char *v = pools->v[i];
		uint64_t d = demoting(v, es, n);
		size_t j = i;

		/* A stable insertion: move v before the pools it demotes ahead of. */
		while (j > 0 && d > demoting(pools->v[j - 1], es, n)) {
			pools->v[j] = pools->v[j - 1];
			j--;
		}
		pools->v[j] = v;
	}
}

/* One [pool NAME]: its keys gathered, its size checked against the machine, planned. */
static void pool_section(struct build *b, const struct hk_config_entry *es, size_t n,
			 const char *name)
{
	struct pool_keys k = {0};
	const struct hk_config_entry *head = NULL;
	struct hk_config_entry h;
	uint64_t size;

	for (size_t i = 0; i < n; i++) {
		if (!is(&es[i], "pool", name))
			continue;
		head = head ? head : &es[i];
		k.head = head;
		if (strcmp(es[i].key, "minimum") == 0)
			k.minimum = &es[i];
		else if (strcmp(es[i].key, "maximum") == 0)
			k.maximum = &es[i];
		else if (strcmp(es[i].key, "demote_size") == 0)
			k.demote_size = &es[i];
		else if (strcmp(es[i].key, "demote") == 0)
			k.demote = &es[i];
	}
	size = machine_size(b, at_section(b, head, &h), "[pool]", name);
	if (size && b->pool_heads[size_index(b, size)]) {
		const struct hk_config_entry *first = b->pool_heads[size_index(b, size)];

		problem(b, at_section(b, head, &h),
			"[pool %s] is the pool of [pool %s] (line %u) again: one section per pool",
			name, first->name, hkl_config_section_line(b->cfg, first));
	} else if (size) {
		b->pool_heads[size_index(b, size)] = head;
		plan_pool(b, size, name, &k);
	}
}

/* One [mount NAME]: its keys gathered, planned. */
static void mount_section(struct build *b, const struct hk_config_entry *es, size_t n,
			  const char *name)
{
	struct mount_keys k = {0};
	const struct {
		const char *key;
		const struct hk_config_entry **slot;
	} keys[] = {
		{"pagesize", &k.pagesize},   {"user", &k.user}, {"group", &k.group},
		{"mode", &k.mode},	     {"size", &k.size}, {"min_size", &k.min_size},
		{"nr_inodes", &k.nr_inodes},
	};

	for (size_t i = 0; i < n; i++) {
		if (!is(&es[i], "mount", name))
			continue;
		k.head = k.head ? k.head : &es[i];
		for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++)
			if (strcmp(es[i].key, keys[j].key) == 0)
				*keys[j].slot = &es[i];
	}
	plan_mount(b, name, &k);
}

/* One [cgroup NAME]: each of its limits (none after the controller is found missing). */
static void cgroup_section(struct build *b, const struct hk_config_entry *es, size_t n,
			   const char *name)
{
	for (size_t i = 0; i < n && !b->no_cgroups; i++)
		if (is(&es[i], "cgroup", name))
			plan_cgroup_limit(b, &es[i]);
}

static void plan_entries(struct build *b, const struct hk_config_entry *es, size_t n)
{
	struct names pools = {0}, mounts = {0}, cgroups = {0};

	for (size_t i = 0; i < n; i++) {
		int rc = 0;

		if (is(&es[i], "pool", NULL))
			rc = names_add(&pools, es[i].name);
		else if (is(&es[i], "mount", NULL))
			rc = names_add(&mounts, es[i].name);
		else if (is(&es[i], "cgroup", NULL))
			rc = names_add(&cgroups, es[i].name);
		else if (is(&es[i], "thp", NULL))
			plan_thp(b, &es[i]);
		if (rc < 0)
			sys_error(b, rc);
	}
	/*
	 * Pools before sysctls: "recommended" shmmax follows the pools the plan
	 * leaves. Pools that demote first, largest first: the pools their pages
	 * join are planned (and applied) with those pages.
	 */
	order_pools(&pools, es, n);
	for (size_t p = 0; p < pools.n; p++)
		pool_section(b, es, n, pools.v[p]);
	/*
	 * Each item goes to its setting's place (sysctl_setting); they are
	 * planned, and their problems said, in the order of hugeadm's options
	 * (min_free_kbytes, shmmax, the shm group), then the rest.
	 */
	for (int r = HK_SETTING_MIN_FREE_KBYTES; r <= HK_SETTING_SYSCTL; r++)
		for (size_t i = 0; i < n; i++)
			if (is(&es[i], "sysctl", NULL) && planned_as(es[i].key) == r)
				plan_sysctl(b, &es[i]);
	for (size_t m = 0; m < mounts.n; m++)
		mount_section(b, es, n, mounts.v[m]);
	for (size_t c = 0; c < cgroups.n; c++)
		cgroup_section(b, es, n, cgroups.v[c]);
	free(pools.v);
	free(mounts.v);
	free(cgroups.v);
}

static void build_free(struct build *b)
{
	for (int p = 0; p < PH_N; p++) {
		for (size_t i = 0; i < b->n_ph[p]; i++)
			item_free(&b->ph[p][i]);
		free(b->ph[p]);
	}
	free(b->sizes);
	hk_pool_plan_unref(b->held);
	free(b->pool_heads);
}

/* A phase's items moved to the end of the plan: 0 or -ENOMEM. */
static int put_phase(struct build *b, struct hk_plan *plan, int p)
{
	struct hk_plan_item *na;

	if (!b->n_ph[p])
		return 0;
	na = realloc(plan->items, (plan->n + b->n_ph[p]) * sizeof(*na));
	if (!na)
		return -ENOMEM;
	plan->items = na;
	memcpy(plan->items + plan->n, b->ph[p], b->n_ph[p] * sizeof(*na));
	plan->n += b->n_ph[p];
	b->n_ph[p] = 0; /* moved */
	return 0;
}

/*
 * kernel.shmmax = recommended, in its place: the recommended-shmmax unit
 * from the pools as the plan leaves them (an item only where it keeps or
 * raises shmmax), its item at the setting's line. 0 or -errno.
 */
static int put_shmmax(struct build *b, struct hk_plan *plan)
{
	struct hk_shmmax_plan sp = {.size = sizeof(sp)};
	char why[512];
	int rc;

	why_of(b->shmmax, why, sizeof(why));
	rc = hk_plan_add_recommended_shmmax(b->ctx, plan, b->held, why, &sp);
	if (rc < 0)
		return rc;
	if (!sp.added)
		hkl_info(b->ctx,
			 "kernel.shmmax is %" PRIu64 ", the recommendation %" PRIu64
			 ": left as it is (never lowered, never 0)",
			 sp.current, sp.recommended);
	/* The item's place, and the mark's, for the item a run plans again. */
	return hkl_plan_place(plan, sp.added ? sp.index : plan->n, b->shmmax->file,
			      b->shmmax->line);
}

HK_EXPORT int hk_plan_from_config(struct hk_ctx *ctx, const struct hk_config *config,
				  hk_config_error_fn fn, void *data, struct hk_plan **ret_plan)
{
	struct build b = {.ctx = ctx, .cfg = config, .fn = fn, .data = data};
	const struct hk_config_entry *es;
	struct hk_plan *plan;
	size_t n;
	int rc;

	if (!ctx || !config || !ret_plan)
		return -EINVAL;
	n = hk_config_entries(config, &es);
	rc = hk_page_sizes(ctx, &b.sizes, &b.n_sizes);
	if (rc == -EOPNOTSUPP) {
		b.sizes = NULL;
		b.n_sizes = 0;
		rc = 0;
	}
	if (rc == 0)
		rc = hk_pool_plan_new(ctx, &b.held);
	if (rc == 0 && !(b.pool_heads = calloc(b.n_sizes + 1, sizeof(*b.pool_heads))))
		rc = -ENOMEM;
	if (rc < 0) {
		build_free(&b);
		return rc;
	}
	plan_entries(&b, es, n);
	if (b.rc < 0 || b.errors) {
		rc = b.rc < 0 ? b.rc : -EINVAL;
		build_free(&b);
		return rc;
	}
	rc = hk_plan_new(&plan);
	for (int p = 0; p < PH_N && rc == 0; p++) {
		if (p == HK_SETTING_SHMMAX && b.shmmax)
			rc = put_shmmax(&b, plan);
		if (rc == 0)
			rc = put_phase(&b, plan, p);
	}
	build_free(&b);
	if (rc < 0) {
		hk_plan_unref(plan);
		return rc;
	}
	*ret_plan = plan;
	return 0;
}

HK_EXPORT void hk_plan_unref(struct hk_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n; i++)
		item_free(&plan->items[i]);
	free(plan->items);
	for (size_t i = 0; i < plan->n_groups; i++)
		hkl_pool_group_fini(&plan->groups[i]);
	free(plan->groups);
	for (size_t i = 0; i < plan->n_marks; i++) {
		free(plan->marks[i].why);
		free(plan->marks[i].file);
	}
	free(plan->marks);
	for (size_t i = 0; i < plan->n_bases; i++)
		free(plan->bases[i].base);
	free(plan->bases);
	free(plan);
}

int hkl_plan_keep_shmmax(struct hk_plan *plan, const char *why, const struct hk_shmmax_plan *sp)
{
	struct hkl_shmmax_mark *nm = realloc(plan->marks, (plan->n_marks + 1) * sizeof(*nm));
	char *w = why ? strdup(why) : NULL;

	if (nm)
		plan->marks = nm;
	if (!nm || (why && !w)) {
		free(w);
		return -ENOMEM;
	}
	nm[plan->n_marks++] = (struct hkl_shmmax_mark){
		.at = sp->added ? sp->index : plan->n, .why = w, .sp = *sp};
	return 0;
}

int hkl_plan_place(struct hk_plan *plan, size_t index, const char *file, unsigned line)
{
	struct hkl_shmmax_mark *m = plan->n_marks ? &plan->marks[plan->n_marks - 1] : NULL;
	char *f = file ? strdup(file) : NULL, *mf = file && m ? strdup(file) : NULL;

	if (file && (!f || (m && !mf))) {
		free(f);
		free(mf);
		return -ENOMEM;
	}
	if (index < plan->n) {
		free((char *)plan->items[index].file);
		plan->items[index].file = f;
		plan->items[index].line = line;
	} else {
		free(f);
	}
	if (m) {
		free(m->file);
		m->file = mf;
		m->line = line;
	}
	return 0;
}

const struct hkl_shmmax_mark *hkl_plan_shmmax(const struct hk_plan *plan, size_t k)
{
	return plan && k < plan->n_marks ? &plan->marks[k] : NULL;
}

const char *hkl_plan_mount_base(const struct hk_plan *plan, size_t index)
{
	for (size_t i = 0; plan && i < plan->n_bases; i++)
		if (plan->bases[i].index == index)
			return plan->bases[i].base;
	return NULL;
}

/* Item index's base kept: 0 or -ENOMEM. */
static int keep_base(struct hk_plan *plan, size_t index, const char *base)
{
	struct mount_base *nb = realloc(plan->bases, (plan->n_bases + 1) * sizeof(*nb));
	char *b = strdup(base);

	if (nb)
		plan->bases = nb;
	if (!nb || !b) {
		free(b);
		return -ENOMEM;
	}
	nb[plan->n_bases++] = (struct mount_base){.index = index, .base = b};
	return 0;
}

int hkl_plan_keep_group(struct hk_plan *plan, struct hkl_pool_group *g)
{
	struct hkl_pool_group *ng = realloc(plan->groups, (plan->n_groups + 1) * sizeof(*ng));

	if (!ng) {
		hkl_pool_group_fini(g);
		return -ENOMEM;
	}
	plan->groups = ng;
	ng[plan->n_groups++] = *g;
	return 0;
}

const struct hkl_pool_group *hkl_plan_group(const struct hk_plan *plan, size_t index)
{
	for (size_t i = 0; plan && i < plan->n_groups; i++)
		if (index >= plan->groups[i].first &&
		    index - plan->groups[i].first < plan->groups[i].n)
			return &plan->groups[i];
	return NULL;
}

HK_EXPORT const struct hk_plan_item *hk_plan_item_at(const struct hk_plan *plan, size_t index)
{
	return plan && index < plan->n ? &plan->items[index] : NULL;
}

HK_EXPORT size_t hk_plan_items(const struct hk_plan *plan, const struct hk_plan_item **ret)
{
	if (!plan) {
		if (ret)
			*ret = NULL;
		return 0;
	}
	if (ret)
		*ret = plan->items;
	return plan->n;
}

/* Building a plan item by item (HK_1.3) */

HK_EXPORT int hk_plan_new(struct hk_plan **ret_plan)
{
	if (!ret_plan)
		return -EINVAL;
	*ret_plan = calloc(1, sizeof(**ret_plan));
	return *ret_plan ? 0 : -ENOMEM;
}

int hkl_item_in(const struct hk_plan_item **item, struct hk_plan_item *buf)
{
	const struct hk_plan_item *it = *item;

	if (it->size == sizeof(*it))
		return 0;
	if (it->size < HK_PLAN_ITEM_SIZE_MIN)
		return -EINVAL;
	/* A size no header will reach (a field never set, garbage): not scanned. */
	if (it->size > 4096)
		return -E2BIG;
	/* A newer caller's: what this library does not know must be 0. */
	for (size_t i = sizeof(*it); i < it->size; i++)
		if (((const unsigned char *)it)[i])
			return -E2BIG;
	/*
	 * Copied, so that the library's code sees its own size only (a copy of
	 * a newer caller's item would carry a size larger than itself): an
	 * older caller's with the fields it does not have 0.
	 */
	memset(buf, 0, sizeof(*buf));
	memcpy(buf, it, it->size < sizeof(*buf) ? it->size : sizeof(*buf));
	buf->size = sizeof(*buf);
	*item = buf;
	return 0;
}

HK_EXPORT int hk_plan_add(struct hk_plan *plan, const struct hk_plan_item *item)
{
	struct hk_plan_item *na, *it, copy, in;
	int rc;

	if (!plan || !item)
		return -EINVAL;
	rc = hkl_item_in(&item, &in);
	if (rc < 0)
		return rc;
	if (!item->item || !item->path || plan->n >= INT_MAX)
		return -EINVAL;
	/* item may be one of the plan's own: copied before the array can move. */
	rc = item_init(&copy, item->kind, item->item, item->path, item->value, item->why,
		       item->file, item->line);
	if (rc < 0)
		return rc;
	copy.page_size = item->page_size;
	copy.node = item->node;
	copy.field = item->field;
	copy.number = item->number;
	copy.uid = item->uid;
	copy.gid = item->gid;
	copy.mode = item->mode;
	copy.flags = item->flags;
	na = realloc(plan->items, (plan->n + 1) * sizeof(*na));
	if (!na) {
		item_free(&copy);
		return -ENOMEM;
	}
	plan->items = na;
	it = &na[plan->n];
	*it = copy;
	return (int)plan->n++;
}

/* Add it with its name, file (taken: freed) and value: hk_plan_add's result. */
static int add_named(struct hk_plan *plan, struct hk_plan_item *it, const char *item, char *path,
		     const char *value)
{
	int rc;

	it->item = item;
	it->path = path;
	it->value = value;
	rc = hk_plan_add(plan, it);
	free(path);
	return rc;
}

HK_EXPORT int hk_plan_add_pool(struct hk_ctx *ctx, struct hk_plan *plan, uint64_t page_size,
			       int node, enum hk_pool_field field, uint64_t number, unsigned flags,
			       const char *why)
{
	struct hk_plan_item it = {.size = sizeof(it), .kind = HK_PLAN_WRITE, .why = why};
	char item[96], value[32];
	char *path = NULL;
	int rc;

	if (!ctx || !plan || !page_size ||
	    (field != HK_POOL_MINIMUM && field != HK_POOL_OVERCOMMIT &&
	     field != HK_POOL_DEMOTE_SIZE) ||
	    (field != HK_POOL_MINIMUM && (node != HK_NODE_ALL || flags)) ||
	    (flags & ~HK_POOL_SET_MEMPOLICY) || (node != HK_NODE_ALL && flags))
		return -EINVAL;
	rc = pool_names(ctx, page_size, node, field, flags, item, sizeof(item), &path);
	if (rc < 0)
		return rc;
	pool_value(field, number, value, sizeof(value));
	it.page_size = page_size;
	it.node = node;
	it.field = field;
	it.number = number;
	it.flags = flags;
	return add_named(plan, &it, item, path, value);
}

/* A demote item: pages (flags HK_POOL_DEMOTE_PAGES) or the minimum to demote down to (0). */
static int add_demote(struct hk_ctx *ctx, struct hk_plan *plan, uint64_t page_size, int node,
		      uint64_t number, unsigned flags, const char *why)
{
	struct hk_plan_item it = {.size = sizeof(it),
				  .kind = HK_PLAN_WRITE,
				  .why = why,
				  .page_size = page_size,
				  .node = node,
				  .field = HK_POOL_DEMOTE,
				  .number = number,
				  .flags = flags};
	char item[96], value[32];
	char *path = NULL;
	int rc;

	if (!ctx || !plan || !page_size || (node < 0 && node != HK_NODE_ALL))
		return -EINVAL;
	rc = hk_pool_file(ctx, page_size, node, HK_POOL_DEMOTE, 0, &path);
	if (rc < 0)
		return rc;
	demote_name(page_size, node, item, sizeof(item));
	snprintf(value, sizeof(value), "%" PRIu64, number);
	return add_named(plan, &it, item, path, value);
}

HK_EXPORT int hk_plan_add_pool_demote(struct hk_ctx *ctx, struct hk_plan *plan, uint64_t page_size,
				      int node, uint64_t pages, const char *why)
{
	if (!pages)
		return -EINVAL;
	return add_demote(ctx, plan, page_size, node, pages, HK_POOL_DEMOTE_PAGES, why);
}

int hkl_plan_add_demote_down(struct hk_ctx *ctx, struct hk_plan *plan, uint64_t page_size, int node,
			     uint64_t minimum, const char *why)
{
	return add_demote(ctx, plan, page_size, node, minimum, 0, why);
}

HK_EXPORT int hk_plan_add_thp(struct hk_ctx *ctx, struct hk_plan *plan, const char *knob,
			      const char *value, const char *why)
{
	struct hk_plan_item it = {.size = sizeof(it),
				  .kind = HK_PLAN_WRITE,
				  .value = value,
				  .why = why,
				  .node = HK_NODE_ALL};
	char item[160], path[PATH_MAX];

	if (!ctx || !plan || !knob || !*knob || !value || knob[0] == '/' || strstr(knob, "..") ||
	    snprintf(item, sizeof(item), "thp %s", knob) >= (int)sizeof(item))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", HK_ABS(HK_SYS_THP), knob);
	it.item = item;
	it.path = path;
	return hk_plan_add(plan, &it);
}

HK_EXPORT int hk_plan_add_mount(struct hk_plan *plan, const struct hk_mount_request *req,
				uint64_t page_size, const char *why)
{
	struct hk_plan_item it = {
		.size = sizeof(it), .kind = HK_PLAN_MOUNT, .why = why, .node = HK_NODE_ALL};
	char *item = NULL;
	int rc;

	if (!plan || !req || req->size != sizeof(*req) || !req->path || req->path[0] != '/' ||
	    !req->options || req->mode > 07777 || (req->flags & ~(HK_MOUNT_EMPTY | HK_MOUNT_KEEP)))
		return -EINVAL;
	it.path = req->path;
	it.value = req->options;
	it.page_size = page_size;
	it.uid = req->uid;
	it.gid = req->gid;
	it.mode = req->mode;
	it.flags = req->flags;
	if (asprintf(&item, "mount %s", req->path) < 0)
		return -ENOMEM;
	it.item = item;
	rc = hk_plan_add(plan, &it);
	free(item);
	if (rc >= 0 && req->base) {
		int kept = keep_base(plan, (size_t)rc, req->base);

		/* Not kept, not planned: the item goes again. */
		if (kept < 0) {
			item_free(&plan->items[--plan->n]);
			rc = kept;
		}
	}
	return rc;
}

HK_EXPORT int hk_plan_add_sysctl(struct hk_ctx *ctx, struct hk_plan *plan, enum hk_sysctl which,
				 uint64_t value, const char *why)
{
	struct hk_plan_item it = {.size = sizeof(it),
				  .kind = HK_PLAN_WRITE,
				  .why = why,
				  .node = HK_NODE_ALL,
				  .number = value};
	const char *path = hk_sysctl_path(which);
	const char *key = path ? path + strlen(HK_ABS(HK_PROC_SYS)) + 1 : NULL;
	char item[96], v[32];

	if (!ctx || !plan || !path || which == HK_SYSCTL_COMPACT_MEMORY ||
	    strncmp(path, HK_ABS(HK_PROC_SYS) "/", strlen(HK_ABS(HK_PROC_SYS)) + 1) != 0)
		return -EINVAL;
	snprintf(item, sizeof(item), "sysctl %s", key);
	for (char *p = item + strlen("sysctl "); *p; p++)
		if (*p == '/')
			*p = '.';
	snprintf(v, sizeof(v), "%" PRIu64, value);
	it.item = item;
	it.path = path;
	it.value = v;
	return hk_plan_add(plan, &it);
}

/* Checking */

static int dup_out(const char *s, char **ret)
{
	if (!ret)
		return 0;
	*ret = s ? strdup(s) : NULL;
	return s && !*ret ? -ENOMEM : 0;
}

static int u64_out(uint64_t v, char **ret)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return dup_out(buf, ret);
}

/* A /proc/sys or cgroup value against the one wanted: numbers compared as numbers. */
static bool same_value(const char *have, const char *want)
{
	uint64_t a, b;

	if (hkc_parse_u64_strict(have, &a) == 0 && hkc_parse_u64_strict(want, &b) == 0)
		return a == b;
	return strcmp(have, want) == 0;
}

/* What a pool item compares: the overcommit, or the minimum of the pool or of its node. */
static int pool_have(struct hk_ctx *ctx, const struct hk_plan_item *it, uint64_t *ret)
{
	struct hk_pool *pool;
	int rc = hk_pool_read(ctx, it->page_size, &pool);

	if (rc < 0)
		return rc;
	if (it->field == HK_POOL_OVERCOMMIT) {
		*ret = hk_pool_get(pool, HK_POOL_OVERCOMMIT);
	} else if (it->node == HK_NODE_ALL) {
		*ret = hk_pool_get(pool, HK_POOL_MINIMUM);
	} else {
		rc = -ENOENT;
		for (size_t i = 0; i < hk_pool_node_count(pool); i++) {
			if (hk_pool_node_id(pool, i) != it->node)
				continue;
			*ret = hk_pool_node_get(pool, i, HK_POOL_MINIMUM);
			rc = 0;
		}
	}
	hk_pool_unref(pool);
	return rc;
}

static int check_pool(struct hk_ctx *ctx, const struct hk_plan_item *it, char **ret)
{
	uint64_t have = 0;
	int rc = pool_have(ctx, it, &have);

	if (rc < 0)
		return rc;
	rc = u64_out(have, ret);
	/* A count to demote is an action: never so already. */
	if (it->field == HK_POOL_DEMOTE && (it->flags & HK_POOL_DEMOTE_PAGES))
		return rc < 0 ? rc : 0;
	/* A demote holds once the minimum is down to the one asked (the minimum item sees to the rest). */
	if (it->field == HK_POOL_DEMOTE)
		return rc < 0 ? rc : have <= it->number;
	return rc < 0 ? rc : have == it->number;
}

/* A size shown by hugetlbfs ("1G", "262144k"), or a number. */
static int shown_size(const char *s, uint64_t *ret)
{
	char buf[40];
	size_t len = strlen(s);

	if (hkc_parse_u64_strict(s, ret) == 0 || hk_parse_size(s, ret) == 0)
		return 0;
	if (len && len < sizeof(buf) - 1 && s[len - 1] == 'k') {
		snprintf(buf, sizeof(buf), "%.*sK", (int)(len - 1), s);
		return hk_parse_size(buf, ret);
	}
	return -EINVAL;
}

/*
 * One option of the mount against the wanted one, from its options string: a
 * flag ("nosuid") is there or not, a value ("size=1G") compared as below.
 */
static bool mount_option_ok(const struct hk_mounts *ms, size_t i, const char *opt)
{
	char name[32], *have = NULL;
	const char *eq = strchr(opt, '='), *want = eq ? eq + 1 : NULL;
	bool ok;
	int rc;

	if (!eq) {
		rc = hk_mount_option(ms, i, opt, &have);
		free(have);
		return rc == 0;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - opt), opt);
	if (strcmp(name, "pagesize") == 0)
		return true; /* compared by size */
	rc = hk_mount_option(ms, i, name, &have);
	if (rc < 0) {
		/* Shown only when not the default: uid/gid 0, mode 0755, no size limit. */
		if (strcmp(name, "uid") == 0 || strcmp(name, "gid") == 0)
			return strcmp(want, "0") == 0;
		if (strcmp(name, "mode") == 0)
			return strtoul(want, NULL, 8) == 0755;
		return false;
	}
	if (strcmp(name, "mode") == 0) {
		ok = strtoul(have, NULL, 8) == strtoul(want, NULL, 8);
	} else if (strcmp(name, "uid") == 0 || strcmp(name, "gid") == 0 ||
		   strcmp(name, "nr_inodes") == 0) {
		uint64_t a, b;

		ok = shown_size(have, &a) == 0 && shown_size(want, &b) == 0 && a == b;
	} else {
		/* size, min_size: bytes, or a percentage of the pool (as the kernel took it). */
		uint64_t a, b;
		size_t wl = strlen(want);

		if (shown_size(have, &a) < 0)
			ok = false;
		else if (wl && want[wl - 1] == '%')
			/*
			 * The kernel turned the percentage into pages of the pool as
			 * it was at mount time; the pool may have changed since.
			 */
			ok = true;
		else
			ok = shown_size(want, &b) == 0 && a == b;
	}
	free(have);
	return ok;
}

static int check_mount(struct hk_ctx *ctx, const struct hk_plan_item *it, char **ret)
{
	struct hk_mounts *ms;
	ssize_t found = -1;
	char *opts, *save = NULL;
	bool ok;
	int rc = hk_mounts_read(ctx, &ms);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < hk_mounts_count(ms); i++)
		if (strcmp(hk_mount_target(ms, i), it->path) == 0)
			found = (ssize_t)i; /* the last one is the one seen */
	if (found < 0) {
		hk_mounts_unref(ms);
		if (ret)
			*ret = NULL;
		return 0;
	}
	rc = dup_out(hk_mount_options(ms, (size_t)found), ret);
	ok = rc == 0 && hk_mount_page_size(ms, (size_t)found) == it->page_size;
	/* HK_MOUNT_KEEP: the one there is the one asked for (its caller compared it). */
	ok = ok || (rc == 0 && (it->flags & HK_MOUNT_KEEP));
	opts = strdup(it->flags & HK_MOUNT_KEEP ? "" : it->value);
	if (!opts)
		rc = -ENOMEM;
	for (char *o = opts ? strtok_r(opts, ",", &save) : NULL; o && ok;
	     o = strtok_r(NULL, ",", &save))
		ok = mount_option_ok(ms, (size_t)found, o);
	free(opts);
	hk_mounts_unref(ms);
	if (rc < 0) {
		if (ret) {
			free(*ret);
			*ret = NULL;
		}
		return rc;
	}
	return ok;
}

static const char *rel(const struct hk_plan_item *it)
{
	return it->path[0] == '/' ? it->path + 1 : it->path;
}

static int check_write(struct hk_ctx *ctx, const struct hk_plan_item *it, char **ret)
{
	char *have = NULL;
	int rc;

	if (it->page_size && (it->field == HK_POOL_MINIMUM || it->field == HK_POOL_OVERCOMMIT ||
			      it->field == HK_POOL_DEMOTE))
		return check_pool(ctx, it, ret);
	if (strncmp(it->item, "thp ", 4) == 0)
		rc = hk_thp_read(ctx, it->item + 4, &have);
	else
		rc = hkc_path_read_stringf(&ctx->path, &have, "%s", rel(it));
	if (rc == -ENOENT)
		return 0; /* nothing there yet: a cgroup not made */
	if (rc < 0)
		return rc;
	/* demote_size reads "2048kB"; a cgroup v1 limit, -1 written, reads a huge number. */
	/* No limit: "max" (written as -1 to v1); read as "max" or the counter's largest bytes. */
	if (strcmp(it->value, "max") == 0 || strcmp(it->value, "-1") == 0)
		rc = strcmp(have, "max") == 0 || strtoull(have, NULL, 10) >= (UINT64_MAX >> 2);
	else
		rc = same_value(have, it->value);
	if (dup_out(have, ret) < 0)
		rc = -ENOMEM;
	free(have);
	return rc;
}

HK_EXPORT int hk_plan_item_check(struct hk_ctx *ctx, const struct hk_plan_item *item,
				 char **ret_current)
{
	char *have = NULL;
	int rc;

	struct hk_plan_item in;

	if (ret_current)
		*ret_current = NULL;
	if (!ctx || !item)
		return -EINVAL;
	rc = hkl_item_in(&item, &in);
	if (rc < 0)
		return rc;
	switch (item->kind) {
	case HK_PLAN_WRITE:
		return check_write(ctx, item, ret_current);
	case HK_PLAN_MOUNT:
		return check_mount(ctx, item, ret_current);
	case HK_PLAN_UNMOUNT:
		return hkl_unmount_check(ctx, item, ret_current);
	case HK_PLAN_REMOVE:
		return hkl_text_check(ctx, item, ret_current);
	case HK_PLAN_MKDIR:
		rc = hkc_path_openf(&ctx->path, O_RDONLY | O_DIRECTORY, "%s", rel(item));
		if (rc < 0)
			return rc == -ENOENT ? 0 : rc;
		close(rc);
		return dup_out("present", ret_current) < 0 ? -ENOMEM : 1;
	case HK_PLAN_CONTROLLER:
		rc = hkc_path_read_stringf(&ctx->path, &have, "%s", rel(item));
		if (rc == -ENOENT)
			return 0; /* its cgroup not made yet */
		if (rc < 0)
			return rc;
		rc = mode_offered(have, item->value);
		if (dup_out(have, ret_current) < 0)
			rc = -ENOMEM;
		free(have);
		return rc;
	}
	return -EINVAL;
}

/* cgroup v1 takes -1 for no limit where the configuration (and v2) say max. */
static const char *v1_value(const struct hk_plan_item *item)
{
	static const char v1_file[] = "limit_in_bytes";
	size_t len = strlen(item->path), n = sizeof(v1_file) - 1;

	if (strcmp(item->value, "max") == 0 && len >= n &&
	    strcmp(item->path + len - n, v1_file) == 0)
		return "-1";
	return item->value;
}

/*
 * --pool-demote: the count itself, read back where a kernel answers as the
 * persistent pages the pool (or its node) lost: *ret_reached (may be NULL),
 * -EAGAIN when fewer.
 */
static int demote_count(struct hk_ctx *ctx, const struct hk_plan_item *item, char **ret_reached)
{
	bool answers = hk_is_live(ctx) && !hk_is_dry_run(ctx);
	uint64_t before = 0, after = 0, done;
	int rc = answers ? pool_have(ctx, item, &before) : 0;

	if (rc == 0)
		rc = hk_pool_demote(ctx, item->page_size, item->node, item->number);
	if (rc < 0 || !answers)
		return rc;
	rc = pool_have(ctx, item, &after);
	if (rc < 0)
		return rc;
	done = before > after ? before - after : 0;
	if (ret_reached && (rc = u64_out(done, ret_reached)) < 0)
		return rc;
	return done < item->number ? -EAGAIN : 0;
}

/* The pages above the item's minimum, demoted; the kernel demotes fewer when it cannot find them free. */
static int demote_write(struct hk_ctx *ctx, const struct hk_plan_item *item)
{
	uint64_t have = 0;
	int rc = pool_have(ctx, item, &have);

	if (rc < 0)
		return rc;
	if (have <= item->number)
		return 0;
	return hk_pool_demote(ctx, item->page_size, item->node, have - item->number);
}

/* A controller enabled: "+NAME" to the parent's subtree_control. */
static int controller_write(struct hk_ctx *ctx, const struct hk_plan_item *item)
{
	char value[96];
	int rc;

	snprintf(value, sizeof(value), "+%s", item->value);
	if (!hk_is_live(ctx) && !hk_is_dry_run(ctx)) {
		/* A tree's file is plain: it gets what the kernel would show after. */
		char *have = NULL;

		rc = hkc_path_read_stringf(&ctx->path, &have, "%s", rel(item));
		if (rc == 0 && snprintf(value, sizeof(value), "%s%s%s", have, *have ? " " : "",
					item->value) >= (int)sizeof(value))
			rc = -E2BIG;
		free(have);
		if (rc < 0)
			return rc;
	}
	return hkc_path_write_stringf(&ctx->path, value, "%s", rel(item));
}

/* An HK_PLAN_WRITE item's value written (a demote count excepted: demote_count). */
static int value_write(struct hk_ctx *ctx, const struct hk_plan_item *item)
{
	if (item->page_size && item->field == HK_POOL_MINIMUM)
		return hk_pool_set_nr(ctx, item->page_size, item->node, item->number, item->flags);
	if (item->page_size && item->field == HK_POOL_OVERCOMMIT)
		return hk_pool_set_overcommit(ctx, item->page_size, item->number);
	if (item->page_size && item->field == HK_POOL_DEMOTE)
		return demote_write(ctx, item);
	if (strncmp(item->item, "thp ", 4) == 0)
		return hk_thp_write(ctx, item->item + 4, item->value);
	return hkc_path_write_stringf(&ctx->path, v1_value(item), "%s", rel(item));
}

HK_EXPORT int hk_plan_item_apply(struct hk_ctx *ctx, const struct hk_plan_item *item,
				 char **ret_reached)
{
	struct hk_plan_item in;
	int rc;

	if (ret_reached)
		*ret_reached = NULL;
	if (!ctx || !item)
		return -EINVAL;
	rc = hkl_item_in(&item, &in);
	if (rc < 0)
		return rc;
	switch (item->kind) {
	case HK_PLAN_MOUNT:
		return -EOPNOTSUPP;
	/*
	 * Taken down or removed: done when the call says so, not read back (a
	 * mount below the one taken down, a file of that name made again since,
	 * is another one).
	 */
	case HK_PLAN_UNMOUNT:
	case HK_PLAN_REMOVE:
		if (hk_is_dry_run(ctx))
			return 0;
		if (!hk_is_live(ctx))
			return -EOPNOTSUPP; /* the running system's mounts and files only */
		if (item->kind == HK_PLAN_REMOVE)
			return hkl_text_apply(ctx, item);
		return hkl_unmount_apply(ctx, item);
	case HK_PLAN_MKDIR:
		if (hk_is_dry_run(ctx))
			return 0;
		rc = hkc_path_mkdirf(&ctx->path, 0755, "%s", rel(item));
		return rc == -EEXIST ? 0 : rc;
	case HK_PLAN_CONTROLLER:
		rc = controller_write(ctx, item);
		break;
	case HK_PLAN_WRITE:
		/* A count demoted is read back as its own (the pages the pool lost). */
		if (item->page_size && item->field == HK_POOL_DEMOTE &&
		    (item->flags & HK_POOL_DEMOTE_PAGES))
			return demote_count(ctx, item, ret_reached);
		rc = value_write(ctx, item);
		break;
	default:
		return -EINVAL;
	}
	if (rc < 0) {
		hkl_dbg(ctx, "%s: cannot write %s: %s", item->path, item->value, strerror(-rc));
		return rc;
	}
	if (hk_is_dry_run(ctx))
		return 0;
	hkl_info(ctx, "%s = %s", item->path, item->value);
	/* Read back: what the kernel did with it. */
	rc = hk_plan_item_check(ctx, item, ret_reached);
	if (rc < 0)
		return rc;
	return rc ? 0 : -EAGAIN;
}
