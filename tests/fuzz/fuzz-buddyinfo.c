// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/buddyinfo and /proc/vmstat: the parsers on the input, and the
 * library's readers on a tree whose file holds it. On success every zone
 * has the same orders, and no count of obtainable pages is more than the
 * base pages the zones' free blocks hold.
 * Input: a selector byte (even: buddyinfo, odd: vmstat), then the file.
 */
#include <errno.h>
#include <hugekit/hugekit.h>

#include "buddy.h"
#include "fuzz.h"

static struct hk_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_tree_init();
	fuzz_put_str("proc/self/smaps", "KernelPageSize:        4 kB\n");
	if (hk_new(fuzz_root, &ctx) < 0)
		abort();
	return 0;
}

static void check_buddyinfo(const char *s)
{
	struct hkc_buddy_zone *z = NULL;
	size_t n = 0, bad = 0;
	uint64_t two_m = 0, base = 0;
	int rc;

	rc = hkc_buddyinfo_parse(s, &z, &n, &bad);
	if (rc == -EINVAL && bad == 0)
		abort();
	if (rc == 0) {
		for (size_t i = 0; i < n; i++) {
			if (z[i].n_orders == 0 || z[i].n_orders != z[0].n_orders)
				abort();
			/* Coarser orders never hold more blocks than finer ones count. */
			if (hkc_buddy_blocks(&z[i], 1) > hkc_buddy_blocks(&z[i], 0))
				abort();
		}
		free(z);
	} else if (rc != -EINVAL && rc != -ENOMEM) {
		abort();
	}
	rc = hk_buddy_obtainable(ctx, 2 << 20, HK_NODE_ALL, &two_m);
	if (rc != 0 && rc != -EINVAL && rc != -ERANGE && rc != -ENOMEM)
		abort();
	if (rc == 0 && hk_buddy_obtainable(ctx, 4096, HK_NODE_ALL, &base) == 0 &&
	    base != UINT64_MAX && two_m > base / 512)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	uint64_t v;
	int rc;

	if (size == 0)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	if (data[0] & 1) {
		rc = hkc_vmstat_find(s, "thp_fault_alloc", &v);
		if (rc != 0 && rc != -ENOENT && rc != -EINVAL)
			abort();
		fuzz_put("proc/vmstat", data + 1, size - 1);
		hk_vmstat_read(ctx, "compact_stall", &v);
	} else {
		fuzz_put("proc/buddyinfo", data + 1, size - 1);
		check_buddyinfo(s);
	}
	free(s);
	return 0;
}
