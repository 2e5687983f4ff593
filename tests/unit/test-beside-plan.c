// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What libhugekit makes beside the plan, the parts that need no root. Swap
 * while a pool grows (lib/core/swap.c): the arguments refused, and a dry run
 * that makes nothing and names what it would make; the swap itself (made,
 * taken down, a killed run's file, files of others left alone) is
 * tests/live/swap.bats. Shared text (lib/core/sharedtext.c): the arguments
 * refused, and what a directory's and a file's names say (elflink-uid-<uid>,
 * 2.23's layout, and hugekit-text-<uid>; the runtime's names and 2.23's);
 * the walk on real mounts (links, foreign owners, removal) is
 * tests/live/hugeadm-shared-text.bats.
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

#include "internal.h"
#include "tree.h"

static void no_line(void *data, const char *path, const char *value)
{
	(void)data;
	(void)path;
	(void)value;
	fail_msg("a dry run of swap writes no file");
}

static void test_bad_arguments(void **state)
{
	struct hk_swap *swap = (struct hk_swap *)&swap;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_swap_add_file(NULL, 1 << 20, 0, &swap), -EINVAL);
	assert_int_equal(hk_swap_add_file(t.ctx, 0, 0, &swap), -EINVAL);
	assert_int_equal(hk_swap_add_file(t.ctx, 1 << 20, 0x80, &swap), -EINVAL);
	assert_int_equal(hk_swap_add_file(t.ctx, 1 << 20, 0, NULL), -EINVAL);
	assert_int_equal(hk_swap_add_ramdisks(t.ctx, 0, 0, &swap), -EINVAL);
	assert_int_equal(hk_swap_add_ramdisks(t.ctx, 2 << 20, 0x80, &swap), -EINVAL);
	assert_null(hk_swap_path(NULL));
	assert_int_equal(hk_swap_ramdisks(NULL), 0);
	hk_swap_remove(NULL);
	tree_close(&t);
}

/* A dry run: the file this process would make, named; nothing made, nothing to take down. */
static void test_dry_run_names_the_file(void **state)
{
	char want[128];
	struct hk_swap *swap = NULL;
	struct stat st;
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	hk_set_dry_run(t.ctx, no_line, NULL);
	assert_int_equal(hk_swap_add_file(t.ctx, 4 << 20, HK_SWAP_PERSIST, &swap), 0);
	assert_non_null(swap);
	snprintf(want, sizeof(want), "/var/lib/hugetlbfs/swap/temp/swapfile-%ld", (long)getpid());
	assert_string_equal(hk_swap_path(swap), want);
	assert_int_equal(hk_swap_ramdisks(swap), 0);
	assert_int_equal(stat(want, &st), -1);
	hk_swap_remove(swap);
	assert_int_equal(stat(want, &st), -1);
	hk_set_dry_run(t.ctx, NULL, NULL);
	tree_close(&t);
}

static int never(void *data, const struct hk_shared_text *file)
{
	(void)data;
	(void)file;
	fail_msg("not to be called");
	return 0;
}

static void test_shared_text_bad_arguments(void **state)
{
	struct hk_shared_text forged = {.size = sizeof(forged) - 1, .name = "x"};
	struct tree t;

	(void)state;
	tree_open(&t, "x86-1node");
	assert_int_equal(hk_shared_text_walk(NULL, -1, never, NULL), -EINVAL);
	assert_int_equal(hk_shared_text_walk(t.ctx, -1, NULL, NULL), -EINVAL);
	assert_int_equal(hk_shared_text_walk(t.ctx, (int64_t)UINT32_MAX, never, NULL), -EINVAL);
	assert_int_equal(hk_shared_text_remove(NULL), -EINVAL);
	/* Not one the walk gave (its size is not the library's): refused, nothing unlinked. */
	assert_int_equal(hk_shared_text_remove(&forged), -EINVAL);
	tree_close(&t);
}

/* The directories walked: either prefix, a uid as the runtime writes it (%lu). */
static void test_shared_text_dirs(void **state)
{
	static const struct {
		const char *name;
		enum hkl_text_dir kind;
		uid_t uid;
	} cases[] = {
		{"elflink-uid-0", HKL_TEXT_ELFLINK, 0},
		{"elflink-uid-65534", HKL_TEXT_ELFLINK, 65534},
		{"elflink-uid-4294967294", HKL_TEXT_ELFLINK, 4294967294u},
		{"hugekit-text-1000", HKL_TEXT_OLD, 1000},
		{"elflink-uid-", HKL_TEXT_NOT, 0},
		{"elflink-uid-00", HKL_TEXT_NOT, 0},
		{"elflink-uid-01", HKL_TEXT_NOT, 0},
		{"elflink-uid-x", HKL_TEXT_NOT, 0},
		{"elflink-uid-1x", HKL_TEXT_NOT, 0},
		{"elflink-uid--1", HKL_TEXT_NOT, 0},
		{"elflink-uid-4294967295", HKL_TEXT_NOT, 0},
		{"elflink-uid-10000000000", HKL_TEXT_NOT, 0},
		{"hugekit-text-00", HKL_TEXT_NOT, 0},
		{"elflink-gid-0", HKL_TEXT_NOT, 0},
		{"xelflink-uid-0", HKL_TEXT_NOT, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uid_t uid = 12345;

		print_message("%s\n", cases[i].name);
		assert_int_equal(hkl_text_dir_uid(cases[i].name, &uid), cases[i].kind);
		if (cases[i].kind != HKL_TEXT_NOT)
			assert_int_equal(uid, cases[i].uid);
	}
}

/* A file's name: the runtime's, 2.23's (in elflink-uid-<uid> only), a temporary one, or none. */
static void test_shared_text_names(void **state)
{
	static const struct {
		const char *name;
		enum hkl_text_dir dir;
		const char *exe, *key, *libhugetlbfs_exe;
		uint64_t offset;
		bool temporary;
	} cases[] = {
		{"prog.k1.200000", HKL_TEXT_ELFLINK, "prog", "k1", NULL, 0x200000, false},
		{"prog.k1.200000", HKL_TEXT_OLD, "prog", "k1", NULL, 0x200000, false},
		{"a_64_2.k1.0", HKL_TEXT_ELFLINK, "a_64_2", "k1", NULL, 0, false},
		{".hugekit-tmp-77-0", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, true},
		{"prog_64_2", HKL_TEXT_ELFLINK, NULL, NULL, "prog", 0, false},
		{"my_prog_32_10", HKL_TEXT_ELFLINK, NULL, NULL, "my_prog", 0, false},
		{"x.1.ab_64_4", HKL_TEXT_ELFLINK, NULL, NULL, "x.1.ab", 0, false},
		{"prog_64_2.tmp", HKL_TEXT_ELFLINK, NULL, NULL, "prog", 0, true},
		/* Not 2.23's where 2.23 never wrote: the old directory is the runtime's. */
		{"prog_64_2", HKL_TEXT_OLD, NULL, NULL, NULL, 0, false},
		{"prog_64_2.tmp", HKL_TEXT_OLD, NULL, NULL, NULL, 0, false},
		/* Not a name of either. */
		{"_64_2", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog_48_2", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog_64_", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog_64_02", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog_64_2x", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog_640_2", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog_64_123456", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{".tmp", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog.tmp", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
		{"prog.k1.20000g", HKL_TEXT_ELFLINK, NULL, NULL, NULL, 0, false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hkl_text_name tn;

		print_message("%s (%d)\n", cases[i].name, (int)cases[i].dir);
		assert_int_equal(hkl_text_name_parse(cases[i].name, cases[i].dir, &tn), 0);
		if (cases[i].exe) {
			assert_non_null(tn.exe);
			assert_string_equal(tn.exe, cases[i].exe);
			assert_string_equal(tn.key, cases[i].key);
			assert_int_equal(tn.offset, cases[i].offset);
		} else {
			assert_null(tn.exe);
			assert_null(tn.key);
		}
		if (cases[i].libhugetlbfs_exe) {
			assert_non_null(tn.libhugetlbfs_exe);
			assert_string_equal(tn.libhugetlbfs_exe, cases[i].libhugetlbfs_exe);
		} else {
			assert_null(tn.libhugetlbfs_exe);
		}
		assert_int_equal(tn.temporary, cases[i].temporary);
		hkl_text_name_free(&tn);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_dry_run_names_the_file),
		cmocka_unit_test(test_shared_text_bad_arguments),
		cmocka_unit_test(test_shared_text_dirs),
		cmocka_unit_test(test_shared_text_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
