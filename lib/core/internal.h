/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to libhugekit: never installed. */
#pragma once

#include <syslog.h>

#include <hugekit/hugekit.h>

#include "pagesizes.h"
#include "parse.h"
#include "path.h"

#define HK_EXPORT __attribute__((visibility("default")))

struct hk_ctx {
	int refcount;
	struct hkc_path path;
	hk_log_fn log_fn;
	void *log_data;
	int log_priority;
	/* Fixed while the kernel runs: read once, 0 until then. */
	uint64_t default_size;
	uint64_t base_size;
};

/* The default huge page size and the base page size, read once per context. */
int hkl_ctx_default_size(struct hk_ctx *ctx, uint64_t *ret);
int hkl_ctx_base_size(struct hk_ctx *ctx, uint64_t *ret);

void hkl_log(const struct hk_ctx *ctx, int priority, const char *fmt, ...) HK_PRINTF(3, 4);

#define hkl_dbg(ctx, ...) hkl_log(ctx, LOG_DEBUG, __VA_ARGS__)
#define hkl_info(ctx, ...) hkl_log(ctx, LOG_INFO, __VA_ARGS__)
#define hkl_warn(ctx, ...) hkl_log(ctx, LOG_WARNING, __VA_ARGS__)
#define hkl_err(ctx, ...) hkl_log(ctx, LOG_ERR, __VA_ARGS__)

/* Largest buddy allocation: pages above base << this are "gigantic" (MAX_PAGE_ORDER). */
#define HK_MAX_PAGE_ORDER 10

/*
 * The configuration's problems in a file whose text is not shown (a program
 * privileged for its caller, on a file the caller cannot read): this, with
 * the file and line, instead of a message that would quote the file.
 */
#define HKC_HIDDEN_PROBLEM                                                                         \
	"a problem on this line (not shown: the user who runs this program cannot read the file)"
bool hkl_config_hidden(const struct hk_config *cfg, const char *file);
/* The line of the [section] header an entry of cfg is under (its own line if unknown). */
unsigned hkl_config_section_line(const struct hk_config *cfg, const struct hk_config_entry *e);

/* A [pool] count: a page count, or a size (K, M, G, T) that is whole pages of size. */
int hkl_pool_pages(const char *s, uint64_t size, uint64_t *ret);

/* A part of a [pool] minimum: its pages, on a node (HK_NODE_ALL: of the pool). */
struct hkl_pool_part {
	int node;
	uint64_t pages;
};

/*
 * A [pool] minimum or maximum: "N" or (allow_nodes) "N@NODE, M@NODE, ...",
 * nodes once each, every part with a node or none. The parts into parts
 * (room for max), their number in *ret_n: 0, or -EINVAL with why, the
 * problem after "[SECTION] " (the configuration's check and the planner
 * read a value the same way).
 */
int hkl_pool_parts(const char *value, uint64_t size, bool allow_nodes, struct hkl_pool_part *parts,
		   size_t max, size_t *ret_n, char *why, size_t why_sz);

/*
 * A pool change as hk_plan_add_pool_change planned it, kept by its plan:
 * the change (its nodes and why copied), its items [first, first + n), the
 * value each item's file had before it as planned, and the pool around it.
 * hk_plan_pool_change tells it; hk_plan_pool_change_again plans it again
 * where the kernel's pool moved since.
 */
struct hkl_pool_group {
	size_t first, n;
	struct hk_pool_change change;
	char *why;
	uint64_t *before;
	uint64_t min0, oc0;  /* the whole pool before */
	uint64_t min1, max1; /* and after */
};
/* The plan keeps g (taken, also on failure): 0 or -ENOMEM. */
int hkl_plan_keep_group(struct hk_plan *plan, struct hkl_pool_group *g);
/* The kept change whose items hold index, or NULL. */
const struct hkl_pool_group *hkl_plan_group(const struct hk_plan *plan, size_t index);
void hkl_pool_group_fini(struct hkl_pool_group *g);

/*
 * A recommended shmmax as hk_plan_add_recommended_shmmax planned it, kept by
 * its plan, with or without an item: at is its item's index, or where it
 * would be. hk_run_plan runs it as a unit of its own, from the pools as the
 * writes before it left them.
 */
struct hkl_shmmax_mark {
	size_t at;
	char *why;
	struct hk_shmmax_plan sp;
};
/* The plan keeps a copy: 0 or -ENOMEM. */
int hkl_plan_keep_shmmax(struct hk_plan *plan, const char *why, const struct hk_shmmax_plan *sp);
/* The k-th kept, in the order they were planned, or NULL. */
const struct hkl_shmmax_mark *hkl_plan_shmmax(const struct hk_plan *plan, size_t k);
/* The base of mount item index (hk_plan_add_mount's request), or NULL. */
const char *hkl_plan_mount_base(const struct hk_plan *plan, size_t index);
