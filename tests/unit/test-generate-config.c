// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --generate's generators fed by the configuration parser
 * (hk_config_parse_string): what a configuration file says, as the parser
 * hands it on, becomes the expected kernel command line, sysctl.d lines and
 * units; a problem found on the machine is reported at its file and line.
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

#define GEN_RUN_FILES 1
#include "gen-run.h"

static void test_boot(void **state)
{
	struct run r;

	start(&r, "x86-2node",
	      "# 1G pages only at boot, per node; 2M by the service\n"
	      "[pool 1G]\n"
	      "minimum = 4@0, 4@1   # four on each node\n"
	      "\n"
	      "[pool 2M]\n"
	      "minimum = 512\n"
	      "maximum = 1024\n");
	assert_int_equal(ha_gen_boot(&r.g, false, &r.out), 0);
	assert_string_equal(problems, "");
	assert_string_equal(r.out.note, "hugepagesz=1G hugepages=0:4,1:4");
	finish(&r);
}

static void test_boot_node_missing(void **state)
{
	struct run r;

	start(&r, "x86-2node", "[pool 1G]\nminimum = 2@5\n");
	assert_int_equal(ha_gen_boot(&r.g, false, &r.out), -1);
	assert_string_equal(problems, "t.conf:2: minimum 2@5: this machine has no NUMA node 5\n");
	assert_int_equal(r.out.n, 0);
	finish(&r);
}

static void test_sysctl(void **state)
{
	uint64_t mfk;
	char want[256];
	struct run r;

	start(&r, "x86-1node", "[sysctl]\nvm.min_free_kbytes = recommended\n");
	assert_int_equal(hk_recommended_min_free_kbytes(r.t.ctx, &mfk), 0);
	assert_int_equal(ha_gen_sysctl(&r.g, &r.out), 0);
	assert_string_equal(problems, "");
	snprintf(want, sizeof(want), "\nvm.min_free_kbytes = %llu\n", (unsigned long long)mfk);
	assert_non_null(strstr(r.out.files[0].text, want));
	assert_non_null(strstr(r.out.files[0].text, "from t.conf.\n"));
	finish(&r);
}

static void test_units(void **state)
{
	struct run r;

	start(&r, "x86-2node",
	      "[mount /dev/hugepages-2M]\n"
	      "pagesize = 2M\n"
	      "mode = 0770\n"
	      "\n"
	      "[mount /mnt/huge pages]\n"
	      "pagesize = 1G\n"
	      "min_size = 2G\n");
	assert_int_equal(ha_gen_units(&r.g, &r.out), 0);
	assert_string_equal(problems, "");
	assert_int_equal(r.out.n, 3);
	assert_string_equal(r.out.files[1].name, "dev-hugepages\\x2d2M.mount");
	assert_non_null(
		strstr(r.out.files[1].text, "Options=nosuid,nodev,pagesize=2M,mode=0770\n"));
	assert_string_equal(r.out.files[2].name, "mnt-huge\\x20pages.mount");
	assert_non_null(strstr(r.out.files[2].text, "Where=/mnt/huge pages\n"));
	assert_non_null(
		strstr(r.out.files[2].text, "# Made by hugeadm --generate units from t.conf:6.\n"));
	finish(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot),
		cmocka_unit_test(test_boot_node_missing),
		cmocka_unit_test(test_sysctl),
		cmocka_unit_test(test_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
