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
#include "privilege.h"

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
	OPT_POOL_PAGES_MIN,
	OPT_POOL_PAGES_MAX,
	OPT_OBEY_MEMPOLICY,
	OPT_HARD,
	OPT_STRICT,
	OPT_THP_ALWAYS,
	OPT_THP_MADVISE,
	OPT_THP_NEVER,
	OPT_THP_KHUGEPAGED_PAGES,
	OPT_THP_KHUGEPAGED_SCAN_SLEEP,
	OPT_THP_KHUGEPAGED_ALLOC_SLEEP,
	OPT_THP_SIZE,
	OPT_THP_DEFRAG,
	OPT_SET_MIN_FREE_KBYTES,
	OPT_SET_SHMMAX,
	OPT_SET_SHM_GROUP,
	OPT_ADD_TEMP_SWAP,
	OPT_ADD_RAMDISK_SWAP,
	OPT_PERSIST,
	OPT_ENABLE_ZONE_MOVABLE,
	OPT_DISABLE_ZONE_MOVABLE,
	OPT_LOCK_TIMEOUT,
	OPT_CREATE_MOUNTS,
	OPT_CREATE_USER_MOUNTS,
	OPT_CREATE_GROUP_MOUNTS,
	OPT_CREATE_GLOBAL_MOUNTS,
	OPT_MAX_SIZE,
	OPT_MIN_SIZE,
	OPT_MAX_INODES,
	OPT_UNMOUNT_ALL,
	OPT_LIST_SHARED_TEXT,
	OPT_CLEAN_SHARED_TEXT,
	/* --usage, --pages-needed */
	OPT_USAGE,
	OPT_PAGES_NEEDED,
	/* --apply, --check: the configuration */
	OPT_APPLY,
	OPT_CHECK,
	/* Newer kernel pool features */
	OPT_POOL_DEMOTE_SIZE,
	OPT_POOL_DEMOTE,
	OPT_VMEMMAP_OPTIMIZE,
	/* --generate, with --config and --output */
	OPT_GENERATE,
	OPT_CONFIG,
	OPT_OUTPUT,
};

// clang-format off
static const struct hk_opt opts[] = {
	{ "apply",           0,   HK_ARG_OPTIONAL, OPT_APPLY,           "FILE", "make the machine match the configuration\n(/etc/hugekit/hugekit.conf and conf.d/, or FILE)", 0 },
	{ "check",           0,   HK_ARG_OPTIONAL, OPT_CHECK,           "FILE", "compare the machine with the configuration;\nexit 3 when it differs", 0 },
	{ "pool-pages-min",  0,   HK_ARG_REQUIRED, OPT_POOL_PAGES_MIN,  "SIZE:[+|-]N[@NODES]", "set (or raise, lower) the pool minimum of a page size;\nN pages, or an amount with K, M or G;\n@NODES: each listed NUMA node's own share", 0 },
	{ "pool-pages-max",  0,   HK_ARG_REQUIRED, OPT_POOL_PAGES_MAX,  "SIZE:[+|-]N", "set (or raise, lower) the pool maximum (overcommit)", 0 },
	{ "pool-demote-size", 0,  HK_ARG_REQUIRED, OPT_POOL_DEMOTE_SIZE, "SIZE:TO", "the smaller huge page size that demoted pages\nof SIZE become (Linux 5.16)", 0 },
	{ "pool-demote",     0,   HK_ARG_REQUIRED, OPT_POOL_DEMOTE,     "SIZE:N[@NODES]", "split N free pages of SIZE into pages of its\ndemote size (on each listed node)", 0 },
	{ "vmemmap-optimize", 0,  HK_ARG_REQUIRED, OPT_VMEMMAP_OPTIMIZE, "on|off", "HugeTLB vmemmap optimization for pages allocated\nafterwards (vm.hugetlb_optimize_vmemmap, Linux 5.19)", 0 },
	{ "obey-mempolicy",  0,   HK_ARG_NONE,     OPT_OBEY_MEMPOLICY,  NULL, "grow the pool on the nodes of the caller's NUMA policy", 0 },
	{ "hard",            0,   HK_ARG_NONE,     OPT_HARD,            NULL, "compact memory and retry while the pool grows (30 s at most)", 0 },
	{ "strict",          0,   HK_ARG_NONE,     OPT_STRICT,          NULL, "a pool that comes up short is put back; exit status 2", 0 },
	{ "dry-run",         'd', HK_ARG_NONE,     'd',                 NULL, "print the equivalent shell commands; change nothing", 0 },
	{ "thp-always",      0,   HK_ARG_NONE,     OPT_THP_ALWAYS,      NULL, "transparent huge pages always", 0 },
	{ "thp-madvise",     0,   HK_ARG_NONE,     OPT_THP_MADVISE,     NULL, "transparent huge pages where madvise() asks", 0 },
	{ "thp-never",       0,   HK_ARG_NONE,     OPT_THP_NEVER,       NULL, "no transparent huge pages", 0 },
	{ "thp-defrag",      0,   HK_ARG_REQUIRED, OPT_THP_DEFRAG,      "MODE", "THP defrag mode: always, defer, defer+madvise,\nmadvise or never", 0 },
	{ "thp-size",        0,   HK_ARG_REQUIRED, OPT_THP_SIZE,        "SIZE:MODE", "multi-size THP: always, inherit, madvise or never\nfor one size (e.g. 64K:always)", 0 },
	{ "thp-khugepaged-pages",       0, HK_ARG_REQUIRED, OPT_THP_KHUGEPAGED_PAGES,       "N",  "pages khugepaged scans on each pass", 0 },
	{ "thp-khugepaged-scan-sleep",  0, HK_ARG_REQUIRED, OPT_THP_KHUGEPAGED_SCAN_SLEEP,  "MS", "milliseconds khugepaged sleeps between passes", 0 },
	{ "thp-khugepaged-alloc-sleep", 0, HK_ARG_REQUIRED, OPT_THP_KHUGEPAGED_ALLOC_SLEEP, "MS", "milliseconds khugepaged waits after an\nallocation failure", 0 },
	{ "set-recommended-min_free_kbytes", 0, HK_ARG_NONE, OPT_SET_MIN_FREE_KBYTES, NULL, "set min_free_kbytes to libhugetlbfs's recommendation", 0 },
	{ "set-recommended-shmmax", 0,  HK_ARG_NONE,     OPT_SET_SHMMAX,      NULL, "raise kernel.shmmax to what the pools can hold", 0 },
	{ "set-shm-group",   0,   HK_ARG_REQUIRED, OPT_SET_SHM_GROUP,   "GROUP", "let GROUP (name or gid) use SHM_HUGETLB", 0 },
	{ "add-temp-swap",   0,   HK_ARG_OPTIONAL, OPT_ADD_TEMP_SWAP,   "N", "add N huge pages of swap file while a pool grows\n(default 5)", 0 },
	{ "add-ramdisk-swap", 0,  HK_ARG_NONE,     OPT_ADD_RAMDISK_SWAP, NULL, "swap on /dev/ram* while a pool grows", 0 },
	{ "persist",         0,   HK_ARG_NONE,     OPT_PERSIST,         NULL, "keep that swap after the resize", 0 },
	{ "enable-zone-movable",  0, HK_ARG_NONE,  OPT_ENABLE_ZONE_MOVABLE,  NULL, "hugepages_treat_as_movable = 1 (old kernels)", 0 },
	{ "disable-zone-movable", 0, HK_ARG_NONE,  OPT_DISABLE_ZONE_MOVABLE, NULL, "hugepages_treat_as_movable = 0 (old kernels)", 0 },
	{ "lock-timeout",    0,   HK_ARG_REQUIRED, OPT_LOCK_TIMEOUT,    "SECONDS", "wait this long for another hugeadm (default 30)", 0 },
	{ "create-mounts",   0,   HK_ARG_NONE,     OPT_CREATE_MOUNTS,   NULL, "mount hugetlbfs for each page size under\n/var/lib/hugetlbfs (root:root 0770)", 0 },
	{ "create-user-mounts",   0, HK_ARG_REQUIRED, OPT_CREATE_USER_MOUNTS,   "USER",  "the same under .../user/USER (USER:root 0700)", 0 },
	{ "create-group-mounts",  0, HK_ARG_REQUIRED, OPT_CREATE_GROUP_MOUNTS,  "GROUP", "the same under .../group/GROUP (root:GROUP 0070)", 0 },
	{ "create-global-mounts", 0, HK_ARG_NONE,     OPT_CREATE_GLOBAL_MOUNTS, NULL,    "the same under .../global (root:root 1777)", 0 },
	{ "max-size",        0,   HK_ARG_REQUIRED, OPT_MAX_SIZE,        "SIZE", "limit each new mount to SIZE (size=)", 0 },
	{ "min-size",        0,   HK_ARG_REQUIRED, OPT_MIN_SIZE,        "SIZE", "reserve SIZE of pages for each new mount (min_size=)", 0 },
	{ "max-inodes",      0,   HK_ARG_REQUIRED, OPT_MAX_INODES,      "N", "limit each new mount to N files (nr_inodes=)", 0 },
	{ "unmount-all",     0,   HK_ARG_NONE,     OPT_UNMOUNT_ALL,     NULL, "unmount hugeadm's mounts under /var/lib/hugetlbfs", 0 },
	{ "clean-shared-text", 0, HK_ARG_OPTIONAL, OPT_CLEAN_SHARED_TEXT, "USER", "remove the files of shared text (HUGETLB_SHARE=1)\nof every user, or of USER (name or uid)", 0 },
	{ "list-all-mounts", 0,   HK_ARG_NONE,     OPT_LIST_ALL_MOUNTS, NULL, "list all hugetlbfs mount points", 0 },
	{ "list-shared-text", 0,  HK_ARG_NONE,     OPT_LIST_SHARED_TEXT, NULL, "list the files of text shared between processes\n(HUGETLB_SHARE=1): user, pages, file, program", 0 },
	{ "pool-list",       0,   HK_ARG_NONE,     OPT_POOL_LIST,       NULL, "list the pool of each huge page size", 0 },
	{ "per-node",        0,   HK_ARG_NONE,     OPT_PER_NODE,        NULL, "with --pool-list: one row per page size and NUMA node", 0 },
	{ "page-sizes",      0,   HK_ARG_NONE,     OPT_PAGE_SIZES,      NULL, "list the page sizes that have a pool and a mount", 0 },
	{ "page-sizes-all",  0,   HK_ARG_NONE,     OPT_PAGE_SIZES_ALL,  NULL, "list all page sizes the kernel supports", 0 },
	{ "explain",         0,   HK_ARG_NONE,     OPT_EXPLAIN,         NULL, "explain the huge page state of the machine", 0 },
	{ "usage",           0,   HK_ARG_NONE,     OPT_USAGE,           NULL, "who holds huge pages: processes, SysV segments,\nfiles on hugetlbfs, cgroups; totals per size", 0 },
	{ "pages-needed",    0,   HK_ARG_REQUIRED, OPT_PAGES_NEEDED,    "PID", "the huge pages of each size that would hold\nthe process's heap, anonymous memory and segments", 0 },
	{ "generate",        0,   HK_ARG_REQUIRED, OPT_GENERATE,        "KIND", "write what the configuration needs from the boot:\nboot (kernel parameters), sysctl (a sysctl.d file)\nor units (systemd units)", 0 },
	{ "config",          0,   HK_ARG_REQUIRED, OPT_CONFIG,          "FILE", "with --generate: read FILE alone, not\n/etc/hugekit/hugekit.conf and conf.d/", 0 },
	{ "output",          0,   HK_ARG_REQUIRED, OPT_OUTPUT,          "DIR", "with --generate: write the files into DIR", 0 },
	{ "json",            0,   HK_ARG_NONE,     OPT_JSON,            NULL, "print --pool-list, --page-sizes(-all),\n--list-all-mounts, --list-shared-text, --explain,\n--usage and --pages-needed as JSON (sizes in bytes);\nwith --dry-run, the plan of writes", 0 },
	{ "sysroot",         0,   HK_ARG_REQUIRED, OPT_SYSROOT,         "DIR", "read and write /proc and /sys under DIR", 0 },
	{ "verbose",         0,   HK_ARG_REQUIRED, OPT_VERBOSE,         "LEVEL", "set the message level (0-99; default 2)", 0 },
	{ NULL,              'v', HK_ARG_NONE,     'v',                 NULL, "raise the message level by one", 0 },
	{ "help",            'h', HK_ARG_NONE,     'h',                 NULL, "display this help", 0 },
	{ "version",         'V', HK_ARG_NONE,     'V',                 NULL, "display version", 0 },
	{ "list-options",    0,   HK_ARG_NONE,     HK_OPT_LIST_OPTIONS,    NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

static const char *const level_names[] = {
	[HA_ERROR] = "ERROR",
	[HA_WARNING] = "WARNING",
	[HA_INFO] = "INFO",
	[HA_DEBUG] = "DEBUG",
};

/* One line each: control characters from names in the message are written as \ooo. */
void ha_msg(const struct hugeadm_ctl *ctl, int level, const char *fmt, ...)
{
	char *msg = NULL, *safe = NULL;
	int n, err = errno;
	va_list ap;

	if (level > ctl->verbose)
		return;
	fflush(stdout);
	fprintf(stderr, "%s:%s: ", hk_prog(), level_names[level < HA_DEBUG ? level : HA_DEBUG]);
	errno = err; /* for %m */
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n >= 0)
		safe = hk_escape_ctl(msg, false);
	fputs(safe ? safe : "(out of memory)", stderr);
	free(safe);
	if (n >= 0)
		free(msg);
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

static bool has_kind(const struct hugeadm_ctl *ctl, enum ha_kind kind)
{
	for (size_t i = 0; i < ctl->n_actions; i++)
		if (ctl->actions[i].kind == kind)
			return true;
	return false;
}

/* A decimal count from min to max, or -1 after a message. */
static int parse_count(const struct hugeadm_ctl *ctl, const char *opt, const char *arg, long min,
		       long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '+' || *arg == '-' || v < min || v > max) {
		ha_msg(ctl, HA_ERROR, "%s: invalid value for %s (a number from %ld to %ld)", arg,
		       opt, min, max);
		return -1;
	}
	return (int)v;
}

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

	ctl->verbose = hkc_verbosity_env(getenv("HUGETLB_VERBOSE"),
					 debug ? debug : secure_getenv("HK_DEBUG"), HA_WARNING);
}

/* A report was asked for (they run after the changes, in a fixed order). */
static bool any_report(const struct hugeadm_ctl *c)
{
	return c->list_mounts || c->pool_list || c->page_sizes || c->page_sizes_all || c->explain ||
	       c->list_text || c->usage || c->pages_needed;
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

/* A modifier of the pool options (--hard, the swap options, --obey-mempolicy). */
static bool pool_modifiers(const struct hugeadm_ctl *c)
{
	return c->hard || c->temp_swap || c->ramdisk_swap || c->obey_mempolicy;
}

int main(int argc, char **argv)
{
	struct hugeadm_ctl ctl = {.lock_timeout = 30};
	const char *sysroot = NULL;
	bool bad = false;
	int lock_fd = -1;
	struct hk_getopt g;
	uint64_t def;
	int c, rc;

	hk_close_stdout_atexit();
	verbose_from_env(&ctl);
	if (hk_getopt_init(&g, opts, "+") < 0)
		return HK_EXIT_FAILURE;
	while ((c = hk_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_LIST_ALL_MOUNTS:
			ctl.list_mounts = true;
			break;
		case OPT_POOL_LIST:
			ctl.pool_list = true;
			break;
		case OPT_LIST_SHARED_TEXT:
			ctl.list_text = true;
			break;
		case OPT_CLEAN_SHARED_TEXT:
			bad |= ha_plan_clean_text(&ctl, optarg) < 0;
			break;
		case OPT_USAGE:
			ctl.usage = true;
			break;
		case OPT_PAGES_NEEDED:
			bad |= ha_plan_pages_needed(&ctl, optarg) < 0;
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
		case OPT_GENERATE:
			if (ctl.generate) {
				fprintf(stderr, "%s: --generate is given once\n", hk_prog());
				hk_errtryhelp();
			}
			ctl.generate = optarg;
			if (ha_generate_check_kind(optarg) < 0) {
				ha_msg(&ctl, HA_ERROR,
				       "--generate: '%s' is not boot, sysctl or units", optarg);
				bad = true;
			}
			break;
		case OPT_CONFIG:
		case OPT_OUTPUT:
			if (!*optarg) {
				ha_msg(&ctl, HA_ERROR, "--%s: the name is empty",
				       c == OPT_CONFIG ? "config" : "output");
				bad = true;
			}
			*(c == OPT_CONFIG ? &ctl.gen_config : &ctl.gen_output) = optarg;
			break;
		case OPT_SYSROOT:
			/* An empty DIR (an unset variable) is a mistake, not the running system. */
			if (!*optarg) {
				ha_msg(&ctl, HA_ERROR, "--sysroot: the directory is empty");
				bad = true;
			}
			sysroot = optarg;
			break;
		case OPT_APPLY:
		case OPT_CHECK:
			if (ctl.apply || ctl.check) {
				fprintf(stderr, "%s: --apply and --check are given once, alone\n",
					hk_prog());
				hk_errtryhelp();
			}
			ctl.apply = c == OPT_APPLY;
			ctl.check = c == OPT_CHECK;
			/* --apply FILE as well as --apply=FILE: the next word, unless an option. */
			if (optarg)
				ctl.config_file = optarg;
			else if (optind < argc && argv[optind][0] != '-')
				ctl.config_file = argv[optind++];
			if (ctl.config_file && !*ctl.config_file) {
				ha_msg(&ctl, HA_ERROR, "--%s: the file name is empty",
				       ctl.apply ? "apply" : "check");
				bad = true;
			}
			break;
		case OPT_POOL_PAGES_MIN:
			bad |= ha_plan_pool(&ctl, HA_POOL_MIN, optarg) < 0;
			break;
		case OPT_POOL_PAGES_MAX:
			bad |= ha_plan_pool(&ctl, HA_POOL_MAX, optarg) < 0;
			break;
		case OPT_POOL_DEMOTE_SIZE:
			bad |= ha_plan_demote_size(&ctl, optarg) < 0;
			break;
		case OPT_POOL_DEMOTE:
			bad |= ha_plan_demote(&ctl, optarg) < 0;
			break;
		case OPT_VMEMMAP_OPTIMIZE:
			bad |= ha_plan_vmemmap(&ctl, optarg) < 0;
			break;
		case OPT_OBEY_MEMPOLICY:
			ctl.obey_mempolicy = true;
			break;
		case OPT_HARD:
			ctl.hard = true;
			break;
		case OPT_STRICT:
			ctl.strict = true;
			break;
		case 'd':
			ctl.dry_run = true;
			break;
		case OPT_THP_ALWAYS:
			ha_plan_simple(&ctl, HA_THP, "enabled", "always", "--thp-always");
			break;
		case OPT_THP_MADVISE:
			ha_plan_simple(&ctl, HA_THP, "enabled", "madvise", "--thp-madvise");
			break;
		case OPT_THP_NEVER:
			ha_plan_simple(&ctl, HA_THP, "enabled", "never", "--thp-never");
			break;
		case OPT_THP_DEFRAG:
			ha_plan_simple(&ctl, HA_THP, "defrag", optarg, optarg);
			break;
		case OPT_THP_SIZE:
			bad |= ha_plan_thp_size(&ctl, optarg) < 0;
			break;
		case OPT_THP_KHUGEPAGED_PAGES:
			bad |= ha_plan_number(&ctl, "khugepaged/pages_to_scan", optarg, 1) < 0;
			break;
		case OPT_THP_KHUGEPAGED_SCAN_SLEEP:
			bad |= ha_plan_number(&ctl, "khugepaged/scan_sleep_millisecs", optarg, 0) <
			       0;
			break;
		case OPT_THP_KHUGEPAGED_ALLOC_SLEEP:
			bad |= ha_plan_number(&ctl, "khugepaged/alloc_sleep_millisecs", optarg, 0) <
			       0;
			break;
		case OPT_SET_MIN_FREE_KBYTES:
			ha_plan_simple(&ctl, HA_MIN_FREE_KBYTES, NULL, NULL,
				       "--set-recommended-min_free_kbytes");
			break;
		case OPT_SET_SHMMAX:
			ha_plan_simple(&ctl, HA_SHMMAX, NULL, NULL, "--set-recommended-shmmax");
			break;
		case OPT_SET_SHM_GROUP:
			bad |= ha_plan_shm_group(&ctl, optarg) < 0;
			break;
		case OPT_ADD_TEMP_SWAP:
			ctl.temp_swap =
				optarg ? parse_count(&ctl, "--add-temp-swap", optarg, 1, 1 << 20)
				       : 5;
			bad |= ctl.temp_swap < 0;
			break;
		case OPT_ADD_RAMDISK_SWAP:
			ctl.ramdisk_swap = true;
			break;
		case OPT_PERSIST:
			ctl.persist = true;
			break;
		case OPT_ENABLE_ZONE_MOVABLE:
		case OPT_DISABLE_ZONE_MOVABLE:
			ha_plan_simple(&ctl, HA_ZONE_MOVABLE, NULL, NULL,
				       c == OPT_ENABLE_ZONE_MOVABLE ? "--enable-zone-movable"
								    : "--disable-zone-movable");
			ctl.actions[ctl.n_actions - 1].u = c == OPT_ENABLE_ZONE_MOVABLE;
			break;
		case OPT_CREATE_MOUNTS:
			bad |= ha_plan_mounts(&ctl, "plain", NULL) < 0;
			break;
		case OPT_CREATE_USER_MOUNTS:
			bad |= ha_plan_mounts(&ctl, "user", optarg) < 0;
			break;
		case OPT_CREATE_GROUP_MOUNTS:
			bad |= ha_plan_mounts(&ctl, "group", optarg) < 0;
			break;
		case OPT_CREATE_GLOBAL_MOUNTS:
			bad |= ha_plan_mounts(&ctl, "global", NULL) < 0;
			break;
		case OPT_MAX_SIZE:
		case OPT_MIN_SIZE:
			if (ha_parse_mount_size(optarg, c == OPT_MAX_SIZE ? &ctl.max_size
									  : &ctl.min_size) < 0) {
				ha_msg(&ctl, HA_ERROR, "%s: invalid size for %s", optarg,
				       c == OPT_MAX_SIZE ? "--max-size" : "--min-size");
				bad = true;
			}
			break;
		case OPT_MAX_INODES:
			ctl.max_inodes = parse_count(&ctl, "--max-inodes", optarg, 1, INT32_MAX);
			bad |= ctl.max_inodes < 0;
			break;
		case OPT_UNMOUNT_ALL:
			ha_plan_simple(&ctl, HA_UNMOUNT_ALL, NULL, NULL, "--unmount-all");
			break;
		case OPT_LOCK_TIMEOUT:
			ctl.lock_timeout = parse_count(&ctl, "--lock-timeout", optarg, 0, 86400);
			bad |= ctl.lock_timeout < 0;
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
		default:
			hk_opts_standard(c, opts, &g, usage);
		}
	}
	hk_getopt_fini(&g);

	/* Validate the whole command line before reading or doing anything. */
	if (bad) {
		ha_plan_free(&ctl);
		return HK_EXIT_FAILURE;
	}
	/* "--apply --json FILE": the file may also come after the options. */
	if ((ctl.apply || ctl.check) && !ctl.config_file && optind == argc - 1)
		ctl.config_file = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", hk_prog(), argv[optind]);
		hk_errtryhelp();
	}
	if ((ctl.max_size || ctl.min_size || ctl.max_inodes) && !has_kind(&ctl, HA_MOUNTS)) {
		fprintf(stderr,
			"%s: --max-size, --min-size and --max-inodes work with the "
			"--create-*-mounts options only\n",
			hk_prog());
		hk_errtryhelp();
	}
	if (ctl.per_node && !ctl.pool_list) {
		fprintf(stderr, "%s: --per-node works with --pool-list only\n", hk_prog());
		hk_errtryhelp();
	}
	if ((ctl.apply || ctl.check) &&
	    (ctl.n_actions || any_report(&ctl) || pool_modifiers(&ctl) ||
	     (ctl.check && (ctl.dry_run || ctl.strict)))) {
		fprintf(stderr,
			"%s: --apply takes only --dry-run, --strict, --json, --lock-timeout, "
			"--sysroot and the verbosity options; --check only --json, --sysroot and "
			"the verbosity\n",
			hk_prog());
		hk_errtryhelp();
	}
	if ((ctl.gen_config || ctl.gen_output) && !ctl.generate) {
		fprintf(stderr, "%s: --config and --output work with --generate only\n", hk_prog());
		hk_errtryhelp();
	}
	if (ctl.generate && (ctl.n_actions || ctl.apply || ctl.check || any_report(&ctl) ||
			     ctl.json || ctl.dry_run || ctl.strict || pool_modifiers(&ctl))) {
		fprintf(stderr,
			"%s: --generate takes only --config, --output, --sysroot and the verbosity "
			"options\n",
			hk_prog());
		hk_errtryhelp();
	}
	if (ctl.json && ctl.dry_run && any_report(&ctl)) {
		fprintf(stderr, "%s: --dry-run --json prints the plan of changes, no report\n",
			hk_prog());
		hk_errtryhelp();
	}
	if (ctl.list_text && sysroot) {
		ha_msg(&ctl, HA_ERROR, "--list-shared-text is not supported with --sysroot");
		ha_plan_free(&ctl);
		return HK_EXIT_FAILURE;
	}
	if (!any_report(&ctl) && ctl.n_actions == 0 && !ctl.apply && !ctl.check && !ctl.generate) {
		fprintf(stderr, "%s: no operation specified\n", hk_prog());
		hk_errtryhelp();
	}
	if (!caller_paths_allowed(&ctl, sysroot)) {
		ha_plan_free(&ctl);
		return HK_EXIT_FAILURE;
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
	} else if (ctl.apply || ctl.check) {
		rc = ha_config_run(&ctl);
	} else if (ctl.generate) {
		/* Reads the machine and writes only files of its own: no lock. */
		rc = ha_generate(&ctl);
	} else if (ha_lock(&ctl, &lock_fd) < 0 || ha_plan_validate(&ctl) < 0) {
		/* Validated under the lock: the plan is checked against the state it changes. */
		rc = HK_EXIT_FAILURE;
	} else if (ctl.dry_run && ctl.json) {
		rc = ha_plan_json(&ctl);
	} else {
		ha_dry_run_header(&ctl);
		rc = ha_apply(&ctl);
		/* The reports show the machine as the changes left it. */
		if (rc != HK_EXIT_FAILURE && any_report(&ctl)) {
			int rr = reports_as_caller(&ctl) < 0 ? HK_EXIT_FAILURE
				 : ctl.json		     ? ha_report_json(&ctl)
							     : ha_report_text(&ctl);

			if (rr != HK_EXIT_SUCCESS)
				rc = rr;
		}
	}
	hk_unlock(lock_fd);
	ha_plan_free(&ctl);
	ha_states_free(&ctl.plan_states);
	hk_unref(ctl.ctx);
	return rc;
}
