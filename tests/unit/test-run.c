// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The executor's journal (lib/core/run.c) on fixture trees: every item
 * written through a run is put back as it was, byte for byte, newest first;
 * a write that failed is not written back; nothing is kept in a dry run;
 * what the caller made (hk_run_record) is taken away again. The executor
 * (hk_run_items) tells each step: already so, written, short, held back,
 * failed; a dry run pretends its directories. hk_run_plan runs a whole plan
 * unit by unit, each between BEGIN and END.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "tree.h"

#define NR "proc/sys/vm/nr_hugepages"
#define OC "proc/sys/vm/nr_overcommit_hugepages"
#define THP "sys/kernel/mm/transparent_hugepage/enabled"
#define MFK "proc/sys/vm/min_free_kbytes"

/* The whole file, as a string (malloc'd). */
static char *slurp(const struct tree *t, const char *rel)
{
	char path[4096], *buf = calloc(1, 65536);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A plan of four writes: THP, a sysctl, a pool's minimum and its overcommit. */
static struct hk_plan *four_writes(const struct tree *t)
{
	struct hk_plan *plan;

	assert_int_equal(hk_plan_new(&plan), 0);
	assert_true(hk_plan_add_thp(t->ctx, plan, "enabled", "never", "test") >= 0);
	assert_true(hk_plan_add_sysctl(t->ctx, plan, HK_SYSCTL_MIN_FREE_KBYTES, 123456, "test") >=
		    0);
	assert_true(hk_plan_add_pool(t->ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_MINIMUM, 30, 0,
				     "test") >= 0);
	assert_true(hk_plan_add_pool(t->ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_OVERCOMMIT, 11, 0,
				     "test") >= 0);
	return plan;
}

static void test_put_back_every_write(void **state)
{
	const char *files[] = {THP, MFK, NR, OC};
	char *before[4];
	const struct hk_plan_item *items;
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	size_t n, done = 99;

	(void)state;
	tree_open(&t, "x86-1node");
	for (size_t i = 0; i < 4; i++)
		before[i] = slurp(&t, files[i]);
	plan = four_writes(&t);
	n = hk_plan_items(plan, &items);
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	for (size_t i = 0; i < n; i++) {
		int rc = hk_run_apply(run, &items[i], NULL);

		/* A tree does not act on a pool write: its counters read back as they were. */
		assert_true(rc == 0 || (rc == -EAGAIN && items[i].page_size));
	}
	/* A file written twice is kept once, with what it had before the first write. */
	assert_int_equal(hk_run_apply(run, &items[0], NULL), 0);
	assert_int_equal(hk_run_count(run), 4);
	for (size_t i = 0; i < 4; i++) {
		char *now = slurp(&t, files[i]);

		assert_string_not_equal(now, before[i]);
		free(now);
	}
	assert_int_equal(hk_run_put_back(run, &done), 0);
	assert_int_equal(done, 4);
	assert_int_equal(hk_run_count(run), 0);
	for (size_t i = 0; i < 4; i++) {
		char *now = slurp(&t, files[i]);

		/* Byte for byte: "always [madvise] never" back, not the word written. */
		assert_string_equal(now, before[i]);
		free(now);
		free(before[i]);
	}
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* A failed write changed nothing: kept, but not written back (done counts writes). */
static void test_failed_write_not_written_back(void **state)
{
	struct hk_plan_item bad;
	const struct hk_plan_item *items;
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	char path[4096], *thp0;
	size_t done = 99;

	(void)state;
	tree_open(&t, "x86-1node");
	thp0 = slurp(&t, THP);
	plan = four_writes(&t);
	hk_plan_items(plan, &items);
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	assert_int_equal(hk_run_apply(run, &items[0], NULL), 0);
	/* The sysctl's file made a directory: its write fails (EISDIR). */
	snprintf(path, sizeof(path), "%s/" MFK, t.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	bad = items[1];
	assert_true(hk_run_apply(run, &bad, NULL) < 0);
	assert_int_equal(hk_run_put_back(run, &done), 0);
	assert_int_equal(done, 1);
	{
		char *now = slurp(&t, THP);

		assert_string_equal(now, thp0);
		free(now);
	}
	free(thp0);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

static void dry(void *data, const char *path, const char *value)
{
	(*(int *)data)++;
	(void)path;
	(void)value;
}

static void test_dry_run_keeps_nothing(void **state)
{
	const struct hk_plan_item *items;
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	int lines = 0;
	size_t n, done = 99;

	(void)state;
	tree_open(&t, "x86-1node");
	plan = four_writes(&t);
	n = hk_plan_items(plan, &items);
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	hk_set_dry_run(t.ctx, dry, &lines);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(hk_run_apply(run, &items[i], NULL), 0);
	/* A dry run writes nothing: the lines are the plan's. */
	assert_int_equal(lines, 4);
	assert_int_equal(hk_run_count(run), 0);
	/* Nothing to put back: no line printed, nothing written. */
	assert_int_equal(hk_run_put_back(run, &done), 0);
	assert_int_equal(done, 0);
	assert_int_equal(lines, 4);
	hk_set_dry_run(t.ctx, NULL, NULL);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* A directory the run made is removed again; one that was there stays. */
static void test_mkdir_put_back(void **state)
{
	struct hk_plan_item made = {.size = sizeof(made),
				    .kind = HK_PLAN_MKDIR,
				    .item = "cgroup t.slice",
				    .path = "/sys/fs/cgroup/t.slice",
				    .value = "",
				    .node = HK_NODE_ALL};
	struct hk_plan_item there = made;
	struct hk_run *run;
	struct tree t;
	char path[4096];
	struct stat st;
	size_t done;

	(void)state;
	tree_open(&t, "x86-1node");
	fixture_write(t.dir, "sys/fs/cgroup/old.slice/x", "");
	there.path = "/sys/fs/cgroup/old.slice";
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	assert_int_equal(hk_run_apply(run, &made, NULL), 0);
	assert_int_equal(hk_run_apply(run, &there, NULL), 0);
	assert_int_equal(hk_run_count(run), 1);
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/t.slice", t.dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(hk_run_put_back(run, &done), 0);
	assert_int_equal(done, 1);
	assert_int_equal(stat(path, &st), -1);
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/old.slice", t.dir);
	assert_int_equal(stat(path, &st), 0);
	hk_run_unref(run);
	tree_close(&t);
}

/* What hk_run_items told, step by step. */
struct told {
	int kinds[16];
	size_t index[16], n;
	int error[16];
	char before[16][64];
	int stop_at; /* stop when told this kind (-1: never) with stop_rc */
	int stop_rc;
};

static int record(void *data, const struct hk_run_step *st)
{
	struct told *t = data;

	assert_true(t->n < 16);
	assert_int_equal(st->size, sizeof(*st));
	t->kinds[t->n] = st->kind;
	t->index[t->n] = st->index;
	t->error[t->n] = st->error;
	snprintf(t->before[t->n], sizeof(t->before[0]), "%s", st->before ? st->before : "-");
	t->n++;
	return (int)st->kind == t->stop_at ? t->stop_rc : 0;
}

static void assert_told(const struct told *t, const int *kinds, size_t n)
{
	assert_int_equal(t->n, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(t->kinds[i], kinds[i]);
}

/*
 * The executor: an item that reads as planned is not written; a pool's
 * minimum the tree does not act on comes up short and holds back its
 * overcommit; the return says a pool came up short.
 */
static void test_items_already_short_held(void **state)
{
	const int want[] = {HK_RUN_STEP_ALREADY, HK_RUN_STEP_WRITE, HK_RUN_STEP_DONE,
			    HK_RUN_STEP_WRITE,	 HK_RUN_STEP_SHORT, HK_RUN_STEP_HELD};
	const struct hk_plan_item *items;
	struct told told = {.stop_at = -1};
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	char *oc0, *oc;

	(void)state;
	tree_open(&t, "x86-1node");
	oc0 = slurp(&t, OC);
	fixture_write(t.dir, THP, "always madvise [never]\n");
	plan = four_writes(&t);
	hk_plan_items(plan, &items);
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	assert_int_equal(hk_run_items(run, items, 4, record, &told), 1);
	assert_told(&told, want, 6);
	assert_int_equal(told.index[0], 0);
	assert_int_equal(told.index[5], 3);
	/* WRITE tells what was there. */
	assert_string_not_equal(told.before[1], "-");
	oc = slurp(&t, OC);
	assert_string_equal(oc, oc0);
	/* Written: the sysctl and the pool's minimum; the THP knob was so already. */
	assert_int_equal(hk_run_count(run), 2);
	free(oc);
	free(oc0);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* What the last step of a kind wrote: its value, for the keep-maximum step. */
static char kept_value[32];

static int record_kept(void *data, const struct hk_run_step *st)
{
	if (st->kind == HK_RUN_STEP_WRITE && st->item->field == HK_POOL_OVERCOMMIT)
		snprintf(kept_value, sizeof(kept_value), "%s", st->item->value);
	return record(data, st);
}

/* The 2M pool's minimum 30 and overcommit 11 (maximum 41), for why. */
static struct hk_plan *min30_oc11(const struct tree *t, const char *why)
{
	struct hk_plan *plan;

	assert_int_equal(hk_plan_new(&plan), 0);
	assert_true(hk_plan_add_pool(t->ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_MINIMUM, 30, 0,
				     why) >= 0);
	assert_true(hk_plan_add_pool(t->ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_OVERCOMMIT, 11, 0,
				     why) >= 0);
	return plan;
}

/*
 * HK_RUN_KEEP_MAXIMUM: the pool (minimum 10, overcommit 10) asked for
 * minimum 30 and overcommit 11 (maximum 41) stays at 10 in a tree; the
 * overcommit that keeps 41 from 10 (31) is written at once, as a step of the
 * minimum's index, and the planned 11 is held back.
 */
static void test_items_keep_maximum(void **state)
{
	const struct hk_plan_item *items;
	struct told told = {.stop_at = -1};
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	char *oc;

	(void)state;
	tree_open(&t, "x86-1node");
	plan = min30_oc11(&t, "test");
	hk_plan_items(plan, &items);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS | HK_RUN_KEEP_MAXIMUM, &run), 0);
	assert_int_equal(hk_run_items(run, items, 2, record_kept, &told), 1);
	assert_int_equal(told.n, 5);
	assert_int_equal(told.kinds[0], HK_RUN_STEP_WRITE);
	assert_int_equal(told.kinds[1], HK_RUN_STEP_SHORT);
	assert_int_equal(told.kinds[2], HK_RUN_STEP_WRITE);
	assert_int_equal(told.index[2], 0);
	assert_true(told.kinds[3] == HK_RUN_STEP_DONE || told.kinds[3] == HK_RUN_STEP_SHORT);
	assert_int_equal(told.kinds[4], HK_RUN_STEP_HELD);
	assert_string_equal(kept_value, "31");
	oc = slurp(&t, OC);
	assert_string_equal(oc, "31");
	free(oc);
	hk_run_unref(run);
	/* HK_RUN_ALWAYS alone: the planned overcommit is written, nothing held. */
	memset(&told, 0, sizeof(told));
	told.stop_at = -1;
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	assert_int_equal(hk_run_items(run, items, 2, record, &told), 1);
	assert_int_equal(told.n, 4);
	assert_int_not_equal(told.kinds[3], HK_RUN_STEP_HELD);
	oc = slurp(&t, OC);
	assert_string_equal(oc, "11");
	free(oc);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* HK_RUN_ALWAYS writes what reads as planned too; fn's value stops the run. */
static void test_items_always_and_stop(void **state)
{
	const int always[] = {HK_RUN_STEP_WRITE, HK_RUN_STEP_DONE};
	const int stopped[] = {HK_RUN_STEP_ALREADY, HK_RUN_STEP_WRITE};
	const struct hk_plan_item *items;
	struct told told = {.stop_at = -1};
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	char *mfk0, *mfk;

	(void)state;
	tree_open(&t, "x86-1node");
	fixture_write(t.dir, THP, "always madvise [never]\n");
	plan = four_writes(&t);
	hk_plan_items(plan, &items);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	assert_int_equal(hk_run_items(run, items, 1, record, &told), 0);
	assert_told(&told, always, 2);
	assert_string_equal(told.before[0], "-");
	assert_int_equal(hk_run_count(run), 1);
	hk_run_unref(run);
	/* Stopped at the sysctl's WRITE: returned as is, nothing written. */
	mfk0 = slurp(&t, MFK);
	memset(&told, 0, sizeof(told));
	told.stop_at = HK_RUN_STEP_WRITE;
	told.stop_rc = 7;
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	assert_int_equal(hk_run_items(run, items, 4, record, &told), 7);
	assert_told(&told, stopped, 2);
	mfk = slurp(&t, MFK);
	assert_string_equal(mfk, mfk0);
	assert_int_equal(hk_run_count(run), 0);
	free(mfk);
	free(mfk0);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* A write that fails stops the run with its error; one that cannot be read fails before WRITE. */
static void test_items_failure_stops(void **state)
{
	const int write_failed[] = {HK_RUN_STEP_WRITE, HK_RUN_STEP_DONE, HK_RUN_STEP_WRITE,
				    HK_RUN_STEP_FAILED};
	const int read_failed[] = {HK_RUN_STEP_FAILED};
	const struct hk_plan_item *items;
	struct told told = {.stop_at = -1};
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	char path[4096];
	int rc;

	(void)state;
	tree_open(&t, "x86-1node");
	plan = four_writes(&t);
	hk_plan_items(plan, &items);
	/* The sysctl's file is unreadable as a value and unwritable: a directory. */
	snprintf(path, sizeof(path), "%s/" MFK, t.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	rc = hk_run_items(run, items, 4, record, &told);
	assert_true(rc < 0);
	assert_told(&told, write_failed, 4);
	assert_int_equal(told.error[3], rc);
	hk_run_unref(run);
	/* Compared first: it cannot be read, so it is not written. */
	memset(&told, 0, sizeof(told));
	told.stop_at = -1;
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	rc = hk_run_items(run, items + 1, 3, record, &told);
	assert_true(rc < 0);
	assert_told(&told, read_failed, 1);
	assert_int_equal(hk_run_count(run), 0);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

struct dry_lines {
	char text[8][160];
	size_t n;
};

static void dry_record(void *data, const char *path, const char *value)
{
	struct dry_lines *d = data;

	if (d->n < 8)
		snprintf(d->text[d->n++], sizeof(d->text[0]), "%s=%s", path, value);
}

/*
 * A dry run: a directory counts as made for the items under it (their lines
 * printed, nothing checked or made); a mount is told, not made; in a tree a
 * mount is refused.
 */
static void test_items_dry_run_pretends(void **state)
{
	const struct hk_plan_item items[] = {
		{.size = sizeof(struct hk_plan_item),
		 .kind = HK_PLAN_MKDIR,
		 .item = "cgroup t.slice",
		 .path = "/sys/fs/cgroup/t.slice",
		 .value = "",
		 .node = HK_NODE_ALL},
		{.size = sizeof(struct hk_plan_item),
		 .kind = HK_PLAN_CONTROLLER,
		 .item = "cgroup t.slice controller",
		 .path = "/sys/fs/cgroup/t.slice/cgroup.subtree_control",
		 .value = "hugetlb",
		 .node = HK_NODE_ALL},
		{.size = sizeof(struct hk_plan_item),
		 .kind = HK_PLAN_MOUNT,
		 .item = "mount /mnt/h",
		 .path = "/mnt/h",
		 .value = "pagesize=2M",
		 .node = HK_NODE_ALL},
	};
	const int dry_steps[] = {HK_RUN_STEP_WRITE, HK_RUN_STEP_DONE,  HK_RUN_STEP_WRITE,
				 HK_RUN_STEP_DONE,  HK_RUN_STEP_WRITE, HK_RUN_STEP_DONE};
	const int tree_mount[] = {HK_RUN_STEP_WRITE, HK_RUN_STEP_FAILED};
	struct told told = {.stop_at = -1};
	struct dry_lines lines = {0};
	struct hk_run *run;
	struct tree t;
	char path[4096];
	struct stat st;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	hk_set_dry_run(t.ctx, dry_record, &lines);
	assert_int_equal(hk_run_items(run, items, 3, record, &told), 0);
	hk_set_dry_run(t.ctx, NULL, NULL);
	assert_told(&told, dry_steps, 6);
	assert_int_equal(lines.n, 1);
	assert_string_equal(lines.text[0],
			    "/sys/fs/cgroup/t.slice/cgroup.subtree_control=+hugetlb");
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/t.slice", t.dir);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(hk_run_count(run), 0);
	/* Not dry, in a tree: a mount would be the host's. */
	memset(&told, 0, sizeof(told));
	told.stop_at = -1;
	assert_int_equal(hk_run_items(run, items + 2, 1, record, &told), -EOPNOTSUPP);
	assert_told(&told, tree_mount, 2);
	hk_run_unref(run);
	tree_close(&t);
}

/* What hk_run_plan told: each step's kind, unit and unit's items. */
struct units {
	int kinds[32], unit[32], error[32];
	size_t first[32], n_items[32], n;
	bool shmmax[32];
	int stop_kind, stop_rc; /* stop at the first DONE of this kind... (-1: never) */
	char oc_written[32];	/* the last overcommit WRITE's value */
	size_t put_back;	/* PUT_BACK's count */
};

static int record_units(void *data, const struct hk_run_step *st)
{
	struct units *u = data;

	assert_true(u->n < 32);
	assert_int_equal(st->size, sizeof(*st));
	u->kinds[u->n] = st->kind;
	u->unit[u->n] = st->unit;
	u->first[u->n] = st->first;
	u->n_items[u->n] = st->n;
	u->error[u->n] = st->error;
	u->shmmax[u->n] = st->shmmax != NULL;
	if (st->kind == HK_RUN_STEP_PUT_BACK)
		u->put_back = st->put_back;
	else
		assert_non_null(st->plan);
	if (st->kind == HK_RUN_STEP_WRITE && st->item->page_size &&
	    st->item->field == HK_POOL_OVERCOMMIT)
		snprintf(u->oc_written, sizeof(u->oc_written), "%s", st->item->value);
	u->n++;
	return (int)st->kind == u->stop_kind ? u->stop_rc : 0;
}

/*
 * hk_run_plan runs a plan unit by unit, each between BEGIN and END: the
 * items of one why (a second write of the same file begins a unit of its
 * own), and a recommended shmmax that planned no item (none in a tree whose
 * pools have no pages) still has its unit, in its place.
 */
static void test_plan_units(void **state)
{
	const int want[] = {
		HK_RUN_STEP_BEGIN, HK_RUN_STEP_WRITE, HK_RUN_STEP_DONE,	 HK_RUN_STEP_WRITE,
		HK_RUN_STEP_DONE,  HK_RUN_STEP_END,   HK_RUN_STEP_BEGIN, HK_RUN_STEP_WRITE,
		HK_RUN_STEP_DONE,  HK_RUN_STEP_END,   HK_RUN_STEP_BEGIN, HK_RUN_STEP_END,
		HK_RUN_STEP_BEGIN, HK_RUN_STEP_WRITE, HK_RUN_STEP_DONE,	 HK_RUN_STEP_END,
	};
	struct hk_shmmax_plan sp = {.size = sizeof(sp)};
	struct units u = {.stop_kind = -1};
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	/* No pool has a page: nothing to recommend. */
	for (size_t i = 0; i < 4; i++) {
		static const char *const files[] = {"nr_hugepages", "nr_overcommit_hugepages"};
		char f[128];

		snprintf(f, sizeof(f), "sys/kernel/mm/hugepages/hugepages-%skB/%s",
			 i < 2 ? "2048" : "1048576", files[i % 2]);
		fixture_write(t.dir, f, "0\n");
	}
	assert_int_equal(hk_plan_new(&plan), 0);
	/* One why, two files: one unit. The same THP file again: a unit of its own. */
	assert_true(hk_plan_add_thp(t.ctx, plan, "enabled", "never", "a") >= 0);
	assert_true(hk_plan_add_sysctl(t.ctx, plan, HK_SYSCTL_MIN_FREE_KBYTES, 123456, "a") >= 0);
	assert_true(hk_plan_add_thp(t.ctx, plan, "enabled", "madvise", "a") >= 0);
	assert_int_equal(hk_plan_add_recommended_shmmax(t.ctx, plan, NULL, "s", &sp), 0);
	assert_false(sp.added);
	assert_true(hk_plan_add_thp(t.ctx, plan, "defrag", "never", "b") >= 0);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	assert_int_equal(hk_run_plan(run, plan, record_units, &u), 0);
	assert_int_equal(u.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < u.n; i++)
		assert_int_equal(u.kinds[i], want[i]);
	assert_int_equal(u.unit[0], HK_RUN_UNIT_ITEMS);
	assert_int_equal(u.first[0], 0);
	assert_int_equal(u.n_items[0], 2);
	assert_int_equal(u.first[6], 2);
	assert_int_equal(u.n_items[6], 1);
	/* The shmmax unit: no item, where the next item is, its plan told. */
	assert_int_equal(u.unit[10], HK_RUN_UNIT_SHMMAX);
	assert_int_equal(u.n_items[10], 0);
	assert_int_equal(u.first[10], 3);
	assert_true(u.shmmax[10]);
	assert_int_equal(u.first[12], 3);
	assert_int_equal(u.unit[12], HK_RUN_UNIT_ITEMS);
	hk_run_unref(run);
	/* fn's value stops the run; END is told all the same, with it; no unit after. */
	memset(&u, 0, sizeof(u));
	u.stop_kind = HK_RUN_STEP_DONE;
	u.stop_rc = 7;
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	assert_int_equal(hk_run_plan(run, plan, record_units, &u), 7);
	assert_int_equal(u.n, 4);
	assert_int_equal(u.kinds[3], HK_RUN_STEP_END);
	assert_int_equal(u.error[3], 7);
	assert_int_equal(hk_run_plan(NULL, plan, NULL, NULL), -EINVAL);
	assert_int_equal(hk_run_plan(run, NULL, NULL, NULL), -EINVAL);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

/*
 * A short minimum holds back, and keeps the maximum of, its own unit's
 * overcommit only: another option's overcommit of the same pool after it
 * is written, and is not the maximum kept (41 from 30 + 11, not 80 from 50).
 */
static void test_plan_short_within_unit(void **state)
{
	struct units u = {.stop_kind = -1};
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	char *oc;

	(void)state;
	tree_open(&t, "x86-1node");
	plan = min30_oc11(&t, "a");
	assert_true(hk_plan_add_pool(t.ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_OVERCOMMIT, 50, 0,
				     "b") >= 0);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS | HK_RUN_KEEP_MAXIMUM, &run), 0);
	assert_int_equal(hk_run_plan(run, plan, record_units, &u), 1);
	/* a: BEGIN, WRITE, SHORT, the kept overcommit (WRITE, DONE), HELD, END; b: its write. */
	assert_int_equal(u.kinds[3], HK_RUN_STEP_WRITE);
	assert_int_equal(u.kinds[5], HK_RUN_STEP_HELD);
	assert_int_equal(u.kinds[6], HK_RUN_STEP_END);
	assert_int_equal(u.kinds[8], HK_RUN_STEP_WRITE);
	assert_int_equal(u.kinds[10], HK_RUN_STEP_END);
	assert_int_equal(u.n, 11);
	assert_string_equal(u.oc_written, "50");
	oc = slurp(&t, OC);
	assert_string_equal(oc, "50");
	free(oc);
	hk_run_unref(run);
	/* The kept overcommit is told as a WRITE: 31 (41 from the 10 reached). */
	memset(&u, 0, sizeof(u));
	u.stop_kind = HK_RUN_STEP_HELD;
	u.stop_rc = 3;
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS | HK_RUN_KEEP_MAXIMUM, &run), 0);
	assert_int_equal(hk_run_plan(run, plan, record_units, &u), 3);
	assert_string_equal(u.oc_written, "31");
	hk_run_unref(run);
	/* A configuration's rule (no HK_RUN_KEEP_MAXIMUM): held in every later unit. */
	memset(&u, 0, sizeof(u));
	u.stop_kind = -1;
	assert_int_equal(hk_run_new(t.ctx, 0, &run), 0);
	assert_int_equal(hk_run_plan(run, plan, record_units, &u), 1);
	assert_int_equal(u.n, 8);
	assert_int_equal(u.kinds[3], HK_RUN_STEP_HELD);
	assert_int_equal(u.kinds[6], HK_RUN_STEP_HELD);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

/*
 * HK_RUN_PUT_BACK: a run that stops early puts back all it wrote, before it
 * returns, and tells it once after the last END (fn's value stops it too);
 * without the flag, or in a dry run, nothing is put back or told.
 * HK_RUN_STRICT stops only where a kernel answers: a tree's pool that reads
 * short is no shortfall (the live rule is in tests/cli/faults.bats).
 */
static void test_plan_put_back(void **state)
{
	struct units u = {.stop_kind = -1};
	char *before_thp, *before_mfk, *now;
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;
	char path[4096];
	int rc;

	(void)state;
	tree_open(&t, "x86-1node");
	before_thp = slurp(&t, THP);
	plan = four_writes(&t);
	/* The pool's minimum cannot be written: a directory. THP and the sysctl were. */
	snprintf(path, sizeof(path), "%s/" NR, t.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	before_mfk = slurp(&t, MFK);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS | HK_RUN_PUT_BACK, &run), 0);
	rc = hk_run_plan(run, plan, record_units, &u);
	assert_true(rc < 0);
	assert_int_equal(u.kinds[u.n - 2], HK_RUN_STEP_END);
	assert_int_equal(u.kinds[u.n - 1], HK_RUN_STEP_PUT_BACK);
	assert_int_equal(u.error[u.n - 1], 0);
	assert_int_equal(u.put_back, 2);
	assert_int_equal(hk_run_count(run), 0);
	now = slurp(&t, THP);
	assert_string_equal(now, before_thp);
	free(now);
	now = slurp(&t, MFK);
	assert_string_equal(now, before_mfk);
	free(now);
	hk_run_unref(run);
	/* fn stops it: put back all the same. */
	memset(&u, 0, sizeof(u));
	u.stop_kind = HK_RUN_STEP_DONE;
	u.stop_rc = 5;
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS | HK_RUN_PUT_BACK, &run), 0);
	assert_int_equal(hk_run_plan(run, plan, record_units, &u), 5);
	assert_int_equal(u.kinds[u.n - 1], HK_RUN_STEP_PUT_BACK);
	assert_int_equal(u.put_back, 1);
	now = slurp(&t, THP);
	assert_string_equal(now, before_thp);
	free(now);
	hk_run_unref(run);
	/* Without the flag: what was written stays, for the caller to put back. */
	memset(&u, 0, sizeof(u));
	u.stop_kind = -1;
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	assert_true(hk_run_plan(run, plan, record_units, &u) < 0);
	assert_int_not_equal(u.kinds[u.n - 1], HK_RUN_STEP_PUT_BACK);
	assert_int_equal(hk_run_count(run), 2);
	assert_int_equal(hk_run_put_back(run, NULL), 0);
	hk_run_unref(run);
	hk_plan_unref(plan);
	/* A tree's short pool: HK_RUN_STRICT runs on to the end, nothing put back. */
	assert_int_equal(rmdir(path), 0);
	fixture_write(t.dir, NR, "10\n");
	plan = min30_oc11(&t, "a");
	assert_true(hk_plan_add_thp(t.ctx, plan, "enabled", "never", "b") >= 0);
	memset(&u, 0, sizeof(u));
	u.stop_kind = -1;
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_STRICT | HK_RUN_PUT_BACK, &run), 0);
	assert_int_equal(hk_run_plan(run, plan, record_units, &u), 1);
	assert_int_equal(u.kinds[u.n - 1], HK_RUN_STEP_END);
	assert_int_equal(u.first[u.n - 1], 2);
	hk_run_unref(run);
	hk_plan_unref(plan);
	free(before_thp);
	free(before_mfk);
	tree_close(&t);
}

/*
 * A caller's items carry their size (hk_plan_item.size): too small is
 * -EINVAL everywhere a caller's item is taken; a newer caller's (bigger)
 * is taken when what this library does not know is 0, else -E2BIG; an
 * array of them runs items->size apart; hk_plan_item_at() reads the
 * library's items whatever the caller's sizeof.
 */
struct newer_item {
	struct hk_plan_item it;
	uint64_t later; /* a field a later header would have */
};

static void test_item_size(void **state)
{
	static struct {
		struct hk_plan_item it;
		char zero[8192];
	} huge;
	const struct hk_plan_item *items;
	struct newer_item big[2] = {0};
	struct told told = {.stop_at = -1};
	struct hk_plan_item small;
	struct hk_plan *plan, *copy;
	struct hk_run *run;
	struct tree t;
	char *mfk;

	(void)state;
	tree_open(&t, "x86-1node");
	plan = four_writes(&t);
	assert_int_equal(hk_plan_items(plan, &items), 4);
	assert_ptr_equal(hk_plan_item_at(plan, 1), &items[1]);
	assert_null(hk_plan_item_at(plan, 4));
	assert_null(hk_plan_item_at(NULL, 0));
	assert_int_equal(items[2].size, sizeof(struct hk_plan_item));
	assert_int_equal(hk_plan_new(&copy), 0);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	small = items[1];
	small.size = HK_PLAN_ITEM_SIZE_MIN - 1;
	assert_int_equal(hk_plan_add(copy, &small), -EINVAL);
	assert_int_equal(hk_plan_item_check(t.ctx, &small, NULL), -EINVAL);
	assert_int_equal(hk_plan_item_apply(t.ctx, &small, NULL), -EINVAL);
	assert_int_equal(hk_run_apply(run, &small, NULL), -EINVAL);
	assert_int_equal(hk_run_record(run, &small), -EINVAL);
	assert_int_equal(hk_run_items(run, &small, 1, NULL, NULL), -EINVAL);
	small.size = 0;
	assert_int_equal(hk_plan_add(copy, &small), -EINVAL);
	/*
	 * A size no header reaches (a field left as garbage) is refused, not
	 * scanned: here what lies beyond is 0, so only the bound refuses it.
	 */
	huge.it = items[1];
	huge.it.size = sizeof(huge);
	assert_int_equal(hk_plan_add(copy, &huge.it), -E2BIG);
	assert_int_equal(hk_run_items(run, &huge.it, 1, NULL, NULL), -E2BIG);
	/* A newer caller's items: taken while the field this library lacks is 0. */
	for (size_t i = 0; i < 2; i++) {
		big[i].it = items[1 + i];
		big[i].it.size = sizeof(big[i]);
	}
	assert_int_equal(hk_plan_add(copy, &big[0].it), 0);
	assert_int_equal(hk_plan_item_at(copy, 0)->size, sizeof(struct hk_plan_item));
	assert_string_equal(hk_plan_item_at(copy, 0)->item, items[1].item);
	big[1].later = 1;
	assert_int_equal(hk_plan_add(copy, &big[1].it), -E2BIG);
	assert_int_equal(hk_run_items(run, &big[0].it, 2, record, &told), -E2BIG);
	assert_int_equal(told.n, 0);
	big[1].later = 0;
	/* Two items, sizeof(struct newer_item) apart: the sysctl, then the pool. */
	assert_int_equal(hk_run_items(run, &big[0].it, 2, record, &told), 1);
	assert_int_equal(told.n, 4);
	assert_int_equal(told.kinds[1], HK_RUN_STEP_DONE);
	assert_int_equal(told.kinds[3], HK_RUN_STEP_SHORT);
	mfk = slurp(&t, MFK);
	assert_string_equal(mfk, "123456");
	free(mfk);
	assert_int_equal(hk_run_put_back(run, NULL), 0);
	/* One by one too: kept (a copy of this library's size) and put back. */
	assert_int_equal(hk_run_apply(run, &big[0].it, NULL), 0);
	assert_int_equal(hk_run_count(run), 1);
	assert_int_equal(hk_run_put_back(run, NULL), 0);
	hk_run_unref(run);
	hk_plan_unref(copy);
	hk_plan_unref(plan);
	tree_close(&t);
}

/*
 * hk_run_apply of an HK_MOUNT_KEEP item with a mount at its path: left as it
 * is (0, nothing kept), never mounted on; without a mount there it would be
 * made (a tree cannot: -EOPNOTSUPP).
 */
static void test_apply_keep_mount(void **state)
{
	struct hk_mount_request rq = {.size = sizeof(rq),
				      .path = "/var/lib/hugetlbfs/pagesize-1GB",
				      .base = "/var/lib/hugetlbfs",
				      .mode = 0770,
				      .options = "pagesize=1073741824",
				      .flags = HK_MOUNT_KEEP};
	const struct hk_plan_item *items;
	struct hk_plan *plan;
	struct hk_run *run;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_plan_new(&plan), 0);
	assert_int_equal(hk_plan_add_mount(plan, &rq, 1 << 30, "test"), 0);
	rq.path = "/var/lib/hugetlbfs/pagesize-2MB";
	assert_int_equal(hk_plan_add_mount(plan, &rq, 2 << 20, "test"), 1);
	hk_plan_items(plan, &items);
	assert_int_equal(hk_run_new(t.ctx, HK_RUN_ALWAYS, &run), 0);
	assert_int_equal(hk_run_apply(run, &items[0], NULL), 0);
	assert_int_equal(hk_run_count(run), 0);
	assert_int_equal(hk_run_apply(run, &items[1], NULL), -EOPNOTSUPP);
	hk_run_unref(run);
	hk_plan_unref(plan);
	tree_close(&t);
}

static void test_bad_arguments(void **state)
{
	struct hk_run *run = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_run_new(NULL, 0, &run), -EINVAL);
	assert_int_equal(hk_run_new(t.ctx, 0x80, &run), -EINVAL);
	assert_null(run);
	assert_int_equal(hk_run_apply(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(hk_run_put_back(NULL, NULL), -EINVAL);
	assert_int_equal(hk_run_items(NULL, NULL, 0, NULL, NULL), -EINVAL);
	assert_int_equal(hk_run_count(NULL), 0);
	hk_run_unref(NULL);
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_back_every_write),
		cmocka_unit_test(test_failed_write_not_written_back),
		cmocka_unit_test(test_dry_run_keeps_nothing),
		cmocka_unit_test(test_mkdir_put_back),
		cmocka_unit_test(test_items_already_short_held),
		cmocka_unit_test(test_items_always_and_stop),
		cmocka_unit_test(test_items_keep_maximum),
		cmocka_unit_test(test_items_failure_stops),
		cmocka_unit_test(test_items_dry_run_pretends),
		cmocka_unit_test(test_plan_units),
		cmocka_unit_test(test_plan_short_within_unit),
		cmocka_unit_test(test_plan_put_back),
		cmocka_unit_test(test_item_size),
		cmocka_unit_test(test_apply_keep_mount),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
