/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The harness of the unit tests of hugeadm --generate's generators: a
 * configuration parsed as "t.conf" on a copy of a fixture tree, the
 * generator's files, and the problems it reports, one a line: "LINE:
 * message", or "FILE:LINE: message" where GEN_RUN_FILES is defined as 1
 * before this header. Include after <cmocka.h>, <hugekit/hugekit.h>,
 * "generate.h" and "tree.h".
 */
#pragma once

#include <stdio.h>
#include <string.h>

#ifndef GEN_RUN_FILES
#define GEN_RUN_FILES 0
#endif

static char problems[4096];

static void record(void *data, const char *file, unsigned line, const char *msg)
{
	size_t n = strlen(problems);

	(void)data;
	if (GEN_RUN_FILES)
		snprintf(problems + n, sizeof(problems) - n, "%s:%u: %s\n", file ? file : "-", line,
			 msg);
	else
		snprintf(problems + n, sizeof(problems) - n, "%u: %s\n", line, msg);
}

struct run {
	struct tree t;
	struct hk_config *config;
	struct ha_gen g;
	struct ha_gen_files out;
};

/* text as the configuration "t.conf" on a copy of fixture; the parser must take it. */
static void start(struct run *r, const char *fixture, const char *text)
{
	memset(r, 0, sizeof(*r));
	problems[0] = '\0';
	tree_open(&r->t, fixture);
	assert_int_equal(hk_config_parse_string(r->t.ctx, "t.conf", text, record, NULL, &r->config),
			 0);
	assert_string_equal(problems, "");
	r->g.ctx = r->t.ctx;
	r->g.config = r->config;
	r->g.hugeadm_path = "/usr/bin/hugeadm";
	r->g.error = record;
}

static void finish(struct run *r)
{
	ha_gen_files_free(&r->out);
	hk_config_unref(r->config);
	tree_close(&r->t);
}
