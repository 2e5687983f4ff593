// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The files of shared text that libhugekit-rt makes for HUGETLB_SHARE=1,
 * <hugetlbfs mount>/elflink-uid-<uid>/<exe>.<key>.<offset hex> (and
 * .hugekit-tmp-<pid>-<n> while one is being made): found by
 * hk_shared_text_walk(), removed by hk_shared_text_remove(). elflink-uid-<uid>
 * is libhugetlbfs 2.23's directory, and 2.23's own files there,
 * <exe>_<32|64>_<phdr index> (<that>.tmp while one is made), are told and
 * removed too: they hold huge pages the same way. So are the files left in
 * hugekit-text-<uid>, where the runtime kept them before 2.23's layout: an
 * upgrade leaves nothing behind.
 *
 * The directories belong to their users, who may put anything in them, and
 * the caller runs as root: nothing is followed. Each mount is opened and must
 * be hugetlbfs (a mount seen twice, bound elsewhere, is read once); in it only
 * elflink-uid-<uid> and hugekit-text-<uid> directories, opened
 * O_DIRECTORY|O_NOFOLLOW and owned by that uid, are read; in them only
 * regular files (fstatat without following) are told, and removed by
 * unlinkat() on that directory's descriptor. A name says what a file is
 * (whose program), never more: its contents are not read. A
 * symbolic link or a directory swapped in meanwhile is at most unlinked
 * itself (a link) or not at all (a directory: EISDIR), never followed.
 * Removing a file that a running program maps is safe: the program keeps its
 * mapping, and the pages go back to the pool when the last mapping goes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "internal.h"
#include "kconst.h"

/* One file as the walk finds it: the public part, and its directory's descriptor. */
struct text_file {
	struct hk_shared_text pub;
	int dirfd;
	enum hkl_text_dir kind;
};

/* The file being told (hk_shared_text_remove takes that one only), in this thread. */
static __thread const struct text_file *current;

/* The walk: what to tell, and whom. */
struct text_walk {
	struct hk_ctx *ctx;
	bool any_uid;
	uid_t only_uid;
	hk_shared_text_fn fn;
	void *data;
	bool quiet; /* a plan's walk again: what is skipped was told when it was planned */
	/* One file only (a plan's item): the mount's target, the directory's name, the file's. */
	const char *only_mnt, *only_dir, *only_file;
};

/* What the walk skips, told unless it is quiet. */
#define say(w, level, ...)                                                                         \
	do {                                                                                       \
		if (!(w)->quiet)                                                                   \
			hkl_log((w)->ctx, (level), __VA_ARGS__);                                   \
	} while (0)

/* A decimal number as printf's %u writes it (no sign, no leading 0), of at most max digits. */
static bool canonical_number(const char *s, size_t len, size_t max)
{
	return len > 0 && len <= max && strspn(s, "0123456789") >= len && (s[0] != '0' || len == 1);
}

/* <exe>_<32|64>_<phdr index>, libhugetlbfs 2.23's name, of len bytes: its <exe>'s length, or 0. */
static size_t libhugetlbfs_name(const char *name, size_t len)
{
	const char *u2 = memrchr(name, '_', len), *u1;

	if (!u2 || u2 < name + 4 || !canonical_number(u2 + 1, len - (size_t)(u2 + 1 - name), 5))
		return 0;
	u1 = u2 - 3;
	if (u1[0] != '_' || (strncmp(u1 + 1, "32", 2) != 0 && strncmp(u1 + 1, "64", 2) != 0))
		return 0;
	return (size_t)(u1 - name);
}

/* <exe>.<key>.<offset hex>, the runtime's name: 0 when it is one, else -EINVAL (or -ENOMEM). */
static int runtime_name(const char *name, struct hkl_text_name *ret)
{
	const char *dot2 = strrchr(name, '.'), *dot1;
	char *end;

	if (!dot2 || dot2 == name || !dot2[1] ||
	    strspn(dot2 + 1, "0123456789abcdef") != strlen(dot2 + 1))
		return -EINVAL;
	for (dot1 = dot2 - 1; dot1 > name && *dot1 != '.'; dot1--)
		;
	if (dot1 == name || dot1 + 1 == dot2)
		return -EINVAL;
	errno = 0;
	ret->offset = strtoull(dot2 + 1, &end, 16);
	if (errno)
		return -EINVAL;
	ret->exe = strndup(name, (size_t)(dot1 - name));
	ret->key = strndup(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	return ret->exe && ret->key ? 0 : -ENOMEM;
}

int hkl_text_name_parse(const char *name, enum hkl_text_dir dir, struct hkl_text_name *ret)
{
	size_t len = strlen(name), exe;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if (strncmp(name, HKC_SHARE_TMP_PREFIX, strlen(HKC_SHARE_TMP_PREFIX)) == 0) {
		ret->temporary = true;
		return 0;
	}
	rc = runtime_name(name, ret);
	if (rc != -EINVAL || dir != HKL_TEXT_ELFLINK) {
		if (rc < 0)
			hkl_text_name_free(ret);
		return rc == -EINVAL ? 0 : rc;
	}
	hkl_text_name_free(ret);
	/* 2.23 makes <name>.tmp (O_EXCL, its lock) and renames it into place. */
	if (len > 4 && strcmp(name + len - 4, ".tmp") == 0) {
		ret->temporary = true;
		len -= 4;
	}
	exe = libhugetlbfs_name(name, len);
	if (!exe) {
		ret->temporary = false;
		return 0;
	}
	ret->libhugetlbfs_exe = strndup(name, exe);
	return ret->libhugetlbfs_exe ? 0 : -ENOMEM;
}

void hkl_text_name_free(struct hkl_text_name *tn)
{
	free(tn->exe);
	free(tn->key);
	free(tn->libhugetlbfs_exe);
	memset(tn, 0, sizeof(*tn));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in the directory at fd (not . and ..), sorted; those that pass keep (may be NULL). */
static int read_names(int fd, bool (*keep)(const char *), char ***ret, size_t *ret_n)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	char **names = NULL, **nn;
	size_t n = 0;
	struct dirent *e;
	DIR *d;

	if (dup_fd < 0)
		return -errno;
	d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return -errno;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    (keep && !keep(e->d_name)))
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(e->d_name))) {
			names = nn ? nn : names;
			for (size_t i = 0; i < n; i++)
				free(names[i]);
			free(names);
			closedir(d);
			return -ENOMEM;
		}
		names = nn;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	*ret = names;
	*ret_n = n;
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The uid after prefix in name, written as the runtime writes it (%lu). */
static bool dir_uid(const char *name, const char *prefix, uid_t *ret)
{
	const char *d = name + strlen(prefix);
	unsigned long v;

	if (strncmp(name, prefix, strlen(prefix)) != 0 || !canonical_number(d, strlen(d), 10))
		return false;
	v = strtoul(d, NULL, 10);
	if (v > UINT32_MAX - 1)
		return false;
	*ret = (uid_t)v;
	return true;
}

enum hkl_text_dir hkl_text_dir_uid(const char *name, uid_t *ret)
{
	if (dir_uid(name, HKC_SHARE_DIR_PREFIX, ret))
		return HKL_TEXT_ELFLINK;
	if (dir_uid(name, HKC_SHARE_OLD_DIR_PREFIX, ret))
		return HKL_TEXT_OLD;
	return HKL_TEXT_NOT;
}

static bool is_text_dir(const char *name)
{
	uid_t uid;

	return hkl_text_dir_uid(name, &uid) != HKL_TEXT_NOT;
}

/* One name of a user's directory: told when it is a regular file (its name parsed). */
static int tell_file(const struct text_walk *w, struct text_file *f, const char *name)
{
	struct hkl_text_name tn;
	struct stat st;
	int rc;

	if (fstatat(f->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			say(w, LOG_WARNING, "%s/%s: %m: skipped", f->pub.dir, name);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		say(w, LOG_WARNING, "%s/%s is not a regular file: left alone", f->pub.dir, name);
		return 0;
	}
	rc = hkl_text_name_parse(name, f->kind, &tn);
	if (rc < 0)
		return rc;
	f->pub.name = name;
	f->pub.bytes = (uint64_t)st.st_size;
	f->pub.pages = f->pub.page_size ? (uint64_t)st.st_blocks * 512 / f->pub.page_size : 0;
	f->pub.unfinished = tn.temporary;
	f->pub.executable = tn.exe;
	f->pub.key = tn.key;
	f->pub.offset = tn.offset;
	f->pub.libhugetlbfs_executable = tn.libhugetlbfs_exe;
	current = f;
	rc = w->fn(w->data, &f->pub);
	current = NULL;
	hkl_text_name_free(&tn);
	return rc;
}

/* Every regular file in one user's directory, checked as the comment at the top says. */
static int walk_dir(const struct text_walk *w, int mntfd, const char *mnt, const char *name,
		    uid_t uid, uint64_t page_size)
{
	struct text_file f = {.pub = {.size = sizeof(f.pub), .uid = uid, .page_size = page_size}};
	char *dir = NULL, **names = NULL;
	size_t n = 0;
	struct stat st;
	uid_t named;
	int fd, rc;

	f.kind = hkl_text_dir_uid(name, &named);

	if (asprintf(&dir, "%s/%s", strcmp(mnt, "/") ? mnt : "", name) < 0)
		return -ENOMEM;
	fd = openat(mntfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* Another user's directory, for a user who is not root: not theirs to see. */
		say(w, errno == EACCES ? LOG_INFO : LOG_WARNING, "%s: %s: skipped", dir,
		    errno == ELOOP || errno == ENOTDIR ? "not a directory (a symbolic link?)"
						       : strerror(errno));
		free(dir);
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		say(w, LOG_WARNING, "%s: %m: skipped", dir);
		rc = 0;
		goto out;
	}
	if (st.st_uid != uid) {
		say(w, LOG_WARNING, "%s is owned by uid %u, not %u: skipped", dir,
		    (unsigned)st.st_uid, (unsigned)uid);
		rc = 0;
		goto out;
	}
	f.pub.dir = dir;
	f.dirfd = fd;
	if (w->only_file) {
		rc = tell_file(w, &f, w->only_file);
		goto out;
	}
	rc = read_names(fd, NULL, &names, &n);
	if (rc < 0) {
		say(w, LOG_ERR, "cannot read %s: %s", dir, strerror(-rc));
		goto out;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = tell_file(w, &f, names[i]);
	free_names(names, n);
out:
	close(fd);
	free(dir);
	return rc;
}

/*
 * w->fn for every file of shared text of every user (or of the uid
 * w->only_uid), mount by mount in the mount table's order.
 */
static int walk(const struct text_walk *w)
{
	struct hk_mounts *ms = NULL;
	dev_t *seen = NULL;
	size_t n_seen = 0;
	int rc;

	rc = hk_mounts_read(w->ctx, &ms);
	if (rc < 0) {
		say(w, LOG_ERR, "cannot read the mount table: %s", strerror(-rc));
		return rc;
	}
	seen = calloc(hk_mounts_count(ms) + 1, sizeof(*seen));
	if (!seen)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < hk_mounts_count(ms); i++) {
		const char *mnt = hk_mount_target(ms, i);
		char **names = NULL;
		size_t n = 0;
		struct statfs sf;
		struct stat st;
		bool dup = false;
		int mntfd;

		if (w->only_mnt && strcmp(mnt, w->only_mnt) != 0)
			continue;
		mntfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mntfd < 0) {
			say(w, LOG_WARNING, "cannot open %s: %m: skipped", mnt);
			continue;
		}
		if (fstatfs(mntfd, &sf) < 0 || (uint32_t)sf.f_type != (uint32_t)HUGETLBFS_MAGIC ||
		    fstat(mntfd, &st) < 0) {
			say(w, LOG_WARNING, "%s is not a hugetlbfs mount now: skipped", mnt);
			close(mntfd);
			continue;
		}
		for (size_t k = 0; k < n_seen; k++)
			dup |= seen[k] == st.st_dev;
		if (dup) {
			close(mntfd);
			continue;
		}
		seen[n_seen++] = st.st_dev;
		if (w->only_dir)
			rc = walk_dir(w, mntfd, mnt, w->only_dir, w->only_uid,
				      (uint64_t)sf.f_bsize);
		else
			rc = read_names(mntfd, is_text_dir, &names, &n);
		if (rc < 0)
			say(w, LOG_ERR, "cannot read %s: %s", mnt, strerror(-rc));
		for (size_t k = 0; k < n && rc == 0; k++) {
			uid_t uid = 0;

			hkl_text_dir_uid(names[k], &uid);
			if (w->any_uid || uid == w->only_uid)
				rc = walk_dir(w, mntfd, mnt, names[k], uid, (uint64_t)sf.f_bsize);
		}
		free_names(names, n);
		close(mntfd);
	}
	free(seen);
	hk_mounts_unref(ms);
	return rc;
}

HK_EXPORT int hk_shared_text_walk(struct hk_ctx *ctx, int64_t uid, hk_shared_text_fn fn, void *data)
{
	struct text_walk w = {.ctx = ctx, .any_uid = uid < 0, .fn = fn, .data = data};

	if (!ctx || !fn || uid > (int64_t)UINT32_MAX - 1)
		return -EINVAL;
	w.only_uid = uid < 0 ? 0 : (uid_t)uid;
	return walk(&w);
}

HK_EXPORT int hk_shared_text_remove(const struct hk_shared_text *file)
{
	/* Only the file the walk is telling now: its directory's descriptor is open. */
	if (!file || !current || file != &current->pub)
		return -EINVAL;
	return unlinkat(current->dirfd, file->name, 0) < 0 ? -errno : 0;
}

/* ---- a file removed as an item of a plan (HK_PLAN_REMOVE) ---------------- */

HK_EXPORT int hk_plan_add_shared_text(struct hk_plan *plan, const struct hk_shared_text *file,
				      const char *why)
{
	struct hk_plan_item it = {
		.size = sizeof(it), .kind = HK_PLAN_REMOVE, .why = why, .node = HK_NODE_ALL};
	char *path = NULL, *item = NULL, pages[32];
	int rc = -ENOMEM;

	if (!plan || !file || !file->dir || !file->name || file->dir[0] != '/' || !file->name[0] ||
	    strchr(file->name, '/'))
		return -EINVAL;
	snprintf(pages, sizeof(pages), "%" PRIu64, file->pages);
	if (asprintf(&path, "%s/%s", file->dir, file->name) >= 0 &&
	    asprintf(&item, "remove %s", path) >= 0) {
		it.path = path;
		it.item = item;
		it.value = pages;
		it.page_size = file->page_size;
		rc = hk_plan_add(plan, &it);
	}
	free(path);
	free(item);
	return rc;
}

/* The item's file, looked up again by its one name (find_walk). */
struct text_find {
	const char *path;
	bool remove;
	uint64_t pages;
	int rc; /* the removal's */
};

static int find_text(void *data, const struct hk_shared_text *f)
{
	struct text_find *tf = data;
	size_t n = strlen(f->dir);

	if (strncmp(tf->path, f->dir, n) != 0 || tf->path[n] != '/' ||
	    strcmp(tf->path + n + 1, f->name) != 0)
		return 0;
	tf->pages = f->pages;
	if (tf->remove)
		tf->rc = hk_shared_text_remove(f);
	return 1;
}

/*
 * The walk that finds the item's file: <mount>/elflink-uid-<uid>/<name> (or
 * hugekit-text-<uid>), that one name of that directory of that mount only
 * (each check and removal costs the same however many files there are),
 * checked as every walk checks it. 0 (not there), 1 (found), or -errno
 * (-EINVAL: not such a path).
 */
static int find_walk(struct hk_ctx *ctx, struct text_find *tf)
{
	struct text_walk w = {.ctx = ctx, .fn = find_text, .data = tf, .quiet = true};
	char *path = strdup(tf->path), *name, *dir;
	int rc = -EINVAL;

	if (!path)
		return -ENOMEM;
	name = strrchr(path, '/');
	if (name && name > path) {
		*name++ = '\0';
		dir = strrchr(path, '/');
		if (dir && *name && hkl_text_dir_uid(dir + 1, &w.only_uid)) {
			*dir++ = '\0';
			w.only_mnt = *path ? path : "/";
			w.only_dir = dir;
			w.only_file = name;
			rc = walk(&w);
		}
	}
	free(path);
	return rc;
}

int hkl_text_check(struct hk_ctx *ctx, const struct hk_plan_item *it, char **ret)
{
	struct text_find tf = {.path = it->path};
	int rc = find_walk(ctx, &tf);

	if (rc == 1 && ret && asprintf(ret, "%" PRIu64, tf.pages) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return rc < 0 ? rc : rc == 0; /* 1: gone */
}

int hkl_text_apply(struct hk_ctx *ctx, const struct hk_plan_item *it)
{
	struct text_find tf = {.path = it->path, .remove = true};
	int rc;

	rc = find_walk(ctx, &tf);
	if (rc < 0)
		return rc;
	/* Gone since the check (or by another's hand meanwhile): done. */
	return rc == 0 || tf.rc == -ENOENT ? 0 : tf.rc;
}
