// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The executor's journal: every item written through a run keeps what was
 * there before it was written (on the running system the value in the
 * item's terms, in a --sysroot tree the file's bytes), so that a run that
 * fails midway, or a --strict run whose pool came up short, puts back every
 * file it wrote, newest first. One put-back for hugeadm's options and for
 * --apply of a configuration.
 *
 * What cannot be put back is said, not pretended: demoted pages stay split.
 * A directory the run made is removed again only when empty; a mount the
 * caller made (hk_run_record) is unmounted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "poolmath.h"

/* HK_RUN_HARD gives up after this long, or after this many rounds without progress. */
#define HARD_TIMEOUT_S 30
#define HARD_STALLS 3

struct undo {
	struct hk_plan_item it; /* a copy: its strings owned by the run's plan */
	char *before;		/* NULL: nothing was there (a directory, a mount, a controller) */
	bool raw;		/* before is the file's bytes (a tree), not the item's value */
	bool refused;		/* its write failed: written back only if it reads otherwise */
	int fd;			/* a mount's: the mount point under it (hk_mount_make), or -1 */
};

struct hk_run {
	struct hk_ctx *ctx;
	unsigned flags;
	struct hk_plan *copies; /* the items, copied: undo[i].it is copies' item i */
	struct undo *undo;
	size_t n;
	struct hk_run_swap swap; /* while a pool grows: none when neither is set */
};

HK_EXPORT int hk_run_new(struct hk_ctx *ctx, unsigned flags, struct hk_run **ret_run)
{
	struct hk_run *run;
	int rc;

	if (!ctx || !ret_run ||
	    (flags & ~(unsigned)(HK_RUN_HARD | HK_RUN_ALWAYS | HK_RUN_MEMPOLICY |
				 HK_RUN_KEEP_MAXIMUM | HK_RUN_STRICT | HK_RUN_PUT_BACK)))
		return -EINVAL;
	run = calloc(1, sizeof(*run));
	if (!run)
		return -ENOMEM;
	rc = hk_plan_new(&run->copies);
	if (rc < 0) {
		free(run);
		return rc;
	}
	run->ctx = hk_ref(ctx);
	run->flags = flags;
	*ret_run = run;
	return 0;
}

HK_EXPORT int hk_run_set_swap(struct hk_run *run, const struct hk_run_swap *swap)
{
	if (!run || (swap && swap->size != sizeof(*swap)) ||
	    (swap && (swap->flags & ~HK_SWAP_PERSIST)))
		return -EINVAL;
	run->swap = swap ? *swap : (struct hk_run_swap){.size = sizeof(run->swap)};
	return 0;
}

HK_EXPORT void hk_run_unref(struct hk_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->n; i++) {
		free(run->undo[i].before);
		if (run->undo[i].fd >= 0)
			close(run->undo[i].fd);
	}
	free(run->undo);
	hk_plan_unref(run->copies);
	hk_unref(run->ctx);
	free(run);
}

HK_EXPORT size_t hk_run_count(const struct hk_run *run)
{
	return run ? run->n : 0;
}

static const char *rel(const char *path)
{
	return path[0] == '/' ? path + 1 : path;
}

/* Whether the run already holds what was there before the item's file was first written. */
static bool journaled(const struct hk_run *run, const struct hk_plan_item *it)
{
	for (size_t i = 0; i < run->n; i++)
		if (run->undo[i].it.kind == it->kind && strcmp(run->undo[i].it.path, it->path) == 0)
			return true;
	return false;
}

/* Keep item with before (taken): 0, or -ENOMEM (before freed). */
static int keep(struct hk_run *run, const struct hk_plan_item *item, char *before, bool raw)
{
	const struct hk_plan_item *items;
	struct undo *nu = realloc(run->undo, (run->n + 1) * sizeof(*nu));
	int rc;

	if (!nu) {
		free(before);
		return -ENOMEM;
	}
	run->undo = nu;
	rc = hk_plan_add(run->copies, item);
	if (rc < 0) {
		free(before);
		return rc;
	}
	/* The copies' array moves on each add: every entry points into it again. */
	hk_plan_items(run->copies, &items);
	for (size_t i = 0; i < run->n; i++)
		run->undo[i].it = items[i];
	run->undo[run->n] = (struct undo){.it = items[rc], .before = before, .raw = raw, .fd = -1};
	run->n++;
	return 0;
}

/*
 * What is there before the item is written: 1 and *ret (NULL: nothing there),
 * 0 when it is not to be journaled (nothing can put it back), or -errno.
 */
static int before_of(struct hk_run *run, const struct hk_plan_item *it, char **ret, bool *ret_raw)
{
	int rc;

	*ret = NULL;
	*ret_raw = false;
	if (it->kind == HK_PLAN_WRITE && it->page_size && it->field == HK_POOL_DEMOTE)
		return 0;
	if (!hk_is_live(run->ctx) && it->kind != HK_PLAN_MKDIR && it->kind != HK_PLAN_MOUNT) {
		/* A tree's plain file: its bytes, so that it is put back as it was. */
		*ret_raw = true;
		rc = hkc_path_read_allf(&run->ctx->path, ret, NULL, "%s", rel(it->path));
		return rc == -ENOENT ? 0 : rc < 0 ? rc : 1;
	}
	rc = hk_plan_item_check(run->ctx, it, ret);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (it->kind == HK_PLAN_WRITE)
		return *ret ? 1 : 0; /* nothing to write back where nothing was read */
	/* A directory, a controller or a mount that is there already is not the run's. */
	free(*ret);
	*ret = NULL;
	return rc == 1 ? 0 : 1;
}

/*
 * A whole pool's minimum written through nr_hugepages_mempolicy moves the
 * policy's nodes only: what was there is kept per node, so that the
 * put-back gives each node its own pages back (the pool's file would take
 * them from any node). 1 when kept so, 0 when the pool has no node files
 * (kept as any file), or -errno.
 */
static int keep_nodes(struct hk_run *run, const struct hk_plan_item *it)
{
	const struct hk_plan_item *items;
	struct hk_pool *pool = NULL;
	struct hk_plan *tmp = NULL;
	int rc = hk_pool_read(run->ctx, it->page_size, &pool);

	if (rc == 0)
		rc = hk_plan_new(&tmp);
	for (size_t k = 0; rc >= 0 && k < hk_pool_node_count(pool); k++) {
		char *before = NULL;
		bool raw = false;

		rc = hk_plan_add_pool(run->ctx, tmp, it->page_size, hk_pool_node_id(pool, k),
				      HK_POOL_MINIMUM, 0, 0, it->why);
		if (rc < 0)
			break;
		hk_plan_items(tmp, &items);
		if (journaled(run, &items[rc]))
			continue;
		rc = before_of(run, &items[rc], &before, &raw);
		if (rc > 0)
			rc = keep(run, &items[hk_plan_items(tmp, &items) - 1], before, raw);
	}
	if (rc >= 0)
		rc = hk_pool_node_count(pool) > 0;
	hk_plan_unref(tmp);
	hk_pool_unref(pool);
	return rc;
}

HK_EXPORT int hk_run_record(struct hk_run *run, const struct hk_plan_item *item)
{
	struct hk_plan_item in;
	int rc;

	if (!run || !item)
		return -EINVAL;
	rc = hkl_item_in(&item, &in);
	if (rc < 0)
		return rc;
	if (!item->path)
		return -EINVAL;
	if (hk_is_dry_run(run->ctx) || journaled(run, item))
		return 0;
	return keep(run, item, NULL, false);
}

static long long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static uint64_t reached_pages(const char *s)
{
	uint64_t v = 0;

	return s && hkc_parse_u64_strict(s, &v) == 0 ? v : 0;
}

/*
 * HK_RUN_HARD, a pool's minimum short of its pages: compact memory, wait a
 * second and write again, until it has them, HARD_STALLS rounds in a row
 * have brought none, or HARD_TIMEOUT_S have passed. rc and *ret_reached as
 * hk_plan_item_apply's.
 */
static int retry_hard(struct hk_run *run, const struct hk_plan_item *it, char **ret_reached)
{
	long long deadline = now_s() + HARD_TIMEOUT_S;
	uint64_t last = reached_pages(*ret_reached);
	int rc = -EAGAIN, rounds = 0, stalls = 0, compacted;

	while (rc == -EAGAIN) {
		if (stalls >= HARD_STALLS || now_s() >= deadline) {
			hkl_info(run->ctx,
				 "%s: giving up after %d rounds (%s), at %" PRIu64 " of %" PRIu64
				 " pages",
				 it->item, rounds,
				 stalls >= HARD_STALLS ? "the last ones without progress"
						       : "the time allowed",
				 last, it->number);
			break;
		}
		/* A whole pool: libhugetlbfs 2.23's line for its --hard; a node's: which and where. */
		if (it->node == HK_NODE_ALL)
			hkl_info(run->ctx,
				 "Retrying allocation HUGEPAGES_TOTAL to %" PRIu64
				 " current %" PRIu64,
				 it->number, last);
		else
			hkl_info(run->ctx,
				 "%s: %" PRIu64 " of %" PRIu64
				 " pages; compacting memory and trying again",
				 it->item, last, it->number);
		compacted = hk_compact_memory(run->ctx, HK_NODE_ALL);
		/* No compaction file (a kernel without it): nothing to say. */
		if (compacted < 0 && compacted != -ENOENT)
			hkl_warn(run->ctx, "cannot compact memory: %s", strerror(-compacted));
		if (it->node != HK_NODE_ALL)
			hk_compact_memory(run->ctx, it->node);
		sleep(1);
		free(*ret_reached);
		rc = hk_plan_item_apply(run->ctx, it, ret_reached);
		rounds++;
		stalls = reached_pages(*ret_reached) > last ? 0 : stalls + 1;
		last = reached_pages(*ret_reached);
	}
	return rc;
}

/*
 * A mount item: made by hk_mount_make (on an empty mount point unless the
 * item's flags say otherwise; base: the plan's, or NULL), and kept for the
 * put-back after it: the mount point's directory when this run made it (also
 * when the mount then failed; not with HK_MOUNT_KEEP), then the mount, by
 * the descriptor of the mount point under it, which the put-back takes down
 * first: never by a path that a user who owns a level of it could redirect.
 */
static int run_mount(struct hk_run *run, const struct hk_plan_item *it, const char *base)
{
	struct hk_mount_request rq = {.size = sizeof(rq),
				      .path = it->path,
				      .base = base,
				      .uid = it->uid,
				      .gid = it->gid,
				      .mode = it->mode,
				      .options = it->value,
				      .flags = it->flags ? it->flags & ~HK_MOUNT_KEEP
							 : HK_MOUNT_EMPTY};
	struct hk_plan_item dir = *it;
	struct stat st;
	bool made = lstat(it->path, &st) < 0 && errno == ENOENT;
	int fd = -1, rc = hk_mount_make(run->ctx, &rq, &fd), kept = 0;

	dir.kind = HK_PLAN_MKDIR;
	if (made && !(it->flags & HK_MOUNT_KEEP) && lstat(it->path, &st) == 0 &&
	    !journaled(run, &dir))
		kept = keep(run, &dir, NULL, false);
	if (rc < 0)
		return rc;
	if (kept == 0)
		kept = keep(run, it, NULL, false);
	if (kept < 0) {
		/* Nothing could put it back: not left behind. */
		hk_umount_fd(run->ctx, fd, NULL, MNT_DETACH);
		close(fd);
		return kept;
	}
	run->undo[run->n - 1].fd = fd;
	return 0;
}

/* An unmount or a removed file: done once, never put back, always compared first. */
static bool gone_for_good(const struct hk_plan_item *it)
{
	return it->kind == HK_PLAN_UNMOUNT || it->kind == HK_PLAN_REMOVE;
}

/* hk_run_apply, a mount item made under base (its plan's, or NULL). */
static int run_apply(struct hk_run *run, const struct hk_plan_item *item, const char *base,
		     char **ret_reached)
{
	char *before = NULL;
	bool raw = false;
	size_t kept;
	int rc;

	if (ret_reached)
		*ret_reached = NULL;
	if (!run || !item || !item->path)
		return -EINVAL;
	if (item->kind == HK_PLAN_MOUNT)
		return hk_is_dry_run(run->ctx) ? -EOPNOTSUPP : run_mount(run, item, base);
	/* Taken down or removed for good: nothing kept to put back. */
	if (gone_for_good(item))
		return hk_plan_item_apply(run->ctx, item, ret_reached);
	kept = run->n;
	/* Kept before the write: a write that fails may still have changed the file. */
	rc = 0;
	if (!hk_is_dry_run(run->ctx) && hk_is_live(run->ctx) && item->kind == HK_PLAN_WRITE &&
	    item->page_size && item->field == HK_POOL_MINIMUM && item->node == HK_NODE_ALL &&
	    (item->flags & HK_POOL_SET_MEMPOLICY))
		rc = keep_nodes(run, item);
	if (rc < 0)
		return rc;
	if (rc == 0 && !hk_is_dry_run(run->ctx) && !journaled(run, item)) {
		rc = before_of(run, item, &before, &raw);
		if (rc < 0)
			return rc;
		if (rc > 0 && (rc = keep(run, item, before, raw)) < 0)
			return rc;
	}
	rc = hk_plan_item_apply(run->ctx, item, ret_reached);
	if (rc == -EAGAIN && ret_reached && (run->flags & HK_RUN_HARD) &&
	    item->field == HK_POOL_MINIMUM && item->page_size && hk_is_live(run->ctx))
		rc = retry_hard(run, item, ret_reached);
	/* Kept by this call, and refused: the files are as they were, unless they read otherwise. */
	for (size_t i = kept; rc < 0 && rc != -EAGAIN && i < run->n; i++)
		run->undo[i].refused = true;
	return rc;
}

HK_EXPORT int hk_run_apply(struct hk_run *run, const struct hk_plan_item *item, char **ret_reached)
{
	struct hk_plan_item in;
	int rc;

	if (item && (rc = hkl_item_in(&item, &in)) < 0) {
		if (ret_reached)
			*ret_reached = NULL;
		return rc;
	}
	/*
	 * HK_MOUNT_KEEP: never stacked on the mount there. The walk compared it
	 * before its WRITE step already; a caller of this one did not.
	 */
	if (run && item && item->path && item->kind == HK_PLAN_MOUNT &&
	    (item->flags & HK_MOUNT_KEEP) && !hk_is_dry_run(run->ctx)) {
		if (ret_reached)
			*ret_reached = NULL;
		rc = hk_plan_item_check(run->ctx, item, NULL);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
	return run_apply(run, item, NULL, ret_reached);
}

/*
 * One item put back: its old value written and read back, or what it made
 * taken away: 1, 0 when it was as it was already (a write that failed
 * changed nothing), or -errno.
 */
static int put_back_one(struct hk_run *run, const struct undo *u, char **ret_reached)
{
	struct hk_plan_item old = u->it;
	char minus[96];
	uint64_t v = 0;
	int rc;

	if (u->raw) {
		char *now = NULL;
		bool same = hkc_path_read_allf(&run->ctx->path, &now, NULL, "%s",
					       rel(u->it.path)) == 0 &&
			    strcmp(now, u->before) == 0;

		free(now);
		if (same)
			return 0;
		rc = hkc_path_write_stringf(&run->ctx->path, u->before, "%s", rel(u->it.path));
		return rc < 0 ? rc : 1;
	}
	switch (u->it.kind) {
	case HK_PLAN_MKDIR:
		rc = hkc_path_rmdirf(&run->ctx->path, "%s", rel(u->it.path));
		return rc == -ENOENT ? 0 : rc < 0 ? rc : 1;
	case HK_PLAN_MOUNT:
		/* By the descriptor the run kept (a mount hk_run_record was told of: by its path). */
		rc = u->fd >= 0 ? hk_umount_fd(run->ctx, u->fd, NULL, 0)
		     : umount2(u->it.path, UMOUNT_NOFOLLOW) == 0 ? 0
								 : -errno;
		return rc == -EINVAL ? 0 : rc < 0 ? rc : 1; /* EINVAL: not mounted there */
	case HK_PLAN_CONTROLLER:
		snprintf(minus, sizeof(minus), "-%s", u->it.value);
		rc = hkc_path_write_stringf(&run->ctx->path, minus, "%s", rel(u->it.path));
		return rc < 0 ? rc : 1;
	case HK_PLAN_UNMOUNT:
	case HK_PLAN_REMOVE:
		return 0; /* never kept: what is taken down or removed stays so */
	case HK_PLAN_WRITE:
		break;
	}
	old.value = u->before;
	/* Pools: the whole pool's file, not the mempolicy's (which acts on some nodes only). */
	old.flags = 0;
	if (u->it.page_size && hkc_parse_u64_strict(u->before, &v) == 0)
		old.number = v;
	/*
	 * A write the kernel refused changed nothing, unless it reads otherwise
	 * (a close that failed after it); one it took is written back whatever
	 * the file reads now.
	 */
	if (u->refused && hk_plan_item_check(run->ctx, &old, NULL) == 1)
		return 0;
	rc = hk_plan_item_apply(run->ctx, &old, ret_reached);
	return rc < 0 ? rc : 1;
}

HK_EXPORT int hk_run_put_back(struct hk_run *run, size_t *ret_done)
{
	size_t done = 0;
	int first = 0;

	if (ret_done)
		*ret_done = 0;
	if (!run)
		return -EINVAL;
	for (size_t i = run->n; i-- > 0;) {
		const struct undo *u = &run->undo[i];
		char *reached = NULL;
		int rc = put_back_one(run, u, &reached);

		/* Written, and read back otherwise: a pool the kernel did not give back. */
		if (rc == -EAGAIN)
			hkl_err(run->ctx, "%s: put back to %s, but it reads %s (%s)", u->it.item,
				u->before ? u->before : "?", reached ? reached : "nothing",
				u->it.path);
		else if (rc < 0)
			hkl_err(run->ctx, "%s: cannot put back %s (%s): %s", u->it.item,
				u->raw	    ? "the file's contents"
				: u->before ? u->before
					    : "its absence",
				u->it.path, strerror(-rc));
		free(reached);
		if (rc < 0) {
			if (!first)
				first = rc;
			continue;
		}
		if (rc == 0)
			continue;
		if (u->raw || !u->before)
			hkl_info(run->ctx, "%s: put back as it was", u->it.item);
		else
			hkl_info(run->ctx, "%s: put back to %s", u->it.item, u->before);
		done++;
	}
	for (size_t i = 0; i < run->n; i++) {
		free(run->undo[i].before);
		if (run->undo[i].fd >= 0)
			close(run->undo[i].fd);
	}
	run->n = 0;
	if (ret_done)
		*ret_done = done;
	return first;
}

/* hk_run_items: one walk over the items. */
struct walk {
	struct hk_run *run;
	const struct hk_plan_item *items;
	size_t n;
	hk_run_step_fn fn;
	void *data;
	const char **made; /* a dry run's directories, made only in pretence */
	size_t n_made;
	uint64_t *short_sizes; /* pools whose minimum came up short */
	size_t n_short;
	bool any_short;
	bool unit_short; /* HK_RUN_STRICT: the unit had a write come up short where a kernel answers */
	struct hk_run_step unit; /* hk_run_plan: the unit's fields, copied into each step */
	struct hk_swap *swap;	 /* added while a pool grows, until its unit ends */
};

static int tell(const struct walk *w, struct hk_run_step *st, enum hk_run_step_kind kind)
{
	st->kind = kind;
	return w->fn ? w->fn(w->data, st) : 0;
}

static bool under_made(const struct walk *w, const struct hk_plan_item *it)
{
	for (size_t i = 0; i < w->n_made; i++) {
		size_t len = strlen(w->made[i]);

		if (strncmp(it->path, w->made[i], len) == 0 && it->path[len] == '/')
			return true;
	}
	return false;
}

static bool held(const struct walk *w, const struct hk_plan_item *it)
{
	if (it->kind != HK_PLAN_WRITE || !it->page_size || it->field != HK_POOL_OVERCOMMIT)
		return false;
	for (size_t i = 0; i < w->n_short; i++)
		if (w->short_sizes[i] == it->page_size)
			return true;
	return false;
}

/* HK_RUN_MEMPOLICY: a whole pool's minimum written to nr_hugepages_mempolicy. */
static int apply_policy(struct hk_run *run, const struct hk_plan_item *it, const char *base,
			char **ret_reached)
{
	struct hk_plan_item t = *it;
	char *path = NULL;
	int rc;

	if (!(run->flags & HK_RUN_MEMPOLICY) || it->kind != HK_PLAN_WRITE || !it->page_size ||
	    it->field != HK_POOL_MINIMUM || it->node != HK_NODE_ALL)
		return run_apply(run, it, base, ret_reached);
	rc = hk_pool_file(run->ctx, it->page_size, HK_NODE_ALL, HK_POOL_NR, HK_POOL_SET_MEMPOLICY,
			  &path);
	if (rc < 0)
		return rc;
	t.path = path;
	t.flags |= HK_POOL_SET_MEMPOLICY;
	rc = run_apply(run, &t, NULL, ret_reached);
	free(path);
	return rc;
}

/*
 * A dry run's step: a directory counts as made from here on, a mount is only
 * told, an item under a directory made in pretence goes to the dry-run hook
 * as it is (its file's directory is not there to check).
 */
static int pretend(struct walk *w, const struct hk_plan_item *it)
{
	struct hkc_path *p = &w->run->ctx->path;
	char value[256];

	if (it->kind == HK_PLAN_MKDIR) {
		w->made[w->n_made++] = it->path;
		return 0;
	}
	if (it->kind == HK_PLAN_MOUNT || gone_for_good(it))
		return 0;
	if (!under_made(w, it))
		return 1;
	snprintf(value, sizeof(value), "%s%s", it->kind == HK_PLAN_CONTROLLER ? "+" : "",
		 it->value);
	if (p->dry_run)
		p->dry_run(p->dry_run_data, it->path, value);
	return 0;
}

static int write_step(struct walk *w, struct hk_run_step *st);

/*
 * HK_RUN_KEEP_MAXIMUM, a whole pool's minimum short: the maximum the items
 * plan (the minimum asked plus the last overcommit planned for the pool, or
 * the pool's own) kept by the overcommit for the minimum it reached.
 */
static int keep_maximum(struct walk *w, const struct hk_run_step *st)
{
	const struct hk_plan_item *it = st->item, *made;
	struct hk_run_step ks = w->unit;
	struct hk_pool *pool = NULL;
	struct hk_plan *one = NULL;
	uint64_t oc = 0, target;
	bool planned = false;
	int rc = hk_pool_read(w->run->ctx, it->page_size, &pool);

	ks.index = st->index;
	for (size_t i = 0; i < w->n; i++)
		if (w->items[i].kind == HK_PLAN_WRITE && w->items[i].page_size == it->page_size &&
		    w->items[i].field == HK_POOL_OVERCOMMIT) {
			oc = w->items[i].number;
			planned = true;
		}
	if (rc < 0)
		hkl_err(w->run->ctx, "%s: cannot read the pool back to keep its maximum: %s",
			it->item, strerror(-rc));
	if (rc < 0 || hk_pool_is_gigantic(pool)) {
		hk_pool_unref(pool);
		return rc;
	}
	target = hkp_pool_max(it->number, planned ? oc : hk_pool_get(pool, HK_POOL_OVERCOMMIT));
	if (hk_pool_get(pool, HK_POOL_MAXIMUM) != target) {
		rc = hk_plan_new(&one);
		if (rc == 0)
			rc = hk_plan_add_pool(
				w->run->ctx, one, it->page_size, HK_NODE_ALL, HK_POOL_OVERCOMMIT,
				hkp_pool_oc(hk_pool_get(pool, HK_POOL_MINIMUM), target), 0,
				it->why);
		if (rc < 0) {
			/* Not a step of its own: said here, the run stops with it. */
			hkl_err(w->run->ctx,
				"%s: cannot plan the overcommit that keeps the maximum: %s",
				it->item, strerror(-rc));
		} else {
			hk_plan_items(one, &made);
			ks.item = &made[rc];
			rc = tell(w, &ks, HK_RUN_STEP_WRITE);
			if (rc == 0)
				rc = write_step(w, &ks);
		}
	}
	hk_plan_unref(one);
	hk_pool_unref(pool);
	return rc;
}

/* A pool whose minimum came up short: its later overcommits held back. 0 or -ENOMEM. */
static int short_size(struct walk *w, uint64_t size)
{
	uint64_t *ns = realloc(w->short_sizes, (w->n_short + 1) * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	w->short_sizes = ns;
	w->short_sizes[w->n_short++] = size;
	return 0;
}

/*
 * Written: DONE, or SHORT. A pool's minimum short holds back its later
 * overcommit (not with HK_RUN_ALWAYS alone); HK_RUN_KEEP_MAXIMUM keeps its
 * maximum first.
 */
static int written(struct walk *w, struct hk_run_step *st, int rc)
{
	const struct hk_plan_item *it = st->item;
	unsigned flags = w->run->flags;

	if (rc != -EAGAIN)
		return tell(w, st, HK_RUN_STEP_DONE);
	w->any_short = true;
	/* A shortfall (not an unmount left mounted, a file not removed: error set). */
	w->unit_short |= !st->error && hk_is_live(w->run->ctx) && !hk_is_dry_run(w->run->ctx);
	if (it->kind != HK_PLAN_WRITE || !it->page_size || it->field != HK_POOL_MINIMUM)
		return tell(w, st, HK_RUN_STEP_SHORT);
	if ((!(flags & HK_RUN_ALWAYS) || (flags & HK_RUN_KEEP_MAXIMUM)) &&
	    short_size(w, it->page_size) < 0)
		return -ENOMEM;
	rc = tell(w, st, HK_RUN_STEP_SHORT);
	/* --strict: the unit is put back, its maximum with it; nothing to keep. */
	if (rc == 0 && (flags & HK_RUN_KEEP_MAXIMUM) && it->node == HK_NODE_ALL &&
	    !(w->unit_short && (flags & HK_RUN_STRICT)))
		rc = keep_maximum(w, st);
	return rc;
}

/* A step that failed: told, and the run stops (with fn's value, or the error). */
static int failed(const struct walk *w, struct hk_run_step *st, int error)
{
	int told;

	st->error = error;
	told = tell(w, st, HK_RUN_STEP_FAILED);
	return told ? told : error;
}

/* Write the item (or pretend to, dry) once WRITE is told. */
static int write_step(struct walk *w, struct hk_run_step *st)
{
	const struct hk_plan_item *it = st->item;
	char *reached = NULL;
	int rc;

	if (hk_is_dry_run(w->run->ctx) && pretend(w, it) == 0)
		return tell(w, st, HK_RUN_STEP_DONE);
	if ((it->kind == HK_PLAN_MOUNT || gone_for_good(it)) && !hk_is_live(w->run->ctx))
		return failed(w, st, -EOPNOTSUPP);
	/* A mount item's base is its plan's (hk_run_items: no plan, none). */
	rc = apply_policy(w->run, it, hkl_plan_mount_base(w->unit.plan, st->index), &reached);
	st->reached = reached;
	/*
	 * SHORT with the error set, and the run goes on: a path that no longer
	 * leads to the mount (left mounted), a file that cannot be removed.
	 */
	if ((it->kind == HK_PLAN_UNMOUNT && rc == -EXDEV) ||
	    (it->kind == HK_PLAN_REMOVE && rc < 0 && rc != -EAGAIN)) {
		st->error = rc;
		rc = -EAGAIN;
	}
	if (rc < 0 && rc != -EAGAIN)
		rc = failed(w, st, rc);
	else
		rc = written(w, st, rc);
	free(reached);
	return rc;
}

/* Whether it is a whole pool's minimum that grows: above what it reads, or was planned from. */
static bool grows(const struct walk *w, size_t i, const struct hk_plan_item *it, const char *cur)
{
	uint64_t have;

	if (it->kind != HK_PLAN_WRITE || it->field != HK_POOL_MINIMUM || it->node != HK_NODE_ALL)
		return false;
	if (cur)
		return hk_parse_size(cur, &have) == 0 && it->number > have;
	return w->unit.plan && hk_plan_item_before(w->unit.plan, i, &have) == 0 &&
	       it->number > have;
}

/* Swap for a pool that grows (hk_run_set_swap), once per unit: SWAP told, fn's value. */
static int add_swap(struct walk *w, const struct hk_run_step *at, const char *cur)
{
	const struct hk_run_swap *sw = &w->run->swap;
	struct hk_run_step st = *at;
	int rc;

	if (w->swap || (!sw->file_pages && !sw->ramdisks) || !grows(w, at->index, at->item, cur))
		return 0;
	if (sw->file_pages)
		rc = hk_swap_add_file(w->run->ctx, hkp_bytes(sw->file_pages, at->item->page_size),
				      sw->flags, &w->swap);
	else
		rc = hk_swap_add_ramdisks(w->run->ctx, at->item->page_size, sw->flags, &w->swap);
	st.swap = w->swap;
	st.error = rc < 0 ? rc : 0;
	return tell(w, &st, HK_RUN_STEP_SWAP);
}

/* The swap added while the unit's pool grew, taken away (UNSWAP told first; fn cannot stop it). */
static void remove_swap(struct walk *w)
{
	struct hk_run_step st = w->unit;

	if (!w->swap)
		return;
	st.swap = w->swap;
	(void)tell(w, &st, HK_RUN_STEP_UNSWAP);
	hk_swap_remove(w->swap);
	w->swap = NULL;
}

/* One item: compared, held, written (or pretended), and told. */
static int run_one(struct walk *w, size_t i, const struct hk_plan_item *it)
{
	struct hk_run_step st = w->unit;
	char *cur = NULL;
	int rc = 0;

	st.index = i;
	st.item = it;
	/* A mount is never made twice: compared whatever the flags. */
	if (!(w->run->flags & HK_RUN_ALWAYS) || it->kind == HK_PLAN_MOUNT || gone_for_good(it))
		rc = hk_plan_item_check(w->run->ctx, it, &cur);
	st.before = cur;
	if (rc == 1)
		rc = tell(w, &st, HK_RUN_STEP_ALREADY);
	else if (rc < 0 && rc != -ENOENT)
		rc = failed(w, &st, rc);
	else if (it->kind == HK_PLAN_MOUNT && cur)
		rc = failed(w, &st, -EBUSY);
	else if (held(w, it))
		rc = tell(w, &st, HK_RUN_STEP_HELD);
	else if ((rc = add_swap(w, &st, cur)) == 0)
		rc = tell(w, &st, HK_RUN_STEP_WRITE);
	if (rc == 0 && st.kind == HK_RUN_STEP_WRITE)
		rc = write_step(w, &st);
	free(cur);
	return rc;
}

/* A caller's array of another sizeof (items->size apart), as this library's items. */
static int items_in(const struct hk_plan_item *items, size_t n, struct hk_plan_item **ret)
{
	size_t stride = items->size;
	struct hk_plan_item *own = calloc(n, sizeof(*own));

	if (!own)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct hk_plan_item *it = (const void *)((const char *)items + i * stride);
		int rc = it->size == stride ? hkl_item_in(&it, &own[i]) : -EINVAL;

		if (rc < 0) {
			free(own);
			return rc;
		}
		if (it != &own[i])
			own[i] = *it;
	}
	*ret = own;
	return 0;
}

HK_EXPORT int hk_run_items(struct hk_run *run, const struct hk_plan_item *items, size_t n,
			   hk_run_step_fn fn, void *data)
{
	struct walk w = {.run = run, .items = items, .n = n, .fn = fn, .data = data};
	struct hk_plan_item *own = NULL;
	int rc = 0;

	w.unit.size = sizeof(w.unit);
	if (!run || (n && !items))
		return -EINVAL;
	if (n && items->size != sizeof(*items)) {
		rc = items_in(items, n, &own);
		if (rc < 0)
			return rc;
		w.items = items = own;
	}
	w.made = calloc(n + 1, sizeof(*w.made));
	if (!w.made)
		rc = -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = run_one(&w, i, &items[i]);
	remove_swap(&w);
	free(w.made);
	free(w.short_sizes);
	free(own);
	return rc != 0 ? rc : w.any_short;
}

/*
 * hk_run_plan's units: a recommended shmmax kept at item i (the k-th, *k
 * moves on), a pool change that begins at i, or the items from i on of one
 * why that write no file twice.
 */
struct unit {
	enum hk_run_unit kind;
	size_t first, n;
	const struct hkl_shmmax_mark *mark;
};

static bool starts_change(const struct hk_plan *plan, size_t i)
{
	const struct hkl_pool_group *g = hkl_plan_group(plan, i);

	return g && g->first == i;
}

static bool same_why(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether item j belongs to the unit of items [i, j). */
static bool same_unit(const struct hk_plan *plan, const struct hk_plan_item *items, size_t i,
		      size_t j, const struct hkl_shmmax_mark *m)
{
	if ((m && m->at == j) || starts_change(plan, j) || !same_why(items[i].why, items[j].why))
		return false;
	/* Mounts stacked on one path are each one unmount. */
	for (size_t k = i; k < j; k++)
		if (items[k].kind == items[j].kind && strcmp(items[k].path, items[j].path) == 0 &&
		    items[j].kind != HK_PLAN_UNMOUNT)
			return false;
	return true;
}

static struct unit unit_at(const struct hk_plan *plan, size_t i, size_t *k)
{
	const struct hkl_shmmax_mark *m = hkl_plan_shmmax(plan, *k);
	const struct hk_plan_item *items;
	size_t n = hk_plan_items(plan, &items), j = i + 1;

	/* Past the last item only marks are left. */
	if (m && (m->at == i || i >= n)) {
		(*k)++;
		return (struct unit){.kind = HK_RUN_UNIT_SHMMAX,
				     .first = i,
				     .n = m->sp.added && i < n,
				     .mark = m};
	}
	if (starts_change(plan, i))
		return (struct unit){.kind = HK_RUN_UNIT_POOL_CHANGE,
				     .first = i,
				     .n = hkl_plan_group(plan, i)->n};
	while (j < n && same_unit(plan, items, i, j, m))
		j++;
	return (struct unit){.kind = HK_RUN_UNIT_ITEMS, .first = i, .n = j - i};
}

/* AGAIN told: fn's value, else what failed (error) or 0. */
static int tell_again(struct walk *w, int error)
{
	struct hk_run_step st = w->unit;
	int told;

	st.error = error;
	told = tell(w, &st, HK_RUN_STEP_AGAIN);
	return told ? told : error;
}

/*
 * Where a kernel answers: a pool change whose pool moved, planned again; a
 * recommended shmmax, computed again from the pools the writes left (*sp).
 * The unit then runs the items of *again.
 */
static int plan_again(struct walk *w, const struct unit *u, struct hk_shmmax_plan *sp,
		      struct hk_plan **again)
{
	struct hk_ctx *ctx = w->run->ctx;
	int rc;

	if (u->kind == HK_RUN_UNIT_SHMMAX) {
		*sp = u->mark->sp;
		w->unit.shmmax = sp;
	}
	if (hk_is_dry_run(ctx) || !hk_is_live(ctx) || u->kind == HK_RUN_UNIT_ITEMS)
		return 0;
	if (u->kind == HK_RUN_UNIT_POOL_CHANGE) {
		rc = hk_plan_pool_change_again(ctx, w->unit.plan, u->first, again);
		if (rc <= 0)
			return rc < 0 ? tell_again(w, rc) : 0;
		w->unit.first = 0;
	} else {
		*sp = (struct hk_shmmax_plan){.size = sizeof(*sp)};
		rc = hk_plan_new(again);
		if (rc == 0)
			rc = hk_plan_add_recommended_shmmax(ctx, *again, NULL, u->mark->why, sp);
		/* A configuration's: at its setting's line, as the item it replaces. */
		if (rc == 0 && sp->added && u->mark->file)
			rc = hkl_plan_place(*again, sp->index, u->mark->file, u->mark->line);
		if (rc < 0)
			return tell_again(w, rc);
		w->unit.first = sp->index;
	}
	w->unit.plan = *again;
	w->unit.n = hk_plan_items(*again, NULL);
	return tell_again(w, 0);
}

/* One unit: AGAIN where planned again, BEGIN, its items, END (also when it stops). */
static int run_unit(struct walk *w, const struct hk_plan *plan, const struct unit *u)
{
	const struct hk_plan_item *items;
	struct hk_plan *again = NULL;
	struct hk_shmmax_plan sp;
	struct hk_run_step st;
	int rc, end;

	w->unit = (struct hk_run_step){
		.size = sizeof(st), .unit = u->kind, .plan = plan, .first = u->first, .n = u->n};
	rc = plan_again(w, u, &sp, &again);
	if (rc != 0) {
		hk_plan_unref(again);
		return rc;
	}
	/*
	 * A short minimum holds back its pool's later overcommits in the whole
	 * plan (a configuration's: the maximum stays for the next run); with
	 * HK_RUN_KEEP_MAXIMUM, which keeps the maximum itself, in its own unit
	 * only (an option's), where it also looks for the maximum to keep.
	 */
	if (w->run->flags & HK_RUN_KEEP_MAXIMUM)
		w->n_short = 0;
	w->unit_short = false;
	hk_plan_items(w->unit.plan, &items);
	w->items = items + w->unit.first;
	w->n = w->unit.n;
	st = w->unit;
	rc = tell(w, &st, HK_RUN_STEP_BEGIN);
	for (size_t i = w->unit.first; rc == 0 && i < w->unit.first + w->unit.n; i++)
		rc = run_one(w, i, &items[i]);
	remove_swap(w);
	st = w->unit;
	st.error = rc;
	end = tell(w, &st, HK_RUN_STEP_END);
	hk_plan_unref(again);
	return rc != 0 ? rc : end;
}

/* HK_RUN_PUT_BACK: the run stopped before its end; all it kept put back, and told. */
static void put_back_told(struct walk *w, const struct hk_plan *plan)
{
	struct hk_run_step st = {.size = sizeof(st), .plan = plan};

	if (hk_is_dry_run(w->run->ctx))
		return;
	st.error = hk_run_put_back(w->run, &st.put_back);
	(void)tell(w, &st, HK_RUN_STEP_PUT_BACK);
}

HK_EXPORT int hk_run_plan(struct hk_run *run, const struct hk_plan *plan, hk_run_step_fn fn,
			  void *data)
{
	struct walk w = {.run = run, .fn = fn, .data = data};
	size_t n = hk_plan_items(plan, NULL), i = 0, k = 0;
	bool stopped = false;
	int rc = 0;

	if (!run || !plan)
		return -EINVAL;
	/* A dry run's directories: of plan's items only (a dry run plans nothing again). */
	w.made = calloc(n + 1, sizeof(*w.made));
	if (!w.made)
		rc = -ENOMEM;
	while (rc == 0 && (i < n || hkl_plan_shmmax(plan, k))) {
		struct unit u = unit_at(plan, i, &k);

		rc = run_unit(&w, plan, &u);
		i += u.n;
		if (rc == 0 && w.unit_short && (run->flags & HK_RUN_STRICT)) {
			stopped = true;
			break;
		}
	}
	if ((rc != 0 || stopped) && (run->flags & HK_RUN_PUT_BACK))
		put_back_told(&w, plan);
	free(w.made);
	free(w.short_sizes);
	return rc != 0 ? rc : w.any_short;
}
