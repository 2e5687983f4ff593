// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

int hk_path_init(struct hk_path *p, const char *sysroot)
{
	const char *root = sysroot && *sysroot ? sysroot : "/";
	struct stat a, b;

	p->dry_run = NULL;
	p->dry_run_data = NULL;
	p->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->rootfd < 0)
		return -errno;
	p->root = strdup(root);
	if (!p->root) {
		close(p->rootfd);
		p->rootfd = -1;
		return -ENOMEM;
	}
	/* "Alive" means the tree is the running system's root, however spelled. */
	p->live = fstat(p->rootfd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
		  a.st_ino == b.st_ino;
	return 0;
}

void hk_path_fini(struct hk_path *p)
{
	if (p->rootfd >= 0)
		close(p->rootfd);
	p->rootfd = -1;
	free(p->root);
	p->root = NULL;
}

static int vformat(char *buf, size_t sz, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, sz, fmt, ap);

	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sz)
		return -ENAMETOOLONG;
	/*
	 * Paths are relative to the root. Leading slashes are dropped, all of
	 * them: "//etc" must not turn into an absolute path that openat()
	 * resolves outside the sysroot.
	 */
	size_t skip = strspn(buf, "/");

	if (skip)
		memmove(buf, buf + skip, (size_t)n - skip + 1);
	return 0;
}

static int vopen(const struct hk_path *p, int flags, const char *fmt, va_list ap)
{
	char path[PATH_MAX];
	int fd, rc;

	rc = vformat(path, sizeof(path), fmt, ap);
	if (rc < 0)
		return rc;
	fd = openat(p->rootfd, path, flags | O_CLOEXEC | O_NOCTTY, 0644);
	return fd < 0 ? -errno : fd;
}

int hk_path_openf(const struct hk_path *p, int flags, const char *fmt, ...)
{
	va_list ap;
	int fd;

	va_start(ap, fmt);
	fd = vopen(p, flags, fmt, ap);
	va_end(ap);
	return fd;
}

int hk_path_fopenf(const struct hk_path *p, FILE **ret, const char *fmt, ...)
{
	va_list ap;
	FILE *f;
	int fd;

	va_start(ap, fmt);
	fd = vopen(p, O_RDONLY, fmt, ap);
	va_end(ap);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "re");
	if (!f) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	*ret = f;
	return 0;
}

int hk_path_opendirf(const struct hk_path *p, DIR **ret, const char *fmt, ...)
{
	va_list ap;
	DIR *d;
	int fd;

	va_start(ap, fmt);
	fd = vopen(p, O_RDONLY | O_DIRECTORY, fmt, ap);
	va_end(ap);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	*ret = d;
	return 0;
}

bool hk_path_existsf(const struct hk_path *p, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vformat(path, sizeof(path), fmt, ap);
	va_end(ap);
	return rc == 0 && faccessat(p->rootfd, path, F_OK, 0) == 0;
}

static int read_fd_all(int fd, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			char *nb;

			if (cap > SIZE_MAX / 2) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	if (ret_len)
		*ret_len = len;
	return 0;
}

static int vread_all(const struct hk_path *p, char **ret, size_t *ret_len, const char *fmt,
		     va_list ap)
{
	int fd = vopen(p, O_RDONLY, fmt, ap);
	int rc;

	if (fd < 0)
		return fd;
	rc = read_fd_all(fd, ret, ret_len);
	close(fd);
	return rc;
}

int hk_path_read_allf(const struct hk_path *p, char **ret, size_t *ret_len, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vread_all(p, ret, ret_len, fmt, ap);
	va_end(ap);
	return rc;
}

int hk_path_read_stringf(const struct hk_path *p, char **ret, const char *fmt, ...)
{
	va_list ap;
	char *buf;
	int rc;

	va_start(ap, fmt);
	rc = vread_all(p, &buf, NULL, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return rc;
	buf[strcspn(buf, "\n")] = '\0';
	*ret = buf;
	return 0;
}

int hk_parse_u64_strict(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (end == s || errno)
		return -EINVAL;
	if (*end == '\n')
		end++;
	if (*end != '\0')
		return -EINVAL;
	*ret = (uint64_t)v;
	return 0;
}

int hk_path_read_u64f(const struct hk_path *p, uint64_t *ret, const char *fmt, ...)
{
	va_list ap;
	char *buf;
	int rc;

	va_start(ap, fmt);
	rc = vread_all(p, &buf, NULL, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return rc;
	rc = hk_parse_u64_strict(buf, ret);
	free(buf);
	return rc;
}

static int vwrite(const struct hk_path *p, const char *value, const char *fmt, va_list ap)
{
	size_t len = strlen(value), off = 0;
	int fd, rc = 0;

	if (p->dry_run) {
		char path[PATH_MAX];

		rc = vformat(path + 1, sizeof(path) - 1, fmt, ap);
		if (rc < 0)
			return rc;
		if (faccessat(p->rootfd, path + 1, F_OK, 0) < 0)
			return -errno;
		path[0] = '/';
		p->dry_run(p->dry_run_data, path, value);
		return 0;
	}
	fd = vopen(p, O_WRONLY | O_TRUNC, fmt, ap);
	if (fd < 0)
		return fd;
	while (off < len) {
		ssize_t n = write(fd, value + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0) {
			rc = -EIO;
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int hk_path_write_stringf(const struct hk_path *p, const char *value, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vwrite(p, value, fmt, ap);
	va_end(ap);
	return rc;
}

int hk_path_write_u64f(const struct hk_path *p, uint64_t value, const char *fmt, ...)
{
	char buf[32];
	va_list ap;
	int rc;

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	va_start(ap, fmt);
	rc = vwrite(p, buf, fmt, ap);
	va_end(ap);
	return rc;
}

int hk_kv_find_u64(const char *buf, const char *key, uint64_t *ret)
{
	size_t klen = strlen(key);
	const char *line = buf;

	while (line && *line) {
		const char *s = line, *nl = strchr(line, '\n');

		/* Node meminfo lines start with "Node <n> ". */
		if (strncmp(s, "Node ", 5) == 0) {
			s += 5;
			while (*s >= '0' && *s <= '9')
				s++;
			while (*s == ' ')
				s++;
		}
		if (strncmp(s, key, klen) == 0 && s[klen] == ':') {
			unsigned long long v;
			char *end;

			s += klen + 1;
			while (*s == ' ' || *s == '\t')
				s++;
			if (*s < '0' || *s > '9')
				return -EINVAL;
			errno = 0;
			v = strtoull(s, &end, 10);
			if (errno == ERANGE)
				return -ERANGE;
			if (strncmp(end, " kB", 3) == 0)
				end += 3;
			if (*end != '\n' && *end != '\0')
				return -EINVAL;
			*ret = (uint64_t)v;
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}
