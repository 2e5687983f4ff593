// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

int hkt_getopt_init(struct hkt_getopt *g, const struct hkt_opt *opts, const char *prefix)
{
	size_t n = 0, nl = 0, ns;
	char *s;

	while (opts[n].name || opts[n].short_name)
		n++;
	g->longopts = calloc(n + 1, sizeof(*g->longopts));
	g->shortopts = calloc(strlen(prefix) + 3 * n + 1, 1);
	if (!g->longopts || !g->shortopts) {
		hkt_getopt_fini(g);
		return -1;
	}
	strcpy(g->shortopts, prefix);
	ns = strlen(prefix);
	s = g->shortopts;
	for (size_t i = 0; i < n; i++) {
		const struct hkt_opt *o = &opts[i];

		if (o->name) {
			g->longopts[nl].name = o->name;
			/* --list-options takes a listing's name (=table), whatever its row says. */
			g->longopts[nl].has_arg =
				o->id == HK_OPT_LIST_OPTIONS ? optional_argument : (int)o->arg;
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
	return 0;
}

void hkt_getopt_fini(struct hkt_getopt *g)
{
	free(g->longopts);
	free(g->shortopts);
	g->longopts = NULL;
	g->shortopts = NULL;
}

#define HELP_COLUMN 30

void hkt_opts_print_help(FILE *out, const struct hkt_opt *opts)
{
	for (const struct hkt_opt *o = opts; o->name || o->short_name; o++) {
		char left[128];
		const char *h;
		int n;

		if (o->flags & HK_OPT_HIDDEN)
			continue;
		if (o->short_name && o->name)
			n = snprintf(left, sizeof(left), " -%c, --%s", o->short_name, o->name);
		else if (o->short_name)
			n = snprintf(left, sizeof(left), " -%c", o->short_name);
		else
			n = snprintf(left, sizeof(left), "     --%s", o->name);
		if (o->argname && (size_t)n < sizeof(left)) {
			bool eq = o->name && o->arg == HK_ARG_OPTIONAL;

			snprintf(left + n, sizeof(left) - (size_t)n, eq ? "[=%s]" : " %s",
				 o->argname);
		}
		if (strlen(left) >= HELP_COLUMN) {
			fprintf(out, "%s\n%*s", left, HELP_COLUMN, "");
		} else {
			fprintf(out, "%-*s", HELP_COLUMN, left);
		}
		/* Continuation lines of the help text line up under the first. */
		for (h = o->help; *h;) {
			size_t len = strcspn(h, "\n");

			fprintf(out, "%.*s\n", (int)len, h);
			h += len;
			if (*h == '\n') {
				h++;
				fprintf(out, "%*s", HELP_COLUMN, "");
			}
		}
	}
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

void hkt_opts_standard(int c, const struct hkt_opt *opts, struct hkt_getopt *g, void (*usage)(void))
{
	switch (c) {
	case 'h':
		hkt_getopt_fini(g);
		usage();
		break;
	case 'V':
		hkt_getopt_fini(g);
		printf("%s from hugekit %s\n", program_invocation_short_name, HK_VERSION);
		exit(0);
	case HK_OPT_LIST_OPTIONS:
		hkt_getopt_fini(g);
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
	hkt_getopt_fini(g);
	fprintf(stderr, "Try '%s --help' for more information.\n", program_invocation_short_name);
	exit(1);
}

int hkt_getopt_next(struct hkt_getopt *g, int argc, char **argv)
{
	if (argc > 0 && argv[0] != program_invocation_short_name)
		argv[0] = program_invocation_short_name;
	return getopt_long(argc, argv, g->shortopts, g->longopts, NULL);
}
