// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm --generate KIND [--config FILE] [--output DIR]: the configuration
 * read, the generator run (generate.c), and only when all is good, its files
 * written: to stdout, or into DIR, each through a new temporary file renamed
 * over the name, so that a reader sees the old file or the new one whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "generate.h"
#include "hugeadm.h"

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
 * DIR/NAME, by way of a new DIR/.NAME.XXXXXX renamed over it; mode 0644. The
 * temporary file is created (O_EXCL), never opened where it was: in a
 * directory others can write to, a name they made (a link) is not followed.
 */
static int write_file(struct hugeadm_ctl *ctl, int dirfd, const char *dir,
		      const struct ha_gen_file *f)
{
	char *tmp = NULL;
	int fd = -1, rc;

	for (unsigned i = 0; fd < 0 && i < 100; i++) {
		free(tmp);
		if (asprintf(&tmp, ".%s.%06x", f->name,
			     (unsigned)(getpid() * 2654435761u + i * 40503u) & 0xffffff) < 0)
			return -ENOMEM;
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		rc = -errno;
		ha_msg(ctl, HA_ERROR, "%s/%s: %s", dir, tmp, strerror(-rc));
		free(tmp);
		return rc;
	}
	rc = write_all(fd, f->text, strlen(f->text));
	if (rc == 0 && fchmod(fd, 0644) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dirfd, tmp, dirfd, f->name) < 0)
		rc = -errno;
	if (rc < 0) {
		ha_msg(ctl, HA_ERROR, "%s/%s: %s", dir, f->name, strerror(-rc));
		unlinkat(dirfd, tmp, 0);
	} else {
		ha_msg(ctl, HA_INFO, "wrote %s/%s", dir, f->name);
	}
	free(tmp);
	return rc;
}

int ha_generate(struct hugeadm_ctl *ctl)
{
	struct ha_gen_files out = {0};
	struct hk_config *config = NULL;
	struct ha_gen g = {0};
	int dirfd = -1, rc;

	/* The directory first: a bad one is said before anything is read. */
	if (ctl->gen_output) {
		dirfd = open(ctl->gen_output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0) {
			ha_msg(ctl, HA_ERROR, "--output %s: %s", ctl->gen_output, strerror(errno));
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
		return HK_EXIT_FAILURE;
	}
	g.ctx = ctl->ctx;
	g.config = config;
	g.hugeadm_path = HK_HUGEADM_PATH;
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

	if (strcmp(ctl->generate, "boot") == 0 && !*out.note)
		ha_msg(ctl, HA_INFO,
		       "nothing to put on the kernel command line: no gigantic pool with a "
		       "minimum and no [boot] setting");
	if (dirfd >= 0) {
		for (size_t i = 0; i < out.n && rc == 0; i++)
			rc = write_file(ctl, dirfd, ctl->gen_output, &out.files[i]);
	} else if (strcmp(ctl->generate, "boot") == 0) {
		/* stdout: the parameters alone, for scripts; how to install them aside. */
		if (*out.note) {
			printf("%s\n", out.note);
			if (ctl->verbose >= HA_WARNING) {
				fflush(stdout);
				ha_gen_boot_hint(stderr, "", out.note);
			}
		}
	} else {
		for (size_t i = 0; i < out.n; i++) {
			if (strcmp(ctl->generate, "units") == 0)
				printf("%s# %s\n", i ? "\n" : "", out.files[i].name);
			fputs(out.files[i].text, stdout);
		}
	}
done:
	ha_gen_files_free(&out);
	hk_config_unref(config);
	if (dirfd >= 0)
		close(dirfd);
	return rc < 0 ? HK_EXIT_FAILURE : HK_EXIT_SUCCESS;
}
