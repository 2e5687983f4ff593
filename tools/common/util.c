// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"

const char *hkt_prog(void)
{
	return program_invocation_short_name;
}

static void close_stdout(void)
{
	int err = ferror(stdout);

	if (fflush(stdout) != 0 || err) {
		if (errno == EPIPE && !err)
			_exit(HK_EXIT_SUCCESS);
		fprintf(stderr, "%s: write error: %m\n", hkt_prog());
		_exit(HK_EXIT_FAILURE);
	}
	if (fflush(stderr) != 0)
		_exit(HK_EXIT_FAILURE);
}

void hkt_close_stdout_atexit(void)
{
	/*
	 * Into a pipe or a file, stdout's buffer in place, so that output alone
	 * does not start malloc (a getrandom, two brk and a page of heap at
	 * every --help, tests/bench/start-bench.sh); fully buffered, as stdio's
	 * own would be, and of PIPE_BUF as stdio's is for a pipe (st_blksize):
	 * each flush one write a pipe keeps whole. A terminal keeps stdio's
	 * line-buffered default.
	 */
	static char buf[PIPE_BUF];

	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	atexit(close_stdout);
}

void hkt_errtryhelp(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", hkt_prog());
	exit(HK_EXIT_FAILURE);
}

void hkt_json_init(struct hkt_json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->need_comma[0] = false;
}

size_t hkt_utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0; /* overlong */
	else if (p[0] == 0xed)
		hi = 0x9f; /* surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (p[0] == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/*
 * The bytes of the control character at p, escaped in JSON and in text
 * output, or 0 when there is none: 1 for C0 or DEL, 2 for a C1 control
 * (U+0080 to U+009F, UTF-8 C2 80 to C2 9F: U+009B is CSI to a terminal),
 * 1 for a byte 0x80 to 0x9F that is not part of valid UTF-8 (C1 to a
 * terminal that reads Latin-1).
 */
static size_t ctl_len(const unsigned char *p)
{
	size_t n = hkt_utf8_len(p);

	if (p[0] < 0x20 || p[0] == 0x7f)
		return 1;
	if (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f)
		return 2;
	if (n == 0 && p[0] <= 0x9f)
		return 1;
	return 0;
}

/*
 * A JSON string of any bytes, always valid UTF-8: valid UTF-8 as it is,
 * control characters (C0, DEL, C1) as \n, \t or \u00XX, and each byte that
 * is not part of valid UTF-8 as \u00XX of its value (the byte read as Latin-1).
 */
static void json_escaped(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = hkt_utf8_len(p);

		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (ctl_len(p) == 2)
			fprintf(out, "\\u%04x", p[1]);
		else if (ctl_len(p) || n == 0)
			fprintf(out, "\\u%04x", *p);
		else
			fwrite(p, 1, n, out);
		p += n ? n : 1;
	}
	fputc('"', out);
}

char *hkt_escape_ctl(const char *s, bool backslash)
{
	size_t n = 0;
	char *r, *q;

	/* At most 4 bytes for 1: each byte of a control character, and \\ when asked, as \ooo. */
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += 4;
	r = malloc(n + 1);
	if (!r)
		return NULL;
	q = r;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t c = ctl_len(p);

		if (!c && backslash && *p == '\\')
			c = 1;
		if (!c) {
			/* a character (all of its bytes), or a byte that is not part of one */
			for (size_t k = hkt_utf8_len(p) ? hkt_utf8_len(p) : 1; k; k--)
				*q++ = (char)*p++;
		}
		for (; c; c--)
			q += sprintf(q, "\\%03o", *p++);
	}
	*q = '\0';
	return r;
}

static void json_key(struct hkt_json *j, const char *key)
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

static void json_open(struct hkt_json *j, const char *key, char c)
{
	json_key(j, key);
	fputc(c, j->out);
	if (j->depth + 1 < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])))
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void json_close(struct hkt_json *j, char c)
{
	bool had = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		fprintf(j->out, "\n%*s", 2 * j->depth, "");
	fputc(c, j->out);
}

void hkt_json_open_object(struct hkt_json *j, const char *key)
{
	json_open(j, key, '{');
}

void hkt_json_close_object(struct hkt_json *j)
{
	json_close(j, '}');
}

void hkt_json_open_array(struct hkt_json *j, const char *key)
{
	json_open(j, key, '[');
}

void hkt_json_close_array(struct hkt_json *j)
{
	json_close(j, ']');
}

void hkt_json_u64(struct hkt_json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void hkt_json_int(struct hkt_json *j, const char *key, long long v)
{
	json_key(j, key);
	fprintf(j->out, "%lld", v);
}

void hkt_json_bool(struct hkt_json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->out);
}

void hkt_json_string(struct hkt_json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_escaped(j->out, s);
}

void hkt_json_end(struct hkt_json *j)
{
	fputc('\n', j->out);
}

void hkt_json_null(struct hkt_json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->out);
}

void hkt_json_double(struct hkt_json *j, const char *key, double v, int decimals)
{
	json_key(j, key);
	if (isfinite(v))
		fprintf(j->out, "%.*f", decimals, v);
	else
		fputs("null", j->out);
}
