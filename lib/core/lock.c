// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One writer at a time: two programs changing the huge page set-up at once
 * (two hugeadm runs from two scripts) would interleave their read-compute-write
 * steps. On the running system the lock is a flock(2) on /run/lock/hugekit.lock;
 * in a --sysroot tree it is a flock(2) on the tree's directory itself, so that
 * a tree gets its own lock and no file is added to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define LOCK_FILE "run/lock/hugekit.lock"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

HK_EXPORT int hk_lock(struct hk_ctx *ctx, int timeout_ms, int *ret_fd)
{
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	bool said = false;
	int fd;

	if (!ret_fd)
		return -EINVAL;
	if (hk_is_live(ctx))
		fd = hk_path_openf(&ctx->path, O_RDWR | O_CREAT, "%s", LOCK_FILE);
	else
		fd = hk_path_openf(&ctx->path, O_RDONLY | O_DIRECTORY, ".");
	if (fd < 0) {
		hk_err(ctx, "/%s: %s", LOCK_FILE, strerror(-fd));
		return fd;
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
			hk_warn(ctx,
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
