// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/self/mountinfo as libhugekit reads it (lib/core/mounts.c, libmount):
 * every hugetlbfs mount, its page size and options.
 */
#include <hugekit/hugekit.h>

#include "fuzz.h"

static struct hk_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_tree_init();
	fuzz_put_str("proc/meminfo", "Hugepagesize:       2048 kB\n");
	fuzz_mkdirs("sys/kernel/mm/hugepages/hugepages-2048kB");
	fuzz_mkdirs("sys/kernel/mm/hugepages/hugepages-1048576kB");
	if (hk_new(fuzz_root, &ctx) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"pagesize", "size", "min_size", "uid", "mode"};
	struct hk_mounts *ms = NULL;

	fuzz_put("proc/self/mountinfo", data, size);
	if (hk_mounts_read(ctx, &ms) < 0)
		return 0;
	for (size_t i = 0; i < hk_mounts_count(ms); i++) {
		if (!hk_mount_target(ms, i) || !hk_mount_options(ms, i))
			abort();
		(void)hk_mount_page_size(ms, i);
		for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++) {
			char *v = NULL;

			if (hk_mount_option(ms, i, names[j], &v) == 0)
				free(v);
		}
	}
	hk_mounts_unref(ms);
	return 0;
}
