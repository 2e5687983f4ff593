// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unmount-race PATH CMD: plan taking down the mount the table shows at PATH
 * (hk_plan_add_unmount), run the shell command CMD (which puts another mount
 * there in its place), then run the plan; print each step of the unmount
 * ("ALREADY", "DONE", "SHORT EXDEV", "FAILED errno") on stdout. The live
 * test replays the instant between hugeadm's plan and its run: the mount
 * planned for is gone, and the one in its place must be left mounted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hugekit/hugekit.h>

static int step(void *data, const struct hk_run_step *st)
{
	(void)data;
	if (st->item && st->item->kind != HK_PLAN_UNMOUNT)
		return 0;
	switch (st->kind) {
	case HK_RUN_STEP_ALREADY:
		puts("ALREADY");
		break;
	case HK_RUN_STEP_DONE:
		puts("DONE");
		break;
	case HK_RUN_STEP_SHORT:
		printf("SHORT %s\n", st->error == -EXDEV ? "EXDEV" : strerror(-st->error));
		break;
	case HK_RUN_STEP_FAILED:
		printf("FAILED %s\n", strerror(-st->error));
		break;
	default:
		break;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct hk_ctx *ctx = NULL;
	struct hk_mounts *ms = NULL;
	struct hk_plan *plan = NULL;
	struct hk_run *run = NULL;
	size_t i = 0;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: unmount-race PATH CMD\n");
		return 2;
	}
	if (hk_new(NULL, &ctx) < 0 || hk_mounts_read(ctx, &ms) < 0 || hk_plan_new(&plan) < 0)
		return 1;
	while (i < hk_mounts_count(ms) && strcmp(hk_mount_target(ms, i), argv[1]) != 0)
		i++;
	if (i == hk_mounts_count(ms) || hk_plan_add_unmount(plan, ms, i, "test") < 0) {
		fprintf(stderr, "unmount-race: no mount at %s to plan for\n", argv[1]);
		return 1;
	}
	hk_mounts_unref(ms);
	if (system(argv[2]) != 0)
		return 1;
	rc = hk_run_new(ctx, 0, &run);
	if (rc == 0)
		rc = hk_run_plan(run, plan, step, NULL);
	printf("rc=%d\n", rc);
	hk_run_unref(run);
	hk_plan_unref(plan);
	hk_unref(ctx);
	return 0;
}
