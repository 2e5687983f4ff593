/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hugeadm's command line (options.c): one table says what each option does
 * and which group it belongs to; the checks after parsing are rules over the
 * groups given. And the library's log shown as hugeadm's messages (msg.c).
 */
#pragma once

#include <stdbool.h>

#include "hugeadm.h"

/* What an option is, for the checks made once the whole command line is read. */
enum {
	HA_G_CHANGE = 1 << 0,	 /* a change: adds an action */
	HA_G_MOUNTS = 1 << 1,	 /* --create-*-mounts (a change too) */
	HA_G_MOUNT_OPT = 1 << 2, /* --max-size, --min-size, --max-inodes */
	HA_G_REPORT = 1 << 3,	 /* a report, run after the changes */
	HA_G_POOL_LIST = 1 << 4, /* --pool-list (a report too) */
	HA_G_PER_NODE = 1 << 5,	 /* --per-node */
	HA_G_LIST_TEXT = 1 << 6, /* --list-shared-text (a report too) */
	HA_G_POOL_MOD = 1 << 7,	 /* --hard, --obey-mempolicy, --add-temp-swap, --add-ramdisk-swap */
	HA_G_PERSIST = 1 << 8,	 /* --persist: no rule names it (2.23 took it anywhere) */
	HA_G_DRY_RUN = 1 << 9,	 /* -d, --dry-run */
	HA_G_STRICT = 1 << 10,	 /* --strict */
	HA_G_JSON = 1 << 11,	 /* --json */
	HA_G_APPLY = 1 << 12,	 /* --apply */
	HA_G_CHECK = 1 << 13,	 /* --check */
	HA_G_GENERATE = 1 << 14, /* --generate */
	HA_G_GEN_FILE = 1 << 15, /* --output */
	HA_G_SYSROOT = 1 << 16,	 /* --sysroot */
	HA_G_METRICS = 1 << 17,	 /* --metrics */
	HA_G_CONFIG_OPT = 1 << 18, /* --config (of --generate and --metrics) */
	HA_G_COMMON = 0,	   /* --lock-timeout, the verbosity: allowed with anything */
};

struct ha_cmdline {
	struct hugeadm_ctl *ctl;
	int argc;
	char **argv;
	const char *sysroot; /* --sysroot DIR, or NULL */
	unsigned given;	     /* the HA_G_* groups of the options given */
	bool bad;	     /* an option's argument was wrong (said) */
};

/*
 * Parse the command line into cl->ctl through the table: 0, or -1 when an
 * argument was wrong (after the messages). --help, --version and usage errors
 * exit.
 */
int ha_options_parse(struct ha_cmdline *cl, int argc, char **argv);
/*
 * The options together, before anything is read or done: a usage error exits
 * (Try --help); -1 after an error message; else 0.
 */
int ha_options_validate(struct ha_cmdline *cl);

/* msg.c: the library's log shown through ha_msg, at ctl's verbosity (ctl->ctx made). */
void ha_msg_attach(struct hugeadm_ctl *ctl);
