// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm: configure and explain the huge page set-up of the machine.
 *
 * The command line is parsed whole and validated before anything is read or
 * done; reports then run in libhugetlbfs's order (mounts, pools, page sizes,
 * all page sizes, explain), whatever order the options came in.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "hugeadm.h"
#include "opts.h"

enum {
	OPT_LIST_ALL_MOUNTS = HK_OPT_LONG_BASE,
	OPT_POOL_LIST,
	OPT_PAGE_SIZES,
	OPT_PAGE_SIZES_ALL,
	OPT_EXPLAIN,
	OPT_PER_NODE,
	OPT_JSON,
	OPT_VERBOSE,
	OPT_SYSROOT,
	OPT_LIST_OPTIONS,
};

// clang-format off
static const struct hk_opt opts[] = {
	{ "list-all-mounts", 0,   HK_ARG_NONE,     OPT_LIST_ALL_MOUNTS, NULL, "list all hugetlbfs mount points", 0 },
	{ "pool-list",       0,   HK_ARG_NONE,     OPT_POOL_LIST,       NULL, "list the pool of each huge page size", 0 },
	{ "per-node",        0,   HK_ARG_NONE,     OPT_PER_NODE,        NULL, "with --pool-list: one row per page size and NUMA node", 0 },
	{ "page-sizes",      0,   HK_ARG_NONE,     OPT_PAGE_SIZES,      NULL, "list the page sizes that have a pool and a mount", 0 },
	{ "page-sizes-all",  0,   HK_ARG_NONE,     OPT_PAGE_SIZES_ALL,  NULL, "list all page sizes the kernel supports", 0 },
	{ "explain",         0,   HK_ARG_NONE,     OPT_EXPLAIN,         NULL, "explain the huge page state of the machine", 0 },
	{ "json",            0,   HK_ARG_NONE,     OPT_JSON,            NULL, "print --pool-list, --page-sizes(-all) and\n--list-all-mounts as JSON (sizes in bytes)", 0 },
	{ "sysroot",         0,   HK_ARG_REQUIRED, OPT_SYSROOT,         "DIR", "read /proc and /sys under DIR", 0 },
	{ "verbose",         0,   HK_ARG_REQUIRED, OPT_VERBOSE,         "LEVEL", "set the message level (0-99; default 2)", 0 },
	{ NULL,              'v', HK_ARG_NONE,     'v',                 NULL, "raise the message level by one", 0 },
	{ "help",            'h', HK_ARG_NONE,     'h',                 NULL, "display this help", 0 },
	{ "version",         'V', HK_ARG_NONE,     'V',                 NULL, "display version", 0 },
	{ "list-options",    0,   HK_ARG_NONE,     OPT_LIST_OPTIONS,    NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

static const char *const level_names[] = {
	[HA_ERROR] = "ERROR",
	[HA_WARNING] = "WARNING",
	[HA_INFO] = "INFO",
	[HA_DEBUG] = "DEBUG",
};

void ha_msg(const struct hugeadm_ctl *ctl, int level, const char *fmt, ...)
{
	va_list ap;

	if (level > ctl->verbose)
		return;
	fflush(stdout);
	fprintf(stderr, "%s:%s: ", hk_prog(), level_names[level < HA_DEBUG ? level : HA_DEBUG]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The library's log, shown at the matching level. */
static void lib_log(void *data, int priority, const char *msg)
{
	int level = priority <= LOG_ERR	      ? HA_ERROR
		    : priority <= LOG_WARNING ? HA_WARNING
		    : priority <= LOG_INFO    ? HA_INFO
					      : HA_DEBUG;

	ha_msg(data, level, "%s", msg);
}

__attribute__((noreturn)) static void usage(void)
{
	printf("Usage:\n %s [options]\n\n", hk_prog());
	printf("Report and configure the huge page pools, mounts and settings of the machine.\n\n");
	printf("Options:\n");
	hk_opts_print_help(stdout, opts);
	printf("\nSee hugeadm(8).\n");
	exit(HK_EXIT_SUCCESS);
}

/* --verbose N: 0..99, strictly a number. */
static int parse_verbose(const struct hugeadm_ctl *ctl, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > 99) {
		ha_msg(ctl, HA_ERROR, "%s: verbosity out of range 0-99", arg);
		exit(HK_EXIT_FAILURE);
	}
	return (int)v;
}

/* Defaults from libhugetlbfs's environment: HUGETLB_VERBOSE, HUGETLB_DEBUG. */
static void verbose_from_env(struct hugeadm_ctl *ctl)
{
	const char *s = getenv("HUGETLB_VERBOSE");

	ctl->verbose = HA_WARNING;
	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (!*end && v >= 0 && v <= 99)
			ctl->verbose = (int)v;
	}
	/* HK_DEBUG is the library's own switch: it shows its debug messages. */
	if (getenv("HUGETLB_DEBUG") || getenv("HK_DEBUG"))
		ctl->verbose = HA_DEBUG;
}

int main(int argc, char **argv)
{
	struct hugeadm_ctl ctl = {0};
	const char *sysroot = NULL;
	struct hk_getopt g;
	uint64_t def;
	int c, rc;

	hk_close_stdout_atexit();
	verbose_from_env(&ctl);
	if (hk_getopt_init(&g, opts, "+") < 0)
		return HK_EXIT_FAILURE;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case OPT_LIST_ALL_MOUNTS:
			ctl.list_mounts = true;
			break;
		case OPT_POOL_LIST:
			ctl.pool_list = true;
			break;
		case OPT_PER_NODE:
			ctl.per_node = true;
			break;
		case OPT_PAGE_SIZES:
			ctl.page_sizes = true;
			break;
		case OPT_PAGE_SIZES_ALL:
			ctl.page_sizes_all = true;
			break;
		case OPT_EXPLAIN:
			ctl.explain = true;
			break;
		case OPT_JSON:
			ctl.json = true;
			break;
		case OPT_SYSROOT:
			sysroot = optarg;
			break;
		case OPT_VERBOSE:
			ctl.verbose = parse_verbose(&ctl, optarg);
			break;
		case 'v':
			if (ctl.verbose < 99)
				ctl.verbose++;
			else
				ha_msg(&ctl, HA_WARNING, "verbosity must be at most 99");
			break;
		case 'h':
			usage();
		case 'V':
			hk_getopt_fini(&g);
			printf("%s from hugekit %s\n", hk_prog(), HK_VERSION);
			return HK_EXIT_SUCCESS;
		case OPT_LIST_OPTIONS:
			hk_getopt_fini(&g);
			hk_opts_print_list(stdout, opts);
			return HK_EXIT_SUCCESS;
		default:
			hk_errtryhelp();
		}
	}
	hk_getopt_fini(&g);

	/* Validate the whole command line before reading or doing anything. */
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", hk_prog(), argv[optind]);
		hk_errtryhelp();
	}
	if (ctl.per_node && !ctl.pool_list) {
		fprintf(stderr, "%s: --per-node works with --pool-list only\n", hk_prog());
		hk_errtryhelp();
	}
	if (ctl.json && ctl.explain) {
		fprintf(stderr, "%s: --json does not apply to --explain\n", hk_prog());
		hk_errtryhelp();
	}
	if (!ctl.list_mounts && !ctl.pool_list && !ctl.page_sizes && !ctl.page_sizes_all &&
	    !ctl.explain) {
		fprintf(stderr, "%s: no operation specified\n", hk_prog());
		hk_errtryhelp();
	}

	rc = hk_new(sysroot, &ctl.ctx);
	if (rc < 0) {
		ha_msg(&ctl, HA_ERROR, "%s: %s", sysroot ? sysroot : "/", strerror(-rc));
		return HK_EXIT_FAILURE;
	}
	hk_set_log_fn(ctl.ctx, lib_log, &ctl);
	hk_set_log_priority(ctl.ctx, ctl.verbose >= HA_DEBUG	 ? LOG_DEBUG
				     : ctl.verbose >= HA_INFO	 ? LOG_INFO
				     : ctl.verbose >= HA_WARNING ? LOG_WARNING
								 : LOG_ERR);
	rc = hk_default_page_size(ctl.ctx, &def);
	if (rc == -EOPNOTSUPP) {
		ha_msg(&ctl, HA_ERROR, "kernel does not support huge pages");
		rc = HK_EXIT_FAILURE;
	} else if (rc < 0) {
		ha_msg(&ctl, HA_ERROR, "cannot read the default huge page size: %s", strerror(-rc));
		rc = HK_EXIT_FAILURE;
	} else {
		rc = ctl.json ? ha_report_json(&ctl) : ha_report_text(&ctl);
	}
	hk_unref(ctl.ctx);
	return rc;
}
