// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An unmount as an item of a plan (HK_PLAN_UNMOUNT): the hugetlbfs mount at
 * a path taken down by hk_mount_unmount, the one the mount table shows
 * there when the plan runs (the last mounted, on top), its path walked
 * without following a link and the mount at the end compared with the
 * table's. Mount ids are reused as soon as a mount goes, so the plan names
 * the path, not the id: a hugetlbfs mount put there since is taken down as
 * the planned one would have been, anything else is left. What is taken
 * down is not put back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

HK_EXPORT int hk_plan_add_unmount(struct hk_plan *plan, const struct hk_mounts *mounts, size_t i,
				  const char *why)
{
	struct hk_plan_item it = {
		.size = sizeof(it), .kind = HK_PLAN_UNMOUNT, .why = why, .node = HK_NODE_ALL};
	char *item = NULL;
	int rc;

	if (!plan || !mounts || i >= hk_mounts_count(mounts) ||
	    hk_mount_target(mounts, i)[0] != '/')
		return -EINVAL;
	it.path = hk_mount_target(mounts, i);
	it.page_size = hk_mount_page_size(mounts, i);
	it.value = hk_mount_options(mounts, i);
	if (asprintf(&item, "unmount %s", it.path) < 0)
		return -ENOMEM;
	it.item = item;
	rc = hk_plan_add(plan, &it);
	free(item);
	return rc;
}

/* The hugetlbfs mount at the item's path that the table shows last (on top): its index, or -1. */
static ssize_t find(const struct hk_mounts *ms, const struct hk_plan_item *it)
{
	ssize_t found = -1;

	for (size_t i = 0; i < hk_mounts_count(ms); i++)
		if (strcmp(hk_mount_target(ms, i), it->path) == 0)
			found = (ssize_t)i;
	return found;
}

int hkl_unmount_check(struct hk_ctx *ctx, const struct hk_plan_item *it, char **ret)
{
	struct hk_mounts *ms = NULL;
	ssize_t i;
	int rc = hk_mounts_read(ctx, &ms);

	if (rc < 0)
		return rc;
	i = find(ms, it);
	if (i >= 0 && ret) {
		*ret = strdup(hk_mount_options(ms, (size_t)i));
		if (!*ret)
			rc = -ENOMEM;
	}
	hk_mounts_unref(ms);
	return rc < 0 ? rc : i < 0;
}

int hkl_unmount_apply(struct hk_ctx *ctx, const struct hk_plan_item *it)
{
	struct hk_mounts *ms = NULL;
	ssize_t i;
	int rc;

	rc = hk_mounts_read(ctx, &ms);
	if (rc < 0)
		return rc;
	/* Gone since the check: nothing to take down, and nothing else is. */
	i = find(ms, it);
	rc = i < 0 ? 0 : hk_mount_unmount(ctx, ms, (size_t)i);
	hk_mounts_unref(ms);
	return rc;
}
