// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Making a hugetlbfs mount where users may own some of the directories on
 * the way. hugeadm runs as root and the user of --create-user-mounts owns
 * .../user/USER (2.23's layout), so no name is trusted: the path is opened
 * one directory at a time from "/" with O_NOFOLLOW (lib/common's walk in
 * its directories mode, hkc_walk_dirs; hugeedit and the unmount use its
 * hkc_walk), each directory is checked
 * through its descriptor, new ones are made with mkdirat() and given their
 * owner with fchown()/fchmod() on the descriptor, and the mount goes onto
 * the descriptor of the last one. Then the path is walked again: the mount
 * must be there (a user who owns a level can rename a directory between the
 * walk and the mount, and the mount follows the directory) and be
 * nosuid,nodev in the mount table, or it is taken down again.
 *
 * The levels up to the request's base are root's (mode 0755 when made); the
 * levels below it, the mount point among them, are made with the request's
 * owner and mode. An existing directory must be owned by root or by that
 * owner, and when root owns it, be writable by its group only where the
 * level's mode gives the group write access and the group is the request's,
 * and by others only where the mode does (the 1777 mount points of
 * --create-global-mounts).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "walk.h"

struct level {
	uid_t uid;
	gid_t gid;
	mode_t mode;
};

/* The level of a directory depth names from "/": the base or above it, or the request's. */
static struct level level_of(const struct hk_mount_request *rq, size_t base_depth, size_t depth)
{
	struct level root = {0, 0, 0755}, own = {rq->uid, rq->gid, rq->mode};

	return depth <= base_depth ? root : own;
}

/* How many names p[0, len) has ("//" is one slash); false when one is "." or "..". */
static bool names_in(const char *p, size_t len, size_t *ret)
{
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		size_t k = strcspn(p + i, "/");

		k = k > len - i ? len - i : k;
		if ((k == 1 && p[i] == '.') || (k == 2 && p[i] == '.' && p[i + 1] == '.'))
			return false;
		n += k > 0;
		i += k + 1;
	}
	*ret = n;
	return true;
}

static const char *user_name(uid_t uid)
{
	const struct passwd *pw = getpwuid(uid);

	return pw ? pw->pw_name : "?";
}

/* An existing directory that the level does not allow: -EPERM after one error naming it. */
static int check_dir(struct hk_ctx *ctx, const char *path, const struct stat *st,
		     const struct level *lv)
{
	mode_t m = st->st_mode & 07777;

	if (!S_ISDIR(st->st_mode)) {
		hkl_err(ctx, "%s is not a directory: not mounting there", path);
		return -ENOTDIR;
	}
	if (st->st_uid != 0 && st->st_uid != lv->uid) {
		char *owner = strdup(user_name(st->st_uid));

		hkl_err(ctx, "%s is owned by %s (uid %u), expected root%s%s: not using it", path,
			owner ? owner : "?", (unsigned)st->st_uid, lv->uid ? " or " : "",
			lv->uid ? user_name(lv->uid) : "");
		free(owner);
		return -EPERM;
	}
	if (st->st_uid == 0 &&
	    (((m & S_IWGRP) && !((lv->mode & S_IWGRP) && st->st_gid == lv->gid)) ||
	     ((m & S_IWOTH) && !(lv->mode & S_IWOTH)))) {
		hkl_err(ctx, "%s is writable by %s (mode %04o): not using it", path,
			(m & S_IWOTH) && !(lv->mode & S_IWOTH) ? "others" : "its group",
			(unsigned)m);
		return -EPERM;
	}
	return 0;
}

/* openat() of one component failed (errno): say what is there instead of a directory. */
static int open_failed(struct hk_ctx *ctx, int dirfd, const char *name, const char *path)
{
	int err = errno;
	struct stat st;

	if ((err == ELOOP || err == ENOTDIR) &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		hkl_err(ctx,
			"%s is a symbolic link: not following it (remove it, then run hugeadm "
			"again)",
			path);
		return -ELOOP;
	}
	if (err == ENOTDIR)
		hkl_err(ctx, "%s is not a directory: not mounting there", path);
	else
		hkl_err(ctx, "Unable to open dir %s, error: %s", path, strerror(err));
	return -err;
}

/* The directory fd (of path) checked: fd, or -errno (said) and fd closed. */
static int checked(struct hk_ctx *ctx, int fd, const char *path, const struct level *lv)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0) {
		rc = -errno;
		hkl_err(ctx, "Unable to open dir %s, error: %s", path, strerror(-rc));
	} else {
		rc = check_dir(ctx, path, &st, lv);
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* An existing directory opened and checked: its descriptor, or -errno (said). */
static int open_checked(struct hk_ctx *ctx, int dirfd, const char *name, const char *path,
			const struct level *lv)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? open_failed(ctx, dirfd, name, path) : checked(ctx, fd, path, lv);
}

/* mkdirat() the missing component, then open and own what was made: by descriptor only. */
static int make_dir(struct hk_ctx *ctx, int dirfd, const char *name, const char *path,
		    const struct level *lv)
{
	struct stat st;
	int fd, err;

	if (mkdirat(dirfd, name, 0700) < 0) {
		err = errno;
		if (err != EEXIST) {
			hkl_err(ctx, "Unable to create dir %s, error: %s", path, strerror(err));
			return -err;
		}
		/* Made meanwhile by someone else: checked like any existing one. */
		return open_checked(ctx, dirfd, name, path, lv);
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return open_failed(ctx, dirfd, name, path);
	/* Only we (root) can have made a root-owned directory: else it was swapped. */
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		hkl_err(ctx, "%s changed while it was being created: not using it", path);
		close(fd);
		return -EBUSY;
	}
	if (fchown(fd, lv->uid, lv->gid) < 0 || fchmod(fd, lv->mode) < 0) {
		err = errno;
		hkl_err(ctx, "Unable to change ownership of %s, error: %s", path, strerror(err));
		close(fd);
		return -err;
	}
	return fd;
}

/*
 * The base is a directory on the path: "/a/b" of "/a/b/c", not of "/a/bc";
 * neither has a "." or ".." (levels are counted by name). *ret_depth: how
 * far the root's levels go, the base or the mount point's parent.
 */
static bool request_ok(const struct hk_mount_request *rq, size_t *ret_depth)
{
	size_t n = rq && rq->base ? strlen(rq->base) : 0, depth;

	if (!rq || rq->size < sizeof(*rq) || !rq->path || rq->path[0] != '/' ||
	    (rq->base && (strncmp(rq->path, rq->base, n) != 0 || rq->path[n] != '/')) ||
	    !names_in(rq->path, strlen(rq->path), &depth))
		return false;
	if (rq->base)
		return names_in(rq->base, n, ret_depth);
	*ret_depth = depth ? depth - 1 : 0;
	return true;
}

/* What the walk of hk_mount_dir_open keeps. */
struct dir_walk {
	struct hk_ctx *ctx;
	const struct hk_mount_request *req;
	size_t base_depth;
	bool create;
	bool stopped; /* by dir_level: said there (or a missing one, not made) */
};

/* One level on the way: checked, or made when missing (create), or said. */
static int dir_level(void *data, const struct hkc_walk_level *l)
{
	struct dir_walk *dw = data;
	size_t depth = 0;
	struct level lv;
	int fd;

	/* The walk's path is tidied: its names are the directories from "/". */
	(void)names_in(l->path, strlen(l->path), &depth);
	lv = level_of(dw->req, dw->base_depth, depth);

	if (l->fd >= 0) {
		fd = checked(dw->ctx, l->fd, l->path, &lv);
	} else if (l->error == ENOENT && !dw->create) {
		fd = -ENOENT;
	} else if (l->error == ENOENT) {
		fd = make_dir(dw->ctx, l->dirfd, l->name, l->path, &lv);
	} else {
		errno = l->error;
		fd = open_failed(dw->ctx, l->dirfd, l->name, l->path);
	}
	dw->stopped = fd < 0;
	return fd;
}

HK_EXPORT int hk_mount_dir_open(struct hk_ctx *ctx, const struct hk_mount_request *req, bool create)
{
	struct dir_walk dw = {.ctx = ctx, .req = req, .create = create};
	int fd;

	if (!ctx || !request_ok(req, &dw.base_depth))
		return -EINVAL;
	if (strlen(req->path) >= PATH_MAX) {
		hkl_err(ctx, "Unable to open dir %s, error: %s", req->path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	fd = hkc_walk_dirs(req->path, dir_level, &dw);
	/* The walk's own failures (dir_level's are said): the root, or memory. */
	if (fd < 0 && !dw.stopped)
		hkl_err(ctx, "Unable to open dir %s, error: %s", req->path, strerror(-fd));
	return fd;
}

HK_EXPORT uint64_t hk_mount_root_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return 0;
	return stx.stx_mnt_id;
}

HK_EXPORT bool hk_mount_is_restricted(const struct hk_mounts *mounts, size_t i)
{
	const struct hk_mounts *ms = mounts;
	char *v = NULL;
	bool ok = hk_mount_option(ms, i, "nosuid", &v) == 0;

	free(v);
	v = NULL;
	ok = ok && hk_mount_option(ms, i, "nodev", &v) == 0;
	free(v);
	return ok;
}

/*
 * The mount just made (id, or 0 when the kernel did not say: then the last
 * mount at target) has nosuid and nodev in the mount table, read back.
 */
static bool made_restricted(struct hk_ctx *ctx, const char *target, uint64_t id)
{
	struct hk_mounts *ms = NULL;
	ssize_t found = -1;
	bool ok;
	int rc = hk_mounts_read(ctx, &ms);

	if (rc < 0) {
		hkl_err(ctx, "cannot read the mount table: %s", strerror(-rc));
		return false;
	}
	for (size_t i = 0; i < hk_mounts_count(ms); i++)
		if (id ? (uint64_t)hk_mount_id(ms, i) == id
		       : strcmp(hk_mount_target(ms, i), target) == 0)
			found = (ssize_t)i;
	ok = found >= 0 && hk_mount_is_restricted(ms, (size_t)found);
	if (!ok)
		hkl_err(ctx, "%s was mounted without nosuid,nodev (%s): not kept", target,
			found >= 0 ? hk_mount_options(ms, (size_t)found)
				   : "not in the mount table");
	hk_mounts_unref(ms);
	return ok;
}

/* The mount just made on dirfd (id, or 0) is the one at the request's path, walked again. */
static bool mounted_at(struct hk_ctx *ctx, const struct hk_mount_request *rq, int dirfd,
		       uint64_t id)
{
	struct stat st, dst;
	uint64_t got;
	bool ok;
	int fd = hk_mount_dir_open(ctx, rq, false);

	if (fd < 0)
		return false;
	got = hk_mount_root_id(fd);
	if (id)
		ok = got == id;
	else /* mount(2) fallback: at least another filesystem than the covered directory's. */
		ok = fstat(fd, &st) == 0 && fstat(dirfd, &dst) == 0 && st.st_dev != dst.st_dev;
	close(fd);
	return ok;
}

/* Whether the directory fd holds anything but . and ..: 1, 0, or -errno. */
static int dir_has_entries(int fd)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;
	int rc = 0;

	if (!d) {
		rc = -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return rc;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = 1;
	closedir(d);
	return rc;
}

/* HK_MOUNT_EMPTY: never over something, another filesystem's mount or files a mount would hide. */
static int check_empty(struct hk_ctx *ctx, const char *path, int fd)
{
	int rc;

	if (hk_mount_root_id(fd)) {
		hkl_err(ctx, "%s is a mount point already: not mounting hugetlbfs over it", path);
		return -EBUSY;
	}
	rc = dir_has_entries(fd);
	if (rc < 0)
		hkl_err(ctx, "cannot read %s: %s", path, strerror(-rc));
	else if (rc > 0)
		hkl_err(ctx, "%s is not empty: not mounting hugetlbfs over what is in it", path);
	return rc < 0 ? rc : rc > 0 ? -ENOTEMPTY : 0;
}

HK_EXPORT int hk_mount_make(struct hk_ctx *ctx, const struct hk_mount_request *req, int *ret_fd)
{
	uint64_t id;
	size_t depth;
	int fd, rc;

	if (!ctx || !ret_fd || !request_ok(req, &depth) || (req->flags & ~(unsigned)HK_MOUNT_EMPTY))
		return -EINVAL;
	*ret_fd = -1;
	if (!hk_is_live(ctx))
		return -EOPNOTSUPP;
	fd = hk_mount_dir_open(ctx, req, true);
	if (fd < 0)
		return fd;
	rc = req->flags & HK_MOUNT_EMPTY ? check_empty(ctx, req->path, fd) : 0;
	if (rc == 0) {
		rc = hk_mount_hugetlbfs_fd_id(ctx, fd, req->options ? req->options : "", &id);
		if (rc < 0)
			hkl_err(ctx, "Unable to mount %s, error: %s", req->path, strerror(-rc));
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	if (!mounted_at(ctx, req, fd, id)) {
		hkl_err(ctx, "%s moved while it was being mounted: not mounted (run hugeadm again)",
			req->path);
		rc = -EBUSY;
	} else if (!made_restricted(ctx, req->path, id)) {
		rc = -EPERM;
	}
	if (rc < 0) {
		/* Taken down through the directory it covers, never by its (user's) path. */
		int err = hk_umount_fd(ctx, fd, NULL, MNT_DETACH);

		if (err < 0)
			hkl_err(ctx, "Unable to unmount the mount meant for %s: %s", req->path,
				strerror(-err));
		close(fd);
		return rc;
	}
	*ret_fd = fd;
	return 0;
}
