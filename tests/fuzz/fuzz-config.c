// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration parser: hk_config_parse_string on the input, and for a
 * configuration it takes, the plan on the two-node fixture tree (resolved
 * only: nothing is written). Every entry must have its section, key, value
 * and a line within the input; every item a name, a path and a value.
 */
#include <hugekit/hugekit.h>

#include "fuzz.h"

static struct hk_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (hk_new(HK_FUZZ_SYSROOT_DEFAULT, &ctx) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	struct hk_config *cfg = NULL;
	struct hk_plan *plan = NULL;
	const struct hk_config_entry *es;
	const struct hk_plan_item *items;
	unsigned lines = 1;
	size_t n;

	if (!s)
		return 0;
	for (const char *p = s; *p; p++)
		lines += *p == '\n';
	if (hk_config_parse_string(ctx, "fuzz.conf", s, NULL, NULL, &cfg) == 0) {
		n = hk_config_entries(cfg, &es);
		for (size_t i = 0; i < n; i++)
			if (!es[i].section || !es[i].key || !es[i].value || !*es[i].value ||
			    es[i].line < 1 || es[i].line > lines)
				abort();
		if (hk_plan_from_config(ctx, cfg, NULL, NULL, &plan) == 0) {
			n = hk_plan_items(plan, &items);
			for (size_t i = 0; i < n; i++)
				if (!items[i].item || !items[i].path || items[i].path[0] != '/' ||
				    !items[i].value)
					abort();
			hk_plan_unref(plan);
		}
		hk_config_unref(cfg);
	}
	free(s);
	return 0;
}
