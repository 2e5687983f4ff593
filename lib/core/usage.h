/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bounds of hk_usage_read's walks, internal: the unit tests walk small
 * trees with small bounds (no million files needed to reach one).
 */
#pragma once

#include <stddef.h>

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
