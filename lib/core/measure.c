// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the measuring tools (tlbmiss_cost, cpupcstat) read of their own
 * process and of the CPU, through the context's path layer: how much of a
 * range smaps shows on huge pages, a process's threads, the L2 cache line;
 * and MADV_COLLAPSE with the kernel constant's fallback (kconst.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "internal.h"
#include "kconst.h"
#include "paths.h"
#include "smaps.h"

HK_EXPORT int hk_range_huge_kb(struct hk_ctx *ctx, const void *start, size_t len, uint64_t *ret_kb)
{
	uint64_t lo = (uintptr_t)start, hi = lo + len, total = 0;
	struct hkc_smap *maps = NULL;
	char *buf = NULL;
	size_t n = 0;
	int rc;

	if (!ctx || !ret_kb || hi < lo)
		return -EINVAL;
	rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC_SMAPS);
	if (rc == 0)
		rc = hkc_smaps_parse(buf, &maps, &n);
	free(buf);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		if (maps[i].start < hi && maps[i].end > lo)
			total += maps[i].anon_huge_kb + hkc_smap_hugetlb_kb(&maps[i]);
	hkc_smaps_free(maps, n);
	*ret_kb = total;
	return 0;
}

/* A task directory's entry: a thread id (1..INT32_MAX), or 0. */
static int task_id(const char *name)
{
	uint64_t v;

	return hkc_parse_u64_strict(name, &v) == 0 && v >= 1 && v <= INT32_MAX ? (int)v : 0;
}

HK_EXPORT int hk_process_threads(struct hk_ctx *ctx, int pid, int **ret_tids, size_t *ret_n)
{
	struct dirent *e;
	int *tids = NULL;
	size_t n = 0;
	DIR *d = NULL;
	int rc;

	if (!ctx || pid < 1 || !ret_tids || !ret_n)
		return -EINVAL;
	rc = hkc_path_opendirf(&ctx->path, &d, HK_PROC "/%d/task", pid);
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	while (rc == 0 && (e = readdir(d))) {
		int tid = task_id(e->d_name);
		int *nt;

		if (!tid)
			continue;
		nt = realloc(tids, (n + 1) * sizeof(*nt));
		if (!nt) {
			rc = -ENOMEM;
			break;
		}
		tids = nt;
		tids[n++] = tid;
	}
	closedir(d);
	if (rc == 0 && n == 0)
		rc = -ESRCH;
	if (rc < 0) {
		free(tids);
		return rc;
	}
	*ret_tids = tids;
	*ret_n = n;
	return 0;
}

HK_EXPORT int hk_cache_line_size(struct hk_ctx *ctx, uint64_t *ret)
{
	if (!ctx || !ret)
		return -EINVAL;
	return hkc_path_read_u64f(&ctx->path, ret, HK_SYS_CPU0_L2_LINE_SIZE);
}

HK_EXPORT int hk_collapse(void *addr, size_t len)
{
	return madvise(addr, len, MADV_COLLAPSE) < 0 ? -errno : 0;
}
