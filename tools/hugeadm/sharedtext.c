// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --list-shared-text and --clean-shared-text: the files of shared text that
 * libhugekit-rt makes for HUGETLB_SHARE=1, found and removed by libhugekit
 * (hk_shared_text_walk, hk_shared_text_remove: lib/core/sharedtext.c, which
 * follows no link in the users' directories); here the table, the JSON and a
 * dry run's shell lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"
#include "lazy.h"

struct list_ctx {
	const struct hkt_smartcols *sc;
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

/* A libhugetlbfs 2.23 file's marker in the Key column (a name of 2.23's has no key). */
#define LIBHUGETLBFS_KEY "(libhugetlbfs)"

static const char *executable(const struct hk_shared_text *f)
{
	/* Older libraries' structs end before libhugetlbfs_executable. */
	if (f->size > offsetof(struct hk_shared_text, libhugetlbfs_executable) &&
	    f->libhugetlbfs_executable)
		return f->libhugetlbfs_executable;
	return f->executable;
}

static void list_json(struct hkt_json *j, const struct hk_shared_text *f, const char *path)
{
	const struct passwd *pw = getpwuid(f->uid);
	bool l = !f->executable && executable(f);

	hkt_json_open_object(j, NULL);
	if (pw)
		hkt_json_string(j, "user", pw->pw_name);
	else
		hkt_json_null(j, "user");
	hkt_json_u64(j, "uid", f->uid);
	hkt_json_string(j, "file", path);
	hkt_json_u64(j, "page_size", f->page_size);
	hkt_json_u64(j, "pages", f->pages);
	hkt_json_u64(j, "size", f->bytes);
	hkt_json_bool(j, "unfinished", f->unfinished);
	if (executable(f))
		hkt_json_string(j, "executable", executable(f));
	else
		hkt_json_null(j, "executable");
	if (f->key) {
		hkt_json_string(j, "key", f->key);
		hkt_json_u64(j, "offset", f->offset);
	} else {
		hkt_json_null(j, "key");
		hkt_json_null(j, "offset");
	}
	hkt_json_bool(j, "libhugetlbfs", l);
	hkt_json_close_object(j);
}

static int list_one(void *data, const struct hk_shared_text *f)
{
	struct list_ctx *lc = data;
	const char *exe = executable(f);
	struct libscols_line *ln;
	char ubuf[16], sz[32], np[32], *path = NULL, *cells[6] = {NULL};
	int rc = 0;

	if (asprintf(&path, "%s/%s", f->dir, f->name) < 0)
		return -ENOMEM;
	if (lc->j) {
		list_json(lc->j, f, path);
		free(path);
		return 0;
	}
	hk_format_size(sz, sizeof(sz), f->bytes);
	snprintf(np, sizeof(np), "%" PRIu64, f->pages);
	cells[0] = strdup(user_name(f->uid, ubuf, sizeof(ubuf)));
	cells[1] = strdup(np);
	cells[2] = strdup(sz);
	cells[3] = hkt_escape_ctl(path, true);
	cells[4] = f->unfinished ? strdup("(being made, or left by a crash)")
		   : exe	 ? hkt_escape_ctl(exe, true)
				 : strdup("-");
	cells[5] = f->key ? hkt_escape_ctl(f->key, true)
		   : exe  ? strdup(LIBHUGETLBFS_KEY)
			  : strdup("-");
	ln = lc->sc->scols_table_new_line(lc->tb, NULL);
	for (int c = 0; c < 6 && rc == 0; c++)
		if (!ln || !cells[c] || lc->sc->scols_line_set_data(ln, (size_t)c, cells[c]) != 0)
			rc = -ENOMEM;
	for (int c = 0; c < 6; c++)
		free(cells[c]);
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
		rc = hk_shared_text_walk(ctl->ctx, -1, list_one, &lc);
		hkt_json_close_array(j);
		return rc;
	}
	lc.sc = ha_smartcols(ctl);
	if (!lc.sc)
		return -ELIBACC;
	lc.tb = lc.sc->scols_new_table();
	if (!lc.tb)
		rc = -ENOMEM;
	for (size_t c = 0; rc == 0 && c < sizeof(cols) / sizeof(cols[0]); c++)
		if (!lc.sc->scols_table_new_column(lc.tb, cols[c], 0,
						   c == 1 || c == 2 ? SCOLS_FL_RIGHT : 0))
			rc = -ENOMEM;
	if (rc == 0)
		rc = hk_shared_text_walk(ctl->ctx, -1, list_one, &lc);
	if (rc == 0) {
		fflush(stdout);
		rc = lc.sc->scols_print_table(lc.tb);
	}
	if (rc == -ENOMEM)
		ha_msg(ctl, HA_ERROR, "cannot list the shared text: %s", strerror(ENOMEM));
	lc.sc->scols_unref_table(lc.tb);
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

/* The pages a removed file held: when the run compared it, else when it was planned. */
static uint64_t text_pages(const struct hk_run_step *st)
{
	const char *v = st->before ? st->before : st->item->value;

	return v ? strtoull(v, NULL, 10) : 0;
}

int ha_clean_step(struct hugeadm_ctl *ctl, const struct hk_run_step *st, struct ha_cleaned *c)
{
	const char *path = st->item->path;
	uint64_t pages = text_pages(st);

	switch (st->kind) {
	case HK_RUN_STEP_WRITE:
		if (ctl->dry_run) {
			printf("rm -f -- ");
			print_quoted(path);
			putchar('\n');
		}
		return 0;
	case HK_RUN_STEP_DONE:
		if (!ctl->dry_run)
			ha_msg(ctl, HA_INFO, "removed %s (%" PRIu64 " %s)", path, pages,
			       hkt_plural(pages, "page", "pages"));
		c->files++;
		c->pages += pages;
		return 0;
	case HK_RUN_STEP_SHORT:
	case HK_RUN_STEP_FAILED:
		ha_msg(ctl, HA_ERROR, "cannot remove %s: %s", path,
		       st->error ? strerror(-st->error) : "it is still there");
		c->errors++;
		return 0;
	default:
		return 0;
	}
}

int ha_clean_said(struct hugeadm_ctl *ctl, const struct ha_cleaned *c)
{
	if (!ctl->dry_run)
		ha_msg(ctl, HA_INFO,
		       "%zu %s of shared text removed, %" PRIu64
		       " huge %s freed (when no program maps them any more)",
		       c->files, hkt_plural(c->files, "file", "files"), c->pages,
		       hkt_plural(c->pages, "page", "pages"));
	return c->errors ? -1 : 0;
}
