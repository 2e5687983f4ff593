/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bounds of hk_usage_read's walks, internal: the unit tests walk small
 * trees with small bounds (no million files needed to reach one).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hugekit/hugekit.h>

struct hkc_usage_limits {
	size_t mount_entries; /* directory entries walked on each hugetlbfs mount */
	int mount_depth;      /* directories below a mount point */
	size_t cgroups;	      /* cgroup directories walked */
	int cgroup_depth;     /* directories below the cgroup root */
};

/* 1,000,000 entries a mount, 32 levels; 100,000 cgroups, 16 levels. */
extern const struct hkc_usage_limits hkc_usage_limits_default;

int hkc_usage_read_limited(struct hk_ctx *ctx, const struct hkc_usage_limits *lim,
			   struct hk_usage **ret_usage);
/*
 * The hugetlb cgroups alone (hk_usage_cgroups; the other lists empty): for
 * the metrics, which walk no process or mount.
 */
int hkl_usage_cgroups_read(struct hk_ctx *ctx, struct hk_usage **ret_usage);

/*
 * The hierarchy that holds the hugetlb controller and the names of its
 * files (relative root, version 1 or 2, and "current", "max", ... or v1's
 * "usage_in_bytes", "limit_in_bytes", ...). One rule for the plan's
 * [cgroup] and for --usage: cgroup v2 at sys/fs/cgroup or sys/fs/cgroup/unified
 * where its cgroup.controllers lists hugetlb, else v1's hierarchy (a tasks
 * file there). False when neither: h is then v2 at the root, or at unified/
 * beside v1 (where usage looks, most likely finding nothing).
 */
struct hkc_cg_hier {
	const char *root;
	int version;
	const char *current, *max, *rsvd_current, *rsvd_max;
};

bool hkc_cg_hierarchy(struct hk_ctx *ctx, struct hkc_cg_hier *h);
/* The kernel's name of a size in those files: 64KB, 2MB, 1GB. */
void hkc_cg_size_name(char *buf, size_t sz, uint64_t size);

/*
 * hk_pages_needed's two versions: @@HK_1.4 (struct hk_pages_needed) and
 * @HK_1.1, the struct of 1.1 to 1.3 (no shared_pages), for programs built then.
 */
struct hkc_pages_needed_v1_1 {
	uint64_t page_size, pages, heap_pages, anon_pages, sysv_pages, hugetlb_pages;
};

int hkc_pages_needed_v1_4(struct hk_ctx *ctx, int pid, struct hk_pages_needed **ret, size_t *ret_n);
int hkc_pages_needed_v1_1(struct hk_ctx *ctx, int pid, struct hkc_pages_needed_v1_1 **ret,
			  size_t *ret_n);
