// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The files of shared text that libhugekit-rt makes for HUGETLB_SHARE=1,
 * <hugetlbfs mount>/hugekit-text-<uid>/<exe>.<key>.<offset hex> (and
 * .hugekit-tmp-<pid>-<n> while one is being made): listed by
 * --list-shared-text, removed by --clean-shared-text.
 *
 * The directories belong to their users, who may put anything in them, and
 * hugeadm runs as root: nothing is followed. Each mount is opened and must be
 * hugetlbfs (a mount seen twice, bound elsewhere, is read once); in it only
 * hugekit-text-<uid> directories, opened O_DIRECTORY|O_NOFOLLOW and owned by
 * that uid, are read; in them only regular files (fstatat without following)
 * are listed or removed, by unlinkat() on that directory's descriptor. A
 * symbolic link or a directory swapped in meanwhile is at most unlinked
 * itself (a link) or not at all (a directory: EISDIR), never followed.
 * Removing a file that a running program maps is safe: the program keeps its
 * mapping, and the pages go back to the pool when the last mapping goes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "hugeadm.h"
#include "kconst.h"

/* One file as the walk finds it. */
struct text_file {
	const char *dir; /* <mount>/hugekit-text-<uid> */
	int dirfd;
	uid_t uid;
	const char *name;
	const struct stat *st;
	uint64_t page_size;
};

typedef int (*text_fn)(struct hugeadm_ctl *ctl, const struct text_file *f, void *data);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in the directory at fd (not . and ..), sorted; those that pass keep (may be NULL). */
static int read_names(int fd, bool (*keep)(const char *), char ***ret, size_t *ret_n)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	char **names = NULL, **nn;
	size_t n = 0;
	struct dirent *e;
	DIR *d;

	if (dup_fd < 0)
		return -errno;
	d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		return -errno;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    (keep && !keep(e->d_name)))
			continue;
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(e->d_name))) {
			names = nn ? nn : names;
			for (size_t i = 0; i < n; i++)
				free(names[i]);
			free(names);
			closedir(d);
			return -ENOMEM;
		}
		names = nn;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	*ret = names;
	*ret_n = n;
	return 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* "hugekit-text-<uid>", the uid written as the runtime writes it. */
static bool text_dir_uid(const char *name, uid_t *ret)
{
	const char *d = name + strlen(HKC_SHARE_DIR_PREFIX);
	char canon[32];
	unsigned long v;

	if (strncmp(name, HKC_SHARE_DIR_PREFIX, strlen(HKC_SHARE_DIR_PREFIX)) != 0 ||
	    strspn(d, "0123456789") != strlen(d) || !*d || strlen(d) > 10)
		return false;
	v = strtoul(d, NULL, 10);
	snprintf(canon, sizeof(canon), "%lu", v);
	if (strcmp(canon, d) != 0 || v > UINT32_MAX - 1)
		return false;
	*ret = (uid_t)v;
	return true;
}

static bool is_text_dir(const char *name)
{
	uid_t uid;

	return text_dir_uid(name, &uid);
}

/* Every regular file in one user's directory, checked as the comment at the top says. */
static int walk_dir(struct hugeadm_ctl *ctl, int mntfd, const char *mnt, const char *name,
		    uid_t uid, uint64_t page_size, text_fn fn, void *data)
{
	struct text_file f = {.uid = uid, .page_size = page_size};
	char *dir = NULL, **names = NULL;
	size_t n = 0;
	struct stat st;
	int fd, rc;

	if (asprintf(&dir, "%s/%s", strcmp(mnt, "/") ? mnt : "", name) < 0)
		return -ENOMEM;
	fd = openat(mntfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* Another user's directory, for a user who is not root: not theirs to see. */
		ha_msg(ctl, errno == EACCES ? HA_INFO : HA_WARNING, "%s: %s: skipped", dir,
		       errno == ELOOP || errno == ENOTDIR ? "not a directory (a symbolic link?)"
							  : strerror(errno));
		free(dir);
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		ha_msg(ctl, HA_WARNING, "%s: %m: skipped", dir);
		rc = 0;
		goto out;
	}
	if (st.st_uid != uid) {
		ha_msg(ctl, HA_WARNING, "%s is owned by uid %u, not %u: skipped", dir,
		       (unsigned)st.st_uid, (unsigned)uid);
		rc = 0;
		goto out;
	}
	rc = read_names(fd, NULL, &names, &n);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read %s: %s", dir, strerror(-rc));
		goto out;
	}
	f.dir = dir;
	f.dirfd = fd;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				ha_msg(ctl, HA_WARNING, "%s/%s: %m: skipped", dir, names[i]);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			ha_msg(ctl, HA_WARNING, "%s/%s is not a regular file: left alone", dir,
			       names[i]);
			continue;
		}
		f.name = names[i];
		f.st = &st;
		rc = fn(ctl, &f, data);
	}
	free_names(names, n);
out:
	close(fd);
	free(dir);
	return rc;
}

/*
 * fn for every file of shared text of every user (or of the uid only_uid,
 * when has_uid), mount by mount in the mount table's order.
 */
static int walk(struct hugeadm_ctl *ctl, bool has_uid, uid_t only_uid, text_fn fn, void *data)
{
	struct hk_mounts *ms = NULL;
	dev_t *seen = NULL;
	size_t n_seen = 0;
	int rc;

	rc = hk_mounts_read(ctl->ctx, &ms);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the mount table: %s", strerror(-rc));
		return rc;
	}
	seen = calloc(hk_mounts_count(ms) + 1, sizeof(*seen));
	if (!seen)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < hk_mounts_count(ms); i++) {
		const char *mnt = hk_mount_target(ms, i);
		char **names = NULL;
		size_t n = 0;
		struct statfs sf;
		struct stat st;
		bool dup = false;
		int mntfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (mntfd < 0) {
			ha_msg(ctl, HA_WARNING, "cannot open %s: %m: skipped", mnt);
			continue;
		}
		if (fstatfs(mntfd, &sf) < 0 || (uint32_t)sf.f_type != (uint32_t)HUGETLBFS_MAGIC ||
		    fstat(mntfd, &st) < 0) {
			ha_msg(ctl, HA_WARNING, "%s is not a hugetlbfs mount now: skipped", mnt);
			close(mntfd);
			continue;
		}
		for (size_t k = 0; k < n_seen; k++)
			dup |= seen[k] == st.st_dev;
		if (dup) {
			close(mntfd);
			continue;
		}
		seen[n_seen++] = st.st_dev;
		rc = read_names(mntfd, is_text_dir, &names, &n);
		if (rc < 0)
			ha_msg(ctl, HA_ERROR, "cannot read %s: %s", mnt, strerror(-rc));
		for (size_t k = 0; k < n && rc == 0; k++) {
			uid_t uid = 0;

			text_dir_uid(names[k], &uid);
			if (!has_uid || uid == only_uid)
				rc = walk_dir(ctl, mntfd, mnt, names[k], uid, (uint64_t)sf.f_bsize,
					      fn, data);
		}
		free_names(names, n);
		close(mntfd);
	}
	free(seen);
	hk_mounts_unref(ms);
	return rc;
}

/* ---- --list-shared-text ----------------------------------------------- */

/* What a file's name says: <exe>.<key>.<offset hex>, or a file being made. */
struct text_name {
	char *exe; /* NULL when the name is not one of the runtime's */
	char *key;
	uint64_t offset;
	bool temporary;
};

static void parse_name(const char *name, struct text_name *ret)
{
	const char *dot2 = strrchr(name, '.'), *dot1;
	char *end;

	memset(ret, 0, sizeof(*ret));
	if (strncmp(name, HKC_SHARE_TMP_PREFIX, strlen(HKC_SHARE_TMP_PREFIX)) == 0) {
		ret->temporary = true;
		return;
	}
	if (!dot2 || dot2 == name || !dot2[1] ||
	    strspn(dot2 + 1, "0123456789abcdef") != strlen(dot2 + 1))
		return;
	for (dot1 = dot2 - 1; dot1 > name && *dot1 != '.'; dot1--)
		;
	if (dot1 == name || dot1 + 1 == dot2)
		return;
	errno = 0;
	ret->offset = strtoull(dot2 + 1, &end, 16);
	if (errno)
		return;
	ret->exe = strndup(name, (size_t)(dot1 - name));
	ret->key = strndup(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	if (!ret->exe || !ret->key) {
		free(ret->exe);
		free(ret->key);
		ret->exe = ret->key = NULL;
	}
}

struct list_ctx {
	struct libscols_table *tb; /* text */
	struct hkt_json *j;	   /* or JSON */
};

static const char *user_name(uid_t uid, char *buf, size_t size)
{
	const struct passwd *pw = getpwuid(uid);

	if (pw)
		return pw->pw_name;
	snprintf(buf, size, "%u", (unsigned)uid);
	return buf;
}

static int list_one(struct hugeadm_ctl *ctl, const struct text_file *f, void *data)
{
	struct list_ctx *lc = data;
	uint64_t size = (uint64_t)f->st->st_size, pages = (uint64_t)f->st->st_blocks * 512;
	struct libscols_line *ln;
	struct text_name tn;
	char ubuf[16], sz[32], np[32], *path = NULL, *cells[6] = {NULL};
	int rc = 0;

	(void)ctl;
	pages = f->page_size ? pages / f->page_size : 0;
	if (asprintf(&path, "%s/%s", f->dir, f->name) < 0)
		return -ENOMEM;
	parse_name(f->name, &tn);
	if (lc->j) {
		hkt_json_open_object(lc->j, NULL);
		if (getpwuid(f->uid))
			hkt_json_string(lc->j, "user", getpwuid(f->uid)->pw_name);
		else
			hkt_json_null(lc->j, "user");
		hkt_json_u64(lc->j, "uid", f->uid);
		hkt_json_string(lc->j, "file", path);
		hkt_json_u64(lc->j, "page_size", f->page_size);
		hkt_json_u64(lc->j, "pages", pages);
		hkt_json_u64(lc->j, "size", size);
		hkt_json_bool(lc->j, "unfinished", tn.temporary);
		if (tn.exe) {
			hkt_json_string(lc->j, "executable", tn.exe);
			hkt_json_string(lc->j, "key", tn.key);
			hkt_json_u64(lc->j, "offset", tn.offset);
		} else {
			hkt_json_null(lc->j, "executable");
			hkt_json_null(lc->j, "key");
			hkt_json_null(lc->j, "offset");
		}
		hkt_json_close_object(lc->j);
		goto out;
	}
	hkc_format_size(sz, sizeof(sz), size);
	snprintf(np, sizeof(np), "%" PRIu64, pages);
	cells[0] = strdup(user_name(f->uid, ubuf, sizeof(ubuf)));
	cells[1] = strdup(np);
	cells[2] = strdup(sz);
	cells[3] = hkt_escape_ctl(path, true);
	cells[4] = tn.exe ? hkt_escape_ctl(tn.exe, true)
			  : strdup(tn.temporary ? "(being made, or left by a crash)" : "-");
	cells[5] = tn.key ? hkt_escape_ctl(tn.key, true) : strdup("-");
	ln = scols_table_new_line(lc->tb, NULL);
	for (int c = 0; c < 6 && rc == 0; c++)
		if (!ln || !cells[c] || scols_line_set_data(ln, (size_t)c, cells[c]) != 0)
			rc = -ENOMEM;
	for (int c = 0; c < 6; c++)
		free(cells[c]);
out:
	free(tn.exe);
	free(tn.key);
	free(path);
	return rc;
}

int ha_list_shared_text(struct hugeadm_ctl *ctl, struct hkt_json *j)
{
	static const char *const cols[] = {"User", "Pages", "Size", "File", "Executable", "Key"};
	struct list_ctx lc = {.j = j};
	int rc = 0;

	if (j) {
		hkt_json_open_array(j, "shared_text");
		rc = walk(ctl, false, 0, list_one, &lc);
		hkt_json_close_array(j);
		return rc;
	}
	lc.tb = scols_new_table();
	if (!lc.tb)
		rc = -ENOMEM;
	for (size_t c = 0; rc == 0 && c < sizeof(cols) / sizeof(cols[0]); c++)
		if (!scols_table_new_column(lc.tb, cols[c], 0,
					    c == 1 || c == 2 ? SCOLS_FL_RIGHT : 0))
			rc = -ENOMEM;
	if (rc == 0)
		rc = walk(ctl, false, 0, list_one, &lc);
	if (rc == 0) {
		fflush(stdout);
		rc = scols_print_table(lc.tb);
	}
	if (rc == -ENOMEM)
		ha_msg(ctl, HA_ERROR, "cannot list the shared text: %s", strerror(ENOMEM));
	scols_unref_table(lc.tb);
	return rc;
}

/* ---- --clean-shared-text ---------------------------------------------- */

int ha_plan_clean_text(struct hugeadm_ctl *ctl, const char *user)
{
	const struct passwd *pw;
	struct ha_action *a;
	unsigned long v;

	ha_plan_simple(ctl, HA_CLEAN_TEXT, NULL, NULL, "--clean-shared-text");
	a = &ctl->actions[ctl->n_actions - 1];
	if (!user)
		return 0;
	a->value = user;
	a->sub = strdup(user); /* marks "one user only" */
	pw = getpwnam(user);
	if (pw) {
		a->uid = pw->pw_uid;
		return 0;
	}
	/* A number: also the uid of a user who is gone, whose files stayed. */
	errno = 0;
	v = strtoul(user, NULL, 10);
	if (*user && strspn(user, "0123456789") == strlen(user) && !errno && v < UINT32_MAX) {
		a->uid = (uid_t)v;
		return 0;
	}
	ha_msg(ctl, HA_ERROR, "--clean-shared-text: %s: no such user", user);
	return -1;
}

/*
 * A path as one shell word: in single quotes, a quote written '\''; with a
 * control character in it, as $'...' with \ooo escapes (one line whatever
 * the name holds).
 */
static void print_quoted(const char *s)
{
	bool ctl = false;

	for (const char *p = s; *p; p++)
		ctl |= (unsigned char)*p < 0x20 || *p == 0x7f;
	fputs(ctl ? "$'" : "'", stdout);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\'' && !ctl)
			fputs("'\\''", stdout);
		else if (ctl && (c == '\'' || c == '\\'))
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\%03o", c);
		else
			putchar(c);
	}
	putchar('\'');
}

struct clean_ctx {
	size_t files;
	uint64_t pages;
	int errors;
};

static int clean_one(struct hugeadm_ctl *ctl, const struct text_file *f, void *data)
{
	struct clean_ctx *cc = data;
	uint64_t pages = f->page_size ? (uint64_t)f->st->st_blocks * 512 / f->page_size : 0;

	if (ctl->dry_run) {
		char *path = NULL;

		if (asprintf(&path, "%s/%s", f->dir, f->name) < 0)
			return -ENOMEM;
		printf("rm -f -- ");
		print_quoted(path);
		putchar('\n');
		free(path);
	} else if (unlinkat(f->dirfd, f->name, 0) < 0) {
		if (errno == ENOENT)
			return 0;
		ha_msg(ctl, HA_ERROR, "cannot remove %s/%s: %m", f->dir, f->name);
		cc->errors++;
		return 0;
	} else {
		ha_msg(ctl, HA_INFO, "removed %s/%s (%" PRIu64 " %s)", f->dir, f->name, pages,
		       hkt_plural(pages, "page", "pages"));
	}
	cc->files++;
	cc->pages += pages;
	return 0;
}

int ha_apply_clean_text(struct hugeadm_ctl *ctl, const struct ha_action *a)
{
	struct clean_ctx cc = {0};
	int rc = walk(ctl, a->sub != NULL, a->uid, clean_one, &cc);

	if (rc < 0)
		return -1;
	if (!ctl->dry_run)
		ha_msg(ctl, HA_INFO,
		       "%zu %s of shared text removed, %" PRIu64
		       " huge %s freed (when no program maps them any more)",
		       cc.files, hkt_plural(cc.files, "file", "files"), cc.pages,
		       hkt_plural(cc.pages, "page", "pages"));
	return cc.errors ? -1 : 0;
}
