// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * plan-race unmount PATH CMD: plan taking down the mount the table shows at
 * PATH (hk_plan_add_unmount); plan-race text UID CMD: plan removing UID's
 * files of shared text (an HK_SETTING_SHARED_TEXT entry of an intent). Then
 * run the shell command CMD, which changes what was planned for, and run the
 * plan; print each step of those items ("ALREADY", "DONE", "SHORT EXDEV",
 * "FAILED errno"; for text, the file after it) on stdout. The live tests
 * replay the instant between hugeadm's plan and its run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <hugekit/hugekit.h>

static int step(void *data, const struct hk_run_step *st)
{
	const char *name = NULL;

	(void)data;
	if (!st->item || (st->item->kind != HK_PLAN_UNMOUNT && st->item->kind != HK_PLAN_REMOVE))
		return 0;
	switch (st->kind) {
	case HK_RUN_STEP_ALREADY:
		name = "ALREADY";
		break;
	case HK_RUN_STEP_DONE:
		name = "DONE";
		break;
	case HK_RUN_STEP_SHORT:
		printf("SHORT %s", st->error == -EXDEV ? "EXDEV" : strerror(-st->error));
		break;
	case HK_RUN_STEP_FAILED:
		printf("FAILED %s", strerror(-st->error));
		break;
	default:
		return 0;
	}
	if (name)
		fputs(name, stdout);
	if (st->item->kind == HK_PLAN_REMOVE)
		printf(" %s", st->item->path);
	putchar('\n');
	return 0;
}

static int planned(void *data, const struct hk_intent_verdict *v)
{
	(void)data;
	return v->problem == HK_INTENT_PLANNED ? 0 : -1;
}

/* UID's files of shared text, planned through an intent: 0, or -1. */
static int plan_text(struct hk_ctx *ctx, struct hk_plan *plan, const char *uid)
{
	struct hk_intent_entry e = {.size = sizeof(e),
				    .setting = HK_SETTING_SHARED_TEXT,
				    .flags = HK_INTENT_ONE_UID,
				    .uid = (uint32_t)strtoul(uid, NULL, 10),
				    .why = "test"};
	struct hk_intent *in = NULL;
	struct hk_pool_plan *pools = NULL;
	int rc = hk_intent_new(ctx, &in);

	if (rc == 0)
		rc = hk_pool_plan_new(ctx, &pools);
	if (rc == 0)
		rc = hk_intent_add(in, &e);
	if (rc >= 0)
		rc = hk_plan_from_intent(in, plan, pools, planned, NULL);
	hk_pool_plan_unref(pools);
	hk_intent_unref(in);
	return rc == 0 ? 0 : -1;
}

static int plan_unmount(struct hk_ctx *ctx, struct hk_plan *plan, const char *path)
{
	struct hk_mounts *ms = NULL;
	size_t i = 0;
	int rc;

	if (hk_mounts_read(ctx, &ms) < 0)
		return -1;
	while (i < hk_mounts_count(ms) && strcmp(hk_mount_target(ms, i), path) != 0)
		i++;
	rc = i < hk_mounts_count(ms) ? hk_plan_add_unmount(plan, ms, i, "test") : -ENOENT;
	hk_mounts_unref(ms);
	return rc < 0 ? -1 : 0;
}

/* The library's messages from warnings up, on stderr: what the run tells is seen. */
static void log_msg(void *data, int priority, const char *msg)
{
	(void)data;
	fprintf(stderr, "plan-race: %d: %s\n", priority, msg);
}

int main(int argc, char **argv)
{
	struct hk_ctx *ctx = NULL;
	struct hk_plan *plan = NULL;
	struct hk_run *run = NULL;
	int rc;

	if (argc != 4 || (strcmp(argv[1], "unmount") != 0 && strcmp(argv[1], "text") != 0)) {
		fprintf(stderr, "usage: plan-race unmount PATH CMD | text UID CMD\n");
		return 2;
	}
	if (hk_new(NULL, &ctx) < 0 || hk_plan_new(&plan) < 0)
		return 1;
	hk_set_log_fn(ctx, log_msg, NULL);
	hk_set_log_priority(ctx, LOG_WARNING);
	rc = strcmp(argv[1], "text") == 0 ? plan_text(ctx, plan, argv[2])
					  : plan_unmount(ctx, plan, argv[2]);
	if (rc < 0) {
		fprintf(stderr, "plan-race: nothing at %s to plan for\n", argv[2]);
		return 1;
	}
	if (system(argv[3]) != 0)
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
