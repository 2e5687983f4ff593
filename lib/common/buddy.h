/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsers of the buddy allocator's and the VM's counters: /proc/buddyinfo
 * ("Node 0, zone   Normal   12 3 ..."), /proc/vmstat and the per-size mTHP
 * stats files ("name value" lines, or one number).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* More orders than any kernel has (NR_PAGE_ORDERS is at most 14 today). */
#define HKC_BUDDY_MAX_ORDERS 32

/* One line of /proc/buddyinfo: free blocks of each order in one zone of one node. */
struct hkc_buddy_zone {
	int node;
	char zone[16];
	unsigned n_orders;
	uint64_t free[HKC_BUDDY_MAX_ORDERS];
};

/*
 * Parse a whole /proc/buddyinfo. Every line must be "Node N, zone NAME" and
 * then at least one count; all lines the same number of counts. -EINVAL on
 * the first line that is not, with *ret_bad_line its number (from 1);
 * -ENOMEM. free(*ret_zones) afterwards. An empty file gives no zones.
 */
int hkc_buddyinfo_parse(const char *buf, struct hkc_buddy_zone **ret_zones, size_t *ret_n,
			size_t *ret_bad_line);

/*
 * Whether the kernel allocates hugetlb pages from this zone: hugetlb asks
 * for GFP_HIGHUSER_MOVABLE (GFP_HIGHUSER for gigantic sizes), which reaches
 * Normal, HighMem and Movable, and falls back to DMA32. DMA is left out: its
 * lowmem reserve against such requests is the zones above it / 256
 * (lowmem_reserve_ratio), more than its 16 MiB once they hold 4 GiB (on the
 * development machine 35 MiB: /proc/zoneinfo "protection"). DMA32 keeps a
 * smaller reserve the same way, one reason the figure is an upper estimate.
 * Device memory is never free in the buddy allocator.
 */
bool hkc_buddy_zone_hugetlb(const char *zone);

/*
 * Blocks of 2^order pages the zone can give without splitting more than
 * one free block per page and without compaction: the sum over orders
 * k >= order of free[k] x 2^(k - order), saturated at UINT64_MAX. 0 when
 * order is beyond the zone's orders.
 */
uint64_t hkc_buddy_blocks(const struct hkc_buddy_zone *z, unsigned order);

/*
 * A "name value" line of /proc/vmstat: the name must be the whole first word
 * of a line. -ENOENT when absent, -EINVAL when the value is not a number.
 */
int hkc_vmstat_find(const char *buf, const char *name, uint64_t *ret);
