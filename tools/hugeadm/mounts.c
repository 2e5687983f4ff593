// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugetlbfs mounts, in libhugetlbfs's layout: one mount per page size,
 * /var/lib/hugetlbfs[/user/USER|/group/GROUP|/global]/pagesize-2MB, with the
 * owner and mode 2.23 gave them. Validated first (users, groups, sizes, paths
 * already mounted), idempotent, and with 2.23's dry-run text. The directories
 * are walked and made, and the mounts made and checked, by libhugekit
 * (hk_mount_dir_open, hk_mount_make): this file chooses the layout.
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

/* pagesize-2MB, pagesize-1GB, pagesize-64KB: 2.23's names (integer division). */
static void mount_name(char *buf, size_t sz, uint64_t size)
{
	if (size >= (UINT64_C(1) << 30))
		snprintf(buf, sz, "pagesize-%" PRIu64 "GB", size >> 30);
	else if (size >= (UINT64_C(1) << 20))
		snprintf(buf, sz, "pagesize-%" PRIu64 "MB", size >> 20);
	else
		snprintf(buf, sz, "pagesize-%" PRIu64 "KB", size >> 10);
}

static void mount_dir(const struct ha_action *a, uint64_t size, char *buf, size_t sz)
{
	char name[64];

	mount_name(name, sizeof(name), size);
	if (a->sub)
		snprintf(buf, sz, "%s/%s/%s", a->base, a->sub, name);
	else
		snprintf(buf, sz, "%s/%s", a->base, name);
}

static ssize_t find_mount(const struct hk_mounts *ms, const char *target)
{
	for (size_t i = 0; ms && i < hk_mounts_count(ms); i++)
		if (strcmp(hk_mount_target(ms, i), target) == 0)
			return (ssize_t)i;
	return -1;
}

/* A numeric mount option, as the kernel shows it; 0 when absent. */
static uint64_t option_u64(const struct hk_mounts *ms, size_t i, const char *name)
{
	char *v = NULL;
	uint64_t n = 0;

	if (hk_mount_option(ms, i, name, &v) == 0)
		hk_parse_size(v, &n);
	free(v);
	return n;
}

/*
 * The mount at target is what we would make: hugetlbfs of that page size, the
 * same limits (the kernel keeps them in whole pages), the same owner and mode.
 * fd is the mount's root directory, opened safely, or < 0.
 */
static bool same_mount(const struct hugeadm_ctl *ctl, const struct ha_action *a,
		       const struct hk_mounts *ms, size_t i, uint64_t size, int fd)
{
	struct stat st;

	if (hk_mount_page_size(ms, i) != size)
		return false;
	if (option_u64(ms, i, "size") != ctl->max_size / size * size ||
	    option_u64(ms, i, "min_size") != ctl->min_size / size * size)
		return false;
	if (ctl->max_inodes > 0 && option_u64(ms, i, "nr_inodes") != (uint64_t)ctl->max_inodes)
		return false;
	/* A tree's mount points are not on this machine: its options are all we have. */
	if (!hk_is_live(ctl->ctx))
		return true;
	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	return st.st_uid == a->uid && st.st_gid == a->gid && (st.st_mode & 07777) == a->mode;
}

/*
 * The library's request for one of the action's mounts: the levels up to
 * the base directory are root's, the user or group directory and the mount
 * point the action's owner and mode (hk_mount_dir_open, hk_mount_make).
 */
static struct hk_mount_request request(const struct ha_action *a, const char *target,
				       const char *opts)
{
	return (struct hk_mount_request){.size = sizeof(struct hk_mount_request),
					 .path = target,
					 .base = a->base,
					 .uid = (uint32_t)a->uid,
					 .gid = (uint32_t)a->gid,
					 .mode = (uint32_t)a->mode,
					 .options = opts};
}

/* With --unmount-all, which runs first, the mounts there now do not matter. */
static bool unmount_all_asked(const struct hugeadm_ctl *ctl)
{
	for (size_t i = 0; i < ctl->n_actions; i++)
		if (ctl->actions[i].kind == HA_UNMOUNT_ALL)
			return true;
	return false;
}

/* The limits against the pool of one size as this run leaves it: 0, or -1 after an error. */
static int check_sizes(struct hugeadm_ctl *ctl, uint64_t size)
{
	uint64_t max, max_pages = ctl->max_size / size, min_pages = ctl->min_size / size;
	char sz[32];

	if (ha_pools_load(ctl, size) < 0)
		return -1;
	hk_format_size(sz, sizeof(sz), size);
	max = hk_pool_plan_get(ctl->pools, size, HK_NODE_ALL, HK_POOL_MAXIMUM);
	/* The kernel refuses a reservation above the limit, in whole pages. */
	if (ctl->max_size && ctl->min_size && min_pages > max_pages) {
		ha_msg(ctl, HA_ERROR,
		       "--min-size %" PRIu64 " is more than --max-size %" PRIu64
		       " for the %s mount (%" PRIu64 " pages against %" PRIu64 ")",
		       ctl->min_size, ctl->max_size, sz, min_pages, max_pages);
		return -1;
	}
	/* The reservation takes pages at mount time, surplus ones too, up to the Maximum. */
	if (ctl->min_size && min_pages > max) {
		ha_msg(ctl, HA_ERROR,
		       "--min-size %" PRIu64 " reserves more than the %s pool can hold (%" PRIu64
		       " pages)",
		       ctl->min_size, sz, max);
		return -1;
	}
	/*
	 * --max-size is a limit, not a reservation: it may be above the pool (mounts
	 * made at boot come before the pool is sized), and only a warning says so.
	 */
	if (ctl->max_size && max_pages > max)
		ha_msg(ctl, HA_WARNING,
		       "--max-size %" PRIu64 " is more than the %s pool holds now (%" PRIu64
		       " pages): the mount is limited to %" PRIu64 " pages all the same",
		       ctl->max_size, sz, max, max_pages);
	else if (ctl->max_size && max_pages == 0)
		ha_msg(ctl, HA_WARNING,
		       "the %s mount can hold no page: --max-size %" PRIu64
		       " is less than one %s page",
		       sz, ctl->max_size, sz);
	return 0;
}

static void mount_options(const struct hugeadm_ctl *ctl, const struct ha_action *a, uint64_t size,
			  bool owner, char *buf, size_t sz);

/*
 * One mount of the action as an item of the plan: where, the options, owner
 * and mode, made by libhugekit's executor under the action's base; one there
 * already is kept (HK_MOUNT_KEEP: validation made sure it is the one we would
 * make), as 2.23 did.
 */
static int plan_mount(struct hugeadm_ctl *ctl, struct ha_action *a, uint64_t size,
		      const char *target)
{
	char opts[320], why[256];
	struct hk_mount_request rq;

	mount_options(ctl, a, size, true, opts, sizeof(opts));
	rq = request(a, target, opts);
	rq.flags = HK_MOUNT_KEEP;
	return ha_plan_added(
		ctl, a,
		hk_plan_add_mount(ctl->plan, &rq, size, ha_action_why(a, why, sizeof(why))));
}

int ha_validate_mounts(struct hugeadm_ctl *ctl, struct ha_action *a)
{
	struct hk_mounts *ms = NULL;
	bool unmounting = unmount_all_asked(ctl);
	uint64_t *sizes;
	size_t n;
	int rc;

	/* A tree can be planned for (--dry-run), not mounted in. */
	if (!hk_is_live(ctl->ctx) && !ctl->dry_run) {
		ha_msg(ctl, HA_ERROR,
		       "mounts cannot be created with --sysroot (--dry-run can plan them)");
		return -1;
	}
	rc = hk_page_sizes(ctl->ctx, &sizes, &n);
	if (rc == 0)
		rc = hk_mounts_read(ctl->ctx, &ms);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the page sizes or mounts: %s", strerror(-rc));
		return -1;
	}
	for (size_t k = 0; k < n && rc == 0; k++) {
		char target[PATH_MAX];
		ssize_t i;
		int fd = -ENOENT;
		struct hk_mount_request rq;

		mount_dir(a, sizes[k], target, sizeof(target));
		rq = request(a, target, NULL);
		/* The directories as they are now: no symlink, no stranger's (nothing made yet). */
		if (hk_is_live(ctl->ctx))
			fd = hk_mount_dir_open(ctl->ctx, &rq, false);
		if (fd < 0 && fd != -ENOENT) {
			rc = -1;
			break;
		}
		i = find_mount(ms, target);
		if (i >= 0 && !unmounting && !same_mount(ctl, a, ms, (size_t)i, sizes[k], fd)) {
			ha_msg(ctl, HA_ERROR,
			       "%s is already mounted with other options (%s): left as it is; "
			       "unmount it first (hugeadm --unmount-all)",
			       target, hk_mount_options(ms, (size_t)i));
			rc = -1;
		}
		if (fd >= 0)
			close(fd);
		if (rc == 0)
			rc = check_sizes(ctl, sizes[k]);
		if (rc == 0)
			rc = plan_mount(ctl, a, sizes[k], target);
	}
	free(sizes);
	hk_mounts_unref(ms);
	return rc;
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
 * The -o options of the mount of one page size. The owner and mode of the
 * mount's root are mount options: nothing is chowned by path after mounting.
 * Every mount is nosuid,nodev (2.23's were not): said last, after 2.23's options.
 */
static void mount_options(const struct hugeadm_ctl *ctl, const struct ha_action *a, uint64_t size,
			  bool owner, char *buf, size_t sz)
{
	int n = snprintf(buf, sz, "pagesize=%" PRIu64, size);

	if (ctl->max_size)
		n += snprintf(buf + n, sz - (size_t)n, ",size=%" PRIu64, ctl->max_size);
	if (ctl->min_size)
		n += snprintf(buf + n, sz - (size_t)n, ",min_size=%" PRIu64, ctl->min_size);
	if (ctl->max_inodes > 0)
		n += snprintf(buf + n, sz - (size_t)n, ",nr_inodes=%ld", ctl->max_inodes);
	if (owner)
		n += snprintf(buf + n, sz - (size_t)n, ",uid=%u,gid=%u,mode=0%o", (unsigned)a->uid,
			      (unsigned)a->gid, (unsigned)a->mode);
	snprintf(buf + n, sz - (size_t)n, ",nosuid,nodev");
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

	mount_options(ctl, a, it->page_size, false, opts, sizeof(opts));
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
		if (ctl->dry_run && unmount_all_asked(ctl))
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

static bool under_mount_dir(const char *target)
{
	size_t len = strlen(HA_MOUNT_DIR);

	return strncmp(target, HA_MOUNT_DIR, len) == 0 && target[len] == '/';
}

/*
 * One of hugeadm's mounts (i in ms) taken down by libhugekit, which walks its
 * path without following a link and unmounts only the mount the table shows
 * there: a user who owns a level of the path can swap a directory for a
 * symlink under our feet.
 */
static int unmount_one(struct hugeadm_ctl *ctl, const struct hk_mounts *ms, size_t i)
{
	int rc = hk_mount_unmount(ctl->ctx, ms, i);

	if (rc == -EXDEV)
		ha_msg(ctl, HA_WARNING,
		       "%s is not the mount the mount table shows there (a symbolic link or "
		       "moved): not unmounting it",
		       hk_mount_target(ms, i));
	return rc;
}

int ha_apply_unmount_all(struct hugeadm_ctl *ctl)
{
	struct hk_mounts *ms = NULL;
	bool skipped = false;
	int rc, n = 0;

	if (!hk_is_live(ctl->ctx) && !ctl->dry_run) {
		ha_msg(ctl, HA_ERROR, "--unmount-all is not supported with --sysroot");
		return -1;
	}
	rc = hk_mounts_read(ctl->ctx, &ms);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the mount table: %s", strerror(-rc));
		return -1;
	}
	/* Last mounted first: a mount below another comes off before it. */
	for (size_t i = hk_mounts_count(ms); i-- > 0 && rc == 0;) {
		const char *t = hk_mount_target(ms, i), *last = strrchr(t, '/');

		if (!under_mount_dir(t))
			continue;
		/* hugeadm's own layout only: .../pagesize-2MB. */
		if (strncmp(last, "/pagesize-", strlen("/pagesize-")) != 0) {
			ha_msg(ctl, HA_WARNING, "%s is not one of hugeadm's mounts: left mounted",
			       t);
			continue;
		}
		n++;
		if (ctl->dry_run) {
			printf("umount %s\n", t);
			continue;
		}
		rc = unmount_one(ctl, ms, i);
		/* Left mounted, the others taken down all the same; the run fails. */
		if (rc == -EXDEV) {
			skipped = true;
			rc = 0;
			continue;
		}
		if (rc < 0)
			ha_msg(ctl, HA_ERROR, "Unable to unmount %s, error: %s", t, strerror(-rc));
		else
			ha_msg(ctl, HA_INFO, "unmounted %s", t);
	}
	if (n == 0)
		ha_msg(ctl, HA_INFO, "no hugetlbfs mounts under %s", HA_MOUNT_DIR);
	hk_mounts_unref(ms);
	return rc < 0 || skipped ? -1 : 0;
}
