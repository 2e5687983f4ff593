// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugectl --collapse PID [--heap|--text|--all] [--json] [--dry-run]: the
 * kernel asked to put a running process's memory on transparent huge pages
 * (libhugekit's hk_collapse_process: which mappings, the call, the smaps
 * before and after), and what it did said here, in text or JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hugekit/hugekit.h>

#include "hugectl.h"
#include "util.h"

static const char *const kind_names[HK_COLLAPSE_NKINDS] = {"heap", "text"};

/* --collapse's PID: a process id, or 0 after a message. */
static int parse_pid(const struct hc_collapse *o)
{
	uint64_t v;

	if (hk_parse_count(o->pid, &v) < 0 || v == 0 || v > INT_MAX) {
		hc_msg(o->verbose, L_ERROR, "%s: not a process id (--collapse)", o->pid);
		return 0;
	}
	return (int)v;
}

/* Why the process could not be collapsed at all, in words. */
static void say_problem(const struct hc_collapse *o, int pid, int rc,
			enum hk_collapse_problem problem)
{
	switch (problem) {
	case HK_COLLAPSE_NO_PROCESS:
		hc_msg(o->verbose, L_ERROR,
		       "%d: no such process (or none with memory of its own: a kernel thread, a "
		       "zombie)",
		       pid);
		break;
	case HK_COLLAPSE_NOT_PROCESS:
		hc_msg(o->verbose, L_ERROR, "%d: a thread, not a process: give its process's id",
		       pid);
		break;
	case HK_COLLAPSE_EXITED:
		hc_msg(o->verbose, L_ERROR, "%d: the process exited while it was collapsed", pid);
		break;
	case HK_COLLAPSE_NO_PTRACE:
		hc_msg(o->verbose, L_ERROR,
		       "%d: permission denied: reading and collapsing its memory needs the right "
		       "to read it as ptrace does (the same user and a dumpable process, or "
		       "CAP_SYS_PTRACE)",
		       pid);
		break;
	case HK_COLLAPSE_NO_CAP:
		hc_msg(o->verbose, L_ERROR,
		       "%d: operation not permitted: collapsing another process's memory needs "
		       "CAP_SYS_NICE",
		       pid);
		break;
	case HK_COLLAPSE_UNSUPPORTED:
		hc_msg(o->verbose, L_ERROR, "%s",
		       rc == -ENOENT ? "this kernel has no transparent huge pages"
		       : rc == -EINVAL
			       ? "this kernel cannot collapse another process's memory "
				 "(process_madvise with MADV_COLLAPSE: Linux 6.1)"
			       : "this kernel has no pidfd_open or process_madvise (Linux 5.10)");
		break;
	case HK_COLLAPSE_UNREAD:
		hc_msg(o->verbose, L_ERROR, "%d: cannot read its memory map: %s", pid,
		       strerror(-rc));
		break;
	default:
		hc_msg(o->verbose, L_ERROR, "%d: cannot collapse: %s", pid, strerror(-rc));
	}
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "N kB on huge pages, M kB on base pages (P % huge)", the runtime's report's words. */
static void print_state(const struct hk_collapse_state *s)
{
	uint64_t base = s->rss_kb > s->huge_kb ? s->rss_kb - s->huge_kb : 0;

	printf("%" PRIu64 " kB on huge pages, %" PRIu64 " kB on base pages (%.1f %% huge)",
	       s->huge_kb, base, percent(s->huge_kb, s->huge_kb + base));
}

/* One line per kind chosen. */
static void print_text(const struct hc_collapse *o, const struct hk_collapse *c, int pid)
{
	char *comm = hkt_escape_ctl(hk_collapse_comm(c), true);

	for (int k = 0; k < HK_COLLAPSE_NKINDS; k++) {
		const struct hk_collapse_total *t = hk_collapse_total(c, (enum hk_collapse_kind)k);

		if (!t)
			continue;
		printf("hugekit collapse (pid %d, %s): %s: ", pid, comm ? comm : "?",
		       kind_names[k]);
		if (o->dry_run) {
			print_state(&t->before);
			printf("; %" PRIu64 " %s to ask, %" PRIu64 " kB (page size %" PRIu64
			       " kB); dry run, nothing asked\n",
			       t->asked, hkt_plural(t->asked, "range", "ranges"), t->asked_kb,
			       hk_collapse_pmd_size(c) / 1024);
			continue;
		}
		printf("before ");
		print_state(&t->before);
		printf("; after ");
		print_state(&t->after);
		printf("; %" PRIu64 " of %" PRIu64 " %s collapsed, %" PRIu64
		       " kB asked (page size %" PRIu64 " kB)\n",
		       t->collapsed, t->asked, hkt_plural(t->asked, "range", "ranges"), t->asked_kb,
		       hk_collapse_pmd_size(c) / 1024);
	}
	free(comm);
}

static const char *result_name(enum hk_collapse_result r)
{
	switch (r) {
	case HK_COLLAPSE_COLLAPSED:
		return "collapsed";
	case HK_COLLAPSE_REFUSED:
		return "refused";
	case HK_COLLAPSE_TOO_SMALL:
		return "too small";
	case HK_COLLAPSE_MISALIGNED:
		return "misaligned";
	default:
		return "not asked";
	}
}

static const char *why_name(enum hk_collapse_why w)
{
	switch (w) {
	case HK_COLLAPSE_WHY_NOHUGEPAGE:
		return "nohugepage";
	case HK_COLLAPSE_WHY_THP_DISABLED:
		return "thp disabled";
	case HK_COLLAPSE_WHY_FILE_THP:
		return "no file thp";
	case HK_COLLAPSE_WHY_UNTOUCHED:
		return "untouched";
	default:
		return NULL;
	}
}

/* The reason of a refusal, in words. */
static const char *why_words(const struct hk_collapse_range *r)
{
	switch (r->why) {
	case HK_COLLAPSE_WHY_NOHUGEPAGE:
		return "it is marked MADV_NOHUGEPAGE (or MAP_STACK)";
	case HK_COLLAPSE_WHY_THP_DISABLED:
		return "transparent huge pages are disabled for the process "
		       "(prctl PR_SET_THP_DISABLE)";
	case HK_COLLAPSE_WHY_FILE_THP:
		return "the kernel collapses file text only with CONFIG_READ_ONLY_THP_FOR_FS";
	case HK_COLLAPSE_WHY_UNTOUCHED:
		return "parts of it were never touched: nothing there to collapse";
	default:
		break;
	}
	switch (r->error) {
	case ENOMEM:
		return "no huge page could be had (memory short or fragmented)";
	case EAGAIN:
		return "some of its pages were busy (locked or pinned): it may work if tried again";
	case EBUSY:
		return "its memory cgroup's limit refused the huge page";
	default:
		return NULL;
	}
}

static void json_state(struct hkt_json *j, const char *key, const struct hk_collapse_state *s)
{
	hkt_json_open_object(j, key);
	hkt_json_u64(j, "mappings", s->mappings);
	hkt_json_u64(j, "rss_kb", s->rss_kb);
	hkt_json_u64(j, "huge_kb", s->huge_kb);
	hkt_json_u64(j, "base_kb", s->rss_kb > s->huge_kb ? s->rss_kb - s->huge_kb : 0);
	hkt_json_close_object(j);
}

static void json_hex(struct hkt_json *j, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	hkt_json_string(j, key, buf);
}

static void json_range(struct hkt_json *j, const struct hk_collapse_range *r)
{
	hkt_json_open_object(j, NULL);
	hkt_json_string(j, "kind", kind_names[r->kind]);
	json_hex(j, "start", r->start);
	json_hex(j, "end", r->end);
	hkt_json_string(j, "perms", r->perms);
	hkt_json_string(j, "name", r->name);
	hkt_json_u64(j, "asked_kb", (r->to - r->from) / 1024);
	hkt_json_string(j, "result", result_name(r->result));
	if (r->result == HK_COLLAPSE_REFUSED) {
		hkt_json_int(j, "errno", r->error);
		hkt_json_string(j, "error", strerror(r->error));
	} else {
		hkt_json_null(j, "errno");
		hkt_json_null(j, "error");
	}
	if (why_name(r->why))
		hkt_json_string(j, "why", why_name(r->why));
	else
		hkt_json_null(j, "why");
	hkt_json_u64(j, "rss_kb_before", r->rss_kb_before);
	hkt_json_u64(j, "huge_kb_before", r->huge_kb_before);
	hkt_json_u64(j, "rss_kb_after", r->rss_kb_after);
	hkt_json_u64(j, "huge_kb_after", r->huge_kb_after);
	hkt_json_close_object(j);
}

static void print_json(const struct hc_collapse *o, const struct hk_collapse *c, int pid)
{
	struct hkt_json j;

	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	hkt_json_int(&j, "pid", pid);
	hkt_json_string(&j, "comm", hk_collapse_comm(c));
	hkt_json_bool(&j, "dry_run", o->dry_run);
	hkt_json_u64(&j, "page_size", hk_collapse_pmd_size(c));
	hkt_json_bool(&j, "thp_disabled", hk_collapse_thp_disabled(c));
	for (int k = 0; k < HK_COLLAPSE_NKINDS; k++) {
		const struct hk_collapse_total *t = hk_collapse_total(c, (enum hk_collapse_kind)k);

		if (!t)
			continue;
		hkt_json_open_object(&j, kind_names[k]);
		json_state(&j, "before", &t->before);
		json_state(&j, "after", &t->after);
		hkt_json_u64(&j, "asked", t->asked);
		hkt_json_u64(&j, "asked_kb", t->asked_kb);
		hkt_json_u64(&j, "collapsed", t->collapsed);
		hkt_json_u64(&j, "refused", t->refused);
		hkt_json_close_object(&j);
	}
	hkt_json_open_array(&j, "ranges");
	for (size_t i = 0; i < hk_collapse_count(c); i++)
		json_range(&j, hk_collapse_range_at(c, i));
	hkt_json_close_array(&j);
	hkt_json_close_object(&j);
	hkt_json_end(&j);
}

/* Each range on stderr: a refusal (or, dry, one to come) as a warning, the others as information. */
static void say_ranges(const struct hc_collapse *o, const struct hk_collapse *c, int pid)
{
	for (size_t i = 0; i < hk_collapse_count(c); i++) {
		const struct hk_collapse_range *r = hk_collapse_range_at(c, i);
		char *name = hkt_escape_ctl(*r->name ? r->name : "anonymous", true);
		const char *why = why_words(r);
		bool bad = r->result == HK_COLLAPSE_REFUSED ||
			   (r->result == HK_COLLAPSE_NOT_ASKED && r->why != HK_COLLAPSE_WHY_NONE);

		const char *what = r->result != HK_COLLAPSE_NOT_ASKED ? result_name(r->result)
				   : bad			      ? "the kernel will refuse it"
								      : "to be asked";

		char kb[40] = "";

		if (r->to > r->from)
			snprintf(kb, sizeof(kb), " (%" PRIu64 " kB asked)",
				 (r->to - r->from) / 1024);
		hc_msg(o->verbose, bad ? L_WARNING : L_INFO,
		       "%d: %s %" PRIx64 "-%" PRIx64 " %s %s%s: %s%s%s%s%s", pid,
		       kind_names[r->kind], r->start, r->end, r->perms, name ? name : "?", kb, what,
		       r->result == HK_COLLAPSE_REFUSED ? ": " : "",
		       r->result == HK_COLLAPSE_REFUSED ? strerror(r->error) : "", why ? ": " : "",
		       why ? why : "");
		free(name);
	}
}

/* 1 when ranges were asked and none of them collapsed, after saying so; else 0. */
static int nothing_collapsed(const struct hc_collapse *o, const struct hk_collapse *c, int pid)
{
	uint64_t asked = 0, collapsed = 0, gained = 0;

	for (int k = 0; k < HK_COLLAPSE_NKINDS; k++) {
		const struct hk_collapse_total *t = hk_collapse_total(c, (enum hk_collapse_kind)k);

		if (!t)
			continue;
		asked += t->asked;
		collapsed += t->collapsed;
		gained += t->after.huge_kb > t->before.huge_kb;
	}
	if (asked == 0) {
		hc_msg(o->verbose, L_WARNING,
		       "%d: nothing to collapse: no mapping chosen has a whole %" PRIu64 " kB part",
		       pid, hk_collapse_pmd_size(c) / 1024);
		return 0;
	}
	if (o->dry_run || collapsed > 0 || gained > 0)
		return 0;
	hc_msg(o->verbose, L_ERROR, "%d: nothing could be collapsed%s", pid,
	       hk_collapse_thp_disabled(c) ? ": transparent huge pages are disabled for the "
					     "process (prctl PR_SET_THP_DISABLE)"
					   : "");
	return 1;
}

int hc_collapse(const struct hc_collapse *o)
{
	unsigned flags = (o->heap ? HK_COLLAPSE_HEAP : 0) | (o->text ? HK_COLLAPSE_TEXT : 0);
	enum hk_collapse_problem problem;
	struct hk_collapse *c = NULL;
	struct hk_ctx *ctx = NULL;
	int pid = parse_pid(o), rc;

	if (!pid)
		return HK_EXIT_FAILURE;
	if (!flags || o->all)
		flags = HK_COLLAPSE_HEAP | HK_COLLAPSE_TEXT;
	if (o->dry_run)
		flags |= HK_COLLAPSE_DRY_RUN;
	rc = hk_new(NULL, &ctx);
	if (rc == 0)
		rc = hk_collapse_process(ctx, pid, flags, &c, &problem);
	else
		problem = HK_COLLAPSE_NO_PROBLEM;
	hk_unref(ctx);
	if (rc < 0) {
		say_problem(o, pid, rc, problem);
		return HK_EXIT_FAILURE;
	}
	if (o->json)
		print_json(o, c, pid);
	else
		print_text(o, c, pid);
	say_ranges(o, c, pid);
	rc = nothing_collapsed(o, c, pid);
	hk_collapse_free(c);
	return rc ? HK_EXIT_FAILURE : HK_EXIT_SUCCESS;
}
