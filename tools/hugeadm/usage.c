// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --usage: who holds huge pages (processes, SysV segments, files, cgroups)
 * and the totals against the pools; --pages-needed PID: how many pages of
 * each size would hold a process's memory. Text tables and JSON.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"
#include "lazy.h"

static const char *const kind_names[] = {
	[HK_USAGE_PRIVATE] = "private",
	[HK_USAGE_SHARED] = "shared",
	[HK_USAGE_SYSV] = "sysv",
	[HK_USAGE_FILE] = "file",
};

/* --pages-needed's argument: a process id, strictly decimal. 0, or -1 after a message. */
int ha_plan_pages_needed(struct hugeadm_ctl *ctl, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	/* strtol skips leading blanks and takes a sign: neither is a process id. */
	if (errno || !isdigit((unsigned char)arg[0]) || end == arg || *end || v <= 0 ||
	    v > INT32_MAX) {
		ha_msg(ctl, HA_ERROR, "%s: invalid process id for --pages-needed", arg);
		return -1;
	}
	if (ctl->pages_needed) {
		ha_msg(ctl, HA_ERROR,
		       "--pages-needed given twice (%d and %s): one process at a time",
		       ctl->pages_needed, arg);
		return -1;
	}
	ctl->pages_needed = (int)v;
	return 0;
}

/* A user's name on the running system; the number in a sysroot tree (its users are not ours). */
static void user_name(struct hugeadm_ctl *ctl, char *buf, size_t sz, uint32_t uid)
{
	const struct passwd *pw = hk_is_live(ctl->ctx) ? getpwuid(uid) : NULL;

	if (pw)
		snprintf(buf, sz, "%s", pw->pw_name);
	else
		snprintf(buf, sz, "%" PRIu32, uid);
}

struct table {
	const struct hkt_smartcols *sc;
	const char *why; /* why sc is NULL */
	struct libscols_table *tb;
	size_t ncols;
	int rc;
};

static void table_new(struct table *t, const char *const *cols, size_t n)
{
	t->ncols = n;
	t->tb = NULL;
	t->sc = hkt_smartcols(&t->why);
	if (!t->sc) {
		t->rc = -ELIBACC;
		return;
	}
	t->tb = t->sc->scols_new_table();
	t->rc = t->tb ? 0 : -ENOMEM;
	for (size_t c = 0; t->rc == 0 && c < n; c++)
		if (!t->sc->scols_table_new_column(t->tb, cols[c], 0, c ? SCOLS_FL_RIGHT : 0))
			t->rc = -ENOMEM;
}

/* One row; the cells are escaped (names come from other users). */
static void table_row(struct table *t, char **cells)
{
	struct libscols_line *ln = t->rc == 0 ? t->sc->scols_table_new_line(t->tb, NULL) : NULL;

	if (!ln)
		t->rc = -ENOMEM;
	for (size_t c = 0; t->rc == 0 && c < t->ncols; c++) {
		char *safe = hkt_escape_ctl(cells[c], true);

		if (!safe || t->sc->scols_line_set_data(ln, c, safe) != 0)
			t->rc = -ENOMEM;
		free(safe);
	}
}

static int table_print(struct hugeadm_ctl *ctl, struct table *t, const char *title, size_t rows)
{
	printf("\n%s:\n", title);
	fflush(stdout);
	if (rows == 0)
		printf("  none\n");
	else if (t->rc == 0)
		t->rc = t->sc->scols_print_table(t->tb);
	if (t->sc)
		t->sc->scols_unref_table(t->tb);
	if (t->rc == -ELIBACC)
		ha_msg(ctl, HA_ERROR, "cannot load libsmartcols, which prints tables: %s", t->why);
	else if (t->rc < 0)
		ha_msg(ctl, HA_ERROR, "cannot print the %s table: %s", title, strerror(-t->rc));
	return t->rc;
}

/* What the difference between used and accounted pages is, in a few words. */
static const char *difference_why(const struct hk_usage *u, const struct hk_usage_total *t)
{
	if (t->difference == 0)
		return "none";
	if (t->difference < 0)
		return "changed while read";
	if (hk_usage_unread_count(u, HK_USAGE_UNREAD_PROCESSES) ||
	    hk_usage_unread_count(u, HK_USAGE_UNREAD_DIRS))
		return "not readable";
	return "unknown";
}

/* The above, and the inferred segments' pages left out of accounted when there are some. */
static const char *difference_reason(char *buf, size_t sz, const struct hk_usage *u,
				     const struct hk_usage_total *t)
{
	if (!t->inferred)
		return difference_why(u, t);
	snprintf(buf, sz, "%s; inferred segments not counted: %" PRIu64 " pages",
		 difference_why(u, t), t->inferred);
	return buf;
}

static void node_str(char *buf, size_t sz, int node)
{
	if (node >= 0)
		snprintf(buf, sz, "%d", node);
	else
		snprintf(buf, sz, "%s", node == -2 ? "several" : "-");
}

/* A table's cells: up to 7 columns of 64 bytes each. */
struct cells {
	char b[7][64];
	char *c[7];
};

/* A new table of n columns, and its cells pointing at their buffers. */
static void table_start(struct table *tb, struct cells *x, const char *const *cols, size_t n)
{
	for (size_t k = 0; k < 7; k++)
		x->c[k] = x->b[k];
	table_new(tb, cols, n);
}

static int text_processes(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	static const char *const cols[] = {"PID",  "COMMAND", "USER", "SIZE",
					   "KIND", "PAGES",   "NODE"};
	const struct hk_usage_process *p;
	size_t np = hk_usage_processes(u, &p);
	struct cells x;
	struct table tb;

	table_start(&tb, &x, cols, 7);
	for (size_t i = 0; i < np; i++) {
		snprintf(x.b[0], 64, "%d", p[i].pid);
		snprintf(x.b[1], 64, "%s", p[i].comm);
		user_name(ctl, x.b[2], 64, p[i].uid);
		hk_format_size(x.b[3], 64, p[i].page_size);
		snprintf(x.b[4], 64, "%s", kind_names[p[i].kind]);
		snprintf(x.b[5], 64, "%" PRIu64, p[i].pages);
		node_str(x.b[6], 64, p[i].node);
		table_row(&tb, x.c);
	}
	return table_print(ctl, &tb, "Processes", np);
}

static int text_shm(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	static const char *const cols[] = {"ID", "KEY", "OWNER", "SIZE", "PAGES", "ATTACHED"};
	const struct hk_usage_shm *s;
	size_t ns = hk_usage_shm(u, &s);
	struct cells x;
	struct table tb;

	table_start(&tb, &x, cols, 6);
	for (size_t i = 0; i < ns; i++) {
		snprintf(x.b[0], 64, "%d", s[i].id);
		snprintf(x.b[1], 64, "0x%08" PRIx32, (uint32_t)s[i].key);
		user_name(ctl, x.b[2], 64, s[i].uid);
		hk_format_size(x.b[3], 64, s[i].page_size);
		snprintf(x.b[4], 64, "%" PRIu64 "%s", s[i].pages, s[i].inferred ? "?" : "");
		if (s[i].nattch)
			snprintf(x.b[5], 64, "%" PRIu64, s[i].nattch);
		else
			snprintf(x.b[5], 64, "0 (detached)");
		table_row(&tb, x.c);
	}
	return table_print(ctl, &tb, "SysV segments", ns);
}

static int text_files(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	static const char *const cols[] = {"FILE", "OWNER", "SIZE", "PAGES", "MAPPED"};
	const struct hk_usage_file *f;
	size_t nf = hk_usage_files(u, &f);
	struct cells x;
	struct table tb;

	table_start(&tb, &x, cols, 5);
	for (size_t i = 0; i < nf; i++) {
		x.c[0] = (char *)f[i].path;
		user_name(ctl, x.b[1], 64, f[i].uid);
		hk_format_size(x.b[2], 64, f[i].page_size);
		snprintf(x.b[3], 64, "%" PRIu64, f[i].pages);
		snprintf(x.b[4], 64, "%s", f[i].mapped ? "yes" : "no (unmapped)");
		table_row(&tb, x.c);
	}
	return table_print(ctl, &tb, "Files on hugetlbfs", nf);
}

/* Only when there are any: the title says v1's hierarchy, v2's is as it was. */
static int text_cgroups(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	static const char *const cols[] = {"CGROUP", "SIZE",	 "CURRENT", "MAX",
					   "RSVD",   "RSVD_MAX", "FAILED"};
	const struct hk_usage_cgroup *c;
	size_t nc = hk_usage_cgroups(u, &c);
	struct cells x;
	struct table tb;

	if (!nc)
		return 0;
	table_start(&tb, &x, cols, 7);
	for (size_t i = 0; i < nc; i++) {
		const uint64_t v[4] = {c[i].current, c[i].max, c[i].rsvd_current, c[i].rsvd_max};

		x.c[0] = (char *)c[i].path;
		hk_format_size(x.b[1], 64, c[i].page_size);
		for (int k = 0; k < 4; k++) {
			if (v[k] == UINT64_MAX)
				snprintf(x.b[2 + k], 64, "max");
			else
				snprintf(x.b[2 + k], 64, "%" PRIu64, v[k] / c[i].page_size);
		}
		/* Charges the limits refused (events "max"); "-" without the file. */
		if (c[i].events_max == UINT64_MAX)
			snprintf(x.b[6], 64, "-");
		else
			snprintf(x.b[6], 64, "%" PRIu64, c[i].events_max);
		table_row(&tb, x.c);
	}
	return table_print(
		ctl, &tb, c[0].version == 1 ? "Cgroups (cgroup v1, pages)" : "Cgroups (pages)", nc);
}

static int text_totals(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	static const char *const cols[] = {"SIZE",    "USED",	    "ACCOUNTED", "RESERVED",
					   "SURPLUS", "DIFFERENCE", "REASON"};
	const struct hk_usage_total *t;
	size_t nt = hk_usage_totals(u, &t);
	char why[128];
	struct cells x;
	struct table tb;

	table_start(&tb, &x, cols, 7);
	for (size_t i = 0; i < nt; i++) {
		hk_format_size(x.b[0], 64, t[i].page_size);
		snprintf(x.b[1], 64, "%" PRIu64, t[i].used);
		snprintf(x.b[2], 64, "%" PRIu64, t[i].accounted);
		snprintf(x.b[3], 64, "%" PRIu64, t[i].reserved);
		snprintf(x.b[4], 64, "%" PRIu64, t[i].surplus);
		snprintf(x.b[5], 64, "%" PRId64, t[i].difference);
		x.c[6] = (char *)difference_reason(why, sizeof(why), u, &t[i]);
		table_row(&tb, x.c);
	}
	return table_print(ctl, &tb, "Totals (pages)", nt);
}

static int usage_text(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	const struct hk_usage_shm *s;
	size_t ns = hk_usage_shm(u, &s);
	int rc = 0;

	printf("Huge page usage:\n");
	rc |= text_processes(ctl, u);
	rc |= text_shm(ctl, u);
	rc |= text_files(ctl, u);
	rc |= text_cgroups(ctl, u);
	rc |= text_totals(ctl, u);
	for (size_t i = 0; i < ns; i++)
		if (s[i].inferred) {
			printf("\n?: a segment no readable process maps: possibly on huge pages, of the\n"
			       "default size from its resident size; counted in ACCOUNTED only when\n"
			       "the pool's used pages leave room for it.\n");
			break;
		}
	return rc;
}

static void json_processes(struct hkt_json *j, const struct hk_usage *u)
{
	const struct hk_usage_process *p;
	size_t np = hk_usage_processes(u, &p);

	hkt_json_open_array(j, "processes");
	for (size_t i = 0; i < np; i++) {
		hkt_json_open_object(j, NULL);
		hkt_json_int(j, "pid", p[i].pid);
		hkt_json_string(j, "comm", p[i].comm);
		hkt_json_u64(j, "uid", p[i].uid);
		hkt_json_u64(j, "page_size", p[i].page_size);
		hkt_json_string(j, "kind", kind_names[p[i].kind]);
		hkt_json_u64(j, "pages", p[i].pages);
		hkt_json_u64(j, "accounted", p[i].accounted);
		if (p[i].node >= 0)
			hkt_json_int(j, "node", p[i].node);
		else
			hkt_json_null(j, "node");
		hkt_json_close_object(j);
	}
	hkt_json_close_array(j);
}

static void json_shm_files(struct hkt_json *j, const struct hk_usage *u)
{
	const struct hk_usage_shm *s;
	const struct hk_usage_file *f;
	size_t ns = hk_usage_shm(u, &s), nf = hk_usage_files(u, &f);

	hkt_json_open_array(j, "shm");
	for (size_t i = 0; i < ns; i++) {
		hkt_json_open_object(j, NULL);
		hkt_json_int(j, "id", s[i].id);
		hkt_json_int(j, "key", s[i].key);
		hkt_json_u64(j, "uid", s[i].uid);
		hkt_json_u64(j, "size", s[i].size);
		hkt_json_u64(j, "page_size", s[i].page_size);
		hkt_json_u64(j, "pages", s[i].pages);
		hkt_json_u64(j, "attached", s[i].nattch);
		hkt_json_bool(j, "detached", s[i].nattch == 0);
		hkt_json_bool(j, "inferred", s[i].inferred);
		hkt_json_bool(j, "accounted", s[i].accounted);
		hkt_json_close_object(j);
	}
	hkt_json_close_array(j);
	hkt_json_open_array(j, "files");
	for (size_t i = 0; i < nf; i++) {
		hkt_json_open_object(j, NULL);
		hkt_json_string(j, "path", f[i].path);
		hkt_json_u64(j, "uid", f[i].uid);
		hkt_json_u64(j, "page_size", f[i].page_size);
		hkt_json_u64(j, "pages", f[i].pages);
		hkt_json_bool(j, "mapped", f[i].mapped);
		hkt_json_close_object(j);
	}
	hkt_json_close_array(j);
}

/* The cgroups, and the hierarchy they were read from: 1 or 2; null when none is listed. */
static void json_cgroups(struct hkt_json *j, const struct hk_usage *u)
{
	static const char *const keys[4] = {"usage", "limit", "reserved", "reserved_limit"};
	const struct hk_usage_cgroup *c;
	size_t nc = hk_usage_cgroups(u, &c);

	hkt_json_open_array(j, "cgroups");
	for (size_t i = 0; i < nc; i++) {
		const uint64_t v[4] = {c[i].current, c[i].max, c[i].rsvd_current, c[i].rsvd_max};

		hkt_json_open_object(j, NULL);
		hkt_json_string(j, "path", c[i].path);
		hkt_json_u64(j, "page_size", c[i].page_size);
		for (int k = 0; k < 4; k++) {
			if (v[k] == UINT64_MAX)
				hkt_json_null(j, keys[k]);
			else
				hkt_json_u64(j, keys[k], v[k]);
		}
		if (c[i].events_max == UINT64_MAX)
			hkt_json_null(j, "events_max");
		else
			hkt_json_u64(j, "events_max", c[i].events_max);
		hkt_json_close_object(j);
	}
	hkt_json_close_array(j);
	if (nc)
		hkt_json_int(j, "cgroup_version", c[0].version);
	else
		hkt_json_null(j, "cgroup_version");
}

static void json_totals(struct hkt_json *j, const struct hk_usage *u)
{
	const struct hk_usage_total *t;
	size_t nt = hk_usage_totals(u, &t);
	char why[128];

	hkt_json_open_array(j, "totals");
	for (size_t i = 0; i < nt; i++) {
		hkt_json_open_object(j, NULL);
		hkt_json_u64(j, "page_size", t[i].page_size);
		hkt_json_u64(j, "used", t[i].used);
		hkt_json_u64(j, "accounted", t[i].accounted);
		hkt_json_u64(j, "reserved", t[i].reserved);
		hkt_json_u64(j, "surplus", t[i].surplus);
		hkt_json_int(j, "difference", t[i].difference);
		hkt_json_string(j, "difference_reason",
				difference_reason(why, sizeof(why), u, &t[i]));
		hkt_json_u64(j, "inferred_not_counted", t[i].inferred);
		hkt_json_close_object(j);
	}
	hkt_json_close_array(j);
}

static void usage_json(struct hugeadm_ctl *ctl, struct hkt_json *j, const struct hk_usage *u)
{
	(void)ctl;
	hkt_json_open_object(j, "usage");
	json_processes(j, u);
	json_shm_files(j, u);
	json_cgroups(j, u);
	json_totals(j, u);
	hkt_json_open_object(j, "unreadable");
	hkt_json_u64(j, "processes", hk_usage_unread_count(u, HK_USAGE_UNREAD_PROCESSES));
	hkt_json_u64(j, "directories", hk_usage_unread_count(u, HK_USAGE_UNREAD_DIRS));
	hkt_json_u64(j, "cgroups", hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS));
	hkt_json_close_object(j);
	hkt_json_close_object(j);
}

/* What could not be read, on stderr: the report is still printed, exit 0. */
static void say_unread(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	unsigned np = hk_usage_unread_count(u, HK_USAGE_UNREAD_PROCESSES);
	unsigned nd = hk_usage_unread_count(u, HK_USAGE_UNREAD_DIRS);
	unsigned nc = hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS);

	if (np)
		ha_msg(ctl, HA_WARNING,
		       "could not read the memory maps of %u %s: their pages are not counted", np,
		       hkt_plural(np, "process", "processes"));
	if (nd)
		ha_msg(ctl, HA_WARNING,
		       "could not read %u %s on hugetlbfs mounts (no access, or past a "
		       "bound of the walk): their files are not counted",
		       nd, hkt_plural(nd, "directory", "directories"));
	if (nc)
		ha_msg(ctl, HA_WARNING,
		       "could not read %u hugetlb cgroup %s (no access, or past a "
		       "bound of the walk)",
		       nc, hkt_plural(nc, "file or directory", "files or directories"));
}

int ha_usage_report(struct hugeadm_ctl *ctl, struct hkt_json *j)
{
	struct hk_usage *u;
	int rc = hk_usage_read(ctl->ctx, &u);

	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "cannot read the huge page usage: %s", strerror(-rc));
		return rc;
	}
	say_unread(ctl, u);
	if (j)
		usage_json(ctl, j, u);
	else
		rc = usage_text(ctl, u);
	hk_usage_unref(u);
	return rc;
}

int ha_pages_needed_read(struct hugeadm_ctl *ctl)
{
	int rc = hk_pages_needed(ctl->ctx, ctl->pages_needed, &ctl->pn, &ctl->n_pn);

	if (rc == -ESRCH)
		ha_msg(ctl, HA_ERROR, "%d: no such process", ctl->pages_needed);
	else if (rc < 0)
		ha_msg(ctl, HA_ERROR, "cannot read the memory of process %d: %s", ctl->pages_needed,
		       strerror(-rc));
	return rc;
}

int ha_pages_needed_report(struct hugeadm_ctl *ctl, struct hkt_json *j)
{
	const struct hk_pages_needed *pn = ctl->pn;
	size_t n = ctl->n_pn;

	if (j) {
		hkt_json_open_array(j, "pages_needed");
		for (size_t i = 0; i < n; i++) {
			hkt_json_open_object(j, NULL);
			hkt_json_int(j, "pid", ctl->pages_needed);
			hkt_json_u64(j, "page_size", pn[i].page_size);
			hkt_json_u64(j, "pages", pn[i].pages);
			hkt_json_u64(j, "heap", pn[i].heap_pages);
			hkt_json_u64(j, "anonymous", pn[i].anon_pages);
			hkt_json_u64(j, "shared", pn[i].shared_pages);
			hkt_json_u64(j, "sysv", pn[i].sysv_pages);
			hkt_json_u64(j, "hugetlb", pn[i].hugetlb_pages);
			hkt_json_close_object(j);
		}
		hkt_json_close_array(j);
	} else {
		printf("%10s %8s %8s %10s %8s %8s %8s\n", "Size", "Pages", "Heap", "Anonymous",
		       "Shared", "SysV", "Hugetlb");
		for (size_t i = 0; i < n; i++)
			printf("%10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %8" PRIu64
			       " %8" PRIu64 " %8" PRIu64 "\n",
			       pn[i].page_size, pn[i].pages, pn[i].heap_pages, pn[i].anon_pages,
			       pn[i].shared_pages, pn[i].sysv_pages, pn[i].hugetlb_pages);
	}
	return 0;
}
