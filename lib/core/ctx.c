// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "privilege.h"
#include "tunables.h"
#include "walk.h"

/* The path layer's word that a lookup would have left the --sysroot tree. */
static void path_log(void *data, const char *msg)
{
	hkl_err(data, "%s", msg);
}

HK_EXPORT int hk_new(const char *sysroot, struct hk_ctx **ret_ctx)
{
	struct hk_ctx *ctx;
	int rc;

	if (!ret_ctx)
		return -EINVAL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->refcount = 1;
	/* secure_getenv: a setuid or file-capability program does not take it from its caller. */
	ctx->log_priority = secure_getenv("HK_DEBUG") ? LOG_DEBUG : LOG_ERR;
	rc = hkc_path_init(&ctx->path, sysroot);
	if (rc < 0) {
		free(ctx);
		return rc;
	}
	hkc_path_set_log(&ctx->path, path_log, ctx);
	*ret_ctx = ctx;
	return 0;
}

HK_EXPORT struct hk_ctx *hk_ref(struct hk_ctx *ctx)
{
	if (ctx)
		ctx->refcount++;
	return ctx;
}

HK_EXPORT struct hk_ctx *hk_unref(struct hk_ctx *ctx)
{
	if (!ctx || --ctx->refcount > 0)
		return NULL;
	hkc_path_fini(&ctx->path);
	free(ctx);
	return NULL;
}

HK_EXPORT const char *hk_get_sysroot(const struct hk_ctx *ctx)
{
	return ctx->path.root;
}

HK_EXPORT bool hk_is_live(const struct hk_ctx *ctx)
{
	return ctx->path.live;
}

HK_EXPORT void hk_set_log_fn(struct hk_ctx *ctx, hk_log_fn fn, void *data)
{
	ctx->log_fn = fn;
	ctx->log_data = data;
}

HK_EXPORT void hk_set_log_priority(struct hk_ctx *ctx, int priority)
{
	ctx->log_priority = priority;
}

HK_EXPORT int hk_get_log_priority(const struct hk_ctx *ctx)
{
	return ctx->log_priority;
}

HK_EXPORT const char *hk_get_library_version(void)
{
	return HK_VERSION_STRING;
}

int hkl_ctx_default_size(struct hk_ctx *ctx, uint64_t *ret)
{
	int rc = 0;

	if (!ctx->default_size)
		rc = hkc_default_page_size(&ctx->path, &ctx->default_size);
	if (rc == 0)
		*ret = ctx->default_size;
	return rc;
}

int hkl_ctx_base_size(struct hk_ctx *ctx, uint64_t *ret)
{
	int rc = 0;

	if (!ctx->base_size)
		rc = hkc_base_page_size(&ctx->path, &ctx->base_size);
	if (rc == 0)
		*ret = ctx->base_size;
	return rc;
}

void hkl_log(const struct hk_ctx *ctx, int priority, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!ctx->log_fn || priority > ctx->log_priority)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->log_fn(ctx->log_data, priority, msg);
}

HK_EXPORT int hk_parse_size_legacy(const char *s, uint64_t *ret)
{
	return hkc_parse_size_legacy(s, ret);
}

HK_EXPORT int hk_parse_size(const char *s, uint64_t *ret)
{
	return hkc_parse_size(s, ret);
}

HK_EXPORT int hk_nodelist_parse(const char *s, int **ret_nodes, size_t *ret_n)
{
	return hkc_nodelist_parse(s, ret_nodes, ret_n);
}

HK_EXPORT int hk_parse_amount(const char *s, uint64_t *ret, bool *ret_bytes)
{
	return ret ? hkc_parse_amount(s, ret, ret_bytes) : -EINVAL;
}

HK_EXPORT int hk_parse_count(const char *s, uint64_t *ret)
{
	return s && ret ? hkc_parse_u64_strict(s, ret) : -EINVAL;
}

HK_EXPORT void hk_format_size(char *buf, size_t sz, uint64_t bytes)
{
	hkc_format_size(buf, sz, bytes);
}

HK_EXPORT int hk_verbosity_env(const char *verbose, const char *debug, int def)
{
	return hkc_verbosity_env(verbose, debug, def);
}

HK_EXPORT int hk_walk(const char *name, unsigned flags, struct hk_walk *w)
{
	struct hkc_walk cw;
	int rc;

	if (!w || w->size != sizeof(*w))
		return -EINVAL;
	rc = hkc_walk(name, flags, &cw);
	*w = (struct hk_walk){
		.size = sizeof(*w),
		.dirfd = cw.dirfd,
		.fd = cw.fd,
		.path = cw.path,
		.base = cw.base,
		.mode = cw.st.st_mode,
		.uid = cw.st.st_uid,
		.dev = cw.st.st_dev,
		.ino = cw.st.st_ino,
		.problem = (enum hk_walk_problem)cw.problem,
		.error = cw.error,
		.where = cw.where,
		.link_uid = cw.link_uid,
	};
	return rc;
}

HK_EXPORT void hk_walk_fini(struct hk_walk *w)
{
	struct hkc_walk cw;

	if (!w)
		return;
	/* What it holds is lib/common's, given back to it. */
	cw = (struct hkc_walk){.dirfd = w->dirfd,
			       .fd = w->fd,
			       .path = w->path,
			       .base = w->base,
			       .where = w->where};
	hkc_walk_fini(&cw);
	*w = (struct hk_walk){.size = sizeof(*w), .dirfd = -1, .fd = -1};
}

HK_EXPORT int hk_walk_open(const char *name, int flags)
{
	return hkc_walk_open(name, flags);
}

HK_EXPORT bool hk_privileged_for_other(void)
{
	return hkc_privileged_for_other();
}

HK_EXPORT int hk_drop_privileges(void)
{
	return hkc_drop_privileges();
}

HK_EXPORT int hk_heap_tunables(const char *existing, uint64_t page_size, char **ret)
{
	if (!ret)
		return -EINVAL;
	return hkc_heap_tunables(existing, page_size, ret);
}
