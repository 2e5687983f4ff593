// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm: configure and explain the huge page set-up of the machine.
 *
 * The command line is parsed whole and validated before anything is read or
 * done (options.c); reports then run in libhugetlbfs's order (mounts, pools,
 * page sizes, all page sizes, explain), whatever order the options came in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"
#include "options.h"

/* Defaults from libhugetlbfs's environment: HUGETLB_VERBOSE, HUGETLB_DEBUG. */
static void verbose_from_env(struct hugeadm_ctl *ctl)
{
	/*
	 * HK_DEBUG is the library's own switch: it shows its debug messages. Like
	 * the library, a setuid or file-capability hugeadm does not take it (or
	 * HUGETLB_DEBUG) from its caller; HUGETLB_VERBOSE only sets how much of
	 * hugeadm's own messages show, and stays.
	 */
	const char *debug = secure_getenv("HUGETLB_DEBUG");

	ctl->verbose = hk_verbosity_env(getenv("HUGETLB_VERBOSE"),
					debug ? debug : secure_getenv("HK_DEBUG"), HA_WARNING);
}

/*
 * Privileged for someone else (set-user-ID, set-group-ID, file or ambient
 * capabilities, and a real uid other than 0: privilege.h), hugeadm opens no
 * file or directory its caller names: each option that names one is an error.
 * Refused rather than opened with the caller's identity (setfsuid): one rule,
 * checked before anything is opened, that no later open can get wrong. False
 * after the messages.
 */
static bool caller_paths_allowed(const struct hugeadm_ctl *ctl, const char *sysroot)
{
	const struct {
		const char *given, *option;
	} paths[] = {
		{ctl->apply ? ctl->config_file : NULL, "--apply FILE"},
		{ctl->check ? ctl->config_file : NULL, "--check FILE"},
		{ctl->gen_config, "--config FILE"},
		{ctl->gen_output, "--output DIR"},
		{ctl->metrics_file, "--metrics FILE"},
		{sysroot, "--sysroot DIR"},
	};
	bool ok = true;

	if (!hk_privileged_for_other())
		return true;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i].given)
			continue;
		ha_msg(ctl, HA_ERROR,
		       "%s: a set-user-ID, set-group-ID or capability hugeadm does not open a "
		       "path its caller names (run it as root, or without the privileges)",
		       paths[i].option);
		ok = false;
	}
	return ok;
}

/*
 * Privileged for someone else, the reports read with the caller's identity:
 * the privileges are given up for good first, so that --usage, --pages-needed
 * and --list-shared-text show only the processes and files the caller may
 * read. -1 after a message.
 */
static int reports_as_caller(const struct hugeadm_ctl *ctl)
{
	int rc;

	if (!hk_privileged_for_other())
		return 0;
	rc = hk_drop_privileges();
	if (rc < 0)
		ha_msg(ctl, HA_ERROR, "cannot give up the privileges before the reports: %s",
		       strerror(-rc));
	return rc < 0 ? -1 : 0;
}

/*
 * The library's context on sysroot, its log shown as hugeadm's messages; a
 * machine without huge pages ends here, but for --metrics (which has no pool
 * samples then). 0, or -1 after a message.
 */
static int make_context(struct hugeadm_ctl *ctl, const char *sysroot)
{
	uint64_t def;
	int rc;

	rc = hk_new(sysroot, &ctl->ctx);
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "%s: %s", sysroot ? sysroot : "/", strerror(-rc));
		return -1;
	}
	ha_msg_attach(ctl);
	rc = hk_default_page_size(ctl->ctx, &def);
	if (rc == -EOPNOTSUPP && ctl->metrics)
		return 0; /* THP, the configuration: the metrics of what there is */
	if (rc == -EOPNOTSUPP)
		ha_msg(ctl, HA_ERROR, "kernel does not support huge pages");
	else if (rc < 0)
		ha_msg(ctl, HA_ERROR, "cannot read the default huge page size: %s", strerror(-rc));
	return rc < 0 ? -1 : 0;
}

/* The change options, then the reports (they show the machine as the changes left it). */
static int changes_and_reports(struct hugeadm_ctl *ctl, bool reports)
{
	int rc, rr;

	ha_dry_run_header(ctl);
	rc = ha_apply(ctl);
	if (rc == HK_EXIT_FAILURE || !reports)
		return rc;
	rr = reports_as_caller(ctl) < 0 ? HK_EXIT_FAILURE
	     : ctl->json		? ha_report_json(ctl)
					: ha_report_text(ctl);
	return rr != HK_EXIT_SUCCESS ? rr : rc;
}

/* What the command line asked for: an exit code. */
static int dispatch(struct hugeadm_ctl *ctl, bool reports)
{
	int lock_fd = -1, rc;

	if (ctl->apply || ctl->check)
		return ha_config_run(ctl);
	/* Reads only (and writes its own file): no lock; as the caller, as the reports. */
	if (ctl->metrics)
		return reports_as_caller(ctl) < 0 ? HK_EXIT_FAILURE : ha_metrics(ctl);
	/* Reads the machine and writes only files of its own: no lock. */
	if (ctl->generate)
		return ha_generate(ctl);
	/* Validated under the lock: the plan is checked against the state it changes. */
	if (ha_lock(ctl, &lock_fd) < 0 || ha_plan_validate(ctl) < 0)
		rc = HK_EXIT_FAILURE;
	else if (ctl->dry_run && ctl->json)
		rc = ha_plan_json(ctl);
	else
		rc = changes_and_reports(ctl, reports);
	hk_unlock(lock_fd);
	return rc;
}

int main(int argc, char **argv)
{
	struct hugeadm_ctl ctl = {.lock_timeout = 30};
	struct ha_cmdline cl = {.ctl = &ctl};
	int rc = HK_EXIT_FAILURE;

	hkt_close_stdout_atexit();
	verbose_from_env(&ctl);
	/* The whole command line is validated before anything is read or done. */
	if (ha_options_parse(&cl, argc, argv) == 0 && ha_options_validate(&cl) == 0 &&
	    caller_paths_allowed(&ctl, cl.sysroot) && make_context(&ctl, cl.sysroot) == 0)
		rc = dispatch(&ctl, cl.given & HA_G_REPORT);
	ha_plan_free(&ctl);
	hk_unref(ctl.ctx);
	return rc;
}
