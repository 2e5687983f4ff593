// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Review of the plan builder (a9931df), red before a fix: hk_plan_add() of an
 * item of the same plan (a copy of items[i], the natural way to re-add or
 * duplicate a step) reads the item after realloc() moved the array: a
 * heap-use-after-free under ASan, garbage strings copied without it. And
 * the builders of single items (hk_plan_add_pool_demote).
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

static void test_add_item_of_same_plan(void **state)
{
	struct tree t;
	struct hk_plan *plan;
	const struct hk_plan_item *items;
	int rc;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_plan_new(&plan), 0);
	assert_int_equal(hk_plan_add_thp(t.ctx, plan, "enabled", "never", "--thp-never"), 0);
	/* Each add may move the array: the item added is one of its own elements. */
	for (int i = 1; i < 64; i++) {
		hk_plan_items(plan, &items);
		rc = hk_plan_add(plan, &items[0]);
		assert_int_equal(rc, i);
	}
	assert_int_equal(hk_plan_items(plan, &items), 64);
	for (size_t i = 0; i < 64; i++) {
		assert_string_equal(items[i].item, "thp enabled");
		assert_string_equal(items[i].value, "never");
		assert_string_equal(items[i].why, "--thp-never");
	}
	hk_plan_unref(plan);
	tree_close(&t);
}

/*
 * --pool-demote's item: the count to demote (HK_POOL_DEMOTE_PAGES), the
 * pool's or a node's demote file; never "so already"; its write is the
 * count, not the pages above a floor.
 */
static void test_add_pool_demote(void **state)
{
	const struct hk_plan_item *items;
	struct hk_plan *plan;
	char *cur = NULL, path[4096], buf[32] = "";
	struct tree t;
	FILE *f;

	(void)state;
	tree_open(&t, "arm64");
	assert_int_equal(hk_plan_new(&plan), 0);
	assert_int_equal(hk_plan_add_pool_demote(t.ctx, plan, 1ULL << 30, HK_NODE_ALL, 1,
						 "--pool-demote 1G:1"),
			 0);
	assert_int_equal(
		hk_plan_add_pool_demote(t.ctx, plan, 1ULL << 30, 0, 2, "--pool-demote 1G:2@0"), 1);
	assert_int_equal(hk_plan_add_pool_demote(t.ctx, plan, 1ULL << 30, 0, 0, "x"), -EINVAL);
	assert_int_equal(hk_plan_add_pool_demote(t.ctx, plan, 1ULL << 30, -7, 1, "x"), -EINVAL);
	/* 64 kB pages have no smaller size: no demote file. */
	assert_int_equal(hk_plan_add_pool_demote(t.ctx, plan, 64 << 10, HK_NODE_ALL, 1, "x"),
			 -ENOENT);
	assert_int_equal(hk_plan_items(plan, &items), 2);
	assert_string_equal(items[0].item, "pool 1G demote");
	assert_string_equal(items[0].path, "/sys/kernel/mm/hugepages/hugepages-1048576kB/demote");
	assert_string_equal(items[1].item, "pool 1G node 0 demote");
	assert_string_equal(items[1].value, "2");
	assert_int_equal(items[1].flags, HK_POOL_DEMOTE_PAGES);
	assert_int_equal(hk_plan_item_check(t.ctx, &items[0], &cur), 0);
	free(cur);
	assert_int_equal(hk_plan_item_apply(t.ctx, &items[1], NULL), 0);
	snprintf(path, sizeof(path),
		 "%s/sys/devices/system/node/node0/hugepages/hugepages-1048576kB/demote", t.dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(atoi(buf), 2);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* A THP value the knob takes: one of its modes, or anything where it lists none. */
static void test_thp_check(void **state)
{
	char *line = NULL, path[4096];
	struct tree t;
	int rc;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_thp_check(t.ctx, "enabled", "never", NULL), 0);
	assert_int_equal(hk_thp_check(t.ctx, "enabled", "neve", &line), 1);
	assert_non_null(strstr(line, "[madvise]"));
	free(line);
	/* Words of the line, not the line's marks: "[madvise]", "", "madvise never". */
	assert_int_equal(hk_thp_check(t.ctx, "enabled", "[madvise]", NULL), 1);
	assert_int_equal(hk_thp_check(t.ctx, "enabled", "", NULL), 1);
	assert_int_equal(hk_thp_check(t.ctx, "enabled", "madvise never", NULL), 1);
	assert_int_equal(hk_thp_check(t.ctx, "khugepaged/pages_to_scan", "4096", NULL), 0);
	assert_int_equal(hk_thp_check(t.ctx, "no_such_knob", "1", &line), -ENOENT);
	assert_null(line);
	assert_int_equal(hk_thp_check(t.ctx, "enabled", NULL, NULL), -EINVAL);
	/* The knob's file not a file (a FIFO in a tree): an error, no line, never "not a mode". */
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/transparent_hugepage/defrag", t.dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
	rc = hk_thp_check(t.ctx, "defrag", "never", &line);
	assert_true(rc < 0);
	assert_null(line);
	tree_close(&t);
}

/*
 * hk_plan_add_mount: the item a caller no longer builds, from the request
 * hk_mount_make takes (its flags the item's); bad paths, modes and flags
 * refused.
 */
static void test_add_mount(void **state)
{
	struct hk_mount_request rq = {.size = sizeof(rq),
				      .path = "/var/lib/hugetlbfs/user/u/pagesize-2MB",
				      .base = "/var/lib/hugetlbfs/user",
				      .uid = 1000,
				      .mode = 0700,
				      .options = "pagesize=2M,uid=1000,gid=0,mode=0700",
				      .flags = HK_MOUNT_KEEP};
	const struct hk_plan_item *items;
	struct hk_plan *plan = NULL;
	struct hk_mount_request bad;

	(void)state;
	assert_int_equal(hk_plan_new(&plan), 0);
	assert_int_equal(hk_plan_add_mount(plan, &rq, 2 << 20, "--create-user-mounts u"), 0);
	assert_int_equal(hk_plan_items(plan, &items), 1);
	assert_int_equal(items[0].kind, HK_PLAN_MOUNT);
	assert_string_equal(items[0].item, "mount /var/lib/hugetlbfs/user/u/pagesize-2MB");
	assert_string_equal(items[0].path, "/var/lib/hugetlbfs/user/u/pagesize-2MB");
	assert_string_equal(items[0].value, "pagesize=2M,uid=1000,gid=0,mode=0700");
	assert_string_equal(items[0].why, "--create-user-mounts u");
	assert_true(items[0].page_size == 2 << 20 && items[0].mode == 0700 && items[0].uid == 1000);
	assert_int_equal(items[0].flags, HK_MOUNT_KEEP);
	assert_int_equal(items[0].node, HK_NODE_ALL);
	bad = rq;
	bad.path = "relative";
	assert_int_equal(hk_plan_add_mount(plan, &bad, 2 << 20, NULL), -EINVAL);
	bad = rq;
	bad.options = NULL;
	assert_int_equal(hk_plan_add_mount(plan, &bad, 2 << 20, NULL), -EINVAL);
	bad = rq;
	bad.mode = 010000;
	assert_int_equal(hk_plan_add_mount(plan, &bad, 2 << 20, NULL), -EINVAL);
	bad = rq;
	bad.flags = 0x80;
	assert_int_equal(hk_plan_add_mount(plan, &bad, 2 << 20, NULL), -EINVAL);
	bad = rq;
	bad.size = 1;
	assert_int_equal(hk_plan_add_mount(plan, &bad, 2 << 20, NULL), -EINVAL);
	assert_int_equal(hk_plan_add_mount(plan, NULL, 2 << 20, NULL), -EINVAL);
	assert_int_equal(hk_plan_items(plan, NULL), 1);
	hk_plan_unref(plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_item_of_same_plan),
		cmocka_unit_test(test_add_pool_demote),
		cmocka_unit_test(test_thp_check),
		cmocka_unit_test(test_add_mount),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
