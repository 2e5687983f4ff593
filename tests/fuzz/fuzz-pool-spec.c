// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm's pool specifications, SIZE:[+|-]COUNT[K|M|G][@NODES]
 * (--pool-pages-min/--pool-pages-max, tools/hugeadm/plan.c), parsed and then
 * validated against a two-node fixture tree in a dry run.
 * Input: lines; the first byte of each picks min or max.
 */
#include <hugekit/hugekit.h>

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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tree = getenv("HK_FUZZ_SYSROOT");

	if (hk_new(tree ? tree : HK_FUZZ_SYSROOT_DEFAULT, &ctx) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hugeadm_ctl ctl = {.ctx = ctx, .verbose = 2, .dry_run = true, .lock_timeout = 30};
	char *all = fuzz_str(data, size), *line, *save = NULL;
	int bad = 0;

	for (line = strtok_r(all, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!line[0])
			continue;
		if (ha_plan_pool(&ctl, (line[0] & 1) ? HA_POOL_MAX : HA_POOL_MIN, line + 1) < 0)
			bad = 1;
	}
	if (!bad)
		(void)ha_plan_validate(&ctl);
	ha_plan_free(&ctl);
	ha_states_free(&ctl.plan_states);
	ha_states_free(&ctl.dry_states);
	free(all);
	return 0;
}
