// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pagesize: print the base page size, or the huge page sizes, one per line,
 * ascending. Output is that of libhugetlbfs's pagesize, byte for byte.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <hugekit/hugekit.h>

#include "opts.h"
#include "util.h"

enum {
	OPT_SYSROOT = HK_OPT_LONG_BASE,
};

// clang-format off
static const struct hkt_opt opts[] = {
	{ "all",          'a', HK_ARG_NONE,     'a', NULL, "show the base page size and all huge page sizes", 0 },
	{ "huge-only",    'H', HK_ARG_NONE,     'H', NULL, "show only the huge page sizes", 0 },
	{ "sysroot",      0,   HK_ARG_REQUIRED, OPT_SYSROOT, "DIR", "read /proc and /sys under DIR", 0 },
	{ "help",         'h', HK_ARG_NONE,     'h', NULL, "display this help", 0 },
	{ "version",      'V', HK_ARG_NONE,     'V', NULL, "display version", 0 },
	{ "list-options", 0,   HK_ARG_NONE,     HK_OPT_LIST_OPTIONS, NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

__attribute__((noreturn)) static void usage(void)
{
	printf("Usage:\n %s [options]\n\n", hkt_prog());
	printf("Print the page sizes of the system, in bytes, one per line, ascending.\n"
	       "Without an option: the base page size.\n\n");
	printf("Options:\n");
	hkt_opts_print_help(stdout, opts);
	printf("\nSee pagesize(1).\n");
	exit(HK_EXIT_SUCCESS);
}

/* The library's messages: its errors, and everything when HK_DEBUG asks for it. */
static void lib_log(void *data, int priority, const char *msg)
{
	fprintf(stderr, "%s: %s: %s\n", hkt_prog(), priority <= LOG_ERR ? "ERROR" : "DEBUG", msg);
}

/* The command line: -a, -H, --sysroot DIR; exits after a message when it is wrong. */
static void parse_args(int argc, char **argv, bool *all, bool *huge_only, const char **sysroot)
{
	struct hkt_getopt g;
	int c;

	if (hkt_getopt_init(&g, opts, "+") < 0)
		exit(HK_EXIT_FAILURE);
	while ((c = hkt_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case 'a':
			*all = true;
			break;
		case 'H':
			*huge_only = true;
			break;
		case OPT_SYSROOT:
			*sysroot = optarg;
			break;
		default:
			hkt_opts_standard(c, opts, usage);
		}
	}
	/* An empty DIR (an unset variable) is a mistake, not the running system. */
	if (*sysroot && !**sysroot) {
		fprintf(stderr, "%s: --sysroot: the directory is empty\n", hkt_prog());
		exit(HK_EXIT_FAILURE);
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", hkt_prog(), argv[optind]);
		hkt_errtryhelp();
	}
}

/* The base page size, then (-a) or only (-H) the huge page sizes, smallest first. */
static void print_sizes(uint64_t base, uint64_t *sizes, size_t n, bool huge_only)
{
	/* -H wins over -a, as in libhugetlbfs. */
	if (!huge_only)
		printf("%" PRIu64 "\n", base);
	for (size_t i = 0; i < n; i++)
		printf("%" PRIu64 "\n", sizes[i]);
}

int main(int argc, char **argv)
{
	bool all = false, huge_only = false;
	const char *sysroot = NULL;
	struct hk_ctx *ctx;
	uint64_t *sizes = NULL, base;
	size_t n = 0;
	int rc;

	hkt_close_stdout_atexit();
	parse_args(argc, argv, &all, &huge_only, &sysroot);
	rc = hk_new(sysroot, &ctx);
	if (rc < 0) {
		fprintf(stderr, "%s: ERROR: cannot open %s: %s\n", hkt_prog(),
			sysroot ? sysroot : "/", strerror(-rc));
		return HK_EXIT_FAILURE;
	}
	/*
	 * The library's errors (a --sysroot link that leaves the tree), and all
	 * of its messages when its HK_DEBUG says so (the library reads it).
	 */
	hk_set_log_fn(ctx, lib_log, NULL);
	rc = hk_base_page_size(ctx, &base);
	/* Ascending, as printed: no /proc/meminfo read for the default size. */
	if (rc == 0 && (all || huge_only))
		rc = hk_page_sizes_ascending(ctx, &sizes, &n);
	hk_unref(ctx);
	if (rc < 0) {
		/* The legacy message, then why. */
		fprintf(stderr, "%s: ERROR: failed to get list of supported page sizes\n",
			hkt_prog());
		fprintf(stderr, "%s: ERROR: %s\n", hkt_prog(), strerror(-rc));
		return HK_EXIT_FAILURE;
	}
	if (!all && !huge_only)
		printf("%" PRIu64 "\n", base);
	else
		print_sizes(base, sizes, n, huge_only);
	free(sizes);
	return HK_EXIT_SUCCESS;
}
