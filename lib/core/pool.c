// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define POOL_DIR HK_SYS_HUGEPAGES "/hugepages-%" PRIu64 "kB"
#define NODE_POOL_DIR HK_SYS_NODE "/node%d/hugepages/hugepages-%" PRIu64 "kB"

struct hkl_pool_counters {
	uint64_t nr, free, resv, surplus, overcommit;
};

struct hkl_pool_node {
	int id;
	uint64_t nr, free, surplus;
};

struct hk_pool {
	uint64_t size;
	uint64_t demote_size; /* 0: no demote files */
	bool is_default, gigantic;
	struct hkl_pool_counters c;
	struct hkl_pool_node *nodes;
	size_t n_nodes;
};

HK_EXPORT int hk_default_page_size(struct hk_ctx *ctx, uint64_t *ret)
{
	int rc = hkl_ctx_default_size(ctx, ret);

	if (rc == -ENOENT) {
		hkl_dbg(ctx, "no Hugepagesize in meminfo: kernel without hugetlb");
		return -EOPNOTSUPP;
	}
	return rc;
}

HK_EXPORT int hk_page_sizes(struct hk_ctx *ctx, uint64_t **ret_sizes, size_t *ret_n)
{
	return hkc_page_sizes(&ctx->path, ret_sizes, ret_n);
}

HK_EXPORT int hk_page_sizes_ascending(struct hk_ctx *ctx, uint64_t **ret_sizes, size_t *ret_n)
{
	if (!ctx || !ret_sizes || !ret_n)
		return -EINVAL;
	return hkc_size_dirs(&ctx->path, HK_SYS_HUGEPAGES, ret_sizes, ret_n);
}

HK_EXPORT int hk_base_page_size(struct hk_ctx *ctx, uint64_t *ret)
{
	return hkl_ctx_base_size(ctx, ret);
}

HK_EXPORT int hk_node_list(struct hk_ctx *ctx, int **ret_nodes, size_t *ret_n)
{
	char *buf;
	int rc;

	rc = hkc_path_read_stringf(&ctx->path, &buf, HK_SYS_NODE "/online");
	if (rc == -ENOENT)
		return hkc_nodelist_parse("", ret_nodes, ret_n);
	if (rc < 0)
		return rc;
	rc = hkc_nodelist_parse(buf, ret_nodes, ret_n);
	if (rc < 0)
		hkl_err(ctx, "%s/online: cannot parse \"%s\"", HK_ABS(HK_SYS_NODE), buf);
	free(buf);
	return rc;
}

static int read_counters(struct hk_ctx *ctx, uint64_t kb, struct hkl_pool_counters *c)
{
	static const struct {
		const char *file;
		size_t off;
	} files[] = {
		{"nr_hugepages", offsetof(struct hkl_pool_counters, nr)},
		{"free_hugepages", offsetof(struct hkl_pool_counters, free)},
		{"resv_hugepages", offsetof(struct hkl_pool_counters, resv)},
		{"surplus_hugepages", offsetof(struct hkl_pool_counters, surplus)},
		{"nr_overcommit_hugepages", offsetof(struct hkl_pool_counters, overcommit)},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		uint64_t *v = (uint64_t *)((char *)c + files[i].off);
		int rc = hkc_path_read_u64f(&ctx->path, v, POOL_DIR "/%s", kb, files[i].file);

		if (rc < 0) {
			hkl_dbg(ctx, "%s/hugepages-%" PRIu64 "kB/%s: %s", HK_ABS(HK_SYS_HUGEPAGES),
				kb, files[i].file, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int read_nodes(struct hk_ctx *ctx, struct hk_pool *pool)
{
	uint64_t kb = pool->size / 1024;
	int *ids;
	size_t n;
	int rc;

	rc = hk_node_list(ctx, &ids, &n);
	if (rc < 0)
		return rc;
	pool->nodes = calloc(n ? n : 1, sizeof(*pool->nodes));
	if (!pool->nodes) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct hkl_pool_node *nd = &pool->nodes[pool->n_nodes];

		/* A node without hugepages files (memoryless, old kernel) is left out. */
		if (!hkc_path_existsf(&ctx->path, NODE_POOL_DIR, ids[i], kb))
			continue;
		nd->id = ids[i];
		rc = hkc_path_read_u64f(&ctx->path, &nd->nr, NODE_POOL_DIR "/nr_hugepages", ids[i],
					kb);
		if (rc == 0)
			rc = hkc_path_read_u64f(&ctx->path, &nd->free,
						NODE_POOL_DIR "/free_hugepages", ids[i], kb);
		if (rc == 0)
			rc = hkc_path_read_u64f(&ctx->path, &nd->surplus,
						NODE_POOL_DIR "/surplus_hugepages", ids[i], kb);
		if (rc < 0) {
			hkl_err(ctx, "node%d: cannot read the %" PRIu64 "kB pool: %s", ids[i], kb,
				strerror(-rc));
			break;
		}
		pool->n_nodes++;
	}
	free(ids);
	return rc;
}

/* demote_size ("2048kB") in bytes; *ret 0 where the kernel has no such file. */
static int read_demote_size(struct hk_ctx *ctx, uint64_t kb, uint64_t *ret)
{
	char *v;
	size_t len;
	int rc;

	*ret = 0;
	rc = hkc_path_read_stringf(&ctx->path, &v, POOL_DIR "/demote_size", kb);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	len = strlen(v);
	if (len > 2 && strcmp(v + len - 2, "kB") == 0) {
		v[len - 2] = '\0';
		rc = hkc_parse_u64_strict(v, ret);
		if (rc == 0 && (*ret == 0 || *ret > UINT64_MAX / 1024))
			rc = -EINVAL;
		*ret *= 1024;
	} else {
		rc = -EINVAL;
	}
	if (rc < 0) {
		*ret = 0;
		hkl_err(ctx, "%s/hugepages-%" PRIu64 "kB/demote_size: not a size in kB",
			HK_ABS(HK_SYS_HUGEPAGES), kb);
	}
	free(v);
	return rc;
}

HK_EXPORT int hk_pool_read(struct hk_ctx *ctx, uint64_t page_size, struct hk_pool **ret_pool)
{
	struct hkl_pool_counters again;
	uint64_t def = 0, base = 4096;
	struct hk_pool *pool;
	int rc, tries;

	if (!ret_pool || page_size < 1024 || page_size % 1024)
		return -EINVAL;
	if (!hkc_path_existsf(&ctx->path, POOL_DIR, page_size / 1024))
		return -ENOENT;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->size = page_size;
	/*
	 * The counters move while pages are faulted and freed: sample until two
	 * consecutive reads agree, so Minimum and Maximum are computed from one
	 * state (libhugetlbfs does the same).
	 */
	rc = read_counters(ctx, page_size / 1024, &pool->c);
	for (tries = 0; rc == 0 && tries < 10; tries++) {
		rc = read_counters(ctx, page_size / 1024, &again);
		if (rc == 0 && memcmp(&again, &pool->c, sizeof(again)) == 0)
			break;
		pool->c = again;
	}
	if (rc == 0)
		rc = read_nodes(ctx, pool);
	if (rc == 0)
		rc = read_demote_size(ctx, page_size / 1024, &pool->demote_size);
	if (rc < 0) {
		hk_pool_unref(pool);
		return rc;
	}
	pool->is_default = hkl_ctx_default_size(ctx, &def) == 0 && def == page_size;
	hkl_ctx_base_size(ctx, &base);
	pool->gigantic = page_size > (base << HK_MAX_PAGE_ORDER);
	*ret_pool = pool;
	return 0;
}

HK_EXPORT void hk_pool_unref(struct hk_pool *pool)
{
	if (!pool)
		return;
	free(pool->nodes);
	free(pool);
}

HK_EXPORT uint64_t hk_pool_get(const struct hk_pool *pool, enum hk_pool_field field)
{
	const struct hkl_pool_counters *c = &pool->c;
	uint64_t min = c->nr > c->surplus ? c->nr - c->surplus : 0;

	switch (field) {
	case HK_POOL_SIZE:
		return pool->size;
	case HK_POOL_NR:
		return c->nr;
	case HK_POOL_FREE:
		return c->free;
	case HK_POOL_RESV:
		return c->resv;
	case HK_POOL_SURPLUS:
		return c->surplus;
	case HK_POOL_OVERCOMMIT:
		return c->overcommit;
	case HK_POOL_MINIMUM:
		return min;
	case HK_POOL_MAXIMUM:
		return c->overcommit > UINT64_MAX - min ? UINT64_MAX : min + c->overcommit;
	case HK_POOL_DEMOTE_SIZE:
		return pool->demote_size;
	case HK_POOL_DEMOTE:
		return 0;
	}
	return 0;
}

HK_EXPORT bool hk_pool_is_default(const struct hk_pool *pool)
{
	return pool->is_default;
}

HK_EXPORT bool hk_pool_is_gigantic(const struct hk_pool *pool)
{
	return pool->gigantic;
}

HK_EXPORT size_t hk_pool_node_count(const struct hk_pool *pool)
{
	return pool->n_nodes;
}

HK_EXPORT int hk_pool_node_id(const struct hk_pool *pool, size_t i)
{
	return i < pool->n_nodes ? pool->nodes[i].id : -1;
}

HK_EXPORT uint64_t hk_pool_node_get(const struct hk_pool *pool, size_t i, enum hk_pool_field field)
{
	const struct hkl_pool_node *nd;

	if (i >= pool->n_nodes)
		return 0;
	nd = &pool->nodes[i];
	switch (field) {
	case HK_POOL_SIZE:
		return pool->size;
	case HK_POOL_NR:
		return nd->nr;
	case HK_POOL_FREE:
		return nd->free;
	case HK_POOL_SURPLUS:
		return nd->surplus;
	case HK_POOL_MINIMUM:
		return nd->nr > nd->surplus ? nd->nr - nd->surplus : 0;
	default:
		return 0;
	}
}

HK_EXPORT void hk_set_dry_run(struct hk_ctx *ctx, hk_dry_run_fn fn, void *data)
{
	ctx->path.dry_run = fn;
	ctx->path.dry_run_data = data;
}

HK_EXPORT bool hk_is_dry_run(const struct hk_ctx *ctx)
{
	return ctx->path.dry_run != NULL;
}

/*
 * The file behind a pool setting, relative to the root. The default size goes
 * through /proc/sys/vm as with libhugetlbfs (the same kernel counters).
 */
static int pool_file(struct hk_ctx *ctx, uint64_t size, int node, enum hk_pool_field field,
		     unsigned flags, char *buf, size_t sz)
{
	uint64_t def = 0, kb = size / 1024;
	bool mempol = flags & HK_POOL_SET_MEMPOLICY;
	const char *name;
	int n;

	if (field == HK_POOL_NR)
		name = mempol ? "nr_hugepages_mempolicy" : "nr_hugepages";
	else if (field == HK_POOL_OVERCOMMIT && node == HK_NODE_ALL && !mempol)
		name = "nr_overcommit_hugepages";
	else if (field == HK_POOL_DEMOTE_SIZE && node == HK_NODE_ALL && !mempol)
		name = "demote_size";
	else if (field == HK_POOL_DEMOTE && !mempol)
		name = "demote";
	else
		return -EINVAL;
	if (size < 1024 || size % 1024 || (node != HK_NODE_ALL && (node < 0 || mempol)))
		return -EINVAL;
	if (!hkc_path_existsf(&ctx->path, POOL_DIR, kb))
		return -ENOENT;
	if (node != HK_NODE_ALL) {
		if (!hkc_path_existsf(&ctx->path, NODE_POOL_DIR, node, kb))
			return -ENOENT;
		n = snprintf(buf, sz, NODE_POOL_DIR "/%s", node, kb, name);
	} else if ((field == HK_POOL_NR || field == HK_POOL_OVERCOMMIT) &&
		   hkl_ctx_default_size(ctx, &def) == 0 && def == size) {
		n = snprintf(buf, sz, HK_PROC_SYS_VM "/%s", name);
	} else {
		n = snprintf(buf, sz, POOL_DIR "/%s", kb, name);
	}
	if (n < 0 || (size_t)n >= sz)
		return -ENAMETOOLONG;
	/* The demote files exist only where the kernel can demote this size. */
	if ((field == HK_POOL_DEMOTE || field == HK_POOL_DEMOTE_SIZE) &&
	    !hkc_path_existsf(&ctx->path, "%s", buf))
		return -ENOENT;
	return 0;
}

HK_EXPORT int hk_pool_file(struct hk_ctx *ctx, uint64_t page_size, int node,
			   enum hk_pool_field field, unsigned flags, char **ret_path)
{
	char buf[PATH_MAX];
	int rc = pool_file(ctx, page_size, node, field, flags, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	if (asprintf(ret_path, "/%s", buf) < 0)
		return -ENOMEM;
	return 0;
}

/* value: the number to write, or with field HK_POOL_DEMOTE_SIZE a size in bytes ("<kB>kB"). */
static int pool_write(struct hk_ctx *ctx, uint64_t size, int node, enum hk_pool_field field,
		      unsigned flags, uint64_t value)
{
	char buf[PATH_MAX], v[32];
	int rc = pool_file(ctx, size, node, field, flags, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	if (field == HK_POOL_DEMOTE_SIZE)
		snprintf(v, sizeof(v), "%" PRIu64 "kB", value / 1024);
	else
		snprintf(v, sizeof(v), "%" PRIu64, value);
	rc = hkc_path_write_stringf(&ctx->path, v, "%s", buf);
	if (rc < 0)
		hkl_dbg(ctx, "/%s: cannot write %s: %s", buf, v, strerror(-rc));
	else
		hkl_dbg(ctx, "/%s = %s", buf, v);
	return rc;
}

HK_EXPORT int hk_pool_set_nr(struct hk_ctx *ctx, uint64_t page_size, int node, uint64_t nr,
			     unsigned flags)
{
	return pool_write(ctx, page_size, node, HK_POOL_NR, flags, nr);
}

HK_EXPORT int hk_pool_set_overcommit(struct hk_ctx *ctx, uint64_t page_size, uint64_t overcommit)
{
	return pool_write(ctx, page_size, HK_NODE_ALL, HK_POOL_OVERCOMMIT, 0, overcommit);
}

HK_EXPORT int hk_pool_set_demote_size(struct hk_ctx *ctx, uint64_t page_size, uint64_t demote_size)
{
	if (demote_size < 1024 || demote_size % 1024 || demote_size >= page_size)
		return -EINVAL;
	return pool_write(ctx, page_size, HK_NODE_ALL, HK_POOL_DEMOTE_SIZE, 0, demote_size);
}

HK_EXPORT int hk_pool_demote(struct hk_ctx *ctx, uint64_t page_size, int node, uint64_t nr)
{
	return pool_write(ctx, page_size, node, HK_POOL_DEMOTE, 0, nr);
}
