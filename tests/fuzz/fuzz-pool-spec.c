// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm's pool specifications, SIZE:[+|-]COUNT[K|M|G][@NODES]
 * (--pool-pages-min/--pool-pages-max, tools/hugeadm/actions.c), parsed, then
 * validated, planned by libhugekit (hk_plan_from_intent) and run in a dry
 * run by its executor (hk_run_plan; steps.c words it) on a copy of a
 * two-node fixture tree whose 2 MiB
 * counters the input may set.
 * Input: lines; the first byte of each picks min (even) or max (odd). A line
 * "#abcde" instead sets nr_hugepages, nr_overcommit_hugepages,
 * surplus_hugepages, free_hugepages and resv_hugepages, each byte picking a
 * value (0, 1, 24, 2^32, 2^63 - 1, 2^64 - 2, 2^64 - 1, ...).
 */
#include <hugekit/hugekit.h>
#include <inttypes.h>

#include "fuzz.h"
#include "hugeadm.h"

static struct hk_ctx *ctx;

/* Messages are formatted (the format and its arguments are checked), not printed. */
void ha_msg(const struct hugeadm_ctl *ctl, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fuzz_vformat(fmt, ap);
	va_end(ap);
}

#define POOL "sys/kernel/mm/hugepages/hugepages-2048kB/"

static const char *const counters[] = {"nr_hugepages", "nr_overcommit_hugepages",
				       "surplus_hugepages", "free_hugepages", "resv_hugepages"};
static const char *const fixture_values[] = {"24\n", "8\n", "3\n", "5\n", "2\n"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tree = getenv("HK_FUZZ_SYSROOT");
	char cmd[2 * PATH_MAX + 32];

	fuzz_tree_init();
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s'", tree ? tree : HK_FUZZ_SYSROOT_DEFAULT,
		 fuzz_root);
	/* The dry run's shell lines go to stdout. */
	if (system(cmd) != 0 || !freopen("/dev/null", "w", stdout) || hk_new(fuzz_root, &ctx) < 0)
		abort();
	return 0;
}

static void set_counters(const char *sel)
{
	static const uint64_t values[] = {
		0,	   1, 2, 24, 512, UINT32_MAX, (uint64_t)1 << 32, INT64_MAX, UINT64_MAX - 1,
		UINT64_MAX};
	size_t n = sel ? strlen(sel) : 0;
	char path[128], buf[32];

	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		if (i < n)
			snprintf(buf, sizeof(buf), "%" PRIu64 "\n",
				 values[(unsigned char)sel[i] %
					(sizeof(values) / sizeof(values[0]))]);
		else
			snprintf(buf, sizeof(buf), "%s", fixture_values[i]);
		snprintf(path, sizeof(path), POOL "%s", counters[i]);
		fuzz_put_str(path, buf);
		if (i == 0)
			fuzz_put_str(POOL "nr_hugepages_mempolicy", buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hugeadm_ctl ctl = {.ctx = ctx, .verbose = 2, .dry_run = true, .lock_timeout = 30};
	char *all = fuzz_str(data, size), *line, *save = NULL;
	int bad = 0;

	set_counters(NULL);
	for (line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			set_counters(line + 1);
		else if (line[0] && ha_plan_pool(&ctl, (line[0] & 1) ? HA_POOL_MAX : HA_POOL_MIN,
						 line + 1) < 0)
			bad = 1;
	}
	if (!bad && ha_plan_validate(&ctl) == 0)
		(void)ha_apply(&ctl);
	ha_plan_free(&ctl);
	free(all);
	return 0;
}
