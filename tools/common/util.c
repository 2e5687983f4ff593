// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

const char *hk_prog(void)
{
	return program_invocation_short_name;
}

static void close_stdout(void)
{
	int err = ferror(stdout);

	if (fflush(stdout) != 0 || err) {
		if (errno == EPIPE && !err)
			_exit(HK_EXIT_SUCCESS);
		fprintf(stderr, "%s: write error: %m\n", hk_prog());
		_exit(HK_EXIT_FAILURE);
	}
	if (fflush(stderr) != 0)
		_exit(HK_EXIT_FAILURE);
}

void hk_close_stdout_atexit(void)
{
	atexit(close_stdout);
}

void hk_errtryhelp(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", hk_prog());
	exit(HK_EXIT_FAILURE);
}

void hk_json_init(struct hk_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->need_comma[0] = false;
}

static void json_escaped(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void json_key(struct hk_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	if (j->depth > 0)
		fprintf(j->out, "\n%*s", 2 * j->depth, "");
	j->need_comma[j->depth] = true;
	if (key) {
		json_escaped(j->out, key);
		fputs(": ", j->out);
	}
}

static void json_open(struct hk_json *j, const char *key, char c)
{
	json_key(j, key);
	fputc(c, j->out);
	if (j->depth + 1 < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])))
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void json_close(struct hk_json *j, char c)
{
	bool had = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		fprintf(j->out, "\n%*s", 2 * j->depth, "");
	fputc(c, j->out);
}

void hk_json_open_object(struct hk_json *j, const char *key)
{
	json_open(j, key, '{');
}

void hk_json_close_object(struct hk_json *j)
{
	json_close(j, '}');
}

void hk_json_open_array(struct hk_json *j, const char *key)
{
	json_open(j, key, '[');
}

void hk_json_close_array(struct hk_json *j)
{
	json_close(j, ']');
}

void hk_json_u64(struct hk_json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void hk_json_int(struct hk_json *j, const char *key, long long v)
{
	json_key(j, key);
	fprintf(j->out, "%lld", v);
}

void hk_json_bool(struct hk_json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->out);
}

void hk_json_string(struct hk_json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_escaped(j->out, s);
}

void hk_json_end(struct hk_json *j)
{
	fputc('\n', j->out);
}

void hk_json_null(struct hk_json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->out);
}
