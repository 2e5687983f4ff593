// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Obtainable pages: the /proc/buddyinfo parser and its arithmetic (orders,
 * zones, nodes, malformed lines), hk_buddy_obtainable on the fixture trees,
 * and the THP counters of /proc/vmstat and the mTHP stats.
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
#include <syslog.h>

#include <hugekit/hugekit.h>

#include "buddy.h"
#include "tree.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static const char one_node[] =
	"Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
	"Node 0, zone    DMA32      2      4      2      2      1      2      0      3      3      1    700 \n"
	"Node 0, zone   Normal     12      8     40     48     47     36     13      9     47     43    150 \n";

static void test_parse_lines(void **state)
{
	struct hkc_buddy_zone *z = NULL;
	size_t n = 0, bad = 99;

	(void)state;
	assert_int_equal(hkc_buddyinfo_parse(one_node, &z, &n, &bad), 0);
	assert_int_equal(n, 3);
	assert_int_equal(bad, 0);
	assert_string_equal(z[0].zone, "DMA");
	assert_string_equal(z[1].zone, "DMA32");
	assert_string_equal(z[2].zone, "Normal");
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(z[i].node, 0);
		assert_int_equal(z[i].n_orders, 11);
	}
	assert_int_equal(z[1].free[10], 700);
	assert_int_equal(z[2].free[0], 12);
	assert_int_equal(z[2].free[9], 43);
	free(z);

	/* No trailing newline, tabs, a second node. */
	assert_int_equal(hkc_buddyinfo_parse("Node 0, zone Normal 1 2\nNode 1,\tzone\tMovable\t3 4",
					     &z, &n, &bad),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(z[1].node, 1);
	assert_string_equal(z[1].zone, "Movable");
	assert_int_equal(z[1].free[1], 4);
	free(z);

	/* An empty file: no zones. */
	assert_int_equal(hkc_buddyinfo_parse("", &z, &n, &bad), 0);
	assert_int_equal(n, 0);
	free(z);
}

static void test_parse_malformed(void **state)
{
	static const struct {
		const char *buf;
		size_t line;
	} bad_cases[] = {
		{"garbage\n", 1},
		{"Node x, zone Normal 1 2\n", 1},
		{"Node 0 zone Normal 1 2\n", 1},
		{"Node 0, Normal 1 2\n", 1},
		{"Node 0, zone Normal\n", 1},
		{"Node 0, zone Normal 1 -2\n", 1},
		{"Node 0, zone Normal 1 2x\n", 1},
		{"Node 0, zone Normal 1 99999999999999999999\n", 1},
		{"Node 0, zone AZoneNameTooLong 1 2\n", 1},
		{"Node 2000, zone Normal 1 2\n", 1},
		/* Every line has the same orders. */
		{"Node 0, zone DMA32 1 2 3\nNode 0, zone Normal 1 2\n", 2},
		{"Node 0, zone DMA32 1 2\n\nNode 0, zone Normal 1 2\n", 2},
		{"Node 0, zone Normal 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n",
		 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct hkc_buddy_zone *z = NULL;
		size_t n = 0, bad = 0;

		if (hkc_buddyinfo_parse(bad_cases[i].buf, &z, &n, &bad) != -EINVAL)
			fail_msg("accepted: %s", bad_cases[i].buf);
		assert_null(z);
		assert_int_equal(bad, bad_cases[i].line);
	}
}

static void test_blocks_arithmetic(void **state)
{
	struct hkc_buddy_zone z = {.node = 0, .zone = "Normal", .n_orders = 11};

	(void)state;
	/* 3 blocks of order 9, 2 of order 10 = 4 more of order 9, 1 of order 3 below. */
	z.free[3] = 1;
	z.free[9] = 3;
	z.free[10] = 2;
	assert_int_equal(hkc_buddy_blocks(&z, 9), 7);
	assert_int_equal(hkc_buddy_blocks(&z, 10), 2);
	assert_int_equal(hkc_buddy_blocks(&z, 3), 1 + 3 * 64 + 2 * 128);
	/* Beyond the zone's orders (gigantic): none. */
	assert_int_equal(hkc_buddy_blocks(&z, 11), 0);
	assert_int_equal(hkc_buddy_blocks(&z, 18), 0);
	/* Saturated, not wrapped. */
	z.free[10] = UINT64_MAX / 2;
	assert_int_equal(hkc_buddy_blocks(&z, 0), UINT64_MAX);
}

static void test_zones(void **state)
{
	(void)state;
	assert_true(hkc_buddy_zone_hugetlb("Normal"));
	assert_true(hkc_buddy_zone_hugetlb("DMA32"));
	assert_true(hkc_buddy_zone_hugetlb("Movable"));
	assert_true(hkc_buddy_zone_hugetlb("HighMem"));
	assert_false(hkc_buddy_zone_hugetlb("DMA"));
	assert_false(hkc_buddy_zone_hugetlb("Device"));
	assert_false(hkc_buddy_zone_hugetlb("normal"));
}

static void test_obtainable_one_node(void **state)
{
	struct tree t;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "x86-1node");
	/* DMA32 1 + 700 x 2, Normal 43 + 150 x 2; DMA's 1 + 3 x 2 left out. */
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, HK_NODE_ALL, &v), 0);
	assert_int_equal(v, 1744);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, 0, &v), 0);
	assert_int_equal(v, 1744);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 4 * MiB, HK_NODE_ALL, &v), 0);
	assert_int_equal(v, 850);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 64 * 1024, HK_NODE_ALL, &v), 0);
	assert_int_equal(v, 56880);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 4096, HK_NODE_ALL, &v), 0);
	assert_int_equal(v, 910686);
	/* A node without memory has none. */
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, 1, &v), 0);
	assert_int_equal(v, 0);
	/* Gigantic: not from the buddy allocator. */
	assert_int_equal(hk_buddy_obtainable(t.ctx, GiB, HK_NODE_ALL, &v), -ERANGE);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 8 * MiB, HK_NODE_ALL, &v), -ERANGE);
	/* Not a page size, not a node, no result. */
	assert_int_equal(hk_buddy_obtainable(t.ctx, 3 * MiB, HK_NODE_ALL, &v), -EINVAL);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2048, HK_NODE_ALL, &v), -EINVAL);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, -5, &v), -EINVAL);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, HK_NODE_ALL, NULL), -EINVAL);
	tree_close(&t);
}

static void test_obtainable_two_nodes(void **state)
{
	struct tree t;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, HK_NODE_ALL, &v), 0);
	assert_int_equal(v, 1228);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, 0, &v), 0);
	assert_int_equal(v, 1222);
	/* Node 1 is fragmented: Normal 1 block of order 9, Movable 3 + 1 x 2. */
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, 1, &v), 0);
	assert_int_equal(v, 6);
	assert_int_equal(hk_buddy_obtainable(t.ctx, 4 * MiB, 1, &v), 0);
	assert_int_equal(v, 1);
	tree_close(&t);
}

static char last_log[512];

static void keep_log(void *data, int priority, const char *msg)
{
	(void)data;
	(void)priority;
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

static void test_obtainable_missing_and_malformed(void **state)
{
	struct tree t;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "arm64");
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, HK_NODE_ALL, &v), -ENOENT);
	tree_close(&t);

	tree_open(&t, "x86-1node");
	hk_set_log_fn(t.ctx, keep_log, NULL);
	fixture_write(t.dir, "proc/buddyinfo",
		      "Node 0, zone    DMA32 1 2 3 4 5 6 7 8 9 10 11\nNode 0, zone   Normal 1 2\n");
	last_log[0] = '\0';
	assert_int_equal(hk_buddy_obtainable(t.ctx, 2 * MiB, HK_NODE_ALL, &v), -EINVAL);
	assert_non_null(strstr(last_log, "buddyinfo: line 2 is not"));
	tree_close(&t);
}

static void test_vmstat(void **state)
{
	static const char buf[] = "nr_free_pages 12\nthp_fault_alloc_x 5\nthp_fault_alloc 970\n"
				  "thp_fault_fallback 3x\nthp_collapse_alloc\t12\n";
	struct tree t;
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hkc_vmstat_find(buf, "thp_fault_alloc", &v), 0);
	assert_int_equal(v, 970);
	assert_int_equal(hkc_vmstat_find(buf, "thp_collapse_alloc", &v), 0);
	assert_int_equal(v, 12);
	/* A prefix of a name is not the name. */
	assert_int_equal(hkc_vmstat_find(buf, "thp_fault", &v), -ENOENT);
	assert_int_equal(hkc_vmstat_find(buf, "compact_stall", &v), -ENOENT);
	assert_int_equal(hkc_vmstat_find(buf, "thp_fault_fallback", &v), -EINVAL);
	assert_int_equal(hkc_vmstat_find(buf, "", &v), -EINVAL);

	tree_open(&t, "x86-2node");
	assert_int_equal(hk_vmstat_read(t.ctx, "thp_fault_fallback", &v), 0);
	assert_int_equal(v, 900);
	assert_int_equal(hk_vmstat_read(t.ctx, "compact_fail", &v), 0);
	assert_int_equal(v, 450);
	assert_int_equal(hk_vmstat_read(t.ctx, "no_such_counter", &v), -ENOENT);
	tree_close(&t);
}

static void test_mthp_stats(void **state)
{
	uint64_t *sizes = NULL, v = 0;
	size_t n = 0;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_thp_sizes(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 8);
	assert_int_equal(sizes[0], 16 * 1024);
	assert_int_equal(sizes[n - 1], 2 * MiB);
	free(sizes);
	assert_int_equal(hk_thp_stat_read(t.ctx, 2 * MiB, "anon_fault_alloc", &v), 0);
	assert_int_equal(v, 970);
	assert_int_equal(hk_thp_stat_read(t.ctx, 64 * 1024, "anon_fault_fallback", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(hk_thp_stat_read(t.ctx, 2 * MiB, "no_such_stat", &v), -ENOENT);
	assert_int_equal(hk_thp_stat_read(t.ctx, 2 * MiB, "../enabled", &v), -EINVAL);
	assert_int_equal(hk_thp_stat_read(t.ctx, 2 * MiB, "", &v), -EINVAL);
	tree_close(&t);

	/* A kernel without THP: no sizes. */
	tree_open(&t, NULL);
	assert_int_equal(hk_thp_sizes(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 0);
	free(sizes);
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_blocks_arithmetic),
		cmocka_unit_test(test_zones),
		cmocka_unit_test(test_obtainable_one_node),
		cmocka_unit_test(test_obtainable_two_nodes),
		cmocka_unit_test(test_obtainable_missing_and_malformed),
		cmocka_unit_test(test_vmstat),
		cmocka_unit_test(test_mthp_stats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
