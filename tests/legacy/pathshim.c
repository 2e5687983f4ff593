// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LD_PRELOAD shim for running libhugetlbfs 2.23's tools against a fixture tree
 * (kmod's testsuite/path.c technique): every path under /proc/ or /sys/ that
 * the program opens, lists, stats or tests is looked up under $HK_SHIM_ROOT
 * instead. Only for tests; built without sanitizers so that it can be loaded
 * into programs that have none.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static const char *map(const char *path, char *buf, size_t sz)
{
	const char *root = getenv("HK_SHIM_ROOT");

	if (!root || !path || (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0))
		return path;
	if ((size_t)snprintf(buf, sz, "%s%s", root, path) >= sz)
		return path;
	return buf;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return REAL(open)(map(path, buf, sizeof(buf)), flags, mode);
}

int open64(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	return REAL(open64)(map(path, buf, sizeof(buf)), flags, mode);
}

FILE *fopen(const char *path, const char *mode)
{
	char buf[PATH_MAX];

	return REAL(fopen)(map(path, buf, sizeof(buf)), mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	char buf[PATH_MAX];

	return REAL(fopen64)(map(path, buf, sizeof(buf)), mode);
}

FILE *setmntent(const char *path, const char *mode)
{
	char buf[PATH_MAX];

	return REAL(setmntent)(map(path, buf, sizeof(buf)), mode);
}

DIR *opendir(const char *path)
{
	char buf[PATH_MAX];

	return REAL(opendir)(map(path, buf, sizeof(buf)));
}

int access(const char *path, int mode)
{
	char buf[PATH_MAX];

	return REAL(access)(map(path, buf, sizeof(buf)), mode);
}

int stat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	return REAL(stat)(map(path, buf, sizeof(buf)), st);
}

int lstat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	return REAL(lstat)(map(path, buf, sizeof(buf)), st);
}

int statfs64(const char *path, struct statfs64 *st)
{
	char buf[PATH_MAX];

	return REAL(statfs64)(map(path, buf, sizeof(buf)), st);
}
