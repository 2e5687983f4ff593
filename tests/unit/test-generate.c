// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --generate's generators (tools/hugeadm/generate.c) over
 * configurations resolved by libhugekit's plan, on copies of the fixture
 * trees: the kernel command line and its rules, the sysctl.d file, the units,
 * systemd's path escaping, and problems reported at the file and line of
 * their setting (what the parser refuses, what the plan refuses on the
 * machine, and what [boot] refuses).
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

#include "generate.h"
#include "tree.h"

#include "gen-run.h"

/*
 * What the configuration parser refuses before any generator runs (the
 * generators once checked these themselves): every problem, at its line.
 */
static void refused(const char *text, const char *want)
{
	struct hk_config *config = NULL;
	struct tree t;

	problems[0] = '\0';
	tree_open(&t, "x86-2node");
	assert_int_equal(hk_config_parse_string(t.ctx, "t.conf", text, record, NULL, &config),
			 -EINVAL);
	assert_null(config);
	assert_string_equal(problems, want);
	tree_close(&t);
}

static void boot_line(const char *fixture, const char *text, const char *want)
{
	struct run r;

	start(&r, fixture, text);
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

static void boot_problems(const char *fixture, const char *text, const char *want)
{
	struct run r;

	start(&r, fixture, text);
	assert_int_equal(ha_gen_boot(&r.g, false, &r.out), -1);
	assert_string_equal(problems, want);
	assert_int_equal(r.out.n, 0);
	finish(&r);
}

/* 1G is gigantic on x86 (above the buddy's largest order), 2M is not. */
static void test_boot_gigantic_only(void **state)
{
	boot_line("x86-2node",
		  "[pool 2M]\n"
		  "minimum = 512\n"
		  "[pool 1G]\n"
		  "minimum = 4\n",
		  "hugepagesz=1G hugepages=4");
}

static void test_boot_per_node(void **state)
{
	boot_line("x86-2node", "[pool 1G]\nminimum = 4@1, 2@0\n",
		  "hugepagesz=1G hugepages=0:2,1:4");
}

static void test_boot_options(void **state)
{
	/* pools = all: the 2M pool too (1G of it: 512 pages), sizes ascending. */
	boot_line("x86-2node",
		  "[pool 1G]\n"
		  "minimum = 4@0, 4@1\n"
		  "[pool 2M]\n"
		  "minimum = 1G\n"
		  "[boot]\n"
		  "default_hugepagesz = 1G\n"
		  "hugetlb_cma = 0:2G,1:2048M\n"
		  "hugetlb_free_vmemmap = on\n"
		  "pools = all\n",
		  "hugetlb_free_vmemmap=on default_hugepagesz=1G hugepagesz=2M hugepages=512 "
		  "hugepagesz=1G hugepages=0:4,1:4 hugetlb_cma=0:2G,1:2G");
	/* A range of nodes is not a node: the kernel's per-node form lists each. */
	refused("[pool 1G]\nminimum = 4@0-1\n",
		"2: [pool 1G] '4@0-1': '0-1' is not a node number\n");
}

static void test_boot_nothing(void **state)
{
	boot_line("x86-2node",
		  "[pool 2M]\n"
		  "minimum = 512\n"
		  "[sysctl]\n"
		  "vm.min_free_kbytes = recommended\n",
		  "");
}

static void test_boot_problems(void **state)
{
	/* On the machine: the plan's message for the node, [boot]'s own for the rest. */
	boot_problems("x86-2node",
		      "[pool 1G]\n"
		      "minimum = 4@3\n"
		      "\n"
		      "[boot]\n"
		      "default_hugepagesz = 16M\n"
		      "hugetlb_cma = 2:1G\n",
		      "5: default_hugepagesz: this machine has no 16M huge pages\n"
		      "2: minimum 4@3: this machine has no NUMA node 3\n"
		      "6: hugetlb_cma: node 2 does not exist on this machine\n");
	refused("[boot]\nhugetlb_free_vmemmap = yes\npools = some\n",
		"2: [boot] hugetlb_free_vmemmap 'yes': on or off\n"
		"3: [boot] pools 'some': gigantic or all\n");
}

/* Each problem once: a bad size name, one size under two names, a size this machine lacks. */
static void test_boot_pool_names(void **state)
{
	refused("[pool 2X]\n"
		"minimum = 1\n"
		"[pool 1G]\n"
		"minimum = 1\n"
		"[pool 1048576K]\n"
		"minimum = 2\n",
		"1: [pool 2X]: '2X' is not a page size\n"
		"6: key 'minimum' is set twice in [pool 1048576K] (line 4)\n");
	boot_problems("x86-2node", "[pool 1G]\nminimum = 1\n[pool 16G]\nminimum = 1\n",
		      "3: [pool] '16G': this machine has no such huge page size (it has 2M, 1G)\n");
}

static void test_boot_comments(void **state)
{
	struct run r;

	start(&r, "x86-1node", "[pool 1G]\nminimum = 2\n");
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
	uint64_t mfk, shmmax;
	char *want = NULL;
	struct run r;

	start(&r, "x86-2node",
	      "[pool 2M]\n"
	      "minimum = 512\n"
	      "[sysctl]\n"
	      "vm.min_free_kbytes = recommended\n"
	      "vm.hugetlb_shm_group = root\n"
	      "kernel.shmmax = recommended\n"
	      "kernel.shmall = 4194304\n");
	assert_int_equal(hk_recommended_min_free_kbytes(r.g.ctx, &mfk), 0);
	/* Below the recommendation, which is written only to raise shmmax. */
	fixture_write(r.t.dir, "proc/sys/kernel/shmmax", "33554432\n");
	/*
	 * As --apply writes it: the pools at the maximum the configuration gives
	 * them: 2M at 512 + its overcommit of 8, 1G as it is (2 pages).
	 */
	shmmax = (512ULL + 8) * (2 << 20) + 2ULL * (1 << 30);
	assert_int_equal(ha_gen_sysctl(&r.g, &r.out), 0);
	assert_string_equal(problems, "");
	assert_int_equal(r.out.n, 1);
	assert_string_equal(r.out.files[0].name, "90-hugekit.conf");
	assert_true(
		asprintf(&want,
			 "# Made by hugeadm --generate sysctl from t.conf.\n"
			 "# The huge page pools are not set here: hugekit.service sets them "
			 "(hugeadm --apply)\n"
			 "# and reads them back.\n"
			 "# recommended (t.conf:4), worked out on this machine:\n"
			 "# 11 x the default huge page size in kB x the memory zones\n"
			 "vm.min_free_kbytes = %llu\n"
			 "# kernel.shmmax = recommended (t.conf:6) is not set at boot: the "
			 "kernel's default is above\n"
			 "# what the huge page pools hold, and hugekit never lowers it; hugeadm "
			 "--apply\n"
			 "# raises a lower value to %llu (the pools at the maximum this "
			 "configuration gives them)\n"
			 "# group root (t.conf:5): the kernel takes its gid\n"
			 "vm.hugetlb_shm_group = 0\n"
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
	struct run r;

	start(&r, "x86-2node", "[sysctl]\n\nvm.hugetlb_shm_group = no-such-group-hk\n");
	assert_int_equal(ha_gen_sysctl(&r.g, &r.out), -1);
	assert_string_equal(problems,
			    "3: vm.hugetlb_shm_group 'no-such-group-hk': no such group\n");
	assert_int_equal(r.out.n, 0);
	finish(&r);
	refused("[sysctl]\n\n\nkernel.shmall = recommended\n",
		"4: [sysctl] kernel.shmall 'recommended': not a number\n");
}

/*
 * What --apply refuses on this machine, every generator refuses, with the
 * plan's messages: here a gigantic pool's maximum above its minimum and a
 * sysctl the tree's kernel lacks, neither of which --generate boot writes.
 */
static void test_refused_like_apply(void **state)
{
	static const char text[] = "[pool 1G]\n"
				   "minimum = 2\n"
				   "maximum = 4\n"
				   "[sysctl]\n"
				   "vm.compaction_proactiveness = 20\n";
	int (*const gens[])(struct ha_gen *, struct ha_gen_files *) = {ha_gen_sysctl, ha_gen_units};
	struct hk_plan *plan = NULL;
	char apply[sizeof(problems)];
	struct run r;

	start(&r, "x86-2node", text);
	assert_int_equal(hk_plan_from_config(r.g.ctx, r.config, record, NULL, &plan), -EINVAL);
	assert_null(plan);
	snprintf(apply, sizeof(apply), "%s", problems);
	assert_string_equal(apply,
			    "3: maximum 4: gigantic pages cannot be overcommitted; the "
			    "maximum of this pool is its minimum (2)\n"
			    "5: [sysctl] vm.compaction_proactiveness: the kernel has no such "
			    "setting (/proc/sys/vm/compaction_proactiveness)\n");
	problems[0] = '\0';
	assert_int_equal(ha_gen_boot(&r.g, false, &r.out), -1);
	assert_string_equal(problems, apply);
	for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++) {
		problems[0] = '\0';
		assert_int_equal(gens[i](&r.g, &r.out), -1);
		assert_string_equal(problems, apply);
	}
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
	struct run r;

	start(&r, "x86-2node",
	      "[mount /dev/hugepages-1G]\n"
	      "pagesize = 1G\n"
	      "user = root\n"
	      "mode = 770\n"
	      "min_size = 2G\n"
	      "[mount /srv/huge 50%]\n"
	      "size = 50%\n"
	      "group = 0\n"
	      "nr_inodes = 100\n"
	      "[mount /srv/b]\n"
	      "pagesize = 2M\n");
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
	struct run r;

	start(&r, "x86-2node", "[mount /a/b]\n\n\nuser = no-such-user-hk\n");
	assert_int_equal(ha_gen_units(&r.g, &r.out), -1);
	assert_string_equal(problems, "4: user 'no-such-user-hk': no such user\n");
	finish(&r);
	/* Paths with nothing to resolve, so that two spellings cannot name one unit. */
	refused("[mount relative/x]\n"
		"pagesize = 2M\n"
		"[mount /a/b]\n"
		"mode = 0999\n"
		"[mount /a//b/]\n"
		"pagesize = 2M\n",
		"1: [mount relative/x]: the mount point must be an absolute path without '.', '..', "
		"'//' or a trailing '/'\n"
		"4: [mount /a/b] mode '0999': not an octal mode (0000-7777)\n"
		"5: [mount /a//b/]: the mount point must be an absolute path without '.', '..', "
		"'//' or a trailing '/'\n");
	/* A unit's Where= would join the next line to a trailing '\\'. */
	refused("[mount /mnt/h\\]\npagesize = 2M\n",
		"1: [mount /mnt/h\\]: the mount point must not end in '\\' or a blank\n");
}

/*
 * ExecStart= and RequiresMountsFor= as systemd unquotes them (systemd.syntax(7),
 * systemd.service(5) "Command lines"): quoted when a blank, a quote or '\\' is
 * in the word, '"' and '\\' escaped there, '%' (specifiers) doubled, '$'
 * doubled in a command line, and a lone ';' escaped.
 */
static void test_service_quoting(void **state)
{
	static const char *const dirs[] = {"/srv/it's", "/srv/a b", "/srv/50%;x",
					   "/srv/$v\\w\"q\""};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	ha_gen_service(f, "/opt/50% a$b\"c'd\\e/hugeadm", NULL, dirs, 4);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "\nRequiresMountsFor=\"/srv/it's\"\n"
				     "RequiresMountsFor=\"/srv/a b\"\n"
				     "RequiresMountsFor=/srv/50%%;x\n"
				     "RequiresMountsFor=\"/srv/$v\\\\w\\\"q\\\"\"\n"));
	assert_non_null(
		strstr(text, "\nExecStart=\"/opt/50%% a$$b\\\"c'd\\\\e/hugeadm\" --apply\n"));
	free(text);
	/* Without any of them: as before, unquoted. */
	f = open_memstream(&text, &len);
	assert_non_null(f);
	ha_gen_service(f, "/usr/bin/hugeadm", NULL, NULL, 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "\nExecStart=/usr/bin/hugeadm --apply\n"));
	assert_null(strstr(text, "RequiresMountsFor="));
	free(text);
	/* --config FILE: the service applies FILE, once its file system is there. */
	f = open_memstream(&text, &len);
	assert_non_null(f);
	ha_gen_service(f, "/usr/bin/hugeadm", "/srv/conf/site 1.conf", NULL, 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "\nRequiresMountsFor=\"/srv/conf/site 1.conf\"\n"));
	assert_non_null(
		strstr(text, "\nExecStart=/usr/bin/hugeadm --apply \"/srv/conf/site 1.conf\"\n"));
	free(text);
}

/*
 * A control character in whatever goes into a file (the configuration's name
 * in its comments, the path of hugeadm) is refused, named with it escaped:
 * it would start a line of its own ("[Service]", "ExecStartPre=", a sysctl).
 */
static void test_control_characters(void **state)
{
	static const char text[] =
		"[sysctl]\nvm.min_free_kbytes = 1000\n[mount /srv/h]\npagesize = 2M\n";
	static const char evil[] = "x\n[Service]\nExecStartPre=/evil\nkernel.core_pattern=|/evil";
	struct hk_config *config = NULL;
	struct run r;

	start(&r, "x86-2node", text);
	r.g.hugeadm_path = "/usr/bin/hugeadm\nExecStartPre=/evil";
	assert_int_equal(ha_gen_units(&r.g, &r.out), -1);
	assert_string_equal(
		problems, "0: the path of hugeadm '/usr/bin/hugeadm\\012ExecStartPre=/evil' "
			  "has a control character: it cannot be written into a generated file\n");
	assert_int_equal(r.out.n, 0);
	finish(&r);

	start(&r, "x86-2node", "");
	assert_int_equal(hk_config_parse_string(r.t.ctx, evil, text, record, NULL, &config), 0);
	r.g.config = config;
	problems[0] = '\0';
	assert_int_equal(ha_gen_sysctl(&r.g, &r.out), -1);
	assert_int_equal(ha_gen_units(&r.g, &r.out), -1);
	assert_int_equal(ha_gen_boot(&r.g, true, &r.out), -1);
	assert_string_equal(
		problems,
		"0: the configuration file name 'x\\012[Service]\\012ExecStartPre=/evil\\012"
		"kernel.core_pattern=|/evil' has a control character: it cannot be "
		"written into a generated file\n"
		"0: the configuration file name 'x\\012[Service]\\012ExecStartPre=/evil\\012"
		"kernel.core_pattern=|/evil' has a control character: it cannot be "
		"written into a generated file\n"
		"0: the configuration file name 'x\\012[Service]\\012ExecStartPre=/evil\\012"
		"kernel.core_pattern=|/evil' has a control character: it cannot be "
		"written into a generated file\n");
	assert_int_equal(r.out.n, 0);
	/* The boot line on stdout names no file: made all the same. */
	problems[0] = '\0';
	assert_int_equal(ha_gen_boot(&r.g, false, &r.out), 0);
	assert_string_equal(problems, "");
	hk_config_unref(config);
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
		cmocka_unit_test(test_refused_like_apply),
		cmocka_unit_test(test_unit_names),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_units_problems),
		cmocka_unit_test(test_service_quoting),
		cmocka_unit_test(test_control_characters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
