// SPDX-License-Identifier: GPL-2.0-or-later
/* Size and node-list parsers of lib/common/parse.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <hugekit/hugekit.h>

#include "parse.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)
#define TiB (GiB * 1024)

struct size_case {
	const char *in;
	int rc;		/* expected return */
	uint64_t value; /* expected value when rc == 0 */
};

#define SENTINEL UINT64_C(0xdeadbeefcafef00d)

static void run_size_table(int (*fn)(const char *, uint64_t *), const struct size_case *t, size_t n,
			   const char *name)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = SENTINEL;
		int rc = fn(t[i].in, &v);

		if (rc != t[i].rc || (rc == 0 && v != t[i].value)) {
			print_error("%s(\"%s\"): rc %d value %llu, expected rc %d value %llu\n",
				    name, t[i].in, rc, (unsigned long long)v, t[i].rc,
				    (unsigned long long)t[i].value);
			fail();
		}
		/* A failed parse leaves the output alone. */
		if (rc < 0)
			assert_int_equal(v, SENTINEL);
	}
}

static const struct size_case legacy_cases[] = {
	{"2M", 0, 2 * MiB},
	{"2m", 0, 2 * MiB},
	{"2MB", 0, 2 * MiB}, /* anything after the suffix is ignored */
	{"2Mxyz", 0, 2 * MiB},
	{"2048K", 0, 2 * MiB},
	{"2048k", 0, 2 * MiB},
	{"2097152", 0, 2 * MiB},
	{"0x200000", 0, 2 * MiB},
	{"0x2M", 0, 2 * MiB},
	{"010", 0, 8},
	{"1G", 0, GiB},
	{"1g", 0, GiB},
	{"16G", 0, 16 * GiB},
	{"1T", 0, 1}, /* no T in libhugetlbfs: unknown suffix ignored */
	{"4096X", 0, 4096},
	{"0", -EINVAL, 0},
	{"0M", -EINVAL, 0},
	{"-2M", -EINVAL, 0},
	{"abc", -EINVAL, 0},
	{"M", -EINVAL, 0},
	{"", -EINVAL, 0},
	{"99999999999999999999", -EOVERFLOW, 0},
	{"9000000000000G", -EOVERFLOW, 0},
	{"9223372036854775807K", -EOVERFLOW, 0},
};

static void test_legacy_table(void **state)
{
	(void)state;
	run_size_table(hkc_parse_size_legacy, legacy_cases,
		       sizeof(legacy_cases) / sizeof(legacy_cases[0]), "hkc_parse_size_legacy");
	/* The public wrapper is the same parser. */
	run_size_table(hk_parse_size_legacy, legacy_cases,
		       sizeof(legacy_cases) / sizeof(legacy_cases[0]), "hk_parse_size_legacy");
}

static void test_legacy_null(void **state)
{
	uint64_t v = SENTINEL;

	(void)state;
	assert_int_equal(hkc_parse_size_legacy(NULL, &v), -EINVAL);
	assert_int_equal(v, SENTINEL);
}

static const struct size_case strict_cases[] = {
	{"2M", 0, 2 * MiB},
	{"2m", 0, 2 * MiB},
	{"2MB", 0, 2 * MiB}, /* binary, as libhugetlbfs read it */
	{"2Mb", 0, 2 * MiB},
	{"2MiB", 0, 2 * MiB},
	{"2mib", 0, 2 * MiB},
	{"2MIB", 0, 2 * MiB},
	{"1G", 0, GiB},
	{"1GiB", 0, GiB},
	{"1T", 0, TiB},
	{"1tb", 0, TiB},
	{"64K", 0, 64 * KiB},
	{"64kB", 0, 64 * KiB},
	{"4096", 0, 4096},
	{"18446744073709551615", 0, UINT64_MAX},
	{"17179869183G", 0, UINT64_C(17179869183) * GiB}, /* largest G that fits */
	{"2Mi", -EINVAL, 0},
	{"2i", -EINVAL, 0},
	{"2B", -EINVAL, 0},
	{"2iB", -EINVAL, 0},
	{"2.5M", -EINVAL, 0},
	{" 2M", -EINVAL, 0},
	{"2M ", -EINVAL, 0},
	{"2 M", -EINVAL, 0},
	{"2M\n", -EINVAL, 0},
	{"+2M", -EINVAL, 0},
	{"-2M", -EINVAL, 0},
	{"0x10", -EINVAL, 0},
	{"2X", -EINVAL, 0},
	{"", -EINVAL, 0},
	{"M", -EINVAL, 0},
	{"MB", -EINVAL, 0},
	{"2MBB", -EINVAL, 0},
	{"2MiBB", -EINVAL, 0},
	{"2MM", -EINVAL, 0},
	{"18446744073709551616", -ERANGE, 0},
	{"99999999999999999999K", -ERANGE, 0},
	{"17179869184G", -ERANGE, 0},
	{"16777216T", -ERANGE, 0},
};

static void test_strict_table(void **state)
{
	(void)state;
	run_size_table(hkc_parse_size, strict_cases, sizeof(strict_cases) / sizeof(strict_cases[0]),
		       "hkc_parse_size");
	run_size_table(hk_parse_size, strict_cases, sizeof(strict_cases) / sizeof(strict_cases[0]),
		       "hk_parse_size");
}

static void test_strict_null(void **state)
{
	uint64_t v = SENTINEL;

	(void)state;
	assert_int_equal(hkc_parse_size(NULL, &v), -EINVAL);
	assert_int_equal(v, SENTINEL);
}

/* hugeadm's amounts (hkc_parse_amount): 2.23's number in any base, K/M/G, B or iB, nothing after. */
static void test_amount_table(void **state)
{
	static const struct {
		const char *s;
		int rc;
		uint64_t v;
		bool bytes;
	} cases[] = {
		{"0", 0, 0, false},
		{"512", 0, 512, false},
		{"0x10", 0, 16, false},
		{"010", 0, 8, false},
		{"64M", 0, 64 * MiB, true},
		{"64mib", 0, 64 * MiB, true},
		{"1GB", 0, GiB, true},
		{"0x10K", 0, 16 * KiB, true},
		{"18446744073709551615", 0, UINT64_MAX, false},
		{"17179869183G", 0, UINT64_C(17179869183) * GiB, true},
		{"17179869184G", -ERANGE, 0, false},
		{"18446744073709551616", -ERANGE, 0, false},
		{"1T", -EINVAL, 0, false}, /* 2.23 read it as 1 */
		{"64Mi", -EINVAL, 0, false},
		{"64 M", -EINVAL, 0, false},
		{"1.5G", -EINVAL, 0, false},
		{"512X", -EINVAL, 0, false},
		{"+5", -EINVAL, 0, false}, /* the sign is the caller's */
		{"", -EINVAL, 0, false},
		{"0xK", -EINVAL, 0, false},
	};

	/* lib/common's, and the public one the tools call (HK_1.6). */
	int (*const fns[])(const char *, uint64_t *, bool *) = {hkc_parse_amount, hk_parse_amount};

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			uint64_t v = SENTINEL;
			bool bytes = !cases[i].bytes;
			int rc = fns[f](cases[i].s, &v, &bytes);

			if (rc != cases[i].rc ||
			    (rc == 0 && (v != cases[i].v || bytes != cases[i].bytes)) ||
			    (rc < 0 && v != SENTINEL))
				fail_msg("parse_amount #%zu(\"%s\"): %d, %" PRIu64 ", %d", f,
					 cases[i].s, rc, v, bytes);
		}
		assert_int_equal(fns[f](NULL, NULL, NULL), -EINVAL);
	}
}

/* The public count and size format the tools use (HK_1.6). */
static void test_count_and_format(void **state)
{
	static const struct {
		uint64_t v;
		const char *s;
	} sizes[] = {
		{2 * MiB, "2M"},	  {GiB, "1G"}, {64 * KiB, "64K"}, {512, "512"},
		{3 * MiB + KiB, "3073K"},
	};
	uint64_t v = SENTINEL;
	char buf[32];

	(void)state;
	assert_int_equal(hk_parse_count("42", &v), 0);
	assert_true(v == 42);
	assert_int_equal(hk_parse_count("42\n", &v), 0);
	assert_int_equal(hk_parse_count("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(hk_parse_count("18446744073709551616", &v), -ERANGE);
	assert_int_equal(hk_parse_count("0x10", &v), -EINVAL);
	assert_int_equal(hk_parse_count("-1", &v), -EINVAL);
	assert_int_equal(hk_parse_count("", &v), -EINVAL);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		hk_format_size(buf, sizeof(buf), sizes[i].v);
		assert_string_equal(buf, sizes[i].s);
	}
}

static void test_is_pow2(void **state)
{
	(void)state;
	assert_false(hkc_is_pow2(0));
	assert_true(hkc_is_pow2(1));
	assert_true(hkc_is_pow2(2));
	assert_false(hkc_is_pow2(3));
	assert_true(hkc_is_pow2(4096));
	assert_false(hkc_is_pow2(4097));
	assert_true(hkc_is_pow2(2 * MiB));
	assert_false(hkc_is_pow2(3 * MiB));
	assert_false(hkc_is_pow2(2 * MiB + 1));
	assert_true(hkc_is_pow2(GiB));
	assert_true(hkc_is_pow2(UINT64_C(1) << 63));
	assert_false(hkc_is_pow2(UINT64_MAX));
	assert_false(hkc_is_pow2((UINT64_C(1) << 63) | 1));
}

struct nodelist_case {
	const char *in;
	int rc;
	size_t n;
	int nodes[8];
};

static const struct nodelist_case nodelist_cases[] = {
	{"0", 0, 1, {0}},
	{"0\n", 0, 1, {0}},
	{"0,2-3", 0, 3, {0, 2, 3}},
	{"3,1,1-2\n", 0, 3, {1, 2, 3}},
	{"0-1", 0, 2, {0, 1}},
	{"5-5", 0, 1, {5}},
	{"7,0-2,5", 0, 5, {0, 1, 2, 5, 7}},
	{"1023", 0, 1, {1023}},
	{"", 0, 0, {0}},
	{"\n", 0, 0, {0}},
	{"1-0", -EINVAL, 0, {0}},
	{"a", -EINVAL, 0, {0}},
	{"0,,1", -EINVAL, 0, {0}},
	{"0,", -EINVAL, 0, {0}},
	{",0", -EINVAL, 0, {0}},
	{"0-", -EINVAL, 0, {0}},
	{"-1", -EINVAL, 0, {0}},
	{"0 1", -EINVAL, 0, {0}},
	{" 0", -EINVAL, 0, {0}},
	{"0\n\n", -EINVAL, 0, {0}},
	{"0-+1", -EINVAL, 0, {0}},
	{"1024", -ERANGE, 0, {0}},
	{"0-1024", -ERANGE, 0, {0}},
	{"99999999999999999999999", -ERANGE, 0, {0}},
};

static void check_nodelist(int (*fn)(const char *, int **, size_t *), const char *name)
{
	for (size_t i = 0; i < sizeof(nodelist_cases) / sizeof(nodelist_cases[0]); i++) {
		const struct nodelist_case *c = &nodelist_cases[i];
		int *nodes = NULL;
		size_t n = 999;
		int rc = fn(c->in, &nodes, &n);

		if (rc != c->rc) {
			print_error("%s(\"%s\"): rc %d, expected %d\n", name, c->in, rc, c->rc);
			free(nodes);
			fail();
		}
		if (rc < 0) {
			assert_null(nodes);
			assert_int_equal(n, 999);
			continue;
		}
		assert_non_null(nodes);
		if (n != c->n) {
			print_error("%s(\"%s\"): %zu nodes, expected %zu\n", name, c->in, n, c->n);
			free(nodes);
			fail();
		}
		for (size_t j = 0; j < n; j++) {
			if (nodes[j] != c->nodes[j]) {
				print_error("%s(\"%s\")[%zu] = %d, expected %d\n", name, c->in, j,
					    nodes[j], c->nodes[j]);
				free(nodes);
				fail();
			}
		}
		free(nodes);
	}
}

static void test_nodelist_table(void **state)
{
	(void)state;
	check_nodelist(hkc_nodelist_parse, "hkc_nodelist_parse");
	check_nodelist(hk_nodelist_parse, "hk_nodelist_parse");
}

static void test_nodelist_full_range(void **state)
{
	int *nodes = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(hkc_nodelist_parse("0-1023", &nodes, &n), 0);
	assert_int_equal(n, HKC_MAX_NODES);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nodes[i], (int)i);
	free(nodes);
	assert_int_equal(hkc_nodelist_parse(NULL, &nodes, &n), -EINVAL);
}

/* HUGETLB_VERBOSE and HUGETLB_DEBUG, as 2.23's atoi() read them, held to 0..99. */
/* The one mode grammar (a configuration's check and its planner): octal, 0000 to 7777. */
static void test_mode(void **state)
{
	static const struct {
		const char *s;
		int rc;
		uint32_t v;
	} t[] = {
		{"755", 0, 0755},      {"0700", 0, 0700},     {"1777", 0, 01777},
		{"0", 0, 0},	       {"00000755", 0, 0755}, {"7777", 0, 07777},
		{"17777", -EINVAL, 0}, {"0999", -EINVAL, 0},  {"", -EINVAL, 0},
		{"-755", -EINVAL, 0},  {"0x1ff", -EINVAL, 0}, {"755 ", -EINVAL, 0},
		{"+755", -EINVAL, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint32_t v = 12345;

		if (hkc_parse_mode(t[i].s, &v) != t[i].rc || (t[i].rc == 0 && v != t[i].v))
			fail_msg("'%s': wanted %d %o, got %o", t[i].s, t[i].rc, t[i].v, v);
	}
}

static void test_verbosity_env(void **state)
{
	static const struct {
		const char *verbose, *debug;
		int want;
	} t[] = {
		{NULL, NULL, 2},
		{"", NULL, 0},
		{"abc", NULL, 0},
		{"5x", NULL, 5},
		{" 4", NULL, 4},
		{"\t7", NULL, 7},
		{"+3", NULL, 3},
		{"0", NULL, 0},
		{"99", NULL, 99},
		{"150", NULL, 99},
		{"-1", NULL, 0},
		{"-", NULL, 0},
		{"99999999999999999999", NULL, 99},
		{NULL, "", 4},
		{"99", "1", 4},
		{"0", "no", 4},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int got = hkc_verbosity_env(t[i].verbose, t[i].debug, 2);

		/* The public one (HK_1.6), which the tools call, reads it the same way. */
		if (hk_verbosity_env(t[i].verbose, t[i].debug, 2) != got)
			fail_msg("hk_verbosity_env differs for %s",
				 t[i].verbose ? t[i].verbose : "(unset)");
		if (got != t[i].want)
			fail_msg("HUGETLB_VERBOSE=%s HUGETLB_DEBUG=%s: %d, wanted %d",
				 t[i].verbose ? t[i].verbose : "(unset)",
				 t[i].debug ? t[i].debug : "(unset)", got, t[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legacy_table),   cmocka_unit_test(test_legacy_null),
		cmocka_unit_test(test_strict_table),   cmocka_unit_test(test_strict_null),
		cmocka_unit_test(test_amount_table),   cmocka_unit_test(test_count_and_format),
		cmocka_unit_test(test_verbosity_env),  cmocka_unit_test(test_is_pow2),
		cmocka_unit_test(test_nodelist_table), cmocka_unit_test(test_nodelist_full_range),
		cmocka_unit_test(test_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
