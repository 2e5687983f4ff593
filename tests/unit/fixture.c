// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixture.h"

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "fixture: %s: %s\n", what, strerror(errno));
	abort();
}

char *fixture_empty(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/hk-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
		die("asprintf");
	if (!mkdtemp(dir))
		die("mkdtemp");
	return dir;
}

/* cmd, then each argument single-quoted. */
static void run(const char *cmd0, const char *a, const char *b)
{
	char *cmd;

	if (asprintf(&cmd, "%s '%s'%s%s%s", cmd0, a, b ? " '" : "", b ? b : "", b ? "'" : "") < 0)
		die("asprintf");
	if (system(cmd) != 0) {
		fprintf(stderr, "fixture: '%s' failed\n", cmd);
		abort();
	}
	free(cmd);
}

char *fixture_copy(const char *name)
{
	const char *src = getenv("HK_FIXTURES");
	char *dir = fixture_empty(), *from;

	if (!src)
		src = HK_FIXTURES_DEFAULT;
	if (asprintf(&from, "%s/%s/.", src, name) < 0)
		die("asprintf");
	run("cp -R", from, dir);
	free(from);
	return dir;
}

void fixture_remove(char *dir)
{
	if (!dir)
		return;
	run("rm -rf", dir, NULL);
	free(dir);
}

void fixture_write(const char *dir, const char *relpath, const char *content)
{
	char *path, *slash;
	FILE *f;

	if (asprintf(&path, "%s/%s", dir, relpath) < 0)
		die("asprintf");
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			die(path);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(content, f) < 0 || fclose(f) != 0)
		die(path);
	free(path);
}
