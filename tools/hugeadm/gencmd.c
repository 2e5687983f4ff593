// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --generate KIND [--config FILE] [--output DIR]: the configuration
 * read, the generator run (generate.c), and only when all is good, its files
 * written: to stdout, or into DIR, each through a new file renamed over the
 * name, so that a reader sees the old file or the new one whole, and after a
 * crash too (both synced).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "generate.h"
#include "hugeadm.h"
#include "tmpfile.h"
#include "util.h"

/* Where hugekit.service finds hugeadm: the installed one. */
#ifndef HK_HUGEADM_PATH
#define HK_HUGEADM_PATH "/usr/bin/hugeadm"
#endif

static const char *const kinds[] = {"boot", "sysctl", "units"};

int ha_generate_check_kind(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i]) == 0)
			return 0;
	return -EINVAL;
}

static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * DIR/NAME, mode 0644, replaced whole: written to a new file that no one
 * else can open or name (O_TMPFILE, or a random name made O_EXCL where the
 * filesystem lacks it), synced, renamed over NAME, the directory synced.
 */
int ha_write_replace(struct hugeadm_ctl *ctl, int dirfd, const char *dir, const char *name,
		     const char *text, size_t len)
{
	struct hkt_tmpfile t;
	int err, rc = hkt_tmpfile_open(&t, dirfd, name, 0644);

	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "%s/%s: cannot create a new file beside it: %s", dir, name,
		       strerror(-rc));
		return rc;
	}
	rc = write_all(t.fd, text, len);
	if (rc == 0 && fchmod(t.fd, 0644) < 0)
		rc = -errno;
	if (rc < 0)
		ha_msg(ctl, HA_ERROR, "%s/%s: writing the new file failed: %s", dir, name,
		       strerror(-rc));
	else if ((rc = hkt_tmpfile_replace(&t, name)) < 0)
		ha_msg(ctl, HA_ERROR, "%s/%s: %s the new file failed: %s", dir, name, t.step,
		       strerror(-rc));
	err = hkt_tmpfile_close(&t);
	if (err < 0 && rc == 0) {
		rc = err;
		ha_msg(ctl, HA_ERROR, "%s/%s: closing the new file failed: %s", dir, name,
		       strerror(-err));
	}
	if (rc == 0)
		ha_msg(ctl, HA_INFO, "wrote %s/%s", dir, name);
	return rc;
}

/* path when absolute, else the working directory's path before it; malloc'd, NULL on error. */
char *ha_absolute(const char *path)
{
	char *cwd, *abs = NULL;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (cwd && asprintf(&abs, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path) < 0)
		abs = NULL;
	free(cwd);
	return abs;
}

/*
 * --output DIR: opened without following a symbolic link anywhere in its
 * path (a relative DIR from the working directory's own path), and (own_only)
 * only when the user running hugeadm owns it and no one else can write to
 * it: then no one else can have put a name there or swap the directory's
 * files. The descriptor, or -1 after one error naming DIR (disp: DIR with
 * control characters escaped; opt: the option, for the message).
 */
int ha_open_dir(struct hugeadm_ctl *ctl, const char *opt, const char *dir, const char *disp,
		bool own_only)
{
	char *path = ha_absolute(dir);
	struct stat st;
	int fd, err;

	if (!path) {
		ha_msg(ctl, HA_ERROR, "%s %s: %s", opt, disp, strerror(errno));
		return -1;
	}
	/* openat2(2), or the walk where it answers ENOSYS (hugekit-metrics.service's sandbox). */
	fd = hk_walk_open(path, O_RDONLY | O_DIRECTORY);
	err = fd < 0 ? -fd : 0;
	free(path);
	if (fd < 0 && err == ELOOP) {
		ha_msg(ctl, HA_ERROR,
		       "%s %s: a symbolic link is in its path: not followed (name the "
		       "directory itself)",
		       opt, disp);
		return -1;
	}
	if (fd < 0 && err == ESTALE) {
		ha_msg(ctl, HA_ERROR, "%s %s: replaced while it was opened: not writing there", opt,
		       disp);
		return -1;
	}
	if (fd < 0) {
		ha_msg(ctl, HA_ERROR, "%s %s: %s", opt, disp, strerror(err));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		ha_msg(ctl, HA_ERROR, "%s %s: %m", opt, disp);
	} else if (!own_only) {
		return fd;
	} else if (st.st_uid != geteuid()) {
		const struct passwd *pw = getpwuid(st.st_uid);
		char *owner = hkt_escape_ctl(pw ? pw->pw_name : "?", true);

		ha_msg(ctl, HA_ERROR,
		       "%s %s: owned by %s (uid %u), not by the user running hugeadm "
		       "(uid %u): not writing there",
		       opt, disp, owner ? owner : "?", (unsigned)st.st_uid, (unsigned)geteuid());
		free(owner);
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ha_msg(ctl, HA_ERROR,
		       "%s %s: writable by %s (mode %04o): they could plant or replace "
		       "its files; name a directory only its owner can write to (mktemp -d)",
		       opt, disp, st.st_mode & S_IWOTH ? "others" : "its group",
		       (unsigned)(st.st_mode & 07777));
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

/*
 * The files made: into the --output directory, else on stdout (boot: its
 * line alone). 0, or what writing a file failed with (said).
 */
static int write_out(struct hugeadm_ctl *ctl, const struct ha_gen_files *out, int dirfd,
		     const char *out_dir)
{
	int rc = 0;

	if (strcmp(ctl->generate, "boot") == 0 && !*out->note)
		ha_msg(ctl, HA_INFO,
		       "nothing to put on the kernel command line: no gigantic pool with a "
		       "minimum and no [boot] setting");
	if (dirfd >= 0) {
		for (size_t i = 0; i < out->n && rc == 0; i++)
			rc = ha_write_replace(ctl, dirfd, out_dir, out->files[i].name,
					      out->files[i].text, strlen(out->files[i].text));
	} else if (strcmp(ctl->generate, "boot") == 0) {
		/* stdout: the parameters alone, for scripts; how to install them aside. */
		if (*out->note) {
			printf("%s\n", out->note);
			if (ctl->verbose >= HA_WARNING) {
				fflush(stdout);
				ha_gen_boot_hint(stderr, "", out->note);
			}
		}
	} else {
		for (size_t i = 0; i < out->n; i++) {
			if (strcmp(ctl->generate, "units") == 0)
				printf("%s# %s\n", i ? "\n" : "", out->files[i].name);
			fputs(out->files[i].text, stdout);
		}
	}
	return rc;
}

int ha_generate(struct hugeadm_ctl *ctl)
{
	struct ha_gen_files out = {0};
	struct hk_config *config = NULL;
	struct ha_gen g = {0};
	char *out_dir = NULL, *config_path = NULL;
	int dirfd = -1, rc;

	/* The directory first: a bad one is said before anything is read. */
	if (ctl->gen_output) {
		out_dir = hkt_escape_ctl(ctl->gen_output, true);
		if (!out_dir) {
			ha_msg(ctl, HA_ERROR, "out of memory");
			return HK_EXIT_FAILURE;
		}
		dirfd = ha_open_dir(ctl, "--output", ctl->gen_output, out_dir, true);
		if (dirfd < 0) {
			free(out_dir);
			return HK_EXIT_FAILURE;
		}
	}
	rc = hk_config_load(ctl->ctx, ctl->gen_config, ha_config_error, ctl, &config);
	if (rc < 0) {
		/* -EINVAL and -ENOENT were reported, each where it is. */
		if (rc != -EINVAL && rc != -ENOENT)
			ha_msg(ctl, HA_ERROR, "cannot read the configuration: %s", strerror(-rc));
		if (dirfd >= 0)
			close(dirfd);
		free(out_dir);
		return HK_EXIT_FAILURE;
	}
	g.ctx = ctl->ctx;
	g.config = config;
	g.hugeadm_path = HK_HUGEADM_PATH;
	if (ctl->gen_config) {
		/* hugekit.service applies the file asked for, by its absolute name (boot's cwd is /). */
		config_path = ha_absolute(ctl->gen_config);
		if (!config_path) {
			ha_msg(ctl, HA_ERROR, "%s: cannot make its absolute name: %m",
			       ctl->gen_config);
			rc = -1;
			goto done;
		}
		g.config_path = config_path;
	}
	g.error = ha_config_error;
	g.data = ctl;
	if (strcmp(ctl->generate, "boot") == 0)
		rc = ha_gen_boot(&g, ctl->gen_output != NULL, &out);
	else if (strcmp(ctl->generate, "sysctl") == 0)
		rc = ha_gen_sysctl(&g, &out);
	else
		rc = ha_gen_units(&g, &out);
	if (rc == -ENOMEM)
		ha_msg(ctl, HA_ERROR, "out of memory");
	if (rc < 0)
		goto done;

	rc = write_out(ctl, &out, dirfd, out_dir);
done:
	free(config_path);
	ha_gen_files_free(&out);
	hk_config_unref(config);
	if (dirfd >= 0)
		close(dirfd);
	free(out_dir);
	return rc < 0 ? HK_EXIT_FAILURE : HK_EXIT_SUCCESS;
}
