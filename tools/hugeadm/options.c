// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm's command line as tables. opts[] is the getopt input and the --help
 * text; defs[], keyed by the same ids, says what each option does (its
 * handler, with the handler's data) and which groups it belongs to; rules[]
 * are the checks over the groups given, made in order once the whole command
 * line is read, before anything is read or done.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hugeadm.h"
#include "options.h"
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
	/* --metrics[=FILE] */
	OPT_METRICS,
};

// clang-format off
static const struct hkt_opt opts[] = {
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
	{ "metrics",         0,   HK_ARG_OPTIONAL, OPT_METRICS,         "FILE", "print the huge page state as Prometheus metrics\n(text format), or replace FILE with them\n(node_exporter's textfile directory)", 0 },
	{ "generate",        0,   HK_ARG_REQUIRED, OPT_GENERATE,        "KIND", "write what the configuration needs from the boot:\nboot (kernel parameters), sysctl (a sysctl.d file)\nor units (systemd units)", 0 },
	{ "config",          0,   HK_ARG_REQUIRED, OPT_CONFIG,          "FILE", "with --generate or --metrics: read FILE alone,\nnot /etc/hugekit/hugekit.conf and conf.d/", 0 },
	{ "output",          0,   HK_ARG_REQUIRED, OPT_OUTPUT,          "DIR", "with --generate: write the files into DIR", 0 },
	{ "json",            0,   HK_ARG_NONE,     OPT_JSON,            NULL, "print --pool-list, --page-sizes(-all),\n--list-all-mounts, --list-shared-text, --explain,\n--usage, --pages-needed and --metrics as JSON (sizes\nin bytes); with --dry-run, the plan of writes", 0 },
	{ "sysroot",         0,   HK_ARG_REQUIRED, OPT_SYSROOT,         "DIR", "read and write /proc and /sys under DIR", 0 },
	{ "verbose",         0,   HK_ARG_REQUIRED, OPT_VERBOSE,         "LEVEL", "set the message level (0-99; default 2)", 0 },
	{ NULL,              'v', HK_ARG_NONE,     'v',                 NULL, "raise the message level by one", 0 },
	{ "help",            'h', HK_ARG_NONE,     'h',                 NULL, "display this help", 0 },
	{ "version",         'V', HK_ARG_NONE,     'V',                 NULL, "display version", 0 },
	{ "list-options",    0,   HK_ARG_NONE,     HK_OPT_LIST_OPTIONS,    NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

__attribute__((noreturn)) static void usage(void)
{
	printf("Usage:\n %s [options]\n\n", hkt_prog());
	printf("Report and configure the huge page pools, mounts and settings of the machine.\n\n");
	printf("Options:\n");
	hkt_opts_print_help(stdout, opts);
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

struct ha_optdef;
/* An option's handler: arg is its argument (NULL when none); 0, or -1 after a message. */
typedef int ha_opt_fn(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg);

/*
 * An option's row: its handler and the handler's data. label is the option's
 * name in messages (set_mount_size, set_gen_file, set_config) or plan_simple's
 * label, NULL there when the argument is both the value and the label.
 */
struct ha_optdef {
	int id;		/* the option's id in opts[] */
	unsigned group; /* HA_G_*: what the checks after parsing know it as */
	ha_opt_fn *set;
	size_t field;	   /* set_flag, set_mount_size, set_gen_file, set_config: the ctl field */
	enum ha_kind kind; /* plan_pool, plan_simple */
	const char *knob;  /* plan_simple, plan_number; plan_mounts: the kind of mounts */
	const char *value; /* plan_simple */
	const char *label;
	uint64_t n; /* plan_number: the minimum; plan_simple: the action's u */
	int (*plan)(struct hugeadm_ctl *ctl, const char *arg); /* plan_arg */
};

static void *field_of(const struct ha_cmdline *cl, const struct ha_optdef *d)
{
	return (char *)cl->ctl + d->field;
}

/* Reports, --json, --dry-run and the other switches of struct hugeadm_ctl. */
static int set_flag(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)arg;
	*(bool *)field_of(cl, d) = true;
	return 0;
}

static int plan_pool(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	return ha_plan_pool(cl->ctl, d->kind, arg);
}

static int plan_simple(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	struct hugeadm_ctl *ctl = cl->ctl;
	int rc = ha_plan_simple(ctl, d->kind, d->knob, d->label ? d->value : arg,
				d->label ? d->label : arg);

	ctl->actions[ctl->n_actions - 1].u = d->n;
	return rc;
}

static int plan_number(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	return ha_plan_number(cl->ctl, d->knob, arg, d->n);
}

static int plan_mounts(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	return ha_plan_mounts(cl->ctl, d->knob, arg);
}

/* The planners that take the argument alone (demote, vmemmap, thp size, ...). */
static int plan_arg(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	return d->plan(cl->ctl, arg);
}

static int set_mount_size(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	if (ha_parse_mount_size(arg, field_of(cl, d)) < 0) {
		ha_msg(cl->ctl, HA_ERROR, "%s: invalid size for %s", arg, d->label);
		return -1;
	}
	return 0;
}

static int set_max_inodes(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)d;
	cl->ctl->max_inodes = parse_count(cl->ctl, "--max-inodes", arg, 1, INT32_MAX);
	return cl->ctl->max_inodes < 0 ? -1 : 0;
}

static int set_temp_swap(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)d;
	cl->ctl->temp_swap = arg ? parse_count(cl->ctl, "--add-temp-swap", arg, 1, 1 << 20) : 5;
	return cl->ctl->temp_swap < 0 ? -1 : 0;
}

static int set_lock_timeout(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)d;
	cl->ctl->lock_timeout = parse_count(cl->ctl, "--lock-timeout", arg, 0, 86400);
	return cl->ctl->lock_timeout < 0 ? -1 : 0;
}

static int set_verbose(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)d;
	cl->ctl->verbose = parse_verbose(cl->ctl, arg);
	return 0;
}

static int more_verbose(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)d, (void)arg;
	if (cl->ctl->verbose < 99)
		cl->ctl->verbose++;
	else
		ha_msg(cl->ctl, HA_WARNING, "verbosity must be at most 99");
	return 0;
}

static int set_sysroot(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)d;
	cl->sysroot = arg;
	/* An empty DIR (an unset variable) is a mistake, not the running system. */
	if (!*arg) {
		ha_msg(cl->ctl, HA_ERROR, "--sysroot: the directory is empty");
		return -1;
	}
	return 0;
}

/* --apply [FILE], --check [FILE]: one of them, once. */
static int set_config(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	struct hugeadm_ctl *ctl = cl->ctl;

	if (ctl->apply || ctl->check) {
		fprintf(stderr, "%s: --apply and --check are given once, alone\n", hkt_prog());
		hkt_errtryhelp();
	}
	*(bool *)field_of(cl, d) = true;
	/* --apply FILE as well as --apply=FILE: the next word, unless an option. */
	if (arg)
		ctl->config_file = arg;
	else if (optind < cl->argc && cl->argv[optind][0] != '-')
		ctl->config_file = cl->argv[optind++];
	if (ctl->config_file && !*ctl->config_file) {
		ha_msg(ctl, HA_ERROR, "--%s: the file name is empty", d->label);
		return -1;
	}
	return 0;
}

static int set_generate(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	(void)d;
	if (cl->ctl->generate) {
		fprintf(stderr, "%s: --generate is given once\n", hkt_prog());
		hkt_errtryhelp();
	}
	cl->ctl->generate = arg;
	if (ha_generate_check_kind(arg) < 0) {
		ha_msg(cl->ctl, HA_ERROR, "--generate: '%s' is not boot, sysctl or units", arg);
		return -1;
	}
	return 0;
}

/* --metrics [FILE]: once; FILE also as the next word, unless an option. */
static int set_metrics(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	struct hugeadm_ctl *ctl = cl->ctl;

	(void)d;
	if (ctl->metrics) {
		fprintf(stderr, "%s: --metrics is given once\n", hkt_prog());
		hkt_errtryhelp();
	}
	ctl->metrics = true;
	if (arg)
		ctl->metrics_file = arg;
	else if (optind < cl->argc && cl->argv[optind][0] != '-')
		ctl->metrics_file = cl->argv[optind++];
	if (ctl->metrics_file && !*ctl->metrics_file) {
		ha_msg(ctl, HA_ERROR, "--metrics: the file name is empty");
		return -1;
	}
	return 0;
}

/* --config FILE (of --generate and --metrics), --output DIR (of --generate). */
static int set_gen_file(struct ha_cmdline *cl, const struct ha_optdef *d, const char *arg)
{
	*(const char **)field_of(cl, d) = arg;
	if (!*arg) {
		ha_msg(cl->ctl, HA_ERROR, "--%s: the name is empty", d->label);
		return -1;
	}
	return 0;
}

#define FIELD(name) .field = offsetof(struct hugeadm_ctl, name)
#define ROW(i, g, fn) .id = (i), .group = (g), .set = (fn)
#define SIMPLE(k, kn, v, l) .kind = k, .knob = kn, .value = v, .label = l

/* What each option of opts[] does; -h, -V and --list-options are hkt_opts_standard's. */
// clang-format off
static const struct ha_optdef defs[] = {
	{ ROW(OPT_APPLY, HA_G_APPLY, set_config), FIELD(apply), .label = "apply" },
	{ ROW(OPT_CHECK, HA_G_CHECK, set_config), FIELD(check), .label = "check" },
	/* Changes: each adds an action. */
	{ ROW(OPT_POOL_PAGES_MIN, HA_G_CHANGE, plan_pool), .kind = HA_POOL_MIN },
	{ ROW(OPT_POOL_PAGES_MAX, HA_G_CHANGE, plan_pool), .kind = HA_POOL_MAX },
	{ ROW(OPT_POOL_DEMOTE_SIZE, HA_G_CHANGE, plan_arg), .plan = ha_plan_demote_size },
	{ ROW(OPT_POOL_DEMOTE, HA_G_CHANGE, plan_arg), .plan = ha_plan_demote },
	{ ROW(OPT_VMEMMAP_OPTIMIZE, HA_G_CHANGE, plan_arg), .plan = ha_plan_vmemmap },
	{ ROW(OPT_THP_ALWAYS, HA_G_CHANGE, plan_simple), SIMPLE(HA_THP, "enabled", "always", "--thp-always") },
	{ ROW(OPT_THP_MADVISE, HA_G_CHANGE, plan_simple), SIMPLE(HA_THP, "enabled", "madvise", "--thp-madvise") },
	{ ROW(OPT_THP_NEVER, HA_G_CHANGE, plan_simple), SIMPLE(HA_THP, "enabled", "never", "--thp-never") },
	{ ROW(OPT_THP_DEFRAG, HA_G_CHANGE, plan_simple), SIMPLE(HA_THP, "defrag", NULL, NULL) },
	{ ROW(OPT_THP_SIZE, HA_G_CHANGE, plan_arg), .plan = ha_plan_thp_size },
	{ ROW(OPT_THP_KHUGEPAGED_PAGES, HA_G_CHANGE, plan_number), .knob = "khugepaged/pages_to_scan", .n = 1 },
	{ ROW(OPT_THP_KHUGEPAGED_SCAN_SLEEP, HA_G_CHANGE, plan_number), .knob = "khugepaged/scan_sleep_millisecs" },
	{ ROW(OPT_THP_KHUGEPAGED_ALLOC_SLEEP, HA_G_CHANGE, plan_number), .knob = "khugepaged/alloc_sleep_millisecs" },
	{ ROW(OPT_SET_MIN_FREE_KBYTES, HA_G_CHANGE, plan_simple), SIMPLE(HA_MIN_FREE_KBYTES, NULL, NULL, "--set-recommended-min_free_kbytes") },
	{ ROW(OPT_SET_SHMMAX, HA_G_CHANGE, plan_simple), SIMPLE(HA_SHMMAX, NULL, NULL, "--set-recommended-shmmax") },
	{ ROW(OPT_SET_SHM_GROUP, HA_G_CHANGE, plan_arg), .plan = ha_plan_shm_group },
	{ ROW(OPT_ENABLE_ZONE_MOVABLE, HA_G_CHANGE, plan_simple), SIMPLE(HA_ZONE_MOVABLE, NULL, NULL, "--enable-zone-movable"), .n = 1 },
	{ ROW(OPT_DISABLE_ZONE_MOVABLE, HA_G_CHANGE, plan_simple), SIMPLE(HA_ZONE_MOVABLE, NULL, NULL, "--disable-zone-movable") },
	{ ROW(OPT_CREATE_MOUNTS, HA_G_CHANGE | HA_G_MOUNTS, plan_mounts), .knob = "plain" },
	{ ROW(OPT_CREATE_USER_MOUNTS, HA_G_CHANGE | HA_G_MOUNTS, plan_mounts), .knob = "user" },
	{ ROW(OPT_CREATE_GROUP_MOUNTS, HA_G_CHANGE | HA_G_MOUNTS, plan_mounts), .knob = "group" },
	{ ROW(OPT_CREATE_GLOBAL_MOUNTS, HA_G_CHANGE | HA_G_MOUNTS, plan_mounts), .knob = "global" },
	{ ROW(OPT_UNMOUNT_ALL, HA_G_CHANGE, plan_simple), SIMPLE(HA_UNMOUNT_ALL, NULL, NULL, "--unmount-all") },
	{ ROW(OPT_CLEAN_SHARED_TEXT, HA_G_CHANGE, plan_arg), .plan = ha_plan_clean_text },
	/* Modifiers of the changes. */
	{ ROW(OPT_OBEY_MEMPOLICY, HA_G_POOL_MOD, set_flag), FIELD(obey_mempolicy) },
	{ ROW(OPT_HARD, HA_G_POOL_MOD, set_flag), FIELD(hard) },
	{ ROW(OPT_ADD_TEMP_SWAP, HA_G_POOL_MOD, set_temp_swap) },
	{ ROW(OPT_ADD_RAMDISK_SWAP, HA_G_POOL_MOD, set_flag), FIELD(ramdisk_swap) },
	{ ROW(OPT_PERSIST, HA_G_PERSIST, set_flag), FIELD(persist) },
	{ ROW(OPT_STRICT, HA_G_STRICT, set_flag), FIELD(strict) },
	{ ROW('d', HA_G_DRY_RUN, set_flag), FIELD(dry_run) },
	{ ROW(OPT_MAX_SIZE, HA_G_MOUNT_OPT, set_mount_size), FIELD(max_size), .label = "--max-size" },
	{ ROW(OPT_MIN_SIZE, HA_G_MOUNT_OPT, set_mount_size), FIELD(min_size), .label = "--min-size" },
	{ ROW(OPT_MAX_INODES, HA_G_MOUNT_OPT, set_max_inodes) },
	/* Reports. */
	{ ROW(OPT_LIST_ALL_MOUNTS, HA_G_REPORT, set_flag), FIELD(list_mounts) },
	{ ROW(OPT_POOL_LIST, HA_G_REPORT | HA_G_POOL_LIST, set_flag), FIELD(pool_list) },
	{ ROW(OPT_PER_NODE, HA_G_PER_NODE, set_flag), FIELD(per_node) },
	{ ROW(OPT_PAGE_SIZES, HA_G_REPORT, set_flag), FIELD(page_sizes) },
	{ ROW(OPT_PAGE_SIZES_ALL, HA_G_REPORT, set_flag), FIELD(page_sizes_all) },
	{ ROW(OPT_EXPLAIN, HA_G_REPORT, set_flag), FIELD(explain) },
	{ ROW(OPT_LIST_SHARED_TEXT, HA_G_REPORT | HA_G_LIST_TEXT, set_flag), FIELD(list_text) },
	{ ROW(OPT_USAGE, HA_G_REPORT, set_flag), FIELD(usage) },
	{ ROW(OPT_PAGES_NEEDED, HA_G_REPORT, plan_arg), .plan = ha_plan_pages_needed },
	{ ROW(OPT_JSON, HA_G_JSON, set_flag), FIELD(json) },
	/* --generate and its files. */
	{ ROW(OPT_GENERATE, HA_G_GENERATE, set_generate) },
	{ ROW(OPT_CONFIG, HA_G_CONFIG_OPT, set_gen_file), FIELD(gen_config), .label = "config" },
	{ ROW(OPT_METRICS, HA_G_METRICS, set_metrics) },
	{ ROW(OPT_OUTPUT, HA_G_GEN_FILE, set_gen_file), FIELD(gen_output), .label = "output" },
	/* Common. */
	{ ROW(OPT_SYSROOT, HA_G_SYSROOT, set_sysroot) },
	{ ROW(OPT_LOCK_TIMEOUT, HA_G_COMMON, set_lock_timeout) },
	{ ROW(OPT_VERBOSE, HA_G_COMMON, set_verbose) },
	{ ROW('v', HA_G_COMMON, more_verbose) },
};
// clang-format on

static const char apply_only[] =
	"--apply takes only --dry-run, --strict, --hard, --obey-mempolicy, --add-temp-swap, "
	"--add-ramdisk-swap, --persist, --json, --lock-timeout, --sysroot and the verbosity "
	"options; --check only --json, --sysroot and the verbosity";

/*
 * A check of the options together: it fails a command line that has all the
 * groups of all, none of none and (unless any is 0) one of any.
 */
struct ha_rule {
	unsigned all, none, any;
	bool error; /* an error (hugeadm:ERROR:, exit 1), not a usage error (Try --help) */
	const char *msg;
};

/* In order: the first that fails the command line says why. */
// clang-format off
static const struct ha_rule rules[] = {
	{ HA_G_MOUNT_OPT, HA_G_MOUNTS, 0, false,
	  "--max-size, --min-size and --max-inodes work with the --create-*-mounts options only" },
	{ HA_G_PER_NODE, HA_G_POOL_LIST, 0, false, "--per-node works with --pool-list only" },
	/* --apply: its pool modifiers act on the configuration's pools. */
	{ HA_G_APPLY, 0, HA_G_CHANGE | HA_G_REPORT, false, apply_only },
	{ HA_G_CHECK, 0, HA_G_CHANGE | HA_G_REPORT | HA_G_POOL_MOD | HA_G_DRY_RUN | HA_G_STRICT,
	  false, apply_only },
	{ HA_G_GEN_FILE, HA_G_GENERATE, 0, false, "--output works with --generate only" },
	{ HA_G_CONFIG_OPT, HA_G_GENERATE | HA_G_METRICS, 0, false,
	  "--config works with --generate and --metrics only" },
	{ HA_G_GENERATE, 0, HA_G_CHANGE | HA_G_APPLY | HA_G_CHECK | HA_G_REPORT | HA_G_JSON |
			    HA_G_DRY_RUN | HA_G_STRICT | HA_G_POOL_MOD | HA_G_METRICS, false,
	  "--generate takes only --config, --output, --sysroot and the verbosity options" },
	{ HA_G_METRICS, 0, HA_G_CHANGE | HA_G_APPLY | HA_G_CHECK | HA_G_REPORT | HA_G_DRY_RUN |
			   HA_G_STRICT | HA_G_POOL_MOD | HA_G_PERSIST | HA_G_MOUNT_OPT | HA_G_PER_NODE,
	  false, "--metrics takes only --config, --json, --sysroot and the verbosity options" },
	{ HA_G_JSON | HA_G_DRY_RUN, 0, HA_G_REPORT, false,
	  "--dry-run --json prints the plan of changes, no report" },
	{ HA_G_LIST_TEXT | HA_G_SYSROOT, 0, 0, true,
	  "--list-shared-text is not supported with --sysroot" },
	{ 0, HA_G_CHANGE | HA_G_REPORT | HA_G_APPLY | HA_G_CHECK | HA_G_GENERATE | HA_G_METRICS, 0,
	  false, "no operation specified" },
};
// clang-format on

static const struct ha_optdef *find_def(int id)
{
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (defs[i].id == id)
			return &defs[i];
	return NULL;
}

int ha_options_parse(struct ha_cmdline *cl, int argc, char **argv)
{
	struct hkt_getopt g;
	int c;

	cl->argc = argc;
	cl->argv = argv;
	if (hkt_getopt_init(&g, opts, "+") < 0)
		return -1;
	while ((c = hkt_getopt_next(&g, argc, argv)) != -1) {
		const struct ha_optdef *d = find_def(c);

		if (!d)
			hkt_opts_standard(c, opts, usage);
		cl->given |= d->group;
		cl->bad |= d->set(cl, d, optarg) < 0;
	}
	return cl->bad ? -1 : 0;
}

int ha_options_validate(struct ha_cmdline *cl)
{
	struct hugeadm_ctl *ctl = cl->ctl;

	/* "--apply --json FILE": the file may also come after the options. */
	if ((ctl->apply || ctl->check) && !ctl->config_file && optind == cl->argc - 1)
		ctl->config_file = cl->argv[optind++];
	if (optind < cl->argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", hkt_prog(), cl->argv[optind]);
		hkt_errtryhelp();
	}
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct ha_rule *r = &rules[i];

		if ((cl->given & r->all) != r->all || (cl->given & r->none) ||
		    (r->any && !(cl->given & r->any)))
			continue;
		if (r->error) {
			ha_msg(ctl, HA_ERROR, "%s", r->msg);
			return -1;
		}
		fprintf(stderr, "%s: %s\n", hkt_prog(), r->msg);
		hkt_errtryhelp();
	}
	return 0;
}
