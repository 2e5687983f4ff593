// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Swap while a pool grows (--add-temp-swap, --add-ramdisk-swap, --persist):
 * made and taken down by libhugekit (hk_swap_add_file, hk_swap_add_ramdisks,
 * hk_swap_remove: lib/core/swap.c, which logs what it does in 2.23's words);
 * here the options' checks, a dry run's shell lines, and the swap figures
 * behind 2.23's warnings and --explain.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hugeadm.h"

int ha_swap_check_ramdisk(struct hugeadm_ctl *ctl)
{
	if (access("/dev/ram0", F_OK) == 0)
		return 0;
	ha_msg(ctl, HA_ERROR,
	       "--add-ramdisk-swap: there is no /dev/ram0 (load the brd driver: modprobe brd); "
	       "nothing was changed");
	return -1;
}

int ha_swap_validate(struct hugeadm_ctl *ctl)
{
	if (!hk_is_live(ctl->ctx) && (ctl->temp_swap || ctl->ramdisk_swap)) {
		ha_msg(ctl, HA_ERROR,
		       "--add-temp-swap and --add-ramdisk-swap are not supported "
		       "with --sysroot");
		return -1;
	}
	return ctl->ramdisk_swap ? ha_swap_check_ramdisk(ctl) : 0;
}

int ha_swap_add(struct hugeadm_ctl *ctl, uint64_t page_size, struct hk_swap **ret)
{
	unsigned flags = ctl->persist ? HK_SWAP_PERSIST : 0;
	const char *path;
	int rc;

	/* As with libhugetlbfs, swap that cannot be set up only warns (logged): the resize goes on. */
	if (ctl->temp_swap)
		rc = hk_swap_add_file(ctl->ctx, (uint64_t)ctl->temp_swap * page_size, flags, ret);
	else
		rc = hk_swap_add_ramdisks(ctl->ctx, page_size, flags, ret);
	if (rc == -ENOMEM || rc == -EINVAL) {
		ha_msg(ctl, HA_ERROR, "cannot add swap: %s", strerror(-rc));
		return -1;
	}
	if (!ctl->dry_run)
		return 0;
	path = hk_swap_path(*ret);
	if (path) {
		printf("dd bs=1024 count=%" PRIu64 " if=/dev/zero of=%s\n",
		       (uint64_t)ctl->temp_swap * page_size / 1024, path);
		printf("mkswap %s\nswapon %s\n", path, path);
	}
	for (int i = 0; i < hk_swap_ramdisks(*ret); i++)
		printf("mkswap /dev/ram%d\nswapon /dev/ram%d\n", i, i);
	return 0;
}

void ha_swap_remove(struct hugeadm_ctl *ctl, struct hk_swap *swap)
{
	const char *path = hk_swap_path(swap);

	if (ctl->dry_run && !ctl->persist && path)
		printf("swapoff %s\nrm -f %s\n", path, path);
	for (int i = 0; ctl->dry_run && !ctl->persist && i < hk_swap_ramdisks(swap); i++)
		printf("swapoff /dev/ram%d\n", i);
	hk_swap_remove(swap);
}

void ha_swap_state(struct hugeadm_ctl *ctl, struct ha_swap_state *s)
{
	uint64_t kb, def = 0;

	*s = (struct ha_swap_state){0};
	if (hk_meminfo_read(ctl->ctx, "SwapTotal", &kb) == 0) {
		s->have_total = true;
		s->total = kb * 1024;
	}
	if (hk_meminfo_read(ctl->ctx, "SwapFree", &kb) == 0) {
		s->have_free = true;
		s->free = kb * 1024;
	}
	hk_default_page_size(ctl->ctx, &def);
	/* A SwapTotal that cannot be read is no swap; a SwapFree, none free (ha_check_swap's rule). */
	s->none = s->total == 0;
	s->low = !s->none && s->free <= def;
}
