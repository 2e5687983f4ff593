// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Swap while a pool grows (--add-temp-swap, --add-ramdisk-swap, --persist):
 * made and taken down by libhugekit's executor around the write of a
 * growing pool's minimum (hk_run_set_swap; lib/core/swap.c logs what it does
 * in 2.23's words); here the options' checks, a dry run's shell lines (the
 * SWAP and UNSWAP steps), and the swap figures behind 2.23's warnings and
 * --explain.
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

int ha_run_swap(struct hugeadm_ctl *ctl)
{
	struct hk_run_swap sw = {.size = sizeof(sw),
				 .file_pages = ctl->temp_swap > 0 ? (uint64_t)ctl->temp_swap : 0,
				 .ramdisks = ctl->ramdisk_swap,
				 .flags = ctl->persist ? HK_SWAP_PERSIST : 0};

	/* A dry run's JSON document has no place for swap's shell lines. */
	if (ctl->dry_run && ctl->json)
		return 0;
	return hk_run_set_swap(ctl->run, &sw);
}

int ha_swap_step(struct hugeadm_ctl *ctl, const struct hk_run_step *st)
{
	const char *path = hk_swap_path(st->swap);
	int ram = hk_swap_ramdisks(st->swap);

	/* As with libhugetlbfs, swap that cannot be set up only warns (logged): the resize goes on. */
	if (st->kind == HK_RUN_STEP_SWAP && (st->error == -ENOMEM || st->error == -EINVAL)) {
		ha_msg(ctl, HA_ERROR, "cannot add swap: %s", strerror(-st->error));
		return -1;
	}
	if (!ctl->dry_run)
		return 0;
	if (st->kind == HK_RUN_STEP_SWAP) {
		if (path) {
			printf("dd bs=1024 count=%" PRIu64 " if=/dev/zero of=%s\n",
			       (uint64_t)ctl->temp_swap * st->item->page_size / 1024, path);
			printf("mkswap %s\nswapon %s\n", path, path);
		}
		for (int i = 0; i < ram; i++)
			printf("mkswap /dev/ram%d\nswapon /dev/ram%d\n", i, i);
		return 0;
	}
	if (!ctl->persist && path)
		printf("swapoff %s\nrm -f %s\n", path, path);
	for (int i = 0; !ctl->persist && i < ram; i++)
		printf("swapoff /dev/ram%d\n", i);
	return 0;
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
