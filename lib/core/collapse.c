// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live collapse: a running process's anonymous memory and text put on
 * transparent huge pages by the kernel, process_madvise(2) with
 * MADV_COLLAPSE, and what its smaps show before and after (hugectl
 * --collapse). The process is held by a pidfd from the start: its
 * /proc/PID directory is opened after it, and read through that one
 * descriptor, and the pidfd is asked after each read whether the process
 * still runs (a pid reused meanwhile would be another process's).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collapse.h"
#include "internal.h"
#include "kconst.h"
#include "paths.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* Linux 5.3, the same number on every architecture */
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424 /* Linux 5.1 */
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440 /* Linux 5.10 */
#endif

/*
 * A collapse fills the base pages of a part that were never touched: a
 * MAP_NORESERVE mapping ("nr", a sparse reservation) is left alone, as are
 * hugetlb mappings, shared ones and the stack.
 */
int hkl_collapse_kind(const struct hkc_smap *m)
{
	if (m->ht || m->nr || m->perms[3] != 'p')
		return -1;
	if (m->inode == 0 && (m->name[0] == '\0' || strcmp(m->name, "[heap]") == 0 ||
			      strncmp(m->name, "[anon:", 6) == 0))
		return m->perms[0] == 'r' && m->perms[1] == 'w' ? HK_COLLAPSE_KIND_HEAP : -1;
	if (m->inode != 0 && m->name[0] == '/' && m->perms[2] == 'x')
		return HK_COLLAPSE_KIND_TEXT;
	return -1;
}

/* The kind of m when it is one of c's, else -1. */
static int chosen_kind(const struct hk_collapse *c, const struct hkc_smap *m)
{
	int k = hkl_collapse_kind(m);

	return k >= 0 && (c->kinds & (1u << k)) ? k : -1;
}

static uint64_t huge_kb(const struct hkc_smap *m)
{
	return m->anon_huge_kb + m->file_pmd_kb;
}

static void state_add(struct hk_collapse_state *s, const struct hkc_smap *m)
{
	s->mappings++;
	s->rss_kb += m->rss_kb;
	s->huge_kb += huge_kb(m);
}

/* What the kernel would refuse r for, from what smaps and the process say. */
static enum hk_collapse_why predicted_why(const struct hk_collapse *c, bool nh)
{
	if (nh)
		return HK_COLLAPSE_WHY_NOHUGEPAGE;
	return c->thp_disabled ? HK_COLLAPSE_WHY_THP_DISABLED : HK_COLLAPSE_WHY_NONE;
}

/* One chosen mapping: its parts, and whether it is to be asked. */
static void range_of(const struct hk_collapse *c, const struct hkc_smap *m, int kind,
		     struct hk_collapse_range *r)
{
	uint64_t pmd = c->pmd_size;

	memset(r, 0, sizeof(*r));
	r->start = m->start;
	r->end = m->end;
	r->kind = (enum hk_collapse_kind)kind;
	memcpy(r->perms, m->perms, sizeof(r->perms));
	r->from = (m->start + pmd - 1) / pmd * pmd;
	r->to = m->end / pmd * pmd;
	r->rss_kb_before = r->rss_kb_after = m->rss_kb;
	r->huge_kb_before = r->huge_kb_after = huge_kb(m);
	if (r->to <= r->from) {
		r->from = r->to = m->start;
		r->result = HK_COLLAPSE_TOO_SMALL;
	} else if (kind == HK_COLLAPSE_KIND_TEXT && (m->start - m->offset) % pmd != 0) {
		/* The page cache's huge pages are aligned in the file: never in place here. */
		r->result = HK_COLLAPSE_MISALIGNED;
	} else {
		r->result = HK_COLLAPSE_NOT_ASKED;
		r->why = predicted_why(c, m->nh);
	}
}

int hkl_collapse_select(struct hk_collapse *c, const struct hkc_smap *maps, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		count += chosen_kind(c, &maps[i]) >= 0;
	c->ranges = calloc(count ? count : 1, sizeof(*c->ranges));
	if (!c->ranges)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int k = chosen_kind(c, &maps[i]);
		struct hk_collapse_range *r = &c->ranges[c->n];
		struct hk_collapse_total *t;
		char *name;

		if (k < 0)
			continue;
		name = strdup(maps[i].name);
		if (!name)
			return -ENOMEM;
		range_of(c, &maps[i], k, r);
		r->name = name;
		c->n++;
		t = &c->totals[k];
		state_add(&t->before, &maps[i]);
		t->after = t->before;
		if (r->result == HK_COLLAPSE_NOT_ASKED) {
			t->asked++;
			t->asked_kb += (r->to - r->from) / 1024;
		}
	}
	return 0;
}

/* An error that concerns the whole process, not one range. */
static bool process_error(int e)
{
	return e == ESRCH || e == EACCES || e == EPERM || e == EINTR || e == EBADF || e == EFAULT ||
	       e == ENOSYS;
}

/* The next batch from range *next on: the ranges to ask, their indexes. */
static size_t batch(const struct hk_collapse *c, size_t *next, struct iovec *iov, size_t *idx)
{
	size_t nb = 0;

	for (; *next < c->n && nb < HKL_COLLAPSE_IOV_MAX; (*next)++) {
		const struct hk_collapse_range *r = &c->ranges[*next];

		if (r->result != HK_COLLAPSE_NOT_ASKED)
			continue;
		iov[nb].iov_base = (void *)(uintptr_t)r->from;
		iov[nb].iov_len = (size_t)(r->to - r->from);
		idx[nb++] = *next;
	}
	return nb;
}

int hkl_collapse_ask(struct hk_collapse *c, int pidfd, hkl_madvise_fn *fn)
{
	size_t idx[HKL_COLLAPSE_IOV_MAX], next = 0, nb;
	struct iovec *v = calloc(HKL_COLLAPSE_IOV_MAX, sizeof(*v));

	if (!v)
		return -ENOMEM;
	while ((nb = batch(c, &next, v, idx)) > 0) {
		ssize_t done = fn(pidfd, v, nb, MADV_COLLAPSE, 0);
		size_t k = 0;

		if (done < 0) {
			int e = errno;

			if (process_error(e)) {
				free(v);
				return -e;
			}
			/* Nothing advised: the first range is the one refused. */
			c->ranges[idx[0]].result = HK_COLLAPSE_REFUSED;
			c->ranges[idx[0]].error = e;
			k = 1;
		} else {
			/* Whole ranges advised in order; the call stopped before the next one. */
			for (; k < nb && (size_t)done >= v[k].iov_len; k++) {
				done -= (ssize_t)v[k].iov_len;
				c->ranges[idx[k]].result = HK_COLLAPSE_COLLAPSED;
			}
			if (k == 0) {
				/* Advised nothing and said nothing: never asked again. */
				c->ranges[idx[0]].result = HK_COLLAPSE_REFUSED;
				c->ranges[idx[0]].error = EIO;
				k = 1;
			}
		}
		/* Asked again from the first range not done. */
		next = k < nb ? idx[k] : next;
	}
	free(v);
	return 0;
}

/* Why the kernel refused r, from its errno and what smaps and the process say. */
static enum hk_collapse_why refused_why(const struct hk_collapse *c,
					const struct hk_collapse_range *r, bool nh)
{
	enum hk_collapse_why why = predicted_why(c, nh);

	if (why != HK_COLLAPSE_WHY_NONE || r->error != EINVAL)
		return why;
	if (r->kind == HK_COLLAPSE_KIND_TEXT)
		return HK_COLLAPSE_WHY_FILE_THP;
	/* A part without a page table is never collapsed (the kernel's EINVAL). */
	return r->rss_kb_before < (r->to - r->from) / 1024 ? HK_COLLAPSE_WHY_UNTOUCHED
							   : HK_COLLAPSE_WHY_NONE;
}

/* r after, from the mappings of its kind that overlap it now. */
static void range_after(const struct hk_collapse *c, struct hk_collapse_range *r,
			const struct hkc_smap *maps, size_t n)
{
	bool nh = false;

	r->rss_kb_after = r->huge_kb_after = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hkc_smap *m = &maps[i];

		if (m->start >= r->end || m->end <= r->start || chosen_kind(c, m) != (int)r->kind)
			continue;
		r->rss_kb_after += m->rss_kb;
		r->huge_kb_after += huge_kb(m);
		nh |= m->nh;
	}
	if (r->result == HK_COLLAPSE_REFUSED)
		r->why = refused_why(c, r, nh);
	else if (r->result == HK_COLLAPSE_COLLAPSED)
		r->why = HK_COLLAPSE_WHY_NONE;
}

void hkl_collapse_account(struct hk_collapse *c, const struct hkc_smap *maps, size_t n)
{
	for (int k = 0; k < HK_COLLAPSE_NKINDS; k++) {
		c->totals[k].after = (struct hk_collapse_state){0};
		c->totals[k].collapsed = c->totals[k].refused = 0;
	}
	for (size_t i = 0; i < n; i++) {
		int k = chosen_kind(c, &maps[i]);

		if (k >= 0)
			state_add(&c->totals[k].after, &maps[i]);
	}
	for (size_t i = 0; i < c->n; i++) {
		struct hk_collapse_range *r = &c->ranges[i];

		range_after(c, r, maps, n);
		c->totals[r->kind].collapsed += r->result == HK_COLLAPSE_COLLAPSED;
		c->totals[r->kind].refused += r->result == HK_COLLAPSE_REFUSED;
	}
}

/* ---- the process ---- */

static ssize_t sys_process_madvise(int pidfd, const struct iovec *iov, size_t n, int advice,
				   unsigned flags)
{
	return syscall(SYS_process_madvise, pidfd, iov, n, advice, flags);
}

/* Whether the process of pidfd still runs (EPERM: it does, we may not signal it): 0 or -ESRCH. */
static int still_there(int pidfd)
{
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM)
		return 0;
	return -ESRCH;
}

/* The process's pidfd, and whether the kernel lets us collapse it (an empty vector). */
static int open_target(int pid, int *ret_fd, enum hk_collapse_problem *problem)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), e;

	if (fd < 0) {
		/* A thread that leads no process: -ENOENT since Linux 6.9, -EINVAL before. */
		e = errno;
		*problem = e == ESRCH			? HK_COLLAPSE_NO_PROCESS
			   : e == ENOENT || e == EINVAL ? HK_COLLAPSE_NOT_PROCESS
			   : e == ENOSYS		? HK_COLLAPSE_UNSUPPORTED
							: HK_COLLAPSE_NO_PROBLEM;
		return -e;
	}
	/* Nothing advised: the kernel checks the rights and the advice only. */
	if (sys_process_madvise(fd, NULL, 0, MADV_COLLAPSE, 0) < 0) {
		e = errno;
		*problem = e == ESRCH			? HK_COLLAPSE_NO_PROCESS
			   : e == EACCES		? HK_COLLAPSE_NO_PTRACE
			   : e == EPERM			? HK_COLLAPSE_NO_CAP
			   : e == EINVAL || e == ENOSYS ? HK_COLLAPSE_UNSUPPORTED
							: HK_COLLAPSE_NO_PROBLEM;
		close(fd);
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

/* A file of the process's directory; a missing one (the process gone) is -ESRCH. */
static int proc_file(struct hk_ctx *ctx, int dirfd, int pid, const char *name, char **ret)
{
	char dir[32];
	int rc;

	snprintf(dir, sizeof(dir), HK_PROC "/%d", pid);
	rc = hkc_path_read_all_at(&ctx->path, dirfd, dir, name, ret, NULL);
	return rc == -ENOENT ? -ESRCH : rc;
}

/* Its smaps, parsed; then whether it still is the process of pidfd (-1: none to ask). */
static int read_maps(struct hk_ctx *ctx, int dirfd, int pid, int pidfd, struct hkc_smap **maps,
		     size_t *n, enum hk_collapse_problem *problem)
{
	char *buf = NULL;
	int rc = proc_file(ctx, dirfd, pid, "smaps", &buf);

	if (rc == 0) {
		rc = hkc_smaps_parse(buf, maps, n);
		free(buf);
	}
	if (rc == 0 && pidfd >= 0 && (rc = still_there(pidfd)) < 0)
		hkc_smaps_free(*maps, *n);
	if (rc == -ESRCH)
		*problem = HK_COLLAPSE_EXITED;
	else if (rc == -EACCES || rc == -EPERM)
		*problem = HK_COLLAPSE_NO_PTRACE;
	else if (rc < 0)
		*problem = HK_COLLAPSE_UNREAD;
	return rc;
}

/* Its name and whether THP is off for it (status "THP_enabled: 0", Linux 5.0). */
static int read_identity(struct hk_ctx *ctx, int dirfd, struct hk_collapse *c)
{
	char *status = NULL;
	uint64_t on = 1;
	int rc = proc_file(ctx, dirfd, c->pid, "comm", &c->comm);

	if (rc < 0)
		return rc;
	c->comm[strcspn(c->comm, "\n")] = '\0';
	rc = proc_file(ctx, dirfd, c->pid, "status", &status);
	if (rc < 0)
		return rc;
	rc = hkc_kv_find_u64(status, "THP_enabled", &on);
	free(status);
	c->thp_disabled = rc == 0 && on == 0;
	return rc == -ENOENT ? 0 : rc;
}

/* The PMD size: the size of a part (-ENOENT: a kernel without THP). */
static int pmd_size(struct hk_ctx *ctx, uint64_t *ret, enum hk_collapse_problem *problem)
{
	int rc = hkc_path_read_u64f(&ctx->path, ret, HK_SYS_THP "/hpage_pmd_size");

	if (rc == 0 && (*ret == 0 || (*ret & (*ret - 1)) != 0))
		rc = -EINVAL;
	if (rc == -ENOENT)
		*problem = HK_COLLAPSE_UNSUPPORTED;
	return rc;
}

static enum hk_collapse_problem ask_problem(int rc)
{
	return rc == -ESRCH    ? HK_COLLAPSE_EXITED
	       : rc == -EACCES ? HK_COLLAPSE_NO_PTRACE
	       : rc == -EPERM  ? HK_COLLAPSE_NO_CAP
			       : HK_COLLAPSE_NO_PROBLEM;
}

/* Read, choose, ask, read again: the process's directory open, pidfd -1 on a tree. */
static int collapse_run(struct hk_ctx *ctx, struct hk_collapse *c, int pidfd, int dirfd,
			enum hk_collapse_problem *problem)
{
	struct hkc_smap *maps = NULL;
	size_t n = 0;
	int rc = read_identity(ctx, dirfd, c);

	if (rc < 0) {
		*problem = rc == -ESRCH ? HK_COLLAPSE_EXITED : HK_COLLAPSE_UNREAD;
		return rc;
	}
	rc = read_maps(ctx, dirfd, c->pid, pidfd, &maps, &n, problem);
	if (rc < 0)
		return rc;
	rc = hkl_collapse_select(c, maps, n);
	hkc_smaps_free(maps, n);
	if (rc < 0 || c->dry_run)
		return rc;
	hkl_dbg(ctx, "collapse: pid %d, %zu mappings chosen", c->pid, c->n);
	rc = hkl_collapse_ask(c, pidfd, sys_process_madvise);
	if (rc < 0) {
		*problem = ask_problem(rc);
		return rc;
	}
	rc = read_maps(ctx, dirfd, c->pid, pidfd, &maps, &n, problem);
	if (rc < 0)
		return rc;
	hkl_collapse_account(c, maps, n);
	hkc_smaps_free(maps, n);
	return 0;
}

/* The process held and its directory opened after, then collapse_run(). */
static int collapse_pid(struct hk_ctx *ctx, struct hk_collapse *c,
			enum hk_collapse_problem *problem)
{
	int pidfd = -1, dirfd, rc = pmd_size(ctx, &c->pmd_size, problem);

	if (rc == 0 && hk_is_live(ctx))
		rc = open_target(c->pid, &pidfd, problem);
	if (rc < 0)
		return rc;
	dirfd = hkc_path_openf(&ctx->path, O_RDONLY | O_DIRECTORY, HK_PROC "/%d", c->pid);
	if (dirfd < 0) {
		rc = dirfd == -ENOENT ? -ESRCH : dirfd;
		*problem = rc != -ESRCH ? HK_COLLAPSE_UNREAD
			   : pidfd >= 0 ? HK_COLLAPSE_EXITED
					: HK_COLLAPSE_NO_PROCESS;
	} else {
		rc = collapse_run(ctx, c, pidfd, dirfd, problem);
		close(dirfd);
	}
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

HK_EXPORT int hk_collapse_process(struct hk_ctx *ctx, int pid, unsigned flags,
				  struct hk_collapse **ret, enum hk_collapse_problem *problem)
{
	const unsigned kinds = HK_COLLAPSE_HEAP | HK_COLLAPSE_TEXT;
	enum hk_collapse_problem none;
	struct hk_collapse *c;
	int rc;

	if (!problem)
		problem = &none;
	*problem = HK_COLLAPSE_NO_PROBLEM;
	if (!ctx || !ret || pid <= 0 || (flags & ~(kinds | HK_COLLAPSE_DRY_RUN)) ||
	    !(flags & kinds))
		return -EINVAL;
	if (!hk_is_live(ctx) && !(flags & HK_COLLAPSE_DRY_RUN))
		return -EOPNOTSUPP;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pid = pid;
	c->kinds = flags & kinds;
	c->dry_run = (flags & HK_COLLAPSE_DRY_RUN) != 0;
	rc = collapse_pid(ctx, c, problem);
	if (rc < 0) {
		hk_collapse_free(c);
		return rc;
	}
	*ret = c;
	return 0;
}

HK_EXPORT void hk_collapse_free(struct hk_collapse *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free((char *)c->ranges[i].name);
	free(c->ranges);
	free(c->comm);
	free(c);
}

HK_EXPORT const char *hk_collapse_comm(const struct hk_collapse *c)
{
	return c && c->comm ? c->comm : "";
}

HK_EXPORT bool hk_collapse_thp_disabled(const struct hk_collapse *c)
{
	return c && c->thp_disabled;
}

HK_EXPORT uint64_t hk_collapse_pmd_size(const struct hk_collapse *c)
{
	return c ? c->pmd_size : 0;
}

HK_EXPORT size_t hk_collapse_count(const struct hk_collapse *c)
{
	return c ? c->n : 0;
}

HK_EXPORT const struct hk_collapse_range *hk_collapse_range_at(const struct hk_collapse *c,
							       size_t i)
{
	return c && i < c->n ? &c->ranges[i] : NULL;
}

HK_EXPORT const struct hk_collapse_total *hk_collapse_total(const struct hk_collapse *c,
							    enum hk_collapse_kind kind)
{
	if (!c || (unsigned)kind >= HK_COLLAPSE_NKINDS || !(c->kinds & (1u << kind)))
		return NULL;
	return &c->totals[kind];
}
