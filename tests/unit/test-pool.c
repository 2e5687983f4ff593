// SPDX-License-Identifier: GPL-2.0-or-later
/* The public API of libhugekit (hk_new on copied fixture trees): pools, settings, logging. */
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

#include "tree.h"
/* hugeadm's pool arithmetic: a header of plain inline functions. */
#include "../../lib/core/poolmath.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)

struct pool_want {
	uint64_t size;
	uint64_t nr, free, resv, surplus, overcommit;
	bool is_default, gigantic;
	size_t n_nodes;
	struct {
		int id;
		uint64_t nr, free, surplus;
	} nodes[2];
};

static void check_pool(struct hk_ctx *ctx, const struct pool_want *w)
{
	struct hk_pool *pool = NULL;
	uint64_t min = w->nr - w->surplus;

	assert_int_equal(hk_pool_read(ctx, w->size, &pool), 0);
	assert_non_null(pool);
	assert_int_equal(hk_pool_get(pool, HK_POOL_SIZE), w->size);
	assert_int_equal(hk_pool_get(pool, HK_POOL_NR), w->nr);
	assert_int_equal(hk_pool_get(pool, HK_POOL_FREE), w->free);
	assert_int_equal(hk_pool_get(pool, HK_POOL_RESV), w->resv);
	assert_int_equal(hk_pool_get(pool, HK_POOL_SURPLUS), w->surplus);
	assert_int_equal(hk_pool_get(pool, HK_POOL_OVERCOMMIT), w->overcommit);
	assert_int_equal(hk_pool_get(pool, HK_POOL_MINIMUM), min);
	assert_int_equal(hk_pool_get(pool, HK_POOL_MAXIMUM), min + w->overcommit);
	assert_int_equal(hk_pool_is_default(pool), w->is_default);
	assert_int_equal(hk_pool_is_gigantic(pool), w->gigantic);
	assert_int_equal(hk_pool_node_count(pool), w->n_nodes);
	for (size_t i = 0; i < w->n_nodes; i++) {
		assert_int_equal(hk_pool_node_id(pool, i), w->nodes[i].id);
		assert_int_equal(hk_pool_node_get(pool, i, HK_POOL_SIZE), w->size);
		assert_int_equal(hk_pool_node_get(pool, i, HK_POOL_NR), w->nodes[i].nr);
		assert_int_equal(hk_pool_node_get(pool, i, HK_POOL_FREE), w->nodes[i].free);
		assert_int_equal(hk_pool_node_get(pool, i, HK_POOL_SURPLUS), w->nodes[i].surplus);
		/* resv and overcommit exist only globally. */
		assert_int_equal(hk_pool_node_get(pool, i, HK_POOL_RESV), 0);
		assert_int_equal(hk_pool_node_get(pool, i, HK_POOL_OVERCOMMIT), 0);
	}
	/* Out of range. */
	assert_int_equal(hk_pool_node_id(pool, w->n_nodes), -1);
	assert_int_equal(hk_pool_node_get(pool, w->n_nodes, HK_POOL_NR), 0);
	hk_pool_unref(pool);
}

static void test_pool_x86_1node(void **state)
{
	static const struct pool_want want[] = {
		{2 * MiB, 10, 8, 2, 0, 10, true, false, 1, {{0, 10, 8, 0}}},
		{GiB, 0, 0, 0, 0, 0, false, true, 1, {{0, 0, 0, 0}}},
	};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	for (size_t i = 0; i < 2; i++)
		check_pool(t.ctx, &want[i]);
	tree_close(&t);
}

static void test_pool_x86_2node(void **state)
{
	static const struct pool_want want[] = {
		{2 * MiB, 24, 5, 2, 3, 8, true, false, 2, {{0, 16, 4, 1}, {1, 8, 1, 2}}},
		{GiB, 2, 1, 0, 0, 0, false, true, 2, {{0, 0, 0, 0}, {1, 2, 1, 0}}},
	};
	struct tree t;
	struct hk_pool *pool;

	(void)state;
	tree_open(&t, "x86-2node");
	for (size_t i = 0; i < 2; i++)
		check_pool(t.ctx, &want[i]);
	/* The numbers the README spells out: Minimum 21 (= vm.nr_hugepages), Maximum 29. */
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), 0);
	assert_int_equal(hk_pool_get(pool, HK_POOL_MINIMUM), 21);
	assert_int_equal(hk_pool_get(pool, HK_POOL_MAXIMUM), 29);
	hk_pool_unref(pool);
	tree_close(&t);
}

static void test_pool_arm64(void **state)
{
	static const struct pool_want want[] = {
		{64 * KiB, 4, 4, 0, 0, 0, false, false, 1, {{0, 4, 4, 0}}},
		{2 * MiB, 0, 0, 0, 0, 0, true, false, 1, {{0, 0, 0, 0}}},
		{32 * MiB, 1, 1, 0, 0, 0, false, true, 1, {{0, 1, 1, 0}}},
		{GiB, 0, 0, 0, 0, 0, false, true, 1, {{0, 0, 0, 0}}},
	};
	struct tree t;

	(void)state;
	tree_open(&t, "arm64");
	for (size_t i = 0; i < 4; i++)
		check_pool(t.ctx, &want[i]);
	tree_close(&t);
}

static void test_pool_unknown_size(void **state)
{
	struct hk_pool *pool = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_pool_read(t.ctx, 4 * MiB, &pool), -ENOENT);
	assert_int_equal(hk_pool_read(t.ctx, 64 * KiB, &pool), -ENOENT);
	assert_int_equal(hk_pool_read(t.ctx, 0, &pool), -EINVAL);
	assert_int_equal(hk_pool_read(t.ctx, 1000, &pool), -EINVAL);
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB + 1, &pool), -EINVAL);
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, NULL), -EINVAL);
	assert_null(pool);
	tree_close(&t);

	tree_open(&t, "nohugetlb");
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), -ENOENT);
	assert_null(pool);
	tree_close(&t);
}

static void test_pool_corrupt_counter(void **state)
{
	static const char *const files[] = {
		"sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
		"sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
		"sys/kernel/mm/hugepages/hugepages-2048kB/nr_overcommit_hugepages",
		"sys/devices/system/node/node1/hugepages/hugepages-2048kB/surplus_hugepages",
	};
	struct hk_pool *pool;
	struct tree t;

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		tree_open(&t, "x86-2node");
		fixture_write(t.dir, files[i], "abc\n");
		pool = NULL;
		assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), -EINVAL);
		assert_null(pool);
		/* The other size is untouched. */
		assert_int_equal(hk_pool_read(t.ctx, GiB, &pool), 0);
		assert_int_equal(hk_pool_get(pool, HK_POOL_NR), 2);
		hk_pool_unref(pool);
		tree_close(&t);
	}
}

static void test_pool_missing_resv(void **state)
{
	struct hk_pool *pool = NULL;
	struct tree t;
	char *path;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_true(asprintf(&path, "%s/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages",
			     t.dir) > 0);
	assert_int_equal(remove(path), 0);
	free(path);
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), -ENOENT);
	assert_null(pool);
	tree_close(&t);
}

static void test_pool_no_node_dirs(void **state)
{
	/* A node without hugepages files is left out; a tree without node sysfs has none. */
	struct hk_pool *pool = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	fixture_write(t.dir, "sys/devices/system/node/online", "0-1\n");
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), 0);
	assert_int_equal(hk_pool_node_count(pool), 1);
	assert_int_equal(hk_pool_node_id(pool, 0), 0);
	assert_int_equal(hk_pool_node_get(pool, 0, HK_POOL_NR), 10);
	hk_pool_unref(pool);
	tree_close(&t);
}

/* hk_pool_get's Minimum and Maximum at the edges: no wrap, whatever the counters say. */
static void test_pool_edges(void **state)
{
	static const struct {
		const char *nr, *surplus, *oc;
		uint64_t min, max;
	} cases[] = {
		{"10", "0", "18446744073709551615", 10, UINT64_MAX},
		{"10", "0", "18446744073709551614", 10, UINT64_MAX},
		{"0", "0", "18446744073709551615", 0, UINT64_MAX},
		{"1", "0", "18446744073709551614", 1, UINT64_MAX},
		{"0", "0", "18446744073709551614", 0, UINT64_MAX - 1},
		{"18446744073709551615", "0", "0", UINT64_MAX, UINT64_MAX},
		{"18446744073709551615", "0", "1", UINT64_MAX, UINT64_MAX},
		/* A racy read: surplus freed between the two files. */
		{"3", "5", "4", 0, 4},
		{"0", "18446744073709551615", "18446744073709551615", 0, UINT64_MAX},
		{"0", "0", "0", 0, 0},
	};
	static const char *const dir = "sys/kernel/mm/hugepages/hugepages-2048kB/";
	struct hk_pool *pool;
	struct tree t;
	char path[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tree_open(&t, "x86-1node");
		snprintf(path, sizeof(path), "%snr_hugepages", dir);
		fixture_write(t.dir, path, cases[i].nr);
		snprintf(path, sizeof(path), "%ssurplus_hugepages", dir);
		fixture_write(t.dir, path, cases[i].surplus);
		snprintf(path, sizeof(path), "%snr_overcommit_hugepages", dir);
		fixture_write(t.dir, path, cases[i].oc);
		assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), 0);
		assert_true(hk_pool_get(pool, HK_POOL_MINIMUM) == cases[i].min);
		assert_true(hk_pool_get(pool, HK_POOL_MAXIMUM) == cases[i].max);
		hk_pool_unref(pool);
		tree_close(&t);
	}
}

/* The planners' rule (lib/core/poolmath.h) at 0, 1, UINT64_MAX - 1 and UINT64_MAX. */
static void test_poolmath_edges(void **state)
{
	const uint64_t M = UINT64_MAX;

	(void)state;
	assert_true(hkp_sat_add(0, 0) == 0);
	assert_true(hkp_sat_add(1, M - 1) == M);
	assert_true(hkp_sat_add(1, M) == M);
	assert_true(hkp_sat_add(M, M) == M);
	assert_true(hkp_sat_add(M - 1, 0) == M - 1);
	assert_true(hkp_sat_sub(0, 1) == 0);
	assert_true(hkp_sat_sub(1, M) == 0);
	assert_true(hkp_sat_sub(M, M - 1) == 1);
	assert_true(hkp_sat_sub(M, 0) == M);

	/* Minimum: nr - surplus, 0 for a racy read with surplus above nr. */
	assert_true(hkp_pool_min(10, 2) == 8);
	assert_true(hkp_pool_min(2, 10) == 0);
	assert_true(hkp_pool_min(0, M) == 0);
	assert_true(hkp_pool_min(M, 0) == M);
	assert_true(hkp_pool_min(M, M) == 0);

	/* Maximum: Minimum + overcommit, UINT64_MAX (unlimited) when it does not fit. */
	assert_true(hkp_pool_max(10, 10) == 20);
	assert_true(hkp_pool_max(0, M) == M);
	assert_true(hkp_pool_max(1, M) == M);
	assert_true(hkp_pool_max(10, M) == M);
	assert_true(hkp_pool_max(1, M - 1) == M);
	assert_true(hkp_pool_max(0, M - 1) == M - 1);
	assert_true(hkp_pool_max(M, 0) == M);
	assert_true(hkp_pool_max(M - 1, 1) == M);

	/* Back to an overcommit: an unlimited Maximum stays unlimited. */
	assert_true(hkp_pool_oc(10, 20) == 10);
	assert_true(hkp_pool_oc(11, M) == M);
	assert_true(hkp_pool_oc(0, M) == M);
	assert_true(hkp_pool_oc(M, M) == M);
	assert_true(hkp_pool_oc(10, M - 1) == M - 11);
	assert_true(hkp_pool_oc(20, 10) == 0);
	assert_true(hkp_pool_oc(1, 1) == 0);
	assert_true(hkp_pool_oc(0, 0) == 0);
	/* The round trip of an unlimited overcommit, whatever the Minimum. */
	for (uint64_t min = 0; min < 3; min++)
		assert_true(hkp_pool_oc(min + 1, hkp_pool_max(min, M)) == M);
	assert_true(hkp_pool_oc(M - 1, hkp_pool_max(M, M)) == M);

	/* Bytes of pages: saturated, 0 pages or a 0 size is 0. */
	assert_true(hkp_bytes(3, 2 << 20) == 3ULL * (2 << 20));
	assert_true(hkp_bytes(M, 2 << 20) == M);
	assert_true(hkp_bytes((M / (1ULL << 30)) + 1, 1ULL << 30) == M);
	assert_true(hkp_bytes(M / (1ULL << 30), 1ULL << 30) == (M / (1ULL << 30)) * (1ULL << 30));
	assert_true(hkp_bytes(0, 1ULL << 30) == 0);
	assert_true(hkp_bytes(5, 0) == 0);

	/* The write order: the overcommit first when the new Minimum with today's overcommit is below the Maximum. */
	assert_true(hkp_overcommit_first(30, 8, 40, false));
	assert_false(hkp_overcommit_first(30, 10, 40, false));
	assert_false(hkp_overcommit_first(30, 8, 40, true));
	assert_false(hkp_overcommit_first(M, 1, M, false));

	/* Relative amounts: + stops at UINT64_MAX, - at 0; absolute is the count. */
	assert_true(hkp_adjust('+', M, 1) == M);
	assert_true(hkp_adjust('+', M - 1, 1) == M);
	assert_true(hkp_adjust('+', 1, M) == M);
	assert_true(hkp_adjust('+', 0, 0) == 0);
	assert_true(hkp_adjust('-', 0, 1) == 0);
	assert_true(hkp_adjust('-', 5, M) == 0);
	assert_true(hkp_adjust('-', M, 1) == M - 1);
	assert_true(hkp_adjust('-', M, M) == 0);
	assert_true(hkp_adjust(0, 10, M) == M);
	assert_true(hkp_adjust(0, M, 0) == 0);
}

static void check_nodes(const char *name, const int *want, size_t n_want)
{
	struct tree t;
	int *nodes = NULL;
	size_t n = 999;

	tree_open(&t, name);
	assert_int_equal(hk_node_list(t.ctx, &nodes, &n), 0);
	assert_non_null(nodes);
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nodes[i], want[i]);
	free(nodes);
	tree_close(&t);
}

static void test_node_list(void **state)
{
	static const int zero[] = {0}, two[] = {0, 1};
	struct tree t;
	int *nodes = NULL;
	size_t n = 999;

	(void)state;
	check_nodes("x86-1node", zero, 1);
	check_nodes("x86-2node", two, 2);
	check_nodes("arm64", zero, 1);

	/* No node sysfs: an empty list. */
	t.dir = fixture_empty();
	assert_int_equal(hk_new(t.dir, &t.ctx), 0);
	assert_int_equal(hk_node_list(t.ctx, &nodes, &n), 0);
	assert_int_equal(n, 0);
	free(nodes);
	/* A garbled online file. */
	fixture_write(t.dir, "sys/devices/system/node/online", "0-x\n");
	nodes = NULL;
	assert_int_equal(hk_node_list(t.ctx, &nodes, &n), -EINVAL);
	assert_null(nodes);
	tree_close(&t);
}

static void test_page_sizes_api(void **state)
{
	struct tree t;
	uint64_t v = 0, *sizes = NULL;
	size_t n = 0;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_default_page_size(t.ctx, &v), 0);
	assert_int_equal(v, 2 * MiB);
	assert_int_equal(hk_page_sizes(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(sizes[0], 2 * MiB);
	assert_int_equal(sizes[1], GiB);
	free(sizes);
	assert_int_equal(hk_base_page_size(t.ctx, &v), 0);
	assert_int_equal(v, 4096);
	tree_close(&t);

	tree_open(&t, "nohugetlb");
	v = 42;
	assert_int_equal(hk_default_page_size(t.ctx, &v), -EOPNOTSUPP);
	assert_int_equal(v, 42);
	assert_int_equal(hk_page_sizes(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 0);
	free(sizes);
	assert_int_equal(hk_page_sizes_ascending(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 0);
	free(sizes);
	tree_close(&t);
}

/* hk_page_sizes_ascending: smallest first, and /proc/meminfo never read. */
static void test_page_sizes_ascending(void **state)
{
	static const uint64_t want[] = {64 * KiB, 2 * MiB, 32 * MiB, GiB};
	uint64_t *sizes = NULL;
	struct tree t;
	size_t n = 0;

	(void)state;
	/* arm64: the default (2M) is not the smallest; hk_page_sizes puts it first. */
	tree_open(&t, "arm64");
	assert_int_equal(hk_page_sizes(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(sizes[0], 2 * MiB);
	assert_int_equal(sizes[1], 64 * KiB);
	free(sizes);
	assert_int_equal(hk_page_sizes_ascending(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sizes[i], want[i]);
	free(sizes);
	/* A meminfo that cannot be parsed fails the default's lookup, not this. */
	fixture_write(t.dir, "proc/meminfo", "Hugepagesize:   many kB\n");
	assert_true(hk_page_sizes(t.ctx, &sizes, &n) < 0);
	assert_int_equal(hk_page_sizes_ascending(t.ctx, &sizes, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(sizes[0], 64 * KiB);
	free(sizes);
	assert_int_equal(hk_page_sizes_ascending(NULL, &sizes, &n), -EINVAL);
	assert_int_equal(hk_page_sizes_ascending(t.ctx, NULL, &n), -EINVAL);
	tree_close(&t);
}

static void test_context(void **state)
{
	struct hk_ctx *ctx = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_string_equal(hk_get_sysroot(t.ctx), t.dir);
	assert_false(hk_is_live(t.ctx));
	hk_set_log_priority(t.ctx, LOG_INFO);
	assert_int_equal(hk_get_log_priority(t.ctx), LOG_INFO);
	/* A second reference keeps the context alive. */
	assert_ptr_equal(hk_ref(t.ctx), t.ctx);
	assert_null(hk_unref(t.ctx));
	assert_false(hk_is_live(t.ctx));
	tree_close(&t);

	assert_int_equal(hk_new("/", &ctx), 0);
	assert_true(hk_is_live(ctx));
	assert_string_equal(hk_get_sysroot(ctx), "/");
	hk_unref(ctx);
	ctx = NULL;
	assert_int_equal(hk_new(NULL, &ctx), 0);
	assert_true(hk_is_live(ctx));
	hk_unref(ctx);

	assert_int_equal(hk_new("/nonexistent-hugekit-root", &ctx), -ENOENT);
	assert_int_equal(hk_new("/", NULL), -EINVAL);
	assert_non_null(hk_get_library_version());
	assert_true(strlen(hk_get_library_version()) > 0);
}

static void test_sysctl(void **state)
{
	struct tree t;
	uint64_t v;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_MIN_FREE_KBYTES, &v), 0);
	assert_int_equal(v, 67584);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_SHMMAX, &v), 0);
	assert_true(v == UINT64_C(18446744073692774399));
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_SHMALL, &v), 0);
	assert_true(v == UINT64_C(18446744073692774399));
	v = 1;
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_HUGETLB_SHM_GROUP, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_NR_HUGEPAGES, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_NR_OVERCOMMIT_HUGEPAGES, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(hk_sysctl_read(t.ctx, (enum hk_sysctl)99, &v), -EINVAL);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_SHMMAX, NULL), -EINVAL);
	tree_close(&t);

	tree_open(&t, "x86-2node");
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_MIN_FREE_KBYTES, &v), 0);
	assert_int_equal(v, 90112);
	/* Persistent pages only: nr 24 - surplus 3. */
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_NR_HUGEPAGES, &v), 0);
	assert_int_equal(v, 21);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_NR_HUGEPAGES_MEMPOLICY, &v), 0);
	assert_int_equal(v, 21);
	tree_close(&t);

	tree_open(&t, "nohugetlb");
	v = 3;
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_NR_HUGEPAGES, &v), -ENOENT);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_HUGETLB_SHM_GROUP, &v), -ENOENT);
	assert_int_equal(v, 3);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_MIN_FREE_KBYTES, &v), 0);
	assert_int_equal(v, 67584);
	tree_close(&t);

	assert_string_equal(hk_sysctl_path(HK_SYSCTL_MIN_FREE_KBYTES),
			    "/proc/sys/vm/min_free_kbytes");
	assert_string_equal(hk_sysctl_path(HK_SYSCTL_SHMMAX), "/proc/sys/kernel/shmmax");
	assert_string_equal(hk_sysctl_path(HK_SYSCTL_NR_HUGEPAGES), "/proc/sys/vm/nr_hugepages");
	assert_null(hk_sysctl_path((enum hk_sysctl)99));
}

static void test_meminfo(void **state)
{
	struct tree t;
	uint64_t v;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_meminfo_read(t.ctx, "MemTotal", &v), 0);
	assert_int_equal(v, 24683520);
	assert_int_equal(hk_meminfo_read(t.ctx, "Hugetlb", &v), 0);
	assert_int_equal(v, 20480);
	assert_int_equal(hk_meminfo_read(t.ctx, "HugePages_Total", &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(hk_meminfo_read(t.ctx, "SwapTotal", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(hk_meminfo_read(t.ctx, "NoSuchKey", &v), -ENOENT);
	assert_int_equal(hk_meminfo_read(t.ctx, NULL, &v), -EINVAL);
	tree_close(&t);

	tree_open(&t, "x86-2node");
	assert_int_equal(hk_meminfo_read(t.ctx, "MemTotal", &v), 0);
	assert_int_equal(v, 49266176);
	assert_int_equal(hk_meminfo_read(t.ctx, "Hugetlb", &v), 0);
	assert_int_equal(v, 2146304);
	assert_int_equal(hk_meminfo_read(t.ctx, "HugePages_Surp", &v), 0);
	assert_int_equal(v, 3);
	tree_close(&t);

	tree_open(&t, "nohugetlb");
	assert_int_equal(hk_meminfo_read(t.ctx, "HugePages_Total", &v), -ENOENT);
	tree_close(&t);
}

static void test_zone_count(void **state)
{
	struct tree t;
	unsigned n = 0;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_zone_count(t.ctx, &n), 0);
	assert_int_equal(n, 5);
	tree_close(&t);
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_zone_count(t.ctx, &n), 0);
	assert_int_equal(n, 8);
	tree_close(&t);
}

static void check_thp(struct hk_ctx *ctx, const char *knob, const char *want)
{
	char *v = NULL;

	assert_int_equal(hk_thp_read(ctx, knob, &v), 0);
	assert_non_null(v);
	assert_string_equal(v, want);
	free(v);
}

static void test_thp(void **state)
{
	struct tree t;
	char *v = NULL;

	(void)state;
	tree_open(&t, "x86-1node");
	check_thp(t.ctx, "enabled", "madvise");
	check_thp(t.ctx, "defrag", "madvise");
	check_thp(t.ctx, "shmem_enabled", "never");
	/* A single word without brackets is the value itself. */
	check_thp(t.ctx, "hpage_pmd_size", "2097152");
	assert_int_equal(hk_thp_read(t.ctx, "no_such_knob", &v), -ENOENT);
	/* Knobs one directory down are reachable, nothing outside the THP directory is. */
	check_thp(t.ctx, "khugepaged/defrag", "1");
	assert_int_equal(hk_thp_read(t.ctx, "../hugepages/hugepages-2048kB/nr_hugepages", &v),
			 -EINVAL);
	assert_int_equal(hk_thp_read(t.ctx, "khugepaged/../enabled", &v), -EINVAL);
	assert_int_equal(hk_thp_read(t.ctx, "a/b/c", &v), -EINVAL);
	assert_int_equal(hk_thp_read(t.ctx, "", &v), -EINVAL);
	assert_null(v);
	/* The selection may be first or last. */
	fixture_write(t.dir, "sys/kernel/mm/transparent_hugepage/enabled",
		      "[always] madvise never\n");
	check_thp(t.ctx, "enabled", "always");
	fixture_write(t.dir, "sys/kernel/mm/transparent_hugepage/enabled",
		      "always madvise [never]\n");
	check_thp(t.ctx, "enabled", "never");
	/* Several words but no selection. */
	fixture_write(t.dir, "sys/kernel/mm/transparent_hugepage/enabled",
		      "always madvise never\n");
	assert_int_equal(hk_thp_read(t.ctx, "enabled", &v), -EINVAL);
	assert_null(v);
	/* Not a mode line (found by fuzz-sysfs): two words selected, unbalanced, empty. */
	static const char *const bad[] = {"[always madvise] never\n", "[Va [madvise] never\n",
					  "always] madvise\n", "always [madvise\n", "[] never\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fixture_write(t.dir, "sys/kernel/mm/transparent_hugepage/enabled", bad[i]);
		assert_int_equal(hk_thp_read(t.ctx, "enabled", &v), -EINVAL);
		assert_null(v);
	}
	tree_close(&t);

	tree_open(&t, "nohugetlb");
	check_thp(t.ctx, "enabled", "madvise");
	tree_close(&t);

	/* A kernel without THP. */
	t.dir = fixture_empty();
	assert_int_equal(hk_new(t.dir, &t.ctx), 0);
	assert_int_equal(hk_thp_read(t.ctx, "enabled", &v), -ENOENT);
	tree_close(&t);
}

static void test_recommended(void **state)
{
	struct tree t;
	uint64_t v;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_recommended_min_free_kbytes(t.ctx, &v), 0);
	assert_int_equal(v, 11 * 2048 * 5);
	assert_int_equal(v, 112640);
	assert_int_equal(hk_recommended_shmmax(t.ctx, &v), 0);
	assert_int_equal(v, 20 * 2 * MiB);
	assert_int_equal(v, 41943040);
	tree_close(&t);

	tree_open(&t, "x86-2node");
	assert_int_equal(hk_recommended_min_free_kbytes(t.ctx, &v), 0);
	assert_int_equal(v, 11 * 2048 * 8);
	/* 2M: Maximum 21 + 8 = 29; 1G: Maximum 2. */
	assert_int_equal(hk_recommended_shmmax(t.ctx, &v), 0);
	assert_int_equal(v, 29 * 2 * MiB + 2 * GiB);
	tree_close(&t);

	tree_open(&t, "arm64");
	/* 64K: 4 pages, 32M: 1 page. */
	assert_int_equal(hk_recommended_shmmax(t.ctx, &v), 0);
	assert_int_equal(v, 4 * 64 * KiB + 32 * MiB);
	tree_close(&t);

	tree_open(&t, "nohugetlb");
	assert_int_equal(hk_recommended_min_free_kbytes(t.ctx, &v), -EOPNOTSUPP);
	v = 1;
	assert_int_equal(hk_recommended_shmmax(t.ctx, &v), 0);
	assert_int_equal(v, 0);
	tree_close(&t);
}

static void test_recommended_shmmax_saturates(void **state)
{
	struct tree t;
	uint64_t v = 0;

	(void)state;
	tree_open(&t, "x86-1node");
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_overcommit_hugepages",
		      "18446744073709551615\n");
	assert_int_equal(hk_recommended_shmmax(t.ctx, &v), 0);
	assert_true(v == UINT64_MAX);
	tree_close(&t);
}

struct log_rec {
	unsigned n;
	int priority;
	char msg[1024];
};

static void log_cb(void *data, int priority, const char *msg)
{
	struct log_rec *r = data;

	r->n++;
	r->priority = priority;
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

static void test_log(void **state)
{
	struct log_rec rec = {0};
	struct hk_pool *pool = NULL;
	struct tree t;
	uint64_t v;

	(void)state;
	tree_open(&t, "nohugetlb");
	hk_set_log_fn(t.ctx, log_cb, &rec);

	/* Quiet at LOG_ERR: a failed read says nothing. */
	hk_set_log_priority(t.ctx, LOG_ERR);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_HUGETLB_SHM_GROUP, &v), -ENOENT);
	assert_int_equal(hk_default_page_size(t.ctx, &v), -EOPNOTSUPP);
	assert_int_equal(rec.n, 0);

	/* At LOG_DEBUG it is reported, with the file. */
	hk_set_log_priority(t.ctx, LOG_DEBUG);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_HUGETLB_SHM_GROUP, &v), -ENOENT);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.priority, LOG_DEBUG);
	assert_non_null(strstr(rec.msg, "/proc/sys/vm/hugetlb_shm_group"));
	assert_non_null(strstr(rec.msg, strerror(ENOENT)));

	rec.n = 0;
	assert_int_equal(hk_default_page_size(t.ctx, &v), -EOPNOTSUPP);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.priority, LOG_DEBUG);

	/* No callback: nothing is called (and nothing crashes). */
	rec.n = 0;
	hk_set_log_fn(t.ctx, NULL, NULL);
	assert_int_equal(hk_sysctl_read(t.ctx, HK_SYSCTL_HUGETLB_SHM_GROUP, &v), -ENOENT);
	assert_int_equal(rec.n, 0);
	tree_close(&t);

	/* A corrupt pool counter is logged at LOG_DEBUG with its file name. */
	tree_open(&t, "x86-1node");
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "abc\n");
	hk_set_log_fn(t.ctx, log_cb, &rec);
	hk_set_log_priority(t.ctx, 3);
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), -EINVAL);
	assert_int_equal(rec.n, 0);
	hk_set_log_priority(t.ctx, 7);
	assert_int_equal(hk_pool_read(t.ctx, 2 * MiB, &pool), -EINVAL);
	assert_null(pool);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.priority, LOG_DEBUG);
	assert_non_null(strstr(rec.msg, "hugepages-2048kB/free_hugepages"));
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_x86_1node),
		cmocka_unit_test(test_pool_x86_2node),
		cmocka_unit_test(test_pool_arm64),
		cmocka_unit_test(test_pool_unknown_size),
		cmocka_unit_test(test_pool_corrupt_counter),
		cmocka_unit_test(test_pool_missing_resv),
		cmocka_unit_test(test_pool_no_node_dirs),
		cmocka_unit_test(test_pool_edges),
		cmocka_unit_test(test_poolmath_edges),
		cmocka_unit_test(test_node_list),
		cmocka_unit_test(test_page_sizes_api),
		cmocka_unit_test(test_page_sizes_ascending),
		cmocka_unit_test(test_context),
		cmocka_unit_test(test_sysctl),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_zone_count),
		cmocka_unit_test(test_thp),
		cmocka_unit_test(test_recommended),
		cmocka_unit_test(test_recommended_shmmax_saturates),
		cmocka_unit_test(test_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
