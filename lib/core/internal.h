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
int hkl_sysctl_of_key(const char *key);
/* A cgroup's name below the controller's root: no '.', '..' or empty part, no leading '/'. */
bool hkl_cgroup_name_ok(const char *s);
/*
 * demote = yes's item: the pool's (or node's) pages above minimum demoted
 * ("pool 2M demote", value the minimum; -ENOENT where the kernel has no
 * demote file there): hk_plan_add's index, or -errno.
 */
int hkl_plan_add_demote_down(struct hk_ctx *ctx, struct hk_plan *plan, uint64_t page_size, int node,
			     uint64_t minimum, const char *why);

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
 * One change of a pool in the pool planner's own form (poolplan.c): what
 * the options' hk_pool_change and a configuration's [pool] section both
 * become, planned by one walk over the pools as the plan leaves them.
 *
 * The Minimum: kept (HKL_MIN_KEEP: lowered only to a Maximum set below
 * it), the pool's moved or set (HKL_MIN_POOL), or listed nodes' persistent
 * pages (HKL_MIN_NODES, in the order listed). The Maximum: kept unless the
 * Minimum passes it (HKL_MAX_KEEP, the options' rule), moved with the
 * Minimum, the overcommit left as it is (HKL_MAX_FOLLOW, a [pool] without
 * maximum), or moved or set (HKL_MAX_SET). demote: shrink each part by
 * demoting what it has above its Minimum into pages of demote_to first
 * (demote = yes): they join that pool, which a later intent sees.
 *
 * declare (a configuration): an item for each limit said, whether or not
 * it changes the pool, for --check to compare. Otherwise (the options) the
 * writes that move the pool, and always the Minimum of a whole pool (2.23
 * wrote it). Either way one order: the overcommit first when the new
 * Minimum with today's overcommit would leave the pool below the Maximum it
 * keeps (a change of the Minimum) or is given (of the Maximum alone); then
 * the demotes, the Minimum, and the overcommit after.
 */
struct hkl_pool_node_want {
	int node;
	char sign; /* 0: set to pages; '+', '-': moved by pages */
	uint64_t pages;
};
enum hkl_pool_min {
	HKL_MIN_KEEP,
	HKL_MIN_POOL,
	HKL_MIN_NODES
};
enum hkl_pool_max {
	HKL_MAX_KEEP,
	HKL_MAX_FOLLOW,
	HKL_MAX_SET
};
struct hkl_pool_intent {
	uint64_t page_size;
	enum hkl_pool_min min;
	char min_sign;
	uint64_t min_pages;
	const struct hkl_pool_node_want *nodes; /* HKL_MIN_NODES */
	size_t n_nodes;
	enum hkl_pool_max max;
	char max_sign;
	uint64_t max_pages;
	bool declare, demote;
	uint64_t demote_to;
	unsigned
		flags; /* HK_POOL_SET_MEMPOLICY: the whole pool's Minimum through the mempolicy file */
};
/*
 * One planned write: a node (or HK_NODE_ALL), the field (HK_POOL_MINIMUM,
 * HK_POOL_OVERCOMMIT; HK_POOL_DEMOTE: the
 * Minimum to demote down to, told for every part, before: what the part
 * has, so that nothing is above it when before <= number), the value, and
 * the value the pool had before it as planned. 0, or -errno to stop; 1 for
 * a demote the caller does not plan (its pages are not counted in).
 */
typedef int (*hkl_pool_write_fn)(void *data, int node, enum hk_pool_field field, uint64_t number,
				 uint64_t before, unsigned flags);
/* What the intent leaves (Minimum, Maximum) and whether its overcommit goes first: 0 or -ENOENT (no pool). */
int hkl_pool_plan_preview(struct hk_pool_plan *pools, const struct hkl_pool_intent *in,
			  uint64_t *ret_min, uint64_t *ret_max, bool *ret_oc_first);
/* Plan the intent: its writes told to fn in their order, the held pools moved. 0 or -errno. */
int hkl_pool_plan_intent(struct hk_pool_plan *pools, const struct hkl_pool_intent *in,
			 hkl_pool_write_fn fn, void *data);
/* Whether the held pool of size (loaded) has node: the nodes the machine lists online. */
bool hkl_pool_plan_has_node(const struct hk_pool_plan *pools, uint64_t size, int node);

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
	char *file; /* a configuration's setting: where it is (NULL: an option's) */
	unsigned line;
};
/*
 * Where a configuration's setting is, file:line: of item index (when the
 * plan has it) and of the plan's last recommended-shmmax mark (for the item
 * a run plans again). 0 or -ENOMEM.
 */
int hkl_plan_place(struct hk_plan *plan, size_t index, const char *file, unsigned line);
/*
 * A caller's plan item as this library's (hk_plan_item.size): *item left
 * when it is of this size, else pointed at buf, a copy of this size (an
 * older caller's: the rest 0). 0, -EINVAL (size too small) or -E2BIG (a
 * newer caller's fields set).
 */
int hkl_item_in(const struct hk_plan_item **item, struct hk_plan_item *buf);
/* The plan keeps a copy: 0 or -ENOMEM. */
int hkl_plan_keep_shmmax(struct hk_plan *plan, const char *why, const struct hk_shmmax_plan *sp);
/* The k-th kept, in the order they were planned, or NULL. */
const struct hkl_shmmax_mark *hkl_plan_shmmax(const struct hk_plan *plan, size_t k);
/* The base of mount item index (hk_plan_add_mount's request), or NULL. */
const char *hkl_plan_mount_base(const struct hk_plan *plan, size_t index);
/* An HK_PLAN_UNMOUNT item (unmount.c): done when its mount is gone (1), else 0 and its options. */
int hkl_unmount_check(struct hk_ctx *ctx, const struct hk_plan_item *it, char **ret);
/*
 * Take the mount at its path down (0 when none is there); remove the file.
 * Both on the running system only, never in a dry run (hk_plan_item_apply).
 */
int hkl_unmount_apply(struct hk_ctx *ctx, const struct hk_plan_item *it);
/* An HK_PLAN_REMOVE item (sharedtext.c): done when its file is gone (1), else 0 and its pages. */
int hkl_text_check(struct hk_ctx *ctx, const struct hk_plan_item *it, char **ret);
int hkl_text_apply(struct hk_ctx *ctx, const struct hk_plan_item *it);
/* A directory of shared text (sharedtext.c): its uid, written as the runtime writes it. */
enum hkl_text_dir {
	HKL_TEXT_NOT = 0, /* not one */
	HKL_TEXT_ELFLINK, /* elflink-uid-<uid>: 2.23's layout, the runtime's */
	HKL_TEXT_OLD,	  /* hugekit-text-<uid>: the runtime's before */
};
enum hkl_text_dir hkl_text_dir_uid(const char *name, uid_t *ret);
/* What a file's name in such a directory says (all NULL, false: nothing). */
struct hkl_text_name {
	char *exe; /* <exe>.<key>.<offset hex>: the runtime's */
	char *key;
	uint64_t offset;
	char *libhugetlbfs_exe; /* <exe>_<32|64>_<n>[.tmp], in elflink-uid-<uid> only */
	bool temporary;		/* .hugekit-tmp-*, or 2.23's .tmp */
};
/* 0, or -ENOMEM; free with hkl_text_name_free(). */
int hkl_text_name_parse(const char *name, enum hkl_text_dir dir, struct hkl_text_name *ret);
void hkl_text_name_free(struct hkl_text_name *tn);
