// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration parser (lib/core/config.c): entries with their file and
 * line, comments, a BOM and CRLF; every kind of problem reported at its line
 * with the bad part named, and no configuration then; conf.d in name order,
 * a key two files set differently (both places named), the same value
 * accepted once; the files under the sysroot; root refuses files others can
 * write. Privileged for someone else (credentials faked, privilege.h): the
 * owner checks hold without euid 0, a file the caller names is not opened,
 * and no problem quotes a file the caller cannot read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "errs.h"
#include "privilege.h"
#include "tree.h"

static struct hk_ctx *ctx_of(void)
{
	struct hk_ctx *ctx = NULL;

	assert_int_equal(hk_new(NULL, &ctx), 0);
	return ctx;
}

static const struct hk_config_entry *entry(const struct hk_config *cfg, const char *section,
					   const char *name, const char *key)
{
	const struct hk_config_entry *es;
	size_t n = hk_config_entries(cfg, &es);

	for (size_t i = 0; i < n; i++)
		if (strcmp(es[i].section, section) == 0 && strcmp(es[i].key, key) == 0 &&
		    ((!name && !es[i].name) ||
		     (name && es[i].name && strcmp(es[i].name, name) == 0)))
			return &es[i];
	fail_msg("no [%s %s] %s", section, name ? name : "", key);
	return NULL;
}

static void test_entries(void **state)
{
	static const char text[] = "\xef\xbb\xbf# a comment\r\n"
				   "[pool 2M]\r\n"
				   "minimum = 512            # or per node\r\n"
				   "  maximum = 1G ; a comment libinih takes off\n"
				   "[pool 1G]\n"
				   "minimum = 4@0, 4@1\n"
				   "\n"
				   "[mount /dev/hugepages-2M]\n"
				   "pagesize = 2M\n"
				   "user = postgres\n"
				   "mode = 0770\n"
				   "size = 50%\n"
				   "[thp]\n"
				   "enabled = madvise\n"
				   "khugepaged/pages_to_scan = 4096\n"
				   "hugepages-64kB/enabled = inherit\n"
				   "[sysctl]\n"
				   "vm.min_free_kbytes = recommended\n"
				   "[cgroup /db.slice]\n"
				   "hugetlb.2M.rsvd.max = 2G\n"
				   "[boot]\n"
				   "hugetlb_cma = 0:2G, 1:2G\n";
	struct hk_ctx *ctx = ctx_of();
	struct hk_config *cfg = NULL;
	struct errs errs = {0};
	const struct hk_config_entry *e;
	const char *const *files;

	assert_int_equal(hk_config_parse_string(ctx, "t.conf", text, collect, &errs, &cfg), 0);
	assert_int_equal(errs.n, 0);
	assert_int_equal(hk_config_entries(cfg, NULL), 13);
	e = entry(cfg, "pool", "2M", "minimum");
	assert_string_equal(e->value, "512");
	assert_string_equal(e->file, "t.conf");
	assert_int_equal(e->line, 3);
	e = entry(cfg, "pool", "2M", "maximum");
	assert_string_equal(e->value, "1G");
	assert_int_equal(e->line, 4);
	assert_string_equal(entry(cfg, "pool", "1G", "minimum")->value, "4@0, 4@1");
	assert_string_equal(entry(cfg, "mount", "/dev/hugepages-2M", "size")->value, "50%");
	assert_null(entry(cfg, "thp", NULL, "enabled")->name);
	assert_string_equal(entry(cfg, "cgroup", "/db.slice", "hugetlb.2M.rsvd.max")->value, "2G");
	assert_int_equal(entry(cfg, "boot", NULL, "hugetlb_cma")->line, 22);
	assert_int_equal(hk_config_files(cfg, &files), 1);
	assert_string_equal(files[0], "t.conf");
	hk_config_unref(cfg);
	hk_unref(ctx);
}

/* text has exactly one problem, at line, whose message holds want; no config. */
static void expect(const char *text, unsigned line, const char *want)
{
	struct hk_ctx *ctx = ctx_of();
	struct hk_config *cfg = NULL;
	struct errs errs = {0};
	char where[32];

	assert_int_equal(hk_config_parse_string(ctx, "t.conf", text, collect, &errs, &cfg),
			 -EINVAL);
	assert_null(cfg);
	snprintf(where, sizeof(where), "t.conf:%u: ", line);
	if (errs.n != 1 || strncmp(errs.buf, where, strlen(where)) != 0 || !strstr(errs.buf, want))
		fail_msg("wanted one problem at %s'%s', got %u:\n%s", where, want, errs.n,
			 errs.buf);
	hk_unref(ctx);
}

static void test_problems(void **state)
{
	(void)state;
	expect("[pools 2M]\nminimum = 1\n", 1, "unknown section [pools 2M]");
	expect("[pool 2M]\nminmum = 1\n", 2, "unknown key 'minmum' in [pool 2M]");
	expect("[pool 2M]\nminimum = 5x\n", 2, "'5x' is not a page count");
	expect("[pool 2M]\nminimum = 3M\n", 2,
	       "'3M' is not a page count or a whole number of pages");
	expect("[pool 2M]\nminimum = 1@0, 2@0\n", 2, "node 0 is given twice");
	/* Several counts without nodes (planned as two whole-pool items before). */
	expect("[pool 2M]\nminimum = 10, 20\n", 2,
	       "'10, 20': one count for the whole pool, or a count per node (N@NODE, ...)");
	expect("[pool 2M]\nminimum = 1@0, 2\n", 2, "give every part a node");
	expect("[pool 2M]\nmaximum = 4@1\n", 2, "a maximum is for the whole pool");
	expect("[pool 2M]\nminimum = 512\nmaximum = 256\n", 3,
	       "[pool 2M] maximum 256 is below the minimum 512 (t.conf:2)");
	expect("[pool 2M]\nminimum = 1\nminimum = 1\n", 3,
	       "key 'minimum' is set twice in [pool 2M] (line 2)");
	/* [pool 2M] and [pool 2MB] are one pool. */
	expect("[pool 2M]\nminimum = 1\n[pool 2MB]\nminimum = 2\n", 4,
	       "key 'minimum' is set twice in [pool 2MB] (line 2)");
	expect("[pool two]\nminimum = 1\n", 1, "'two' is not a page size");
	expect("[pool 1G]\ndemote_size = 1G\n", 2, "not below the pool's size");
	expect("[pool 1G]\nminimum = 0\ndemote = maybe\n", 3,
	       "[pool 1G] demote 'maybe': yes or no");
	/* Once accepted here and caught only against the machine. */
	expect("[pool 2M]\nmaximum = 1, 2\n", 2,
	       "[pool 2M] 1, 2: a maximum is one count for the whole pool");
	expect("[pool]\nminimum = 1\n", 1, "[pool] needs a name");
	expect("[thp 2M]\nenabled = never\n", 1, "[thp] takes no name");
	expect("[thp]\nenabled = sometimes\n", 2, "[thp] enabled 'sometimes': not one of");
	expect("[thp]\nkhugepaged/pages_to_scan = -1\n", 2, "not a number");
	expect("[thp]\nhugepages-64kB/enabled = defer\n", 2, "not one of the kernel's modes");
	expect("[thp]\nkhugepaged = 1\n", 2, "unknown key 'khugepaged' in [thp]");
	expect("[sysctl]\nvm.nr_hugepages = 5\n", 2, "set it as [pool SIZE] minimum");
	expect("[sysctl]\nvm.nr_overcommit_hugepages = 5\n", 2, "set it as [pool SIZE] maximum");
	expect("[sysctl]\nvm.swappiness = 5\n", 2, "unknown key 'vm.swappiness' in [sysctl]");
	expect("[sysctl]\nvm.min_free_kbytes = lots\n", 2, "not a number or 'recommended'");
	expect("[mount /dev/../etc]\npagesize = 2M\n", 1, "must be an absolute path");
	expect("[mount relative]\npagesize = 2M\n", 1, "must be an absolute path");
	expect("[mount /mnt/h]\nmode = 0999\n", 2, "mode '0999': not an octal mode");
	expect("[mount /mnt/h]\nsize = 120%\n", 2, "size '120%': not a size or a percentage");
	expect("[mount /mnt/h]\nuser = a b\n", 2, "user 'a b': not a name or a number");
	expect("[mount /mnt/h]\nowner = root\n", 2, "unknown key 'owner' in [mount /mnt/h]");
	expect("[cgroup a/../b]\nhugetlb.2M.max = 1G\n", 1, "the cgroup must be a path");
	/* Every other way out of the cgroup root, or onto it. */
	{
		static const char *const names[] = {"./a", "a/.", "a//b", "/a/", "//a", "/", ".."};
		char text[128];

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(text, sizeof(text), "[cgroup %s]\nhugetlb.2M.max = 1G\n",
				 names[i]);
			expect(text, 1, "the cgroup must be a path below the cgroup root");
		}
	}
	expect("[cgroup a]\nhugetlb.2M.limit = 1G\n", 2, "unknown key 'hugetlb.2M.limit'");
	expect("[cgroup a]\nhugetlb.2X.max = 1G\n", 2, "'2X' is not a page size");
	expect("[cgroup a]\nhugetlb.2M.max = lots\n", 2, "not a size or 'max'");
	expect("[boot]\nhugetlb_free_vmemmap = yes\n", 2, "on or off");
	expect("[boot]\nhugetlb_cma = 0:2G, 4G\n", 2, "a size, or NODE:SIZE");
	expect("[pool 2M]\nminimum 512\n", 2, "'minimum 512' is not 'key = value'");
	expect("[pool 2M\nminimum = 1\n", 1, "a section header without its ']'");
	expect("minimum = 1\n", 1, "'minimum' is outside any section");
	expect("[pool 2M]\nminimum =\n", 2, "[pool 2M] minimum: no value");
	expect("[pool 2M]\nminimum = 1@0,\n", 2, "an empty part between commas");
	/* A sum that would wrap is the largest count, not a small one below the maximum. */
	expect("[pool 2M]\nminimum = 18446744073709551615@0, 2@1\nmaximum = 3\n", 3,
	       "maximum 3 is below the minimum 18446744073709551615");
	expect("[pool 2M]\nminimum = 1@0,, 2@1\n", 2, "an empty part between commas");
	expect("[mount /run/x]\n[thp]\nenabled = never\n", 1,
	       "[mount /run/x] has no keys: it would do nothing");
	expect("[thp]\nenabled = never\n[pool 2M]\n", 3, "[pool 2M] has no keys");
	expect("[thp] junk\nenabled = never\n", 1, "'junk' after the section header");
}

/* Several problems: each at its own line, all of them. */
static void test_all_problems(void **state)
{
	struct hk_ctx *ctx = ctx_of();
	struct hk_config *cfg = NULL;
	struct errs errs = {0};
	char *longline = malloc(3100);

	(void)state;
	assert_int_equal(hk_config_parse_string(ctx, "t.conf",
						"[pool 2M]\nminmum = 1\n[thp]\nenabled = x\n"
						"[sysctl]\nvm.nope = 1\n",
						collect, &errs, &cfg),
			 -EINVAL);
	assert_int_equal(errs.n, 3);
	assert_non_null(strstr(errs.buf, "t.conf:2: "));
	assert_non_null(strstr(errs.buf, "t.conf:4: "));
	assert_non_null(strstr(errs.buf, "t.conf:6: "));
	/* A line longer than the parser's buffer is one problem, not two lines. */
	memset(errs.buf, 0, sizeof(errs.buf));
	errs.n = 0;
	snprintf(longline, 3100, "[thp]\nenabled = %02990d\n", 0);
	assert_int_equal(hk_config_parse_string(ctx, "t.conf", longline, collect, &errs, &cfg),
			 -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_non_null(strstr(errs.buf, "t.conf:2: line too long"));
	free(longline);
	hk_unref(ctx);
}

/* Names and values longer than libinih's buffers (49 and about 200 characters) are kept whole. */
static void test_long(void **state)
{
	static const char mnt[] = "/srv/hugepages/database-production-cluster-01/pagesize-2MB";
	struct hk_ctx *ctx = ctx_of();
	struct hk_config *cfg = NULL;
	struct errs errs = {0};
	char text[2048], value[1024] = "";
	size_t n = 0;

	(void)state;
	for (int node = 0; node < 64; node++)
		n += (size_t)snprintf(value + n, sizeof(value) - n, "%s16@%d", node ? ", " : "",
				      node);
	snprintf(text, sizeof(text),
		 "[mount %s]\npagesize = 2M\n[thp] ; a comment after a header\nenabled = never\n"
		 "[pool 2M]\nminimum = %s ; and after a long value\n",
		 mnt, value);
	assert_true(strlen(value) > 300);
	assert_int_equal(hk_config_parse_string(ctx, "t.conf", text, collect, &errs, &cfg), 0);
	if (errs.n)
		fail_msg("%s", errs.buf);
	assert_string_equal(entry(cfg, "mount", mnt, "pagesize")->value, "2M");
	assert_string_equal(entry(cfg, "pool", "2M", "minimum")->value, value);
	assert_int_equal(entry(cfg, "pool", "2M", "minimum")->line, 6);
	assert_string_equal(entry(cfg, "thp", NULL, "enabled")->value, "never");
	hk_config_unref(cfg);
	hk_unref(ctx);
}

static void write_file(const char *dir, const char *rel, const char *text, mode_t mode)
{
	char path[4096];

	fixture_write(dir, rel, text);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(chmod(path, mode), 0);
}

/* The default files under the sysroot: hugekit.conf, then conf.d's *.conf by name. */
static void test_files(void **state)
{
	struct tree t;
	struct hk_config *cfg = NULL;
	struct errs errs = {0};
	const char *const *files;
	const struct hk_config_entry *es;
	char want[4096];

	(void)state;
	tree_open(&t, NULL);
	/* No configuration at all: an empty one. */
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), 0);
	assert_int_equal(hk_config_entries(cfg, NULL), 0);
	hk_config_unref(cfg);
	write_file(t.dir, "etc/hugekit/hugekit.conf", "[pool 2M]\nminimum = 8\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/50-b.conf", "[thp]\nenabled = never\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/10-a.conf", "[pool 2M]\nminimum = 8\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/.hidden.conf", "[nonsense]\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/README", "not a configuration\n", 0644);
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), 0);
	if (errs.n)
		fail_msg("%s", errs.buf);
	assert_int_equal(hk_config_files(cfg, &files), 3);
	snprintf(want, sizeof(want), "%s/etc/hugekit/conf.d/10-a.conf", t.dir);
	assert_string_equal(files[1], want);
	/* The same value twice: once, at its first place. */
	assert_int_equal(hk_config_entries(cfg, &es), 2);
	snprintf(want, sizeof(want), "%s/etc/hugekit/hugekit.conf", t.dir);
	assert_string_equal(es[0].file, want);
	assert_string_equal(es[1].key, "enabled");
	hk_config_unref(cfg);

	/* Another value in a later file: both places named, nothing returned. */
	write_file(t.dir, "etc/hugekit/conf.d/60-c.conf", "# c\n[pool 2M]\nminimum = 16\n", 0644);
	cfg = NULL;
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_null(cfg);
	snprintf(want, sizeof(want),
		 "%s/etc/hugekit/conf.d/60-c.conf:3: [pool 2M] minimum is set to 8 in "
		 "%s/etc/hugekit/hugekit.conf:2 and to 16 here",
		 t.dir, t.dir);
	if (!strstr(errs.buf, want))
		fail_msg("wanted %s, got %s", want, errs.buf);

	/* A file given: that one alone; a missing one is -ENOENT, said with line 0. */
	memset(&errs, 0, sizeof(errs));
	snprintf(want, sizeof(want), "%s/etc/hugekit/none.conf", t.dir);
	assert_int_equal(hk_config_load(t.ctx, want, collect, &errs, &cfg), -ENOENT);
	assert_non_null(strstr(errs.buf, ":0: cannot read it: No such file or directory"));
	tree_close(&t);
}

/* A node given twice is found whatever its place (the list once stopped looking after 64). */
static void test_many_nodes(void **state)
{
	char text[1024] = "[pool 2M]\nminimum = ";
	size_t n = strlen(text);

	(void)state;
	for (int node = 0; node < 70; node++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "1@%d, ", node);
	snprintf(text + n, sizeof(text) - n, "1@69\n");
	expect(text, 2, "node 69 is given twice");
}

/* As root: a file or conf.d that others can write is refused, naming it. */
static void test_owner(void **state)
{
	struct tree t;
	struct hk_config *cfg = NULL;
	struct errs errs = {0};
	char path[4096];

	(void)state;
	if (geteuid() != 0)
		skip();
	tree_open(&t, NULL);
	write_file(t.dir, "etc/hugekit/hugekit.conf", "[pool 2M]\nminimum = 8\n", 0646);
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "hugekit.conf:0: writable by others (mode 0646)"));
	write_file(t.dir, "etc/hugekit/hugekit.conf", "[pool 2M]\nminimum = 8\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/a.conf", "[pool 2M]\nminimum = 8\n", 0644);
	snprintf(path, sizeof(path), "%s/etc/hugekit/conf.d", t.dir);
	assert_int_equal(chmod(path, 0775), 0);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "conf.d:0: writable by its group (mode 0775)"));
	assert_int_equal(chmod(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/etc/hugekit/conf.d/a.conf", t.dir);
	assert_int_equal(chown(path, 65534, 65534), 0);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "a.conf:0: owned by uid 65534, not root"));
	/* A link in conf.d to a user's file (in the tree): the file is judged, not the link. */
	assert_int_equal(unlink(path), 0);
	write_file(t.dir, "home/user/a.conf", "[pool 2M]\nminimum = 9\n", 0644);
	snprintf(path, sizeof(path), "%s/home/user/a.conf", t.dir);
	assert_int_equal(chown(path, 65534, 65534), 0);
	snprintf(path, sizeof(path), "%s/etc/hugekit/conf.d/a.conf", t.dir);
	assert_int_equal(symlink("../../../home/user/a.conf", path), 0);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "a.conf:0: owned by uid 65534, not root"));
	assert_int_equal(unlink(path), 0);
	/* /etc/hugekit itself: another user's, or writable by others. */
	snprintf(path, sizeof(path), "%s/etc/hugekit", t.dir);
	assert_int_equal(chown(path, 65534, 0), 0);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "owned by uid 65534, not root"));
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chmod(path, 0777), 0);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "writable by others (mode 0777)"));
	tree_close(&t);
}

/* Set-user-ID root, run by uid 1000; and file capabilities, run by uid 1000. */
static const struct hkc_creds setuid_root = {1000, 0, 1000, 1000, true, true};
static const struct hkc_creds file_caps = {1000, 1000, 1000, 1000, true, true};
static const struct hkc_creds plain_user = {1000, 1000, 1000, 1000, false, false};

/* Privileged without euid 0 (file capabilities): the owner checks still hold. */
static void test_owner_with_caps(void **state)
{
	struct tree t;
	struct hk_config *cfg = NULL;
	struct errs errs = {0};

	(void)state;
	tree_open(&t, NULL);
	write_file(t.dir, "etc/hugekit/hugekit.conf", "[pool 2M]\nminimum = 8\n", 0646);
	hkc_creds_fake = &file_caps;
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "hugekit.conf:0: writable by others (mode 0646)"));
	/* A user with no privilege reads its own tree as it is. */
	memset(&errs, 0, sizeof(errs));
	hkc_creds_fake = &plain_user;
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), 0);
	assert_int_equal(errs.n, 0);
	hk_config_unref(cfg);
	hkc_creds_fake = NULL;
	tree_close(&t);
}

/* A file the caller names is not opened by a program privileged for that caller. */
static void test_caller_path(void **state)
{
	struct tree t;
	struct hk_config *cfg = NULL;
	struct errs errs = {0};
	char path[4096];

	(void)state;
	tree_open(&t, NULL);
	write_file(t.dir, "home/user/c.conf", "root:SECRET:19000:0:99999:7:::\n", 0644);
	snprintf(path, sizeof(path), "%s/home/user/c.conf", t.dir);
	for (int i = 0; i < 2; i++) {
		hkc_creds_fake = i ? &file_caps : &setuid_root;
		memset(&errs, 0, sizeof(errs));
		assert_int_equal(hk_config_load(t.ctx, path, collect, &errs, &cfg), -EINVAL);
		assert_null(strstr(errs.buf, "SECRET"));
		assert_non_null(strstr(errs.buf, "c.conf:0: not read: a program privileged for its "
						 "caller"));
		assert_int_equal(errs.n, 1);
	}
	/* Not privileged for someone else: read, and its problem said as it is. */
	hkc_creds_fake = &plain_user;
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, path, collect, &errs, &cfg), -EINVAL);
	assert_non_null(strstr(errs.buf, "SECRET"));
	hkc_creds_fake = NULL;
	tree_close(&t);
}

/*
 * Privileged for someone else, a file the caller cannot read: every problem
 * in it (the parser's, two files that disagree, a maximum below the minimum
 * of another file, the plan's) is its file and line, never its text.
 */
static void test_hidden(void **state)
{
	static const char *const shown[] = {
		"'SECRET1' is not 'key = value'",
		"[pool 2M] minimum is set to 8 in",
		"[pool 2M] maximum 4 is below the minimum 8",
		"user 'SECRET4': no such user",
	};
	struct tree t;
	struct hk_config *cfg = NULL;
	struct hk_plan *plan = NULL;
	struct errs errs = {0};

	(void)state;
	tree_open(&t, "x86-1node");
	write_file(t.dir, "etc/hugekit/hugekit.conf", "[pool 2M]\nminimum = 8\nSECRET1\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/a.conf", "[pool 2M]\nminimum = 16\nmaximum = 4\n",
		   0644);
	hkc_fake_caller_reads = false;
	for (int i = 0; i < 2; i++) {
		hkc_creds_fake = i ? &file_caps : &setuid_root;
		memset(&errs, 0, sizeof(errs));
		assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
		if (strstr(errs.buf, "SECRET") || strstr(errs.buf, "minimum") ||
		    !strstr(errs.buf, "hugekit.conf:3: a problem on this line (not shown: the user "
				      "who runs this program cannot read the file)") ||
		    !strstr(errs.buf, "a.conf:2: a problem on this line (not shown") ||
		    !strstr(errs.buf, "a.conf:3: a problem on this line (not shown"))
			fail_msg("%s", errs.buf);
	}
	/* The plan's problems too (a configuration that parses). */
	write_file(t.dir, "etc/hugekit/hugekit.conf",
		   "[mount /dev/hugepages-t]\npagesize = 2M\nuser = SECRET4\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/a.conf", "[pool 2M]\nminimum = 8\n", 0644);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), 0);
	assert_int_equal(hk_plan_from_config(t.ctx, cfg, collect, &errs, &plan), -EINVAL);
	if (strstr(errs.buf, "SECRET") || !strstr(errs.buf, "hugekit.conf:3: a problem on this "
							    "line (not shown"))
		fail_msg("%s", errs.buf);
	hk_config_unref(cfg);

	/* The caller may read the files (or nobody is privileged): each problem as it is. */
	hkc_fake_caller_reads = true;
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), 0);
	assert_int_equal(hk_plan_from_config(t.ctx, cfg, collect, &errs, &plan), -EINVAL);
	assert_non_null(strstr(errs.buf, shown[3]));
	hk_config_unref(cfg);
	write_file(t.dir, "etc/hugekit/hugekit.conf", "[pool 2M]\nminimum = 8\nSECRET1\n", 0644);
	write_file(t.dir, "etc/hugekit/conf.d/a.conf", "[pool 2M]\nminimum = 16\nmaximum = 4\n",
		   0644);
	memset(&errs, 0, sizeof(errs));
	assert_int_equal(hk_config_load(t.ctx, NULL, collect, &errs, &cfg), -EINVAL);
	for (size_t i = 0; i < 3; i++)
		if (!strstr(errs.buf, shown[i]))
			fail_msg("wanted %s in %s", shown[i], errs.buf);
	hkc_creds_fake = NULL;
	tree_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),	     cmocka_unit_test(test_problems),
		cmocka_unit_test(test_all_problems), cmocka_unit_test(test_long),
		cmocka_unit_test(test_files),	     cmocka_unit_test(test_many_nodes),
		cmocka_unit_test(test_owner),	     cmocka_unit_test(test_owner_with_caps),
		cmocka_unit_test(test_caller_path),  cmocka_unit_test(test_hidden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
