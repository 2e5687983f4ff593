// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --usage: who holds huge pages (processes, SysV segments, files, cgroups)
 * and the totals against the pools; --pages-needed PID: how many pages of
 * each size would hold a process's memory. Text tables and JSON.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"

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
	struct libscols_table *tb;
	size_t ncols;
	int rc;
};

static void table_new(struct table *t, const char *const *cols, size_t n)
{
	t->tb = scols_new_table();
	t->ncols = n;
	t->rc = t->tb ? 0 : -ENOMEM;
	for (size_t c = 0; t->rc == 0 && c < n; c++)
		if (!scols_table_new_column(t->tb, cols[c], 0, c ? SCOLS_FL_RIGHT : 0))
			t->rc = -ENOMEM;
}

/* One row; the cells are escaped (names come from other users). */
static void table_row(struct table *t, char **cells)
{
	struct libscols_line *ln = t->rc == 0 ? scols_table_new_line(t->tb, NULL) : NULL;

	if (!ln)
		t->rc = -ENOMEM;
	for (size_t c = 0; t->rc == 0 && c < t->ncols; c++) {
		char *safe = hk_escape_ctl(cells[c], true);

		if (!safe || scols_line_set_data(ln, c, safe) != 0)
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
		t->rc = scols_print_table(t->tb);
	scols_unref_table(t->tb);
	if (t->rc < 0)
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

static int usage_text(struct hugeadm_ctl *ctl, const struct hk_usage *u)
{
	static const char *const pcols[] = {"PID",  "COMMAND", "USER", "SIZE",
					    "KIND", "PAGES",   "NODE"};
	static const char *const scols[] = {"ID", "KEY", "OWNER", "SIZE", "PAGES", "ATTACHED"};
	static const char *const fcols[] = {"FILE", "OWNER", "SIZE", "PAGES", "MAPPED"};
	static const char *const ccols[] = {"CGROUP", "SIZE",	  "CURRENT", "MAX",
					    "RSVD",   "RSVD_MAX", "FAILED"};
	static const char *const tcols[] = {"SIZE",    "USED",	     "ACCOUNTED", "RESERVED",
					    "SURPLUS", "DIFFERENCE", "REASON"};
	char why[128];
	const struct hk_usage_process *p;
	const struct hk_usage_shm *s;
	const struct hk_usage_file *f;
	const struct hk_usage_cgroup *c;
	const struct hk_usage_total *t;
	size_t np = hk_usage_processes(u, &p), ns = hk_usage_shm(u, &s), nf = hk_usage_files(u, &f),
	       nc = hk_usage_cgroups(u, &c), nt = hk_usage_totals(u, &t);
	char b[7][64];
	char *cells[7] = {b[0], b[1], b[2], b[3], b[4], b[5], b[6]};
	struct table tb;
	int rc = 0;

	printf("Huge page usage:\n");
	table_new(&tb, pcols, 7);
	for (size_t i = 0; i < np; i++) {
		snprintf(b[0], 64, "%d", p[i].pid);
		snprintf(b[1], 64, "%s", p[i].comm);
		user_name(ctl, b[2], 64, p[i].uid);
		hkc_format_size(b[3], 64, p[i].page_size);
		snprintf(b[4], 64, "%s", kind_names[p[i].kind]);
		snprintf(b[5], 64, "%" PRIu64, p[i].pages);
		node_str(b[6], 64, p[i].node);
		table_row(&tb, cells);
	}
	rc |= table_print(ctl, &tb, "Processes", np);
	table_new(&tb, scols, 6);
	for (size_t i = 0; i < ns; i++) {
		snprintf(b[0], 64, "%d", s[i].id);
		snprintf(b[1], 64, "0x%08" PRIx32, (uint32_t)s[i].key);
		user_name(ctl, b[2], 64, s[i].uid);
		hkc_format_size(b[3], 64, s[i].page_size);
		snprintf(b[4], 64, "%" PRIu64 "%s", s[i].pages, s[i].inferred ? "?" : "");
		if (s[i].nattch)
			snprintf(b[5], 64, "%" PRIu64, s[i].nattch);
		else
			snprintf(b[5], 64, "0 (detached)");
		table_row(&tb, cells);
	}
	rc |= table_print(ctl, &tb, "SysV segments", ns);
	table_new(&tb, fcols, 5);
	for (size_t i = 0; i < nf; i++) {
		char *path = (char *)f[i].path;

		cells[0] = path;
		user_name(ctl, b[1], 64, f[i].uid);
		hkc_format_size(b[2], 64, f[i].page_size);
		snprintf(b[3], 64, "%" PRIu64, f[i].pages);
		snprintf(b[4], 64, "%s", f[i].mapped ? "yes" : "no (unmapped)");
		cells[1] = b[1];
		cells[2] = b[2];
		cells[3] = b[3];
		cells[4] = b[4];
		table_row(&tb, cells);
	}
	rc |= table_print(ctl, &tb, "Files on hugetlbfs", nf);
	for (size_t k = 0; k < 7; k++)
		cells[k] = b[k];
	if (nc) {
		table_new(&tb, ccols, 7);
		for (size_t i = 0; i < nc; i++) {
			const uint64_t v[4] = {c[i].current, c[i].max, c[i].rsvd_current,
					       c[i].rsvd_max};

			cells[0] = (char *)c[i].path;
			hkc_format_size(b[1], 64, c[i].page_size);
			for (int k = 0; k < 4; k++) {
				if (v[k] == UINT64_MAX)
					snprintf(b[2 + k], 64, "max");
				else
					snprintf(b[2 + k], 64, "%" PRIu64, v[k] / c[i].page_size);
			}
			/* Charges the limits refused (events "max"); "-" without the file. */
			if (c[i].events_max == UINT64_MAX)
				snprintf(b[6], 64, "-");
			else
				snprintf(b[6], 64, "%" PRIu64, c[i].events_max);
			table_row(&tb, cells);
		}
		cells[0] = b[0];
		/* The hierarchy is said where it is v1's; v2's title is as it was. */
		rc |= table_print(
			ctl, &tb,
			c[0].version == 1 ? "Cgroups (cgroup v1, pages)" : "Cgroups (pages)", nc);
	}
	table_new(&tb, tcols, 7);
	for (size_t i = 0; i < nt; i++) {
		hkc_format_size(b[0], 64, t[i].page_size);
		snprintf(b[1], 64, "%" PRIu64, t[i].used);
		snprintf(b[2], 64, "%" PRIu64, t[i].accounted);
		snprintf(b[3], 64, "%" PRIu64, t[i].reserved);
		snprintf(b[4], 64, "%" PRIu64, t[i].surplus);
		snprintf(b[5], 64, "%" PRId64, t[i].difference);
		cells[6] = (char *)difference_reason(why, sizeof(why), u, &t[i]);
		table_row(&tb, cells);
	}
	cells[6] = b[6];
	rc |= table_print(ctl, &tb, "Totals (pages)", nt);
	for (size_t i = 0; i < ns; i++)
		if (s[i].inferred) {
			printf("\n?: a segment no readable process maps: possibly on huge pages, of the\n"
			       "default size from its resident size; counted in ACCOUNTED only when\n"
			       "the pool's used pages leave room for it.\n");
			break;
		}
	return rc;
}

static void usage_json(struct hugeadm_ctl *ctl, struct hk_json *j, const struct hk_usage *u)
{
	const struct hk_usage_process *p;
	const struct hk_usage_shm *s;
	const struct hk_usage_file *f;
	const struct hk_usage_cgroup *c;
	const struct hk_usage_total *t;
	size_t np = hk_usage_processes(u, &p), ns = hk_usage_shm(u, &s), nf = hk_usage_files(u, &f),
	       nc = hk_usage_cgroups(u, &c), nt = hk_usage_totals(u, &t);
	char why[128];

	(void)ctl;
	hk_json_open_object(j, "usage");
	hk_json_open_array(j, "processes");
	for (size_t i = 0; i < np; i++) {
		hk_json_open_object(j, NULL);
		hk_json_int(j, "pid", p[i].pid);
		hk_json_string(j, "comm", p[i].comm);
		hk_json_u64(j, "uid", p[i].uid);
		hk_json_u64(j, "page_size", p[i].page_size);
		hk_json_string(j, "kind", kind_names[p[i].kind]);
		hk_json_u64(j, "pages", p[i].pages);
		hk_json_u64(j, "accounted", p[i].accounted);
		if (p[i].node >= 0)
			hk_json_int(j, "node", p[i].node);
		else
			hk_json_null(j, "node");
		hk_json_close_object(j);
	}
	hk_json_close_array(j);
	hk_json_open_array(j, "shm");
	for (size_t i = 0; i < ns; i++) {
		hk_json_open_object(j, NULL);
		hk_json_int(j, "id", s[i].id);
		hk_json_int(j, "key", s[i].key);
		hk_json_u64(j, "uid", s[i].uid);
		hk_json_u64(j, "size", s[i].size);
		hk_json_u64(j, "page_size", s[i].page_size);
		hk_json_u64(j, "pages", s[i].pages);
		hk_json_u64(j, "attached", s[i].nattch);
		hk_json_bool(j, "detached", s[i].nattch == 0);
		hk_json_bool(j, "inferred", s[i].inferred);
		hk_json_bool(j, "accounted", s[i].accounted);
		hk_json_close_object(j);
	}
	hk_json_close_array(j);
	hk_json_open_array(j, "files");
	for (size_t i = 0; i < nf; i++) {
		hk_json_open_object(j, NULL);
		hk_json_string(j, "path", f[i].path);
		hk_json_u64(j, "uid", f[i].uid);
		hk_json_u64(j, "page_size", f[i].page_size);
		hk_json_u64(j, "pages", f[i].pages);
		hk_json_bool(j, "mapped", f[i].mapped);
		hk_json_close_object(j);
	}
	hk_json_close_array(j);
	hk_json_open_array(j, "cgroups");
	for (size_t i = 0; i < nc; i++) {
		const char *keys[4] = {"usage", "limit", "reserved", "reserved_limit"};
		const uint64_t v[4] = {c[i].current, c[i].max, c[i].rsvd_current, c[i].rsvd_max};

		hk_json_open_object(j, NULL);
		hk_json_string(j, "path", c[i].path);
		hk_json_u64(j, "page_size", c[i].page_size);
		for (int k = 0; k < 4; k++) {
			if (v[k] == UINT64_MAX)
				hk_json_null(j, keys[k]);
			else
				hk_json_u64(j, keys[k], v[k]);
		}
		if (c[i].events_max == UINT64_MAX)
			hk_json_null(j, "events_max");
		else
			hk_json_u64(j, "events_max", c[i].events_max);
		hk_json_close_object(j);
	}
	hk_json_close_array(j);
	/* The hierarchy the cgroups were read from: 1 or 2; null when none is listed. */
	if (nc)
		hk_json_int(j, "cgroup_version", c[0].version);
	else
		hk_json_null(j, "cgroup_version");
	hk_json_open_array(j, "totals");
	for (size_t i = 0; i < nt; i++) {
		hk_json_open_object(j, NULL);
		hk_json_u64(j, "page_size", t[i].page_size);
		hk_json_u64(j, "used", t[i].used);
		hk_json_u64(j, "accounted", t[i].accounted);
		hk_json_u64(j, "reserved", t[i].reserved);
		hk_json_u64(j, "surplus", t[i].surplus);
		hk_json_int(j, "difference", t[i].difference);
		hk_json_string(j, "difference_reason",
			       difference_reason(why, sizeof(why), u, &t[i]));
		hk_json_u64(j, "inferred_not_counted", t[i].inferred);
		hk_json_close_object(j);
	}
	hk_json_close_array(j);
	hk_json_open_object(j, "unreadable");
	hk_json_u64(j, "processes", hk_usage_unread_count(u, HK_USAGE_UNREAD_PROCESSES));
	hk_json_u64(j, "directories", hk_usage_unread_count(u, HK_USAGE_UNREAD_DIRS));
	hk_json_u64(j, "cgroups", hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS));
	hk_json_close_object(j);
	hk_json_close_object(j);
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
		       hk_plural(np, "process", "processes"));
	if (nd)
		ha_msg(ctl, HA_WARNING,
		       "could not read %u %s on hugetlbfs mounts (no access, or past a "
		       "bound of the walk): their files are not counted",
		       nd, hk_plural(nd, "directory", "directories"));
	if (nc)
		ha_msg(ctl, HA_WARNING,
		       "could not read %u hugetlb cgroup %s (no access, or past a "
		       "bound of the walk)",
		       nc, hk_plural(nc, "file or directory", "files or directories"));
}

int ha_usage_report(struct hugeadm_ctl *ctl, struct hk_json *j)
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

int ha_pages_needed_report(struct hugeadm_ctl *ctl, struct hk_json *j)
{
	const struct hk_pages_needed *pn = ctl->pn;
	size_t n = ctl->n_pn;

	if (j) {
		hk_json_open_array(j, "pages_needed");
		for (size_t i = 0; i < n; i++) {
			hk_json_open_object(j, NULL);
			hk_json_int(j, "pid", ctl->pages_needed);
			hk_json_u64(j, "page_size", pn[i].page_size);
			hk_json_u64(j, "pages", pn[i].pages);
			hk_json_u64(j, "heap", pn[i].heap_pages);
			hk_json_u64(j, "anonymous", pn[i].anon_pages);
			hk_json_u64(j, "shared", pn[i].shared_pages);
			hk_json_u64(j, "sysv", pn[i].sysv_pages);
			hk_json_u64(j, "hugetlb", pn[i].hugetlb_pages);
			hk_json_close_object(j);
		}
		hk_json_close_array(j);
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
