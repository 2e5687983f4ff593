// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the kernel could give now: huge pages free in one piece in the buddy
 * allocator (/proc/buddyinfo), and how well transparent huge pages do
 * (/proc/vmstat and the per-size mTHP counters).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "buddy.h"
#include "internal.h"

static int read_buddyinfo(struct hk_ctx *ctx, struct hkc_buddy_zone **ret_zones, size_t *ret_n)
{
	size_t bad;
	char *buf;
	int rc;

	rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC_BUDDYINFO);
	if (rc < 0) {
		hkl_dbg(ctx, "%s: %s", HK_ABS(HK_PROC_BUDDYINFO), strerror(-rc));
		return rc;
	}
	rc = hkc_buddyinfo_parse(buf, ret_zones, ret_n, &bad);
	free(buf);
	if (rc == -EINVAL)
		hkl_err(ctx,
			"%s: line %zu is not \"Node N, zone NAME\" and the free blocks of each order",
			HK_ABS(HK_PROC_BUDDYINFO), bad);
	return rc;
}

HK_EXPORT int hk_buddy_obtainable(struct hk_ctx *ctx, uint64_t page_size, int node, uint64_t *ret)
{
	struct hkc_buddy_zone *zones;
	uint64_t base, sum = 0;
	unsigned order = 0;
	size_t n;
	int rc;

	if (!ret || (node < 0 && node != HK_NODE_ALL))
		return -EINVAL;
	rc = hkl_ctx_base_size(ctx, &base);
	if (rc < 0)
		return rc;
	if (page_size < base || !hkc_is_pow2(page_size) || !hkc_is_pow2(base))
		return -EINVAL;
	while ((base << order) < page_size)
		order++;
	rc = read_buddyinfo(ctx, &zones, &n);
	if (rc < 0)
		return rc;
	/* Gigantic: no zone's free lists go that high (MAX_PAGE_ORDER). */
	if (n ? order >= zones[0].n_orders : order > HK_MAX_PAGE_ORDER) {
		free(zones);
		return -ERANGE;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t add;

		if ((node != HK_NODE_ALL && zones[i].node != node) ||
		    !hkc_buddy_zone_hugetlb(zones[i].zone))
			continue;
		add = hkc_buddy_blocks(&zones[i], order);
		sum = add > UINT64_MAX - sum ? UINT64_MAX : sum + add;
	}
	free(zones);
	*ret = sum;
	return 0;
}

HK_EXPORT int hk_vmstat_read(struct hk_ctx *ctx, const char *name, uint64_t *ret)
{
	char *buf;
	int rc;

	if (!name || !ret)
		return -EINVAL;
	rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC_VMSTAT);
	if (rc < 0)
		return rc;
	rc = hkc_vmstat_find(buf, name, ret);
	free(buf);
	if (rc == -EINVAL)
		hkl_err(ctx, "%s: the value of %s is not a number", HK_ABS(HK_PROC_VMSTAT), name);
	return rc;
}

HK_EXPORT int hk_thp_sizes(struct hk_ctx *ctx, uint64_t **ret_sizes, size_t *ret_n)
{
	if (!ret_sizes || !ret_n)
		return -EINVAL;
	return hkc_size_dirs(&ctx->path, HK_SYS_THP, ret_sizes, ret_n);
}

HK_EXPORT int hk_thp_stat_read(struct hk_ctx *ctx, uint64_t size, const char *name, uint64_t *ret)
{
	if (!name || !*name || strchr(name, '/') || name[0] == '.' || !ret || size < 1024)
		return -EINVAL;
	return hkc_path_read_u64f(&ctx->path, ret, HK_SYS_THP_STAT, size / 1024, name);
}
