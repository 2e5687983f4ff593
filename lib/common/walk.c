// SPDX-License-Identifier: LGPL-2.1-or-later
/* The symlink-safe walk (walk.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "path.h"
#include "paths.h"
#include "walk.h"

/* Where the walk stands: the names still to go (todo, from p) and the links followed. */
struct state {
	char *todo;
	char *p;
	int links;
};

static int fail(struct hkc_walk *w, enum hkc_walk_problem problem, int error)
{
	w->problem = problem;
	w->error = error;
	return -error;
}

/* "/" COMP appended to the path walked ("" is the root), or ".." takes its last name away. */
static int path_step(char **path, const char *comp)
{
	size_t len = strlen(*path);
	char *p;

	if (!strcmp(comp, "..")) {
		p = strrchr(*path, '/');
		if (p)
			*p = '\0';
	} else if (strcmp(comp, ".")) {
		p = realloc(*path, len + strlen(comp) + 2);
		if (!p)
			return -ENOMEM;
		*path = p;
		p[len] = '/';
		strcpy(p + len + 1, comp);
	}
	return 0;
}

/* A problem with the link COMP in the directory walked: where it is, for the message. */
static int link_problem(struct hkc_walk *w, const char *comp, enum hkc_walk_problem problem,
			int error)
{
	if (asprintf(&w->where, "%s/%s", w->path, comp) < 0)
		w->where = NULL;
	return fail(w, problem, error);
}

/* The link COMP (fd, st) met: its content goes before the rest of the name, from "/" when absolute. */
static int follow(struct hkc_walk *w, struct state *s, int fd, const char *comp, unsigned flags)
{
	char target[PATH_MAX], *todo;
	ssize_t n;

	if (!(flags & HKC_WALK_LINKS) || ++s->links > 40)
		return fail(w, HKC_WALK_FAILED, ELOOP);
	if ((flags & HKC_WALK_ROOT_LINKS) && geteuid() == 0 && w->st.st_uid != 0) {
		w->link_uid = w->st.st_uid;
		return link_problem(w, comp, HKC_WALK_LINK_NOT_ROOTS, EPERM);
	}
	n = readlinkat(fd, "", target, sizeof(target));
	if (n < 0 || (size_t)n == sizeof(target))
		return link_problem(w, comp, HKC_WALK_READLINK, n < 0 ? errno : ENAMETOOLONG);
	todo = malloc((size_t)n + 1 + strlen(s->p) + 1);
	if (!todo)
		return fail(w, HKC_WALK_FAILED, ENOMEM);
	memcpy(todo, target, (size_t)n);
	todo[n] = '/';
	strcpy(todo + n + 1, s->p);
	free(s->todo);
	s->p = s->todo = todo;
	if (*s->p == '/') {
		close(w->dirfd);
		w->dirfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		w->path[0] = '\0';
		if (w->dirfd < 0)
			return fail(w, HKC_WALK_FAILED, errno);
	}
	return 0;
}

/* The next name of s into *comp; true when it is the last. */
static bool next_name(struct state *s, char **comp)
{
	char *next;

	*comp = s->p;
	s->p += strcspn(s->p, "/");
	next = s->p + strspn(s->p, "/");
	if (*s->p)
		*s->p++ = '\0';
	return !*next;
}

static int start(const char *name, struct hkc_walk *w, struct state *s)
{
	s->todo = strdup(name);
	w->path = name[0] == '/' ? strdup("") : getcwd(NULL, 0);
	if (!s->todo || !w->path)
		return fail(w, HKC_WALK_FAILED, errno ? errno : ENOMEM);
	if (!strcmp(w->path, "/"))
		w->path[0] = '\0';
	s->p = s->todo;
	w->dirfd = open(name[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return w->dirfd < 0 ? fail(w, HKC_WALK_FAILED, errno) : 0;
}

/* One name of the walk: 1 when it was the last (w holds it), 0 to go on, or -errno. */
static int step(struct hkc_walk *w, struct state *s, unsigned flags)
{
	char *comp;
	bool last;
	int fd, rc;

	s->p += strspn(s->p, "/");
	if (!*s->p)
		return fail(w, HKC_WALK_FAILED, *s->todo ? EISDIR : ENOENT);
	last = next_name(s, &comp);
	fd = openat(w->dirfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &w->st) < 0) {
		rc = fail(w, HKC_WALK_FAILED, errno);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (S_ISLNK(w->st.st_mode)) {
		rc = follow(w, s, fd, comp, flags);
		close(fd);
		return rc;
	}
	if (last) {
		w->fd = fd;
		w->base = strdup(comp);
		return w->base ? 1 : fail(w, HKC_WALK_FAILED, ENOMEM);
	}
	if (!S_ISDIR(w->st.st_mode) || path_step(&w->path, comp) < 0) {
		close(fd);
		return fail(w, HKC_WALK_FAILED, S_ISDIR(w->st.st_mode) ? ENOMEM : ENOTDIR);
	}
	close(w->dirfd);
	w->dirfd = fd;
	return 0;
}

int hkc_walk(const char *name, unsigned flags, struct hkc_walk *w)
{
	struct state s = {0};
	int rc;

	*w = (struct hkc_walk){.dirfd = -1, .fd = -1};
	if (!name)
		return fail(w, HKC_WALK_FAILED, EINVAL);
	rc = start(name, w, &s);
	while (rc == 0)
		rc = step(w, &s, flags);
	free(s.todo);
	return rc < 0 ? rc : 0;
}

void hkc_walk_fini(struct hkc_walk *w)
{
	const int fds[] = {w->dirfd, w->fd};
	char *const strs[] = {w->path, w->base, w->where};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		free(strs[i]);
	*w = (struct hkc_walk){.dirfd = -1, .fd = -1};
}

/*
 * The walked last name opened with flags: through its O_PATH descriptor's
 * /proc/self/fd link (the very file walked: no name looked up again); where
 * /proc is missing, by its name in the directory walked, held to be the same
 * file. A file swapped in between is never opened in the first way and
 * -ESTALE in the second (a FIFO swapped in can still block that open).
 */
static int reopen(const struct hkc_walk *w, int flags)
{
	char self[64];
	struct stat st;
	int fd;

	snprintf(self, sizeof(self), "/" HK_PROC_SELF_FD "/%d", w->fd);
	fd = open(self, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd < 0 ? -errno : fd;
	fd = openat(w->dirfd, w->base, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || (errno == ENOTDIR && S_ISDIR(w->st.st_mode)) ? -ESTALE
										      : -errno;
	if (fstat(fd, &st) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	if (st.st_dev != w->st.st_dev || st.st_ino != w->st.st_ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* openat2(2) with RESOLVE_NO_SYMLINKS: the descriptor, or -errno (-ENOSYS: missing or filtered). */
static int open_no_symlinks(const char *name, int flags)
{
	struct open_how how = {.flags = (uint64_t)(unsigned)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	long fd;

	if (hkc_path_no_openat2)
		return -ENOSYS;
	do
		fd = syscall(SYS_openat2, AT_FDCWD, name, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : (int)fd;
}

int hkc_walk_open(const char *name, int flags)
{
	struct hkc_walk w;
	size_t len;
	int rc;

	/* Nothing is made here: the walk needs the name to be there. */
	if (!name || (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return -EINVAL;
	rc = open_no_symlinks(name, flags);
	if (rc != -ENOSYS)
		return rc;
	if (name[0] == '/' && name[strspn(name, "/")] == '\0') {
		rc = open("/", flags | O_CLOEXEC);
		return rc < 0 ? -errno : rc;
	}
	rc = hkc_walk(name, 0, &w);
	len = strlen(name);
	/* As an open: "name/" and O_DIRECTORY want a directory. */
	if (rc == 0 && !S_ISDIR(w.st.st_mode) &&
	    ((flags & O_DIRECTORY) || (len && name[len - 1] == '/')))
		rc = -ENOTDIR;
	if (rc == 0)
		rc = reopen(&w, flags);
	hkc_walk_fini(&w);
	return rc;
}

int hkc_walk_dirs(const char *path, hkc_walk_level_fn fn, void *data)
{
	struct state s = {0};
	char *walked = NULL, *comp;
	int dirfd = -1, rc = 0;

	if (!path || path[0] != '/' || !fn)
		return -EINVAL;
	s.p = s.todo = strdup(path);
	walked = strdup("");
	dirfd = s.todo && walked ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dirfd < 0)
		rc = -(s.todo && walked ? errno : ENOMEM);
	while (rc == 0 && *(s.p += strspn(s.p, "/"))) {
		struct hkc_walk_level lv = {.dirfd = dirfd};

		lv.last = next_name(&s, &comp);
		rc = path_step(&walked, comp);
		if (rc < 0)
			break;
		lv.name = comp;
		lv.path = walked;
		lv.fd = openat(dirfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		lv.error = lv.fd < 0 ? errno : 0;
		rc = fn(data, &lv);
		close(dirfd);
		dirfd = rc < 0 ? -1 : rc;
		rc = rc < 0 ? rc : 0;
	}
	free(s.todo);
	free(walked);
	if (rc < 0 && dirfd >= 0)
		close(dirfd);
	return rc < 0 ? rc : dirfd;
}
