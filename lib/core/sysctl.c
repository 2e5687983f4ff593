// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Absolute, for messages; the path layer reads them relative to the root. */
static const char *const sysctl_paths[] = {
	[HK_SYSCTL_NR_HUGEPAGES] = HK_ABS(HK_PROC_SYS_VM "/nr_hugepages"),
	[HK_SYSCTL_NR_HUGEPAGES_MEMPOLICY] = HK_ABS(HK_PROC_SYS_VM "/nr_hugepages_mempolicy"),
	[HK_SYSCTL_NR_OVERCOMMIT_HUGEPAGES] = HK_ABS(HK_PROC_SYS_VM "/nr_overcommit_hugepages"),
	[HK_SYSCTL_HUGETLB_SHM_GROUP] = HK_ABS(HK_PROC_SYS_VM "/hugetlb_shm_group"),
	[HK_SYSCTL_MIN_FREE_KBYTES] = HK_ABS(HK_PROC_SYS_VM "/min_free_kbytes"),
	[HK_SYSCTL_SHMMAX] = HK_ABS(HK_PROC_SYS_KERNEL "/shmmax"),
	[HK_SYSCTL_SHMALL] = HK_ABS(HK_PROC_SYS_KERNEL "/shmall"),
	[HK_SYSCTL_HUGEPAGES_TREAT_AS_MOVABLE] =
		HK_ABS(HK_PROC_SYS_VM "/hugepages_treat_as_movable"),
	[HK_SYSCTL_COMPACT_MEMORY] = HK_ABS(HK_PROC_SYS_VM "/compact_memory"),
	[HK_SYSCTL_HUGETLB_OPTIMIZE_VMEMMAP] = HK_ABS(HK_PROC_SYS_VM "/hugetlb_optimize_vmemmap"),
	[HK_SYSCTL_COMPACTION_PROACTIVENESS] = HK_ABS(HK_PROC_SYS_VM "/compaction_proactiveness"),
};

#define N_SYSCTLS (sizeof(sysctl_paths) / sizeof(sysctl_paths[0]))

HK_EXPORT const char *hk_sysctl_path(enum hk_sysctl which)
{
	return (unsigned)which < N_SYSCTLS ? sysctl_paths[which] : NULL;
}

/* The sysctl of a key ("kernel.shmall": sysctl(8)'s name), or -EINVAL. */
int hkl_sysctl_of_key(const char *key)
{
	size_t skip = strlen(HK_ABS(HK_PROC_SYS)) + 1;

	for (size_t i = 0; key && i < N_SYSCTLS; i++) {
		const char *p = sysctl_paths[i] + skip, *k = key;

		while (*p && (*k == *p || (*k == '.' && *p == '/'))) {
			p++;
			k++;
		}
		if (!*p && !*k)
			return (int)i;
	}
	return -EINVAL;
}

HK_EXPORT int hk_sysctl_read(struct hk_ctx *ctx, enum hk_sysctl which, uint64_t *ret)
{
	int rc;

	if ((unsigned)which >= N_SYSCTLS || !ret)
		return -EINVAL;
	rc = hkc_path_read_u64f(&ctx->path, ret, "%s", sysctl_paths[which]);
	if (rc < 0)
		hkl_dbg(ctx, "%s: %s", sysctl_paths[which], strerror(-rc));
	return rc;
}

HK_EXPORT int hk_sysctl_write(struct hk_ctx *ctx, enum hk_sysctl which, uint64_t value)
{
	int rc;

	if ((unsigned)which >= N_SYSCTLS)
		return -EINVAL;
	rc = hkc_path_write_u64f(&ctx->path, value, "%s", sysctl_paths[which]);
	if (rc < 0)
		hkl_dbg(ctx, "%s: cannot write %" PRIu64 ": %s", sysctl_paths[which], value,
			strerror(-rc));
	else
		hkl_info(ctx, "%s = %" PRIu64, sysctl_paths[which], value);
	return rc;
}

HK_EXPORT int hk_compact_memory(struct hk_ctx *ctx, int node)
{
	int rc;

	if (node == HK_NODE_ALL)
		return hk_sysctl_write(ctx, HK_SYSCTL_COMPACT_MEMORY, 1);
	if (node < 0)
		return -EINVAL;
	rc = hkc_path_write_stringf(&ctx->path, "1", HK_SYS_NODE "/node%d/compact", node);
	if (rc < 0)
		hkl_dbg(ctx, "%s/node%d/compact: %s", HK_ABS(HK_SYS_NODE), node, strerror(-rc));
	return rc;
}

/* A knob path below the THP directory: plain names, at most one '/', no dot-dot. */
static bool thp_knob_ok(const char *knob, bool allow_subdir)
{
	const char *slash = strchr(knob, '/');

	if (!*knob || knob[0] == '.' || strstr(knob, ".."))
		return false;
	if (!slash)
		return true;
	return allow_subdir && slash[1] && slash[1] != '.' && !strchr(slash + 1, '/');
}

HK_EXPORT int hk_thp_write(struct hk_ctx *ctx, const char *knob, const char *value)
{
	int rc;

	if (!knob || !value || !thp_knob_ok(knob, true))
		return -EINVAL;
	rc = hkc_path_write_stringf(&ctx->path, value, HK_SYS_THP "/%s", knob);
	if (rc < 0)
		hkl_dbg(ctx, "%s/%s: cannot write \"%s\": %s", HK_ABS(HK_SYS_THP), knob, value,
			strerror(-rc));
	return rc;
}

HK_EXPORT int hk_meminfo_read(struct hk_ctx *ctx, const char *key, uint64_t *ret)
{
	char *buf;
	int rc;

	if (!key || !ret)
		return -EINVAL;
	rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC_MEMINFO);
	if (rc < 0)
		return rc;
	rc = hkc_kv_find_u64(buf, key, ret);
	free(buf);
	return rc;
}

HK_EXPORT int hk_zone_count(struct hk_ctx *ctx, unsigned *ret)
{
	unsigned n = 0;
	char *buf, *line;
	int rc;

	rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC_ZONEINFO);
	if (rc < 0)
		return rc;
	for (line = buf; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "Node ", 5) == 0)
			n++;
	}
	free(buf);
	*ret = n;
	return 0;
}

HK_EXPORT int hk_thp_read(struct hk_ctx *ctx, const char *knob, char **ret_value)
{
	char *buf, *open, *close;
	int rc;

	if (!knob || !thp_knob_ok(knob, true) || !ret_value)
		return -EINVAL;
	rc = hkc_path_read_stringf(&ctx->path, &buf, HK_SYS_THP "/%s", knob);
	if (rc < 0)
		return rc;
	/* "always [madvise] never": the bracketed word is the selection. */
	open = strchr(buf, '[');
	/* The first ' ', '[' or ']' after '[' must be the ']' of a one-word selection. */
	close = open ? open + 1 + strcspn(open + 1, " []") : NULL;
	if (close && *close == ']' && close > open + 1) {
		*close = '\0';
		memmove(buf, open + 1, (size_t)(close - open));
	} else if (open || strchr(buf, ']') || strchr(buf, ' ')) {
		/* Unbalanced brackets, an empty or a two-word selection: not a mode line. */
		free(buf);
		return -EINVAL;
	}
	*ret_value = buf;
	return 0;
}

HK_EXPORT int hk_thp_modes(struct hk_ctx *ctx, const char *knob, char **ret_line)
{
	if (!knob || !thp_knob_ok(knob, true) || !ret_line)
		return -EINVAL;
	return hkc_path_read_stringf(&ctx->path, ret_line, HK_SYS_THP "/%s", knob);
}

HK_EXPORT int hk_recommended_min_free_kbytes(struct hk_ctx *ctx, uint64_t *ret)
{
	uint64_t def;
	unsigned zones;
	int rc;

	rc = hk_default_page_size(ctx, &def);
	if (rc == 0)
		rc = hk_zone_count(ctx, &zones);
	if (rc < 0)
		return rc;
	/*
	 * libhugetlbfs's rule: per zone, two pageblocks for the reserve plus
	 * 3 x 3 for fallbacks between the three migrate types.
	 */
	*ret = 11 * (def / 1024) * zones;
	return 0;
}

HK_EXPORT int hk_recommended_shmmax(struct hk_ctx *ctx, uint64_t *ret)
{
	struct hk_pool_plan *pools = NULL;
	int rc = hk_pool_plan_new(ctx, &pools);

	/* The pools as the kernel has them: a plan that changed nothing. */
	if (rc == 0)
		rc = hk_pool_plan_recommended_shmmax(pools, ret);
	hk_pool_plan_unref(pools);
	return rc;
}

/*
 * The next word of a kernel command line from *pos, as the kernel splits it:
 * blanks separate words, double quotes group blanks into one (and are
 * dropped). Written over the buffer; NULL at the end.
 */
static char *cmdline_word(char **pos)
{
	char *s = *pos, *out, *word;
	bool quoted = false;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return NULL;
	word = out = s;
	for (; *s && (quoted || !isspace((unsigned char)*s)); s++) {
		if (*s == '"')
			quoted = !quoted;
		else
			*out++ = *s;
	}
	*pos = *s ? s + 1 : s;
	*out = '\0';
	return word;
}

HK_EXPORT int hk_kernel_param(struct hk_ctx *ctx, const char *name, char **ret_value)
{
	size_t nlen = name ? strlen(name) : 0;
	char *buf, *pos, *w, *found = NULL;
	int rc;

	if (!nlen || strchr(name, '=') || !ret_value)
		return -EINVAL;
	rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC_CMDLINE);
	if (rc < 0)
		return rc;
	for (pos = buf; (w = cmdline_word(&pos)) != NULL;) {
		if (strcmp(w, "--") == 0)
			break;
		if (strncmp(w, name, nlen) == 0 && (w[nlen] == '=' || !w[nlen]))
			found = w[nlen] ? w + nlen + 1 : w + nlen;
	}
	if (found) {
		*ret_value = strdup(found);
		rc = *ret_value ? 0 : -ENOMEM;
	} else {
		rc = -ENOENT;
	}
	free(buf);
	return rc;
}

HK_EXPORT int hk_hugetlb_cma(struct hk_ctx *ctx, uint64_t *ret_bytes)
{
	uint64_t total = 0, v;
	char *value, *part, *save = NULL;
	int rc;

	if (!ret_bytes)
		return -EINVAL;
	rc = hk_kernel_param(ctx, "hugetlb_cma", &value);
	if (rc < 0)
		return rc;
	/* "4G", or per node "0:1G,1:2G" (Linux 5.17). */
	for (part = strtok_r(value, ",", &save); part && rc == 0;
	     part = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(part, ':'), *size = part;

		if (colon) {
			*colon = '\0';
			size = colon + 1;
			if (!*part || strspn(part, "0123456789") != strlen(part))
				rc = -EINVAL;
		}
		if (rc == 0)
			rc = hkc_parse_size(size, &v) < 0 ? -EINVAL : 0;
		if (rc == 0 && v > UINT64_MAX - total)
			rc = -EINVAL;
		if (rc == 0)
			total += v;
	}
	if (rc == 0 && !part && total == 0 && !*value)
		rc = -EINVAL;
	if (rc == -EINVAL)
		hkl_warn(ctx, "%s: hugetlb_cma has a value that is not a size or a node:size list",
			 HK_ABS(HK_PROC_CMDLINE));
	free(value);
	if (rc < 0)
		return rc;
	if (total == 0)
		return -ENOENT; /* hugetlb_cma=0 sets nothing aside */
	*ret_bytes = total;
	return 0;
}
