// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dl.h"
#include "internal.h"
#include "walk.h"

struct hkl_mount {
	char *target;
	char *options;
	uint64_t page_size;
	int id;
};

struct hk_mounts {
	struct hkl_mount *m;
	size_t n;
};

/* libmount, loaded on the first call that needs it (dl.h): 0, or -ELIBACC said. */
static int need_libmount(struct hk_ctx *ctx, const struct hkl_libmount **ret)
{
	const char *why = "";
	int rc = hkl_libmount(ret, &why);

	if (rc < 0)
		hkl_err(ctx, "cannot load libmount: %s", why);
	return rc;
}

/* The parser's callback: libmount is loaded, or it would not be parsing. */
static int parser_err(struct libmnt_table *tb, const char *filename, int line)
{
	const struct hkl_libmount *lm = NULL;
	struct hk_ctx *ctx;

	if (hkl_libmount(&lm, NULL) < 0)
		return 1;
	ctx = lm->mnt_table_get_userdata(tb);

	hkl_warn(ctx, "%s:%d: cannot parse the line, ignoring it", filename, line);
	return 1; /* skip the line, go on */
}

/* The sizes the kernel has (hk_page_sizes), for the pagesize= option; libmount. */
struct known_sizes {
	uint64_t *v;
	size_t n;
	uint64_t def;
	const struct hkl_libmount *lm;
};

/*
 * The pagesize= option, when it is one of the kernel's sizes; otherwise (none,
 * unparsable, 0, a size the kernel does not have) the default size, said.
 */
static uint64_t fs_page_size(struct hk_ctx *ctx, struct libmnt_fs *fs, const struct known_sizes *ks)
{
	char *val = NULL, buf[32];
	size_t len = 0;
	uint64_t sz;

	if (ks->lm->mnt_fs_get_option(fs, "pagesize", &val, &len) != 0 || !val || len == 0)
		return ks->def;
	if (len < sizeof(buf)) {
		memcpy(buf, val, len);
		buf[len] = '\0';
		if (hkc_parse_size(buf, &sz) == 0)
			for (size_t i = 0; i < ks->n; i++)
				if (ks->v[i] == sz)
					return sz;
	}
	hkl_warn(ctx,
		 "%s: pagesize=%.*s is not a huge page size of this kernel, taken as the default",
		 ks->lm->mnt_fs_get_target(fs) ? ks->lm->mnt_fs_get_target(fs) : "?",
		 (int)(len < 32 ? len : 32), val);
	return ks->def;
}

static int add_mount(struct hk_ctx *ctx, struct hk_mounts *ms, struct libmnt_fs *fs,
		     const struct known_sizes *ks)
{
	struct hkl_mount *nm, *m;
	const char *target = ks->lm->mnt_fs_get_target(fs);

	nm = realloc(ms->m, (ms->n + 1) * sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	ms->m = nm;
	m = &ms->m[ms->n];
	m->target = strdup(target ? target : "");
	/* VFS and superblock options merged, as the kernel writes /proc/mounts. */
	m->options = ks->lm->mnt_fs_strdup_options(fs);
	m->page_size = fs_page_size(ctx, fs, ks);
	m->id = ks->lm->mnt_fs_get_id(fs);
	if (!m->target || !m->options) {
		free(m->target);
		free(m->options);
		return -ENOMEM;
	}
	ms->n++;
	return 0;
}

HK_EXPORT int hk_mounts_read(struct hk_ctx *ctx, struct hk_mounts **ret_mounts)
{
	struct libmnt_table *tb = NULL;
	struct libmnt_iter *it = NULL;
	struct hk_mounts *ms;
	struct libmnt_fs *fs;
	struct known_sizes ks = {0};
	FILE *f = NULL;
	int rc;

	rc = need_libmount(ctx, &ks.lm);
	if (rc < 0)
		return rc;
	ms = calloc(1, sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	rc = hkc_path_fopenf(&ctx->path, &f, HK_PROC_MOUNTINFO);
	if (rc < 0) {
		hkl_err(ctx, "%s: %s", HK_ABS(HK_PROC_MOUNTINFO), strerror(-rc));
		goto out;
	}
	tb = ks.lm->mnt_new_table();
	it = ks.lm->mnt_new_iter(MNT_ITER_FORWARD);
	if (!tb || !it) {
		rc = -ENOMEM;
		goto out;
	}
	ks.lm->mnt_table_set_userdata(tb, ctx);
	ks.lm->mnt_table_set_parser_errcb(tb, parser_err);
	/* libmount reads lines of any length and decodes \040-style escapes. */
	rc = ks.lm->mnt_table_parse_stream(tb, f, HK_ABS(HK_PROC_MOUNTINFO));
	if (rc < 0) {
		hkl_err(ctx, "%s: cannot parse: %s", HK_ABS(HK_PROC_MOUNTINFO), strerror(-rc));
		goto out;
	}
	hkl_ctx_default_size(ctx, &ks.def);
	if (hk_page_sizes(ctx, &ks.v, &ks.n) < 0)
		ks.n = 0; /* no pools: every mount is taken at the default size */
	while (ks.lm->mnt_table_next_fs(tb, it, &fs) == 0) {
		if (!ks.lm->mnt_fs_match_fstype(fs, "hugetlbfs"))
			continue;
		rc = add_mount(ctx, ms, fs, &ks);
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	free(ks.v);
	if (f)
		fclose(f);
	ks.lm->mnt_free_iter(it);
	ks.lm->mnt_unref_table(tb);
	if (rc < 0) {
		hk_mounts_unref(ms);
		return rc;
	}
	*ret_mounts = ms;
	return 0;
}

HK_EXPORT void hk_mounts_unref(struct hk_mounts *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->n; i++) {
		free(ms->m[i].target);
		free(ms->m[i].options);
	}
	free(ms->m);
	free(ms);
}

HK_EXPORT size_t hk_mounts_count(const struct hk_mounts *ms)
{
	return ms->n;
}

HK_EXPORT const char *hk_mount_target(const struct hk_mounts *ms, size_t i)
{
	return i < ms->n ? ms->m[i].target : NULL;
}

HK_EXPORT const char *hk_mount_options(const struct hk_mounts *ms, size_t i)
{
	return i < ms->n ? ms->m[i].options : NULL;
}

HK_EXPORT uint64_t hk_mount_page_size(const struct hk_mounts *ms, size_t i)
{
	return i < ms->n ? ms->m[i].page_size : 0;
}

HK_EXPORT int hk_mount_id(const struct hk_mounts *ms, size_t i)
{
	return i < ms->n ? ms->m[i].id : -1;
}

HK_EXPORT int hk_mount_option(const struct hk_mounts *ms, size_t i, const char *name,
			      char **ret_value)
{
	const struct hkl_libmount *lm = NULL;
	char *val = NULL;
	size_t len = 0;
	int rc;

	if (i >= ms->n || !name || !ret_value)
		return -EINVAL;
	/* ms came from hk_mounts_read(), which loaded libmount. */
	rc = hkl_libmount(&lm, NULL);
	if (rc < 0)
		return rc;
	rc = lm->mnt_optstr_get_option(ms->m[i].options, name, &val, &len);
	if (rc == 1)
		return -ENOENT;
	if (rc < 0)
		return -EINVAL;
	*ret_value = strndup(val ? val : "", len);
	return *ret_value ? 0 : -ENOMEM;
}

/* libmount's answer as -errno: >0 and a failed status carry the syscall's errno. */
static int context_result(const struct hkl_libmount *lm, struct libmnt_context *cxt, int rc)
{
	if (rc > 0 || (rc == 0 && lm->mnt_context_get_status(cxt) != 1)) {
		int err = lm->mnt_context_get_syscall_errno(cxt);

		return err ? -err : -EIO;
	}
	return rc;
}

/*
 * Every hugetlbfs mount hugekit makes is nosuid,nodev: files on it are memory,
 * never a set-user-ID program or a device to open. These are attributes of the
 * mount, not parameters of hugetlbfs (its fsconfig() refuses them): they are
 * taken out of the options and given to fsmount() (MOUNT_ATTR_*) or mount(2)
 * (MS_*). "suid" and "dev", which would undo them, are refused.
 */
struct vfs_flag {
	const char *name;
	unsigned attr;
	unsigned long ms;
};

static const struct vfs_flag vfs_flags[] = {
	{"nosuid", MOUNT_ATTR_NOSUID, MS_NOSUID},
	{"nodev", MOUNT_ATTR_NODEV, MS_NODEV},
	{"noexec", MOUNT_ATTR_NOEXEC, MS_NOEXEC},
};

/*
 * The options without the mount's flags (*ret_fs, free()), and the flags, the
 * two that are always there included: 0, -EINVAL for "suid" or "dev", -ENOMEM.
 */
static int split_options(const char *options, char **ret_fs, unsigned *ret_attr,
			 unsigned long *ret_ms)
{
	char *opts = strdup(options), *fs = calloc(1, strlen(options) + 1), *save = NULL;
	unsigned attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	unsigned long ms = MS_NOSUID | MS_NODEV;
	int rc = 0;

	if (!opts || !fs) {
		free(opts);
		free(fs);
		return -ENOMEM;
	}
	for (char *o = strtok_r(opts, ",", &save); o && rc == 0; o = strtok_r(NULL, ",", &save)) {
		size_t k;

		if (strcmp(o, "suid") == 0 || strcmp(o, "dev") == 0) {
			rc = -EINVAL;
			break;
		}
		for (k = 0; k < sizeof(vfs_flags) / sizeof(vfs_flags[0]); k++)
			if (strcmp(o, vfs_flags[k].name) == 0)
				break;
		if (k < sizeof(vfs_flags) / sizeof(vfs_flags[0])) {
			attr |= vfs_flags[k].attr;
			ms |= vfs_flags[k].ms;
			continue;
		}
		if (*fs)
			strcat(fs, ",");
		strcat(fs, o);
	}
	free(opts);
	if (rc < 0) {
		free(fs);
		return rc;
	}
	*ret_fs = fs;
	*ret_attr = attr;
	*ret_ms = ms;
	return 0;
}

/* mount(2) through libmount on the running system; a tree has no kernel to mount in. */
HK_EXPORT int hk_mount_hugetlbfs(struct hk_ctx *ctx, const char *target, const char *options)
{
	const struct hkl_libmount *lm = NULL;
	struct libmnt_context *cxt;
	int rc;

	if (!hk_is_live(ctx))
		return -EOPNOTSUPP;
	char *fs = NULL, *all = NULL;
	unsigned attr;
	unsigned long ms;

	if (!target || !options)
		return -EINVAL;
	rc = split_options(options, &fs, &attr, &ms);
	if (rc < 0)
		return rc;
	/* libmount takes nosuid,nodev as the mount's flags. */
	free(fs);
	rc = need_libmount(ctx, &lm);
	if (rc < 0)
		return rc;
	if (asprintf(&all, "%s%snosuid,nodev", options, *options ? "," : "") < 0)
		return -ENOMEM;
	cxt = lm->mnt_new_context();
	if (!cxt) {
		free(all);
		return -ENOMEM;
	}
	rc = lm->mnt_context_set_fstype(cxt, "hugetlbfs");
	if (rc == 0)
		rc = lm->mnt_context_set_source(cxt, "none");
	if (rc == 0)
		rc = lm->mnt_context_set_target(cxt, target);
	if (rc == 0)
		rc = lm->mnt_context_set_options(cxt, all);
	if (rc == 0) {
		rc = context_result(lm, cxt, lm->mnt_context_mount(cxt));
	}
	if (rc < 0)
		hkl_err(ctx, "mount -t hugetlbfs none %s -o %s: %s", target, all, strerror(-rc));
	else
		hkl_info(ctx, "mounted hugetlbfs at %s (%s)", target, all);
	lm->mnt_free_context(cxt);
	free(all);
	return rc;
}

/*
 * The new mount API (Linux 5.2): a hugetlbfs superblock configured option by
 * option, then attached with move_mount() onto the directory dirfd refers to,
 * by the descriptor itself (MOVE_MOUNT_T_EMPTY_PATH): no path is looked up, so
 * nothing can be swapped in between the caller's checks and the mount.
 */
static int mount_fd_new_api(int dirfd, const char *options, unsigned attr, uint64_t *mnt_id)
{
	char *opts = strdup(options), *save = NULL;
	int fsfd = -1, mfd = -1, rc = 0;

	if (!opts)
		return -ENOMEM;
	fsfd = fsopen("hugetlbfs", FSOPEN_CLOEXEC);
	/* Some seccomp filters answer EPERM for system calls they do not know. */
	if (fsfd < 0)
		rc = errno == EPERM ? -ENOSYS : -errno;
	if (rc == 0 && fsconfig(fsfd, FSCONFIG_SET_STRING, "source", "none", 0) < 0)
		rc = -errno;
	for (char *o = strtok_r(opts, ",", &save); o && rc == 0; o = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(o, '=');

		if (eq)
			*eq++ = '\0';
		if (fsconfig(fsfd, eq ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, o, eq, 0) < 0)
			rc = -errno;
	}
	if (rc == 0 && fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		rc = -errno;
	if (rc == 0 && (mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attr)) < 0)
		rc = -errno;
	if (rc == 0 &&
	    move_mount(mfd, "", dirfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		rc = -errno;
	/* The id of the mount itself, through its descriptor: the caller checks where it is. */
	if (rc == 0) {
		struct statx stx;

		if (statx(mfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 &&
		    (stx.stx_mask & STATX_MNT_ID))
			*mnt_id = stx.stx_mnt_id;
	}
	if (mfd >= 0)
		close(mfd);
	if (fsfd >= 0)
		close(fsfd);
	free(opts);
	return rc;
}

/*
 * Kernels without the new mount API: mount(2) on /proc/self/fd/N. That is a
 * "magic link": the kernel resolves it to the very directory the descriptor
 * holds (it does not look the directory's name up again), so the mount lands
 * on the directory that was checked even if its path has changed since.
 */
static int mount_fd_proc(int dirfd, const char *options, unsigned long flags)
{
	char target[64];

	/* Without /proc mounted this is ENOENT: there is no other safe name for it. */
	snprintf(target, sizeof(target), "%s/%d", HK_ABS(HK_PROC_SELF_FD), dirfd);
	return mount("none", target, "hugetlbfs", flags, options) < 0 ? -errno : 0;
}

HK_EXPORT int hk_mount_hugetlbfs_fd_id(struct hk_ctx *ctx, int dirfd, const char *options,
				       uint64_t *ret_mnt_id)
{
	const char *api = secure_getenv("HK_MOUNT_API");
	struct stat st;
	char *fs = NULL;
	unsigned attr;
	unsigned long ms;
	int rc = -ENOSYS;

	if (!hk_is_live(ctx))
		return -EOPNOTSUPP;
	if (dirfd < 0 || !options || !ret_mnt_id)
		return -EINVAL;
	*ret_mnt_id = 0;
	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	rc = split_options(options, &fs, &attr, &ms);
	if (rc < 0) {
		if (rc == -EINVAL)
			hkl_err(ctx, "-o %s: hugetlbfs is mounted nosuid,nodev, never suid or dev",
				options);
		return rc;
	}
	rc = -ENOSYS;
	if (!api || strcmp(api, "mount") != 0)
		rc = mount_fd_new_api(dirfd, fs, attr, ret_mnt_id);
	if (rc == -ENOSYS) {
		hkl_dbg(ctx,
			"no new mount API: mount(2) on the descriptor's magic link (" HK_PROC_SELF_FD
			")");
		rc = mount_fd_proc(dirfd, fs, ms);
	}
	free(fs);
	/* The caller knows the path and reports the failure. */
	if (rc < 0)
		hkl_dbg(ctx, "mount -t hugetlbfs none (fd %d) -o %s: %s", dirfd, options,
			strerror(-rc));
	else
		hkl_info(ctx, "mounted hugetlbfs on fd %d (%s)", dirfd, options);
	return rc;
}

HK_EXPORT int hk_mount_hugetlbfs_fd(struct hk_ctx *ctx, int dirfd, const char *options)
{
	uint64_t id;

	return hk_mount_hugetlbfs_fd_id(ctx, dirfd, options, &id);
}

/*
 * umount2() through the magic link /proc/self/fd/N (the kernel resolves it to
 * the very directory fd holds, whatever its path is now), or of name in that
 * directory: a mount on the directory itself comes off, and a symlink at name
 * is not followed (UMOUNT_NOFOLLOW).
 */
HK_EXPORT int hk_umount_fd(struct hk_ctx *ctx, int fd, const char *name, int flags)
{
	char target[PATH_MAX];

	if (!hk_is_live(ctx))
		return -EOPNOTSUPP;
	if (fd < 0 || (name && (!*name || strchr(name, '/'))))
		return -EINVAL;
	snprintf(target, sizeof(target), "%s/%d%s%s", HK_ABS(HK_PROC_SELF_FD), fd, name ? "/" : "",
		 name ? name : "");
	/* Not on the magic link itself: following it is the point. */
	if (umount2(target, name ? flags | UMOUNT_NOFOLLOW : flags) < 0) {
		int err = errno;

		hkl_dbg(ctx, "umount %s: %s", target, strerror(err));
		return -err;
	}
	return 0;
}

HK_EXPORT int hk_mount_unmount(struct hk_ctx *ctx, const struct hk_mounts *mounts, size_t i)
{
	struct hkc_walk w;
	const char *t;
	int rc;

	if (!ctx || !mounts || i >= hk_mounts_count(mounts))
		return -EINVAL;
	if (!hk_is_live(ctx))
		return -EOPNOTSUPP;
	t = hk_mount_target(mounts, i);
	if (!t || t[0] != '/' || !t[1])
		return -EINVAL;
	/* Not a link followed: one there means the path no longer leads to the mount. */
	rc = hkc_walk(t, 0, &w);
	/* A link or a file where a directory was, or the path gone: not that mount. */
	if (rc == 0 && hk_mount_id(mounts, i) > 0 &&
	    hk_mount_root_id(w.fd) == (uint64_t)hk_mount_id(mounts, i)) {
		/* An open descriptor of its root keeps the mount busy. */
		close(w.fd);
		w.fd = -1;
		rc = hk_umount_fd(ctx, w.dirfd, w.base, 0);
	} else if (rc == 0 || rc == -ELOOP || rc == -ENOTDIR || rc == -ENOENT) {
		rc = -EXDEV;
	}
	hkc_walk_fini(&w);
	return rc;
}

HK_EXPORT int hk_umount(struct hk_ctx *ctx, const char *target)
{
	const struct hkl_libmount *lm = NULL;
	struct libmnt_context *cxt;
	int rc;

	if (!hk_is_live(ctx))
		return -EOPNOTSUPP;
	if (!target)
		return -EINVAL;
	rc = need_libmount(ctx, &lm);
	if (rc < 0)
		return rc;
	cxt = lm->mnt_new_context();
	if (!cxt)
		return -ENOMEM;
	rc = lm->mnt_context_set_target(cxt, target);
	if (rc == 0) {
		rc = context_result(lm, cxt, lm->mnt_context_umount(cxt));
	}
	if (rc < 0)
		hkl_err(ctx, "umount %s: %s", target, strerror(-rc));
	lm->mnt_free_context(cxt);
	return rc;
}
