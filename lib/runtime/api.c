// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The libhugetlbfs application API (hugetlbfs.h), with libhugetlbfs 2.23's
 * semantics (reference §1.4, §7.7), libc only.
 *
 * Sizes and mounts are found once, on first use, and never change after:
 * the strings handed out stay valid for the life of the process. Regions
 * come from anonymous MAP_HUGETLB mappings with the page size in the
 * MAP_HUGE_SHIFT bits, so any size the kernel supports can be the default,
 * with or without a mount. Every region is recorded in a table (mapping
 * start -> length), so that the free functions need not parse
 * /proc/self/maps and refuse what they did not hand out. The table is plain
 * memory: a child of fork() inherits it with the mappings.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "hugetlbfs.h"
#include "internal.h"
#include "regions.h"

/* ---- sizes and mounts ------------------------------------------------- */

struct rt_mount {
	long size;
	char *path;
};

/*
 * What the API found. Filled under cfg.lock, read without it: the numbers
 * are atomic, and mounts are only ever appended (the count published after
 * the entry), never changed or freed, so the strings handed out stay valid.
 * When /proc could not be read (no file descriptor left, a wrapped open),
 * the search runs again at the next call instead of failing for the life of
 * the process.
 */
#define RT_MAX_MOUNTS 64
static struct {
	pthread_mutex_t lock;
	atomic_bool done;
	_Atomic long kernel_default; /* Hugepagesize: of /proc/meminfo, -1 without hugetlb */
	_Atomic long default_size;   /* the library's default, -1 when there is none */
	atomic_bool no_reserve;	     /* HUGETLB_NO_RESERVE=yes */
	struct rt_mount mounts[RT_MAX_MOUNTS];
	atomic_size_t n_mounts;
} cfg = {.lock = PTHREAD_MUTEX_INITIALIZER, .kernel_default = -1, .default_size = -1};

/* rt_msg, keeping errno for the caller. */
#define MSG(level, ...)                                                                            \
	do {                                                                                       \
		int msg_errno_ = errno;                                                            \
		rt_msg(level, __VA_ARGS__);                                                        \
		errno = msg_errno_;                                                                \
	} while (0)

static bool is_hugetlbfs(const struct statfs *sf)
{
	return (uint32_t)sf->f_type == (uint32_t)HUGETLBFS_MAGIC;
}

static const struct rt_mount *mount_for(long size)
{
	size_t n = atomic_load_explicit(&cfg.n_mounts, memory_order_acquire);

	for (size_t i = 0; i < n; i++)
		if (cfg.mounts[i].size == size)
			return &cfg.mounts[i];
	return NULL;
}

/* Register a mount point: the first one of each page size wins. */
static void add_mount(const char *path, bool user)
{
	struct statfs sf;
	size_t n = atomic_load(&cfg.n_mounts);
	char *copy;

	/* 2.23's words: a path statfs cannot read has no page size to detect. */
	if (statfs(path, &sf) < 0 || (is_hugetlbfs(&sf) && sf.f_bsize <= 0)) {
		if (user)
			MSG(RT_WARNING, "Unable to detect page size for path %s", path);
		return;
	}
	if (!is_hugetlbfs(&sf)) {
		if (user)
			MSG(RT_WARNING, "%s is not a hugetlbfs mount point, ignoring", path);
		return;
	}
	if (mount_for((long)sf.f_bsize)) {
		if (user)
			MSG(RT_WARNING, "Mount point already defined for size %li, ignoring %s",
			    (long)sf.f_bsize, path);
		return;
	}
	copy = n < RT_MAX_MOUNTS ? strdup(path) : NULL;
	if (!copy)
		return;
	cfg.mounts[n].size = (long)sf.f_bsize;
	cfg.mounts[n].path = copy;
	atomic_store_explicit(&cfg.n_mounts, n + 1, memory_order_release);
	MSG(RT_DEBUG, "Found hugetlbfs mount point %s for page size %li", path, (long)sf.f_bsize);
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* Undo the kernel's escapes in a mountinfo field, in place: "\040" is a space. */
static void unescape(char *s)
{
	char *w = s;

	for (const char *r = s; *r;) {
		if (r[0] == '\\' && is_octal(r[1]) && is_octal(r[2]) && is_octal(r[3])) {
			*w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/*
 * /proc/self/mountinfo: "id parent maj:min root mountpoint options [optional...] -
 * fstype source superoptions". Any line length.
 */
int rt_hugetlbfs_mounts(bool (*fn)(void *data, const char *mnt), void *data)
{
	char *line = NULL, *save, *tok, *mnt;
	size_t cap = 0;
	bool stop = false;
	FILE *f;
	int i, rc;

	rc = hkc_path_fopenf(rt_path(), &f, HK_PROC_MOUNTINFO);
	if (rc < 0)
		return rc;
	while (!stop && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		mnt = NULL;
		for (i = 0, tok = strtok_r(line, " ", &save); tok;
		     i++, tok = strtok_r(NULL, " ", &save)) {
			if (i == 4)
				mnt = tok;
			if (i > 5 && strcmp(tok, "-") == 0)
				break;
		}
		tok = tok ? strtok_r(NULL, " ", &save) : NULL;
		if (!mnt || !tok || strcmp(tok, "hugetlbfs") != 0)
			continue;
		unescape(mnt);
		stop = fn(data, mnt);
	}
	free(line);
	fclose(f);
	return 0;
}

static bool add_usable_mount(void *data, const char *mnt)
{
	(void)data;
	if (access(mnt, R_OK | W_OK | X_OK) == 0)
		add_mount(mnt, false);
	return false;
}

static bool scan_mountinfo(void)
{
	if (rt_hugetlbfs_mounts(add_usable_mount, NULL) < 0) {
		MSG(RT_WARNING, "Cannot read the mount table: no hugetlbfs mount point found");
		return false;
	}
	return true;
}

/* HUGETLB_PATH=a:b: only these, in this order, no access check. */
static void scan_user_paths(const char *list)
{
	char *copy = strdup(list), *save, *p;

	if (!copy)
		return;
	for (p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
		add_mount(p, true);
	free(copy);
}

static bool kernel_has_size(uint64_t size)
{
	uint64_t *sizes = NULL;
	size_t n = 0;
	bool found = false;

	if (hkc_page_sizes(rt_path(), &sizes, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		found |= sizes[i] == size;
	free(sizes);
	return found;
}

/* Called locked; true when everything could be read (or is known to be absent). */
static bool cfg_init(void)
{
	const char *env;
	uint64_t size;
	long def;
	bool complete = true;
	int rc;

	rc = hkc_default_page_size(rt_path(), &size);
	if (rc == 0 && size <= LONG_MAX)
		atomic_store(&cfg.kernel_default, (long)size);
	else if (rc != -ENOENT)
		complete = false;

	env = secure_getenv("HUGETLB_PATH");
	if (env && *env)
		scan_user_paths(env);
	else if (!scan_mountinfo())
		complete = false;

	env = secure_getenv("HUGETLB_NO_RESERVE");
	atomic_store(&cfg.no_reserve, env && strcasecmp(env, "yes") == 0);

	def = atomic_load(&cfg.kernel_default);
	env = secure_getenv("HUGETLB_DEFAULT_PAGE_SIZE");
	if (env && *env) {
		if (hkc_parse_size_legacy(env, &size) < 0 || size > LONG_MAX) {
			MSG(RT_ERROR, "Unable to determine default huge page size");
			def = -1;
		} else if (hkc_is_pow2(size) && (kernel_has_size(size) || mount_for((long)size))) {
			def = (long)size;
		} else {
			MSG(RT_WARNING, "No mount point found for default huge page size. Using "
					"first available mount point.");
		}
	}
	atomic_store(&cfg.default_size, def);
	MSG(RT_DEBUG, "Default huge page size: %li", def);
	return complete;
}

static void cfg_load(void)
{
	int saved = errno;

	if (!atomic_load_explicit(&cfg.done, memory_order_acquire)) {
		pthread_mutex_lock(&cfg.lock);
		if (!atomic_load(&cfg.done) && cfg_init())
			atomic_store_explicit(&cfg.done, true, memory_order_release);
		pthread_mutex_unlock(&cfg.lock);
	}
	errno = saved;
}

RT_EXPORT long gethugepagesize(void)
{
	cfg_load();
	if (cfg.default_size < 0) {
		errno = ENOSYS;
		return -1;
	}
	errno = 0;
	return cfg.default_size;
}

RT_EXPORT int gethugepagesizes(long pagesizes[], int n_elem)
{
	uint64_t def, *sizes = NULL;
	size_t n = 0;
	int rc, count = 0;

	if (n_elem < 0 || (n_elem > 0 && !pagesizes)) {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	if (pagesizes && n_elem == 0)
		return 0;
	/* No default size in /proc/meminfo: no huge pages at all. */
	rc = hkc_default_page_size(rt_path(), &def);
	if (rc == -ENOENT)
		return 0;
	if (rc == 0)
		rc = hkc_page_sizes(rt_path(), &sizes, &n);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	if (n == 0 || sizes[0] != def) {
		/* The default size has no sysfs directory: it is still a size. */
		if (pagesizes)
			pagesizes[0] = (long)def;
		count = 1;
	}
	for (size_t i = 0; i < n && count < INT_MAX; i++) {
		if (pagesizes && count == n_elem)
			break;
		if (pagesizes)
			pagesizes[count] = (long)sizes[i];
		count++;
	}
	free(sizes);
	return count;
}

RT_EXPORT int getpagesizes(long pagesizes[], int n_elem)
{
	int rc;

	if (n_elem < 0 || (n_elem > 0 && !pagesizes)) {
		errno = EINVAL;
		return -1;
	}
	if (!pagesizes) {
		rc = gethugepagesizes(NULL, 0);
	} else {
		if (n_elem == 0)
			return 0;
		pagesizes[0] = (long)rt_base_page_size();
		rc = gethugepagesizes(pagesizes + 1, n_elem - 1);
	}
	return rc < 0 ? rc : rc + 1;
}

RT_EXPORT int hugetlbfs_test_path(const char *mount)
{
	struct statfs sf;

	if (statfs(mount, &sf) < 0)
		return -1;
	return is_hugetlbfs(&sf);
}

RT_EXPORT const char *hugetlbfs_find_path_for_size(long page_size)
{
	const struct rt_mount *m;

	cfg_load();
	m = mount_for(page_size);
	return m ? m->path : NULL;
}

RT_EXPORT const char *hugetlbfs_find_path(void)
{
	long size = gethugepagesize();

	return size > 0 ? hugetlbfs_find_path_for_size(size) : NULL;
}

RT_EXPORT int hugetlbfs_unlinked_fd_for_size(long page_size)
{
	const char *path = hugetlbfs_find_path_for_size(page_size);
	char name[PATH_MAX];
	int fd, n;

	if (!path) {
		errno = ENOENT;
		return -1;
	}
	n = snprintf(name, sizeof(name), "%s/libhugetlbfs.tmp.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(name)) {
		errno = ENAMETOOLONG;
		MSG(RT_ERROR, "mkstemp() failed: %s", strerror(errno));
		return -1;
	}
	fd = mkstemp(name);
	if (fd < 0) {
		MSG(RT_ERROR, "mkstemp() failed: %s", strerror(errno));
		return -1;
	}
	unlink(name);
	return fd;
}

RT_EXPORT int hugetlbfs_unlinked_fd(void)
{
	long size = gethugepagesize();

	return size > 0 ? hugetlbfs_unlinked_fd_for_size(size) : -1;
}

/* ---- the region table (regions.c) ------------------------------------ */

static struct rt_regions tab = RT_REGIONS_INIT;

/* Cache colouring (GHR_COLOR): the L2 line size and a pseudo-random seed. */
static struct {
	pthread_mutex_t lock;
	unsigned long seed;
	size_t line_size;
} colouring = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t colour_once = PTHREAD_ONCE_INIT;

void rt_api_prefork(void)
{
	pthread_mutex_lock(&cfg.lock);
	rt_regions_lock(&tab);
}

void rt_api_postfork(void)
{
	rt_regions_unlock(&tab);
	pthread_mutex_unlock(&cfg.lock);
}

/* The L2 cache line: sysconf, then sysfs, then 64 bytes. */
static size_t cache_line_size(void)
{
	long l = sysconf(_SC_LEVEL2_CACHE_LINESIZE);
	uint64_t v;

	if (l > 0)
		return (size_t)l;
	if (hkc_path_read_u64f(rt_path(), &v, HK_SYS_CPU0_L2_LINE_SIZE) == 0 && v > 0 && v <= 4096)
		return (size_t)v;
	return 64;
}

static void colour_init(void)
{
	colouring.seed = (unsigned long)time(NULL);
	colouring.line_size = cache_line_size();
}

/*
 * Take out of the table the region that ptr names: its start, or with
 * inside set, any address in the first page of the mapping. false if none.
 */
static bool tab_take(void *ptr, bool inside, struct rt_region *ret)
{
	uintptr_t p = (uintptr_t)ptr, cand[3];
	size_t n = 0;

	cand[n++] = p;
	if (inside) {
		cand[n++] = p & ~((uintptr_t)rt_base_page_size() - 1);
		if (cfg.default_size > 0)
			cand[n++] = p & ~((uintptr_t)cfg.default_size - 1);
	}
	return rt_regions_take(&tab, cand, n, p, ret);
}

/*
 * With GHR_COLOR: an offset of k cache lines within the bytes the rounding
 * wastes, k pseudo-random (libhugetlbfs's cachecolor).
 */
static size_t colour_offset(size_t len, size_t wastage)
{
	size_t lines, line;

	pthread_once(&colour_once, colour_init);
	pthread_mutex_lock(&colouring.lock);
	lines = wastage / colouring.line_size;
	if (!lines) {
		pthread_mutex_unlock(&colouring.lock);
		return 0;
	}
	line = colouring.seed % lines;
	colouring.seed += len % lines;
	pthread_mutex_unlock(&colouring.lock);
	MSG(RT_DEBUG, "Using line offset %zu of %zu from start", line, lines);
	return line * colouring.line_size;
}

/* ---- allocation ------------------------------------------------------- */

static int round_up(size_t len, size_t page, size_t *ret)
{
	if (len > SIZE_MAX - (page - 1))
		return -ENOMEM;
	*ret = (len + page - 1) & ~(page - 1);
	return 0;
}

/* Anonymous private huge pages of the default size; the mapped length in *maplen. */
static void *map_huge(size_t len, ghp_t flags, size_t *maplen)
{
	int mflags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB;
	size_t page;
	void *p;
	int rc;

	cfg_load();
	if (cfg.default_size <= 0) {
		rc = -ENOSYS;
	} else {
		page = (size_t)cfg.default_size;
		rc = round_up(len, page, maplen);
		mflags |= __builtin_ctzl(page) << MAP_HUGE_SHIFT;
		if (cfg.no_reserve)
			mflags |= MAP_NORESERVE;
	}
	if (rc == 0) {
		p = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, mflags, -1, 0);
		if (p != MAP_FAILED)
			return p;
		rc = -errno;
	}
	errno = -rc;
	MSG(RT_WARNING, "get_huge_pages: New region mapping failed (flags: 0x%lx): %s", flags,
	    strerror(-rc));
	return NULL;
}

/* Record a new mapping; on failure it is unmapped and NULL returned. */
static void *track(void *map, size_t maplen, size_t page, size_t len, ghr_t colour)
{
	struct rt_region r = {(uintptr_t)map, maplen, page};
	size_t off = 0;
	int rc;

	rc = rt_regions_add(&tab, &r);
	if (rc == 0 && colour)
		off = colour_offset(len, maplen - len);
	if (rc < 0) {
		munmap(map, maplen);
		errno = -rc;
		return NULL;
	}
	/* A child of fork() must not need huge pages to write to it. */
	if (page > rt_base_page_size())
		rt_fork_watch();
	return (char *)map + off;
}

RT_EXPORT void *get_huge_pages(size_t len, ghp_t flags)
{
	size_t maplen;
	void *p;

	if (flags & GHR_MASK)
		MSG(RT_ERROR, "Improper use of GHR_* in get_huge_pages()");
	p = map_huge(len, flags, &maplen);
	if (!p)
		return NULL;
	return track(p, maplen, (size_t)cfg.default_size, len, 0);
}

RT_EXPORT void *get_hugepage_region(size_t len, ghr_t flags)
{
	size_t maplen, page = 0;
	void *p;

	if (flags & GHP_MASK)
		MSG(RT_ERROR, "Improper use of GHP_* in get_hugepage_region()");
	p = map_huge(len, GHP_DEFAULT, &maplen);
	if (p) {
		page = (size_t)cfg.default_size;
	} else if (flags & GHR_FALLBACK) {
		MSG(RT_DEBUG, "get_hugepage_region: Falling back to base pages");
		page = rt_base_page_size();
		if (round_up(len, page, &maplen) < 0) {
			errno = ENOMEM;
		} else {
			p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
			if (p == MAP_FAILED)
				p = NULL;
		}
		if (!p)
			MSG(RT_WARNING, "Base page fallback failed: %s", strerror(errno));
	}
	if (!p)
		return NULL;
	if (maplen != len && !(flags & GHR_COLOR))
		MSG(RT_DEBUG, "get_hugepage_region: Wasted %zu bytes due to alignment",
		    maplen - len);
	return track(p, maplen, page, len, flags & GHR_COLOR);
}

static void release(void *ptr, bool inside, const char *who)
{
	struct rt_region r;

	if (!ptr)
		return;
	if (!tab_take(ptr, inside, &r)) {
		MSG(RT_ERROR, "%s: invalid or double free of %p", who, ptr);
		return;
	}
	if (munmap((void *)r.start, r.len) < 0)
		MSG(RT_WARNING, "%s: munmap of %p failed: %s", who, (void *)r.start,
		    strerror(errno));
}

RT_EXPORT void free_huge_pages(void *ptr)
{
	release(ptr, false, "free_huge_pages");
}

RT_EXPORT void free_hugepage_region(void *ptr)
{
	release(ptr, true, "free_hugepage_region");
}
