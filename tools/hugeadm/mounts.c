// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugetlbfs mounts, in libhugetlbfs's layout: one mount per page size,
 * /var/lib/hugetlbfs[/user/USER|/group/GROUP|/global]/pagesize-2MB, with the
 * owner and mode 2.23 gave them. Validated first (users, groups, sizes, paths
 * already mounted), idempotent, and with 2.23's dry-run text.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The -o options of the mount of one page size. */
static void mount_options(const struct hugeadm_ctl *ctl, uint64_t size, char *buf, size_t sz)
{
	int n = snprintf(buf, sz, "pagesize=%" PRIu64, size);

	if (ctl->max_size)
		n += snprintf(buf + n, sz - (size_t)n, ",size=%" PRIu64, ctl->max_size);
	if (ctl->min_size)
		n += snprintf(buf + n, sz - (size_t)n, ",min_size=%" PRIu64, ctl->min_size);
	if (ctl->max_inodes > 0)
		snprintf(buf + n, sz - (size_t)n, ",nr_inodes=%ld", ctl->max_inodes);
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
 */
static bool same_mount(const struct hugeadm_ctl *ctl, const struct ha_action *a,
		       const struct hk_mounts *ms, size_t i, uint64_t size, const char *target)
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
	if (stat(target, &st) < 0)
		return false;
	return st.st_uid == a->uid && st.st_gid == a->gid && (st.st_mode & 07777) == a->mode;
}

/* With --unmount-all, which runs first, the mounts there now do not matter. */
static bool unmount_all_asked(const struct hugeadm_ctl *ctl)
{
	for (size_t i = 0; i < ctl->n_actions; i++)
		if (ctl->actions[i].kind == HA_UNMOUNT_ALL)
			return true;
	return false;
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
		struct ha_pool_state *st;
		char target[PATH_MAX], sz[32];
		uint64_t max;
		ssize_t i;

		mount_dir(a, sizes[k], target, sizeof(target));
		ha_format_size(sz, sizeof(sz), sizes[k]);
		i = find_mount(ms, target);
		if (i >= 0 && !unmounting && !same_mount(ctl, a, ms, (size_t)i, sizes[k], target)) {
			ha_msg(ctl, HA_ERROR,
			       "%s is already mounted with other options (%s): left as it is; "
			       "unmount it first (hugeadm --unmount-all)",
			       target, hk_mount_options(ms, (size_t)i));
			rc = -1;
			break;
		}
		if (ha_state_get(ctl, &ctl->plan_states, sizes[k], &st) < 0) {
			rc = -1;
			break;
		}
		/* The pools as this run leaves them. */
		max = st->min + st->oc;
		if (ctl->max_size && max && ctl->max_size / sizes[k] > max) {
			ha_msg(ctl, HA_ERROR,
			       "--max-size %" PRIu64 " is more than the %s pool can hold (%" PRIu64
			       " pages, %" PRIu64 " bytes)",
			       ctl->max_size, sz, max, max * sizes[k]);
			rc = -1;
		} else if (ctl->max_size && ctl->max_size < sizes[k]) {
			ha_msg(ctl, HA_WARNING,
			       "the %s mount can hold no page: --max-size %" PRIu64
			       " is less than one %s page",
			       sz, ctl->max_size, sz);
		}
		/* The reservation may take surplus pages, up to the Maximum. */
		if (ctl->min_size && ctl->min_size / sizes[k] > max) {
			ha_msg(ctl, HA_ERROR,
			       "--min-size %" PRIu64
			       " reserves more than the %s pool can hold (%" PRIu64 " pages)",
			       ctl->min_size, sz, max);
			rc = -1;
		}
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

/*
 * Every missing component of path is created with mode and owner, as 2.23 did
 * (so /var/lib/hugetlbfs/user/nobody becomes 0700 nobody:root); existing
 * directories are left alone.
 */
static int ensure_dir(struct hugeadm_ctl *ctl, const char *path, uid_t uid, gid_t gid, mode_t mode,
		      const char *owner)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1;; p++) {
		bool last = *p == '\0';

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (ctl->dry_run) {
			dry_dir(buf, owner, mode);
		} else if (mkdir(buf, mode) == 0) {
			if (chown(buf, uid, gid) < 0 || chmod(buf, mode) < 0) {
				ha_msg(ctl, HA_ERROR, "Unable to change ownership of %s, error: %m",
				       buf);
				return -1;
			}
		} else if (errno != EEXIST) {
			ha_msg(ctl, HA_ERROR, "Unable to create dir %s, error: %m", buf);
			return -1;
		}
		if (last)
			break;
		*p = '/';
	}
	return 0;
}

int ha_apply_mounts(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	struct hk_mounts *ms = NULL;
	char **made = NULL;
	size_t n, n_made = 0;
	uint64_t *sizes;
	int rc;

	rc = hk_page_sizes(ctl->ctx, &sizes, &n);
	if (rc == 0)
		rc = hk_mounts_read(ctl->ctx, &ms);
	if (rc == 0 && !(made = calloc(n ? n : 1, sizeof(*made))))
		rc = -ENOMEM;
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the page sizes or mounts: %s", strerror(-rc));
		free(sizes);
		hk_mounts_unref(ms);
		return -1;
	}
	/* The base directory once, 0755 root:root, as 2.23 did. */
	if (ensure_dir(ctl, a->base, 0, 0, 0755, "root:root") < 0)
		rc = -1;
	for (size_t k = 0; k < n && rc == 0; k++) {
		char target[PATH_MAX], opts[256];

		mount_dir(a, sizes[k], target, sizeof(target));
		mount_options(ctl, sizes[k], opts, sizeof(opts));
		/* A dry run's --unmount-all took nothing down: pretend it did. */
		if (find_mount(ms, target) >= 0 && !(ctl->dry_run && unmount_all_asked(ctl))) {
			/* Validation made sure it is the very mount we would make. */
			ha_msg(ctl, HA_WARNING, "Directory %s is already mounted.", target);
			continue;
		}
		if (ensure_dir(ctl, target, a->uid, a->gid, a->mode, a->owner_label) < 0) {
			rc = -1;
			break;
		}
		if (ctl->dry_run) {
			printf("mount -t hugetlbfs none %s -o %s\n", target, opts);
			printf("chown %s %s\nchmod %o %s\n", a->owner_label, target,
			       (unsigned)a->mode, target);
			continue;
		}
		rc = hk_mount_hugetlbfs(ctl->ctx, target, opts);
		if (rc < 0) {
			ha_msg(ctl, HA_ERROR, "Unable to mount %s, error: %s", target,
			       strerror(-rc));
			break;
		}
		made[n_made++] = strdup(target);
		if (chown(target, a->uid, a->gid) < 0 || chmod(target, a->mode) < 0) {
			ha_msg(ctl, HA_ERROR, "Unable to change ownership of %s, error: %m",
			       target);
			rc = -1;
		}
	}
	/* A run that failed half-way takes its own mounts down again. */
	for (size_t i = 0; i < n_made; i++) {
		if (rc < 0 && made[i] && hk_umount(ctl->ctx, made[i]) == 0)
			ha_msg(ctl, HA_WARNING, "unmounted %s again", made[i]);
		free(made[i]);
	}
	free(made);
	free(sizes);
	hk_mounts_unref(ms);
	return rc < 0 ? -1 : 0;
}

static bool under_mount_dir(const char *target)
{
	size_t len = strlen(HA_MOUNT_DIR);

	return strncmp(target, HA_MOUNT_DIR, len) == 0 && target[len] == '/';
}

int ha_apply_unmount_all(struct hugeadm_ctl *ctl)
{
	struct hk_mounts *ms = NULL;
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
		const char *t = hk_mount_target(ms, i);

		if (!under_mount_dir(t))
			continue;
		n++;
		if (ctl->dry_run) {
			printf("umount %s\n", t);
			continue;
		}
		rc = hk_umount(ctl->ctx, t);
		if (rc < 0)
			ha_msg(ctl, HA_ERROR, "Unable to unmount %s, error: %s", t, strerror(-rc));
		else
			ha_msg(ctl, HA_INFO, "unmounted %s", t);
	}
	if (n == 0)
		ha_msg(ctl, HA_INFO, "no hugetlbfs mounts under %s", HA_MOUNT_DIR);
	hk_mounts_unref(ms);
	return rc < 0 ? -1 : 0;
}
