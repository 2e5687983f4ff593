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
