// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --generate's generators (tools/hugeadm/generate.c) over hand-made
 * configuration entries, on copies of the fixture trees: the kernel command
 * line and its rules, the sysctl.d file, the units, systemd's path escaping,
 * and problems reported at the file and line of their setting.
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

#include <hugekit/hugekit.h>

#include "fixture.h"
#include "generate.h"

#define E(sec, nm, k, v, ln)                                                                       \
	{                                                                                          \
		"t.conf", ln, sec, nm, k, v                                                        \
	}

/* The problems reported, "LINE: message" each, one a line. */
static char problems[4096];

static void record(void *data, const char *file, unsigned line, const char *msg)
{
	size_t n = strlen(problems);

	snprintf(problems + n, sizeof(problems) - n, "%u: %s\n", line, msg);
}

struct run {
	char *root;
	struct hk_ctx *ctx;
	struct ha_gen g;
	struct ha_gen_files out;
};

static const char *const files[] = {"t.conf"};

static void start(struct run *r, const char *fixture, const struct hk_config_entry *e, size_t n)
{
	memset(r, 0, sizeof(*r));
	problems[0] = '\0';
	r->root = fixture_copy(fixture);
	assert_int_equal(hk_new(r->root, &r->ctx), 0);
	r->g.ctx = r->ctx;
	r->g.entries = e;
	r->g.n_entries = n;
	r->g.files = files;
	r->g.n_files = 1;
	r->g.hugeadm_path = "/usr/bin/hugeadm";
	r->g.error = record;
}

static void finish(struct run *r)
{
	ha_gen_files_free(&r->out);
	hk_unref(r->ctx);
	fixture_remove(r->root);
}

static void boot_line(const char *fixture, const struct hk_config_entry *e, size_t n,
		      const char *want)
{
	struct run r;

	start(&r, fixture, e, n);
	assert_int_equal(ha_gen_boot(&r.g, false, &r.out), 0);
	assert_string_equal(problems, "");
	assert_string_equal(r.out.note, want);
	assert_int_equal(r.out.n, 1);
	assert_string_equal(r.out.files[0].name, "kernel-cmdline");
	if (*want) {
		char *line = NULL;

		assert_true(asprintf(&line, "%s\n", want) > 0);
		assert_string_equal(r.out.files[0].text, line);
		free(line);
	} else {
		assert_string_equal(r.out.files[0].text, "");
	}
	finish(&r);
}

static void boot_problems(const char *fixture, const struct hk_config_entry *e, size_t n,
			  const char *want)
{
	struct run r;

	start(&r, fixture, e, n);
	assert_int_equal(ha_gen_boot(&r.g, false, &r.out), -1);
	assert_string_equal(problems, want);
	assert_int_equal(r.out.n, 0);
	finish(&r);
}

/* 1G is gigantic on x86 (above the buddy's largest order), 2M is not. */
static void test_boot_gigantic_only(void **state)
{
	const struct hk_config_entry e[] = {
		E("pool", "2M", "minimum", "512", 2),
		E("pool", "1G", "minimum", "4", 4),
	};

	boot_line("x86-2node", e, 2, "hugepagesz=1G hugepages=4");
}

static void test_boot_per_node(void **state)
{
	const struct hk_config_entry e[] = {
		E("pool", "1G", "minimum", "4@1, 2@0", 2),
	};

	boot_line("x86-2node", e, 1, "hugepagesz=1G hugepages=0:2,1:4");
}

static void test_boot_options(void **state)
{
	const struct hk_config_entry e[] = {
		E("pool", "1G", "minimum", "4@0-1", 2),
		E("pool", "2M", "minimum", "1G", 4),
		E("boot", NULL, "default_hugepagesz", "1G", 6),
		E("boot", NULL, "hugetlb_cma", "0:2G,1:2048M", 7),
		E("boot", NULL, "hugetlb_free_vmemmap", "on", 8),
		E("boot", NULL, "pools", "all", 9),
	};

	/* pools = all: the 2M pool too (1G of it: 512 pages), sizes ascending. */
	boot_line("x86-2node", e, 6,
		  "hugetlb_free_vmemmap=on default_hugepagesz=1G hugepagesz=2M hugepages=512 "
		  "hugepagesz=1G hugepages=0:4,1:4 hugetlb_cma=0:2G,1:2G");
}

static void test_boot_nothing(void **state)
{
	const struct hk_config_entry e[] = {
		E("pool", "2M", "minimum", "512", 2),
		E("sysctl", NULL, "vm.min_free_kbytes", "recommended", 4),
	};

	boot_line("x86-2node", e, 2, "");
}

static void test_boot_problems(void **state)
{
	const struct hk_config_entry e[] = {
		E("pool", "1G", "minimum", "4@3", 2),
		E("boot", NULL, "default_hugepagesz", "16M", 5),
		E("boot", NULL, "hugetlb_cma", "2:1G", 6),
		E("boot", NULL, "hugetlb_free_vmemmap", "yes", 7),
		E("boot", NULL, "pools", "some", 8),
	};

	boot_problems("x86-2node", e, 5,
		      "8: pools: 'some' is not gigantic or all\n"
		      "7: hugetlb_free_vmemmap: 'yes' is not on or off\n"
		      "5: default_hugepagesz: this machine has no 16M huge pages\n"
		      "2: minimum: node 3 does not exist on this machine (the kernel ignores a "
		      "hugepages= with an unknown node)\n"
		      "6: hugetlb_cma: node 2 does not exist on this machine\n");
}

/* Each problem once: a bad size name, one size under two names, a size this machine lacks. */
static void test_boot_pool_names(void **state)
{
	const struct hk_config_entry e[] = {
		E("pool", "2X", "minimum", "1", 2),
		E("pool", "1G", "minimum", "1", 4),
		E("pool", "1048576K", "minimum", "2", 6),
		E("pool", "16G", "minimum", "1", 8),
	};

	boot_problems("x86-2node", e, 4,
		      "2: [pool 2X]: not a page size\n"
		      "6: [pool 1048576K]: the page size of [pool 1G] (t.conf:4)\n"
		      "8: [pool 16G]: this machine has no huge pages of that size\n");
}

static void test_boot_comments(void **state)
{
	const struct hk_config_entry e[] = {E("pool", "1G", "minimum", "2", 2)};
	struct run r;

	start(&r, "x86-1node", e, 1);
	assert_int_equal(ha_gen_boot(&r.g, true, &r.out), 0);
	assert_non_null(strstr(r.out.files[0].text,
			       "# Made by hugeadm --generate boot from t.conf.\n"
			       "# To install them: add them to GRUB_CMDLINE_LINUX"));
	/* The last line is the parameters alone. */
	assert_non_null(strstr(r.out.files[0].text, ".\nhugepagesz=1G hugepages=2\n"));
	finish(&r);
}

static void test_sysctl(void **state)
{
	const struct hk_config_entry e[] = {
		E("pool", "2M", "minimum", "512", 2),
		E("sysctl", NULL, "vm.min_free_kbytes", "recommended", 4),
		E("sysctl", NULL, "vm.hugetlb_shm_group", "root", 5),
		E("sysctl", NULL, "kernel.shmmax", "recommended", 6),
		E("sysctl", NULL, "kernel.shmall", "4194304", 7),
	};
	uint64_t mfk, shmmax;
	char *want = NULL;
	struct run r;

	start(&r, "x86-2node", e, 5);
	assert_int_equal(hk_recommended_min_free_kbytes(r.ctx, &mfk), 0);
	assert_int_equal(hk_recommended_shmmax(r.ctx, &shmmax), 0);
	assert_int_equal(ha_gen_sysctl(&r.g, &r.out), 0);
	assert_string_equal(problems, "");
	assert_int_equal(r.out.n, 1);
	assert_string_equal(r.out.files[0].name, "90-hugekit.conf");
	assert_true(asprintf(&want,
			     "# Made by hugeadm --generate sysctl from t.conf.\n"
			     "# The huge page pools are not set here: hugekit.service sets them "
			     "(hugeadm --apply)\n"
			     "# and reads them back.\n"
			     "# recommended (t.conf:4), worked out on this machine:\n"
			     "# 11 x the default huge page size in kB x the memory zones\n"
			     "vm.min_free_kbytes = %llu\n"
			     "# group root (t.conf:5): the kernel takes its gid\n"
			     "vm.hugetlb_shm_group = 0\n"
			     "# recommended (t.conf:6), worked out on this machine:\n"
			     "# what the huge page pools hold at their maximum now, in bytes\n"
			     "kernel.shmmax = %llu\n"
			     "kernel.shmall = 4194304\n",
			     (unsigned long long)mfk, (unsigned long long)shmmax) > 0);
	assert_string_equal(r.out.files[0].text, want);
	/* Worked out from the tree: not a constant that happens to match. */
	assert_true(mfk > 0 && shmmax > 0);
	free(want);
	finish(&r);
}

static void test_sysctl_problems(void **state)
{
	const struct hk_config_entry e[] = {
		E("sysctl", NULL, "vm.hugetlb_shm_group", "no-such-group-hk", 3),
		E("sysctl", NULL, "kernel.shmall", "recommended", 4),
	};
	struct run r;

	start(&r, "x86-2node", e, 2);
	assert_int_equal(ha_gen_sysctl(&r.g, &r.out), -1);
	assert_string_equal(problems,
			    "3: vm.hugetlb_shm_group: no group 'no-such-group-hk' on this machine\n"
			    "4: kernel.shmall: no recommended value (only vm.min_free_kbytes and "
			    "kernel.shmmax have one)\n");
	assert_int_equal(r.out.n, 0);
	finish(&r);
}

static void test_unit_names(void **state)
{
	/* What systemd-escape --path --suffix=mount says (systemd 252). */
	static const char *const cases[][2] = {
		{"/dev/hugepages-2M", "dev-hugepages\\x2d2M.mount"},
		{"/mnt/huge pages", "mnt-huge\\x20pages.mount"},
		{"/srv/a.b", "srv-a.b.mount"},
		{"/.x/\xc3\xb1", "\\x2ex-\\xc3\\xb1.mount"},
		{"/a//b/", "a-b.mount"},
		{"/a/./b", "a-b.mount"},
		{"/", "-.mount"},
		{"/x:y_z\\%", "x:y_z\\x5c\\x25.mount"},
	};
	char *name;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ha_gen_unit_name(cases[i][0], "mount", &name), 0);
		assert_string_equal(name, cases[i][1]);
		free(name);
	}
	assert_int_equal(ha_gen_unit_name("rel/path", "mount", &name), -EINVAL);
	assert_int_equal(ha_gen_unit_name("/a/../b", "mount", &name), -EINVAL);
}

static void test_units(void **state)
{
	const struct hk_config_entry e[] = {
		E("mount", "/dev/hugepages-1G", "pagesize", "1G", 2),
		E("mount", "/dev/hugepages-1G", "user", "root", 3),
		E("mount", "/dev/hugepages-1G", "mode", "770", 4),
		E("mount", "/dev/hugepages-1G", "min_size", "2G", 5),
		E("mount", "/srv/huge 50%", "size", "50%", 7),
		E("mount", "/srv/huge 50%", "group", "0", 8),
		E("mount", "/srv/huge 50%", "nr_inodes", "100", 9),
		E("mount", "/srv/b", "pagesize", "2M", 11),
	};
	struct run r;

	start(&r, "x86-2node", e, 8);
	assert_int_equal(ha_gen_units(&r.g, &r.out), 0);
	assert_string_equal(problems, "");
	assert_int_equal(r.out.n, 4);
	assert_string_equal(r.out.files[0].name, "hugekit.service");
	assert_non_null(strstr(r.out.files[0].text, "ExecStart=/usr/bin/hugeadm --apply\n"));
	/* The service mounts them too: after the file systems they are on, each once. */
	assert_non_null(
		strstr(r.out.files[0].text,
		       "Conflicts=shutdown.target\n"
		       "# hugeadm --apply mounts the [mount] sections: after the file systems "
		       "they are on.\n"
		       "RequiresMountsFor=/dev\n"
		       "RequiresMountsFor=/srv\n\n[Service]\n"));
	assert_string_equal(r.out.files[1].name, "dev-hugepages\\x2d1G.mount");
	assert_non_null(strstr(r.out.files[1].text,
			       "Where=/dev/hugepages-1G\nType=hugetlbfs\n"
			       "Options=nosuid,nodev,pagesize=1G,uid=0,mode=0770,min_size=2G\n"));
	assert_string_equal(r.out.files[2].name, "srv-huge\\x2050\\x25.mount");
	/* '%' is a specifier in unit files: doubled. */
	assert_non_null(strstr(r.out.files[2].text,
			       "Where=/srv/huge 50%%\nType=hugetlbfs\n"
			       "Options=nosuid,nodev,size=50%%,gid=0,nr_inodes=100\n"));
	finish(&r);
}

static void test_units_problems(void **state)
{
	const struct hk_config_entry e[] = {
		E("mount", "relative/x", "pagesize", "2M", 2),
		E("mount", "/a/b", "user", "no-such-user-hk", 4),
		E("mount", "/a/b", "mode", "0999", 5),
		E("mount", "/a//b/", "pagesize", "2M", 7),
	};
	struct run r;

	start(&r, "x86-2node", e, 4);
	assert_int_equal(ha_gen_units(&r.g, &r.out), -1);
	assert_string_equal(problems,
			    "2: [mount relative/x]: not an absolute path without '..'\n"
			    "4: user: no user 'no-such-user-hk' on this machine\n"
			    "5: mode: '0999' is not an octal mode\n"
			    "7: [mount /a//b/]: the mount point of another [mount] (a-b.mount)\n");
	finish(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_gigantic_only),
		cmocka_unit_test(test_boot_per_node),
		cmocka_unit_test(test_boot_options),
		cmocka_unit_test(test_boot_nothing),
		cmocka_unit_test(test_boot_problems),
		cmocka_unit_test(test_boot_pool_names),
		cmocka_unit_test(test_boot_comments),
		cmocka_unit_test(test_sysctl),
		cmocka_unit_test(test_sysctl_problems),
		cmocka_unit_test(test_unit_names),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_units_problems),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
