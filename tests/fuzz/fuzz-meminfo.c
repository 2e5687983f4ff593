// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/meminfo, node meminfo and /proc/zoneinfo: hkc_kv_find_u64 on the
 * input, and the library's readers on a tree whose files hold it (the
 * default page size, hk_meminfo_read, the zone count and the
 * min_free_kbytes recommendation made from it).
 * Input: a selector byte (which file the rest goes to), then the file.
 */
#include <errno.h>
#include <hugekit/hugekit.h>

#include "fuzz.h"
#include "path.h"

static struct hk_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_tree_init();
	fuzz_put_str("proc/meminfo", "Hugepagesize:       2048 kB\n");
	fuzz_put_str("proc/zoneinfo", "Node 0, zone      DMA\n");
	fuzz_mkdirs("sys/kernel/mm/hugepages/hugepages-2048kB");
	if (hk_new(fuzz_root, &ctx) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {"Hugepagesize", "MemTotal", "HugePages_Total", "MemFree",
					   "Node"};
	char *s;
	uint64_t v;
	unsigned zones;
	int rc;

	if (size == 0)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		rc = hkc_kv_find_u64(s, keys[i], &v);
		if (rc != 0 && rc != -ENOENT && rc != -EINVAL && rc != -ERANGE)
			abort();
	}
	if (data[0] & 1) {
		fuzz_put("proc/zoneinfo", data + 1, size - 1);
		if (hk_zone_count(ctx, &zones) == 0 && zones > size)
			abort();
	} else {
		fuzz_put("proc/meminfo", data + 1, size - 1);
		hk_meminfo_read(ctx, "MemTotal", &v);
		hk_default_page_size(ctx, &v);
	}
	hk_recommended_min_free_kbytes(ctx, &v);
	hk_recommended_shmmax(ctx, &v);
	free(s);
	return 0;
}
