/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers of the libFuzzer targets: the input as a C string, and a scratch
 * --sysroot tree in $TMPDIR whose kernel files the targets fill with the
 * input, so that the readers run as they do on /proc and /sys.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The input up to its first NUL, NUL-terminated (malloc'd). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	return strndup((const char *)data, size);
}

/*
 * Split the input at the first byte sep: *rest is the part after it (or
 * NULL). Both are malloc'd strings, NULs inside cut them short.
 */
static inline char *fuzz_split(const uint8_t *data, size_t size, char sep, char **rest)
{
	const uint8_t *p = memchr(data, sep, size);

	if (!p) {
		*rest = NULL;
		return fuzz_str(data, size);
	}
	*rest = fuzz_str(p + 1, size - (size_t)(p + 1 - data));
	return fuzz_str(data, (size_t)(p - data));
}

/* A message stub's body: format the message, print nothing. */
__attribute__((format(printf, 1, 0))) static inline void fuzz_vformat(const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
}

static char fuzz_root[PATH_MAX];

static int fuzz_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path);
}

static void fuzz_tree_remove(void)
{
	if (fuzz_root[0])
		nftw(fuzz_root, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p root/rel. */
static inline void fuzz_mkdirs(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fuzz_root, rel);
	for (char *s = path + strlen(fuzz_root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	mkdir(path, 0755);
}

/* Write root/rel (its directories are made). */
static inline void fuzz_put(const char *rel, const void *data, size_t size)
{
	char path[PATH_MAX], *dir;
	int fd;

	dir = strdup(rel);
	if (!dir)
		abort();
	if (strrchr(dir, '/')) {
		*strrchr(dir, '/') = '\0';
		fuzz_mkdirs(dir);
	}
	free(dir);
	snprintf(path, sizeof(path), "%s/%s", fuzz_root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) < 0) {
		perror(path);
		abort();
	}
}

static inline void fuzz_put_str(const char *rel, const char *s)
{
	fuzz_put(rel, s, strlen(s));
}

/*
 * A fresh scratch tree, $TMPDIR/hk-fuzz.<pid>; its path is fuzz_root.
 * libFuzzer often ends with _exit(), so the trees of runs that are gone are
 * removed here, and this one at exit where exit() runs.
 */
static inline void fuzz_tree_init(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	d = opendir(tmp);
	while (d && (e = readdir(d))) {
		long pid;
		char *end;

		if (strncmp(e->d_name, "hk-fuzz.", 8) != 0)
			continue;
		pid = strtol(e->d_name + 8, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, e->d_name);
		nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	if (d)
		closedir(d);
	snprintf(fuzz_root, sizeof(fuzz_root), "%s/hk-fuzz.%d", tmp, (int)getpid());
	fuzz_tree_remove();
	if (mkdir(fuzz_root, 0700) < 0) {
		perror(fuzz_root);
		abort();
	}
	atexit(fuzz_tree_remove);
}
