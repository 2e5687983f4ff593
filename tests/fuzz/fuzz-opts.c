// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Option tables (tools/common/opts.c): a table made from the input goes
 * through hkt_getopt_init, getopt_long over an argv made from the rest of the
 * input, and the --help and --list-options printers.
 * Input: '\n'-separated tokens. The first byte % 8 is the number of options;
 * each option token is SHORT ARGKIND NAME... (SHORT '.' for none, ARGKIND
 * '0', '1', '2' for none, required, optional). The rest is argv.
 */
#include <ctype.h>
#include <getopt.h>

#include "fuzz.h"
#include "opts.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hkt_opt opts[9] = {{0}};
	struct hkt_getopt g;
	char *all, *tok, *save = NULL, *argv[64];
	size_t nopts, n = 0;
	int argc = 0, c;

	if (size == 0)
		return 0;
	nopts = data[0] % 8;
	all = fuzz_str(data + 1, size - 1);
	argv[argc++] = (char *)"fuzz";
	for (tok = strtok_r(all, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		if (n < nopts) {
			struct hkt_opt *o = &opts[n];
			size_t len = strlen(tok);

			o->short_name = len > 0 && isalnum((unsigned char)tok[0]) ? tok[0] : 0;
			o->arg = len > 1 ? (enum hkt_opt_arg)((unsigned char)tok[1] % 3)
					 : HK_ARG_NONE;
			o->name = len > 2 ? tok + 2 : NULL;
			o->id = o->short_name ? o->short_name : HK_OPT_LONG_BASE + (int)n;
			o->argname = o->arg != HK_ARG_NONE ? "ARG" : NULL;
			o->help = len > 3 ? tok + 3 : "";
			o->flags = len > 4 && tok[4] == 'h' ? HK_OPT_HIDDEN : 0;
			if (o->name || o->short_name)
				n++;
			else
				nopts--;
		} else if (argc < (int)(sizeof(argv) / sizeof(argv[0])) - 1) {
			argv[argc++] = tok;
		}
	}
	argv[argc] = NULL;
	if (hkt_getopt_init(&g, opts, "+") < 0)
		abort();
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		bool known = c == '?' || c == ':';

		for (size_t i = 0; i < n; i++)
			known |= opts[i].id == c;
		if (!known)
			abort(); /* getopt returned an id the table does not have */
	}
	hkt_opts_print_help(devnull, opts);
	hkt_opts_print_list(devnull, opts);
	free(all);
	return 0;
}
