// SPDX-License-Identifier: GPL-2.0-or-later
/* The path layer of lib/common/path.c on scratch trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "path.h"

struct env {
	char *dir;
	struct hkc_path p;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	e->dir = fixture_empty();
	if (hkc_path_init(&e->p, e->dir) < 0) {
		fixture_remove(e->dir);
		free(e);
		return -1;
	}
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	hkc_path_fini(&e->p);
	fixture_remove(e->dir);
	free(e);
	return 0;
}

/* Read the file back with stdio, outside the path layer. */
static char *slurp(const char *dir, const char *rel)
{
	char *path, *buf;
	size_t n;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, rel) > 0);
	f = fopen(path, "r");
	free(path);
	assert_non_null(f);
	buf = calloc(1, 4096);
	assert_non_null(buf);
	n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_init(void **state)
{
	struct env *e = *state;

	assert_true(e->p.rootfd >= 0);
	assert_string_equal(e->p.root, e->dir);
	assert_false(e->p.live);
	assert_true(e->p.beneath);
}

static void test_init_live(void **state)
{
	struct hkc_path p;

	(void)state;
	assert_int_equal(hkc_path_init(&p, "/"), 0);
	assert_true(p.live);
	assert_string_equal(p.root, "/");
	hkc_path_fini(&p);
	assert_int_equal(p.rootfd, -1);
	assert_null(p.root);

	/* NULL means the running system too; its lookups follow links (/proc/self). */
	assert_int_equal(hkc_path_init(&p, NULL), 0);
	assert_true(p.live);
	assert_false(p.beneath);
	assert_string_equal(p.root, "/");
	assert_true(hkc_path_existsf(&p, "proc/self/status"));
	hkc_path_fini(&p);

	/* "" is a mistake (an unset variable), never the running system. */
	assert_int_equal(hkc_path_init(&p, ""), -EINVAL);
	assert_int_equal(p.rootfd, -1);
	assert_null(p.root);
}

static void test_init_missing(void **state)
{
	struct env *e = *state;
	struct hkc_path p;
	char *missing;

	assert_true(asprintf(&missing, "%s/does-not-exist", e->dir) > 0);
	assert_int_equal(hkc_path_init(&p, missing), -ENOENT);
	free(missing);

	/* A regular file is not a root. */
	fixture_write(e->dir, "file", "x");
	assert_true(asprintf(&missing, "%s/file", e->dir) > 0);
	assert_int_equal(hkc_path_init(&p, missing), -ENOTDIR);
	free(missing);
}

static void test_read_u64(void **state)
{
	static const struct {
		const char *content;
		int rc;
		uint64_t value;
	} cases[] = {
		{"10\n", 0, 10},
		{"10", 0, 10},
		{"0\n", 0, 0},
		{"18446744073709551615\n", 0, UINT64_MAX},
		{"18446744073692774399\n", 0, UINT64_C(18446744073692774399)},
		{"-1\n", -EINVAL, 0},
		{"", -EINVAL, 0},
		{"\n", -EINVAL, 0},
		{"1 2", -EINVAL, 0},
		{"10\n\n", -EINVAL, 0},
		{"10 \n", -EINVAL, 0},
		{" 10\n", -EINVAL, 0},
		{"+10\n", -EINVAL, 0},
		{"0x10", -EINVAL, 0},
		{"10kB\n", -EINVAL, 0},
		{"18446744073709551616", -ERANGE, 0},
	};
	struct env *e = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int rc;

		fixture_write(e->dir, "sys/value", cases[i].content);
		rc = hkc_path_read_u64f(&e->p, &v, "sys/%s", "value");
		if (rc != cases[i].rc || (rc == 0 && v != cases[i].value)) {
			print_error("\"%s\": rc %d value %llu, expected rc %d value %llu\n",
				    cases[i].content, rc, (unsigned long long)v, cases[i].rc,
				    (unsigned long long)cases[i].value);
			fail();
		}
		if (rc < 0)
			assert_int_equal(v, 12345);
	}
}

/* A NUL inside a counter file ends nothing: "7\0junk" is not 7 (found by fuzz-sysfs). */
static void test_read_u64_nul(void **state)
{
	struct env *e = *state;
	char *path;
	uint64_t v = 12345;
	FILE *f;

	fixture_write(e->dir, "sys/value", "");
	assert_true(asprintf(&path, "%s/sys/value", e->dir) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite("7\0junk", 1, 7, f), 7);
	assert_int_equal(fclose(f), 0);
	free(path);
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "sys/value"), -EINVAL);
	assert_int_equal(v, 12345);
}

static void test_read_u64_missing(void **state)
{
	struct env *e = *state;
	uint64_t v = 7;

	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "sys/missing"), -ENOENT);
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "nodir/node%d/x", 3), -ENOENT);
	assert_int_equal(v, 7);
}

static void test_parse_u64_strict(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hkc_parse_u64_strict("42", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(hkc_parse_u64_strict("42\n", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(hkc_parse_u64_strict("", &v), -EINVAL);
	assert_int_equal(hkc_parse_u64_strict("-", &v), -EINVAL);
	assert_int_equal(hkc_parse_u64_strict(NULL, &v), -EINVAL);
	assert_int_equal(hkc_parse_u64_strict("99999999999999999999", &v), -ERANGE);
	assert_int_equal(v, 42);
}

static void test_read_string(void **state)
{
	struct env *e = *state;
	char *s = NULL;

	fixture_write(e->dir, "sys/kernel/mm/transparent_hugepage/enabled",
		      "always [madvise] never\n");
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "sys/kernel/mm/transparent_hugepage/%s",
					       "enabled"),
			 0);
	assert_string_equal(s, "always [madvise] never");
	free(s);

	/* Only the first line comes back. */
	fixture_write(e->dir, "two", "first\nsecond\n");
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "two"), 0);
	assert_string_equal(s, "first");
	free(s);

	/* No newline at all, and an empty file. */
	fixture_write(e->dir, "bare", "bare");
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "bare"), 0);
	assert_string_equal(s, "bare");
	free(s);
	fixture_write(e->dir, "empty", "");
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "empty"), 0);
	assert_string_equal(s, "");
	free(s);

	s = NULL;
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "missing"), -ENOENT);
	assert_null(s);
}

static void test_read_all_large(void **state)
{
	const size_t size = 100 * 1024;
	struct env *e = *state;
	char *content, *buf = NULL;
	size_t len = 0;

	content = malloc(size + 1);
	assert_non_null(content);
	for (size_t i = 0; i < size; i++)
		content[i] = (i % 61 == 60) ? '\n' : (char)('a' + i % 26);
	content[size] = '\0';
	fixture_write(e->dir, "proc/big", content);

	assert_int_equal(hkc_path_read_allf(&e->p, &buf, &len, "proc/%s", "big"), 0);
	assert_int_equal(len, size);
	assert_int_equal(strlen(buf), size);
	assert_memory_equal(buf, content, size);
	free(buf);

	/* ret_len may be NULL. */
	assert_int_equal(hkc_path_read_allf(&e->p, &buf, NULL, "proc/big"), 0);
	assert_string_equal(buf, content);
	free(buf);

	/* An empty file is an empty string. */
	fixture_write(e->dir, "proc/empty", "");
	assert_int_equal(hkc_path_read_allf(&e->p, &buf, &len, "proc/empty"), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
	free(content);
}

static void test_write_truncates(void **state)
{
	struct env *e = *state;
	char *s;
	uint64_t v;

	fixture_write(e->dir, "proc/sys/vm/nr_hugepages", "0\n");
	assert_int_equal(hkc_path_write_u64f(&e->p, 1000, "proc/sys/vm/%s", "nr_hugepages"), 0);
	s = slurp(e->dir, "proc/sys/vm/nr_hugepages");
	assert_string_equal(s, "1000");
	free(s);
	assert_int_equal(hkc_path_write_u64f(&e->p, 5, "proc/sys/vm/nr_hugepages"), 0);
	s = slurp(e->dir, "proc/sys/vm/nr_hugepages");
	assert_string_equal(s, "5");
	free(s);
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "proc/sys/vm/nr_hugepages"), 0);
	assert_int_equal(v, 5);

	assert_int_equal(hkc_path_write_u64f(&e->p, UINT64_MAX, "proc/sys/vm/nr_hugepages"), 0);
	s = slurp(e->dir, "proc/sys/vm/nr_hugepages");
	assert_string_equal(s, "18446744073709551615");
	free(s);

	assert_int_equal(hkc_path_write_stringf(&e->p, "never", "proc/sys/vm/nr_hugepages"), 0);
	s = slurp(e->dir, "proc/sys/vm/nr_hugepages");
	assert_string_equal(s, "never");
	free(s);
}

static void test_write_missing(void **state)
{
	struct env *e = *state;

	assert_int_equal(hkc_path_write_u64f(&e->p, 1, "sys/devices/system/node/node9/%s", "x"),
			 -ENOENT);
	assert_int_equal(hkc_path_write_stringf(&e->p, "1", "nodir/file"), -ENOENT);
	/* Like a sysfs attribute, a write does not create the file. */
	assert_int_equal(hkc_path_write_u64f(&e->p, 1, "newfile"), -ENOENT);
	assert_false(hkc_path_existsf(&e->p, "newfile"));
}

static void test_leading_slash(void **state)
{
	struct env *e = *state;
	char *s = NULL;
	uint64_t v = 0;

	fixture_write(e->dir, "proc/sys/vm/min_free_kbytes", "67584\n");
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "/proc/sys/vm/min_free_kbytes"), 0);
	assert_int_equal(v, 67584);
	assert_true(hkc_path_existsf(&e->p, "/proc/sys/vm/%s", "min_free_kbytes"));
	assert_true(hkc_path_existsf(&e->p, "proc/sys/vm/min_free_kbytes"));
	assert_false(hkc_path_existsf(&e->p, "/proc/sys/vm/nr_hugepages"));

	assert_int_equal(hkc_path_write_u64f(&e->p, 90112, "/proc/sys/vm/min_free_kbytes"), 0);
	s = slurp(e->dir, "proc/sys/vm/min_free_kbytes");
	assert_string_equal(s, "90112");
	free(s);

	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "%s", "/proc/sys/vm/min_free_kbytes"), 0);
	assert_string_equal(s, "90112");
	free(s);

	/* Any number of leading slashes stays inside the root. */
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "//proc/sys/vm/min_free_kbytes"), 0);
	assert_string_equal(s, "90112");
	free(s);
	fixture_write(e->dir, "etc/hostname", "inside-the-sysroot\n");
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "///etc/hostname"), 0);
	assert_string_equal(s, "inside-the-sysroot");
	free(s);
}

static void test_opendir(void **state)
{
	struct env *e = *state;
	struct dirent *de;
	unsigned found = 0;
	DIR *d = NULL;
	FILE *f = NULL;
	char line[32];

	fixture_write(e->dir, "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "3\n");
	assert_int_equal(hkc_path_opendirf(&e->p, &d, "/sys/kernel/mm/hugepages"), 0);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, "hugepages-2048kB") == 0)
			found++;
	closedir(d);
	assert_int_equal(found, 1);
	assert_int_equal(hkc_path_opendirf(&e->p, &d, "sys/kernel/mm/none"), -ENOENT);
	assert_int_equal(hkc_path_opendirf(&e->p, &d,
					   "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"),
			 -ENOTDIR);

	assert_int_equal(hkc_path_fopenf(&e->p, &f,
					 "sys/kernel/mm/hugepages/hugepages-%dkB/nr_hugepages",
					 2048),
			 0);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_string_equal(line, "3\n");
	fclose(f);
}

static void test_kv_meminfo(void **state)
{
	static const char meminfo[] = "MemTotal:       24683520 kB\n"
				      "MemFree:        23000000 kB\n"
				      "HugePages_Total:      10\n"
				      "HugePages_Free:        8\n"
				      "HugePages_Rsvd:        2\n"
				      "HugePages_Surp:        0\n"
				      "Hugepagesize:       2048 kB\n"
				      "Hugetlb:           20480 kB\n"
				      "DirectMap1G:    \t 2097152 kB";
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hkc_kv_find_u64(meminfo, "MemTotal", &v), 0);
	assert_int_equal(v, 24683520);
	assert_int_equal(hkc_kv_find_u64(meminfo, "HugePages_Total", &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(hkc_kv_find_u64(meminfo, "HugePages_Rsvd", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(hkc_kv_find_u64(meminfo, "Hugepagesize", &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(hkc_kv_find_u64(meminfo, "Hugetlb", &v), 0);
	assert_int_equal(v, 20480);
	/* Last line, no newline, a tab in the padding. */
	assert_int_equal(hkc_kv_find_u64(meminfo, "DirectMap1G", &v), 0);
	assert_int_equal(v, 2097152);

	v = 99;
	assert_int_equal(hkc_kv_find_u64(meminfo, "SwapTotal", &v), -ENOENT);
	/* A prefix of a key is not the key. */
	assert_int_equal(hkc_kv_find_u64(meminfo, "Mem", &v), -ENOENT);
	assert_int_equal(hkc_kv_find_u64(meminfo, "HugePages", &v), -ENOENT);
	/* Nor is a key in the middle of a line. */
	assert_int_equal(hkc_kv_find_u64(meminfo, "Total", &v), -ENOENT);
	assert_int_equal(hkc_kv_find_u64("", "MemTotal", &v), -ENOENT);
	assert_int_equal(v, 99);
}

static void test_kv_node(void **state)
{
	static const char node[] = "Node 1 MemTotal:       24772608 kB\n"
				   "Node 1 HugePages_Total:     7\n"
				   "Node 1 HugePages_Free:      1\n"
				   "Node 12 HugePages_Surp:     2\n";
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hkc_kv_find_u64(node, "HugePages_Total", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(hkc_kv_find_u64(node, "HugePages_Free", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(hkc_kv_find_u64(node, "MemTotal", &v), 0);
	assert_int_equal(v, 24772608);
	assert_int_equal(hkc_kv_find_u64(node, "HugePages_Surp", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(hkc_kv_find_u64(node, "HugePages_Rsvd", &v), -ENOENT);
}

static void test_kv_bad_value(void **state)
{
	uint64_t v = 5;

	(void)state;
	assert_int_equal(hkc_kv_find_u64("MemTotal:  abc kB\n", "MemTotal", &v), -EINVAL);
	assert_int_equal(hkc_kv_find_u64("MemTotal:\n", "MemTotal", &v), -EINVAL);
	assert_int_equal(hkc_kv_find_u64("MemTotal:  -1 kB\n", "MemTotal", &v), -EINVAL);
	assert_int_equal(hkc_kv_find_u64("MemTotal:  12 MB\n", "MemTotal", &v), -EINVAL);
	assert_int_equal(hkc_kv_find_u64("MemTotal:  12x\n", "MemTotal", &v), -EINVAL);
	assert_int_equal(hkc_kv_find_u64("MemTotal:  12 kB trailing\n", "MemTotal", &v), -EINVAL);
	assert_int_equal(hkc_kv_find_u64("MemTotal:  99999999999999999999 kB\n", "MemTotal", &v),
			 -ERANGE);
	assert_int_equal(v, 5);
}

static void test_existsf(void **state)
{
	struct env *e = *state;

	fixture_write(e->dir, "sys/devices/system/node/node1/meminfo", "Node 1 MemTotal: 1 kB\n");
	assert_true(hkc_path_existsf(&e->p, "sys/devices/system/node/node%d", 1));
	assert_true(hkc_path_existsf(&e->p, "sys/devices/system/node/node%d/meminfo", 1));
	assert_false(hkc_path_existsf(&e->p, "sys/devices/system/node/node%d", 0));
}

/* A symbolic link at rel in dir pointing at target (any text). */
static void put_link(const char *dir, const char *rel, const char *target)
{
	char *path;

	fixture_write(dir, rel, "");
	assert_true(asprintf(&path, "%s/%s", dir, rel) > 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(target, path), 0);
	free(path);
}

static void collect_log(void *data, const char *msg)
{
	char **last = data;

	free(*last);
	*last = strdup(msg);
}

static void no_dry_run(void *data, const char *path, const char *value)
{
	fail_msg("dry run of %s with a link that leaves the tree", path);
}

/*
 * Every entry of the layer on a path whose lookup leaves the tree: -EXDEV (or
 * false), nothing read, nothing written, nothing created outside, and the log
 * names the path.
 */
static void assert_escapes(struct env *e, const char *host, const char *rel)
{
	char *msg = NULL, *s = NULL, *got;
	uint64_t v = 99;
	FILE *f = NULL;

	hkc_path_set_log(&e->p, collect_log, &msg);
	assert_int_equal(hkc_path_write_u64f(&e->p, 512, "%s", rel), -EXDEV);
	assert_non_null(msg);
	assert_non_null(strstr(msg, rel));
	assert_non_null(strstr(msg, "leads out of the tree"));
	assert_int_equal(hkc_path_write_stringf(&e->p, "never", "%s", rel), -EXDEV);
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "%s", rel), -EXDEV);
	assert_int_equal(v, 99);
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "%s", rel), -EXDEV);
	assert_null(s);
	assert_int_equal(hkc_path_fopenf(&e->p, &f, "%s", rel), -EXDEV);
	assert_null(f);
	assert_int_equal(hkc_path_openf(&e->p, O_RDWR | O_CREAT, "%s", rel), -EXDEV);
	assert_false(hkc_path_existsf(&e->p, "%s", rel));
	e->p.dry_run = no_dry_run;
	assert_int_equal(hkc_path_write_u64f(&e->p, 512, "%s", rel), -EXDEV);
	e->p.dry_run = NULL;
	hkc_path_set_log(&e->p, NULL, NULL);
	free(msg);
	/* The host's file is as it was, and nothing was added beside it. */
	got = slurp(host, "file");
	assert_string_equal(got, "host\n");
	free(got);
}

static void inside_links(struct env *e);

static void escapes(void **state, bool fallback)
{
	struct env *e = *state;
	char *host = fixture_empty(), *rel, *s = NULL;
	const char *hostname = strrchr(host, '/') + 1, *treename = strrchr(e->dir, '/') + 1;
	DIR *d = NULL;
	uint64_t v = 0;

	hkc_path_no_openat2 = fallback;
	fixture_write(host, "file", "host\n");
	fixture_write(host, "dir/nr_hugepages", "host\n");

	/* An absolute link: proc/sys/vm/nr_hugepages -> /tmp/<host>/file. */
	assert_true(asprintf(&rel, "%s/file", host) > 0);
	put_link(e->dir, "proc/sys/vm/nr_hugepages", rel);
	free(rel);
	assert_escapes(e, host, "proc/sys/vm/nr_hugepages");

	/* Through "..": four levels up from proc/sys/vm is the tree's parent. */
	assert_true(asprintf(&rel, "../../../../%s/file", hostname) > 0);
	put_link(e->dir, "proc/sys/vm/nr_overcommit_hugepages", rel);
	free(rel);
	assert_escapes(e, host, "proc/sys/vm/nr_overcommit_hugepages");

	/* Out and back in is out: the lookup left the tree on the way. */
	assert_true(asprintf(&rel, "../%s/proc/sys/vm/min_free_kbytes", treename) > 0);
	put_link(e->dir, "back-in", rel);
	free(rel);
	fixture_write(e->dir, "proc/sys/vm/min_free_kbytes", "1\n");
	assert_escapes(e, host, "back-in");

	/* A directory in the middle: sys/kernel -> the host's dir. */
	assert_true(asprintf(&rel, "%s/dir", host) > 0);
	put_link(e->dir, "sys/kernel", rel);
	free(rel);
	assert_escapes(e, host, "sys/kernel/nr_hugepages");
	assert_int_equal(hkc_path_opendirf(&e->p, &d, "sys/kernel"), -EXDEV);
	assert_null(d);
	/* The same, relative, deeper: sys/devices -> ../../<host>/dir. */
	assert_true(asprintf(&rel, "../../%s/dir", hostname) > 0);
	put_link(e->dir, "sys/devices", rel);
	free(rel);
	assert_escapes(e, host, "sys/devices/nr_hugepages");
	assert_int_equal(hkc_path_mkdirf(&e->p, 0755, "sys/devices/new"), -EXDEV);
	assert_false(hkc_path_existsf(&e->p, "sys/devices/new"));
	s = slurp(host, "dir/nr_hugepages");
	assert_string_equal(s, "host\n");
	free(s);

	/* A path that climbs itself, and /proc/self as a dump spells it. */
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "proc/../../%s/file", hostname), -EXDEV);
	put_link(e->dir, "proc/self", "/proc/self");
	assert_int_equal(hkc_path_read_stringf(&e->p, &s, "proc/self/status"), -EXDEV);
	inside_links(e);
	hkc_path_no_openat2 = false;
	fixture_remove(host);
}

/* Links that stay in the tree are followed; a loop is a loop (escapes()' second half). */
static void inside_links(struct env *e)
{
	char *msg = NULL, *s = NULL;
	DIR *d = NULL;
	uint64_t v = 0;

	/*
	 * Links that stay inside the tree are followed: a dump of /sys is made
	 * of them (node0/cpu0 -> ../../cpu/cpu0), and so is a tree of links.
	 */
	fixture_write(e->dir, "real/hugepages-2048kB/nr_hugepages", "12\n");
	put_link(e->dir, "sys/mm/hugepages", "../../real");
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "sys/mm/hugepages/hugepages-2048kB/%s",
					    "nr_hugepages"),
			 0);
	assert_int_equal(v, 12);
	put_link(e->dir, "sys/node0-nr", "mm/hugepages/hugepages-2048kB/nr_hugepages");
	assert_int_equal(hkc_path_write_u64f(&e->p, 30, "sys/node0-nr"), 0);
	s = slurp(e->dir, "real/hugepages-2048kB/nr_hugepages");
	assert_string_equal(s, "30");
	free(s);
	assert_int_equal(hkc_path_read_u64f(&e->p, &v,
					    "sys/mm/../mm/hugepages/hugepages-2048kB/"
					    "nr_hugepages"),
			 0);
	assert_int_equal(v, 30);
	assert_int_equal(hkc_path_opendirf(&e->p, &d, "sys/mm/hugepages/"), 0);
	closedir(d);
	assert_true(hkc_path_existsf(&e->p, "sys/mm/hugepages/hugepages-2048kB"));

	/* A loop is a loop, and says nothing about leaving the tree. */
	hkc_path_set_log(&e->p, collect_log, &msg);
	put_link(e->dir, "loop-a", "loop-b");
	put_link(e->dir, "loop-b", "loop-a");
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "loop-a"), -ELOOP);
	assert_null(msg);
	hkc_path_set_log(&e->p, NULL, NULL);
}

/*
 * A hard link into the tree and a FIFO (found by review): neither is read
 * nor written, and neither blocks; the host file keeps its contents.
 */
static void test_tree_hardlink_fifo(void **state)
{
	struct env *e = *state;
	char *host = fixture_empty(), *src, *dst;
	uint64_t v = 0;

	fixture_write(host, "file", "7\n");
	fixture_write(e->dir, "proc/sys/vm/nr_hugepages", "");
	assert_true(asprintf(&src, "%s/file", host) > 0);
	assert_true(asprintf(&dst, "%s/proc/sys/vm/nr_hugepages", e->dir) > 0);
	assert_int_equal(unlink(dst), 0);
	assert_int_equal(link(src, dst), 0);
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "proc/sys/vm/nr_hugepages"), -EMLINK);
	assert_int_equal(hkc_path_write_u64f(&e->p, 9, "proc/sys/vm/nr_hugepages"), -EMLINK);
	/* The host file is as it was. */
	{
		FILE *f = fopen(src, "r");
		char buf[8] = "";

		assert_non_null(f);
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		assert_string_equal(buf, "7\n");
	}
	assert_int_equal(unlink(dst), 0);
	assert_int_equal(mkfifo(dst, 0600), 0);
	/* No reader and no writer: these would block forever without O_NONBLOCK. */
	assert_int_equal(hkc_path_read_u64f(&e->p, &v, "proc/sys/vm/nr_hugepages"), -EINVAL);
	assert_true(hkc_path_write_u64f(&e->p, 9, "proc/sys/vm/nr_hugepages") < 0);
	assert_int_equal(unlink(dst), 0);
	free(src);
	free(dst);
	fixture_remove(host);
}

static void test_escape_openat2(void **state)
{
	escapes(state, false);
}

/*
 * openat2(2) answers EAGAIN to a ".." resolved while anything in the system
 * was renamed: the layer tries again, and the answer stays "out of the
 * tree", never a spurious error (it was, under a parallel test run).
 */
static void test_escape_openat2_renames(void **state)
{
	struct env *e = *state;
	char *host = fixture_empty(), *spin = fixture_empty(), *rel, *a, *b;
	const char *hostname = strrchr(host, '/') + 1;
	uint64_t v = 0;
	pid_t pid;
	int st;

	hkc_path_no_openat2 = false;
	fixture_write(host, "file", "host\n");
	fixture_write(spin, "a", "");
	assert_true(asprintf(&rel, "../../../../%s/file", hostname) > 0);
	put_link(e->dir, "proc/sys/vm/nr_overcommit_hugepages", rel);
	free(rel);
	assert_true(asprintf(&a, "%s/a", spin) > 0);
	assert_true(asprintf(&b, "%s/b", spin) > 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(60); /* never outlives a failed test */
		for (;;)
			if (rename(a, b) < 0 || rename(b, a) < 0)
				_exit(1);
	}
	for (int i = 0; i < 3000; i++)
		assert_int_equal(
			hkc_path_read_u64f(&e->p, &v, "proc/sys/vm/nr_overcommit_hugepages"),
			-EXDEV);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	free(a);
	free(b);
	fixture_remove(spin);
	fixture_remove(host);
}

/* The walk for kernels without openat2(2) refuses the same links. */
static void test_escape_fallback(void **state)
{
	escapes(state, true);
}

static void test_mkdir(void **state)
{
	struct env *e = *state;

	assert_int_equal(hkc_path_mkdirf(&e->p, 0755, "run"), 0);
	assert_int_equal(hkc_path_mkdirf(&e->p, 0755, "/run/hugekit/"), 0);
	assert_int_equal(hkc_path_mkdirf(&e->p, 0755, "run/hugekit"), -EEXIST);
	assert_int_equal(hkc_path_mkdirf(&e->p, 0755, "none/hugekit"), -ENOENT);
	assert_true(hkc_path_existsf(&e->p, "run/hugekit"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_init),
		T(test_init_live),
		T(test_init_missing),
		T(test_read_u64),
		T(test_read_u64_nul),
		T(test_read_u64_missing),
		T(test_parse_u64_strict),
		T(test_read_string),
		T(test_read_all_large),
		T(test_write_truncates),
		T(test_write_missing),
		T(test_leading_slash),
		T(test_opendir),
		T(test_kv_meminfo),
		T(test_kv_node),
		T(test_kv_bad_value),
		T(test_existsf),
		T(test_tree_hardlink_fifo),
		T(test_escape_openat2),
		T(test_escape_openat2_renames),
		T(test_escape_fallback),
		T(test_mkdir),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
