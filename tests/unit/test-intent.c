// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The intent planner (lib/core/intent.c) on the two-node fixture tree: the
 * entries planned in the order of every plan (by setting, then as added),
 * each judged against the pools the entries before it leave; a memory
 * amount made whole pages; each problem told once, in its order, and
 * planning stopped there.
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
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "fixture.h"
#include "tree.h"

#define MIB (1024ULL * 1024)

/* The verdicts told, in their order. */
struct told {
	struct hk_intent_verdict v[16];
	char line[256];
	char target[16][128], options[16][256];
	size_t n;
	int stop_at; /* the verdict (0, 1, ...) the callback stops at with 42; -1: never */
};

static int tell(void *data, const struct hk_intent_verdict *v)
{
	struct told *t = data;

	assert_true(t->n < 16);
	assert_int_equal(v->size, sizeof(*v));
	t->v[t->n] = *v;
	if (v->line)
		snprintf(t->line, sizeof(t->line), "%s", v->line);
	t->v[t->n].line = NULL;
	snprintf(t->target[t->n], sizeof(t->target[0]), "%s", v->target ? v->target : "");
	snprintf(t->options[t->n], sizeof(t->options[0]), "%s", v->options ? v->options : "");
	t->v[t->n].target = t->target[t->n];
	t->v[t->n].options = t->options[t->n];
	return (int)t->n++ == t->stop_at ? 42 : 0;
}

static struct hk_intent_entry entry(enum hk_setting setting)
{
	return (struct hk_intent_entry){
		.size = sizeof(struct hk_intent_entry), .setting = setting, .why = "test"};
}

static struct hk_intent_entry pool(const char *size, enum hk_pool_field field, char sign,
				   uint64_t number)
{
	struct hk_intent_entry e = entry(HK_SETTING_POOL);

	e.page_size = size;
	e.field = field;
	e.sign = sign;
	e.number = number;
	return e;
}

/* Plan the entries on the tree: hk_plan_from_intent's value, the plan in *ret_plan. */
static int plan_entries(struct tree *t, const struct hk_intent_entry *e, size_t n,
			struct told *told, struct hk_plan **ret_plan)
{
	struct hk_intent *in = NULL;
	struct hk_pool_plan *pools = NULL;
	int rc;

	assert_int_equal(hk_intent_new(t->ctx, &in), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(hk_intent_add(in, &e[i]), (int)i);
	assert_int_equal(hk_plan_new(ret_plan), 0);
	assert_int_equal(hk_pool_plan_new(t->ctx, &pools), 0);
	rc = hk_plan_from_intent(in, *ret_plan, pools, tell, told);
	hk_pool_plan_unref(pools);
	assert_null(hk_intent_unref(in));
	return rc;
}

static const struct hk_plan_item *item(const struct hk_plan *plan, size_t i)
{
	const struct hk_plan_item *items;

	assert_true(i < hk_plan_items(plan, &items));
	return &items[i];
}

static void test_order(void **state)
{
	struct hk_intent_entry e[] = {
		entry(HK_SETTING_SHMMAX),
		pool("2MB", HK_POOL_MINIMUM, 0, 30),
		entry(HK_SETTING_THP),
		entry(HK_SETTING_SHM_GROUP),
		pool("DEFAULT", HK_POOL_MAXIMUM, 0, 40),
		entry(HK_SETTING_ZONE_MOVABLE),
	};
	static const size_t want[] = {5, 2, 1, 4, 0, 3};
	struct told told = {.stop_at = -1};
	struct tree t;
	struct hk_plan *plan;
	const struct hk_plan_item *items;
	char shmmax[32];

	(void)state;
	tree_open(&t, "x86-2node");
	fixture_write(t.dir, "proc/sys/kernel/shmmax", "1048576\n");
	e[1].flags = HK_INTENT_LEGACY_SIZE;
	e[2].knob = "enabled";
	e[2].value = "never";
	e[3].number = 7;
	e[5].number = 1;
	assert_int_equal(plan_entries(&t, e, 6, &told, &plan), 0);
	assert_int_equal(told.n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(told.v[i].entry, want[i]);
		assert_int_equal(told.v[i].problem, HK_INTENT_PLANNED);
	}
	/* This tree has no hugepages_treat_as_movable: planned, nothing to write. */
	assert_int_equal(told.v[0].n, 0);
	/*
	 * THP; the Minimum (24 -> 30) and the overcommit that keeps the
	 * Maximum; the Maximum (40): its overcommit and the Minimum again;
	 * shmmax; the group.
	 */
	assert_int_equal(hk_plan_items(plan, &items), 7);
	assert_int_equal(told.v[1].first, 0);
	assert_int_equal(told.v[1].n, 1);
	assert_string_equal(item(plan, 0)->item, "thp enabled");
	assert_int_equal(told.v[2].page_size, 2 * MIB);
	assert_int_equal(told.v[2].first, 1);
	assert_int_equal(told.v[2].n, 2);
	assert_int_equal(item(plan, 1)->field, HK_POOL_MINIMUM);
	assert_string_equal(item(plan, 1)->value, "30");
	assert_int_equal(told.v[3].first, 3);
	assert_int_equal(item(plan, 3)->field, HK_POOL_OVERCOMMIT);
	assert_string_equal(item(plan, 3)->value, "10");
	/* shmmax from the pools the entries before it leave: 40 2M pages and the 2 1G ones. */
	assert_int_equal(told.v[4].page_size, 0);
	snprintf(shmmax, sizeof(shmmax), "%llu", 40 * 2 * MIB + 2 * 1024 * MIB);
	assert_int_equal(told.v[4].shmmax.recommended, 40 * 2 * MIB + 2 * 1024 * MIB);
	assert_true(told.v[4].shmmax.added);
	assert_int_equal(told.v[4].first, 5);
	assert_int_equal(told.v[4].n, 1);
	assert_string_equal(item(plan, 5)->value, shmmax);
	assert_int_equal(told.v[5].first, 6);
	assert_string_equal(item(plan, 6)->value, "7");
	hk_plan_unref(plan);
	tree_close(&t);
}

/* One entry alone: the verdict told (the last one), and what planning returned. */
static int one(struct tree *t, struct hk_intent_entry e, struct told *told)
{
	struct hk_plan *plan;
	int rc;

	*told = (struct told){.stop_at = -1};
	rc = plan_entries(t, &e, 1, told, &plan);
	assert_int_equal(told->n, 1);
	hk_plan_unref(plan);
	return rc;
}

static void test_pool_verdicts(void **state)
{
	struct hk_intent_entry e = pool("2M", HK_POOL_MINIMUM, 0, 5 * MIB);
	static const int nodes[] = {0, 7};
	struct told told;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	/* A memory amount is whole pages: 5 MiB, two 2 MiB pages. */
	e.flags = HK_INTENT_BYTES;
	assert_int_equal(one(&t, e, &told), 0);
	assert_int_equal(told.v[0].pages, 2);
	assert_int_equal(told.v[0].n, 2); /* the Minimum, the overcommit that keeps the Maximum */
	e.number = MIB;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_LESS_THAN_A_PAGE);
	e.number = 0;
	assert_int_equal(one(&t, e, &told), 0);
	/* Without HK_INTENT_BYTES a number is pages. */
	e.flags = 0;
	e.number = 3;
	assert_int_equal(one(&t, e, &told), 0);
	assert_int_equal(told.v[0].pages, 3);
	/* A node the pool does not have, before anything else about the change. */
	e.nodes = nodes;
	e.n_nodes = 2;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_POOL_NO_NODE);
	assert_int_equal(told.v[0].pool.node, 7);
	/* Nodes and the memory policy both choose the nodes. */
	e.n_nodes = 1;
	e.flags = HK_INTENT_MEMPOLICY;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NODES_AND_MEMPOLICY);
	e.nodes = NULL;
	e.n_nodes = 0;
	assert_int_equal(one(&t, e, &told), 0);
	assert_int_equal(told.v[0].n, 2);
	/* Beyond MemTotal (49266176 kB: 24055 pages of 2 MiB). */
	e.flags = 0;
	e.number = 30000;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_POOL);
	assert_int_equal(told.v[0].pool.problem, HK_POOL_CHANGE_BEYOND_MEMORY);
	/* A Maximum beyond it is only a limit: planned, with the warning. */
	e.field = HK_POOL_MAXIMUM;
	assert_int_equal(one(&t, e, &told), 0);
	assert_true(told.v[0].pool.limit_beyond_memory);
	/* Sizes: none here, a grammar the entry does not use, DEFAULT. */
	e.page_size = "3M";
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_UNKNOWN_SIZE);
	assert_int_equal(told.v[0].page_size, 0);
	e.page_size = "1GB";
	e.number = 2;
	e.field = HK_POOL_MINIMUM;
	assert_int_equal(one(&t, e, &told), 0);
	assert_int_equal(told.v[0].page_size, 1024 * MIB);
	e.page_size = "2 M";
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_UNKNOWN_SIZE);
	tree_close(&t);
}

static void test_other_verdicts(void **state)
{
	struct hk_intent_entry e = entry(HK_SETTING_THP);
	static const int node1[] = {1};
	struct told told;
	struct tree t;
	char path[4096];

	(void)state;
	tree_open(&t, "x86-2node");
	e.knob = "enabled";
	e.value = "sometimes";
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NOT_A_MODE);
	assert_string_equal(told.line, "always [madvise] never");
	e.knob = "no_such_knob";
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NO_KERNEL);
	/* HVO: on this tree, then without its sysctl. */
	e = entry(HK_SETTING_HVO);
	e.number = 1;
	assert_int_equal(one(&t, e, &told), 0);
	snprintf(path, sizeof(path), "%s/proc/sys/vm/hugetlb_optimize_vmemmap", t.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NO_KERNEL);
	/* A demote of more pages than the 1G pool has free (1), on the pool and on node 1. */
	e = entry(HK_SETTING_DEMOTE);
	e.page_size = "1G";
	e.number = 2;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_DEMOTE);
	assert_int_equal(told.v[0].demote.problem, HK_DEMOTE_NOT_FREE);
	assert_int_equal(told.v[0].demote.free, 1);
	e.number = 1;
	assert_int_equal(one(&t, e, &told), 0);
	assert_int_equal(told.v[0].n, 1);
	e.nodes = node1;
	e.n_nodes = 1;
	assert_int_equal(one(&t, e, &told), 0);
	/* A demote size that is no smaller huge page size. */
	e = entry(HK_SETTING_DEMOTE_SIZE);
	e.page_size = "1G";
	e.number = 4096;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].demote.problem, HK_DEMOTE_NOT_SMALLER);
	e.number = 2 * MIB;
	assert_int_equal(one(&t, e, &told), 0);
	tree_close(&t);
}

/*
 * The sysctls no option of 2.23 had (HK_SETTING_SYSCTL: a configuration's),
 * and a shmmax given rather than recommended: an item each, with the value
 * given; a key that is not such a sysctl refused when added; a sysctl the
 * kernel lacks told.
 */
static void test_sysctls(void **state)
{
	struct hk_intent_entry e[] = {entry(HK_SETTING_SYSCTL), entry(HK_SETTING_SHMMAX)};
	static const char *const refused[] = {"vm.nr_hugepages",
					      "kernel.shmmax",
					      "vm.shmall",
					      "kernel..shmall",
					      "kernel.shmall.",
					      "",
					      NULL};
	struct hk_intent *in = NULL;
	struct hk_plan *plan;
	struct told told = {.stop_at = -1};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	e[0].knob = "kernel.shmall";
	e[0].number = 4096;
	e[1].flags = HK_INTENT_GIVEN;
	e[1].number = 1ULL << 30;
	/* Added SYSCTL first, planned in the order of every plan: shmmax first. */
	assert_int_equal(plan_entries(&t, e, 2, &told, &plan), 0);
	assert_int_equal(hk_plan_items(plan, NULL), 2);
	assert_string_equal(item(plan, 0)->item, "sysctl kernel.shmmax");
	assert_string_equal(item(plan, 0)->value, "1073741824");
	assert_string_equal(item(plan, 1)->item, "sysctl kernel.shmall");
	assert_string_equal(item(plan, 1)->path, "/proc/sys/kernel/shmall");
	assert_string_equal(item(plan, 1)->value, "4096");
	hk_plan_unref(plan);
	/* The fixture has no vm.compaction_proactiveness (Linux 5.9). */
	e[0].knob = "vm.compaction_proactiveness";
	assert_int_equal(one(&t, e[0], &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NO_KERNEL);
	assert_int_equal(hk_intent_new(t.ctx, &in), 0);
	for (size_t i = 0; refused[i]; i++) {
		e[0].knob = refused[i];
		assert_int_equal(hk_intent_add(in, &e[0]), -EINVAL);
	}
	e[0].knob = NULL;
	assert_int_equal(hk_intent_add(in, &e[0]), -EINVAL);
	assert_null(hk_intent_unref(in));
	tree_close(&t);
}

/*
 * A cgroup's limits (HK_SETTING_CGROUP, a configuration's [cgroup]): the
 * directories from the top, each parent's controller first, each once in
 * the plan, those the entry did not name "implied"; the limit in whole
 * pages of a size of the machine; a name that could leave the controller's
 * root refused when added; no controller told.
 */
static void test_cgroups(void **state)
{
	struct hk_intent_entry e[] = {entry(HK_SETTING_CGROUP), entry(HK_SETTING_CGROUP)};
	static const char *const names[] = {"/a", "a/../b", "a//b",  "a/", "",
					    "..", "a\nb",   "a/\tb", NULL};
	static const char *const items[][3] = {
		{"cgroup / +hugetlb", "/sys/fs/cgroup/cgroup.subtree_control", "implied"},
		{"cgroup a", "/sys/fs/cgroup/a", "implied"},
		{"cgroup a +hugetlb", "/sys/fs/cgroup/a/cgroup.subtree_control", "implied"},
		{"cgroup a/b", "/sys/fs/cgroup/a/b", "test"},
		{"cgroup a/b hugetlb.2MB.max", "/sys/fs/cgroup/a/b/hugetlb.2MB.max", "test"},
		{"cgroup a hugetlb.1GB.rsvd.max", "/sys/fs/cgroup/a/hugetlb.1GB.rsvd.max", "test"},
	};
	struct hk_intent *in = NULL;
	struct hk_plan *plan;
	struct told told = {.stop_at = -1};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	e[0].sub = "a/b";
	e[0].page_size = "2M";
	e[0].knob = "max";
	e[0].number = 8 * MIB;
	/* No hugetlb controller on the tree yet. */
	assert_int_equal(one(&t, e[0], &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NO_KERNEL);
	fixture_write(t.dir, "sys/fs/cgroup/cgroup.controllers", "memory hugetlb pids\n");
	e[1] = e[0];
	e[1].sub = "a";
	e[1].page_size = "1G";
	e[1].knob = "rsvd.max";
	e[1].value = "max";
	told = (struct told){.stop_at = -1};
	assert_int_equal(plan_entries(&t, e, 2, &told, &plan), 0);
	assert_int_equal(hk_plan_items(plan, NULL), 6);
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(item(plan, i)->item, items[i][0]);
		assert_string_equal(item(plan, i)->path, items[i][1]);
		assert_string_equal(item(plan, i)->why, items[i][2]);
	}
	assert_int_equal(item(plan, 0)->kind, HK_PLAN_CONTROLLER);
	assert_int_equal(item(plan, 3)->kind, HK_PLAN_MKDIR);
	assert_string_equal(item(plan, 4)->value, "8388608");
	assert_int_equal(item(plan, 4)->page_size, 2 * MIB);
	assert_string_equal(item(plan, 5)->value, "max");
	/* The second entry's items: only its limit (its directory is there already). */
	assert_int_equal(told.v[1].first, 5);
	assert_int_equal(told.v[1].n, 1);
	hk_plan_unref(plan);
	e[0].number = 3 * MIB;
	assert_int_equal(one(&t, e[0], &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NOT_WHOLE_PAGES);
	e[0].page_size = "4M";
	assert_int_equal(one(&t, e[0], &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_UNKNOWN_SIZE);
	assert_int_equal(hk_intent_new(t.ctx, &in), 0);
	for (size_t i = 0; names[i]; i++) {
		e[1].sub = names[i];
		assert_int_equal(hk_intent_add(in, &e[1]), -EINVAL);
	}
	/* A name longer than a path: refused whole, never checked cut. */
	{
		char *longname = malloc(4200);

		assert_non_null(longname);
		memset(longname, 'a', 4094);
		snprintf(longname + 4094, 4200 - 4094, "/../../etc");
		e[1].sub = longname;
		assert_int_equal(hk_intent_add(in, &e[1]), -EINVAL);
		free(longname);
	}
	e[1].sub = "a";
	e[1].knob = "current";
	assert_int_equal(hk_intent_add(in, &e[1]), -EINVAL);
	e[1].knob = "max";
	e[1].value = "none";
	assert_int_equal(hk_intent_add(in, &e[1]), -EINVAL);
	assert_null(hk_intent_unref(in));
	tree_close(&t);
}

/*
 * A mount of one page size (a configuration's [mount]): at base itself,
 * made on an empty mount point (no HK_MOUNT_KEEP), its limits as given or
 * a percentage of the pool; a percentage above 100, or one for the
 * options' layout of every size, refused when added.
 */
static void test_one_mount(void **state)
{
	struct hk_intent_entry e = entry(HK_SETTING_MOUNT);
	struct hk_intent *in = NULL;
	struct hk_plan *plan;
	struct told told = {.stop_at = -1};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	e.base = "/mnt/one";
	e.page_size = "1G";
	e.uid = 65534;
	e.mode = 01777;
	e.flags = HK_INTENT_MAX_PERCENT;
	e.max_size = 50;
	e.min_size = 1ULL << 30;
	assert_int_equal(plan_entries(&t, &e, 1, &told, &plan), 0);
	assert_int_equal(hk_plan_items(plan, NULL), 1);
	assert_string_equal(item(plan, 0)->item, "mount /mnt/one");
	assert_string_equal(item(plan, 0)->value,
			    "pagesize=1073741824,size=50%,min_size=1073741824,"
			    "uid=65534,gid=0,mode=01777,nosuid,nodev");
	assert_int_equal(item(plan, 0)->flags & HK_MOUNT_KEEP, 0);
	assert_string_equal(told.target[0], "/mnt/one");
	hk_plan_unref(plan);
	e.min_size = 1ULL << 20;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NOT_WHOLE_PAGES);
	assert_int_equal(hk_intent_new(t.ctx, &in), 0);
	e.max_size = 101;
	assert_int_equal(hk_intent_add(in, &e), -EINVAL);
	e.max_size = 50;
	e.page_size = NULL;
	assert_int_equal(hk_intent_add(in, &e), -EINVAL);
	assert_null(hk_intent_unref(in));
	tree_close(&t);
}

/*
 * A pool's state (HK_INTENT_STATE, a configuration's [pool]): an item for
 * each limit said, per node too; a maximum below the minimum it leaves, a
 * gigantic pool's maximum that is not its minimum, a node the pool does
 * not have, told; what cannot be said refused when added.
 */
static void test_pool_state(void **state)
{
	struct hk_intent_entry e = entry(HK_SETTING_POOL);
	static const int nodes[] = {0, 1}, node7[] = {7};
	static const uint64_t pages[] = {10, 4};
	struct hk_intent *in = NULL;
	struct hk_plan *plan;
	struct told told = {.stop_at = -1};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-2node");
	e.flags = HK_INTENT_STATE | HK_INTENT_HAS_MINIMUM | HK_INTENT_HAS_MAXIMUM;
	e.page_size = "2M";
	e.nodes = nodes;
	e.node_pages = pages;
	e.n_nodes = 2;
	e.maximum = 40;
	assert_int_equal(plan_entries(&t, &e, 1, &told, &plan), 0);
	assert_int_equal(hk_plan_items(plan, NULL), 3);
	/* 14 persistent pages: the overcommit that gives 40 goes first (the pool shrinks). */
	assert_string_equal(item(plan, 0)->item, "pool 2M overcommit");
	assert_string_equal(item(plan, 0)->value, "26");
	assert_int_equal(item(plan, 0)->field, HK_POOL_OVERCOMMIT);
	assert_string_equal(item(plan, 1)->item, "pool 2M node 0 minimum");
	assert_string_equal(item(plan, 1)->value, "10");
	assert_string_equal(item(plan, 2)->item, "pool 2M node 1 minimum");
	assert_string_equal(item(plan, 2)->value, "4");
	hk_plan_unref(plan);
	e.maximum = 13;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_MAX_BELOW_MIN);
	assert_int_equal(told.v[0].pages, 13);
	assert_int_equal(told.v[0].min_pages, 14);
	e.nodes = node7;
	e.n_nodes = 1;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_POOL_NO_NODE);
	assert_int_equal(told.v[0].pool.node, 7);
	/* The 1G pool: gigantic, its maximum is its minimum. */
	e = entry(HK_SETTING_POOL);
	e.flags = HK_INTENT_STATE | HK_INTENT_HAS_MINIMUM | HK_INTENT_HAS_MAXIMUM;
	e.page_size = "1G";
	e.number = 1;
	e.maximum = 3;
	assert_int_equal(one(&t, e, &told), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_GIGANTIC_MAX);
	e.maximum = 1;
	assert_int_equal(one(&t, e, &told), 0);
	/* What a state cannot say. */
	assert_int_equal(hk_intent_new(t.ctx, &in), 0);
	e.node_pages = pages; /* counts without nodes */
	assert_int_equal(hk_intent_add(in, &e), -EINVAL);
	e.node_pages = NULL;
	e.flags = HK_INTENT_STATE | HK_INTENT_DEMOTE_DOWN; /* down to no minimum */
	assert_int_equal(hk_intent_add(in, &e), -EINVAL);
	e.flags = HK_INTENT_STATE | HK_INTENT_HAS_MINIMUM | HK_INTENT_BYTES;
	assert_int_equal(hk_intent_add(in, &e), -EINVAL);
	e.flags = HK_INTENT_STATE | HK_INTENT_HAS_MINIMUM;
	e.size = offsetof(struct hk_intent_entry, node_pages); /* an HK_1.6 caller has no state */
	assert_int_equal(hk_intent_add(in, &e), -EINVAL);
	assert_null(hk_intent_unref(in));
	tree_close(&t);
}

static void test_stops(void **state)
{
	struct hk_intent_entry e[] = {
		pool("2M", HK_POOL_MINIMUM, '+', 1),
		pool("3M", HK_POOL_MINIMUM, 0, 1),
		entry(HK_SETTING_SHM_GROUP),
	};
	struct hk_intent *in = NULL;
	struct told told = {.stop_at = -1};
	struct tree t;
	struct hk_plan *plan;
	const struct hk_plan_item *items;

	(void)state;
	tree_open(&t, "x86-2node");
	/* The first entry that cannot be planned ends it: the group (after the pools) is never told. */
	assert_int_equal(plan_entries(&t, e, 3, &told, &plan), 1);
	assert_int_equal(told.n, 2);
	assert_int_equal(told.v[1].problem, HK_INTENT_UNKNOWN_SIZE);
	hk_plan_unref(plan);
	/* The caller's word stops it too, and is returned. */
	told = (struct told){.stop_at = 0};
	e[1].page_size = "2M";
	assert_int_equal(plan_entries(&t, e, 3, &told, &plan), 42);
	assert_int_equal(told.n, 1);
	assert_int_equal(hk_plan_items(plan, &items), 2);
	hk_plan_unref(plan);
	/* What the intent does not plan, and entries it cannot read. */
	assert_int_equal(hk_intent_new(t.ctx, &in), 0);
	e[0] = entry(HK_SETTING_MOUNT);
	assert_int_equal(hk_intent_add(in, &e[0]), -EINVAL);
	e[0] = pool("2M", HK_POOL_OVERCOMMIT, 0, 1);
	assert_int_equal(hk_intent_add(in, &e[0]), -EINVAL);
	e[0] = pool("2M", HK_POOL_MINIMUM, 0, 1);
	e[0].size = sizeof(e[0]) - 1;
	assert_int_equal(hk_intent_add(in, &e[0]), -EINVAL);
	e[0].size = sizeof(e[0]) + 8;
	assert_int_equal(hk_intent_add(in, &e[0]), -EINVAL);
	/* An HK_1.6 caller's entry, which ends before node_pages: taken, the rest 0. */
	e[0].size = offsetof(struct hk_intent_entry, node_pages);
	assert_int_equal(hk_intent_add(in, &e[0]), 0);
	assert_int_equal(hk_plan_from_intent(in, NULL, NULL, tell, &told), -EINVAL);
	assert_null(hk_intent_unref(in));
	tree_close(&t);
}

static struct hk_intent_entry mount(const char *sub, uint64_t max_size, uint64_t min_size)
{
	struct hk_intent_entry e = entry(HK_SETTING_MOUNT);

	e.base = "/var/lib/hugetlbfs/global";
	e.sub = sub;
	e.mode = 01777;
	e.max_size = max_size;
	e.min_size = min_size;
	e.flags = HK_INTENT_SHOW_ONLY;
	return e;
}

/* Plan one mount entry: what planning returned; the verdicts in *told, one per page size. */
static int mounts(struct tree *t, struct hk_intent_entry e, struct told *told, size_t *ret_items)
{
	struct hk_plan *plan;
	const struct hk_plan_item *items;
	int rc;

	*told = (struct told){.stop_at = -1};
	rc = plan_entries(t, &e, 1, told, &plan);
	*ret_items = hk_plan_items(plan, &items);
	if (*ret_items)
		assert_string_equal(items[0].path, "/var/lib/hugetlbfs/global/pagesize-2MB");
	hk_plan_unref(plan);
	return rc;
}

static void test_mounts(void **state)
{
	struct hk_intent_entry e = mount(NULL, 0, 0);
	struct told told;
	struct tree t;
	size_t n;
	char path[4096];
	FILE *f;

	(void)state;
	tree_open(&t, "x86-2node");
	/* A tree can be planned for (shown), not mounted in. */
	e.flags = 0;
	assert_int_equal(mounts(&t, e, &told, &n), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NOT_LIVE);
	assert_int_equal(n, 0);
	/* One mount per page size, 2.23's names, each told. */
	assert_int_equal(mounts(&t, mount(NULL, 0, 0), &told, &n), 0);
	assert_int_equal(told.n, 2);
	assert_int_equal(n, 2);
	assert_int_equal(told.v[0].page_size, 2 * MIB);
	assert_int_equal(told.v[1].page_size, 1024 * MIB);
	assert_int_equal(told.v[1].first, 1);
	assert_int_equal(told.v[1].n, 1);
	/* Limits: --max-size 58 MiB is 29 2M pages (the pool's Maximum is 29) but no 1G page. */
	assert_int_equal(mounts(&t, mount(NULL, 58 * MIB, 0), &told, &n), 0);
	assert_int_equal(told.v[0].warnings, 0);
	assert_int_equal(told.v[1].warnings, HK_INTENT_MAX_NO_PAGE);
	assert_int_equal(mounts(&t, mount(NULL, 60 * MIB, 0), &told, &n), 0);
	assert_int_equal(told.v[0].warnings, HK_INTENT_MAX_OVER_POOL);
	assert_int_equal(told.v[0].max_pages, 30);
	assert_int_equal(told.v[0].pool_maximum, 29);
	/* A reservation of 2 1G pages (the pool has 2), but above the limit: refused. */
	assert_int_equal(mounts(&t, mount(NULL, 1024 * MIB, 2048 * MIB), &told, &n), 1);
	assert_int_equal(told.n, 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_MIN_OVER_MAX);
	assert_int_equal(told.v[0].min_pages, 1024);
	assert_int_equal(told.v[0].max_pages, 512);
	/* 58 MiB: 29 2M pages, which the pool's Maximum holds; no 1G page. 60 MiB: 30. */
	assert_int_equal(mounts(&t, mount(NULL, 0, 58 * MIB), &told, &n), 0);
	assert_int_equal(mounts(&t, mount(NULL, 0, 60 * MIB), &told, &n), 1);
	assert_int_equal(told.n, 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_MIN_OVER_POOL);
	assert_int_equal(told.v[0].pool_maximum, 29);
	assert_int_equal(mounts(&t, mount(NULL, 0, 3072 * MIB), &told, &n), 1);
	/* Another mount at the 2M mount point: refused, unless the mounts are taken down first. */
	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", t.dir);
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "90 27 0:50 / /var/lib/hugetlbfs/global/pagesize-2MB rw - hugetlbfs none "
		   "rw,pagesize=2M,size=4194304\n");
	fclose(f);
	assert_int_equal(mounts(&t, mount(NULL, 0, 0), &told, &n), 1);
	assert_int_equal(told.n, 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_MOUNTED_OTHERWISE);
	assert_string_equal(told.v[0].target, "/var/lib/hugetlbfs/global/pagesize-2MB");
	assert_non_null(strstr(told.v[0].options, "size=4194304"));
	/* The same mount (size in whole pages) is kept. */
	assert_int_equal(mounts(&t, mount(NULL, 5 * MIB, 0), &told, &n), 0);
	tree_close(&t);
}

static struct hk_intent_entry unmount(void)
{
	struct hk_intent_entry e = entry(HK_SETTING_UNMOUNT);

	e.base = "/var/lib/hugetlbfs/";
	e.flags = HK_INTENT_SHOW_ONLY;
	return e;
}

static void test_unmounts(void **state)
{
	struct hk_intent_entry e[3] = {mount(NULL, 0, 0), unmount(), unmount()};
	struct told told = {.stop_at = -1};
	struct tree t;
	struct hk_plan *plan;
	char path[4096];
	FILE *f;

	(void)state;
	tree_open(&t, "x86-2node");
	/* Nothing below the base: told once, without a target. */
	assert_int_equal(plan_entries(&t, &e[1], 1, &told, &plan), 0);
	assert_int_equal(told.n, 1);
	assert_string_equal(told.v[0].target, "");
	assert_int_equal(hk_plan_items(plan, NULL), 0);
	hk_plan_unref(plan);
	snprintf(path, sizeof(path), "%s/proc/self/mountinfo", t.dir);
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "90 27 0:50 / /var/lib/hugetlbfs/global/pagesize-2MB rw - hugetlbfs none "
		   "rw,pagesize=2M,size=4194304\n"
		   "91 27 0:51 / /var/lib/hugetlbfs/user/x/d2/victim rw - hugetlbfs none "
		   "rw,pagesize=2M\n"
		   "92 27 0:52 / /var/lib/hugetlbfsX/pagesize-2MB rw - hugetlbfs none "
		   "rw,pagesize=2M\n"
		   "93 27 0:53 / /var/lib/hugetlbfs/pagesize-1GB rw - hugetlbfs none "
		   "rw,pagesize=1024M\n");
	fclose(f);
	/*
	 * Planned after the mounts are asked for, run before them: last mounted
	 * first, hugeadm's own layout only; the mount then sees none there, and
	 * a second --unmount-all plans nothing.
	 */
	told = (struct told){.stop_at = -1};
	assert_int_equal(plan_entries(&t, e, 3, &told, &plan), 0);
	assert_int_equal(told.n, 6);
	assert_int_equal(told.v[0].entry, 1);
	assert_string_equal(told.v[0].target, "/var/lib/hugetlbfs/pagesize-1GB");
	assert_int_equal(told.v[0].n, 1);
	assert_string_equal(told.v[1].target, "/var/lib/hugetlbfs/user/x/d2/victim");
	assert_int_equal(told.v[1].warnings, HK_INTENT_NOT_OURS);
	assert_int_equal(told.v[1].n, 0);
	assert_string_equal(told.v[2].target, "/var/lib/hugetlbfs/global/pagesize-2MB");
	assert_int_equal(told.v[3].entry, 2);
	assert_int_equal(told.v[3].n, 0);
	assert_int_equal(told.v[4].problem, HK_INTENT_PLANNED);
	assert_int_equal(hk_plan_items(plan, NULL), 4);
	assert_int_equal(item(plan, 0)->kind, HK_PLAN_UNMOUNT);
	assert_string_equal(item(plan, 0)->value, "rw,pagesize=1024M");
	assert_string_equal(item(plan, 1)->item, "unmount /var/lib/hugetlbfs/global/pagesize-2MB");
	assert_int_equal(item(plan, 1)->page_size, 2 * MIB);
	assert_int_equal(item(plan, 2)->kind, HK_PLAN_MOUNT);
	hk_plan_unref(plan);
	/* A tree's mounts can be shown taken down, not taken down. */
	e[1].flags = 0;
	told = (struct told){.stop_at = -1};
	assert_int_equal(plan_entries(&t, &e[1], 1, &told, &plan), 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NOT_LIVE);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* Shared text: planned first, the running system's only; its item names the file and its pages. */
static void test_shared_text(void **state)
{
	struct hk_intent_entry e[2] = {unmount(), entry(HK_SETTING_SHARED_TEXT)};
	struct hk_shared_text f = {.size = sizeof(f),
				   .dir = "/mnt/h/elflink-uid-0",
				   .name = "prog.k1.200000",
				   .page_size = 2 * MIB,
				   .pages = 3};
	struct told told = {.stop_at = -1};
	struct tree t;
	struct hk_plan *plan;

	(void)state;
	tree_open(&t, "x86-2node");
	e[1].flags = HK_INTENT_SHOW_ONLY | HK_INTENT_ONE_UID;
	assert_int_equal(plan_entries(&t, e, 2, &told, &plan), 1);
	assert_int_equal(told.n, 1);
	assert_int_equal(told.v[0].entry, 1);
	assert_int_equal(told.v[0].problem, HK_INTENT_NOT_LIVE);
	assert_int_equal(hk_plan_items(plan, NULL), 0);
	assert_int_equal(hk_plan_add_shared_text(plan, NULL, "x"), -EINVAL);
	f.dir = "relative";
	assert_int_equal(hk_plan_add_shared_text(plan, &f, "x"), -EINVAL);
	f.dir = "/mnt/h/elflink-uid-0";
	assert_int_equal(hk_plan_add_shared_text(plan, &f, "x"), 0);
	assert_int_equal(item(plan, 0)->kind, HK_PLAN_REMOVE);
	assert_string_equal(item(plan, 0)->item, "remove /mnt/h/elflink-uid-0/prog.k1.200000");
	assert_string_equal(item(plan, 0)->path, "/mnt/h/elflink-uid-0/prog.k1.200000");
	assert_string_equal(item(plan, 0)->value, "3");
	assert_int_equal(item(plan, 0)->page_size, 2 * MIB);
	hk_plan_unref(plan);
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),	       cmocka_unit_test(test_pool_verdicts),
		cmocka_unit_test(test_other_verdicts), cmocka_unit_test(test_stops),
		cmocka_unit_test(test_mounts),	       cmocka_unit_test(test_unmounts),
		cmocka_unit_test(test_shared_text),    cmocka_unit_test(test_sysctls),
		cmocka_unit_test(test_cgroups),	       cmocka_unit_test(test_one_mount),
		cmocka_unit_test(test_pool_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
