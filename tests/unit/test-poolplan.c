// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libhugekit's pool planner (hk_pool_plan, hk_pool_change_check,
 * hk_plan_add_pool_change) on the x86-2node tree: 2 MiB pool Minimum 21
 * (node 0: 15, node 1: 6), overcommit 8, Maximum 29; 1 GiB gigantic with 2
 * pages; MemTotal 49266176 kB (24055 pages of 2 MiB).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <hugekit/hugekit.h>

#include "tree.h"

#define MiB (UINT64_C(1024) * 1024)
#define GiB (MiB * 1024)

struct fx {
	struct tree t;
	struct hk_pool_plan *pools;
	struct hk_plan *plan;
};

static void fx_open(struct fx *f)
{
	tree_open(&f->t, "x86-2node");
	assert_int_equal(hk_pool_plan_new(f->t.ctx, &f->pools), 0);
	assert_int_equal(hk_plan_new(&f->plan), 0);
	assert_int_equal(hk_pool_plan_load(f->pools, 2 * MiB), 0);
	assert_int_equal(hk_pool_plan_load(f->pools, GiB), 0);
}

static void fx_close(struct fx *f)
{
	hk_plan_unref(f->plan);
	hk_pool_plan_unref(f->pools);
	tree_close(&f->t);
}

static struct hk_pool_change change(uint64_t size, enum hk_pool_field field, char sign,
				    uint64_t pages)
{
	return (struct hk_pool_change){.size = sizeof(struct hk_pool_change),
				       .page_size = size,
				       .field = field,
				       .sign = sign,
				       .pages = pages};
}

static uint64_t get(const struct fx *f, int node, enum hk_pool_field field)
{
	return hk_pool_plan_get(f->pools, 2 * MiB, node, field);
}

/* The plan's items from first: each one's node, field and number, and that its file is the field's. */
struct want_item {
	int node;
	enum hk_pool_field field;
	uint64_t number;
};

static int add(struct fx *f, const struct hk_pool_change *ch, size_t *n)
{
	return hk_plan_add_pool_change(f->plan, f->pools, ch, "test", n);
}

/* Plan ch: its items are w. */
static void check_items(struct fx *f, const struct hk_pool_change *ch, const struct want_item *w,
			size_t n_want)
{
	const struct hk_plan_item *items;
	size_t n = 0;
	int first = add(f, ch, &n);
	size_t total = hk_plan_items(f->plan, &items);

	assert_true(first >= 0);
	assert_int_equal(n, n_want);
	assert_int_equal(total, (size_t)first + n);
	for (size_t i = 0; i < n_want; i++) {
		const struct hk_plan_item *it = &items[first + (int)i];

		assert_int_equal(it->node, w[i].node);
		assert_int_equal(it->field, w[i].field);
		assert_true(it->number == w[i].number);
		assert_non_null(strstr(it->path, w[i].field == HK_POOL_OVERCOMMIT
							 ? "nr_overcommit_hugepages"
							 : "nr_hugepages"));
	}
}

static void check_change(const struct fx *f, size_t first, uint64_t min0, uint64_t max0,
			 uint64_t min1, uint64_t max1, bool grows)
{
	struct hk_pool_change_plan cp = {.size = sizeof(cp)};

	assert_int_equal(hk_plan_pool_change(f->plan, first, &cp), 0);
	assert_true(cp.minimum_before == min0 && cp.maximum_before == max0);
	assert_true(cp.minimum_after == min1 && cp.maximum_after == max1);
	assert_int_equal(cp.grows, grows);
}

static uint64_t before(const struct fx *f, size_t index)
{
	uint64_t v = UINT64_MAX;

	assert_int_equal(hk_plan_item_before(f->plan, index, &v), 0);
	return v;
}

/* The plan keeps each change as planned: the pool before and after, each item's file before it. */
static void test_planned(void **state)
{
	static const int nodes[] = {0, 1};
	struct hk_pool_change ch = change(2 * MiB, HK_POOL_MINIMUM, 0, 40);
	struct hk_pool_change_plan cp = {.size = sizeof(cp)};
	uint64_t v;
	size_t n;
	struct fx f;

	(void)state;
	fx_open(&f);
	/* 21 + 8 -> Minimum 40, then the overcommit 0. */
	assert_int_equal(add(&f, &ch, &n), 0);
	check_change(&f, 0, 21, 29, 40, 40, true);
	assert_true(before(&f, 0) == 21 && before(&f, 1) == 8);
	/* Down by 30 from there: the overcommit first (from 0), then the Minimum (from 40). */
	ch = change(2 * MiB, HK_POOL_MINIMUM, '-', 30);
	assert_int_equal(add(&f, &ch, &n), 2);
	check_change(&f, 2, 40, 40, 10, 40, false);
	assert_true(before(&f, 2) == 0 && before(&f, 3) == 40);
	/* Only where a change starts; no item, no change. */
	assert_int_equal(hk_plan_pool_change(f.plan, 3, &cp), -ENOENT);
	assert_int_equal(hk_plan_pool_change(f.plan, 4, &cp), -ENOENT);
	assert_int_equal(hk_plan_item_before(f.plan, 4, &v), -ENOENT);
	cp.size = 1;
	assert_int_equal(hk_plan_pool_change(f.plan, 0, &cp), -EINVAL);
	fx_close(&f);
	/* With nodes: each node's own persistent pages before (15 and 6). */
	fx_open(&f);
	ch = change(2 * MiB, HK_POOL_MINIMUM, '-', 1);
	ch.nodes = nodes;
	ch.n_nodes = 2;
	assert_int_equal(add(&f, &ch, &n), 0);
	assert_true(before(&f, 0) == 15 && before(&f, 1) == 6);
	check_change(&f, 0, 21, 29, 19, 29, false);
	/* A change of nodes that lists none plans nothing (not a change of the whole pool). */
	ch = change(2 * MiB, HK_POOL_MINIMUM, 0, 40);
	ch.nodes = nodes;
	ch.n_nodes = 0;
	assert_int_equal(add(&f, &ch, &n), 2);
	assert_int_equal(n, 0);
	assert_int_equal(hk_plan_items(f.plan, NULL), 2);
	fx_close(&f);
}

/* A pool someone else wrote after the plan was made is planned again from there; the plan is kept. */
static void test_again(void **state)
{
	struct hk_pool_change ch = change(GiB, HK_POOL_MINIMUM, '+', 1);
	const struct hk_plan_item *items;
	struct hk_plan *again = NULL;
	size_t n;
	struct fx f;

	(void)state;
	fx_open(&f);
	assert_int_equal(add(&f, &ch, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(hk_plan_pool_change_again(f.t.ctx, f.plan, 0, &again), 0);
	assert_null(again);
	assert_int_equal(hk_plan_pool_change_again(f.t.ctx, f.plan, 1, &again), -ENOENT);
	/* Another program grows the 1 GiB pool to 5 pages: +1 is now 6, from 5. */
	fixture_write(f.t.dir, "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "5\n");
	assert_int_equal(hk_plan_pool_change_again(f.t.ctx, f.plan, 0, &again), 1);
	assert_int_equal(hk_plan_items(again, &items), 1);
	assert_true(items[0].number == 6 && items[0].page_size == GiB);
	assert_true(strcmp(items[0].why, "test") == 0);
	{
		struct hk_pool_change_plan cp = {.size = sizeof(cp)};

		assert_int_equal(hk_plan_pool_change(again, 0, &cp), 0);
		assert_true(cp.minimum_before == 5 && cp.minimum_after == 6 && cp.grows);
	}
	hk_plan_unref(again);
	/* The plan as it was printed. */
	assert_int_equal(hk_plan_items(f.plan, &items), 1);
	assert_true(items[0].number == 3);
	assert_int_equal(hk_plan_pool_change_again(NULL, f.plan, 0, &again), -EINVAL);
	fx_close(&f);
}

static void test_read(void **state)
{
	struct fx f;

	(void)state;
	fx_open(&f);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MINIMUM) == 21);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_OVERCOMMIT) == 8);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MAXIMUM) == 29);
	assert_true(get(&f, 0, HK_POOL_MINIMUM) == 15);
	assert_true(get(&f, 1, HK_POOL_MINIMUM) == 6);
	/* What the planner does not follow reads 0. */
	assert_true(get(&f, 0, HK_POOL_OVERCOMMIT) == 0);
	assert_true(get(&f, 2, HK_POOL_MINIMUM) == 0);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_FREE) == 0);
	assert_true(hk_pool_plan_get(f.pools, 64 * 1024, HK_NODE_ALL, HK_POOL_MINIMUM) == 0);
	assert_true(hk_pool_plan_has_node(f.pools, 2 * MiB, 1));
	assert_false(hk_pool_plan_has_node(f.pools, 2 * MiB, 2));
	assert_true(hk_pool_plan_is_gigantic(f.pools, GiB));
	assert_false(hk_pool_plan_is_gigantic(f.pools, 2 * MiB));
	/* A size the machine has no pool of; loading twice keeps what was planned. */
	assert_int_equal(hk_pool_plan_load(f.pools, 4 * MiB), -ENOENT);
	assert_int_equal(hk_pool_plan_load(f.pools, 2 * MiB), 0);
	assert_int_equal(hk_pool_plan_new(NULL, &f.pools), -EINVAL);
	fx_close(&f);
}

/* A Minimum above the Maximum raises it; below, the overcommit first keeps the Maximum. */
static void test_minimum(void **state)
{
	static const struct want_item grow[] = {
		{HK_NODE_ALL, HK_POOL_MINIMUM, 40},
		{HK_NODE_ALL, HK_POOL_OVERCOMMIT, 0},
	};
	static const struct want_item shrink[] = {
		{HK_NODE_ALL, HK_POOL_OVERCOMMIT, 30},
		{HK_NODE_ALL, HK_POOL_MINIMUM, 10},
	};
	struct hk_pool_change ch = change(2 * MiB, HK_POOL_MINIMUM, 0, 40);
	struct hk_pool_verdict v = {.size = sizeof(v)};
	struct fx f;

	(void)state;
	fx_open(&f);
	assert_int_equal(hk_pool_change_check(f.pools, &ch, &v), 0);
	assert_int_equal(v.problem, HK_POOL_CHANGE_FITS);
	assert_true(v.minimum == 40 && v.maximum == 40);
	assert_true(v.mem_kb == 49266176 && v.mem_pages == 24055);
	/* Checking plans nothing. */
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MINIMUM) == 21);
	check_items(&f, &ch, grow, 2);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MAXIMUM) == 40);
	/* The next change starts from the pool as the first leaves it: Maximum 40. */
	ch = change(2 * MiB, HK_POOL_MINIMUM, '-', 30);
	check_items(&f, &ch, shrink, 2);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MINIMUM) == 10);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MAXIMUM) == 40);
	fx_close(&f);
}

/* A Maximum keeps the Minimum (written as it is) unless it goes below it; + saturates to unlimited. */
static void test_maximum(void **state)
{
	static const struct want_item raise[] = {
		{HK_NODE_ALL, HK_POOL_OVERCOMMIT, 29},
		{HK_NODE_ALL, HK_POOL_MINIMUM, 21},
	};
	static const struct want_item below[] = {
		{HK_NODE_ALL, HK_POOL_MINIMUM, 5},
		{HK_NODE_ALL, HK_POOL_OVERCOMMIT, 0},
	};
	static const struct want_item unlimited[] = {
		{HK_NODE_ALL, HK_POOL_OVERCOMMIT, UINT64_MAX},
		{HK_NODE_ALL, HK_POOL_MINIMUM, 5},
	};
	struct hk_pool_change ch = change(2 * MiB, HK_POOL_MAXIMUM, 0, 50);
	struct fx f;

	(void)state;
	fx_open(&f);
	check_items(&f, &ch, raise, 2);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MAXIMUM) == 50);
	ch = change(2 * MiB, HK_POOL_MAXIMUM, 0, 5);
	check_items(&f, &ch, below, 2);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MAXIMUM) == 5);
	ch = change(2 * MiB, HK_POOL_MAXIMUM, '+', UINT64_MAX);
	check_items(&f, &ch, unlimited, 2);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MAXIMUM) == UINT64_MAX);
	assert_true(hk_pool_overcommit_for(5, UINT64_MAX) == UINT64_MAX);
	assert_true(hk_pool_overcommit_for(20, 10) == 0);
	assert_true(hk_pool_overcommit_for(10, 25) == 15);
	fx_close(&f);
}

/* With nodes: each listed node in node order, the overcommit left alone; a missing node is said. */
static void test_nodes(void **state)
{
	static const int both[] = {1, 0};
	static const int missing[] = {0, 2};
	static const struct want_item w[] = {
		{0, HK_POOL_MINIMUM, 17},
		{1, HK_POOL_MINIMUM, 8},
	};
	struct hk_pool_change ch = change(2 * MiB, HK_POOL_MINIMUM, '+', 2);
	struct hk_pool_verdict v = {.size = sizeof(v)};
	const struct hk_plan_item *items;
	struct fx f;
	size_t n;

	(void)state;
	fx_open(&f);
	ch.nodes = both;
	ch.n_nodes = 2;
	assert_int_equal(hk_pool_change_check(f.pools, &ch, &v), 0);
	assert_true(v.minimum == 25 && v.maximum == 29);
	check_items(&f, &ch, w, 2);
	assert_true(get(&f, 0, HK_POOL_MINIMUM) == 17);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_MINIMUM) == 25);
	assert_true(get(&f, HK_NODE_ALL, HK_POOL_OVERCOMMIT) == 8);
	ch.nodes = missing;
	assert_int_equal(hk_pool_change_check(f.pools, &ch, &v), 0);
	assert_int_equal(v.problem, HK_POOL_CHANGE_NO_NODE);
	assert_int_equal(v.node, 2);
	assert_int_equal(add(&f, &ch, &n), -ENOENT);
	assert_int_equal(n, 0);
	assert_int_equal(hk_plan_items(f.plan, &items), 2);
	fx_close(&f);
}

/* Beyond MemTotal: an error for a Minimum and a decrease, a warning for a Maximum; gigantic pools. */
static void test_verdicts(void **state)
{
	static const struct {
		uint64_t size;
		enum hk_pool_field field;
		char sign;
		uint64_t pages;
		enum hk_pool_problem problem;
		bool limit;
	} cases[] = {
		{2 * MiB, HK_POOL_MINIMUM, 0, 24055, HK_POOL_CHANGE_FITS, false},
		{2 * MiB, HK_POOL_MINIMUM, 0, 24056, HK_POOL_CHANGE_BEYOND_MEMORY, false},
		{2 * MiB, HK_POOL_MINIMUM, '+', 24050, HK_POOL_CHANGE_MINIMUM_BEYOND_MEMORY, false},
		{2 * MiB, HK_POOL_MINIMUM, '-', 24056, HK_POOL_CHANGE_BEYOND_MEMORY, false},
		{2 * MiB, HK_POOL_MAXIMUM, 0, 30000, HK_POOL_CHANGE_FITS, true},
		{2 * MiB, HK_POOL_MAXIMUM, '+', 30000, HK_POOL_CHANGE_FITS, true},
		{2 * MiB, HK_POOL_MAXIMUM, '-', 30000, HK_POOL_CHANGE_BEYOND_MEMORY, false},
		{GiB, HK_POOL_MAXIMUM, 0, 5, HK_POOL_CHANGE_GIGANTIC, false},
		{GiB, HK_POOL_MINIMUM, 0, 3, HK_POOL_CHANGE_FITS, false},
		{GiB, HK_POOL_MAXIMUM, 0, 100, HK_POOL_CHANGE_GIGANTIC, true},
	};
	static const struct want_item gigantic[] = {{HK_NODE_ALL, HK_POOL_MINIMUM, 3}};
	struct fx f;

	(void)state;
	fx_open(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hk_pool_change ch =
			change(cases[i].size, cases[i].field, cases[i].sign, cases[i].pages);
		struct hk_pool_verdict v = {.size = sizeof(v)};

		assert_int_equal(hk_pool_change_check(f.pools, &ch, &v), 0);
		assert_int_equal(v.problem, cases[i].problem);
		assert_int_equal(v.limit_beyond_memory, cases[i].limit);
	}
	/* A gigantic pool's Minimum: no overcommit written, the Maximum follows. */
	{
		struct hk_pool_change ch = change(GiB, HK_POOL_MINIMUM, 0, 3);

		check_items(&f, &ch, gigantic, 1);
		assert_true(hk_pool_plan_get(f.pools, GiB, HK_NODE_ALL, HK_POOL_MAXIMUM) == 3);
	}
	fx_close(&f);
}

/* What the planner cannot read is -EINVAL (or -ENOENT for a pool it does not hold); nothing added. */
static void test_refused(void **state)
{
	struct hk_pool_verdict v = {.size = sizeof(v)};
	struct hk_pool_change ch;
	const struct hk_plan_item *items;
	struct fx f;
	size_t n = 7;

	(void)state;
	fx_open(&f);
	ch = change(2 * MiB, HK_POOL_NR, 0, 1);
	assert_int_equal(add(&f, &ch, &n), -EINVAL);
	assert_int_equal(hk_pool_change_check(f.pools, &ch, &v), -EINVAL);
	ch = change(2 * MiB, HK_POOL_MINIMUM, 'x', 1);
	assert_int_equal(add(&f, &ch, &n), -EINVAL);
	ch = change(2 * MiB, HK_POOL_MINIMUM, 0, 1);
	ch.size = sizeof(ch) - 1;
	assert_int_equal(add(&f, &ch, &n), -EINVAL);
	ch = change(2 * MiB, HK_POOL_MINIMUM, 0, 1);
	ch.n_nodes = 1; /* and no nodes */
	assert_int_equal(add(&f, &ch, &n), -EINVAL);
	ch = change(64 * 1024, HK_POOL_MINIMUM, 0, 1);
	assert_int_equal(add(&f, &ch, &n), -ENOENT);
	assert_int_equal(n, 0);
	assert_int_equal(hk_pool_change_check(f.pools, &ch, &v), -ENOENT);
	ch = change(2 * MiB, HK_POOL_MINIMUM, 0, 1);
	v.size = sizeof(v) - 1;
	assert_int_equal(hk_pool_change_check(f.pools, &ch, &v), -EINVAL);
	assert_int_equal(hk_plan_add_pool_change(NULL, f.pools, &ch, NULL, &n), -EINVAL);
	assert_int_equal(hk_plan_items(f.plan, &items), 0);
	/* The mempolicy file, for the whole pool's Minimum. */
	ch.flags = HK_POOL_SET_MEMPOLICY;
	assert_int_equal(add(&f, &ch, &n), 0);
	assert_int_equal(hk_plan_items(f.plan, &items), n);
	assert_non_null(strstr(items[n - 1].path, "nr_hugepages_mempolicy"));
	fx_close(&f);
}

/* What the plan leaves, as other settings see it: shmmax's recommendation, free pages, new pages. */
static void test_derived(void **state)
{
	static const int node1[] = {1};
	struct hk_pool_change ch = change(2 * MiB, HK_POOL_MINIMUM, '+', 2);
	struct hk_pool *now = NULL;
	uint64_t rec = 0, kernel = 0;
	struct fx f;
	size_t n;

	(void)state;
	fx_open(&f);
	/* Before any change: the kernel's recommendation, 29 x 2 MiB + 2 x 1 GiB. */
	assert_int_equal(hk_pool_plan_recommended_shmmax(f.pools, &rec), 0);
	assert_int_equal(hk_recommended_shmmax(f.t.ctx, &kernel), 0);
	assert_true(rec == 29 * 2 * MiB + 2 * GiB && rec == kernel);
	assert_int_equal(hk_pool_read(f.t.ctx, 2 * MiB, &now), 0);
	assert_true(hk_pool_plan_free(f.pools, now, HK_NODE_ALL) == 5);
	assert_true(hk_pool_plan_free(f.pools, now, 1) == 1);
	assert_true(hk_pool_plan_free(f.pools, now, 2) == 0);
	/* Node 1 planned at 8 (from 6): two more free pages there, and in the pool. */
	ch.nodes = node1;
	ch.n_nodes = 1;
	assert_true(hk_plan_add_pool_change(f.plan, f.pools, &ch, "test", &n) >= 0);
	assert_true(hk_pool_plan_free(f.pools, now, 1) == 3);
	assert_true(hk_pool_plan_free(f.pools, now, 0) == 4);
	assert_true(hk_pool_plan_free(f.pools, now, HK_NODE_ALL) == 7);
	assert_int_equal(hk_pool_plan_recommended_shmmax(f.pools, &rec), 0);
	assert_true(rec == 31 * 2 * MiB + 2 * GiB);
	/* Surplus pages (3 in the pool, 2 on node 1) become persistent before new ones. */
	assert_true(hk_pool_new_pages(now, HK_NODE_ALL, 21, 30) == 6);
	assert_true(hk_pool_new_pages(now, 1, 6, 10) == 2);
	assert_true(hk_pool_new_pages(now, HK_NODE_ALL, 30, 21) == 0);
	assert_true(hk_pool_new_pages(now, HK_NODE_ALL, 21, 22) == 0);
	assert_int_equal(hk_pool_plan_recommended_shmmax(NULL, &rec), -EINVAL);
	hk_pool_unref(now);
	fx_close(&f);
}

/* A recommended shmmax keeps or raises kernel.shmmax: never lowered, never 0; from the plan's pools or the kernel's. */
static void test_shmmax(void **state)
{
	struct hk_pool_change ch = change(2 * MiB, HK_POOL_MAXIMUM, 0, 0);
	struct hk_shmmax_plan sp = {.size = sizeof(sp)};
	const struct hk_plan_item *items;
	struct fx f;
	size_t n;

	(void)state;
	fx_open(&f);
	/* Today's default, 2^64 - 2^24 - 1, is above 29 x 2 MiB + 2 x 1 GiB: nothing to write. */
	assert_int_equal(hk_plan_add_recommended_shmmax(f.t.ctx, f.plan, f.pools, "test", &sp), 0);
	assert_false(sp.added);
	assert_true(sp.recommended == 29 * 2 * MiB + 2 * GiB);
	assert_true(sp.current == UINT64_C(18446744073692774399));
	assert_int_equal(hk_plan_items(f.plan, &items), 0);
	/* Below it: raised, from the pools as the plan leaves them (2 MiB pool emptied). */
	fixture_write(f.t.dir, "proc/sys/kernel/shmmax", "1000\n");
	assert_true(add(&f, &ch, &n) >= 0);
	assert_int_equal(hk_plan_add_recommended_shmmax(f.t.ctx, f.plan, f.pools, "test", &sp), 0);
	assert_true(sp.added && sp.current == 1000 && sp.recommended == 2 * GiB);
	assert_int_equal(hk_plan_items(f.plan, &items), sp.index + 1);
	assert_string_equal(items[sp.index].value, "2147483648");
	/* The kernel's pools (pools NULL): still 29 x 2 MiB there. */
	assert_int_equal(hk_plan_add_recommended_shmmax(f.t.ctx, f.plan, NULL, "test", &sp), 0);
	assert_true(sp.added && sp.recommended == 29 * 2 * MiB + 2 * GiB);
	/* No huge pages at all: never 0. */
	ch = change(GiB, HK_POOL_MINIMUM, 0, 0);
	assert_true(add(&f, &ch, &n) >= 0);
	assert_int_equal(hk_plan_add_recommended_shmmax(f.t.ctx, f.plan, f.pools, "test", &sp), 0);
	assert_false(sp.added);
	assert_true(sp.recommended == 0);
	sp.size = 0;
	assert_int_equal(hk_plan_add_recommended_shmmax(f.t.ctx, f.plan, NULL, "test", &sp),
			 -EINVAL);
	fx_close(&f);
}

/*
 * The demote check (arm64: 32M has 1 free page and demotes to 2M; 1G has
 * none free; 64K has no smaller size): the verdicts, in order, and the free
 * pages a grow planned before adds.
 */
static void test_demote_check(void **state)
{
	struct hk_demote_verdict v = {.size = sizeof(v)};
	const uint64_t S32M = 32ULL << 20, S1G = 1ULL << 30;
	struct hk_pool_change grow = {.size = sizeof(grow),
				      .page_size = S32M,
				      .field = HK_POOL_MINIMUM,
				      .sign = '+',
				      .pages = 2};
	const int node0[] = {0}, node5[] = {5};
	struct hk_pool_plan *pools;
	struct hk_plan *plan;
	struct tree t;
	size_t n;

	(void)state;
	tree_open(&t, "arm64");
	assert_int_equal(hk_pool_plan_new(t.ctx, &pools), 0);
	assert_int_equal(hk_pool_demote_check(pools, S32M, NULL, 0, 1, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_FITS);
	assert_int_equal(hk_pool_demote_check(pools, S32M, NULL, 0, 2, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NOT_FREE);
	assert_int_equal(v.free, 1);
	assert_int_equal(v.node, HK_NODE_ALL);
	assert_int_equal(hk_pool_demote_check(pools, S1G, node0, 1, 1, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NOT_FREE);
	assert_int_equal(v.node, 0);
	assert_int_equal(v.free, 0);
	assert_int_equal(hk_pool_demote_check(pools, S1G, node5, 1, 1, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NO_NODE);
	assert_int_equal(v.node, 5);
	/* Only whether it can demote: 1G can, 64K has no smaller size. */
	assert_int_equal(hk_pool_demote_check(pools, S1G, NULL, 0, 0, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_FITS);
	assert_int_equal(hk_pool_demote_check(pools, 64 << 10, NULL, 0, 0, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NO_SMALLER);
	/* A demote size: the pool can demote, to a smaller size this machine has. */
	assert_int_equal(hk_pool_demote_size_check(pools, S1G, S32M, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_FITS);
	assert_int_equal(hk_pool_demote_size_check(pools, S1G, 64 << 10, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_FITS);
	assert_int_equal(hk_pool_demote_size_check(pools, S1G, S1G, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NOT_SMALLER);
	assert_int_equal(hk_pool_demote_size_check(pools, S1G, 4 << 20, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NOT_SMALLER);
	/* Whether it can demote is said first. */
	assert_int_equal(hk_pool_demote_size_check(pools, 64 << 10, 64 << 10, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NO_SMALLER);
	/* Pages a grow planned before adds are free to demote. */
	assert_int_equal(hk_plan_new(&plan), 0);
	assert_true(hk_plan_add_pool_change(plan, pools, &grow, "grow", &n) >= 0);
	assert_int_equal(hk_pool_demote_check(pools, S32M, NULL, 0, 3, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_FITS);
	assert_int_equal(hk_pool_demote_check(pools, S32M, NULL, 0, 4, &v), 0);
	assert_int_equal(v.problem, HK_DEMOTE_NOT_FREE);
	assert_int_equal(v.free, 3);
	/* The caller's size, a pool the machine lacks. */
	v.size = 1;
	assert_int_equal(hk_pool_demote_check(pools, S32M, NULL, 0, 1, &v), -EINVAL);
	v.size = sizeof(v);
	assert_int_equal(hk_pool_demote_check(pools, 3 << 20, NULL, 0, 1, &v), -ENOENT);
	hk_plan_unref(plan);
	hk_pool_plan_unref(pools);
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),	 cmocka_unit_test(test_minimum),
		cmocka_unit_test(test_maximum),	 cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_verdicts), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_derived),	 cmocka_unit_test(test_demote_check),
		cmocka_unit_test(test_planned),	 cmocka_unit_test(test_again),
		cmocka_unit_test(test_shmmax),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
