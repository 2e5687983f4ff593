// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Who holds huge pages: processes (their smaps), SysV segments, files on
 * hugetlbfs mounts and hugetlb cgroups, and the totals against the pools.
 *
 * Each page is counted once: a file's pages via the file, a segment's via the
 * segment, anonymous ones via the first process that maps them (a shared or
 * forked mapping has one inode in every process). On the running system a
 * mapping is matched to a file by device and inode; in a sysroot tree, whose
 * files are plain copies, by path.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"
#include "smaps.h"
#include "usage.h"
#include "walk.h"

/*
 * Bounds of the walks: a hostile tree cannot keep hugeadm busy for ever. Each
 * mount and the cgroup tree have their own, so that files on one mount hide
 * neither another mount's nor the cgroups; a bound reached is counted as
 * unread and said.
 */
const struct hkc_usage_limits hkc_usage_limits_default = {
	.mount_entries = 1000000,
	.mount_depth = 32,
	.cgroups = 100000,
	.cgroup_depth = 16,
};
/* A hugetlb cgroup limit this high is none (PAGE_COUNTER_MAX pages, 2^62 bytes and more). */
#define CG_UNLIMITED (UINT64_C(1) << 62)

struct file_id {
	unsigned major, minor;
	uint64_t ino;
	const char *path; /* sysroot trees: matched by path */
};

struct hk_usage {
	struct hk_usage_process *procs;
	size_t n_procs;
	struct hk_usage_shm *shm;
	size_t n_shm;
	struct hk_usage_file *files;
	struct file_id *file_ids;
	size_t n_files;
	struct hk_usage_cgroup *cgroups;
	size_t n_cgroups;
	struct hk_usage_total *totals;
	size_t n_totals;
	unsigned unread[3];
	/* Anonymous (and unmatched) hugetlb inodes already counted. */
	struct file_id *seen;
	size_t n_seen;
	const struct hkc_usage_limits *lim;
	size_t entries;	   /* walked so far on the current mount */
	bool entries_full; /* its bound reached, said once */
	size_t cg_dirs;	   /* cgroup directories walked */
};

static int grow(void *pp, size_t n, size_t elem)
{
	void **p = pp;
	void *t;

	if (n & (n - 1) && n > 8)
		return 0;
	t = realloc(*p, (n < 8 ? 8 : n * 2) * elem);
	if (!t)
		return -ENOMEM;
	*p = t;
	return 0;
}

HK_EXPORT void hk_usage_unref(struct hk_usage *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n_procs; i++)
		free((char *)u->procs[i].comm);
	for (size_t i = 0; i < u->n_files; i++)
		free((char *)u->files[i].path);
	for (size_t i = 0; i < u->n_cgroups; i++)
		free((char *)u->cgroups[i].path);
	free(u->procs);
	free(u->shm);
	free(u->files);
	free(u->file_ids);
	free(u->cgroups);
	free(u->totals);
	free(u->seen);
	free(u);
}

/* Files */

static int add_file(struct hk_usage *u, const char *path, const struct stat *st, uint64_t page_size)
{
	uint64_t bytes = (uint64_t)st->st_blocks * 512;
	struct hk_usage_file *f;

	if (bytes == 0)
		return 0; /* holds no page */
	for (size_t i = 0; i < u->n_files; i++)
		if (u->file_ids[i].major == major(st->st_dev) &&
		    u->file_ids[i].minor == minor(st->st_dev) && u->file_ids[i].ino == st->st_ino)
			return 0; /* the same file through a second mount */
	if (grow(&u->files, u->n_files, sizeof(*u->files)) < 0 ||
	    grow(&u->file_ids, u->n_files, sizeof(*u->file_ids)) < 0)
		return -ENOMEM;
	f = &u->files[u->n_files];
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->uid = st->st_uid;
	f->page_size = page_size;
	f->pages = (bytes + page_size - 1) / page_size;
	f->mapped = false;
	u->file_ids[u->n_files] =
		(struct file_id){major(st->st_dev), minor(st->st_dev), st->st_ino, f->path};
	u->n_files++;
	return 0;
}

/* Every regular file below the open directory dirfd (closed here), on device dev only. */
static int walk_dir(struct hk_ctx *ctx, struct hk_usage *u, int dirfd, const char *path, dev_t dev,
		    uint64_t page_size, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dirfd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d))) {
		struct stat st;
		char *sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (u->entries >= u->lim->mount_entries) {
			if (!u->entries_full) {
				u->entries_full = true;
				u->unread[HK_USAGE_UNREAD_DIRS]++;
				hkl_warn(
					ctx,
					"%s: more than %zu entries on this mount, the rest not counted",
					path, u->lim->mount_entries);
			}
			break;
		}
		u->entries++;
		/* fstatat, never open: a FIFO or a device is never opened, a link never followed. */
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* removed meanwhile */
		if (asprintf(&sub, "%s/%s", strcmp(path, "/") ? path : "", de->d_name) < 0)
			return closedir(d), -ENOMEM;
		if (S_ISREG(st.st_mode)) {
			rc = add_file(u, sub, &st, page_size);
		} else if (S_ISDIR(st.st_mode) && st.st_dev == dev &&
			   depth >= u->lim->mount_depth) {
			u->unread[HK_USAGE_UNREAD_DIRS]++;
			hkl_warn(ctx, "%s: more than %d directories deep, not walked", sub,
				 u->lim->mount_depth);
		} else if (S_ISDIR(st.st_mode) && st.st_dev == dev) {
			int fd = openat(dirfd, de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC |
						O_NONBLOCK);

			if (fd < 0) {
				if (errno == EACCES || errno == EPERM) {
					u->unread[HK_USAGE_UNREAD_DIRS]++;
					hkl_info(ctx, "%s: %s", sub, strerror(errno));
				}
			} else {
				rc = walk_dir(ctx, u, fd, sub, dev, page_size, depth + 1);
			}
		}
		free(sub);
	}
	closedir(d);
	return rc;
}

/* The mount point, no symbolic link followed on the way (root must not be led elsewhere). */
static int open_mount(struct hk_ctx *ctx, const char *target)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

	if (!hk_is_live(ctx))
		return hkc_path_openf(&ctx->path, flags, "%s",
				      target[0] == '/' ? target + 1 : target);
	return hkc_walk_open(target, flags);
}

static int read_files(struct hk_ctx *ctx, struct hk_usage *u)
{
	struct hk_mounts *ms;
	int rc = hk_mounts_read(ctx, &ms);

	if (rc < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < hk_mounts_count(ms); i++) {
		const char *target = hk_mount_target(ms, i);
		struct statfs sf;
		struct stat st;
		int fd;

		if (hk_mount_page_size(ms, i) == 0) {
			u->unread[HK_USAGE_UNREAD_DIRS]++;
			hkl_warn(
				ctx,
				"%s: no huge page size known for this mount, its files not counted",
				target);
			continue;
		}
		fd = open_mount(ctx, target);
		if (fd < 0) {
			if (fd == -EACCES || fd == -EPERM)
				u->unread[HK_USAGE_UNREAD_DIRS]++;
			hkl_info(ctx, "%s: %s", target, strerror(-fd));
			continue;
		}
		if (fstat(fd, &st) < 0 ||
		    (hk_is_live(ctx) && (fstatfs(fd, &sf) < 0 || sf.f_type != HUGETLBFS_MAGIC))) {
			hkl_info(ctx, "%s: not the hugetlbfs mount any more", target);
			close(fd);
			continue;
		}
		u->entries = 0;
		u->entries_full = false;
		rc = walk_dir(ctx, u, fd, target, st.st_dev, hk_mount_page_size(ms, i), 0);
	}
	hk_mounts_unref(ms);
	return rc;
}

/* SysV segments */

/* A line of /proc/sysvipc/shm, and the largest mapping of it on huge pages seen. */
struct shm_line {
	long long key, id;
	unsigned long long size, nattch, uid, rss, swap;
	uint64_t page_size, mapped_pages;
	bool base_mapped; /* a readable process maps it on base pages: not huge */
};

/* key shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime rss swap */
static bool parse_shm_line(const char *line, struct shm_line *s)
{
	unsigned long long cpid, lpid, gid, cuid, cgid, at, dt, ct;
	unsigned perms;

	return sscanf(line,
		      "%lld %lld %o %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		      &s->key, &s->id, &perms, &s->size, &cpid, &lpid, &s->nattch, &s->uid, &gid,
		      &cuid, &cgid, &at, &dt, &ct, &s->rss, &s->swap) == 16;
}

struct shm_table {
	struct shm_line *l;
	size_t n;
};

static int read_shm(struct hk_ctx *ctx, struct shm_table *t)
{
	char *buf;
	int rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC_SYSVIPC_SHM);

	if (rc == -ENOENT)
		return 0; /* a kernel without SysV IPC */
	if (rc < 0)
		return rc;
	for (const char *l = strchr(buf, '\n'); rc == 0 && l && l[1]; l = strchr(l + 1, '\n')) {
		struct shm_line s = {0};

		if (!parse_shm_line(l + 1, &s))
			continue;
		rc = grow(&t->l, t->n, sizeof(*t->l));
		if (rc == 0)
			t->l[t->n++] = s;
	}
	free(buf);
	return rc;
}

/*
 * The segment's pages from its rss, never more than its size holds. Kernels
 * with hugetlb folios in the page cache count each page's base pages twice
 * over (rss = pages x size x size / base): such an rss is scaled back.
 */
static uint64_t shm_pages(const struct shm_line *s, uint64_t page_size, uint64_t base)
{
	uint64_t by_rss = s->rss / page_size, by_size = (s->size + page_size - 1) / page_size;

	if (by_rss > by_size && base && page_size > base)
		by_rss /= page_size / base;
	return by_rss < by_size ? by_rss : by_size;
}

/* Processes */

static bool same_id(const struct file_id *a, const struct hkc_smap *m, bool live)
{
	if (!live)
		return a->path && strncmp(a->path, m->name, strlen(a->path)) == 0 &&
		       (m->name[strlen(a->path)] == '\0' || m->name[strlen(a->path)] == ' ');
	return a->major == m->dev_major && a->minor == m->dev_minor && a->ino == m->inode;
}

/* Count this mapping's pages once over all processes: 0 when already counted. */
static int count_once(struct hk_usage *u, const struct hkc_smap *m, uint64_t pages, uint64_t *ret)
{
	for (size_t i = 0; i < u->n_seen; i++) {
		if (same_id(&u->seen[i], m, true)) {
			*ret = 0;
			return 0;
		}
	}
	if (grow(&u->seen, u->n_seen, sizeof(*u->seen)) < 0)
		return -ENOMEM;
	u->seen[u->n_seen++] = (struct file_id){m->dev_major, m->dev_minor, m->inode, NULL};
	*ret = pages;
	return 0;
}

static int add_row(struct hk_usage *u, int pid, uint32_t uid, const char *comm, uint64_t ps,
		   enum hk_usage_kind kind, uint64_t pages, uint64_t accounted)
{
	struct hk_usage_process *r;

	for (size_t i = 0; i < u->n_procs; i++) {
		r = &u->procs[i];
		if (r->pid == pid && r->page_size == ps && r->kind == kind) {
			r->pages += pages;
			r->accounted += accounted;
			return 0;
		}
	}
	if (grow(&u->procs, u->n_procs, sizeof(*u->procs)) < 0)
		return -ENOMEM;
	r = &u->procs[u->n_procs];
	*r = (struct hk_usage_process){pid, uid, strdup(comm), ps, kind, pages, accounted, -1};
	if (!r->comm)
		return -ENOMEM;
	u->n_procs++;
	return 0;
}

/*
 * A process's directory, open: its files are read through this one fd, so a
 * pid reused during the walk never mixes two processes' files.
 */
struct proc_dir {
	struct hk_ctx *ctx;
	int fd;
	char path[32]; /* HK_PROC "/" PID, for the messages */
};

static int proc_read(const struct proc_dir *pd, const char *name, char **ret)
{
	return hkc_path_read_all_at(&pd->ctx->path, pd->fd, pd->path, name, ret, NULL);
}

/* Uid from status ("Uid:\t1000\t1000..."); comm without its newline. */
static int proc_identity(const struct proc_dir *pd, uint32_t *uid, char **comm)
{
	char *status, *p;
	int rc = proc_read(pd, "status", &status);

	if (rc < 0)
		return rc;
	p = strstr(status, "\nUid:");
	*uid = p ? (uint32_t)strtoul(p + 5, NULL, 10) : UINT32_MAX;
	free(status);
	rc = proc_read(pd, "comm", comm);
	if (rc == 0)
		(*comm)[strcspn(*comm, "\n")] = '\0';
	return rc;
}

/* numa_maps: the node of all the process's huge pages (-1 unknown, -2 several). */
static int proc_node(const struct proc_dir *pd)
{
	char *buf, *p;
	int node = -1;

	if (proc_read(pd, "numa_maps", &buf) < 0)
		return -1;
	for (char *line = buf; line && *line; line = p ? p + 1 : NULL) {
		p = strchr(line, '\n');
		if (p)
			*p = '\0';
		if (!strstr(line, " huge"))
			continue;
		for (char *n = strstr(line, " N"); n; n = strstr(n + 1, " N")) {
			char *end;
			long k = strtol(n + 2, &end, 10);

			if (end == n + 2 || *end != '=')
				continue;
			node = node == -1 || node == k ? (int)k : -2;
		}
	}
	free(buf);
	return node;
}

/* The segment whose id is this inode number is mapped on base pages: it is no huge one. */
static void shm_mark_base(struct shm_table *shm, uint64_t inode)
{
	for (size_t k = 0; k < shm->n; k++)
		if ((uint64_t)shm->l[k].id == inode)
			shm->l[k].base_mapped = true;
}

/*
 * Whether any of the n mappings is on huge pages; SysV segments that a
 * mapping has on base pages are marked as such.
 */
static bool scan_maps(const struct hkc_smap *maps, size_t n, struct shm_table *shm,
		      uint64_t base_kb)
{
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		any |= hkc_smap_is_hugetlb(&maps[i], base_kb) && hkc_smap_hugetlb_kb(&maps[i]) > 0;
		if (hkc_smap_sysv_key(&maps[i]) >= 0 && !hkc_smap_is_hugetlb(&maps[i], base_kb) &&
		    maps[i].kernel_page_kb == base_kb)
			shm_mark_base(shm, maps[i].inode);
	}
	return any;
}

/*
 * A huge page mapping's kind (its pages of ps bytes: pages); *matched when a
 * SysV segment or a file of the usage has it (and counts its pages).
 */
static enum hk_usage_kind map_kind(struct hk_usage *u, const struct hk_ctx *ctx,
				   struct shm_table *shm, const struct hkc_smap *m, uint64_t ps,
				   uint64_t pages, bool *matched)
{
	if (hkc_smap_sysv_key(m) >= 0) {
		/* The segment's inode number is its id; counted via the segment. */
		for (size_t k = 0; k < shm->n; k++) {
			struct shm_line *sl = &shm->l[k];

			if ((uint64_t)sl->id != m->inode)
				continue;
			*matched = true;
			sl->page_size = ps;
			if (pages > sl->mapped_pages)
				sl->mapped_pages = pages;
		}
		return HK_USAGE_SYSV;
	}
	if (strncmp(m->name, "/anon_hugepage", 14) == 0 || strncmp(m->name, "/memfd:", 7) == 0 ||
	    m->name[0] != '/')
		return m->perms[3] == 'p' ? HK_USAGE_PRIVATE : HK_USAGE_SHARED;
	for (size_t f = 0; f < u->n_files; f++) {
		if (same_id(&u->file_ids[f], m, hk_is_live(ctx))) {
			u->files[f].mapped = true;
			*matched = true;
		}
	}
	return HK_USAGE_FILE;
}

/* One process, its directory open. */
static int add_process_at(struct hk_usage *u, const struct proc_dir *pd, int pid,
			  struct shm_table *shm, uint64_t base_kb)
{
	struct hk_ctx *ctx = pd->ctx;
	struct hkc_smap *maps = NULL;
	size_t n = 0;
	char *buf = NULL, *comm = NULL;
	uint32_t uid = 0;
	size_t first = u->n_procs;
	int rc = proc_read(pd, "smaps", &buf);

	if (rc == -EACCES || rc == -EPERM) {
		u->unread[HK_USAGE_UNREAD_PROCESSES]++;
		return 0;
	}
	if (rc < 0)
		return 0; /* gone (-ENOENT, -ESRCH) or a kernel thread's: nothing to count */
	rc = hkc_smaps_parse(buf, &maps, &n);
	free(buf);
	if (rc < 0) {
		hkl_warn(ctx, "cannot parse the smaps of process %d: %s", pid, strerror(-rc));
		return rc == -ENOMEM ? rc : 0;
	}
	if (!scan_maps(maps, n, shm, base_kb))
		goto out;
	/* Read after smaps: a pid reused meanwhile shows up here as gone or as another name. */
	if (proc_identity(pd, &uid, &comm) < 0)
		goto out;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct hkc_smap *m = &maps[i];
		uint64_t ps = m->kernel_page_kb * 1024, pages, acc = 0;
		enum hk_usage_kind kind;
		bool matched = false;

		if (!hkc_smap_is_hugetlb(m, base_kb) || hkc_smap_hugetlb_kb(m) == 0 || ps == 0)
			continue;
		pages = hkc_smap_hugetlb_kb(m) * 1024 / ps;
		kind = map_kind(u, ctx, shm, m, ps, pages, &matched);
		if (!matched)
			rc = count_once(u, m, pages, &acc);
		if (rc == 0)
			rc = add_row(u, pid, uid, comm, ps, kind, pages, acc);
	}
	if (rc == 0 && u->n_procs > first) {
		int node = proc_node(pd);

		for (size_t i = first; i < u->n_procs; i++)
			u->procs[i].node = node;
	}
out:
	free(comm);
	hkc_smaps_free(maps, n);
	return rc;
}

static int add_process(struct hk_ctx *ctx, struct hk_usage *u, int pid, struct shm_table *shm,
		       uint64_t base_kb)
{
	struct proc_dir pd = {.ctx = ctx};
	int rc;

	snprintf(pd.path, sizeof(pd.path), HK_PROC "/%d", pid);
	pd.fd = hkc_path_openf(&ctx->path, O_RDONLY | O_DIRECTORY, "%s", pd.path);
	if (pd.fd == -EACCES || pd.fd == -EPERM) {
		u->unread[HK_USAGE_UNREAD_PROCESSES]++;
		return 0;
	}
	if (pd.fd < 0)
		return 0; /* gone */
	rc = add_process_at(u, &pd, pid, shm, base_kb);
	close(pd.fd);
	return rc;
}
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* In pid order: the oldest of the processes sharing a mapping is the one it is counted for. */
static int read_processes(struct hk_ctx *ctx, struct hk_usage *u, struct shm_table *shm)
{
	struct dirent *de;
	uint64_t base;
	int *pids = NULL;
	size_t n = 0;
	DIR *d;
	int rc = hkl_ctx_base_size(ctx, &base);

	if (rc < 0)
		return rc;
	rc = hkc_path_opendirf(&ctx->path, &d, HK_PROC);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	while (rc == 0 && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || pid <= 0 || pid > INT32_MAX)
			continue;
		rc = grow(&pids, n, sizeof(*pids));
		if (rc == 0)
			pids[n++] = (int)pid;
	}
	closedir(d);
	if (n)
		qsort(pids, n, sizeof(*pids), cmp_int);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = add_process(ctx, u, pids[i], shm, base / 1024);
	free(pids);
	return rc;
}

/*
 * Segments on huge pages: those a process maps with a huge page size, and
 * those no readable process maps whose rss is whole default-size pages (the
 * table does not say SHM_HUGETLB): inferred, possibly huge. A segment that a
 * readable process maps on base pages is not huge, whatever its rss.
 */
static int add_segments(struct hk_ctx *ctx, struct hk_usage *u, const struct shm_table *shm)
{
	uint64_t def = 0, base = 0;

	hkl_ctx_default_size(ctx, &def);
	hkl_ctx_base_size(ctx, &base);
	for (size_t k = 0; k < shm->n; k++) {
		const struct shm_line *s = &shm->l[k];
		struct hk_usage_shm *sh;
		uint64_t ps = s->page_size, pages;
		bool inferred = false;

		if (ps == 0) {
			if (s->base_mapped || def == 0 || s->rss == 0 || s->rss % def || s->swap)
				continue;
			ps = def;
			inferred = true;
		}
		pages = shm_pages(s, ps, base);
		if (s->mapped_pages > pages)
			pages = s->mapped_pages;
		if (grow(&u->shm, u->n_shm, sizeof(*u->shm)) < 0)
			return -ENOMEM;
		sh = &u->shm[u->n_shm++];
		*sh = (struct hk_usage_shm){(int)s->id, (int32_t)s->key, (uint32_t)s->uid, s->size,
					    ps,		pages,		 s->nattch,	   inferred,
					    !inferred};
	}
	return 0;
}

/*
 * Cgroups. v2: hugetlb.<2MB>.current, .max, .rsvd.current, .rsvd.max and
 * .events in each group. v1: hugetlb.<2MB>.usage_in_bytes, .limit_in_bytes,
 * .failcnt and their rsvd. twins.
 */

static const struct hkc_cg_hier cg_v1 = {HK_SYS_CGROUP_HUGETLB_V1, 1,
					 "usage_in_bytes",	   "limit_in_bytes",
					 "rsvd.usage_in_bytes",	   "rsvd.limit_in_bytes"};

void hkc_cg_size_name(char *buf, size_t sz, uint64_t size)
{
	if (size >= (1ULL << 30) && size % (1ULL << 30) == 0)
		snprintf(buf, sz, "%" PRIu64 "GB", size >> 30);
	else if (size >= (1ULL << 20) && size % (1ULL << 20) == 0)
		snprintf(buf, sz, "%" PRIu64 "MB", size >> 20);
	else
		snprintf(buf, sz, "%" PRIu64 "KB", size >> 10);
}

/* A counter, or "max" as UINT64_MAX. */
static int cg_read(struct hk_ctx *ctx, const char *dir, const char *sz, const char *what,
		   uint64_t *ret)
{
	char *v;
	int rc = hkc_path_read_stringf(&ctx->path, &v, "%s/hugetlb.%s.%s", dir, sz, what);

	if (rc < 0)
		return rc;
	if (strcmp(v, "max") == 0)
		*ret = UINT64_MAX;
	else
		rc = hkc_parse_u64_strict(v, ret);
	/* Some kernels write no limit as the page counter's largest value, not "max" (v1 always). */
	if (rc == 0 && *ret >= CG_UNLIMITED)
		*ret = UINT64_MAX;
	free(v);
	return rc;
}

/* The "max" key of hugetlb.<size>.events ("max 3"): refused charges; -ENOENT without the file. */
static int cg_read_events(struct hk_ctx *ctx, const char *dir, const char *sz, uint64_t *ret)
{
	char *buf, *line;
	int rc = hkc_path_read_allf(&ctx->path, &buf, NULL, "%s/hugetlb.%s.events", dir, sz);

	if (rc < 0)
		return rc;
	rc = -EINVAL;
	for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t len = strcspn(line, "\n");
		char num[32];

		if (strncmp(line, "max ", 4) != 0 || len - 4 >= sizeof(num))
			continue;
		memcpy(num, line + 4, len - 4);
		num[len - 4] = '\0';
		rc = hkc_parse_u64_strict(num, ret);
		break;
	}
	free(buf);
	return rc;
}

/*
 * v1's failures: hugetlb.<size>.failcnt plus .rsvd.failcnt where the kernel
 * has it, as v2's events "max" counts refused faults and reservations both.
 * (v1 counts a failure at the group whose limit refused it, v2 at the group
 * that charged and its parents.) -ENOENT without failcnt.
 */
static int cg_read_failcnt(struct hk_ctx *ctx, const char *dir, const char *sz, uint64_t *ret)
{
	uint64_t rsvd;
	int rc = hkc_path_read_u64f(&ctx->path, ret, "%s/hugetlb.%s.failcnt", dir, sz);

	if (rc == 0 &&
	    hkc_path_read_u64f(&ctx->path, &rsvd, "%s/hugetlb.%s.rsvd.failcnt", dir, sz) == 0 &&
	    __builtin_add_overflow(*ret, rsvd, ret))
		*ret = UINT64_MAX;
	if (rc == 0 && *ret == UINT64_MAX)
		*ret = UINT64_MAX - 1; /* UINT64_MAX is "unknown" */
	return rc;
}

/* Whether a cgroup.controllers line lists the controller name. */
static bool cg_listed(const char *line, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = line; (p = strstr(p, name)); p += len)
		if ((p == line || p[-1] == ' ') &&
		    (p[len] == '\0' || p[len] == ' ' || p[len] == '\n'))
			return true;
	return false;
}

bool hkc_cg_hierarchy(struct hk_ctx *ctx, struct hkc_cg_hier *h)
{
	static const char *const v2[] = {HK_SYS_CGROUP, HK_SYS_CGROUP_UNIFIED};

	*h = (struct hkc_cg_hier){NULL, 2, "current", "max", "rsvd.current", "rsvd.max"};
	for (size_t i = 0; i < sizeof(v2) / sizeof(v2[0]) && !h->root; i++) {
		char *ctl = NULL;

		if (hkc_path_read_stringf(&ctx->path, &ctl, "%s/cgroup.controllers", v2[i]) == 0 &&
		    cg_listed(ctl, "hugetlb"))
			h->root = v2[i];
		free(ctl);
	}
	if (h->root)
		return true;
	if (hkc_path_existsf(&ctx->path, "%s/tasks", cg_v1.root)) {
		*h = cg_v1;
		return true;
	}
	if (!hkc_path_existsf(&ctx->path, HK_SYS_CGROUP "/cgroup.controllers") &&
	    hkc_path_existsf(&ctx->path, HK_SYS_CGROUP_UNIFIED "/cgroup.controllers"))
		h->root = HK_SYS_CGROUP_UNIFIED;
	else
		h->root = HK_SYS_CGROUP;
	return false;
}

static int cg_group(struct hk_ctx *ctx, struct hk_usage *u, const struct hkc_cg_hier *h,
		    const char *dir, const uint64_t *sizes, size_t n_sizes)
{
	/* v1's root group has the files: it limits nothing, and holds what the totals say. */
	if (h->version == 1 && strcmp(dir, h->root) == 0)
		return 0;
	for (size_t i = 0; i < n_sizes; i++) {
		struct hk_usage_cgroup c = {.page_size = sizes[i], .version = h->version};
		char sz[32];
		int rc;

		hkc_cg_size_name(sz, sizeof(sz), sizes[i]);
		rc = cg_read(ctx, dir, sz, h->current, &c.current);
		if (rc == -ENOENT)
			continue; /* the root group, or the controller is off here */
		if (rc == 0)
			rc = cg_read(ctx, dir, sz, h->max, &c.max);
		/* The reservation files came in 5.7: absent is "nothing known". */
		if (rc == 0 && cg_read(ctx, dir, sz, h->rsvd_current, &c.rsvd_current) < 0)
			c.rsvd_current = 0;
		if (rc == 0 && cg_read(ctx, dir, sz, h->rsvd_max, &c.rsvd_max) < 0)
			c.rsvd_max = UINT64_MAX;
		/* Failures: events (5.6, with the v2 controller), failcnt; unknown when missing. */
		if (rc == 0 && (h->version == 1 ? cg_read_failcnt(ctx, dir, sz, &c.events_max)
						: cg_read_events(ctx, dir, sz, &c.events_max)) < 0)
			c.events_max = UINT64_MAX;
		if (rc < 0) {
			u->unread[HK_USAGE_UNREAD_CGROUPS]++;
			hkl_info(ctx, "/%s: hugetlb.%s: %s", dir, sz, strerror(-rc));
			continue;
		}
		if (c.current == 0 && c.rsvd_current == 0 && c.max == UINT64_MAX &&
		    c.rsvd_max == UINT64_MAX)
			continue; /* neither holds nor limits anything */
		if (grow(&u->cgroups, u->n_cgroups, sizeof(*u->cgroups)) < 0)
			return -ENOMEM;
		c.path = strdup(dir + strlen(h->root));
		if (!c.path)
			return -ENOMEM;
		if (!*c.path) {
			free((char *)c.path);
			c.path = strdup("/");
			if (!c.path)
				return -ENOMEM;
		}
		u->cgroups[u->n_cgroups++] = c;
	}
	return 0;
}

static int cg_walk(struct hk_ctx *ctx, struct hk_usage *u, const struct hkc_cg_hier *h,
		   const char *dir, const uint64_t *sizes, size_t n_sizes, int depth)
{
	struct dirent *de;
	DIR *d;
	int rc = hkc_path_opendirf(&ctx->path, &d, "%s", dir);

	if (rc < 0) {
		if (rc != -ENOENT && rc != -ENOTDIR)
			u->unread[HK_USAGE_UNREAD_CGROUPS]++;
		return 0;
	}
	rc = cg_group(ctx, u, h, dir, sizes, n_sizes);
	while (rc == 0 && (de = readdir(d))) {
		char *sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (u->cg_dirs >= u->lim->cgroups) {
			if (u->cg_dirs++ == u->lim->cgroups) {
				u->unread[HK_USAGE_UNREAD_CGROUPS]++;
				hkl_warn(ctx, "/%s: more than %zu cgroups, the rest not read", dir,
					 u->lim->cgroups);
			}
			break;
		}
		if (asprintf(&sub, "%s/%s", dir, de->d_name) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (depth >= u->lim->cgroup_depth) {
			u->unread[HK_USAGE_UNREAD_CGROUPS]++;
			hkl_warn(ctx, "/%s: more than %d cgroups deep, not read", sub,
				 u->lim->cgroup_depth);
		} else {
			u->cg_dirs++;
			rc = cg_walk(ctx, u, h, sub, sizes, n_sizes, depth + 1);
		}
		free(sub);
	}
	closedir(d);
	return rc;
}

/* Totals */

static int add_totals(struct hk_ctx *ctx, struct hk_usage *u, const uint64_t *sizes, size_t n_sizes)
{
	u->totals = calloc(n_sizes ? n_sizes : 1, sizeof(*u->totals));
	if (!u->totals)
		return -ENOMEM;
	for (size_t i = 0; i < n_sizes; i++) {
		struct hk_usage_total *t = &u->totals[u->n_totals];
		struct hk_pool *p;
		int rc = hk_pool_read(ctx, sizes[i], &p);

		if (rc < 0)
			return rc;
		t->page_size = sizes[i];
		t->used = hk_pool_get(p, HK_POOL_NR) - hk_pool_get(p, HK_POOL_FREE);
		if (hk_pool_get(p, HK_POOL_FREE) > hk_pool_get(p, HK_POOL_NR))
			t->used = 0;
		t->reserved = hk_pool_get(p, HK_POOL_RESV);
		t->surplus = hk_pool_get(p, HK_POOL_SURPLUS);
		hk_pool_unref(p);
		for (size_t k = 0; k < u->n_procs; k++)
			if (u->procs[k].page_size == t->page_size)
				t->accounted += u->procs[k].accounted;
		for (size_t k = 0; k < u->n_shm; k++)
			if (u->shm[k].page_size == t->page_size && !u->shm[k].inferred)
				t->accounted += u->shm[k].pages;
		for (size_t k = 0; k < u->n_files; k++)
			if (u->files[k].page_size == t->page_size)
				t->accounted += u->files[k].pages;
		/*
		 * Inferred segments, in id order, each counted only when the pool
		 * holds that many used pages nothing else explains; otherwise (a
		 * segment on base pages whose rss happens to be whole huge pages)
		 * left out of accounted and named in the total.
		 */
		for (size_t k = 0; k < u->n_shm; k++) {
			struct hk_usage_shm *sh = &u->shm[k];

			if (sh->page_size != t->page_size || !sh->inferred)
				continue;
			sh->accounted = t->used >= t->accounted + sh->pages;
			if (sh->accounted)
				t->accounted += sh->pages;
			else
				t->inferred += sh->pages;
		}
		t->difference = (int64_t)t->used - (int64_t)t->accounted;
		u->n_totals++;
	}
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The machine's huge page sizes, ascending. */
static int sizes_ascending(struct hk_ctx *ctx, uint64_t **sizes, size_t *n)
{
	int rc = hk_page_sizes(ctx, sizes, n);

	if (rc == 0)
		qsort(*sizes, *n, sizeof(**sizes), cmp_size);
	return rc;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct hk_usage_file *)a)->path,
		      ((const struct hk_usage_file *)b)->path);
}

static int cmp_cgroup(const void *a, const void *b)
{
	const struct hk_usage_cgroup *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->page_size > y->page_size) - (x->page_size < y->page_size);
}

/* Files and cgroups by name (the walks' order is the directories'); processes are in pid order. */
static void sort_lists(struct hk_usage *u)
{
	if (u->n_files)
		qsort(u->files, u->n_files, sizeof(*u->files), cmp_file);
	if (u->n_cgroups)
		qsort(u->cgroups, u->n_cgroups, sizeof(*u->cgroups), cmp_cgroup);
}

int hkc_usage_read_limited(struct hk_ctx *ctx, const struct hkc_usage_limits *lim,
			   struct hk_usage **ret_usage)
{
	struct shm_table shm = {0};
	struct hk_usage *u = calloc(1, sizeof(*u));
	uint64_t *sizes = NULL;
	size_t n_sizes = 0;
	int rc;

	if (!u)
		return -ENOMEM;
	u->lim = lim;
	rc = sizes_ascending(ctx, &sizes, &n_sizes);
	if (rc == 0)
		rc = read_files(ctx, u);
	if (rc == 0)
		rc = read_shm(ctx, &shm);
	if (rc == 0)
		rc = read_processes(ctx, u, &shm);
	if (rc == 0)
		rc = add_segments(ctx, u, &shm);
	if (rc == 0) {
		struct hkc_cg_hier h;

		hkc_cg_hierarchy(ctx, &h);
		rc = cg_walk(ctx, u, &h, h.root, sizes, n_sizes, 0);
	}
	if (rc == 0)
		rc = add_totals(ctx, u, sizes, n_sizes);
	if (rc == 0)
		sort_lists(u);
	free(shm.l);
	free(sizes);
	if (rc < 0) {
		hk_usage_unref(u);
		return rc;
	}
	*ret_usage = u;
	return 0;
}

int hkl_usage_cgroups_read(struct hk_ctx *ctx, struct hk_usage **ret_usage)
{
	struct hk_usage *u = calloc(1, sizeof(*u));
	struct hkc_cg_hier h;
	uint64_t *sizes = NULL;
	size_t n_sizes = 0;
	int rc;

	if (!u)
		return -ENOMEM;
	u->lim = &hkc_usage_limits_default;
	rc = sizes_ascending(ctx, &sizes, &n_sizes);
	if (rc == 0) {
		hkc_cg_hierarchy(ctx, &h);
		rc = cg_walk(ctx, u, &h, h.root, sizes, n_sizes, 0);
	}
	if (rc == 0)
		sort_lists(u);
	free(sizes);
	if (rc < 0) {
		hk_usage_unref(u);
		return rc;
	}
	*ret_usage = u;
	return 0;
}

HK_EXPORT int hk_usage_read(struct hk_ctx *ctx, struct hk_usage **ret_usage)
{
	return hkc_usage_read_limited(ctx, &hkc_usage_limits_default, ret_usage);
}

HK_EXPORT size_t hk_usage_processes(const struct hk_usage *u, const struct hk_usage_process **ret)
{
	*ret = u->procs;
	return u->n_procs;
}

HK_EXPORT size_t hk_usage_shm(const struct hk_usage *u, const struct hk_usage_shm **ret)
{
	*ret = u->shm;
	return u->n_shm;
}

HK_EXPORT size_t hk_usage_files(const struct hk_usage *u, const struct hk_usage_file **ret)
{
	*ret = u->files;
	return u->n_files;
}

HK_EXPORT size_t hk_usage_cgroups(const struct hk_usage *u, const struct hk_usage_cgroup **ret)
{
	*ret = u->cgroups;
	return u->n_cgroups;
}

HK_EXPORT size_t hk_usage_totals(const struct hk_usage *u, const struct hk_usage_total **ret)
{
	*ret = u->totals;
	return u->n_totals;
}

HK_EXPORT unsigned hk_usage_unread_count(const struct hk_usage *u, enum hk_usage_unread what)
{
	return (unsigned)what < 3 ? u->unread[what] : 0;
}

/* Pages needed */

static uint64_t round_pages(uint64_t bytes, uint64_t ps)
{
	return bytes / ps + (bytes % ps != 0);
}

enum needed_kind {
	NEED_HEAP,
	NEED_ANON,
	NEED_SYSV,
	NEED_HUGETLB,
	NEED_SHARED,
	NEED_KINDS
};

/* Shared anonymous memory: MAP_SHARED|MAP_ANONYMOUS ("/dev/zero (deleted)"), named or not. */
static bool is_shared_anon(const struct hkc_smap *m)
{
	return m->perms[3] == 's' && (strcmp(m->name, "/dev/zero (deleted)") == 0 ||
				      strncmp(m->name, "[anon_shmem:", 12) == 0);
}

/*
 * The bytes of a mapping that huge pages could back, and in which count: the
 * mapping's size (touched or not), 0 for one that counts nowhere. A mapping
 * without access (a guard, a reservation) and a MAP_NORESERVE one (sparse by
 * intent: sanitizer shadows, address space set aside) count nothing; nor do
 * the stack, thread stacks and mappings kept off huge pages (VmFlags "nh":
 * MADV_NOHUGEPAGE, and MAP_STACK since Linux 6.7), nor files.
 */
static uint64_t needed_bytes(const struct hkc_smap *m, uint64_t base, enum needed_kind *kind)
{
	uint64_t size = m->end - m->start;
	bool access = m->perms[0] == 'r' || m->perms[1] == 'w';

	if (hkc_smap_is_hugetlb(m, base / 1024)) {
		/* Its size is set aside from the pool at mmap; MAP_NORESERVE: what it holds. */
		*kind = NEED_HUGETLB;
		return m->nr ? hkc_smap_hugetlb_kb(m) * 1024 : size;
	}
	if (!access || m->nr)
		return 0;
	if (hkc_smap_sysv_key(m) >= 0) {
		*kind = NEED_SYSV;
		return size;
	}
	if (is_shared_anon(m)) {
		*kind = NEED_SHARED;
		return size;
	}
	if (strcmp(m->name, "[heap]") == 0) {
		*kind = NEED_HEAP;
		return size;
	}
	if ((m->name[0] == '\0' || strncmp(m->name, "[anon:", 6) == 0) && m->perms[3] == 'p' &&
	    m->perms[1] == 'w' && !m->nh) {
		*kind = NEED_ANON;
		return size;
	}
	return 0;
}

/*
 * A mapping of a page or more is rounded up to whole pages of size ps; the
 * smaller ones are summed, and the sum rounded up (per count, and once for the
 * total), so that a 1 GiB size does not make each small mapping a gigabyte.
 */
static void needed_of_size(struct hk_pages_needed *o, uint64_t ps, const struct hkc_smap *maps,
			   size_t n, uint64_t base)
{
	uint64_t *count[NEED_KINDS] = {&o->heap_pages, &o->anon_pages, &o->sysv_pages,
				       &o->hugetlb_pages, &o->shared_pages};
	uint64_t small[NEED_KINDS] = {0}, small_all = 0;

	o->page_size = ps;
	for (size_t i = 0; i < n; i++) {
		enum needed_kind kind;
		uint64_t bytes = needed_bytes(&maps[i], base, &kind);

		if (bytes == 0)
			continue;
		if (bytes >= ps) {
			*count[kind] += round_pages(bytes, ps);
			o->pages += round_pages(bytes, ps);
		} else {
			small[kind] += bytes;
			small_all += bytes;
		}
	}
	for (int k = 0; k < NEED_KINDS; k++)
		*count[k] += round_pages(small[k], ps);
	o->pages += round_pages(small_all, ps);
}

/*
 * HK_1.4: struct hk_pages_needed has shared_pages, and each mapping counts at
 * its size, not at its resident memory. hk_pages_needed@HK_1.1, for programs
 * built before, fills the old struct (no shared_pages; its pages include the
 * shared memory) with the same figures.
 */
HK_EXPORT int hkc_pages_needed_v1_4(struct hk_ctx *ctx, int pid, struct hk_pages_needed **ret,
				    size_t *ret_n)
{
	struct hkc_smap *maps = NULL;
	struct hk_pages_needed *out;
	uint64_t *sizes = NULL, base;
	size_t n = 0, n_sizes = 0;
	char *buf;
	int rc;

	if (pid <= 0)
		return -ESRCH;
	rc = hkl_ctx_base_size(ctx, &base);
	if (rc == 0)
		rc = sizes_ascending(ctx, &sizes, &n_sizes);
	if (rc < 0)
		return rc;
	rc = hkc_path_read_allf(&ctx->path, &buf, NULL, HK_PROC "/%d/smaps", pid);
	if (rc == -ENOENT)
		rc = -ESRCH;
	if (rc == 0) {
		rc = hkc_smaps_parse(buf, &maps, &n);
		free(buf);
	}
	out = rc == 0 ? calloc(n_sizes ? n_sizes : 1, sizeof(*out)) : NULL;
	if (rc == 0 && !out)
		rc = -ENOMEM;
	if (rc < 0) {
		free(sizes);
		return rc;
	}
	for (size_t s = 0; s < n_sizes; s++)
		needed_of_size(&out[s], sizes[s], maps, n, base);
	hkc_smaps_free(maps, n);
	free(sizes);
	*ret = out;
	*ret_n = n_sizes;
	return 0;
}
__asm__(".symver hkc_pages_needed_v1_4, hk_pages_needed@@HK_1.4");

HK_EXPORT int hkc_pages_needed_v1_1(struct hk_ctx *ctx, int pid, struct hkc_pages_needed_v1_1 **ret,
				    size_t *ret_n)
{
	struct hk_pages_needed *pn;
	struct hkc_pages_needed_v1_1 *old;
	size_t n;
	int rc = hkc_pages_needed_v1_4(ctx, pid, &pn, &n);

	if (rc < 0)
		return rc;
	old = calloc(n ? n : 1, sizeof(*old));
	if (!old) {
		free(pn);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		old[i] = (struct hkc_pages_needed_v1_1){pn[i].page_size,  pn[i].pages,
							pn[i].heap_pages, pn[i].anon_pages,
							pn[i].sysv_pages, pn[i].hugetlb_pages};
	free(pn);
	*ret = old;
	*ret_n = n;
	return 0;
}
__asm__(".symver hkc_pages_needed_v1_1, hk_pages_needed@HK_1.1");
