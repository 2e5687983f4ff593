/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <hugekit/hugekit.h>

#include "util.h"

/* libhugetlbfs's verbosity levels: messages at or below the level are shown. */
enum {
	HA_ERROR = 1,
	HA_WARNING = 2,
	HA_INFO = 3,
	HA_DEBUG = 4,
};

/* Exit status of --strict when a pool came up short (and was put back). */
#define HA_EXIT_SHORT 2

/* What a change action does (actions.c's setting_of: what it asks of libhugekit's intent). */
enum ha_kind {
	HA_CLEAN_TEXT,	 /* shared text files; sub: of one user only (uid) */
	HA_UNMOUNT_ALL,	 /* hugeadm's own mounts under /var/lib/hugetlbfs */
	HA_ZONE_MOVABLE, /* u: 1 enable, 0 disable */
	HA_THP,		 /* knob = value, under /sys/kernel/mm/transparent_hugepage */
	HA_VMEMMAP,  /* u: vm.hugetlb_optimize_vmemmap, before pools grow (it acts on new pages) */
	HA_POOL_MIN, /* a --pool-pages-min spec */
	HA_POOL_MAX, /* a --pool-pages-max spec */
	HA_DEMOTE_SIZE, /* size's demote_size = u (bytes); adj_str: the TO part as given */
	HA_DEMOTE,	/* demote amount free pages of size (on each of nodes, when given) */
	HA_MIN_FREE_KBYTES,
	HA_SHMMAX,
	HA_SHM_GROUP, /* u: the gid */
	HA_MOUNTS,    /* one hugetlbfs mount per page size under a base directory */
};

struct ha_action {
	enum ha_kind kind;
	const char *arg; /* the option's argument as given, for messages */
	/* Pools: SIZE|DEFAULT:[+|-]AMOUNT[K|M|G][@NODES] */
	char *size_str;	 /* the SIZE part as given */
	uint64_t size;	 /* resolved page size, in bytes (after validation) */
	char sign;	 /* 0 (absolute), '+' or '-' */
	uint64_t amount; /* pages, or bytes when by_bytes */
	bool by_bytes;	 /* the amount had a K/M/G suffix */
	char *adj_str;	 /* the adjustment part as given */
	int *nodes;	 /* NULL: the whole pool; else the nodes after '@' */
	size_t n_nodes;
	/* THP and sysctls */
	const char *knob;
	const char *value;
	uint64_t u;
	/* Mounts: BASE[/SUB]/pagesize-<N>[KMG]B, owned uid:gid, mode */
	const char *base;
	char *sub;	   /* the user or group directory, or NULL */
	char *owner_label; /* "nobody:root", for the dry-run lines */
	uid_t uid;
	gid_t gid;
	mode_t mode;
	/*
	 * What it resolved to (actions.c): items [first, first + n_items) of
	 * ctl->plan, the writes, mounts and unmounts it makes in the order it
	 * makes them; none for --clean-shared-text and for a setting with
	 * nothing to write (shmmax above the recommendation, no mount to take
	 * down).
	 */
	size_t first, n_items;
};

struct hugeadm_ctl {
	struct hk_ctx *ctx;
	int verbose; /* 0..99, default 2 */
	bool json;
	bool per_node;
	/* Reports, run in libhugetlbfs's fixed order whatever the command line order. */
	bool list_mounts;
	bool pool_list;
	bool page_sizes;
	bool page_sizes_all;
	bool explain;
	bool list_text;	    /* --list-shared-text */
	bool obtain_failed; /* the free page lists could not be read (said once) */
	/* --usage and --pages-needed PID (usage.c) */
	bool usage;
	int pages_needed; /* the pid; 0 when not asked */
	/* Its answer, read before any report is printed (ha_pages_needed_read). */
	struct hk_pages_needed *pn;
	size_t n_pn;
	/*
	 * Changes, validated whole before the first one runs; from validation on
	 * in the order they run (libhugekit's, hk_plan_from_intent).
	 */
	struct ha_action *actions;
	size_t n_actions;
	bool dry_run;
	bool hard;
	bool strict;
	bool obey_mempolicy;
	int temp_swap;	       /* pages of swap to add while a pool grows; 0: none */
	bool ramdisk_swap;     /* swap on /dev/ram* while a pool grows */
	bool persist;	       /* keep that swap afterwards */
	int lock_timeout;      /* seconds */
	const char *dry_quote; /* quoting of the value in the next dry-run line */
	/* Options of the mounts created: 0 or -1 when not given. */
	uint64_t max_size, min_size;
	long max_inodes;
	/* --apply [FILE], --check [FILE]: the configuration (config.c); NULL: the default files */
	bool apply;
	bool check;
	const char *config_file;
	/* --generate KIND [--config FILE] [--output DIR] (gencmd.c); NULL when not given */
	const char *generate;
	const char *gen_config;
	const char *gen_output;
	/* --metrics[=FILE] (metrics.c): FILE, or NULL for stdout */
	bool metrics;
	const char *metrics_file;
	/*
	 * The change options resolved into libhugekit's plan: every write with
	 * its file, value and the option it comes from, in the order they run.
	 * A dry run prints it (2.23's shell lines, or --json), a run applies it
	 * item by item with read-back.
	 */
	struct hk_plan *plan;
	struct hk_pool_plan *pools; /* the pools as the plan leaves them (libhugekit's planner) */
	/* The writes made so far, with what was there before: put back on failure and by --strict. */
	struct hk_run *run;
};

/* "hugeadm:ERROR: ..." and friends on stderr, when the level is enabled. */
void ha_msg(const struct hugeadm_ctl *ctl, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* report.c: each returns an exit code. */
int ha_report_text(struct hugeadm_ctl *ctl);
int ha_report_json(struct hugeadm_ctl *ctl);

/* actions.c: parse an option's argument into an action (0, or -1 after a message). */
struct ha_action *ha_new_action(struct hugeadm_ctl *ctl, enum ha_kind kind, const char *arg);
int ha_plan_pool(struct hugeadm_ctl *ctl, enum ha_kind kind, const char *arg);
int ha_plan_simple(struct hugeadm_ctl *ctl, enum ha_kind kind, const char *knob, const char *value,
		   const char *arg);
int ha_plan_number(struct hugeadm_ctl *ctl, const char *knob, const char *arg, uint64_t min);
int ha_plan_thp_size(struct hugeadm_ctl *ctl, const char *arg);
int ha_plan_shm_group(struct hugeadm_ctl *ctl, const char *arg);
void ha_plan_free(struct hugeadm_ctl *ctl);
/*
 * Check every action against the machine and resolve it into ctl->plan,
 * before anything runs (0, or -1 after a message).
 */
int ha_plan_validate(struct hugeadm_ctl *ctl);
/*
 * --dry-run --json: the plan as one JSON document ("plan": its items, with
 * why each is there; "operations": what acts rather than writes a value:
 * shared text removed, swap added while a pool grows). An exit code.
 */
int ha_plan_json(struct hugeadm_ctl *ctl);
/* The warnings of the settings that resolved to no write (shmmax kept, no zone movable setting). */
void ha_plan_notes(struct hugeadm_ctl *ctl);
/* One item of a plan as a JSON object (config.c): item, path, value, why, file, line. */
void ha_json_plan_item(struct hkt_json *j, const struct hk_plan_item *it);
/* Why an action's items are there: the option as given ("--pool-pages-min 2M:512"). */
const char *ha_action_why(const struct ha_action *a, char *buf, size_t sz);

/*
 * steps.c: before validating changes, check the capability and take the
 * machine-wide lock (nothing to do for reports or a dry run; hk_unlock the fd
 * afterwards); then run the actions, returning an exit code.
 */
int ha_lock(struct hugeadm_ctl *ctl, int *ret_fd);
int ha_apply(struct hugeadm_ctl *ctl);
/* A pool option: the change as libhugekit planned it (false when it planned none). */
bool ha_pool_planned(const struct hugeadm_ctl *ctl, const struct ha_action *a,
		     struct hk_pool_change_plan *ret);
/* Whether a pool option grows a Minimum (the pool's, or a listed node's). */
bool ha_pool_grows(const struct hugeadm_ctl *ctl, const struct ha_action *a);
/* No kernel answers the writes: a dry run, or a --sysroot tree of plain files. */
bool ha_simulated(const struct hugeadm_ctl *ctl);
/* 2.23's warnings when swap is missing or nearly full (a growing pool may need it). */
void ha_check_swap(struct hugeadm_ctl *ctl);

/*
 * The pool of size in ctl->pools, the pools as the plan leaves them (read
 * from the kernel the first time): 0 or -errno.
 */
int ha_pools_load(struct hugeadm_ctl *ctl, uint64_t size);
/* The persistent pages of the pool (HK_NODE_ALL) or of one node; 0 when it has no such node. */
uint64_t ha_pool_min_of(const struct hk_pool *pool, int node);
/*
 * verdict.c: libhugekit's verdict on an option's entry of the intent, said
 * (warnings too): 0 when it was planned, -1 when not (said).
 */
int ha_say_verdict(struct hugeadm_ctl *ctl, const struct ha_action *a,
		   const struct hk_intent_verdict *v);

/* mounts.c: --create-*-mounts and --unmount-all. */
int ha_plan_mounts(struct hugeadm_ctl *ctl, const char *kind, const char *who);
/* Whether --unmount-all was asked (it runs first: the mounts there now do not count). */
bool ha_unmount_all_asked(const struct hugeadm_ctl *ctl);
/*
 * A mounts action's unit, run by libhugekit's executor: what is said before
 * it (a dry run's base directory), and at each of its steps (a mount there
 * already, a dry run's lines; written: the step follows the item's WRITE;
 * 0 goes on).
 */
void ha_mounts_begin(struct hugeadm_ctl *ctl, const struct ha_action *a);
int ha_mount_step(struct hugeadm_ctl *ctl, const struct ha_action *a, const struct hk_run_step *st,
		  bool written);
/*
 * An --unmount-all unit's step, run by libhugekit's executor (HK_PLAN_UNMOUNT):
 * a dry run's umount line, what was taken down; 1 when a mount was left
 * mounted (said), else 0.
 */
int ha_unmount_step(struct hugeadm_ctl *ctl, const struct hk_run_step *st);
/* --max-size, --min-size: 0, or -EINVAL, -EOVERFLOW. */
int ha_parse_mount_size(const char *s, uint64_t *ret);
/* The directory hugeadm's mounts live under. */
#define HA_MOUNT_DIR "/var/lib/hugetlbfs"

/*
 * sharedtext.c: the runtime's files of shared text (HUGETLB_SHARE=1). The
 * list goes into j when it is not NULL (the "shared_text" array), else a table
 * on stdout; 0 or -errno (said).
 */
int ha_list_shared_text(struct hugeadm_ctl *ctl, struct hkt_json *j);
struct hkt_smartcols;
/* libsmartcols, for a table (loaded on first use, lazy.h); NULL after a message. */
const struct hkt_smartcols *ha_smartcols(const struct hugeadm_ctl *ctl);
/* --clean-shared-text[=USER]: 0, or -1 after a message (no such user). */
int ha_plan_clean_text(struct hugeadm_ctl *ctl, const char *user);
/* What a --clean-shared-text unit removed so far. */
struct ha_cleaned {
	size_t files;
	uint64_t pages;
	int errors;
};
/*
 * Its step, run by libhugekit's executor (HK_PLAN_REMOVE): a dry run's rm
 * line, each file removed or not (said, counted); 0 goes on. Said once the
 * unit ends: the files and pages removed; -1 when one could not be.
 */
int ha_clean_step(struct hugeadm_ctl *ctl, const struct hk_run_step *st, struct ha_cleaned *c);
int ha_clean_said(struct hugeadm_ctl *ctl, const struct ha_cleaned *c);

/*
 * usage.c: --usage and --pages-needed, as text or into j (keys "usage",
 * "pages_needed"); 0 or -errno (said).
 */
int ha_plan_pages_needed(struct hugeadm_ctl *ctl, const char *arg);
int ha_usage_report(struct hugeadm_ctl *ctl, struct hkt_json *j);
/* Read the process's answer into ctl (0, or -errno said): before anything is printed. */
int ha_pages_needed_read(struct hugeadm_ctl *ctl);
int ha_pages_needed_report(struct hugeadm_ctl *ctl, struct hkt_json *j);

/*
 * config.c: --apply and --check of the configuration (ctl->config_file or
 * the default files): an exit code (3: --check found differences).
 */
int ha_config_run(struct hugeadm_ctl *ctl);
/* A text dry run's first lines (HUGETLB_VERBOSE='N'), once it is known to be valid. */
void ha_dry_run_header(const struct hugeadm_ctl *ctl);
/* An hk_config_error_fn (data: the ctl): "FILE:LINE: message" as an error. */
void ha_config_error(void *data, const char *file, unsigned line, const char *msg);

/*
 * kernel.c: the newer pool features. --pool-demote-size SIZE:TO, --pool-demote
 * SIZE:N[@NODES] and --vmemmap-optimize on|off parsed (0, or -1 after a
 * message); libhugekit judges and plans them (verdict.c words it).
 */
int ha_plan_demote_size(struct hugeadm_ctl *ctl, const char *arg);
int ha_plan_demote(struct hugeadm_ctl *ctl, const char *arg);
int ha_plan_vmemmap(struct hugeadm_ctl *ctl, const char *arg);
/*
 * A --pool-demote's pages demoted, as libhugekit's executor read them back,
 * said (0, 1 when fewer than asked, or -1 said).
 */
int ha_demote_said(struct hugeadm_ctl *ctl, const struct ha_action *a, uint64_t done);
/* --explain: demote sizes, HVO's state and cost (text; JSON under "explain"). */
void ha_explain_kernel(struct hugeadm_ctl *ctl, struct hk_pool *const *pools, size_t n);
void ha_json_kernel(struct hugeadm_ctl *ctl, struct hkt_json *j);
/* hugetlb_cma: 0 and its bytes, or -ENOENT when not set (or unreadable: said once). */
int ha_hugetlb_cma(struct hugeadm_ctl *ctl, uint64_t *ret);

/*
 * gencmd.c: --generate. The kind is boot, sysctl or units (0, else -EINVAL);
 * ha_generate reads the configuration and writes the files: an exit code.
 */
int ha_generate_check_kind(const char *kind);
int ha_generate(struct hugeadm_ctl *ctl);
/* path when absolute, else the working directory's path before it; malloc'd, NULL on error. */
char *ha_absolute(const char *path);
/*
 * A directory opened without following a symbolic link in its path (and
 * with own_only, only one the user owns and no one else can write to): the
 * descriptor, or -1 after an error that names opt and disp.
 */
int ha_open_dir(struct hugeadm_ctl *ctl, const char *opt, const char *dir, const char *disp,
		bool own_only);
/*
 * dir/name (dirfd) replaced whole by text, mode 0644: a new file no one
 * else can open or name, synced, renamed over name (a link there is
 * replaced, not followed), the directory synced. 0, or -errno (said).
 */
int ha_write_replace(struct hugeadm_ctl *ctl, int dirfd, const char *dir, const char *name,
		     const char *text, size_t len);

/*
 * metrics.c: --metrics[=FILE]: libhugekit's snapshot in Prometheus's text
 * format (or --json), on stdout or replacing FILE whole: an exit code (1
 * also when a part of the state could not be read: the file is written).
 */
int ha_metrics(struct hugeadm_ctl *ctl);

/* swap.c: temporary swap while a pool grows. */
/* The options' swap while a pool grows, given to ctl->run (none in a dry run's JSON): 0 or -errno. */
int ha_run_swap(struct hugeadm_ctl *ctl);
/* A SWAP or UNSWAP step said (a dry run's shell lines): 0, or -1 after an error (the run stops). */
int ha_swap_step(struct hugeadm_ctl *ctl, const struct hk_run_step *st);
int ha_swap_check_ramdisk(struct hugeadm_ctl *ctl);
/* The swap options against the machine (not in a --sysroot tree, a ram disk there): 0, or -1 said. */
int ha_swap_validate(struct hugeadm_ctl *ctl);
/*
 * What ha_check_swap's warnings say, as figures (for --explain --json):
 * SwapTotal and SwapFree in bytes (have_*: read), none (no swap configured:
 * SwapTotal 0 or unreadable) and low (SwapFree no more than one page of the
 * default size).
 */
struct ha_swap_state {
	bool have_total, have_free;
	uint64_t total, free;
	bool none, low;
};
void ha_swap_state(struct hugeadm_ctl *ctl, struct ha_swap_state *s);

/*
 * obtain.c: pages the kernel could give now, and THP effectiveness.
 * ha_obtainable is hk_buddy_obtainable, saying a failure to read (once, and
 * setting obtain_failed) but not a missing file or a gigantic size (-ERANGE).
 */
int ha_obtainable(struct hugeadm_ctl *ctl, uint64_t size, int node, uint64_t *ret);
/* "obtainable": N, or null where it cannot be known. */
void ha_json_obtainable(struct hugeadm_ctl *ctl, struct hkt_json *j, uint64_t size, int node);
/*
 * "how": the boot parameter or CMA that gives a gigantic size; where
 * hugetlb_cma is set, also "cma_obtainable" (CmaFree / size, an estimate).
 */
void ha_json_gigantic_how(struct hugeadm_ctl *ctl, struct hkt_json *j, uint64_t size);
/* --explain: "up to N more pages" per pool, and the THP verdict with its counters. */
void ha_explain_obtainable(struct hugeadm_ctl *ctl, struct hk_pool *const *pools, size_t n);
void ha_explain_thp(struct hugeadm_ctl *ctl);
/* --explain --json: the "thp" object. */
void ha_json_thp(struct hugeadm_ctl *ctl, struct hkt_json *j);
/* Before a grow of need pages (on node, or HK_NODE_ALL): one warning when fewer are obtainable. */
void ha_warn_obtainable(struct hugeadm_ctl *ctl, uint64_t size, int node, uint64_t need);
/*
 * The same for a Minimum (of pool, or of node) going from "from" to "to" pages: its
 * surplus pages become persistent first and need no new page.
 */
void ha_warn_grow(struct hugeadm_ctl *ctl, const struct hk_pool *pool, int node, uint64_t from,
		  uint64_t to);
