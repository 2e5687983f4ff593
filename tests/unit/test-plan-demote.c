// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * [pool] demote = yes, from the review of e0850db (red before its fix): on the two-node
 * fixture tree (1G pool: 2 pages on node 1; demote files for 1G, demote_size
 * 2048kB; 2M pool: minimum 21 = nr 24 - surplus 3, overcommit 8).
 *
 * - The smaller pool's items run after the demote (hugekit.conf(5): "A [pool]
 *   of the smaller size with its own minimum is applied after, from the pages
 *   demoted first"): not so when its section comes first in the file. Then
 *   the 2M minimum is written first (fresh pages from the buddy allocator),
 *   the demote adds 1024 pages above it, the next --check drifts and the next
 *   --apply frees the demoted pages: not idempotent.
 * - The demoted pages join the smaller pool: its configured maximum must hold
 *   them (else the run leaves 1045 persistent 2M pages under "maximum = 30",
 *   and every later --check/--apply is a configuration error, exit 1).
 * - A demote the kernel cannot do is a problem of the configuration whatever
 *   the pool holds today (not only once the pool is above its minimum).
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

#include "errs.h"
#include "tree.h"

static struct hk_plan *plan_of(struct tree *t, const char *text, struct errs *errs)
{
	struct hk_config *cfg = NULL;
	struct hk_plan *plan = NULL;
	int rc;

	memset(errs, 0, sizeof(*errs));
	rc = hk_config_parse_string(t->ctx, "t.conf", text, collect, errs, &cfg);
	if (rc < 0)
		fail_msg("the config does not parse: %s", errs->buf);
	rc = hk_plan_from_config(t->ctx, cfg, collect, errs, &plan);
	hk_config_unref(cfg);
	if (rc < 0)
		assert_null(plan);
	return plan;
}

static size_t index_of(const struct hk_plan *plan, const char *item)
{
	const struct hk_plan_item *items;
	size_t n = hk_plan_items(plan, &items);

	for (size_t i = 0; i < n; i++)
		if (strcmp(items[i].item, item) == 0)
			return i;
	fail_msg("no item '%s' in the plan", item);
	return 0;
}

/* [pool 2M] before [pool 1G] in the file: the 1G demote still runs before the 2M minimum. */
static void test_demote_before_smaller_pool(void **state)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	size_t i_dem, i_min;

	(void)state;
	tree_open(&t, "x86-2node");
	plan = plan_of(&t,
		       "[pool 2M]\nminimum = 20\n"
		       "[pool 1G]\nminimum = 0\ndemote = yes\ndemote_size = 2M\n",
		       &errs);
	assert_non_null(plan);
	i_dem = index_of(plan, "pool 1G demote");
	i_min = index_of(plan, "pool 2M minimum");
	hk_plan_unref(plan);
	tree_close(&t);
	if (i_dem > i_min)
		fail_msg("pool 2M minimum is applied before pool 1G demote, whose pages it gets");
}

/*
 * [pool 2M] maximum = 30 while [pool 1G] demotes 2 pages into it: 21 + 1024
 * persistent 2M pages after the run, above the maximum. Said at planning,
 * nothing written.
 */
static void test_demote_into_smaller_maximum(void **state)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;

	(void)state;
	tree_open(&t, "x86-2node");
	plan = plan_of(&t,
		       "[pool 1G]\nminimum = 0\ndemote = yes\ndemote_size = 2M\n"
		       "[pool 2M]\nmaximum = 30\n",
		       &errs);
	if (plan) {
		hk_plan_unref(plan);
		tree_close(&t);
		fail_msg("planned: 1024 demoted 2M pages above [pool 2M] maximum = 30");
	}
	assert_non_null(strstr(errs.buf, "maximum"));
	tree_close(&t);
}

/* No demote file for 1G (a kernel before 5.16): refused even with the pool at its minimum. */
static void test_demote_no_files_at_minimum(void **state)
{
	static const char *const files[] = {
		"sys/kernel/mm/hugepages/hugepages-1048576kB/demote",
		"sys/kernel/mm/hugepages/hugepages-1048576kB/demote_size",
		"sys/devices/system/node/node0/hugepages/hugepages-1048576kB/demote",
		"sys/devices/system/node/node0/hugepages/hugepages-1048576kB/demote_size",
		"sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote",
		"sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote_size",
	};
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	char path[4096];

	(void)state;
	tree_open(&t, "x86-2node");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", t.dir, files[i]);
		assert_int_equal(unlink(path), 0);
	}
	/* Above the minimum: refused (as today). */
	plan = plan_of(&t, "[pool 1G]\nminimum = 0\ndemote = yes\n", &errs);
	assert_null(plan);
	assert_non_null(strstr(errs.buf, "t.conf:3: demote: the kernel cannot demote"));
	/* At the minimum: the same configuration is the same problem. */
	plan = plan_of(&t, "[pool 1G]\nminimum = 2\ndemote = yes\n", &errs);
	if (plan) {
		hk_plan_unref(plan);
		tree_close(&t);
		fail_msg("demote = yes accepted on a kernel that cannot demote (pool at minimum)");
	}
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demote_before_smaller_pool),
		cmocka_unit_test(test_demote_into_smaller_maximum),
		cmocka_unit_test(test_demote_no_files_at_minimum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
