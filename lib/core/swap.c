// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Swap while a pool grows (hk_swap_add_file, hk_swap_add_ramdisks): the
 * kernel can push pages out to make room for huge pages. The temporary swap
 * file is created 0600, and removed by hk_swap_remove() (after the resize, or
 * a failure), and on SIGINT/SIGTERM/SIGHUP/SIGQUIT while it is in use, unless
 * HK_SWAP_PERSIST keeps it.
 *
 * Only a file this run created is ever swapped off or removed: the directory
 * is opened a component at a time (O_NOFOLLOW below /var/lib, each one root's
 * and writable by no one else), the file is created O_EXCL|O_NOFOLLOW, and
 * before removal its name must still lead to the inode created. While in use
 * the file is flock(2)ed. A later run removes the swapfile-<PID> of a run that
 * was killed (the flock is free and PID is not running), after swapoff, and
 * says so. With HK_SWAP_PERSIST the file is renamed swapfile-<PID>.persist
 * (swapfile-<PID>-N.persist where that is taken) before swapon, so later runs leave it alone.
 *
 * Swap that cannot be set up is a warning, as with libhugetlbfs: the resize
 * goes on. Nothing here prints: what happens is logged through the context.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

#define SWAP_DIR "/var/lib/hugetlbfs/swap/temp"
#define SWAP_PREFIX "swapfile-"
#define PERSIST_SUFFIX ".persist"
#define MAX_RAMDISKS 16

struct hk_swap {
	struct hk_ctx *ctx;
	unsigned flags;
	bool file;    /* a temporary file, else ramdisks */
	bool created; /* this run created the file (and holds fd) */
	int dirfd;    /* SWAP_DIR, checked */
	int fd;	      /* the file, flock()ed while in use */
	dev_t dev;    /* what the name must still lead to */
	ino_t ino;
	char name[48];		    /* the file's name in SWAP_DIR */
	char path[128];		    /* the file */
	int n_ram;		    /* ramdisks in use: /dev/ram0 .. */
	struct sigaction old[NSIG]; /* handlers to restore */
};

/* For the signal handler: what to take down if the run is interrupted. */
static volatile sig_atomic_t armed;
static char armed_path[128];

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void on_signal(int sig)
{
	/* Armed only once this run has created the file: it is ours. */
	if (armed) {
		swapoff(armed_path);
		unlink(armed_path);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* mkswap PATH, its output dropped: 0, or -1 after a warning. */
static int run_mkswap(struct hk_ctx *ctx, const char *path)
{
	static const char *const fixed[] = {"/usr/sbin/mkswap", "/sbin/mkswap"};
	/* A setuid or file-capability caller does not run a mkswap its caller's PATH finds. */
	bool secure = getauxval(AT_SECURE) != 0;
	char *const argv[] = {(char *)"mkswap", (char *)path, NULL};
	posix_spawn_file_actions_t fa;
	int status, rc = -1;
	pid_t pid = -1;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	/* The child's standard output (descriptor 1) goes to /dev/null. */
	if (posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) == 0) {
		if (secure) {
			for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && rc != 0; i++)
				rc = posix_spawn(&pid, fixed[i], &fa, NULL, argv, environ);
		} else {
			rc = posix_spawnp(&pid, "mkswap", &fa, NULL, argv, environ);
		}
	}
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		hkl_warn(ctx, "Call to mkswap failed");
		return -1;
	}
	return 0;
}

/* A directory of the swap path: root's, and writable by no one else. */
static int check_dir(struct hk_ctx *ctx, int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		hkl_warn(ctx, "%s: %m", path);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		hkl_warn(ctx,
			 "%s: owned by uid %u, mode %04o: a swap file is only made in a directory "
			 "of root's that no one else can write to",
			 path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

/*
 * SWAP_DIR, created when missing (0755, the last one 0750), opened one
 * component at a time: /var and /lib may be the system's links, the rest is
 * opened O_NOFOLLOW. Returns the directory's fd, or -1 after a warning.
 */
static int open_swap_dir(struct hk_ctx *ctx)
{
	static const char *const parts[] = {"var", "lib", "hugetlbfs", "swap", "temp"};
	const size_t n = sizeof(parts) / sizeof(parts[0]);
	char path[sizeof(SWAP_DIR)] = "";
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < n && fd >= 0; i++) {
		int nfd;

		strcat(strcat(path, "/"), parts[i]);
		if (mkdirat(fd, parts[i], i + 1 == n ? 0750 : 0755) < 0 && errno != EEXIST) {
			hkl_warn(ctx, "Unable to create dir %s, error: %m", path);
			close(fd);
			return -1;
		}
		nfd = openat(fd, parts[i],
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC | (i >= 2 ? O_NOFOLLOW : 0));
		close(fd);
		if (nfd < 0) {
			hkl_warn(ctx, "%s: %s", path,
				 errno == ELOOP || errno == ENOTDIR
					 ? "not a directory (a symbolic link?)"
					 : strerror(errno));
			return -1;
		}
		if (check_dir(ctx, nfd, path) < 0) {
			close(nfd);
			return -1;
		}
		fd = nfd;
	}
	return fd;
}

/* "swapfile-<PID>" exactly: the PID, else 0. */
static pid_t swapfile_pid(const char *name)
{
	const char *d = name + strlen(SWAP_PREFIX);
	long v = 0;

	if (strncmp(name, SWAP_PREFIX, strlen(SWAP_PREFIX)) != 0 || !*d)
		return 0;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' || v > 1L << 31)
			return 0;
		v = v * 10 + (*d - '0');
	}
	return (pid_t)v;
}

/*
 * The swap files of earlier runs that were killed: no run holds their flock
 * and their PID is not running. Each is taken off swap, removed, and named.
 * A file of a running program (another hugeadm, libhugetlbfs's) is left alone.
 */
static void remove_stale(struct hk_ctx *ctx, int dirfd)
{
	int dup_fd = dup(dirfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	while ((de = readdir(d))) {
		pid_t pid = swapfile_pid(de->d_name);
		struct stat st, now;
		char path[sizeof(SWAP_DIR) + 256];
		int fd;

		/* Our own PID's name is not ours either: this run has not created it yet. */
		if (pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
		    flock(fd, LOCK_EX | LOCK_NB) < 0) {
			close(fd);
			continue;
		}
		snprintf(path, sizeof(path), SWAP_DIR "/%s", de->d_name);
		if (swapoff(path) < 0 && errno != EINVAL) {
			hkl_warn(
				ctx,
				"%s is left from a hugeadm run that was killed; swapoff failed: %m",
				path);
		} else if (fstatat(dirfd, de->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
			   now.st_dev == st.st_dev && now.st_ino == st.st_ino &&
			   unlinkat(dirfd, de->d_name, 0) == 0) {
			hkl_warn(
				ctx,
				"removed %s, left by hugeadm run %ld that was killed (swapoff first)",
				path, (long)pid);
		}
		close(fd);
	}
	closedir(d);
}

/* from renamed to, never over a name there: 0, or -1 with errno (EEXIST: taken). */
static int rename_new(int dirfd, const char *from, const char *to)
{
	if (renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A filesystem without RENAME_NOREPLACE: link(2) refuses a name there the same way. */
	if (linkat(dirfd, from, dirfd, to, 0) < 0)
		return -1;
	return unlinkat(dirfd, from, 0);
}

static int fill_zero(int fd, uint64_t bytes)
{
	static const char zero[1 << 16];

	while (bytes) {
		size_t n = bytes < sizeof(zero) ? (size_t)bytes : sizeof(zero);
		ssize_t w = write(fd, zero, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		bytes -= (uint64_t)w;
	}
	return fsync(fd);
}

/* Swap off and remove the file, if its name still leads to the file this run created. */
static void remove_own(struct hk_swap *s)
{
	struct hk_ctx *ctx = s->ctx;
	struct stat now;

	if (!s->created)
		return;
	s->created = false;
	if (fstatat(s->dirfd, s->name, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_dev != s->dev ||
	    now.st_ino != s->ino) {
		hkl_warn(ctx, "%s is no longer the file this run created: left alone", s->path);
	} else {
		if (swapoff(s->path) < 0 && errno != EINVAL)
			hkl_warn(ctx, "swapoff on %s failed: %m", s->path);
		if (unlinkat(s->dirfd, s->name, 0) < 0 && errno != ENOENT)
			hkl_warn(ctx, "cannot remove %s: %m", s->path);
	}
	close(s->fd);
	s->fd = -1;
}

/*
 * Kept after this run: renamed swapfile-<PID>.persist, a name later runs do
 * not take for a killed run's file; never over a name in use (the swap file
 * of an earlier pool of this run, kept in use, would lose the only name it
 * is known by): then swapfile-<PID>-2.persist, and on. 0, or -1 (said).
 */
static int persist_name(struct hk_ctx *ctx, struct hk_swap *s)
{
	char name[sizeof(s->name)];
	int rc = -1;

	for (int i = 1; rc < 0 && i <= 100; i++) {
		if (i == 1)
			snprintf(name, sizeof(name), SWAP_PREFIX "%ld" PERSIST_SUFFIX,
				 (long)getpid());
		else
			snprintf(name, sizeof(name), SWAP_PREFIX "%ld-%d" PERSIST_SUFFIX,
				 (long)getpid(), i);
		rc = rename_new(s->dirfd, s->name, name);
		if (rc < 0 && errno != EEXIST)
			break;
	}
	if (rc < 0) {
		hkl_warn(ctx, "cannot rename %s to %s: %m", s->path, name);
		return -1;
	}
	memcpy(s->name, name, sizeof(name));
	snprintf(s->path, sizeof(s->path), SWAP_DIR "/%s", s->name);
	armed = 0;
	memcpy(armed_path, s->path, sizeof(armed_path));
	armed = 1;
	return 0;
}

static int add_file(struct hk_swap *s, uint64_t bytes)
{
	struct hk_ctx *ctx = s->ctx;
	struct stat st;

	s->file = true;
	snprintf(s->name, sizeof(s->name), SWAP_PREFIX "%ld", (long)getpid());
	snprintf(s->path, sizeof(s->path), SWAP_DIR "/%s", s->name);
	if (hk_is_dry_run(ctx))
		return 0;
	s->dirfd = open_swap_dir(ctx);
	if (s->dirfd < 0)
		return -1;
	remove_stale(ctx, s->dirfd);
	s->fd = openat(s->dirfd, s->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0) {
		hkl_warn(ctx, "Couldn't create %s: %s", s->path,
			 errno == EEXIST ? "it exists, and this run did not create it: left alone"
					 : strerror(errno));
		return -1;
	}
	/* Created: known by its inode before anything else can fail, so that it is removed. */
	if (fstat(s->fd, &st) < 0) {
		hkl_warn(ctx, "Couldn't write %s: %m", s->path);
		unlinkat(s->dirfd, s->name, 0);
		return -1;
	}
	s->created = true;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	if (flock(s->fd, LOCK_EX | LOCK_NB) < 0) {
		hkl_warn(ctx, "Couldn't write %s: %m", s->path);
		return -1;
	}
	memcpy(armed_path, s->path, sizeof(armed_path));
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		struct sigaction sa = {.sa_handler = on_signal};

		sigemptyset(&sa.sa_mask);
		sigaction(caught[i], &sa, &s->old[caught[i]]);
	}
	armed = 1;
	if (fchmod(s->fd, 0600) < 0 || fill_zero(s->fd, bytes) < 0) {
		hkl_warn(ctx, "Couldn't write %s: %m", s->path);
		return -1;
	}
	if (run_mkswap(ctx, s->path) < 0)
		return -1;
	if (s->flags & HK_SWAP_PERSIST) {
		if (persist_name(ctx, s) < 0)
			return -1;
	}
	if (swapon(s->path, 0) < 0) {
		hkl_warn(ctx, "swapon on %s failed: %m", s->path);
		return -1;
	}
	hkl_info(ctx, "swapon %s", s->path);
	return 0;
}

static int add_ramdisks(struct hk_ctx *ctx, struct hk_swap *s, uint64_t page_size)
{
	uint64_t ram = 0;
	int fd = open("/dev/ram0", O_RDONLY | O_CLOEXEC);
	int count;

	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &ram) < 0 || ram == 0) {
		hkl_warn(ctx, "cannot read the size of /dev/ram0: %m");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	count = (int)(page_size / ram) + 1;
	for (int i = 0; i < count && i < MAX_RAMDISKS; i++) {
		char dev[32];

		snprintf(dev, sizeof(dev), "/dev/ram%d", i);
		if (access(dev, F_OK) != 0)
			break;
		if (hk_is_dry_run(ctx)) {
			/* Nothing made: the caller tells what would be. */
		} else if (run_mkswap(ctx, dev) < 0 || swapon(dev, 0) < 0) {
			hkl_warn(ctx, "swapon on %s failed: %m", dev);
			break;
		}
		s->n_ram = i + 1;
	}
	return 0;
}

static void disarm(struct hk_swap *s)
{
	if (!armed)
		return;
	armed = 0;
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		sigaction(caught[i], &s->old[caught[i]], NULL);
}

/* A new swap object in *ret (NULL first): 0, -EINVAL (bad arguments: amount 0), -ENOMEM. */
static int swap_new(struct hk_ctx *ctx, uint64_t amount, unsigned flags, struct hk_swap **ret)
{
	struct hk_swap *s;

	if (ret)
		*ret = NULL;
	if (!ctx || !ret || !amount || (flags & ~HK_SWAP_PERSIST))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = hk_ref(ctx);
	s->flags = flags;
	s->dirfd = -1;
	s->fd = -1;
	*ret = s;
	return 0;
}

HK_EXPORT int hk_swap_add_file(struct hk_ctx *ctx, uint64_t bytes, unsigned flags,
			       struct hk_swap **ret_swap)
{
	struct hk_swap *s;
	int rc;

	if (ret_swap)
		*ret_swap = NULL;
	/* The signal handlers take down one file: one at a time in a process. */
	rc = armed ? -EBUSY : swap_new(ctx, bytes, flags, ret_swap);
	if (rc < 0)
		return rc;
	s = *ret_swap;
	if (add_file(s, bytes) == 0)
		return 0;
	/* Never leave a half-made swap file behind, kept or not; only ours. */
	remove_own(s);
	disarm(s);
	s->file = false;
	return -EIO;
}

HK_EXPORT int hk_swap_add_ramdisks(struct hk_ctx *ctx, uint64_t page_size, unsigned flags,
				   struct hk_swap **ret_swap)
{
	int rc = swap_new(ctx, page_size, flags, ret_swap);

	if (rc < 0)
		return rc;
	return add_ramdisks(ctx, *ret_swap, page_size) < 0 ? -EIO : 0;
}

HK_EXPORT const char *hk_swap_path(const struct hk_swap *swap)
{
	return swap && swap->file ? swap->path : NULL;
}

HK_EXPORT int hk_swap_ramdisks(const struct hk_swap *swap)
{
	return swap ? swap->n_ram : 0;
}

HK_EXPORT void hk_swap_remove(struct hk_swap *s)
{
	struct hk_ctx *ctx;

	if (!s)
		return;
	ctx = s->ctx;
	if (s->flags & HK_SWAP_PERSIST) {
		if (s->file && !hk_is_dry_run(ctx))
			hkl_info(ctx, "%s stays in use (--persist)", s->path);
	} else if (s->file) {
		if (!hk_is_dry_run(ctx))
			remove_own(s);
	} else {
		for (int i = 0; i < s->n_ram && !hk_is_dry_run(ctx); i++) {
			char dev[32];

			snprintf(dev, sizeof(dev), "/dev/ram%d", i);
			if (swapoff(dev) < 0)
				hkl_warn(ctx, "swapoff on %s failed: %m", dev);
		}
	}
	disarm(s);
	if (s->fd >= 0)
		close(s->fd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	hk_unref(ctx);
	free(s);
}
