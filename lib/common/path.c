// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "path.h"

/* Symbolic links followed in one lookup, as the kernel's MAXSYMLINKS. */
#define HK_MAX_SYMLINKS 40
/* Directories deep in one lookup of the fallback walk. */
#define HK_MAX_DEPTH 256

bool hkc_path_no_openat2;

/*
 * Fault injection, compiled in only with HK_FAULT_INJECT (the test copies of
 * the tools, such as tests/hugeadm-fault; never the installed programs).
 * HK_FAULT holds rules "OP:PATTERN:WHEN:WHAT" separated by ';':
 *   OP       open, read (a whole-file read), write (one write(2)), close,
 *            dlopen (libhugekit's loading of a library on first use)
 *   PATTERN  fnmatch(3) pattern on the path relative to the root (dlopen:
 *            on the library's SONAME, e.g. libmount.so.1)
 *   WHEN     N (the Nth matching call), N+ (the Nth and every later one), * (all)
 *   WHAT     an errno name (EIO, EACCES, EPERM, ENOSPC, EINVAL, EINTR, ...),
 *            short (a write of at most one byte), or value=TEXT (a read
 *            returns TEXT and a newline instead of the file).
 * Each rule counts its own matching calls. The rule "live" makes a sysroot
 * tree count as the running system (hk_is_live(): pools are read back after
 * each write, as from a kernel) while its lookups still stay inside it.
 * A rule that does not parse aborts.
 */
enum fault_op {
	FAULT_OPEN,
	FAULT_READ,
	FAULT_WRITE,
	FAULT_CLOSE,
	FAULT_DLOPEN
};

struct fault_hit {
	int err;
	bool short_io;
	const char *value;
};

#ifdef HK_FAULT_INJECT
#include <fnmatch.h>

#define HK_FAULT_RULES 16

static struct fault_rule {
	enum fault_op op;
	char pattern[PATH_MAX];
	unsigned long nth, count;
	bool later, every;
	struct fault_hit hit;
	char value[64];
} fault_rules[HK_FAULT_RULES];
static size_t fault_n;
static bool fault_parsed, fault_live;

static const struct {
	const char *name;
	int err;
} fault_errnos[] = {
	{"EIO", EIO},	    {"EACCES", EACCES}, {"EPERM", EPERM},   {"ENOSPC", ENOSPC},
	{"EINVAL", EINVAL}, {"EINTR", EINTR},	{"EAGAIN", EAGAIN}, {"ENOENT", ENOENT},
	{"EROFS", EROFS},   {"EBUSY", EBUSY},	{"ENOMEM", ENOMEM}, {"ENXIO", ENXIO},
};

static bool fault_parse_rule(struct fault_rule *r, char *rule)
{
	static const char *const ops[] = {"open", "read", "write", "close", "dlopen"};
	const size_t n_ops = sizeof(ops) / sizeof(ops[0]);
	char *f[4], *end;
	size_t i;

	for (i = 0; i < 4; i++) {
		f[i] = strsep(&rule, ":");
		if (!f[i])
			return false;
	}
	if (rule)
		return false;
	for (i = 0; i < n_ops && strcmp(f[0], ops[i]); i++)
		;
	if (i == n_ops || strlen(f[1]) >= sizeof(r->pattern))
		return false;
	r->op = (enum fault_op)i;
	strcpy(r->pattern, f[1] + strspn(f[1], "/"));
	if (strcmp(f[2], "*") == 0) {
		r->every = true;
	} else {
		r->nth = strtoul(f[2], &end, 10);
		r->later = *end == '+';
		if (end == f[2] || r->nth == 0 || end[r->later] != '\0')
			return false;
	}
	if (strcmp(f[3], "short") == 0) {
		r->hit.short_io = true;
		return true;
	}
	if (strncmp(f[3], "value=", 6) == 0) {
		if (strlen(f[3] + 6) + 2 > sizeof(r->value))
			return false;
		snprintf(r->value, sizeof(r->value), "%s\n", f[3] + 6);
		r->hit.value = r->value;
		return true;
	}
	for (i = 0; i < sizeof(fault_errnos) / sizeof(fault_errnos[0]); i++)
		if (strcmp(f[3], fault_errnos[i].name) == 0) {
			r->hit.err = fault_errnos[i].err;
			return true;
		}
	return false;
}

static void fault_parse(void)
{
	const char *env = secure_getenv("HK_FAULT");
	char *copy, *rest, *rule;

	fault_parsed = true;
	if (!env || !*env)
		return;
	copy = strdup(env);
	if (!copy)
		abort();
	rest = copy;
	while ((rule = strsep(&rest, ";"))) {
		if (!*rule)
			continue;
		if (strcmp(rule, "live") == 0) {
			fault_live = true;
			continue;
		}
		if (fault_n == HK_FAULT_RULES || !fault_parse_rule(&fault_rules[fault_n++], rule))
			abort();
	}
	free(copy);
}

static bool fault_check(enum fault_op op, const char *path, struct fault_hit *ret)
{
	if (!fault_parsed)
		fault_parse();
	for (size_t i = 0; i < fault_n; i++) {
		struct fault_rule *r = &fault_rules[i];

		if (r->op != op || fnmatch(r->pattern, path, 0) != 0)
			continue;
		r->count++;
		if (r->every || r->count == r->nth || (r->later && r->count > r->nth)) {
			*ret = r->hit;
			return true;
		}
	}
	return false;
}

static bool fault_as_live(void)
{
	if (!fault_parsed)
		fault_parse();
	return fault_live;
}
#else
static inline bool fault_check(enum fault_op op, const char *path, struct fault_hit *ret)
{
	return false;
}

static inline bool fault_as_live(void)
{
	return false;
}
#endif

/* An errno fault for an open or a close: -errno, or 0. */
static int fault_err(enum fault_op op, const char *path)
{
	struct fault_hit hit;

	return fault_check(op, path, &hit) && hit.err ? -hit.err : 0;
}

int hkc_fault_dlopen(const char *soname)
{
	return fault_err(FAULT_DLOPEN, soname);
}

int hkc_path_init(struct hkc_path *p, const char *sysroot)
{
	const char *root = sysroot ? sysroot : "/";
	struct stat a, b;

	*p = (struct hkc_path){.rootfd = -1};
	/* "" is a mistake (an unset variable), never the running system. */
	if (!*root)
		return -EINVAL;
	p->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->rootfd < 0)
		return -errno;
	p->root = strdup(root);
	if (!p->root) {
		close(p->rootfd);
		p->rootfd = -1;
		return -ENOMEM;
	}
	/* "Alive" means the tree is the running system's root, however spelled
	 * (no sysroot: "/" itself, with no stat to compare). */
	p->live = !sysroot || (fstat(p->rootfd, &a) == 0 && stat("/", &b) == 0 &&
			       a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	p->beneath = !p->live;
	if (fault_as_live())
		p->live = true;
	return 0;
}

void hkc_path_fini(struct hkc_path *p)
{
	if (p->rootfd >= 0)
		close(p->rootfd);
	p->rootfd = -1;
	free(p->root);
	p->root = NULL;
}

void hkc_path_set_log(struct hkc_path *p, hkc_path_log_fn fn, void *data)
{
	p->log = fn;
	p->log_data = data;
}

HK_PRINTF(3, 0) static int vformat(char *buf, size_t sz, const char *fmt, va_list ap)
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
	if (!*buf)
		strcpy(buf, ".");
	return 0;
}

static int open_at(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd;

	do
		fd = openat(dirfd, name, flags, mode);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

/*
 * Without openat2(2) (kernels before 5.6, or a seccomp filter that answers
 * ENOSYS): walk the path one component at a time from the root, each
 * directory opened with O_NOFOLLOW, each symbolic link read and expanded
 * here. An absolute link, or a ".." above the root, leaves the tree: -EXDEV.
 * A link that stays inside the tree is followed, as RESOLVE_BENEATH does.
 * /proc's magic links are never followed: their targets are read as text.
 */
static int walk_beneath(int rootfd, const char *path, int flags, mode_t mode)
{
	char buf[2 * PATH_MAX], link[PATH_MAX], name[NAME_MAX + 1];
	int dirs[HK_MAX_DEPTH];
	size_t depth = 0, len = strlen(path);
	int links = 0, rc;
	char *s = buf;

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (;;) {
		int cur = depth ? dirs[depth - 1] : rootfd;
		size_t n = strcspn(s, "/");
		bool last = s[n + strspn(s + n, "/")] == '\0', dir = last && s[n] == '/';
		ssize_t ln;

		if (n > NAME_MAX) {
			rc = -ENAMETOOLONG;
			break;
		}
		memcpy(name, s, n);
		name[n] = '\0';
		s += n + strspn(s + n, "/");
		if (n == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			if (n == 2) {
				if (depth == 0) {
					rc = -EXDEV;
					break;
				}
				close(dirs[--depth]);
				cur = depth ? dirs[depth - 1] : rootfd;
			}
			if (last) {
				rc = open_at(cur, ".", flags, mode);
				break;
			}
			continue;
		}
		ln = readlinkat(cur, name, link, sizeof(link));
		if (ln >= 0) {
			size_t rest = strlen(s);

			if ((size_t)ln >= sizeof(link) || (size_t)ln + 1 + rest >= sizeof(buf)) {
				rc = -ENAMETOOLONG;
				break;
			}
			if (++links > HK_MAX_SYMLINKS) {
				rc = -ELOOP;
				break;
			}
			if (ln == 0 || link[0] == '/') {
				rc = ln == 0 ? -ENOENT : -EXDEV;
				break;
			}
			/* The link's text takes the place of its name: target + "/" + rest. */
			memmove(buf + ln + 1, s, rest + 1);
			memcpy(buf, link, (size_t)ln);
			buf[ln] = rest || dir ? '/' : '\0';
			s = buf;
			continue;
		}
		if (errno != EINVAL && errno != ENOENT) {
			rc = -errno;
			break;
		}
		if (last) {
			rc = open_at(cur, name, flags | O_NOFOLLOW | (dir ? O_DIRECTORY : 0), mode);
			break;
		}
		if (depth == HK_MAX_DEPTH) {
			rc = -ENAMETOOLONG;
			break;
		}
		rc = open_at(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (rc < 0)
			break;
		dirs[depth++] = rc;
	}
	while (depth)
		close(dirs[--depth]);
	return rc;
}

static int open_beneath(const struct hkc_path *p, const char *path, int flags, mode_t mode)
{
	if (!hkc_path_no_openat2) {
		struct open_how how = {
			.flags = (uint64_t)(unsigned)flags,
			.mode = flags & O_CREAT ? mode : 0,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
		};
		long fd;
		int again = 0;

		/*
		 * EAGAIN: a rename or mount anywhere in the system while a ".."
		 * was resolved, and the kernel could not prove it stayed
		 * beneath; openat2(2) asks the caller to try again.
		 */
		do
			fd = syscall(SYS_openat2, p->rootfd, path, &how, sizeof(how));
		while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++again < 64)));
		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS)
			return -errno;
	}
	return walk_beneath(p->rootfd, path, flags, mode);
}

/*
 * What a tree may hand out: directories and regular files with one link.
 * RESOLVE_BENEATH stops symbolic links, not hard links: a file linked into
 * the tree from the host (nr_hugepages as a second name of a host file)
 * would be read and truncated in place, and a FIFO would block the run.
 * Takes fd; returns it, or -EMLINK/-EINVAL with fd closed.
 */
static int tree_file_ok(const struct hkc_path *p, const char *path, int fd)
{
	const char *why = NULL;
	struct stat st;
	int rc = 0;

	if (fstat(fd, &st) < 0) {
		rc = -errno;
	} else if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
		rc = -EMLINK;
		why = "has more than one name (a hard link can lead out of the tree)";
	} else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		rc = -EINVAL;
		why = "is not a regular file or a directory";
	} else {
		/* Back to blocking I/O for the reads and writes that follow. */
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			rc = -errno;
	}
	if (rc == 0)
		return fd;
	close(fd);
	if (why && p->log) {
		char msg[PATH_MAX + 256];

		snprintf(msg, sizeof(msg), "%s/%s %s: not used", p->root, path, why);
		p->log(p->log_data, msg);
	}
	return rc;
}

static void say_out_of_tree(const struct hkc_path *p, const char *path)
{
	char msg[PATH_MAX + 256];

	if (!p->log)
		return;
	snprintf(msg, sizeof(msg),
		 "%s/%s: a symbolic link on this path leads out of the tree %s; "
		 "nothing outside it is read or written",
		 strcmp(p->root, "/") ? p->root : "", path, p->root);
	p->log(p->log_data, msg);
}

/*
 * Every open of the layer comes here with a relative path. The running
 * system's root is opened with plain openat() (its /proc/self and /sys links
 * are meant to be followed); a sysroot tree never lets a lookup leave it.
 */
static int open_rel(const struct hkc_path *p, const char *path, int flags, mode_t mode)
{
	int fd = fault_err(FAULT_OPEN, path);

	if (fd < 0)
		return fd;
	flags |= O_CLOEXEC;
	if (!(flags & O_PATH))
		flags |= O_NOCTTY;
	/* In a tree, a FIFO must not hang the open: see tree_file_ok(). */
	if (p->beneath && !(flags & O_PATH))
		flags |= O_NONBLOCK;
	fd = p->beneath ? open_beneath(p, path, flags, mode)
			: open_at(p->rootfd, path, flags, mode);
	if (fd >= 0 && p->beneath && !(flags & O_PATH))
		fd = tree_file_ok(p, path, fd);
	if (fd == -EXDEV)
		say_out_of_tree(p, path);
	return fd;
}

HK_PRINTF(3, 0) static int vopen(const struct hkc_path *p, int flags, const char *fmt, va_list ap)
{
	char path[PATH_MAX];
	int rc;

	rc = vformat(path, sizeof(path), fmt, ap);
	if (rc < 0)
		return rc;
	return open_rel(p, path, flags, 0644);
}

int hkc_path_openf(const struct hkc_path *p, int flags, const char *fmt, ...)
{
	va_list ap;
	int fd;

	va_start(ap, fmt);
	fd = vopen(p, flags, fmt, ap);
	va_end(ap);
	return fd;
}

int hkc_path_fopenf(const struct hkc_path *p, FILE **ret, const char *fmt, ...)
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

int hkc_path_opendirf(const struct hkc_path *p, DIR **ret, const char *fmt, ...)
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

/* F_OK through the same lookup as every open: an O_PATH descriptor, closed at once. */
static int exists_rel(const struct hkc_path *p, const char *path)
{
	int fd = open_rel(p, path, O_PATH, 0);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

bool hkc_path_existsf(const struct hkc_path *p, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vformat(path, sizeof(path), fmt, ap);
	va_end(ap);
	return rc == 0 && exists_rel(p, path) == 0;
}

/* mkdirat() (rmdir: unlinkat(AT_REMOVEDIR)) of the path's last name, in its parent as every open finds it. */
HK_PRINTF(4, 0)
static int vdirop(const struct hkc_path *p, bool rmdir, mode_t mode, const char *fmt, va_list ap)
{
	char path[PATH_MAX], *slash;
	const char *name = path;
	int dirfd = p->rootfd, rc;
	size_t len;

	rc = vformat(path, sizeof(path), fmt, ap);
	if (rc < 0)
		return rc;
	rc = fault_err(FAULT_OPEN, path);
	if (rc < 0)
		return rc;
	for (len = strlen(path); len > 1 && path[len - 1] == '/';)
		path[--len] = '\0';
	slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		name = slash + 1;
		dirfd = open_rel(p, path, O_PATH | O_DIRECTORY, 0);
		if (dirfd < 0)
			return dirfd;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		rc = rmdir ? -EINVAL : -EEXIST;
	else if ((rmdir ? unlinkat(dirfd, name, AT_REMOVEDIR) : mkdirat(dirfd, name, mode)) < 0)
		rc = -errno;
	if (slash)
		close(dirfd);
	return rc;
}

int hkc_path_mkdirf(const struct hkc_path *p, mode_t mode, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vdirop(p, false, mode, fmt, ap);
	va_end(ap);
	return rc;
}

int hkc_path_rmdirf(const struct hkc_path *p, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vdirop(p, true, 0, fmt, ap);
	va_end(ap);
	return rc;
}

static int read_fd_all(const char *path, int fd, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	struct fault_hit hit = {0};

	if (!buf)
		return -ENOMEM;
	if (fault_check(FAULT_READ, path, &hit) && hit.value) {
		/* Someone else's write between ours and the read-back. */
		len = strlen(hit.value);
		memcpy(buf, hit.value, len + 1);
		goto done;
	}
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
		if (hit.err) {
			n = -1;
			errno = hit.err;
			hit.err = 0;
		}
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
done:
	buf[len] = '\0';
	*ret = buf;
	if (ret_len)
		*ret_len = len;
	return 0;
}

HK_PRINTF(4, 0)
static int vread_all(const struct hkc_path *p, char **ret, size_t *ret_len, const char *fmt,
		     va_list ap)
{
	char path[PATH_MAX];
	int fd, rc;

	rc = vformat(path, sizeof(path), fmt, ap);
	if (rc < 0)
		return rc;
	fd = open_rel(p, path, O_RDONLY, 0);
	if (fd < 0)
		return fd;
	rc = read_fd_all(path, fd, ret, ret_len);
	close(fd);
	return rc;
}

int hkc_path_read_allf(const struct hkc_path *p, char **ret, size_t *ret_len, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vread_all(p, ret, ret_len, fmt, ap);
	va_end(ap);
	return rc;
}

int hkc_path_read_all_at(const struct hkc_path *p, int dirfd, const char *dirpath, const char *name,
			 char **ret, size_t *ret_len)
{
	char path[PATH_MAX];
	int fd, rc;

	if (strchr(name, '/') ||
	    snprintf(path, sizeof(path), "%s/%s", dirpath, name) >= (int)sizeof(path))
		return -EINVAL;
	fd = fault_err(FAULT_OPEN, path);
	if (fd < 0)
		return fd;
	fd = open_at(dirfd, name,
		     O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | (p->beneath ? O_NONBLOCK : 0),
		     0);
	if (fd == -ELOOP && p->beneath) {
		say_out_of_tree(p, path);
		return -EXDEV;
	}
	if (fd >= 0 && p->beneath)
		fd = tree_file_ok(p, path, fd);
	if (fd < 0)
		return fd;
	rc = read_fd_all(path, fd, ret, ret_len);
	close(fd);
	return rc;
}

int hkc_path_read_stringf(const struct hkc_path *p, char **ret, const char *fmt, ...)
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

int hkc_parse_u64_strict(const char *s, uint64_t *ret)
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

int hkc_path_read_u64f(const struct hkc_path *p, uint64_t *ret, const char *fmt, ...)
{
	va_list ap;
	size_t len;
	char *buf;
	int rc;

	va_start(ap, fmt);
	rc = vread_all(p, &buf, &len, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return rc;
	/* A NUL inside the file ("7\0junk") is not the end of the number. */
	rc = strlen(buf) == len ? hkc_parse_u64_strict(buf, ret) : -EINVAL;
	free(buf);
	return rc;
}

/*
 * close(2) of a file written, as close() answers (-1 and errno); the fault
 * layer's close rule fails it the same way, after the real close.
 */
static int close_write(int fd, const char *rel)
{
	int rc = close(fd), fault = fault_err(FAULT_CLOSE, rel);

	if (rc == 0 && fault < 0) {
		errno = -fault;
		rc = -1;
	}
	return rc;
}

HK_PRINTF(3, 0)
static int vwrite(const struct hkc_path *p, const char *value, const char *fmt, va_list ap)
{
	size_t len = strlen(value), off = 0;
	char path[PATH_MAX + 1];
	int fd, rc;

	/* path[0] is kept for the '/' of the dry run's absolute form. */
	rc = vformat(path + 1, sizeof(path) - 1, fmt, ap);
	if (rc < 0)
		return rc;
	if (p->dry_run) {
		rc = exists_rel(p, path + 1);
		if (rc < 0)
			return rc;
		path[0] = '/';
		p->dry_run(p->dry_run_data, path, value);
		return 0;
	}
	/*
	 * The kernel's files take the value whole or refuse it; O_TRUNC is what
	 * `echo > file` does. A tree's plain files are cut to the new length
	 * only once all of it is written, so a write that fails leaves the old
	 * value there, as the kernel would.
	 */
	fd = open_rel(p, path + 1, p->beneath ? O_WRONLY : O_WRONLY | O_TRUNC, 0);
	if (fd < 0)
		return fd;
	while (off < len) {
		struct fault_hit hit = {0};
		bool faulted = fault_check(FAULT_WRITE, path + 1, &hit);
		ssize_t n;

		if (faulted && hit.err) {
			n = -1;
			errno = hit.err;
		} else {
			n = write(fd, value + off, faulted && hit.short_io ? 1 : len - off);
		}
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
	/* A tree's file is a regular one (tree_file_ok): cut it to what was written. */
	if (rc == 0 && p->beneath && ftruncate(fd, (off_t)len) < 0)
		rc = -errno;
	if (close_write(fd, path + 1) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int hkc_path_write_stringf(const struct hkc_path *p, const char *value, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vwrite(p, value, fmt, ap);
	va_end(ap);
	return rc;
}

int hkc_path_write_u64f(const struct hkc_path *p, uint64_t value, const char *fmt, ...)
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

int hkc_kv_find_u64(const char *buf, const char *key, uint64_t *ret)
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
