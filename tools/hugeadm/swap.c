// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Swap while a pool grows (--add-temp-swap, --add-ramdisk-swap): the kernel
 * can push pages out to make room for huge pages. The temporary swap file is
 * created 0600, and removed after the resize, after a failure, and on
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT, unless --persist keeps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hugeadm.h"

#define SWAP_DIR "/var/lib/hugetlbfs/swap/temp"
#define MAX_RAMDISKS 16

struct ha_swap {
	bool file;		    /* a temporary file, else ramdisks */
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
	if (armed) {
		swapoff(armed_path);
		unlink(armed_path);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int run_mkswap(struct hugeadm_ctl *ctl, const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, STDOUT_FILENO);
		execlp("mkswap", "mkswap", path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		ha_msg(ctl, HA_WARNING, "Call to mkswap failed");
		return -1;
	}
	return 0;
}

static int mkdirs(const char *dir)
{
	char buf[sizeof(SWAP_DIR)];

	strcpy(buf, dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0750) < 0 && errno != EEXIST ? -1 : 0;
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

static int add_file(struct hugeadm_ctl *ctl, struct ha_swap *s, uint64_t page_size)
{
	uint64_t bytes = (uint64_t)ctl->temp_swap * page_size;
	int fd;

	s->file = true;
	snprintf(s->path, sizeof(s->path), SWAP_DIR "/swapfile-%ld", (long)getpid());
	if (ctl->dry_run) {
		printf("dd bs=1024 count=%" PRIu64 " if=/dev/zero of=%s\n", bytes / 1024, s->path);
		printf("mkswap %s\nswapon %s\n", s->path, s->path);
		return 0;
	}
	if (mkdirs(SWAP_DIR) < 0) {
		ha_msg(ctl, HA_WARNING, "Unable to create dir %s, error: %m", SWAP_DIR);
		return -1;
	}
	memcpy(armed_path, s->path, sizeof(armed_path));
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		struct sigaction sa = {.sa_handler = on_signal};

		sigemptyset(&sa.sa_mask);
		sigaction(caught[i], &sa, &s->old[caught[i]]);
	}
	armed = 1;
	fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 || fill_zero(fd, bytes) < 0 || close(fd) < 0) {
		ha_msg(ctl, HA_WARNING, "Couldn't write %s: %m", s->path);
		return -1;
	}
	if (run_mkswap(ctl, s->path) < 0)
		return -1;
	if (swapon(s->path, 0) < 0) {
		ha_msg(ctl, HA_WARNING, "swapon on %s failed: %m", s->path);
		return -1;
	}
	ha_msg(ctl, HA_INFO, "swapon %s", s->path);
	return 0;
}

int ha_swap_check_ramdisk(struct hugeadm_ctl *ctl)
{
	if (access("/dev/ram0", F_OK) == 0)
		return 0;
	ha_msg(ctl, HA_ERROR,
	       "--add-ramdisk-swap: there is no /dev/ram0 (load the brd driver: modprobe brd); "
	       "nothing was changed");
	return -1;
}

static int add_ramdisks(struct hugeadm_ctl *ctl, struct ha_swap *s, uint64_t page_size)
{
	uint64_t ram = 0;
	int fd = open("/dev/ram0", O_RDONLY | O_CLOEXEC);
	int count;

	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &ram) < 0 || ram == 0) {
		ha_msg(ctl, HA_WARNING, "cannot read the size of /dev/ram0: %m");
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
		if (ctl->dry_run) {
			printf("mkswap %s\nswapon %s\n", dev, dev);
		} else if (run_mkswap(ctl, dev) < 0 || swapon(dev, 0) < 0) {
			ha_msg(ctl, HA_WARNING, "swapon on %s failed: %m", dev);
			break;
		}
		s->n_ram = i + 1;
	}
	return 0;
}

static void disarm(struct ha_swap *s)
{
	if (!armed)
		return;
	armed = 0;
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		sigaction(caught[i], &s->old[caught[i]], NULL);
}

int ha_swap_add(struct hugeadm_ctl *ctl, uint64_t page_size, struct ha_swap **ret)
{
	struct ha_swap *s = calloc(1, sizeof(*s));

	*ret = s;
	if (!s)
		return -1;
	/* As with libhugetlbfs, swap that cannot be set up only warns: the resize goes on. */
	if (ctl->temp_swap) {
		if (add_file(ctl, s, page_size) < 0) {
			/* Never leave a half-made swap file behind, --persist or not. */
			swapoff(s->path);
			unlink(s->path);
			disarm(s);
			s->file = false;
		}
	} else {
		add_ramdisks(ctl, s, page_size);
	}
	return 0;
}

void ha_swap_remove(struct hugeadm_ctl *ctl, struct ha_swap *s)
{
	if (ctl->persist) {
		if (s->file && !ctl->dry_run)
			ha_msg(ctl, HA_INFO, "%s stays in use (--persist)", s->path);
	} else if (s->file) {
		if (ctl->dry_run) {
			printf("swapoff %s\nrm -f %s\n", s->path, s->path);
		} else {
			if (swapoff(s->path) < 0 && errno != EINVAL)
				ha_msg(ctl, HA_WARNING, "swapoff on %s failed: %m", s->path);
			if (unlink(s->path) < 0 && errno != ENOENT)
				ha_msg(ctl, HA_WARNING, "cannot remove %s: %m", s->path);
		}
	} else {
		for (int i = 0; i < s->n_ram; i++) {
			char dev[32];

			snprintf(dev, sizeof(dev), "/dev/ram%d", i);
			if (ctl->dry_run)
				printf("swapoff %s\n", dev);
			else if (swapoff(dev) < 0)
				ha_msg(ctl, HA_WARNING, "swapoff on %s failed: %m", dev);
		}
	}
	disarm(s);
	free(s);
}
