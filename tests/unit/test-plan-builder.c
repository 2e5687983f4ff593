// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Review of the plan builder (a9931df), red before a fix: hk_plan_add() of an
 * item of the same plan (a copy of items[i], the natural way to re-add or
 * duplicate a step) reads the item after realloc() moved the array: a
 * heap-use-after-free under ASan, garbage strings copied without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_item_of_same_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
