/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One declarative option table per tool. From it come the getopt_long input,
 * the --help text and the hidden --list-options listing that the man page and
 * completion checks compare against.
 */
#pragma once

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

enum hkt_opt_arg {
	HK_ARG_NONE = no_argument,
	HK_ARG_REQUIRED = required_argument,
	HK_ARG_OPTIONAL = optional_argument,
};

enum {
	HK_OPT_HIDDEN = 1 << 0, /* not in --help, --list-options, man page or completion */
};

/* Long-only option ids start here (util-linux style). */
#define HK_OPT_LONG_BASE (CHAR_MAX + 1)
/* The id of every tool's hidden --list-options. */
#define HK_OPT_LIST_OPTIONS (HK_OPT_LONG_BASE + 1000)

struct hkt_opt {
	const char *name;     /* long name, or NULL for a short-only option */
	int short_name;	      /* short option character, or 0 */
	enum hkt_opt_arg arg; /* argument kind */
	int id;		      /* what getopt_long returns */
	const char *argname;  /* shown in --help, e.g. "SIZE" */
	const char *help;     /* one line; "\n" starts a continuation line */
	unsigned flags;
};

/* The most rows one tool's table may hold (hugeadm's has about 60). */
#define HKT_OPTS_MAX 128
/* The longest getopt mode prefix ("+", "-", ":" and combinations). */
#define HKT_OPTS_PREFIX_MAX 3

/*
 * getopt_long's input, held in place: parsing allocates nothing, so a tool
 * that only prints --help or an error never starts malloc (start time).
 */
struct hkt_getopt {
	struct option longopts[HKT_OPTS_MAX + 1];
	char shortopts[HKT_OPTS_PREFIX_MAX + 3 * HKT_OPTS_MAX + 1];
};

/*
 * prefix: getopt mode characters ("+" to stop at the first non-option).
 * -1 with a message when the table or prefix is longer than g holds.
 */
int hkt_getopt_init(struct hkt_getopt *g, const struct hkt_opt *opts, const char *prefix);
/*
 * getopt_long() with g's tables; getopt's own messages ("unrecognized
 * option") name the program by its short name, as every other message does,
 * not by the path it was started with.
 */
int hkt_getopt_next(struct hkt_getopt *g, int argc, char **argv);

/* --help body: the options, aligned. */
void hkt_opts_print_help(FILE *out, const struct hkt_opt *opts);
/* Text of a --help (s as it is), written the way hkt_opts_print_help writes. */
void hkt_opts_print_text(FILE *out, const char *s);
/* Every visible option, one per line ("--pool-list", "-h"), for checks and completions. */
void hkt_opts_print_list(FILE *out, const struct hkt_opt *opts);
/*
 * --list-options=table: every visible option, one per line, five fields
 * separated by tabs: long name, short name, argument ("none", "required" or
 * "optional"), argument name, help on one line (empty fields where there is
 * none). completions/generate.sh makes the zsh and fish completions from it.
 */
void hkt_opts_print_table(FILE *out, const struct hkt_opt *opts);

/*
 * The options every tool shares: -h (usage, which exits), -V, --list-options
 * (or --list-options=table);
 * anything else is a usage error. Never returns.
 */
__attribute__((noreturn)) void hkt_opts_standard(int c, const struct hkt_opt *opts,
						 void (*usage)(void));
