// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

int hkt_getopt_init(struct hkt_getopt *g, const struct hkt_opt *opts, const char *prefix)
{
	size_t n = 0, nl = 0, ns = strlen(prefix);
	char *s = g->shortopts;

	while (opts[n].name || opts[n].short_name)
		n++;
	if (n > HKT_OPTS_MAX || ns > HKT_OPTS_PREFIX_MAX) {
		fprintf(stderr, "%s: internal error: an option table of %zu rows (at most %d)\n",
			program_invocation_short_name, n, HKT_OPTS_MAX);
		return -1;
	}
	memcpy(s, prefix, ns);
	for (size_t i = 0; i < n; i++) {
		const struct hkt_opt *o = &opts[i];

		if (o->name) {
			g->longopts[nl].name = o->name;
			/* --list-options takes a listing's name (=table), whatever its row says. */
			g->longopts[nl].has_arg =
				o->id == HK_OPT_LIST_OPTIONS ? optional_argument : (int)o->arg;
			g->longopts[nl].flag = NULL;
			g->longopts[nl].val = o->id;
			nl++;
		}
		if (o->short_name) {
			s[ns++] = (char)o->short_name;
			if (o->arg == HK_ARG_REQUIRED)
				s[ns++] = ':';
			else if (o->arg == HK_ARG_OPTIONAL) {
				s[ns++] = ':';
				s[ns++] = ':';
			}
		}
	}
	g->longopts[nl] = (struct option){0};
	s[ns] = '\0';
	return 0;
}

#define HELP_COLUMN 30

/*
 * --help's one output call: fwrite. A tool's --help is most of its start
 * time, and each stdio or string function touched for the first time costs
 * the process a page fault in libc (printf's family several), so no format
 * strings, putc, fputs or strcspn here (tests/bench/start-bench.sh).
 */
static void put(FILE *out, const char *s, size_t n)
{
	fwrite(s, 1, n, out);
}

static size_t put_str(FILE *out, const char *s)
{
	size_t n = strlen(s);

	put(out, s, n);
	return n;
}

/* n blanks. */
static void pad(FILE *out, size_t n)
{
	static const char blanks[] = "                              ";

	_Static_assert(sizeof(blanks) - 1 == HELP_COLUMN, "a column of blanks");
	put(out, blanks, n < sizeof(blanks) - 1 ? n : sizeof(blanks) - 1);
}

/* One option's left column ("-h, --help", " --heap[=SIZE]"); its width. */
static size_t print_left(FILE *out, const struct hkt_opt *o)
{
	size_t n;

	if (o->short_name) {
		char s[3] = {' ', '-', (char)o->short_name};

		put(out, s, sizeof(s));
		n = sizeof(s);
		if (o->name)
			n += put_str(out, ", --") + put_str(out, o->name);
	} else {
		n = put_str(out, "     --") + put_str(out, o->name);
	}
	if (o->argname) {
		bool eq = o->name && o->arg == HK_ARG_OPTIONAL;

		n += put_str(out, eq ? "[=" : " ") + put_str(out, o->argname);
		if (eq)
			n += put_str(out, "]");
	}
	return n;
}

void hkt_opts_print_help(FILE *out, const struct hkt_opt *opts)
{
	for (const struct hkt_opt *o = opts; o->name || o->short_name; o++) {
		size_t n;

		if (o->flags & HK_OPT_HIDDEN)
			continue;
		n = print_left(out, o);
		if (n >= HELP_COLUMN) {
			put(out, "\n", 1);
			pad(out, HELP_COLUMN);
		} else {
			pad(out, HELP_COLUMN - n);
		}
		/* Continuation lines of the help text line up under the first. */
		for (const char *h = o->help; *h;) {
			const char *e = h;

			while (*e && *e != '\n')
				e++;
			put(out, h, (size_t)(e - h));
			put(out, "\n", 1);
			h = e;
			if (*h == '\n') {
				h++;
				pad(out, HELP_COLUMN);
			}
		}
	}
}

void hkt_opts_print_text(FILE *out, const char *s)
{
	put_str(out, s);
}

void hkt_opts_print_list(FILE *out, const struct hkt_opt *opts)
{
	for (const struct hkt_opt *o = opts; o->name || o->short_name; o++) {
		if (o->flags & HK_OPT_HIDDEN)
			continue;
		if (o->name)
			fprintf(out, "--%s\n", o->name);
		if (o->short_name)
			fprintf(out, "-%c\n", o->short_name);
	}
}

static const char *const arg_kind[] = {
	[HK_ARG_NONE] = "none",
	[HK_ARG_REQUIRED] = "required",
	[HK_ARG_OPTIONAL] = "optional",
};

void hkt_opts_print_table(FILE *out, const struct hkt_opt *opts)
{
	for (const struct hkt_opt *o = opts; o->name || o->short_name; o++) {
		if (o->flags & HK_OPT_HIDDEN)
			continue;
		fprintf(out, "%s\t", o->name ? o->name : "");
		if (o->short_name)
			fputc(o->short_name, out);
		fprintf(out, "\t%s\t%s\t", arg_kind[o->arg], o->argname ? o->argname : "");
		/* The help on one line: its line breaks become blanks. */
		for (const char *h = o->help; *h; h++)
			fputc(*h == '\n' || *h == '\t' ? ' ' : *h, out);
		fputc('\n', out);
	}
}

void hkt_opts_standard(int c, const struct hkt_opt *opts, void (*usage)(void))
{
	switch (c) {
	case 'h':
		usage();
		break;
	case 'V':
		printf("%s from hugekit %s\n", program_invocation_short_name, HK_VERSION);
		exit(0);
	case HK_OPT_LIST_OPTIONS:
		if (!optarg)
			hkt_opts_print_list(stdout, opts);
		else if (!strcmp(optarg, "table"))
			hkt_opts_print_table(stdout, opts);
		else {
			fprintf(stderr, "%s: %s: unknown listing for --list-options (table)\n",
				program_invocation_short_name, optarg);
			exit(1);
		}
		exit(0);
	default:
		break;
	}
	fprintf(stderr, "Try '%s --help' for more information.\n", program_invocation_short_name);
	exit(1);
}

int hkt_getopt_next(struct hkt_getopt *g, int argc, char **argv)
{
	if (argc > 0 && argv[0] != program_invocation_short_name)
		argv[0] = program_invocation_short_name;
	return getopt_long(argc, argv, g->shortopts, g->longopts, NULL);
}
