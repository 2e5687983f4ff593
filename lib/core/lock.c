// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One writer at a time: two programs changing the huge page set-up at once
 * (two hugeadm runs from two scripts) would interleave their read-compute-write
 * steps. On the running system the lock is a flock(2) on /run/hugekit/hugekit.lock;
 * in a --sysroot tree it is a flock(2) on the tree's directory itself, so that
 * a tree gets its own lock and no file is added to it.
 *
 * Only root may create or open the lock: /run/lock is writable by everyone,
 * so a lock there could be a user's symbolic link (root would create any file
 * it names) or a file a user holds locked for ever. /run/hugekit is made
 * 0755 root:root when missing, opened O_NOFOLLOW and checked (a directory,
 * owned by root, not writable by group or others), and the lock file in it is
 * opened O_NOFOLLOW, created 0600 and checked (a regular file of root's with
 * one link; made 0600 again if root gave it another mode, as flock(1) does).
 * Anything else is an error that names the path: the lock is never taken in
 * a place another user can change.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Owned by root and writable by nobody else; else -EPERM after a message naming the path. */
static int check_owner(struct hk_ctx *ctx, int fd, const char *what, bool dir)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int rc = -errno;

		hkl_err(ctx, "%s: %s", what, strerror(-rc));
		return rc;
	}
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		hkl_err(ctx, "%s: not a %s: the lock is not taken there", what,
			dir ? "directory" : "regular file");
		return -EPERM;
	}
	if (st.st_uid != 0) {
		hkl_err(ctx,
			"%s: owned by uid %u, not root: the lock is not taken there (remove it)",
			what, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (dir && (st.st_mode & 022)) {
		hkl_err(ctx,
			"%s: mode %04o lets other users write to it: the lock is not taken there",
			what, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if (!dir && st.st_nlink != 1) {
		hkl_err(ctx, "%s: %lu links to it: the lock is not taken there", what,
			(unsigned long)st.st_nlink);
		return -EPERM;
	}
	return 0;
}

/* The running system's lock file: /run/hugekit/hugekit.lock, root's only. */
static int open_live_lock(struct hk_ctx *ctx)
{
	int dfd, fd, rc;

	rc = hkc_path_mkdirf(&ctx->path, 0755, "%s", HK_LOCK_DIR);
	if (rc < 0 && rc != -EEXIST) {
		hkl_err(ctx, "%s: cannot create it: %s", HK_ABS(HK_LOCK_DIR), strerror(-rc));
		return rc;
	}
	dfd = hkc_path_openf(&ctx->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, "%s", HK_LOCK_DIR);
	if (dfd < 0) {
		hkl_err(ctx, "%s: %s", HK_ABS(HK_LOCK_DIR),
			dfd == -ELOOP || dfd == -ENOTDIR
				? "not a directory (a symbolic link?): the lock is not taken there"
				: strerror(-dfd));
		return dfd == -ELOOP || dfd == -ENOTDIR ? -EPERM : dfd;
	}
	rc = check_owner(ctx, dfd, HK_ABS(HK_LOCK_DIR), true);
	if (rc < 0) {
		close(dfd);
		return rc;
	}
	fd = openat(dfd, HK_LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	rc = fd < 0 ? -errno : 0;
	close(dfd);
	if (rc < 0) {
		hkl_err(ctx, "%s: %s", HK_ABS(HK_LOCK_DIR "/" HK_LOCK_NAME),
			rc == -ELOOP ? "a symbolic link: the lock is not taken there"
				     : strerror(-rc));
		return rc == -ELOOP ? -EPERM : rc;
	}
	rc = check_owner(ctx, fd, HK_ABS(HK_LOCK_DIR "/" HK_LOCK_NAME), false);
	/* Root's file in root's directory, made 0644 by flock(1) say: no one else may open it. */
	if (rc == 0 && fchmod(fd, 0600) < 0) {
		rc = -errno;
		hkl_err(ctx, "%s: %s", HK_ABS(HK_LOCK_DIR "/" HK_LOCK_NAME), strerror(-rc));
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

HK_EXPORT int hk_lock(struct hk_ctx *ctx, int timeout_ms, int *ret_fd)
{
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	bool said = false;
	int fd;

	if (!ret_fd)
		return -EINVAL;
	if (hk_is_live(ctx)) {
		fd = open_live_lock(ctx);
		if (fd < 0)
			return fd;
	} else {
		fd = hkc_path_openf(&ctx->path, O_RDONLY | O_DIRECTORY, ".");
		if (fd < 0) {
			hkl_err(ctx, "%s: %s", ctx->path.root, strerror(-fd));
			return fd;
		}
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;

		if (err != EWOULDBLOCK && err != EINTR) {
			close(fd);
			return -err;
		}
		if (now_ms() >= deadline) {
			close(fd);
			return -ETIMEDOUT;
		}
		if (!said) {
			hkl_warn(
				ctx,
				"another program is changing the huge page set-up; waiting up to %d s",
				timeout_ms / 1000);
			said = true;
		}
		usleep(50 * 1000);
	}
	*ret_fd = fd;
	return 0;
}

HK_EXPORT void hk_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
