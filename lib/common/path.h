/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The path layer: every /proc and /sys access of hugekit goes through here.
 *
 * A path context holds a directory fd for the root of the tree ("/" on a live
 * system, a fixture or dump directory under --sysroot). Every access is an
 * openat() on it with the kernel path minus its leading '/'. Readers are
 * strict (one number, an optional trailing newline, nothing else) and every
 * call returns 0 or -errno.
 */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "paths.h"

#define HK_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* Dry run: instead of writing, the layer hands the absolute path and the value here. */
typedef void (*hk_path_dry_run_fn)(void *data, const char *path, const char *value);

struct hk_path {
	int rootfd;
	char *root; /* "/" or the sysroot directory, as given */
	bool live;  /* true when the root is the running system's "/" */
	hk_path_dry_run_fn dry_run;
	void *dry_run_data;
};

int hk_path_init(struct hk_path *p, const char *sysroot);
void hk_path_fini(struct hk_path *p);

/* Open a file under the root; path is relative ("proc/meminfo"). */
int hk_path_openf(const struct hk_path *p, int flags, const char *fmt, ...) HK_PRINTF(3, 4);
int hk_path_fopenf(const struct hk_path *p, FILE **ret, const char *fmt, ...) HK_PRINTF(3, 4);
int hk_path_opendirf(const struct hk_path *p, DIR **ret, const char *fmt, ...) HK_PRINTF(3, 4);
bool hk_path_existsf(const struct hk_path *p, const char *fmt, ...) HK_PRINTF(2, 3);

/* Whole file into a NUL-terminated malloc'd buffer (any length). */
int hk_path_read_allf(const struct hk_path *p, char **ret, size_t *ret_len, const char *fmt, ...)
	HK_PRINTF(4, 5);
/* First line without its newline. */
int hk_path_read_stringf(const struct hk_path *p, char **ret, const char *fmt, ...) HK_PRINTF(3, 4);
/* One unsigned decimal number, optionally followed by one newline. */
int hk_path_read_u64f(const struct hk_path *p, uint64_t *ret, const char *fmt, ...) HK_PRINTF(3, 4);

/*
 * O_WRONLY|O_TRUNC write of the whole buffer; short writes loop; close() checked.
 * In a dry run nothing is opened for writing: a file that exists is handed to
 * the dry-run function, a missing one is -ENOENT as it would be for real.
 */
int hk_path_write_stringf(const struct hk_path *p, const char *value, const char *fmt, ...)
	HK_PRINTF(3, 4);
int hk_path_write_u64f(const struct hk_path *p, uint64_t value, const char *fmt, ...)
	HK_PRINTF(3, 4);

/* Strict unsigned decimal: digits only, an optional single trailing newline. */
int hk_parse_u64_strict(const char *s, uint64_t *ret);

/*
 * Find "Key:   value [kB]" in a /proc/meminfo-style buffer. The key must start a
 * line (after an optional "Node N " prefix, as in node meminfo files).
 * Returns -ENOENT when the key is absent, -EINVAL when the value is malformed.
 */
int hk_kv_find_u64(const char *buf, const char *key, uint64_t *ret);
