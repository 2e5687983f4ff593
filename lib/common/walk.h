/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The symlink-safe walk: a name taken one component at a time, each looked
 * up (O_PATH | O_NOFOLLOW) in the directory the previous one opened, so that
 * a directory renamed or replaced by a link meanwhile cannot send the walk
 * elsewhere. Links are followed only when asked, by their content read from
 * the link opened, and (HKC_WALK_ROOT_LINKS) as root only links that belong
 * to root. Pure system calls: nothing is logged.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Follow the symbolic links met (at most 40), by their content. */
#define HKC_WALK_LINKS 1u
/* With HKC_WALK_LINKS, as root (euid 0): only links that belong to root. */
#define HKC_WALK_ROOT_LINKS 2u

enum hkc_walk_problem {
	HKC_WALK_FAILED, /* error: a lookup, an open, a link met without HKC_WALK_LINKS (ELOOP) */
	HKC_WALK_LINK_NOT_ROOTS, /* where, link_uid: a link of another user, not followed */
	HKC_WALK_READLINK,	 /* where, error: the link could not be read */
};

struct hkc_walk {
	int dirfd;	/* O_PATH: the directory the last name is in */
	int fd;		/* O_PATH: the last name itself, not followed */
	char *path;	/* that directory as walked, "" for the root (malloc'd) */
	char *base;	/* the last name (malloc'd) */
	struct stat st; /* of the last name */
	/* On failure: */
	enum hkc_walk_problem problem;
	int error;   /* errno */
	char *where; /* the link, "PATH/NAME" (malloc'd) */
	uid_t link_uid;
};

/*
 * Walk name (absolute: from "/"; else from the working directory); the last
 * name may be anything (a link only where not followed: without
 * HKC_WALK_LINKS a link anywhere is -ELOOP). "" is -ENOENT, "/" -EISDIR; "a/"
 * ends at a. 0 with w filled, or -errno with the
 * problem; hkc_walk_fini() either way.
 */
int hkc_walk(const char *name, unsigned flags, struct hkc_walk *w);
void hkc_walk_fini(struct hkc_walk *w);

/*
 * name opened with flags | O_CLOEXEC, no symbolic link followed anywhere on
 * its path (-ELOOP): openat2(2) with RESOLVE_NO_SYMLINKS, and where that
 * answers ENOSYS (before Linux 5.6, or a seccomp filter such as systemd's
 * RestrictSUIDSGID=) the walk, then the file walked opened through
 * /proc/self/fd (or, without /proc, by its name with O_NOFOLLOW, held to be
 * the file walked: -ESTALE when it was replaced in between). O_DIRECTORY or
 * a trailing "/" on a non-directory: -ENOTDIR; O_CREAT and O_TMPFILE:
 * -EINVAL (the name must be there). "/" (however many slashes) is opened as
 * it is. The descriptor, or -errno.
 */
int hkc_walk_open(const char *name, int flags);

/*
 * One directory of hkc_walk_dirs() as it is met: opened for reading
 * (O_RDONLY | O_DIRECTORY | O_NOFOLLOW) in the one before it, or not (fd
 * -1, error: its errno, ELOOP or ENOTDIR for a link).
 */
struct hkc_walk_level {
	int dirfd;	  /* the directory it is in */
	const char *name; /* its name there */
	const char *path; /* the path walked, up to and with it: "/a/b" */
	bool last;
	int fd;
	int error;
};
/*
 * The caller's word on one level: the descriptor the walk goes on from
 * (lv->fd, or one it made or opened in lv->dirfd; it owns lv->fd either
 * way), or -errno to stop.
 */
typedef int (*hkc_walk_level_fn)(void *data, const struct hkc_walk_level *lv);
/*
 * The same walk, through directories only, for a caller that checks or
 * makes each one (the mount maker): the absolute path from "/", one
 * directory at a time, each opened in the one before without following
 * anything, told to fn. The last directory's descriptor, or -errno
 * (-EINVAL: not absolute; fn's own error).
 */
int hkc_walk_dirs(const char *path, hkc_walk_level_fn fn, void *data);
