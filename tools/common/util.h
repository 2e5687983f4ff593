/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "exitcodes.h"

/* Register once in main(): a failed flush of stdout at exit becomes exit 1 (EPIPE excepted). */
void hkt_close_stdout_atexit(void);

/* "Try 'prog --help' for more information." on stderr, then exit(HK_EXIT_FAILURE). */
__attribute__((noreturn)) void hkt_errtryhelp(void);

/*
 * s with each control character (and with backslash, each '\\') written as
 * \ooo, the escapes of the mount table, so that a name read from the system
 * cannot start a line of its own in text output. malloc'd; NULL on ENOMEM.
 */
char *hkt_escape_ctl(const char *s, bool backslash);

/* one when n is 1, else many: "1 item", "2 items", "0 items". */
static inline const char *hkt_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The running program's short name. */
const char *hkt_prog(void);

/*
 * A small streaming JSON writer for the report shapes that do not fit a table
 * (nested arrays). The writer lives in a struct, not in a global.
 */
struct hkt_json {
	FILE *out;
	int depth;
	bool need_comma[16];
};

void hkt_json_init(struct hkt_json *j, FILE *out);

/*
 * The length of the valid UTF-8 sequence at p (1 to 4), or 0 when the byte at
 * p does not start one: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
size_t hkt_utf8_len(const unsigned char *p);
/* key is NULL inside arrays and for the top-level value. */
void hkt_json_open_object(struct hkt_json *j, const char *key);
void hkt_json_close_object(struct hkt_json *j);
void hkt_json_open_array(struct hkt_json *j, const char *key);
void hkt_json_close_array(struct hkt_json *j);
void hkt_json_u64(struct hkt_json *j, const char *key, uint64_t v);
void hkt_json_int(struct hkt_json *j, const char *key, long long v);
void hkt_json_bool(struct hkt_json *j, const char *key, bool v);
void hkt_json_string(struct hkt_json *j, const char *key, const char *s);
void hkt_json_null(struct hkt_json *j, const char *key);
/* After the top-level value: the final newline. */
void hkt_json_end(struct hkt_json *j);
/* A number with the given decimals; NaN and infinities (no JSON form) as null. */
void hkt_json_double(struct hkt_json *j, const char *key, double v, int decimals);
