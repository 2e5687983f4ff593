// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --apply [FILE] and --check [FILE]: the configuration
 * (/etc/hugekit/hugekit.conf and conf.d, or FILE) resolved by libhugekit into
 * a plan of writes; --check compares each with the machine (exit 3 when any
 * differs), --apply has libhugekit's executor make the ones that differ true
 * and read them back (all or nothing), under the machine-wide lock, and
 * words its steps. A problem in the configuration is one error per
 * line, exit 1, and nothing is changed.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"

/* Exit status of --check when the machine differs from the configuration. */
#define HA_EXIT_DRIFT 3

/*
 * libhugetlbfs began every dry run with the verbosity it would hand on; here
 * only once the whole command line is valid, so that a refused dry run prints
 * nothing on stdout.
 */
void ha_dry_run_header(const struct hugeadm_ctl *ctl)
{
	if (!ctl->dry_run || ctl->json)
		return;
	if (ctl->verbose >= 99)
		printf("HUGETLB_DEBUG='yes'\n");
	printf("HUGETLB_VERBOSE='%d'\n", ctl->verbose);
}

void ha_config_error(void *data, const char *file, unsigned line, const char *msg)
{
	const struct hugeadm_ctl *ctl = data;

	if (file && line)
		ha_msg(ctl, HA_ERROR, "%s:%u: %s", file, line, msg);
	else if (file)
		ha_msg(ctl, HA_ERROR, "%s: %s", file, msg);
	else
		ha_msg(ctl, HA_ERROR, "%s", msg);
}

/*
 * --apply: the configuration's [apply] section, as its options would say it
 * (an option given on the command line holds either way: yes adds to it).
 */
static void apply_section(struct hugeadm_ctl *ctl, const struct hk_config *cfg)
{
	const struct hk_config_entry *es;
	size_t n = hk_config_entries(cfg, &es);

	for (size_t i = 0; i < n && ctl->apply; i++) {
		const char *k = es[i].key;
		bool yes = strcmp(es[i].value, "yes") == 0;

		if (strcmp(es[i].section, "apply") != 0)
			continue;
		if (strcmp(k, "temp_swap") == 0 && !ctl->temp_swap)
			ctl->temp_swap = atoi(es[i].value);
		ctl->hard |= yes && strcmp(k, "hard") == 0;
		ctl->strict |= yes && strcmp(k, "strict") == 0;
		ctl->obey_mempolicy |= yes && strcmp(k, "obey_mempolicy") == 0;
		ctl->ramdisk_swap |= yes && strcmp(k, "ramdisk_swap") == 0;
		ctl->persist |= yes && strcmp(k, "persist") == 0;
	}
}

/* The plan of the configuration, or NULL after the errors were said. */
static struct hk_plan *load_plan(struct hugeadm_ctl *ctl)
{
	struct hk_config *cfg = NULL;
	struct hk_plan *plan = NULL;
	int rc;

	rc = hk_config_load(ctl->ctx, ctl->config_file, ha_config_error, ctl, &cfg);
	/* A problem of the configuration is one line each, at its place: said by then. */
	if (rc < 0) {
		if (rc != -EINVAL && rc != -ENOENT)
			ha_msg(ctl, HA_ERROR, "cannot read the configuration: %s; nothing was %s",
			       strerror(-rc), ctl->apply ? "changed" : "checked");
		return NULL;
	}
	if (hk_config_files(cfg, NULL) == 0) {
		/*
		 * Nothing to apply is a quiet success for --apply (a boot unit on
		 * a host without a configuration); for --check it is an error, so
		 * that a monitor never calls an unconfigured host healthy.
		 */
		ha_msg(ctl, ctl->apply ? HA_WARNING : HA_ERROR,
		       "no configuration: neither %s nor %s/*.conf is there%s", HK_CONFIG_FILE,
		       HK_CONFIG_DIR, ctl->apply ? "" : ": nothing to check");
		if (!ctl->apply) {
			hk_config_unref(cfg);
			return NULL;
		}
	}
	apply_section(ctl, cfg);
	rc = hk_plan_from_config(ctl->ctx, cfg, ha_config_error, ctl, &plan);
	if (rc < 0) {
		if (rc != -EINVAL)
			ha_msg(ctl, HA_ERROR,
			       "cannot resolve the configuration: %s; nothing was %s",
			       strerror(-rc), ctl->apply ? "changed" : "checked");
		plan = NULL;
	}
	hk_config_unref(cfg);
	return plan;
}

static void json_place(struct hkt_json *j, const struct hk_plan_item *it)
{
	hkt_json_string(j, "path", it->path);
	if (it->file) {
		hkt_json_string(j, "file", it->file);
		hkt_json_u64(j, "line", it->line);
	} else {
		hkt_json_null(j, "file");
		hkt_json_null(j, "line");
	}
}

void ha_json_plan_item(struct hkt_json *j, const struct hk_plan_item *it)
{
	hkt_json_open_object(j, NULL);
	hkt_json_string(j, "item", it->item);
	hkt_json_string(j, "value", it->value);
	hkt_json_string(j, "why", it->why);
	json_place(j, it);
	hkt_json_close_object(j);
}

static void json_str_or_null(struct hkt_json *j, const char *key, const char *s)
{
	if (s)
		hkt_json_string(j, key, s);
	else
		hkt_json_null(j, key);
}

/* "(FILE:LINE)" of an item, or "" for an implied one. */
static void place(const struct hk_plan_item *it, char *buf, size_t sz)
{
	if (it->file)
		snprintf(buf, sz, " (%s:%u)", it->file, it->line);
	else
		snprintf(buf, sz, " (implied)");
}

/* A value for a text line: "(none)" where there is nothing. */
static const char *shown(const char *s)
{
	return s && *s ? s : "(none)";
}

/* --check */

struct diff {
	const struct hk_plan_item *it;
	char *current;
};

static int run_check(struct hugeadm_ctl *ctl, struct hk_plan *plan)
{
	size_t n = hk_plan_items(plan, NULL), n_diff = 0;
	struct diff *diffs = calloc(n + 1, sizeof(*diffs));
	bool failed = false;

	if (!diffs) {
		ha_msg(ctl, HA_ERROR, "out of memory");
		return HK_EXIT_FAILURE;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hk_plan_item *it = hk_plan_item_at(plan, i);
		char *cur = NULL;
		int rc = hk_plan_item_check(ctl->ctx, it, &cur);

		if (rc < 0) {
			ha_msg(ctl, HA_ERROR, "%s: cannot read %s: %s", it->item, it->path,
			       strerror(-rc));
			failed = true;
		} else if (rc == 0) {
			diffs[n_diff].it = it;
			diffs[n_diff++].current = cur;
			continue;
		}
		free(cur);
	}
	if (ctl->json) {
		struct hkt_json j;

		hkt_json_init(&j, stdout);
		hkt_json_open_object(&j, NULL);
		hkt_json_bool(&j, "drifted", n_diff > 0);
		hkt_json_u64(&j, "items", n);
		hkt_json_open_array(&j, "differences");
		for (size_t i = 0; i < n_diff; i++) {
			hkt_json_open_object(&j, NULL);
			hkt_json_string(&j, "item", diffs[i].it->item);
			json_str_or_null(&j, "current", diffs[i].current);
			hkt_json_string(&j, "wanted", diffs[i].it->value);
			json_place(&j, diffs[i].it);
			hkt_json_close_object(&j);
		}
		hkt_json_close_array(&j);
		hkt_json_close_object(&j);
		hkt_json_end(&j);
	} else {
		for (size_t i = 0; i < n_diff; i++) {
			char where[PATH_MAX + 32];

			place(diffs[i].it, where, sizeof(where));
			printf("drift: %s: is %s, wanted %s%s\n", diffs[i].it->item,
			       shown(diffs[i].current), diffs[i].it->value, where);
		}
		if (!n_diff && !failed)
			printf("the machine matches the configuration (%zu %s)\n", n,
			       hkt_plural(n, "item", "items"));
	}
	for (size_t i = 0; i < n_diff; i++)
		free(diffs[i].current);
	free(diffs);
	if (failed)
		return HK_EXIT_FAILURE;
	return n_diff ? HA_EXIT_DRIFT : HK_EXIT_SUCCESS;
}

/* --apply */

struct change {
	const struct hk_plan_item *it;
	size_t kept; /* it is item kept - 1 of the run's kept plan (0: one of the plan run) */
	char *from, *to;
	bool is_short, failed;
	bool put_back; /* --strict took it back: no change */
};

/* A word for a shell line: as it is when plain, else in single quotes. */
static void shell_word(const char *s)
{
	if (*s &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+=,:@%") ==
		    strlen(s)) {
		fputs(s, stdout);
		return;
	}
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

static void dry_line(void *data, const char *path, const char *value)
{
	(void)data;
	fputs("echo ", stdout);
	shell_word(value);
	fputs(" > ", stdout);
	shell_word(path);
	putchar('\n');
}

/* --dry-run --json: the writes are told in the document, not as shell lines. */
static void dry_quiet(void *data, const char *path, const char *value)
{
	(void)data;
	(void)path;
	(void)value;
}

/* A dry run's directory or mount: the shell lines that would make it (none in --json). */
static void dry_make(const struct hugeadm_ctl *ctl, const struct hk_plan_item *it)
{
	if (!ctl->dry_run || ctl->json)
		return;
	if (it->kind == HK_PLAN_MKDIR) {
		fputs("mkdir -m 0755 ", stdout);
		shell_word(it->path);
		putchar('\n');
	} else if (it->kind == HK_PLAN_MOUNT) {
		fputs("mkdir -p ", stdout);
		shell_word(it->path);
		fputs("\nmount -t hugetlbfs -o ", stdout);
		shell_word(it->value);
		fputs(" none ", stdout);
		shell_word(it->path);
		putchar('\n');
	}
}

/*
 * Before a pool's minimum grows: one warning when the free lists hold fewer
 * pages than the grow needs (its surplus pages become persistent first).
 */
static void warn_grow(struct hugeadm_ctl *ctl, const struct hk_plan_item *it, const char *cur)
{
	struct hk_pool *pool;
	uint64_t have;

	if (it->kind != HK_PLAN_WRITE || it->field != HK_POOL_MINIMUM || !cur || !*cur ||
	    strspn(cur, "0123456789") != strlen(cur) || hk_parse_size(cur, &have) < 0 ||
	    it->number <= have || hk_pool_read(ctl->ctx, it->page_size, &pool) < 0)
		return;
	ha_warn_grow(ctl, pool, it->node, have, it->number);
	hk_pool_unref(pool);
}

/*
 * A write failed, or (--strict) a pool came up short: libhugekit's executor
 * put back every file this run wrote, newest first (HK_RUN_PUT_BACK, its one
 * put-back; done: how many, error: its -errno). Said, and the changes
 * marked; -1 when not everything could be (a failure, whatever stopped it).
 */
static int say_put_back(struct hugeadm_ctl *ctl, struct change *ch, size_t n_ch, const char *why,
			size_t done, int error)
{
	bool demoted = false;

	for (size_t i = 0; i < n_ch; i++) {
		demoted |= !ch[i].failed && ch[i].it->field == HK_POOL_DEMOTE;
		ch[i].put_back = ch[i].it->field != HK_POOL_DEMOTE;
	}
	if (error < 0) {
		ha_msg(ctl, HA_ERROR, "%s: not every change could be put back (see above)", why);
		return -1;
	}
	if (done)
		ha_msg(ctl, HA_ERROR, "%s: %zu %s put back as %s before this run%s", why, done,
		       hkt_plural(done, "file", "files"), done == 1 ? "it was" : "they were",
		       demoted ? " (demoted pages stay split)" : "");
	return 0;
}

static void print_apply(struct hugeadm_ctl *ctl, const struct change *ch, size_t n_ch)
{
	size_t n_changed = 0;

	for (size_t i = 0; i < n_ch; i++)
		n_changed += !ch[i].failed && !ch[i].put_back;
	if (ctl->json) {
		struct hkt_json j;

		hkt_json_init(&j, stdout);
		hkt_json_open_object(&j, NULL);
		hkt_json_bool(&j, "changed", n_changed > 0);
		hkt_json_open_array(&j, "changes");
		for (size_t i = 0; i < n_ch; i++) {
			if (ch[i].failed || ch[i].put_back)
				continue;
			hkt_json_open_object(&j, NULL);
			hkt_json_string(&j, "item", ch[i].it->item);
			json_str_or_null(&j, "from", ch[i].from);
			hkt_json_string(&j, "to", ch[i].to ? ch[i].to : ch[i].it->value);
			json_place(&j, ch[i].it);
			hkt_json_close_object(&j);
		}
		hkt_json_close_array(&j);
		hkt_json_open_array(&j, "short");
		for (size_t i = 0; i < n_ch; i++) {
			if (!ch[i].is_short)
				continue;
			hkt_json_open_object(&j, NULL);
			hkt_json_string(&j, "item", ch[i].it->item);
			hkt_json_string(&j, "wanted", ch[i].it->value);
			json_str_or_null(&j, "reached", ch[i].to);
			hkt_json_close_object(&j);
		}
		hkt_json_close_array(&j);
		hkt_json_open_array(&j, "failed");
		for (size_t i = 0; i < n_ch; i++)
			if (ch[i].failed)
				hkt_json_string(&j, NULL, ch[i].it->item);
		hkt_json_close_array(&j);
		hkt_json_open_array(&j, "put_back");
		for (size_t i = 0; i < n_ch; i++)
			if (ch[i].put_back && !ch[i].failed)
				hkt_json_string(&j, NULL, ch[i].it->item);
		hkt_json_close_array(&j);
		/* A dry run's changes are the ones --apply would make. */
		if (ctl->dry_run)
			hkt_json_bool(&j, "dry_run", true);
		hkt_json_close_object(&j);
		hkt_json_end(&j);
		return;
	}
	for (size_t i = 0; i < n_ch; i++) {
		char where[PATH_MAX + 32];

		if (ch[i].failed || ch[i].put_back)
			continue;
		place(ch[i].it, where, sizeof(where));
		printf("changed: %s: %s -> %s%s\n", ch[i].it->item, shown(ch[i].from),
		       ch[i].to ? ch[i].to : ch[i].it->value, where);
	}
	if (!n_changed && !n_ch)
		printf("nothing to change: the machine matches the configuration\n");
}

/* One --apply: the changes so far, told by libhugekit's executor step by step. */
struct apply_run {
	struct hugeadm_ctl *ctl;
	struct change *ch;
	size_t n_ch;
	bool writing; /* the step after WRITE: a write's outcome, not a read's */
	bool failed;
	/* Items by name (copied: an item planned again lives during its step only). */
	char stop[256];	      /* why no further item is written: a failure, or --strict */
	char last_short[256]; /* the last item that came up short */
	/*
	 * The plan run, and the items of a unit the executor planned again (a
	 * recommended shmmax, from the pools the writes left), which live
	 * during their step only: copied here.
	 */
	const struct hk_plan *plan;
	struct hk_plan *kept;
	/* libhugekit put back what the run wrote (HK_RUN_PUT_BACK): how many, its error. */
	bool put_back;
	size_t n_put_back;
	int put_back_error;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/*
 * The change's item: the plan's, or a copy of one planned again (found
 * again once the run is over, as the copies' array moves).
 */
static void note_item(struct apply_run *r, const struct hk_run_step *st)
{
	struct change *c = &r->ch[r->n_ch];
	int k;

	c->it = st->item;
	c->kept = 0;
	if (st->plan == r->plan)
		return;
	k = hk_plan_add(r->kept, st->item);
	if (k < 0) {
		ha_msg(r->ctl, HA_ERROR, "out of memory");
		r->failed = true;
		return;
	}
	c->kept = (size_t)k + 1;
}

/* About to write (after the swap the run adds for a pool that grows): said, warned, a dry run's mkdir or mount printed. */
static void step_write(struct apply_run *r, const struct hk_run_step *st)
{
	struct hugeadm_ctl *ctl = r->ctl;
	const struct hk_plan_item *it = st->item;

	note_item(r, st);
	r->ch[r->n_ch].from = dup_or_null(st->before);
	r->writing = true;
	ha_msg(ctl, HA_INFO, "%s: %s -> %s (%s)", it->item, st->before ? st->before : "(none)",
	       it->value, it->path);
	warn_grow(ctl, it, st->before);
	dry_make(ctl, it);
}

/* A step that failed: said; the run stops there (and puts back). */
static void step_failed(struct apply_run *r, const struct hk_run_step *st)
{
	struct hugeadm_ctl *ctl = r->ctl;
	const struct hk_plan_item *it = st->item;

	if (!r->writing)
		note_item(r, st);
	if (!r->writing && it->kind == HK_PLAN_MOUNT && st->error == -EBUSY)
		ha_msg(ctl, HA_ERROR,
		       "%s: mounted with other options (%s); unmount it and run hugeadm "
		       "again: nothing mounted over it",
		       it->item, st->before);
	else if (!r->writing)
		ha_msg(ctl, HA_ERROR, "%s: cannot read %s: %s", it->item, it->path,
		       strerror(-st->error));
	else if (it->kind == HK_PLAN_MOUNT && st->error == -EOPNOTSUPP)
		/* Before any directory is looked at: a tree's mount would be the host's. */
		ha_msg(ctl, HA_ERROR,
		       "%s: mounts are made on the running system only, not in a --sysroot tree",
		       it->item);
	else if (it->kind == HK_PLAN_MOUNT && st->error == -ENOMEM)
		ha_msg(ctl, HA_ERROR, "%s: out of memory", it->item);
	else if (it->kind != HK_PLAN_MOUNT)
		ha_msg(ctl, HA_ERROR, "%s: cannot write %s to %s: %s", it->item, it->value,
		       it->path, strerror(-st->error));
	r->ch[r->n_ch++].failed = r->failed = true;
	snprintf(r->stop, sizeof(r->stop), "%s", it->item);
}

/*
 * libhugekit's executor tells each step: already so, held back (a pool's
 * maximum after its minimum came up short: left for the next run), written,
 * short (said; with --strict the executor stops after its unit and puts all
 * back, demoted pages excepted: they cannot be put back together), failed,
 * put back.
 */
static int config_step(void *data, const struct hk_run_step *st)
{
	struct apply_run *r = data;
	const struct hk_plan_item *it = st->item;
	struct change *c = &r->ch[r->n_ch];

	switch (st->kind) {
	case HK_RUN_STEP_ALREADY:
		ha_msg(r->ctl, HA_INFO, "%s: already %s", it->item, it->value);
		return 0;
	case HK_RUN_STEP_HELD:
		ha_msg(r->ctl, HA_WARNING,
		       "%s: not changed: the pool's minimum came up short (run hugeadm "
		       "--apply again when it can be had)",
		       it->item);
		return 0;
	case HK_RUN_STEP_WRITE:
		step_write(r, st);
		return 0;
	case HK_RUN_STEP_BEGIN:
	case HK_RUN_STEP_AGAIN:
	case HK_RUN_STEP_END:
		return 0; /* a configuration's units say nothing of their own */
	case HK_RUN_STEP_SWAP:
	case HK_RUN_STEP_UNSWAP:
		if (ha_swap_step(r->ctl, st) == 0)
			return 0;
		r->failed = true;
		snprintf(r->stop, sizeof(r->stop), "%s", it->item);
		return 1;
	case HK_RUN_STEP_PUT_BACK:
		/* Said once the run has returned, after why it stopped. */
		r->put_back = true;
		r->n_put_back = st->put_back;
		r->put_back_error = st->error;
		return 0;
	case HK_RUN_STEP_FAILED:
		break;
	case HK_RUN_STEP_DONE:
	case HK_RUN_STEP_SHORT:
		c->to = dup_or_null(st->reached);
		break;
	}
	if (st->kind == HK_RUN_STEP_FAILED) {
		step_failed(r, st);
		r->writing = false;
		return 1;
	}
	r->writing = false;
	r->n_ch++;
	if (st->kind == HK_RUN_STEP_DONE)
		return 0;
	c->is_short = true;
	snprintf(r->last_short, sizeof(r->last_short), "%s", it->item);
	ha_msg(r->ctl, HA_WARNING, "%s: asked for %s, the kernel reached %s", it->item, it->value,
	       st->reached ? st->reached : "?");
	return 0;
}

/* All or nothing (--strict: a shortfall too). */
static unsigned run_flags(const struct hugeadm_ctl *ctl)
{
	return HK_RUN_PUT_BACK | (ctl->strict ? HK_RUN_STRICT : 0) | (ctl->hard ? HK_RUN_HARD : 0) |
	       (ctl->obey_mempolicy ? HK_RUN_MEMPOLICY : 0);
}

static int run_apply(struct hugeadm_ctl *ctl, struct hk_plan *plan)
{
	size_t n = hk_plan_items(plan, NULL);
	/* One more: a recommended shmmax planned again may have an item where the plan had none. */
	struct apply_run r = {.ctl = ctl, .ch = calloc(n + 1, sizeof(*r.ch)), .plan = plan};
	bool short_stop;
	int rc;

	if (ha_swap_validate(ctl) < 0) {
		free(r.ch);
		return HK_EXIT_FAILURE;
	}
	if (!r.ch || hk_plan_new(&r.kept) < 0 ||
	    hk_run_new(ctl->ctx, run_flags(ctl), &ctl->run) < 0 || ha_run_swap(ctl) < 0) {
		free(r.ch);
		hk_plan_unref(r.kept);
		ha_msg(ctl, HA_ERROR, "out of memory");
		return HK_EXIT_FAILURE;
	}
	ha_dry_run_header(ctl);
	if (ctl->dry_run)
		hk_set_dry_run(ctl->ctx, ctl->json ? dry_quiet : dry_line, ctl);
	/*
	 * A configuration's plan has no pool changes; its recommended shmmax is
	 * computed again where a kernel answers (note_item keeps its item).
	 */
	rc = hk_run_plan(ctl->run, plan, config_step, &r);
	hk_set_dry_run(ctl->ctx, NULL, NULL);
	for (size_t i = 0; i < r.n_ch; i++)
		if (r.ch[i].kept)
			r.ch[i].it = hk_plan_item_at(r.kept, r.ch[i].kept - 1);
	/* What stops the run outside a step (memory): said, and put back all the same. */
	if (rc < 0 && !r.stop[0]) {
		ha_msg(ctl, HA_ERROR, "cannot run the plan: %s", strerror(-rc));
		r.failed = true;
		snprintf(r.stop, sizeof(r.stop), "the plan");
	}
	/* Put back with no failure: --strict, after the unit that came up short. */
	short_stop = r.put_back && !r.failed;
	if (short_stop)
		snprintf(r.stop, sizeof(r.stop), "%s", r.last_short[0] ? r.last_short : "the plan");
	if (r.put_back) {
		char why[512];

		snprintf(why, sizeof(why), "%s: %s", r.stop,
			 r.failed ? "failed" : "came up short (--strict)");
		if (say_put_back(ctl, r.ch, r.n_ch, why, r.n_put_back, r.put_back_error) < 0)
			r.failed = true;
	}
	/* Nothing to put back (a demote first, whose pages stay split): the stop said all the same. */
	if (short_stop && !r.n_put_back && !r.failed)
		ha_msg(ctl, HA_ERROR, "%s: came up short (--strict): nothing after it was written",
		       r.stop);
	if (!ctl->dry_run || ctl->json)
		print_apply(ctl, r.ch, r.n_ch);
	for (size_t i = 0; i < r.n_ch; i++) {
		free(r.ch[i].from);
		free(r.ch[i].to);
	}
	free(r.ch);
	hk_plan_unref(r.kept);
	hk_run_unref(ctl->run);
	ctl->run = NULL;
	if (r.failed)
		return HK_EXIT_FAILURE;
	/* Exit 2 where --strict stopped the run (and it was all put back), as the options. */
	return short_stop ? HA_EXIT_SHORT : HK_EXIT_SUCCESS;
}

int ha_config_run(struct hugeadm_ctl *ctl)
{
	struct hk_plan *plan;
	int lock_fd = -1, rc;

	/* Resolved under the lock: the plan is checked against the state it changes. */
	if (ctl->apply && ha_lock(ctl, &lock_fd) < 0)
		return HK_EXIT_FAILURE;
	plan = load_plan(ctl);
	if (!plan)
		rc = HK_EXIT_FAILURE;
	else
		rc = ctl->apply ? run_apply(ctl, plan) : run_check(ctl, plan);
	hk_plan_unref(plan);
	hk_unlock(lock_fd);
	return rc;
}
