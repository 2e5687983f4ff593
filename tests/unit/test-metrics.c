// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hk_metrics_read on fixture trees: the pools per size and node, what a grow
 * could get, the THP settings and counters, the cgroups (a limit "max" is
 * +Inf), the configuration's presence, validity and drift, and what could
 * not be read counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hugekit/hugekit.h>

#include "fixture.h"

static struct hk_metrics *read_tree(const char *root, const char *config)
{
	struct hk_ctx *ctx;
	struct hk_metrics *m = NULL;

	assert_int_equal(hk_new(root, &ctx), 0);
	hk_set_log_priority(ctx, 0);
	assert_int_equal(hk_metrics_read(ctx, config, 0, &m), 0);
	hk_unref(ctx);
	return m;
}

/* Whether sample s has every label of want (name, value, ..., NULL). */
static bool labels_match(const struct hk_metric_sample *s, const char *const *want)
{
	for (size_t w = 0; want[w]; w += 2) {
		bool found = false;

		for (size_t l = 0; s->labels[l]; l += 2)
			found |= strcmp(s->labels[l], want[w]) == 0 &&
				 strcmp(s->labels[l + 1], want[w + 1]) == 0;
		if (!found)
			return false;
	}
	return true;
}

/* The value of the sample of family name with the labels; NAN when there is none. */
static double value_of(const struct hk_metrics *m, const char *name, ...)
{
	const char *want[9];
	size_t n = 0;
	va_list ap;

	va_start(ap, name);
	while (n < 8 && (want[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	want[n] = NULL;
	for (size_t i = 0; i < hk_metrics_family_count(m); i++) {
		const struct hk_metric_family *f = hk_metrics_family_at(m, i);

		if (strcmp(f->name, name) != 0)
			continue;
		for (size_t k = 0; k < f->n_samples; k++)
			if (labels_match(hk_metrics_sample_at(m, i, k), want))
				return hk_metrics_sample_at(m, i, k)->value;
	}
	return NAN;
}

static const struct hk_metric_family *family(const struct hk_metrics *m, const char *name)
{
	for (size_t i = 0; i < hk_metrics_family_count(m); i++)
		if (strcmp(hk_metrics_family_at(m, i)->name, name) == 0)
			return hk_metrics_family_at(m, i);
	return NULL;
}

static void test_metrics_pools(void **state)
{
	char *root = fixture_copy("x86-2node");
	struct hk_metrics *m = read_tree(root, NULL);

	(void)state;
	/* x86-2node: 2M nr 24, free 5, resv 2, surplus 3, overcommit 8 (--pool-list: 21 24 29). */
	assert_true(value_of(m, "hugekit_pool_pages", "page_size", "2097152", NULL) == 24);
	assert_true(value_of(m, "hugekit_pool_free_pages", "page_size", "2097152", NULL) == 5);
	assert_true(value_of(m, "hugekit_pool_reserved_pages", "page_size", "2097152", NULL) == 2);
	assert_true(value_of(m, "hugekit_pool_surplus_pages", "page_size", "2097152", NULL) == 3);
	assert_true(value_of(m, "hugekit_pool_minimum_pages", "page_size", "2097152", NULL) == 21);
	assert_true(value_of(m, "hugekit_pool_maximum_pages", "page_size", "2097152", NULL) == 29);
	assert_true(value_of(m, "hugekit_pool_default", "page_size", "2097152", NULL) == 1);
	assert_true(value_of(m, "hugekit_pool_default", "page_size", "1073741824", NULL) == 0);
	/* Per node: the shares add up to the pool. */
	assert_true(value_of(m, "hugekit_node_pool_pages", "page_size", "2097152", "node", "0",
			     NULL) == 16);
	assert_true(value_of(m, "hugekit_node_pool_pages", "page_size", "2097152", "node", "1",
			     NULL) == 8);
	assert_true(value_of(m, "hugekit_node_pool_minimum_pages", "page_size", "2097152", "node",
			     "1", NULL) == 6);
	/* The free lists give 2M pages; a gigantic size has no sample. */
	assert_true(value_of(m, "hugekit_pool_obtainable_pages", "page_size", "2097152", NULL) ==
		    1228);
	assert_true(isnan(
		value_of(m, "hugekit_pool_obtainable_pages", "page_size", "1073741824", NULL)));
	assert_int_equal(family(m, "hugekit_pool_pages")->type, HK_METRIC_GAUGE);
	assert_int_equal(hk_metrics_errors(m), 0);
	assert_true(value_of(m, "hugekit_metrics_errors", NULL) == 0);
	hk_metrics_free(m);
	fixture_remove(root);
}

static void test_metrics_thp(void **state)
{
	char *root = fixture_copy("x86-2node");
	struct hk_metrics *m = read_tree(root, NULL);

	(void)state;
	assert_true(value_of(m, "hugekit_thp_info", "enabled", "madvise", "defrag", "madvise",
			     NULL) == 1);
	assert_true(value_of(m, "hugekit_thp_fault_alloc_total", NULL) == 100);
	assert_true(value_of(m, "hugekit_thp_fault_fallback_total", NULL) == 900);
	assert_true(value_of(m, "hugekit_compact_stall_total", NULL) == 500);
	assert_int_equal(family(m, "hugekit_thp_fault_alloc_total")->type, HK_METRIC_COUNTER);
	assert_true(value_of(m, "hugekit_mthp_anon_fault_alloc_total", "page_size", "65536",
			     NULL) == 800);
	hk_metrics_free(m);
	fixture_remove(root);
}

static void test_metrics_cgroups(void **state)
{
	char *root = fixture_copy("usage");
	struct hk_metrics *m = read_tree(root, NULL);
	const char *const cg[] = {"cgroup", "/db.slice", "page_size", "2097152", NULL};

	(void)state;
	assert_true(value_of(m, "hugekit_cgroup_usage_bytes", cg[0], cg[1], cg[2], cg[3], NULL) ==
		    6291456);
	assert_true(value_of(m, "hugekit_cgroup_limit_bytes", cg[0], cg[1], cg[2], cg[3], NULL) ==
		    20971520);
	assert_true(isinf(value_of(m, "hugekit_cgroup_reserved_limit_bytes", cg[0], cg[1], cg[2],
				   cg[3], NULL)));
	assert_true(value_of(m, "hugekit_cgroup_limit_refusals_total", cg[0], cg[1], cg[2], cg[3],
			     NULL) == 3);
	hk_metrics_free(m);
	fixture_remove(root);
}

static void test_metrics_config(void **state)
{
	char *root = fixture_copy("x86-2node"), conf[4096];
	struct hk_metrics *m;

	(void)state;
	/* None: present 0, and no verdict. */
	m = read_tree(root, NULL);
	assert_true(value_of(m, "hugekit_config_present", NULL) == 0);
	assert_true(isnan(value_of(m, "hugekit_config_drift", NULL)));
	hk_metrics_free(m);
	/* Matching: drift 0 over 2 items. */
	fixture_write(root, "etc/hugekit/hugekit.conf",
		      "[pool 2M]\nminimum = 21\n[thp]\nenabled = madvise\n");
	m = read_tree(root, NULL);
	assert_true(value_of(m, "hugekit_config_present", NULL) == 1);
	assert_true(value_of(m, "hugekit_config_valid", NULL) == 1);
	assert_true(value_of(m, "hugekit_config_items", NULL) == 2);
	assert_true(value_of(m, "hugekit_config_drift", NULL) == 0);
	assert_true(value_of(m, "hugekit_config_drifted_items", NULL) == 0);
	hk_metrics_free(m);
	/* A conf.d file that differs twice: drift 1, 2 items. */
	fixture_write(root, "etc/hugekit/conf.d/b.conf",
		      "[pool 1G]\nminimum = 5\n[sysctl]\nvm.min_free_kbytes = 1\n");
	m = read_tree(root, NULL);
	assert_true(value_of(m, "hugekit_config_drift", NULL) == 1);
	assert_true(value_of(m, "hugekit_config_drifted_items", NULL) == 2);
	hk_metrics_free(m);
	/* A path given: that file alone; a bad one is present and not valid. */
	snprintf(conf, sizeof(conf), "%s/bad.conf", root);
	fixture_write(root, "bad.conf", "[pool 2M]\nminimum = lots\n");
	m = read_tree(root, conf);
	assert_true(value_of(m, "hugekit_config_present", NULL) == 1);
	assert_true(value_of(m, "hugekit_config_valid", NULL) == 0);
	assert_true(isnan(value_of(m, "hugekit_config_drift", NULL)));
	assert_int_equal(hk_metrics_errors(m), 0);
	hk_metrics_free(m);
	fixture_remove(root);
}

static void test_metrics_errors(void **state)
{
	char *root = fixture_copy("x86-2node"), path[4096];
	struct hk_metrics *m = NULL;
	struct hk_ctx *ctx;

	(void)state;
	assert_int_equal(hk_new(root, &ctx), 0);
	hk_set_log_priority(ctx, 0);
	assert_int_equal(hk_metrics_read(ctx, NULL, 1, &m), -EINVAL);
	/* /proc/vmstat unreadable (a directory): every counter is a failure, counted. */
	snprintf(path, sizeof(path), "%s/proc/vmstat", root);
	assert_int_equal(remove(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(hk_metrics_read(ctx, NULL, 0, &m), 0);
	assert_int_equal(hk_metrics_errors(m), 16);
	assert_true(value_of(m, "hugekit_metrics_errors", NULL) == 16);
	assert_int_equal(family(m, "hugekit_thp_fault_alloc_total")->n_samples, 0);
	assert_null(hk_metrics_family_at(m, hk_metrics_family_count(m)));
	assert_null(hk_metrics_sample_at(m, 0, 99));
	hk_metrics_free(m);
	hk_unref(ctx);
	fixture_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_pools),	cmocka_unit_test(test_metrics_thp),
		cmocka_unit_test(test_metrics_cgroups), cmocka_unit_test(test_metrics_config),
		cmocka_unit_test(test_metrics_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
