/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include <hugekit/hugekit.h>

#include "util.h"

/* libhugetlbfs's verbosity levels: messages at or below the level are shown. */
enum {
	HA_ERROR = 1,
	HA_WARNING = 2,
	HA_INFO = 3,
	HA_DEBUG = 4,
};

struct hugeadm_ctl {
	struct hk_ctx *ctx;
	int verbose; /* 0..99, default 2 */
	bool json;
	bool per_node;
	/* Reports, run in libhugetlbfs's fixed order whatever the command line order. */
	bool list_mounts;
	bool pool_list;
	bool page_sizes;
	bool page_sizes_all;
	bool explain;
};

/* "hugeadm:ERROR: ..." and friends on stderr, when the level is enabled. */
void ha_msg(const struct hugeadm_ctl *ctl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* report.c: each returns an exit code. */
int ha_report_text(struct hugeadm_ctl *ctl);
int ha_report_json(struct hugeadm_ctl *ctl);
