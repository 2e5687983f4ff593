// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugetlbfs mounts, in libhugetlbfs's layout: one mount per page size,
 * /var/lib/hugetlbfs[/user/USER|/group/GROUP|/global]/pagesize-2MB, with the
 * owner and mode 2.23 gave them. This file reads the options (users,
 * groups, sizes) into an entry of the intent; libhugekit plans it
 * (hk_plan_from_intent: the layout, a mount there already, the limits
 * against the pool), walks and makes the directories and makes and checks
 * the mounts (hk_mount_dir_open, hk_mount_make). Here: 2.23's dry-run text,
 * what is said of a mount there already, and --unmount-all.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hugeadm.h"

int ha_plan_mounts(struct hugeadm_ctl *ctl, const char *kind, const char *who)
{
	struct ha_action *na = realloc(ctl->actions, (ctl->n_actions + 1) * sizeof(*na));
	const struct passwd *pw;
	const struct group *gr;
	struct ha_action *a;
	int n = 0;

	if (!na)
		return -1;
	ctl->actions = na;
	a = &ctl->actions[ctl->n_actions++];
	memset(a, 0, sizeof(*a));
	a->kind = HA_MOUNTS;
	a->arg = who ? who : kind;
	if (strcmp(kind, "user") == 0) {
		pw = getpwnam(who);
		if (!pw) {
			ha_msg(ctl, HA_ERROR, "Could not find specified user %s", who);
			return -1;
		}
		a->base = HA_MOUNT_DIR "/user";
		a->uid = pw->pw_uid;
		a->gid = 0;
		a->mode = 0700;
		a->sub = strdup(pw->pw_name);
		n = asprintf(&a->owner_label, "%s:root", pw->pw_name);
	} else if (strcmp(kind, "group") == 0) {
		gr = getgrnam(who);
		if (!gr) {
			ha_msg(ctl, HA_ERROR, "Could not find specified group %s", who);
			return -1;
		}
		a->base = HA_MOUNT_DIR "/group";
		a->gid = gr->gr_gid;
		a->mode = 0070;
		a->sub = strdup(gr->gr_name);
		n = asprintf(&a->owner_label, "root:%s", gr->gr_name);
	} else if (strcmp(kind, "global") == 0) {
		a->base = HA_MOUNT_DIR "/global";
		a->mode = 01777;
		a->owner_label = strdup("root:root");
	} else {
		a->base = HA_MOUNT_DIR;
		a->mode = 0770;
		a->owner_label = strdup("root:root");
	}
	return n < 0 || !a->owner_label ? -1 : 0;
}

/*
 * --max-size and --min-size: an amount as lib/common reads hugeadm's (2.23's
 * number, base 0, with an optional K, M or G, B or iB), above 0 and at most
 * LLONG_MAX bytes, as 2.23's strtoll took it. 2.23 ignored whatever came
 * after the number and read 1T, 1.5G, 512X or "64 M" as a few bytes: here
 * they are errors, and so is anything else after the number.
 */
int ha_parse_mount_size(const char *s, uint64_t *ret)
{
	uint64_t v;
	int rc = hk_parse_amount(s, &v, NULL);

	if (rc < 0)
		return rc;
	if (v == 0)
		return -EINVAL;
	if (v > LLONG_MAX)
		return -EOVERFLOW;
	*ret = v;
	return 0;
}

static ssize_t find_mount(const struct hk_mounts *ms, const char *target)
{
	for (size_t i = 0; ms && i < hk_mounts_count(ms); i++)
		if (strcmp(hk_mount_target(ms, i), target) == 0)
			return (ssize_t)i;
	return -1;
}

/* With --unmount-all, which runs first, the mounts there now do not matter. */
bool ha_unmount_all_asked(const struct hugeadm_ctl *ctl)
{
	for (size_t i = 0; i < ctl->n_actions; i++)
		if (ctl->actions[i].kind == HA_UNMOUNT_ALL)
			return true;
	return false;
}

/* 2.23's dry-run text for a directory it would create. */
static void dry_dir(const char *path, const char *owner, mode_t mode)
{
	printf("if [ ! -e %s ]\nthen\n mkdir %s\n chown %s %s\n chmod %o %s\nfi\n", path, path,
	       owner, path, (unsigned)mode, path);
}

/* 2.23's dry-run text for every component of path, as it made them (mkdir, chown, chmod). */
static void dry_dirs(const char *path, const char *owner, mode_t mode)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		dry_dir(buf, owner, mode);
		if (last)
			break;
		*p = '/';
	}
}

/*
 * The -o options of a dry run's mount line: the item's (libhugekit's)
 * without the owner and mode of the root, as 2.23's, which chowned after
 * mounting (nothing is chowned by path here).
 */
static void mount_options(const char *value, char *buf, size_t sz)
{
	size_t n = 0;

	buf[0] = '\0';
	for (const char *p = value; *p;) {
		size_t len = strcspn(p, ",");

		if (strncmp(p, "uid=", 4) != 0 && strncmp(p, "gid=", 4) != 0 &&
		    strncmp(p, "mode=", 5) != 0 && n + len + 2 < sz) {
			n += (size_t)snprintf(buf + n, sz - n, "%s%.*s", n ? "," : "", (int)len, p);
		}
		p += len + (p[len] == ',');
	}
}

/* A mount left as it is that lacks nosuid or nodev: a warning naming it. */
static void warn_unrestricted(struct hugeadm_ctl *ctl, const struct hk_mounts *ms, size_t i)
{
	const char *t = hk_mount_target(ms, i);

	if (hk_mount_is_restricted(ms, i))
		return;
	ha_msg(ctl, HA_WARNING,
	       "%s is mounted without nosuid,nodev (%s): left as it is; remount it (mount -o "
	       "remount,bind,nosuid,nodev %s) or unmount it and run hugeadm again",
	       t, hk_mount_options(ms, i), t);
}

/* A dry run's lines for one mount: 2.23's, whose options had no owner (it chowned after). */
static void dry_mount(const struct hugeadm_ctl *ctl, const struct ha_action *a,
		      const struct hk_plan_item *it)
{
	char opts[320];

	mount_options(it->value, opts, sizeof(opts));
	dry_dirs(it->path, a->owner_label, a->mode);
	printf("mount -t hugetlbfs none %s -o %s\n", it->path, opts);
	printf("chown %s %s\nchmod %o %s\n", a->owner_label, it->path, (unsigned)a->mode, it->path);
}

/* A mount there already: said, with a warning where it lacks nosuid or nodev. */
static void say_there(struct hugeadm_ctl *ctl, const char *target)
{
	struct hk_mounts *ms = NULL;
	ssize_t i;

	ha_msg(ctl, HA_WARNING, "Directory %s is already mounted.", target);
	if (hk_mounts_read(ctl->ctx, &ms) == 0 && (i = find_mount(ms, target)) >= 0)
		warn_unrestricted(ctl, ms, (size_t)i);
	hk_mounts_unref(ms);
}

void ha_mounts_begin(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	/* The base directory once, 0755 root:root, as 2.23 did. */
	if (ctl->dry_run)
		dry_dirs(a->base, "root:root", 0755);
}

int ha_mount_step(struct hugeadm_ctl *ctl, const struct ha_action *a, const struct hk_run_step *st,
		  bool written)
{
	const struct hk_plan_item *it = st->item;

	switch (st->kind) {
	case HK_RUN_STEP_ALREADY:
		/* A dry run's --unmount-all took nothing down: pretend it did. */
		if (ctl->dry_run && ha_unmount_all_asked(ctl))
			dry_mount(ctl, a, it);
		else
			say_there(ctl, it->path);
		return 0;
	case HK_RUN_STEP_WRITE:
		if (ctl->dry_run)
			dry_mount(ctl, a, it);
		return 0;
	case HK_RUN_STEP_FAILED:
		/* Once written, hk_mount_make said why it refused; before, the comparison failed. */
		if (!written && st->error == -EBUSY)
			ha_msg(ctl, HA_ERROR,
			       "%s is already mounted with other options (%s): left as it is; "
			       "unmount it first (hugeadm --unmount-all)",
			       it->path, st->before ? st->before : "");
		else if (!written)
			ha_msg(ctl, HA_ERROR, "cannot read the mounts: %s", strerror(-st->error));
		return 0;
	default:
		return 0;
	}
}

int ha_unmount_step(struct hugeadm_ctl *ctl, const struct hk_run_step *st)
{
	const char *t = st->item->path;

	switch (st->kind) {
	case HK_RUN_STEP_WRITE:
		if (ctl->dry_run)
			printf("umount %s\n", t);
		return 0;
	case HK_RUN_STEP_DONE:
		if (!ctl->dry_run)
			ha_msg(ctl, HA_INFO, "unmounted %s", t);
		return 0;
	case HK_RUN_STEP_SHORT:
		/* libhugekit walked the path and did not find that mount at its end. */
		if (st->error == -EXDEV)
			ha_msg(ctl, HA_WARNING,
			       "%s is not the mount the mount table shows there (a symbolic link "
			       "or moved): not unmounting it",
			       t);
		else
			ha_msg(ctl, HA_ERROR, "Unable to unmount %s: it is still mounted", t);
		return 1;
	case HK_RUN_STEP_FAILED:
		ha_msg(ctl, HA_ERROR, "Unable to unmount %s, error: %s", t, strerror(-st->error));
		return 0;
	default:
		return 0;
	}
}
