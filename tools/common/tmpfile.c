// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Files replaced whole (tmpfile.h): O_TMPFILE and linkat(), or a random name
 * made O_EXCL; synced, renamed over the name, the directory synced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "paths.h" /* lib/common: HK_PROC_SELF_FD */
#include "tmpfile.h"

/* ".BASE.XXXXXXXXXXXXXXXX", 16 characters of 62 from getrandom(); base cut to fit NAME_MAX. */
static int random_name(struct hkt_tmpfile *t, const char *base)
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[16];
	char s[sizeof(r) + 1];
	ssize_t n;

	do
		n = getrandom(r, sizeof(r), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(r))
		return n < 0 ? -errno : -EIO;
	for (size_t i = 0; i < sizeof(r); i++)
		s[i] = chars[r[i] % (sizeof(chars) - 1)];
	s[sizeof(r)] = '\0';
	snprintf(t->name, sizeof(t->name), ".%.200s.%s", base, s);
	return 0;
}

int hkt_tmpfile_open(struct hkt_tmpfile *t, int dirfd, const char *base, mode_t mode)
{
	const char *force = secure_getenv("HK_TMPFILE");
	int rc = -EEXIST;

	t->dirfd = dirfd;
	t->fd = -1;
	t->name[0] = '\0';
	t->step = NULL;
	if (!force || strcmp(force, "named") != 0) {
		t->fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
		if (t->fd >= 0)
			return 0;
		/* The filesystem (or an old kernel) has no O_TMPFILE: a random name. */
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return -errno;
	}
	for (unsigned i = 0; i < 100; i++) {
		rc = random_name(t, base);
		if (rc < 0)
			break;
		t->fd = openat(dirfd, t->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       mode);
		if (t->fd >= 0)
			return 0;
		rc = -errno;
		if (rc != -EEXIST)
			break;
	}
	t->name[0] = '\0';
	return rc;
}

/* The O_TMPFILE file linked in under a new random name. */
static int give_name(struct hkt_tmpfile *t, const char *base)
{
	char proc[64];
	int rc = -EEXIST;

	for (unsigned i = 0; i < 100 && rc == -EEXIST; i++) {
		rc = random_name(t, base);
		if (rc < 0)
			break;
		/* AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH; the descriptor's magic link does not. */
		if (linkat(t->fd, "", t->dirfd, t->name, AT_EMPTY_PATH) == 0)
			return 0;
		rc = -errno;
		if (rc == -ENOENT || rc == -EPERM) {
			snprintf(proc, sizeof(proc), "%s/%d", HK_ABS(HK_PROC_SELF_FD), t->fd);
			rc = linkat(AT_FDCWD, proc, t->dirfd, t->name, AT_SYMLINK_FOLLOW) == 0
				     ? 0
				     : -errno;
		}
	}
	if (rc < 0)
		t->name[0] = '\0';
	return rc;
}

int hkt_tmpfile_replace(struct hkt_tmpfile *t, const char *base)
{
	int rc;

	t->step = "syncing";
	if (fsync(t->fd) < 0)
		return -errno;
	t->step = "naming";
	if (!t->name[0] && (rc = give_name(t, base)) < 0)
		return rc;
	t->step = "renaming";
	if (renameat(t->dirfd, t->name, t->dirfd, base) < 0)
		return -errno;
	t->name[0] = '\0';
	t->step = "syncing the directory";
	if (fsync(t->dirfd) < 0)
		return -errno;
	t->step = NULL;
	return 0;
}

int hkt_tmpfile_close(struct hkt_tmpfile *t)
{
	int rc = 0;

	if (t->fd >= 0 && close(t->fd) < 0)
		rc = -errno;
	t->fd = -1;
	if (t->name[0])
		unlinkat(t->dirfd, t->name, 0);
	t->name[0] = '\0';
	return rc;
}
