/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file replaced whole, through a new file in the same directory that no one
 * else can open or name beforehand: O_TMPFILE (no name at all until it is
 * complete), or where the filesystem lacks it, a name of 16 random characters
 * created O_EXCL | O_NOFOLLOW (mkostemp's rule, on a directory descriptor).
 * Names another user made in the directory neither stop it nor are opened.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct hkt_tmpfile {
	int dirfd; /* not owned */
	int fd;	   /* -1 when closed */
	/* The temporary name in dirfd: "" while an O_TMPFILE file has none. */
	char name[300];
	/* Where replace failed: "syncing", "naming", "renaming", "syncing the directory". */
	const char *step;
};

/*
 * A new file in dirfd with mode, for base (the random name is ".BASE.XXXX...");
 * 0, or -errno with t->fd -1. The environment's HK_TMPFILE=named (tests)
 * takes the random name even where O_TMPFILE works.
 */
int hkt_tmpfile_open(struct hkt_tmpfile *t, int dirfd, const char *base, mode_t mode);
/*
 * The file synced, given its random name (O_TMPFILE, linkat), renamed over
 * base and the directory synced: 0, or -errno with t->step saying which.
 * The file stays open (t->fd) either way.
 */
int hkt_tmpfile_replace(struct hkt_tmpfile *t, const char *base);
/* Closes the file, and removes its temporary name if it still has one; -errno of a failed close. */
int hkt_tmpfile_close(struct hkt_tmpfile *t);
