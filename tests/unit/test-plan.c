// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plan (lib/core/plan.c) on the two-node fixture tree: a configuration
 * resolved into items in the applied order, with their files, values and
 * places; problems that only the machine shows, each at its file:line; check
 * and apply on the tree (apply makes check true; a second apply has nothing
 * to do).
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

/* Resolve text on the tree; the plan, or NULL with the errors in *errs. */
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

static const struct hk_plan_item *find(const struct hk_plan *plan, const char *item, size_t *ret_i)
{
	const struct hk_plan_item *items;
	size_t n = hk_plan_items(plan, &items);

	for (size_t i = 0; i < n; i++) {
		if (strcmp(items[i].item, item) == 0) {
			if (ret_i)
				*ret_i = i;
			return &items[i];
		}
	}
	fail_msg("no item '%s' in the plan", item);
	return NULL;
}

/* No item of that name in the plan. */
static void n_items_without(const struct hk_plan *plan, const char *item)
{
	const struct hk_plan_item *items;
	size_t n = hk_plan_items(plan, &items);

	for (size_t i = 0; i < n; i++)
		if (strcmp(items[i].item, item) == 0)
			fail_msg("an item '%s' in the plan", item);
}

static void add_cgroup_root(struct tree *t)
{
	fixture_write(t->dir, "sys/fs/cgroup/cgroup.controllers",
		      "cpuset cpu io memory hugetlb pids\n");
	fixture_write(t->dir, "sys/fs/cgroup/cgroup.subtree_control", "memory pids\n");
}

/*
 * The tree as a kernel shows it: the default size's /proc/sys/vm files are the
 * same attributes as its sysfs ones (in-tree links, which the path layer
 * follows), and no surplus pages (a plain nr_hugepages file does not turn
 * surplus pages into persistent ones on a write, as the kernel does).
 */
static void kernel_like(struct tree *t)
{
	static const char *const links[][2] = {
		{"proc/sys/vm/nr_hugepages",
		 "../../../sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"},
		{"proc/sys/vm/nr_overcommit_hugepages",
		 "../../../sys/kernel/mm/hugepages/hugepages-2048kB/nr_overcommit_hugepages"},
	};
	static const char *const surplus[] = {
		"sys/kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages",
		"sys/devices/system/node/node0/hugepages/hugepages-2048kB/surplus_hugepages",
		"sys/devices/system/node/node1/hugepages/hugepages-2048kB/surplus_hugepages",
	};
	char path[4096];

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", t->dir, links[i][0]);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(symlink(links[i][1], path), 0);
	}
	for (size_t i = 0; i < sizeof(surplus) / sizeof(surplus[0]); i++)
		fixture_write(t->dir, surplus[i], "0\n");
}

static const char full[] = "[thp]\n"
			   "enabled = never\n"
			   "[pool 2M]\n"
			   "minimum = 10@0, 20@1\n"
			   "maximum = 40\n"
			   "[sysctl]\n"
			   "vm.min_free_kbytes = recommended\n"
			   "kernel.shmmax = recommended\n"
			   "[pool 1G]\n"
			   "minimum = 2\n"
			   "[mount /dev/hugepages-2M]\n"
			   "pagesize = 2M\n"
			   "user = 0\n"
			   "mode = 0770\n"
			   "size = 1G\n"
			   "[cgroup db.slice/pg]\n"
			   "hugetlb.2M.max = 64M\n"
			   "hugetlb.1GB.rsvd.max = max\n";

static void test_items(void **state)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	const struct hk_plan_item *it;
	size_t i_thp, i_sys, i_pool, i_mount, i_cg;
	uint64_t kb;

	(void)state;
	tree_open(&t, "x86-2node");
	add_cgroup_root(&t);
	/* Below the recommendation, which is written only to raise shmmax. */
	fixture_write(t.dir, "proc/sys/kernel/shmmax", "33554432\n");
	plan = plan_of(&t, full, &errs);
	if (!plan)
		fail_msg("%s", errs.buf);

	it = find(plan, "thp enabled", &i_thp);
	assert_string_equal(it->path, "/sys/kernel/mm/transparent_hugepage/enabled");
	assert_string_equal(it->value, "never");
	assert_string_equal(it->file, "t.conf");
	assert_int_equal(it->line, 2);
	assert_string_equal(it->why, "[thp] enabled = never");

	it = find(plan, "sysctl vm.min_free_kbytes", &i_sys);
	assert_int_equal(hk_recommended_min_free_kbytes(t.ctx, &kb), 0);
	assert_int_equal(strtoull(it->value, NULL, 10), kb);
	assert_string_equal(it->path, "/proc/sys/vm/min_free_kbytes");
	/* The pools as the plan leaves them: 2M max 40 pages, 1G min 2 pages. */
	it = find(plan, "sysctl kernel.shmmax", NULL);
	assert_int_equal(strtoull(it->value, NULL, 10),
			 40 * (UINT64_C(2) << 20) + (UINT64_C(2) << 30));

	it = find(plan, "pool 2M node 1 minimum", &i_pool);
	assert_string_equal(
		it->path, "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages");
	assert_int_equal(it->number, 20);
	assert_int_equal(it->node, 1);
	assert_int_equal(it->field, HK_POOL_MINIMUM);
	assert_int_equal(it->line, 4);
	it = find(plan, "pool 2M overcommit", NULL);
	assert_string_equal(it->value, "10"); /* overcommit: 40 - (10 + 20) */
	assert_string_equal(it->path, "/proc/sys/vm/nr_overcommit_hugepages");
	it = find(plan, "pool 1G minimum", NULL);
	assert_int_equal(it->node, HK_NODE_ALL);
	assert_int_equal(it->page_size, UINT64_C(1) << 30);

	it = find(plan, "mount /dev/hugepages-2M", &i_mount);
	assert_int_equal(it->kind, HK_PLAN_MOUNT);
	assert_string_equal(it->value,
			    "pagesize=2097152,size=1073741824,uid=0,gid=0,mode=0770,nosuid,nodev");
	assert_int_equal(it->mode, 0770);

	/* The root's controller, then each level made and given it, then the limits. */
	it = find(plan, "cgroup / +hugetlb", &i_cg);
	assert_int_equal(it->kind, HK_PLAN_CONTROLLER);
	assert_string_equal(it->path, "/sys/fs/cgroup/cgroup.subtree_control");
	assert_null(it->file);
	assert_int_equal(find(plan, "cgroup db.slice", NULL)->kind, HK_PLAN_MKDIR);
	assert_string_equal(find(plan, "cgroup db.slice +hugetlb", NULL)->path,
			    "/sys/fs/cgroup/db.slice/cgroup.subtree_control");
	it = find(plan, "cgroup db.slice/pg hugetlb.2MB.max", NULL);
	assert_string_equal(it->path, "/sys/fs/cgroup/db.slice/pg/hugetlb.2MB.max");
	assert_string_equal(it->value, "67108864");
	assert_string_equal(find(plan, "cgroup db.slice/pg hugetlb.1GB.rsvd.max", NULL)->value,
			    "max");

	/* The documented order. */
	/* The order of hugeadm's options: THP, the pools, then the sysctls such as min_free_kbytes. */
	assert_true(i_thp < i_pool);
	assert_true(i_pool < i_sys);
	assert_true(i_sys < i_mount);
	assert_true(i_mount < i_cg);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* Each machine problem, named at its line; and no plan. */
static void expect_error(const char *text, const char *want)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;

	tree_open(&t, "x86-2node");
	plan = plan_of(&t, text, &errs);
	if (plan || !strstr(errs.buf, want))
		fail_msg("wanted '%s', got: %s", want, errs.buf);
	tree_close(&t);
}

/*
 * A sysctl the kernel does not have, whatever its key: named at its line
 * with its file, and no plan (never a write that fails midway, never a
 * message without its place).
 */
static void test_missing_sysctls(void **state)
{
	static const char *const files[] = {"kernel/shmmax", "kernel/shmmax", "vm/min_free_kbytes",
					    "vm/hugetlb_shm_group"};
	static const char *const texts[] = {
		"[sysctl]\nkernel.shmmax = 1G\n", "[sysctl]\nkernel.shmmax = recommended\n",
		"[sysctl]\nvm.min_free_kbytes = 100\n", "[sysctl]\nvm.hugetlb_shm_group = 0\n"};
	char path[4096], want[256];

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		struct tree t;
		struct errs errs;

		tree_open(&t, "x86-2node");
		snprintf(path, sizeof(path), "%s/proc/sys/%s", t.dir, files[i]);
		assert_int_equal(unlink(path), 0);
		assert_null(plan_of(&t, texts[i], &errs));
		snprintf(want, sizeof(want),
			 "t.conf:2: [sysctl] %.*s: the kernel has no such setting (/proc/sys/%s)",
			 (int)(strchr(texts[i] + 9, ' ') - (texts[i] + 9)), texts[i] + 9, files[i]);
		if (!strstr(errs.buf, want))
			fail_msg("wanted '%s', got: %s", want, errs.buf);
		tree_close(&t);
	}
}

/*
 * What cannot be read is said at its key or section, never as "no such
 * page size" of a pool the machine has, never in silence; a section's
 * problems are all said; a node is one the machine lists online.
 */
static void test_unreadable(void **state)
{
	struct tree t;
	struct errs errs;
	char path[4096];

	(void)state;
	tree_open(&t, "x86-2node");
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages",
		 t.dir);
	assert_int_equal(unlink(path), 0);
	assert_null(plan_of(&t, "[pool 2M]\nminimum = 30\n", &errs));
	assert_non_null(
		strstr(errs.buf, "t.conf:2: [pool 2M]: cannot read the 2M pool: No such file"));
	assert_null(strstr(errs.buf, "no such huge page size"));
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "abc\n");
	assert_null(plan_of(&t, "[mount /mnt/h]\npagesize = 1G\n", &errs));
	assert_non_null(
		strstr(errs.buf, "[mount /mnt/h]: cannot read the 1G pool: Invalid argument"));
	tree_close(&t);

	tree_open(&t, "x86-2node");
	/* Both problems of one section: 2M pages cannot be demoted here, and the maximum. */
	assert_null(plan_of(&t, "[pool 2M]\nminimum = 10@0\ndemote = yes\nmaximum = 12\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:3: demote: the kernel cannot demote these pages"));
	assert_non_null(strstr(errs.buf, "t.conf:4: maximum 12 is below the minimum 16"));
	/* demote without a minimum, and a maximum below the pool's minimum now. */
	assert_null(plan_of(&t, "[pool 2M]\ndemote = yes\nmaximum = 3\n", &errs));
	assert_non_null(
		strstr(errs.buf, "t.conf:2: demote = yes: no minimum in [pool] to shrink to"));
	assert_non_null(strstr(errs.buf, "t.conf:3: maximum 3 is below the minimum"));
	/* min_free_kbytes = recommended without the zones it is computed from. */
	snprintf(path, sizeof(path), "%s/proc/zoneinfo", t.dir);
	assert_int_equal(unlink(path), 0);
	assert_null(plan_of(&t, "[sysctl]\nvm.min_free_kbytes = recommended\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:2: [sysctl] vm.min_free_kbytes = recommended: "
					 "cannot compute it"));
	/* Node 1 offline: no node 1, whatever its directory. */
	fixture_write(t.dir, "sys/devices/system/node/online", "0\n");
	assert_null(plan_of(&t, "[pool 2M]\nminimum = 3@1\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:2: minimum 3@1: this machine has no NUMA node 1"));
	tree_close(&t);
}

/* Each problem of a [mount] said, those of its keys and its page size's alike. */
static void test_mount_problems(void **state)
{
	struct tree t;
	struct errs errs;

	(void)state;
	tree_open(&t, "x86-2node");
	assert_null(plan_of(&t, "[mount /mnt/w]\npagesize = 4M\nuser = no-such-user-hk\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:2: pagesize '4M': this machine has no such"));
	assert_non_null(strstr(errs.buf, "t.conf:3: user 'no-such-user-hk': no such user"));
	assert_null(plan_of(&t, "[mount /mnt/z]\nsize = 3M\nmin_size = 1M\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:2: size '3M': not a whole number of 2M pages"));
	assert_non_null(
		strstr(errs.buf, "t.conf:3: min_size '1M': not a whole number of 2M pages"));
	assert_null(plan_of(&t, "[mount /mnt/z]\nsize = 18446744073709551615\n", &errs));
	assert_non_null(strstr(errs.buf, "not a whole number of 2M pages"));
	tree_close(&t);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(
		"[pool 4M]\nminimum = 1\n",
		"t.conf:1: [pool] '4M': this machine has no such huge page size (it has 2M, 1G)");
	expect_error("[pool 2M]\n\nminimum = 1@0, 2@7\n",
		     "t.conf:3: minimum 2@7: this machine has no NUMA node 7");
	expect_error("[pool 1G]\nminimum = 1\nmaximum = 3\n",
		     "t.conf:3: maximum 3: gigantic pages cannot be overcommitted");

	expect_error("[thp]\nhugepages-8kB/enabled = always\n",
		     "t.conf:2: [thp] hugepages-8kB/enabled: the kernel has no such knob");
	expect_error(
		"[sysctl]\nvm.compaction_proactiveness = 20\n",
		"t.conf:2: [sysctl] vm.compaction_proactiveness: the kernel has no such setting");
	expect_error("[sysctl]\nvm.hugetlb_shm_group = no-such-group-hk\n",
		     "t.conf:2: vm.hugetlb_shm_group 'no-such-group-hk': no such group");
	/* node1 keeps its 6 persistent pages: the pool's minimum is 26, not 20. */
	expect_error("[pool 2M]\nminimum = 20@0\nmaximum = 20\n",
		     "t.conf:3: maximum 20 is below the minimum 26");
	expect_error("[mount /mnt/h]\npagesize = 4M\n",
		     "t.conf:2: pagesize '4M': this machine has no such huge page size");
	expect_error("[mount /mnt/h]\nuser = no-such-user-hk\n",
		     "t.conf:2: user 'no-such-user-hk': no such user");
	expect_error("[mount /mnt/h]\nsize = 3M\n",
		     "t.conf:2: size '3M': not a whole number of 2M pages");
	expect_error("[cgroup a]\nhugetlb.2M.max = 1G\n",
		     "t.conf:2: [cgroup a]: no hugetlb cgroup controller here");
	/* A bad minimum no longer hides the problems of the same pool's other keys. */
	expect_error("[pool 2M]\nminimum = 1@7\ndemote_size = 1M\n",
		     "t.conf:2: minimum 1@7: this machine has no NUMA node 7");
	expect_error("[pool 2M]\nminimum = 1@7\ndemote_size = 1M\n",
		     "t.conf:3: demote_size '1M': this machine has no such huge page size");
	expect_error("[pool 1G]\ndemote = yes\n",
		     "t.conf:2: demote = yes: no minimum in [pool] to shrink to");
	/* 2M pages have no smaller huge page size on x86: no demote file. */
	expect_error("[pool 2M]\nminimum = 0\ndemote = yes\n",
		     "t.conf:3: demote: the kernel cannot demote these pages");
	/* One pool in two spellings: one section per pool (was planned twice, each from the kernel's). */
	expect_error(
		"[pool 2M]\nminimum = 10\n[pool 2MB]\nmaximum = 20\n",
		"t.conf:3: [pool 2MB] is the pool of [pool 2M] (line 1) again: one section per "
		"pool");
}

/*
 * demote = yes: the pool above its minimum is shrunk by demoting, before the
 * minimum's own item; the item holds once the minimum is down (per node too);
 * a pool at or below its minimum has no demote item.
 */
static void test_demote(void **state)
{
	static const char *const files[] = {
		"sys/kernel/mm/hugepages/hugepages-1048576kB/demote",
		"sys/kernel/mm/hugepages/hugepages-1048576kB/demote_size",
		"sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote",
	};
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	const struct hk_plan_item *items, *it;
	size_t i_dem, i_min;

	(void)state;
	tree_open(&t, "x86-2node");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		fixture_write(t.dir, files[i], i == 1 ? "2048kB\n" : "");
	/* The 1G pool has 2 pages, both on node 1. */
	plan = plan_of(&t, "[pool 1G]\nminimum = 1\ndemote = yes\ndemote_size = 2M\n", &errs);
	assert_non_null(plan);
	hk_plan_items(plan, &items);
	assert_string_equal(items[0].item, "pool 1G demote_size");
	it = find(plan, "pool 1G demote", &i_dem);
	find(plan, "pool 1G minimum", &i_min);
	assert_true(i_dem < i_min);
	assert_string_equal(it->path, "/sys/kernel/mm/hugepages/hugepages-1048576kB/demote");
	assert_string_equal(it->value, "1");
	assert_int_equal(it->field, HK_POOL_DEMOTE);
	assert_int_equal(it->line, 3);
	assert_int_equal(hk_plan_item_check(t.ctx, it, NULL), 0);
	/* Down to the minimum (the kernel's demote did it): the item holds. */
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "1\n");
	assert_int_equal(hk_plan_item_check(t.ctx, it, NULL), 1);
	hk_plan_unref(plan);
	/* Per node: only the node above its part. */
	plan = plan_of(&t, "[pool 1G]\nminimum = 0@0, 1@1\ndemote = yes\n", &errs);
	assert_non_null(plan);
	it = find(plan, "pool 1G node 1 demote", NULL);
	assert_string_equal(it->path,
			    "/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote");
	assert_string_equal(it->value, "1");
	assert_int_equal(it->node, 1);
	n_items_without(plan, "pool 1G node 0 demote");
	hk_plan_unref(plan);
	tree_close(&t);
}

/*
 * Sizes padded with zeros are valid and may fill a line each: the mount's
 * options carry their values as numbers (the libhugekit intent's, as the
 * options' mounts), never a cut (or overrun) buffer that would mount
 * without size limits, owner and mode. A limit of no page, a reservation
 * above the limit or above the pool the plan leaves, are problems.
 */
static void test_mount_options_too_long(void **state)
{
	char zeros[901], text[4096];
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;

	(void)state;
	memset(zeros, '0', sizeof(zeros) - 1);
	zeros[sizeof(zeros) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "[mount /run/hp]\npagesize = 2M\nsize = %s4194304\nmin_size = %s2097152\n"
		 "nr_inodes = %s5\n",
		 zeros, zeros, zeros);
	tree_open(&t, "x86-2node");
	plan = plan_of(&t, text, &errs);
	if (!plan)
		fail_msg("%s", errs.buf);
	assert_string_equal(
		find(plan, "mount /run/hp", NULL)->value,
		"pagesize=2097152,size=4194304,min_size=2097152,nr_inodes=5,uid=0,gid=0,"
		"mode=0755,nosuid,nodev");
	hk_plan_unref(plan);
	/* A percentage of the pool, as hugetlbfs takes it. */
	plan = plan_of(&t, "[mount /run/hp]\nsize = 50%\nmin_size = 0010%\n", &errs);
	if (!plan)
		fail_msg("%s", errs.buf);
	assert_string_equal(
		find(plan, "mount /run/hp", NULL)->value,
		"pagesize=2097152,size=50%,min_size=10%,uid=0,gid=0,mode=0755,nosuid,nodev");
	hk_plan_unref(plan);
	assert_null(plan_of(&t, "[mount /run/hp]\nsize = 0\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:2: size '0': no page could be used there"));
	assert_null(plan_of(&t, "[mount /run/hp]\nnr_inodes = 0\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:2: nr_inodes '0': not a number of files"));
	assert_null(plan_of(&t, "[mount /run/hp]\nsize = 4M\nmin_size = 6M\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:3: min_size '6M': more pages than size '4M'"));
	/* The 2M pool of the tree has a maximum of 29 pages; the plan's own pool counts. */
	assert_null(plan_of(&t, "[mount /run/hp]\nmin_size = 64M\n", &errs));
	assert_non_null(strstr(errs.buf, "t.conf:2: min_size '64M': reserves 32 2M pages, more "
					 "than the pool's maximum (29)"));
	plan = plan_of(&t, "[pool 2M]\nmaximum = 40\n[mount /run/hp]\nmin_size = 64M\n", &errs);
	if (!plan)
		fail_msg("%s", errs.buf);
	hk_plan_unref(plan);
	tree_close(&t);
}

/* Sums that would wrap saturate: recommended shmmax over an enormous minimum. */
static void test_saturation(void **state)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;

	(void)state;
	tree_open(&t, "x86-2node");
	/* 2^53 pages of 2 MiB: 2^74 bytes, more than 64 bits hold. */
	plan = plan_of(&t,
		       "[pool 2M]\nminimum = 9007199254740992\n"
		       "[sysctl]\nkernel.shmmax = recommended\n",
		       &errs);
	assert_non_null(plan);
	assert_string_equal(find(plan, "sysctl kernel.shmmax", NULL)->value,
			    "18446744073709551615");
	hk_plan_unref(plan);
	tree_close(&t);
}

static void test_cgroup_limit_errors(void **state)
{
	struct tree t;
	struct errs errs;

	(void)state;
	tree_open(&t, "x86-2node");
	add_cgroup_root(&t);
	assert_null(plan_of(&t, "[cgroup a]\nhugetlb.2M.max = 3M\n", &errs));
	assert_non_null(
		strstr(errs.buf, "t.conf:2: hugetlb.2M.max '3M': not a whole number of pages"));
	assert_null(plan_of(&t, "[cgroup a]\nhugetlb.4M.max = 4M\n", &errs));
	assert_non_null(
		strstr(errs.buf, "t.conf:2: hugetlb.4M.max '4M': this machine has no such"));
	/* A THP mode this kernel does not offer (one without "never"). */
	fixture_write(t.dir, "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise\n");
	assert_null(plan_of(&t, "[thp]\ndefrag = never\nenabled = never\n", &errs));
	assert_non_null(strstr(
		errs.buf, "t.conf:3: [thp] enabled 'never': the kernel offers always madvise"));
	tree_close(&t);
}

/* "max" is no limit however the kernel shows it: "max", or the counter's largest bytes. */
static void test_cgroup_max(void **state)
{
	static const char *const shown[] = {"max\n", "9223372036854771712\n"};
	struct tree t;
	struct errs errs;

	(void)state;
	tree_open(&t, "x86-2node");
	add_cgroup_root(&t);
	for (size_t i = 0; i < 2; i++) {
		struct hk_plan *plan;
		char *cur = NULL;

		fixture_write(t.dir, "sys/fs/cgroup/a/hugetlb.2MB.max", shown[i]);
		plan = plan_of(&t, "[cgroup a]\nhugetlb.2M.max = max\n", &errs);
		assert_non_null(plan);
		assert_int_equal(hk_plan_item_check(
					 t.ctx, find(plan, "cgroup a hugetlb.2MB.max", NULL), &cur),
				 1);
		free(cur);
		fixture_write(t.dir, "sys/fs/cgroup/a/hugetlb.2MB.max", "8388608\n");
		assert_int_equal(hk_plan_item_check(
					 t.ctx, find(plan, "cgroup a hugetlb.2MB.max", NULL), &cur),
				 0);
		assert_string_equal(cur, "8388608");
		free(cur);
		hk_plan_unref(plan);
	}
	tree_close(&t);
}

/* Apply every item but the mount on the tree: check agrees afterwards, and stays agreed. */
static void test_apply_check(void **state)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	const struct hk_plan_item *items;
	size_t n, differ = 0;

	(void)state;
	tree_open(&t, "x86-2node");
	add_cgroup_root(&t);
	kernel_like(&t);
	plan = plan_of(&t, full, &errs);
	assert_non_null(plan);
	n = hk_plan_items(plan, &items);
	for (size_t i = 0; i < n; i++) {
		char *cur = NULL, *reached = NULL;
		int rc = hk_plan_item_check(t.ctx, &items[i], &cur);

		assert_true(rc >= 0 || rc == -ENOENT);
		if (items[i].kind == HK_PLAN_MOUNT) {
			assert_int_equal(rc, 0); /* not mounted in the tree */
			assert_null(cur);
			assert_int_equal(hk_plan_item_apply(t.ctx, &items[i], NULL), -EOPNOTSUPP);
			continue;
		}
		differ += rc != 1;
		if (rc != 1) {
			/* A cgroup's files, which the kernel makes with its directory. */
			char path[4096];

			snprintf(path, sizeof(path), "%s%s", t.dir, items[i].path);
			if (strncmp(items[i].item, "cgroup", 6) == 0 &&
			    items[i].kind != HK_PLAN_MKDIR && access(path, F_OK) < 0)
				fixture_write(t.dir, items[i].path + 1,
					      items[i].kind == HK_PLAN_CONTROLLER ? "" : "max\n");
			assert_int_equal(hk_plan_item_apply(t.ctx, &items[i], &reached), 0);
		}
		free(cur);
		free(reached);
	}
	assert_true(differ >= 10);
	for (size_t i = 0; i < n; i++) {
		char *cur = NULL;

		if (items[i].kind == HK_PLAN_MOUNT)
			continue;
		if (hk_plan_item_check(t.ctx, &items[i], &cur) != 1)
			fail_msg("%s still differs: %s, wanted %s", items[i].item, cur,
				 items[i].value);
		free(cur);
	}
	/* A controller is added to the ones there, never written over them. */
	{
		char *cur = NULL;

		assert_int_equal(
			hk_plan_item_check(t.ctx, find(plan, "cgroup / +hugetlb", NULL), &cur), 1);
		assert_string_equal(cur, "memory pids hugetlb");
		free(cur);
	}
	hk_plan_unref(plan);
	tree_close(&t);
}

/* Every item the builder made is the configuration's own: name, file, value, numbers. */
static void same_as_config(struct hk_plan *cfg, struct hk_plan *plan)
{
	const struct hk_plan_item *a, *b;
	size_t n = hk_plan_items(plan, &b);

	for (size_t i = 0; i < n; i++) {
		a = find(cfg, b[i].item, NULL);
		assert_string_equal(a->path, b[i].path);
		assert_string_equal(a->value, b[i].value);
		assert_int_equal(a->kind, b[i].kind);
		assert_int_equal(a->page_size, b[i].page_size);
		assert_int_equal(a->node, b[i].node);
		assert_int_equal(a->field, b[i].field);
		assert_int_equal(a->number, b[i].number);
	}
}

/* What the builder refuses, leaving plan as it was. */
static void builder_refuses(struct tree *t, struct hk_plan *plan)
{
	/* Refused: a node's overcommit, a node through the policy, an unknown field or size, a knob out of the directory. */
	assert_int_equal(hk_plan_add_pool(t->ctx, plan, 2 << 20, 0, HK_POOL_OVERCOMMIT, 1, 0, NULL),
			 -EINVAL);
	assert_int_equal(hk_plan_add_pool(t->ctx, plan, 2 << 20, 0, HK_POOL_MINIMUM, 1,
					  HK_POOL_SET_MEMPOLICY, NULL),
			 -EINVAL);
	assert_int_equal(
		hk_plan_add_pool(t->ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_FREE, 1, 0, NULL),
		-EINVAL);
	assert_true(hk_plan_add_pool(t->ctx, plan, 4 << 20, HK_NODE_ALL, HK_POOL_MINIMUM, 1, 0,
				     NULL) < 0);
	assert_int_equal(hk_plan_add_thp(t->ctx, plan, "../../../proc/sys/vm/x", "1", NULL),
			 -EINVAL);
	assert_int_equal(hk_plan_add_sysctl(t->ctx, plan, HK_SYSCTL_COMPACT_MEMORY, 1, NULL),
			 -EINVAL);
}

/*
 * The builder (HK_1.3): the items hugeadm's options make are the config's
 * items, file for file and name for name; bad combinations are refused; what
 * it builds applies and checks like a config's plan.
 */
static void test_builder(void **state)
{
	static const char conf[] = "[thp]\n"
				   "enabled = never\n"
				   "[pool 2M]\n"
				   "minimum = 10@0, 20@1\n"
				   "maximum = 40\n"
				   "[pool 1G]\n"
				   "minimum = 2\n"
				   "demote_size = 2M\n"
				   "[sysctl]\n"
				   "vm.hugetlb_shm_group = 0\n";
	struct tree t;
	struct errs errs;
	struct hk_plan *cfg, *plan;
	const struct hk_plan_item *b;
	int rc;

	(void)state;
	tree_open(&t, "x86-2node");
	kernel_like(&t);
	fixture_write(t.dir, "sys/kernel/mm/hugepages/hugepages-1048576kB/demote_size", "2048kB\n");
	cfg = plan_of(&t, conf, &errs);
	assert_non_null(cfg);
	assert_int_equal(hk_plan_new(&plan), 0);
	assert_int_equal(hk_plan_add_thp(t.ctx, plan, "enabled", "never", "--thp-never"), 0);
	assert_int_equal(hk_plan_add_pool(t.ctx, plan, 2 << 20, 0, HK_POOL_MINIMUM, 10, 0, NULL),
			 1);
	assert_int_equal(hk_plan_add_pool(t.ctx, plan, 2 << 20, 1, HK_POOL_MINIMUM, 20, 0, NULL),
			 2);
	assert_int_equal(hk_plan_add_pool(t.ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_OVERCOMMIT, 10,
					  0, NULL),
			 3);
	assert_int_equal(hk_plan_add_pool(t.ctx, plan, 1 << 30, HK_NODE_ALL, HK_POOL_MINIMUM, 2, 0,
					  "--pool-pages-min 1G:2"),
			 4);
	assert_int_equal(hk_plan_add_pool(t.ctx, plan, 1 << 30, HK_NODE_ALL, HK_POOL_DEMOTE_SIZE,
					  2 << 20, 0, NULL),
			 5);
	assert_int_equal(hk_plan_add_sysctl(t.ctx, plan, HK_SYSCTL_HUGETLB_SHM_GROUP, 0, NULL), 6);
	/* Same names, files, values and numbers as the configuration's. */
	assert_int_equal(hk_plan_items(plan, &b), 7);
	same_as_config(cfg, plan);
	assert_string_equal(b[0].why, "--thp-never");
	assert_string_equal(b[1].why, "implied");
	assert_null(b[1].file);
	assert_string_equal(
		b[1].path,
		"/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages");
	assert_string_equal(b[3].path, "/proc/sys/vm/nr_overcommit_hugepages");
	assert_string_equal(b[6].item, "sysctl vm.hugetlb_shm_group");
	/* The whole pool through the writer's memory policy: its own file. */
	rc = hk_plan_add_pool(t.ctx, plan, 2 << 20, HK_NODE_ALL, HK_POOL_MINIMUM, 30,
			      HK_POOL_SET_MEMPOLICY, NULL);
	assert_int_equal(rc, 7);
	hk_plan_items(plan, &b);
	assert_string_equal(b[7].path, "/proc/sys/vm/nr_hugepages_mempolicy");
	assert_int_equal(b[7].flags, HK_POOL_SET_MEMPOLICY);
	builder_refuses(&t, plan);
	assert_int_equal(hk_plan_items(plan, NULL), 8);
	/* What it built applies on the tree and checks true afterwards. */
	for (size_t i = 0; i < 7; i++) {
		hk_plan_items(plan, &b);
		assert_int_equal(hk_plan_item_apply(t.ctx, &b[i], NULL), 0);
		assert_int_equal(hk_plan_item_check(t.ctx, &b[i], NULL), 1);
	}
	hk_plan_unref(plan);
	hk_plan_unref(cfg);
	tree_close(&t);
}

/*
 * cgroup v1 (hugetlb as a v1 hierarchy, not offered by v2): the limit files
 * are limit_in_bytes; no limit is "max" in the plan as in the configuration,
 * written as the -1 v1 takes, and a v1 file that reads "no limit" holds.
 */
static void test_cgroup_v1(void **state)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	const struct hk_plan_item *it;
	char *cur = NULL, path[4096];

	(void)state;
	tree_open(&t, "x86-2node");
	fixture_write(t.dir, "sys/fs/cgroup/hugetlb/tasks", "1\n");
	fixture_write(t.dir, "sys/fs/cgroup/hugetlb/db/hugetlb.2MB.limit_in_bytes", "4194304\n");
	plan = plan_of(&t, "[cgroup db]\nhugetlb.2M.max = max\nhugetlb.2M.rsvd.max = 8M\n", &errs);
	assert_non_null(plan);
	it = find(plan, "cgroup db hugetlb.2MB.limit_in_bytes", NULL);
	assert_string_equal(it->path, "/sys/fs/cgroup/hugetlb/db/hugetlb.2MB.limit_in_bytes");
	assert_string_equal(it->value, "max");
	assert_int_equal(hk_plan_item_check(t.ctx, it, &cur), 0);
	assert_string_equal(cur, "4194304");
	free(cur);
	assert_int_equal(hk_plan_item_apply(t.ctx, it, NULL), 0);
	snprintf(path, sizeof(path), "%s%s", t.dir, it->path);
	{
		FILE *f = fopen(path, "r");
		char buf[64] = "";

		assert_non_null(f);
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		buf[strcspn(buf, "\n")] = '\0';
		assert_string_equal(buf, "-1");
	}
	/* The kernel shows no limit as its largest count. */
	fixture_write(t.dir, it->path + 1, "9223372036854771712\n");
	assert_int_equal(hk_plan_item_check(t.ctx, it, NULL), 1);
	it = find(plan, "cgroup db hugetlb.2MB.rsvd.limit_in_bytes", NULL);
	assert_string_equal(it->value, "8388608");
	hk_plan_unref(plan);
	tree_close(&t);
}

/* The index of an item in the plan (fails the test when there is none). */
static size_t index_in(const struct hk_plan *plan, const char *item)
{
	size_t i = 0;

	find(plan, item, &i);
	return i;
}

/*
 * From the review of demote = yes (red before its fix): the demoting pool
 * goes first wherever its section is; its pages count in the smaller pool's
 * maximum; no demote files is a problem whatever the pool holds.
 */
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
	i_dem = index_in(plan, "pool 1G demote");
	i_min = index_in(plan, "pool 2M minimum");
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

/*
 * One pool walk (issue #20): a [pool] is planned by the options' pool
 * planner, over the pools as the plan leaves them. The 2 pages of 1G on
 * node 1 that demote = yes splits join the 2M pool as 1024 pages: on node
 * 1 (a per-node minimum of the 2M pool counts them there), and in the
 * "recommended" shmmax even without a [pool 2M] (before: 29 pages). A
 * maximum the pool already has is still an item, for --check.
 */
static void test_one_pool_walk(void **state)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	const struct hk_plan_item *it;
	char want[32];

	(void)state;
	tree_open(&t, "x86-2node");
	fixture_write(t.dir, "proc/sys/kernel/shmmax", "1048576\n");
	plan = plan_of(&t,
		       "[pool 1G]\nminimum = 0\ndemote = yes\ndemote_size = 2M\n"
		       "[sysctl]\nkernel.shmmax = recommended\n",
		       &errs);
	assert_non_null(plan);
	/* 2M: 21 + 1024 persistent pages, overcommit 8; 1G: none left. */
	snprintf(want, sizeof(want), "%llu", (21ULL + 1024 + 8) * 2 * 1024 * 1024);
	it = find(plan, "sysctl kernel.shmmax", NULL);
	assert_string_equal(it->value, want);
	hk_plan_unref(plan);
	/* Per node: node 0 set to 20, node 1 keeps its 6 and gets the 1024. */
	plan = plan_of(&t,
		       "[pool 1G]\nminimum = 0@1\ndemote = yes\ndemote_size = 2M\n"
		       "[pool 2M]\nminimum = 20@0\nmaximum = 1049\n",
		       &errs);
	assert_null(plan);
	assert_non_null(strstr(errs.buf, "maximum 1049 is below the minimum 1050"));
	/* Node 1 listed: its 6 + 1024 set to 10, so the pool has 30 (not 1054): a maximum of 31 holds. */
	plan = plan_of(&t,
		       "[pool 1G]\nminimum = 0@1\ndemote = yes\ndemote_size = 2M\n"
		       "[pool 2M]\nminimum = 20@0, 10@1\nmaximum = 31\n",
		       &errs);
	if (!plan)
		fail_msg("refused: %s", errs.buf);
	it = find(plan, "pool 2M overcommit", NULL);
	assert_string_equal(it->value, "1");
	hk_plan_unref(plan);
	plan = plan_of(&t, "[pool 2M]\nmaximum = 29\n", &errs);
	assert_non_null(plan);
	it = find(plan, "pool 2M overcommit", NULL);
	assert_string_equal(it->value, "8");
	hk_plan_unref(plan);
	/*
	 * A whole-pool demote's pages are on no node the plan knows: a per-node
	 * minimum of the 2M pool keeps them (node 0 set to 10, node 1's 6 and
	 * the 1024: 1040), where the nodes' sum alone said 16 and let a maximum
	 * of 40 through.
	 */
	plan = plan_of(&t,
		       "[pool 1G]\nminimum = 0\ndemote = yes\ndemote_size = 2M\n"
		       "[pool 2M]\nminimum = 10@0\nmaximum = 40\n",
		       &errs);
	assert_null(plan);
	assert_non_null(strstr(errs.buf, "maximum 40 is below the minimum 1040"));
	tree_close(&t);
}

/* The tree's files of those names taken away. */
static void unlink_all(const struct tree *t, const char *const *files, size_t n)
{
	char path[4096];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", t->dir, files[i]);
		assert_int_equal(unlink(path), 0);
	}
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

	(void)state;
	tree_open(&t, "x86-2node");
	unlink_all(&t, files, sizeof(files) / sizeof(files[0]));
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

/*
 * On x86-2node without the demote files named: conf is refused with the
 * problem, and no second one about the 2M pool's maximum 30 (the pages the
 * demote cannot bring counted there).
 */
static void demote_refused_alone(const char *const *files, size_t n, const char *conf,
				 const char *problem)
{
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;

	tree_open(&t, "x86-2node");
	unlink_all(&t, files, n);
	plan = plan_of(&t, conf, &errs);
	assert_null(plan);
	assert_non_null(strstr(errs.buf, problem));
	if (strstr(errs.buf, "maximum 30"))
		fail_msg("the pages the demote cannot bring counted all the same: %s", errs.buf);
	tree_close(&t);
}

/*
 * From the review of the one pool walk: the demote files gone but the
 * demote size there (the kernel says 1G pages split into 2M), a demote the
 * kernel cannot make brings nothing into the 2M pool: one problem, not a
 * second about its maximum.
 */
static void test_demote_impossible_brings_nothing(void **state)
{
	static const char *const files[] = {
		"sys/kernel/mm/hugepages/hugepages-1048576kB/demote",
		"sys/devices/system/node/node0/hugepages/hugepages-1048576kB/demote",
		"sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote",
	};

	(void)state;
	demote_refused_alone(files, sizeof(files) / sizeof(files[0]),
			     "[pool 1G]\nminimum = 0\ndemote = yes\n[pool 2M]\nmaximum = 30\n",
			     "t.conf:3: demote: the kernel cannot demote");
}

/*
 * The same per node: the pool can demote, node 1 (which holds the 1G pages)
 * cannot (its demote file is missing), so its pages never join the smaller
 * pool either.
 */
static void test_demote_impossible_on_a_node_brings_nothing(void **state)
{
	static const char *const node1[] = {
		"sys/devices/system/node/node1/hugepages/hugepages-1048576kB/demote",
	};

	(void)state;
	demote_refused_alone(
		node1, 1, "[pool 1G]\nminimum = 0@0, 0@1\ndemote = yes\n[pool 2M]\nmaximum = 30\n",
		"demote: the kernel cannot demote");
}

/*
 * A mount's flags are part of what check compares: the plan's mount wants
 * nosuid,nodev (options without '='), and a mount without them differs.
 */
static void test_check_mount_flags(void **state)
{
	static const char *const lines[] = {
		"50 27 0:50 / /run/hp rw,nosuid,nodev,relatime - hugetlbfs none "
		"rw,pagesize=2M,size=4194304\n",
		"50 27 0:50 / /run/hp rw,nosuid,relatime - hugetlbfs none "
		"rw,pagesize=2M,size=4194304\n",
		"50 27 0:50 / /run/hp rw,relatime - hugetlbfs none rw,pagesize=2M,size=4194304\n",
	};
	struct tree t;
	struct errs errs;
	struct hk_plan *plan;
	const struct hk_plan_item *it;

	(void)state;
	tree_open(&t, "x86-2node");
	plan = plan_of(&t, "[mount /run/hp]\npagesize = 2M\nsize = 4M\n", &errs);
	if (!plan)
		fail_msg("%s", errs.buf);
	it = find(plan, "mount /run/hp", NULL);
	assert_string_equal(it->value,
			    "pagesize=2097152,size=4194304,uid=0,gid=0,mode=0755,nosuid,nodev");
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char *cur = NULL;

		fixture_write(t.dir, "proc/self/mountinfo", lines[i]);
		assert_int_equal(hk_plan_item_check(t.ctx, it, &cur), i == 0);
		assert_non_null(cur);
		free(cur);
	}
	hk_plan_unref(plan);
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_mount_options_too_long),
		cmocka_unit_test(test_missing_sysctls),
		cmocka_unit_test(test_mount_problems),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_check_mount_flags),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_cgroup_limit_errors),
		cmocka_unit_test(test_cgroup_max),
		cmocka_unit_test(test_apply_check),
		cmocka_unit_test(test_builder),
		cmocka_unit_test(test_demote),
		cmocka_unit_test(test_cgroup_v1),
		cmocka_unit_test(test_demote_before_smaller_pool),
		cmocka_unit_test(test_demote_into_smaller_maximum),
		cmocka_unit_test(test_demote_no_files_at_minimum),
		cmocka_unit_test(test_one_pool_walk),
		cmocka_unit_test(test_demote_impossible_brings_nothing),
		cmocka_unit_test(test_demote_impossible_on_a_node_brings_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
