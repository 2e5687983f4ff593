/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The path layer: every /proc and /sys access of hugekit goes through here.
 *
 * A path context holds a directory fd for the root of the tree ("/" on a live
 * system, a fixture or dump directory under --sysroot). Every access is an
 * open relative to it with the kernel path minus its leading '/'. Readers are
 * strict (one number, an optional trailing newline, nothing else) and every
 * call returns 0 or -errno.
 *
 * The running system's root is opened with plain openat(): its symbolic links
 * (/proc/self, /sys/devices/...) are meant to be followed. A sysroot tree is
 * never left, for reads, writes, existence checks and dry runs alike: the
 * lookup is openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), or, on kernels
 * without openat2, a walk of the path that opens each directory O_NOFOLLOW
 * and reads each symbolic link itself. A symbolic link that leads out of the
 * tree (an absolute one, or one whose ".." climbs above the root) fails with
 * -EXDEV, and the log function says which path; a link that stays inside the
 * tree is followed (dumps of /sys are full of relative links).
 */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "paths.h"

#define HK_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* Dry run: instead of writing, the layer hands the absolute path and the value here. */
typedef void (*hkc_path_dry_run_fn)(void *data, const char *path, const char *value);
/* Told when a lookup would leave a sysroot tree (the layer itself never prints). */
typedef void (*hkc_path_log_fn)(void *data, const char *msg);

struct hkc_path {
	int rootfd;
	char *root; /* "/" or the sysroot directory, as given */
	bool live;  /* true when the root is the running system's "/" */
	hkc_path_dry_run_fn dry_run;
	void *dry_run_data;
	bool beneath; /* a sysroot tree: no lookup leaves it */
	hkc_path_log_fn log;
	void *log_data;
};

/* sysroot NULL is the running system; "" is -EINVAL, never the running system. */
int hkc_path_init(struct hkc_path *p, const char *sysroot);
void hkc_path_fini(struct hkc_path *p);
void hkc_path_set_log(struct hkc_path *p, hkc_path_log_fn fn, void *data);

/* Tests only: behave as on a kernel without openat2(2) (the fallback walk). */
extern bool hkc_path_no_openat2;

/*
 * Before a library is loaded on first use (lib/core/dl.c): -errno where the
 * test builds' fault injection (HK_FAULT rule "dlopen:SONAME:WHEN:ERRNO") says
 * this load fails, else 0 (always 0 in the installed library).
 */
int hkc_fault_dlopen(const char *soname);

/* Open a file under the root; path is relative ("proc/meminfo"). */
int hkc_path_openf(const struct hkc_path *p, int flags, const char *fmt, ...) HK_PRINTF(3, 4);
int hkc_path_fopenf(const struct hkc_path *p, FILE **ret, const char *fmt, ...) HK_PRINTF(3, 4);
int hkc_path_opendirf(const struct hkc_path *p, DIR **ret, const char *fmt, ...) HK_PRINTF(3, 4);
bool hkc_path_existsf(const struct hkc_path *p, const char *fmt, ...) HK_PRINTF(2, 3);
/* mkdirat() in the path's parent directory, found as every open finds it; -EEXIST as mkdir. */
int hkc_path_mkdirf(const struct hkc_path *p, mode_t mode, const char *fmt, ...) HK_PRINTF(3, 4);
/* The same with unlinkat(AT_REMOVEDIR): an empty directory removed. */
int hkc_path_rmdirf(const struct hkc_path *p, const char *fmt, ...) HK_PRINTF(2, 3);

/* Whole file into a NUL-terminated malloc'd buffer (any length). */
int hkc_path_read_allf(const struct hkc_path *p, char **ret, size_t *ret_len, const char *fmt, ...)
	HK_PRINTF(4, 5);
/*
 * The same, of one file (name: one component, never a symbolic link) in a
 * directory opened with hkc_path_openf() as dirpath: the files of /proc/PID
 * read through one fd of it are one process's, even when the pid is reused.
 */
int hkc_path_read_all_at(const struct hkc_path *p, int dirfd, const char *dirpath, const char *name,
			 char **ret, size_t *ret_len);
/* First line without its newline. */
int hkc_path_read_stringf(const struct hkc_path *p, char **ret, const char *fmt, ...)
	HK_PRINTF(3, 4);
/* One unsigned decimal number, optionally followed by one newline. */
int hkc_path_read_u64f(const struct hkc_path *p, uint64_t *ret, const char *fmt, ...)
	HK_PRINTF(3, 4);

/*
 * O_WRONLY|O_TRUNC write of the whole buffer; short writes loop; close() checked.
 * In a dry run nothing is opened for writing: a file that exists is handed to
 * the dry-run function, a missing one is -ENOENT as it would be for real.
 */
int hkc_path_write_stringf(const struct hkc_path *p, const char *value, const char *fmt, ...)
	HK_PRINTF(3, 4);
int hkc_path_write_u64f(const struct hkc_path *p, uint64_t value, const char *fmt, ...)
	HK_PRINTF(3, 4);

/* Strict unsigned decimal: digits only, an optional single trailing newline. */
int hkc_parse_u64_strict(const char *s, uint64_t *ret);

/*
 * Find "Key:   value [kB]" in a /proc/meminfo-style buffer. The key must start a
 * line (after an optional "Node N " prefix, as in node meminfo files).
 * Returns -ENOENT when the key is absent, -EINVAL when the value is malformed.
 */
int hkc_kv_find_u64(const char *buf, const char *key, uint64_t *ret);
