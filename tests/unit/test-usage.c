// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The smaps parser (lib/common/smaps.c) and the usage API on the "usage"
 * fixture tree: the smaps sums, the segments, the files, the cgroups and the
 * totals arithmetic; hk_pages_needed: which mappings count, at their size, and
 * the rounding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hugekit/hugekit.h>

#include "path.h"
#include "smaps.h"
#include "tree.h"
#include "usage.h"

#define MiB (UINT64_C(1) << 20)

static const char two_maps[] =
	"7f1000000000-7f1000800000 rw-p 00000000 00:10 1001                       /anon_hugepage (deleted)\n"
	"Size:               8192 kB\n"
	"KernelPageSize:     2048 kB\n"
	"Rss:                   0 kB\n"
	"Anonymous:             0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:    8192 kB\n"
	"VmFlags: rd wr mr mw me de ht \n"
	"555556000000-555568c00000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:             307200 kB\n"
	"KernelPageSize:        4 kB\n"
	"Rss:              307200 kB\n"
	"Anonymous:        307196 kB\n"
	"AnonHugePages:    204800 kB\n"
	"Some_Future_Field:    12 kB\n"
	"VmFlags: rd wr mr mw me ac \n"
	"7f2000000000-7f20002ee000 rw-s 00000000 00:01 7                          /SYSV0000abcd (deleted)\n"
	"Rss:                3000 kB\n"
	"VmFlags: rd wr sh mr mw me ms \n";

static void test_smaps_parse(void **state)
{
	struct hkc_smap *m = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(hkc_smaps_parse(two_maps, &m, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(m[0].start, 0x7f1000000000ULL);
	assert_int_equal(m[0].end, 0x7f1000800000ULL);
	assert_string_equal(m[0].perms, "rw-p");
	assert_int_equal(m[0].dev_major, 0);
	assert_int_equal(m[0].dev_minor, 0x10);
	assert_int_equal(m[0].inode, 1001);
	assert_string_equal(m[0].name, "/anon_hugepage (deleted)");
	assert_int_equal(m[0].kernel_page_kb, 2048);
	assert_int_equal(m[0].private_hugetlb_kb, 8192);
	assert_true(m[0].ht);
	assert_true(hkc_smap_is_hugetlb(&m[0], 4));
	assert_int_equal(hkc_smap_hugetlb_kb(&m[0]), 8192);
	assert_int_equal(hkc_smap_sysv_key(&m[0]), -1);

	assert_string_equal(m[1].name, "[heap]");
	assert_int_equal(m[1].rss_kb, 307200);
	assert_int_equal(m[1].anonymous_kb, 307196);
	assert_int_equal(m[1].anon_huge_kb, 204800);
	assert_false(m[1].ht);
	assert_false(hkc_smap_is_hugetlb(&m[1], 4));

	assert_int_equal(hkc_smap_sysv_key(&m[2]), 0xabcd);
	assert_false(hkc_smap_is_hugetlb(&m[2], 4));
	assert_false(m[0].nr || m[0].nh || m[1].nr || m[1].nh);
	hkc_smaps_free(m, n);

	/* VmFlags' words, not letters inside them: "nr" and "nh", first, last or alone. */
	assert_int_equal(hkc_smaps_parse("00400000-00500000 rw-p 0 00:00 0\nVmFlags: nr rd nh\n"
					 "00500000-00600000 rw-p 0 00:00 0\nVmFlags: nh\n"
					 "00600000-00700000 rw-p 0 00:00 0\nVmFlags: rd nrr xnh\n",
					 &m, &n),
			 0);
	assert_int_equal(n, 3);
	assert_true(m[0].nr && m[0].nh && !m[0].ht);
	assert_true(!m[1].nr && m[1].nh);
	assert_true(!m[2].nr && !m[2].nh);
	hkc_smaps_free(m, n);

	/* An empty smaps (a kernel thread) is no mapping; a field before any header is an error. */
	assert_int_equal(hkc_smaps_parse("", &m, &n), 0);
	assert_int_equal(n, 0);
	hkc_smaps_free(m, n);
	assert_int_equal(hkc_smaps_parse("Rss: 4 kB\n", &m, &n), -EINVAL);
	assert_int_equal(hkc_smaps_parse("00400000-00300000 r-xp 0 00:00 0 x\n", &m, &n), -EINVAL);
	assert_int_equal(
		hkc_smaps_parse("00400000-00500000 r-xp 0 00:00 0\nRss: many kB\n", &m, &n),
		-EINVAL);
}

static void test_smaps_sysv_key(void **state)
{
	struct hkc_smap m = {0};

	(void)state;
	m.name = (char *)"/SYSV00001234 (deleted)";
	assert_int_equal(hkc_smap_sysv_key(&m), 0x1234);
	m.name = (char *)"/SYSV00001234";
	assert_int_equal(hkc_smap_sysv_key(&m), 0x1234);
	m.name = (char *)"/SYSV0000123";
	assert_int_equal(hkc_smap_sysv_key(&m), -1);
	m.name = (char *)"/SYSV0000123g (deleted)";
	assert_int_equal(hkc_smap_sysv_key(&m), -1);
	m.name = (char *)"/tmp/SYSV00001234";
	assert_int_equal(hkc_smap_sysv_key(&m), -1);
}

/* The tree with its two files (6 MiB data, 2 MiB orphan), allocated for real. */
static void usage_tree(struct tree *t)
{
	char path[4096];
	static const struct {
		const char *name;
		off_t len;
	} files[] = {{"data", 6 * MiB}, {"orphan", 2 * MiB}};

	tree_open(t, "usage");
	for (size_t i = 0; i < 2; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/dev/hugepages/%s", t->dir, files[i].name);
		fixture_write(t->dir, path + strlen(t->dir) + 1, "");
		fd = open(path, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(posix_fallocate(fd, 0, files[i].len), 0);
		close(fd);
	}
}

static const struct hk_usage_total *total_of(const struct hk_usage *u, uint64_t size)
{
	const struct hk_usage_total *t;
	size_t n = hk_usage_totals(u, &t);

	for (size_t i = 0; i < n; i++)
		if (t[i].page_size == size)
			return &t[i];
	fail_msg("no total for %llu", (unsigned long long)size);
	return NULL;
}

static void test_usage_tree(void **state)
{
	const struct hk_usage_process *p;
	const struct hk_usage_shm *s;
	const struct hk_usage_file *f;
	const struct hk_usage_cgroup *c;
	const struct hk_usage_total *t;
	struct hk_usage *u = NULL;
	struct tree tr;
	uint64_t sum = 0;
	size_t n;

	(void)state;
	usage_tree(&tr);
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);

	n = hk_usage_processes(u, &p);
	assert_int_equal(n, 6);
	assert_int_equal(p[0].pid, 4242);
	assert_string_equal(p[0].comm, "bigheap");
	assert_int_equal(p[0].uid, 1000);
	assert_int_equal(p[0].kind, HK_USAGE_PRIVATE);
	assert_int_equal(p[0].pages, 4);
	assert_int_equal(p[0].accounted, 4);
	assert_int_equal(p[0].node, 0);
	/* The shared mapping of dbwriter and its child: one inode, counted for the parent only. */
	assert_int_equal(p[4].pid, 4343);
	assert_int_equal(p[4].kind, HK_USAGE_SHARED);
	assert_int_equal(p[4].accounted, 1);
	assert_int_equal(p[5].pid, 4444);
	assert_int_equal(p[5].kind, HK_USAGE_SHARED);
	assert_int_equal(p[5].pages, 1);
	assert_int_equal(p[5].accounted, 0);
	assert_int_equal(p[5].node, -1);
	for (size_t i = 0; i < n; i++)
		sum += p[i].accounted;
	assert_int_equal(sum, 5);

	n = hk_usage_shm(u, &s);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].id, 5);
	assert_int_equal(s[0].key, 0x1234);
	assert_int_equal(s[0].pages, 2);
	assert_int_equal(s[0].nattch, 2);
	assert_false(s[0].inferred);
	assert_int_equal(s[1].id, 6);
	assert_int_equal(s[1].pages, 1);
	assert_int_equal(s[1].nattch, 0);
	assert_true(s[1].inferred);

	n = hk_usage_files(u, &f);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].path, "/dev/hugepages/data");
	assert_int_equal(f[0].pages, 3);
	assert_true(f[0].mapped);
	assert_string_equal(f[1].path, "/dev/hugepages/orphan");
	assert_int_equal(f[1].pages, 1);
	assert_false(f[1].mapped);

	n = hk_usage_cgroups(u, &c);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].path, "/db.slice");
	assert_int_equal(c[0].version, 2);
	assert_int_equal(c[0].current, 3 * 2 * MiB);
	assert_int_equal(c[0].max, 10 * 2 * MiB);
	assert_int_equal(c[0].rsvd_current, 4 * 2 * MiB);
	assert_int_equal(c[0].rsvd_max, UINT64_MAX);

	/* 16 - 4 used; 5 via processes + 3 via segments + 4 via files. */
	t = total_of(u, 2 * MiB);
	assert_int_equal(t->used, 12);
	assert_int_equal(t->accounted, 12);
	assert_int_equal(t->reserved, 2);
	assert_int_equal(t->difference, 0);
	t = total_of(u, 1024 * MiB);
	assert_int_equal(t->used, 0);
	assert_int_equal(t->accounted, 0);
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_PROCESSES), 0);
	hk_usage_unref(u);
	tree_close(&tr);
}

/* A kernel whose shm rss counts each huge page's base pages twice over, scaled back. */
static void test_usage_shm_rss_scaled(void **state)
{
	static const char shm[] =
		"       key      shmid perms size cpid lpid nattch uid gid cuid cgid atime dtime ctime rss swap\n"
		"         0          9   600  8388608 1 1 0 0 0 0 0 0 0 0 4294967296 0\n"
		"         0         10   600  8388608 1 1 0 0 0 0 0 0 0 0 4194304 0\n"
		"         0         11   600  8388608 1 1 0 0 0 0 0 0 0 0 4096000 0\n";
	const struct hk_usage_shm *s;
	struct hk_usage *u = NULL;
	struct tree tr;

	(void)state;
	tree_open(&tr, "usage");
	fixture_write(tr.dir, "proc/sysvipc/shm", shm);
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	/* 4 pages x 512 x 2 MiB: 4 pages; 2 pages faulted of 4; 11 is on base pages. */
	assert_int_equal(hk_usage_shm(u, &s), 2);
	assert_int_equal(s[0].id, 9);
	assert_int_equal(s[0].pages, 4);
	assert_int_equal(s[1].id, 10);
	assert_int_equal(s[1].pages, 2);
	hk_usage_unref(u);
	tree_close(&tr);
}

/* A file of len bytes in the tree, allocated for real (its pages are its blocks). */
static void alloc_file(const struct tree *t, const char *rel, off_t len)
{
	char path[4096];
	int fd;

	fixture_write(t->dir, rel, "");
	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	if (len)
		assert_int_equal(posix_fallocate(fd, 0, len), 0);
	close(fd);
}

/* Append text to a file of the tree. */
static void tree_append(const struct tree *t, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	f = fopen(path, "a");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static const struct hk_usage_shm *shm_of(const struct hk_usage *u, int id)
{
	const struct hk_usage_shm *s;
	size_t n = hk_usage_shm(u, &s);

	for (size_t i = 0; i < n; i++)
		if (s[i].id == id)
			return &s[i];
	return NULL;
}

/*
 * Segment 8 (64 MiB, rss whole 2M pages) is mapped by postgres (4848) on 4 kB
 * pages: not huge, not listed, not accounted. Without a readable attacher it
 * is inferred, but the pool's used pages (all accounted) leave no room for
 * it: listed as inferred, kept out of accounted and named in the total.
 */
static void test_usage_shm_base_pages(void **state)
{
	struct hk_usage *u = NULL;
	const struct hk_usage_shm *s;
	const struct hk_usage_total *t;
	struct tree tr;

	(void)state;
	usage_tree(&tr);
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	assert_null(shm_of(u, 8));
	t = total_of(u, 2 * MiB);
	assert_int_equal(t->accounted, 12);
	assert_int_equal(t->inferred, 0);
	hk_usage_unref(u);

	/* Its process unreadable (here: gone): inferred, possibly huge, not accounted. */
	for (size_t i = 0; i < 3; i++) {
		static const char *const names[] = {"comm", "status", "smaps"};
		char path[4096];

		snprintf(path, sizeof(path), "%s/proc/4848/%s", tr.dir, names[i]);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	s = shm_of(u, 8);
	assert_non_null(s);
	assert_true(s->inferred);
	assert_int_equal(s->pages, 32);
	assert_false(s->accounted);
	t = total_of(u, 2 * MiB);
	assert_int_equal(t->used, 12);
	assert_int_equal(t->accounted, 12);
	assert_int_equal(t->difference, 0);
	assert_int_equal(t->inferred, 32);
	/* The detached segment 6 (1 page) is still counted: the pool has room for it. */
	assert_true(shm_of(u, 6)->inferred);
	assert_true(shm_of(u, 6)->accounted);
	hk_usage_unref(u);
	tree_close(&tr);
}

static const struct hk_usage_file *file_of(const struct hk_usage *u, const char *path)
{
	const struct hk_usage_file *f;
	size_t n = hk_usage_files(u, &f);

	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].path, path) == 0)
			return &f[i];
	return NULL;
}

/* Each mount and the cgroups have their own entry budget; a budget reached is unread. */
static void test_usage_walk_budgets(void **state)
{
	const struct hkc_usage_limits lim = {
		.mount_entries = 2, .mount_depth = 32, .cgroups = 100, .cgroup_depth = 16};
	const struct hkc_usage_limits cg1 = {
		.mount_entries = 100, .mount_depth = 32, .cgroups = 1, .cgroup_depth = 16};
	const struct hk_usage_cgroup *c;
	struct hk_usage *u = NULL;
	struct tree tr;

	(void)state;
	usage_tree(&tr);
	/* Three entries on /dev/hugepages, one file on a second mount. */
	alloc_file(&tr, "dev/hugepages/empty", 0);
	alloc_file(&tr, "mnt/two/f", 2 * MiB);
	tree_append(&tr, "proc/self/mountinfo",
		    "48 27 0:43 / /mnt/two rw,relatime - hugetlbfs none rw,pagesize=2M\n");

	assert_int_equal(hkc_usage_read_limited(tr.ctx, &lim, &u), 0);
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_DIRS), 1);
	assert_non_null(file_of(u, "/mnt/two/f"));
	assert_int_equal(hk_usage_cgroups(u, &c), 1);
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS), 0);
	hk_usage_unref(u);

	/* Two cgroups, a budget of one: the other is unread, the files all there. */
	assert_int_equal(hkc_usage_read_limited(tr.ctx, &cg1, &u), 0);
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS), 1);
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_DIRS), 0);
	assert_non_null(file_of(u, "/dev/hugepages/data"));
	assert_non_null(file_of(u, "/mnt/two/f"));
	hk_usage_unref(u);
	tree_close(&tr);
}

/* Directories deeper than the bounds (34 below a mount, 18 below the cgroup root) are unread. */
static void test_usage_walk_depth(void **state)
{
	char rel[4096] = "dev/hugepages", cg[4096] = "sys/fs/cgroup";
	const struct hk_usage_cgroup *c;
	struct hk_usage *u = NULL;
	struct tree tr;

	(void)state;
	usage_tree(&tr);
	for (int i = 0; i < 34; i++)
		strcat(rel, "/d");
	strcat(rel, "/deep");
	alloc_file(&tr, rel, 2 * MiB);
	alloc_file(&tr, "dev/hugepages/d/d/shallow", 2 * MiB);
	for (int i = 0; i < 18; i++)
		strcat(cg, "/g");
	strcat(cg, "/cgroup.controllers");
	fixture_write(tr.dir, cg, "hugetlb\n");

	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	assert_null(file_of(u, "/dev/hugepages/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/"
			       "d/d/d/d/d/d/d/d/deep"));
	assert_non_null(file_of(u, "/dev/hugepages/d/d/shallow"));
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_DIRS), 1);
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS), 1);
	assert_int_equal(hk_usage_cgroups(u, &c), 1);
	hk_usage_unref(u);
	tree_close(&tr);
}

/* v1's "no limit": the page counter's largest value, in whole pages of the size, in bytes. */
#define V1_NO_LIMIT_2M "9223372036854771712\n"
#define V1_NO_LIMIT_1G "9223372035781033984\n"

/*
 * The usage tree with a cgroup v1 hugetlb hierarchy at sys/fs/cgroup/hugetlb
 * (its tasks file): its root group (skipped, it limits nothing), /db with
 * both counters' files, /db/inner without the rsvd files (before 5.7), /old
 * without failcnt. The v2 groups of the tree stay; the v2 root still offers
 * hugetlb, so v2 is read until a test takes hugetlb out of it.
 */
static void v1_tree(struct tree *t)
{
	static const char *const files[][2] = {
		{"tasks", "1\n"},
		{"hugetlb.2MB.usage_in_bytes", "14680064\n"},
		{"hugetlb.2MB.limit_in_bytes", V1_NO_LIMIT_2M},
		{"hugetlb.2MB.failcnt", "0\n"},
		{"db/hugetlb.2MB.usage_in_bytes", "6291456\n"},
		{"db/hugetlb.2MB.max_usage_in_bytes", "10485760\n"},
		{"db/hugetlb.2MB.limit_in_bytes", "20971520\n"},
		{"db/hugetlb.2MB.failcnt", "2\n"},
		{"db/hugetlb.2MB.rsvd.usage_in_bytes", "8388608\n"},
		{"db/hugetlb.2MB.rsvd.limit_in_bytes", V1_NO_LIMIT_2M},
		{"db/hugetlb.2MB.rsvd.failcnt", "1\n"},
		{"db/hugetlb.1GB.usage_in_bytes", "0\n"},
		{"db/hugetlb.1GB.limit_in_bytes", V1_NO_LIMIT_1G},
		{"db/hugetlb.1GB.failcnt", "0\n"},
		{"db/hugetlb.1GB.rsvd.usage_in_bytes", "0\n"},
		{"db/hugetlb.1GB.rsvd.limit_in_bytes", V1_NO_LIMIT_1G},
		{"db/hugetlb.1GB.rsvd.failcnt", "0\n"},
		{"db/inner/hugetlb.2MB.usage_in_bytes", "2097152\n"},
		{"db/inner/hugetlb.2MB.limit_in_bytes", V1_NO_LIMIT_2M},
		{"db/inner/hugetlb.2MB.failcnt", "0\n"},
		{"old/hugetlb.2MB.usage_in_bytes", "0\n"},
		{"old/hugetlb.2MB.limit_in_bytes", "4194304\n"},
	};
	char rel[256];

	usage_tree(t);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(rel, sizeof(rel), "sys/fs/cgroup/hugetlb/%s", files[i][0]);
		fixture_write(t->dir, rel, files[i][1]);
	}
}

static const struct hk_usage_cgroup *cgroup_of(const struct hk_usage *u, const char *path,
					       uint64_t size)
{
	const struct hk_usage_cgroup *c;
	size_t n = hk_usage_cgroups(u, &c);

	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].path, path) == 0 && c[i].page_size == size)
			return &c[i];
	return NULL;
}

/* Where v2 does not offer hugetlb and v1 holds it: v1's files, the same fields. */
static void test_usage_cgroup_v1(void **state)
{
	const struct hk_usage_cgroup *c;
	struct hk_usage *u = NULL;
	struct tree tr;
	char path[4096];

	(void)state;
	v1_tree(&tr);
	/* hugetlb not in the v2 root's controllers ("hugetlbx" is another name). */
	fixture_write(tr.dir, "sys/fs/cgroup/cgroup.controllers", "cpuset hugetlbx memory pids\n");
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	assert_int_equal(hk_usage_cgroups(u, &c), 3);
	/* Sorted by path; the v2 group /db.slice is not read, nor v1's root group. */
	assert_string_equal(c[0].path, "/db");
	assert_int_equal(c[0].version, 1);
	assert_int_equal(c[0].page_size, 2 * MiB);
	assert_int_equal(c[0].current, 3 * 2 * MiB);
	assert_int_equal(c[0].max, 10 * 2 * MiB);
	assert_int_equal(c[0].rsvd_current, 4 * 2 * MiB);
	assert_int_equal(c[0].rsvd_max, UINT64_MAX);
	/* failcnt 2 + rsvd.failcnt 1, as v2's events "max" counts both. */
	assert_int_equal(c[0].events_max, 3);
	/* No rsvd files (before 5.7): nothing reserved known, no reservation limit. */
	assert_string_equal(c[1].path, "/db/inner");
	assert_int_equal(c[1].version, 1);
	assert_int_equal(c[1].current, 2 * MiB);
	assert_int_equal(c[1].max, UINT64_MAX);
	assert_int_equal(c[1].rsvd_current, 0);
	assert_int_equal(c[1].rsvd_max, UINT64_MAX);
	assert_int_equal(c[1].events_max, 0);
	/* A limit alone is listed; no failcnt: failures unknown. */
	assert_string_equal(c[2].path, "/old");
	assert_int_equal(c[2].current, 0);
	assert_int_equal(c[2].max, 2 * 2 * MiB);
	assert_int_equal(c[2].events_max, UINT64_MAX);
	assert_null(cgroup_of(u, "/db", 1024 * MiB));
	assert_int_equal(hk_usage_unread_count(u, HK_USAGE_UNREAD_CGROUPS), 0);
	hk_usage_unref(u);

	/* The hybrid layout: no v2 at the root, v2 at unified/ without hugetlb. */
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/cgroup.controllers", tr.dir);
	assert_int_equal(unlink(path), 0);
	fixture_write(tr.dir, "sys/fs/cgroup/unified/cgroup.controllers", "cpu memory pids\n");
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	assert_int_equal(hk_usage_cgroups(u, &c), 3);
	assert_string_equal(c[0].path, "/db");
	assert_int_equal(c[0].version, 1);
	assert_int_equal(c[0].events_max, 3);
	hk_usage_unref(u);

	/* A failcnt that is no number: failures unknown, the rest read. */
	fixture_write(tr.dir, "sys/fs/cgroup/hugetlb/db/hugetlb.2MB.failcnt", "x\n");
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	c = cgroup_of(u, "/db", 2 * MiB);
	assert_non_null(c);
	assert_int_equal(c->events_max, UINT64_MAX);
	assert_int_equal(c->current, 3 * 2 * MiB);
	hk_usage_unref(u);
	tree_close(&tr);
}

/* The tree's usage lists one cgroup: path, read from cgroup version. */
static void assert_one_cgroup(struct tree *tr, const char *path, int version)
{
	const struct hk_usage_cgroup *c;
	struct hk_usage *u = NULL;

	assert_int_equal(hk_usage_read(tr->ctx, &u), 0);
	assert_int_equal(hk_usage_cgroups(u, &c), 1);
	assert_string_equal(c[0].path, path);
	assert_int_equal(c[0].version, version);
	hk_usage_unref(u);
}

/* The hierarchy chosen as hugeadm's [cgroup] plan chooses it (lib/core/plan.c's cgroup_root). */
static void test_usage_cgroup_choice(void **state)
{
	struct tree tr;
	char path[4096];

	(void)state;
	v1_tree(&tr);
	/* v2 at the root offers hugetlb: v2, whatever v1 holds. */
	assert_one_cgroup(&tr, "/db.slice", 2);

	/* The root does not, unified/ does: v2 at unified/. */
	fixture_write(tr.dir, "sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
	fixture_write(tr.dir, "sys/fs/cgroup/unified/cgroup.controllers", "memory hugetlb\n");
	fixture_write(tr.dir, "sys/fs/cgroup/unified/u.slice/hugetlb.2MB.current", "2097152\n");
	fixture_write(tr.dir, "sys/fs/cgroup/unified/u.slice/hugetlb.2MB.max", "max\n");
	assert_one_cgroup(&tr, "/u.slice", 2);

	/* Neither offers hugetlb, no v1 hierarchy (no tasks file): v2 at the root, as before. */
	fixture_write(tr.dir, "sys/fs/cgroup/unified/cgroup.controllers", "memory\n");
	fixture_write(tr.dir, "sys/fs/cgroup/unified/u.slice/hugetlb.2MB.current", "0\n");
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/hugetlb/tasks", tr.dir);
	assert_int_equal(unlink(path), 0);
	assert_one_cgroup(&tr, "/db.slice", 2);
	tree_close(&tr);
}

/* A hugetlbfs mount with pagesize=0 (or a size the kernel lacks): the default size, no crash. */
static void test_usage_mount_pagesize_zero(void **state)
{
	struct hk_usage *u = NULL;
	const struct hk_usage_file *f;
	struct tree tr;

	(void)state;
	usage_tree(&tr);
	alloc_file(&tr, "mnt/x/f", 4 * MiB);
	alloc_file(&tr, "mnt/y/f", 4 * MiB);
	tree_append(&tr, "proc/self/mountinfo",
		    "47 27 0:42 / /mnt/x rw,relatime - hugetlbfs none rw,pagesize=0\n"
		    "49 27 0:44 / /mnt/y rw,relatime - hugetlbfs none rw,pagesize=3M\n");
	assert_int_equal(hk_usage_read(tr.ctx, &u), 0);
	f = file_of(u, "/mnt/x/f");
	assert_non_null(f);
	assert_int_equal(f->page_size, 2 * MiB);
	assert_int_equal(f->pages, 2);
	assert_int_equal(file_of(u, "/mnt/y/f")->page_size, 2 * MiB);
	hk_usage_unref(u);
	tree_close(&tr);
}

/*
 * A pid reused between two reads: the usage walk opens proc/PID once and
 * reads smaps, status, comm and numa_maps through that fd. Here the
 * directory is replaced after it was opened; the reads still see the first.
 */
static void test_proc_dir_fd_pid_reuse(void **state)
{
	struct hkc_path p;
	char old[4096], now[4096], *buf = NULL;
	struct tree tr;
	int fd;

	(void)state;
	tree_open(&tr, "usage");
	assert_int_equal(hkc_path_init(&p, tr.dir), 0);
	fd = hkc_path_openf(&p, O_RDONLY | O_DIRECTORY, "proc/4242");
	assert_true(fd >= 0);
	snprintf(old, sizeof(old), "%s/proc/4242", tr.dir);
	snprintf(now, sizeof(now), "%s/proc/4242.gone", tr.dir);
	assert_int_equal(rename(old, now), 0);
	fixture_write(tr.dir, "proc/4242/comm", "impostor\n");
	assert_int_equal(hkc_path_read_all_at(&p, fd, "proc/4242", "comm", &buf, NULL), 0);
	assert_string_equal(buf, "bigheap\n");
	free(buf);
	/* One component only; a symbolic link is not followed. */
	assert_int_equal(hkc_path_read_all_at(&p, fd, "proc/4242", "../4343/comm", &buf, NULL),
			 -EINVAL);
	assert_int_equal(symlinkat("comm", fd, "link"), 0);
	assert_int_equal(hkc_path_read_all_at(&p, fd, "proc/4242", "link", &buf, NULL), -EXDEV);
	close(fd);
	hkc_path_fini(&p);
	tree_close(&tr);
}

/* One entry of hk_pages_needed: its page size and pages, then each count. */
static void assert_needed(const struct hk_pages_needed *p, uint64_t page_size, uint64_t pages,
			  uint64_t heap, uint64_t anon, uint64_t shared, uint64_t sysv,
			  uint64_t hugetlb)
{
	assert_int_equal(p->page_size, page_size);
	assert_int_equal(p->pages, pages);
	assert_int_equal(p->heap_pages, heap);
	assert_int_equal(p->anon_pages, anon);
	assert_int_equal(p->shared_pages, shared);
	assert_int_equal(p->sysv_pages, sysv);
	assert_int_equal(p->hugetlb_pages, hugetlb);
}

static void test_pages_needed(void **state)
{
	struct hk_pages_needed *pn = NULL;
	struct tree tr;
	size_t n = 0;

	(void)state;
	tree_open(&tr, "usage");
	assert_int_equal(hk_pages_needed(tr.ctx, 4242, &pn, &n), 0);
	assert_int_equal(n, 2);
	/* 2 MiB: heap 300 MiB = 150; 10 MiB + 8 KiB = 5 + 1; SysV 3000 KiB = 2; hugetlb 4 + 2. */
	assert_needed(&pn[0], 2 * MiB, 164, 150, 6, 0, 2, 6);
	/*
	 * 1 GiB: every mapping is smaller than a page; their sum, 325 MiB and 8 KiB,
	 * is one page (each rounded up alone, they made 6 GiB). Each count: 1.
	 */
	assert_needed(&pn[1], 1024 * MiB, 1, 1, 1, 0, 1, 1);
	free(pn);
	assert_int_equal(hk_pages_needed(tr.ctx, 999, &pn, &n), -ESRCH);
	assert_int_equal(hk_pages_needed(tr.ctx, 0, &pn, &n), -ESRCH);
	/* A kernel thread: nothing needed. */
	assert_int_equal(hk_pages_needed(tr.ctx, 4646, &pn, &n), 0);
	assert_int_equal(pn[0].pages, 0);
	free(pn);
	tree_close(&tr);
}

/*
 * dbshared (4949), mostly untouched: each mapping at its size, not its
 * resident memory. Shared: "/dev/zero (deleted)" 550 MiB (2 MiB resident) =
 * 275 and "[anon_shmem:buffers]" 6 MiB = 3; anonymous: 100 MiB (1 MiB
 * resident) = 50, "[anon:...]" 4 MiB = 2 and 8 KiB summed = 1; heap 4 MiB
 * (132 KiB resident) = 2; SysV segment 7, 3000 KiB = 2. Nothing for the
 * program's file mappings, a PROT_NONE reservation, a read-only private
 * anonymous page, a thread stack ("nh"), a 1 TiB MAP_NORESERVE mapping
 * ("nr") and the stack. By resident memory it was 3 pages.
 */
static void test_pages_needed_sizes(void **state)
{
	struct hk_pages_needed *pn = NULL;
	struct tree tr;
	size_t n = 0;

	(void)state;
	tree_open(&tr, "usage");
	assert_int_equal(hk_pages_needed(tr.ctx, 4949, &pn, &n), 0);
	assert_int_equal(n, 2);
	assert_needed(&pn[0], 2 * MiB, 335, 2, 53, 278, 2, 0);
	/* 1 GiB: 667 MiB and 8 KiB in all, no mapping of a page: 1, and 1 in each count. */
	assert_needed(&pn[1], 1024 * MiB, 1, 1, 1, 1, 1, 0);
	free(pn);
	tree_close(&tr);
}

/*
 * Hugetlb mappings count at their size (the pool sets it aside at mmap),
 * touched or not; a MAP_NORESERVE one ("nr") counts what it holds. A 4 MiB +
 * 4 KiB private anonymous mapping is 3 pages of 2 MiB, not 2.
 */
static void test_pages_needed_hugetlb(void **state)
{
	static const char smaps[] =
		"7f1000000000-7f1000800000 rw-p 00000000 00:10 3001 /anon_hugepage (deleted)\n"
		"KernelPageSize:     2048 kB\n"
		"Private_Hugetlb:    2048 kB\n"
		"VmFlags: rd wr mr mw me de ht \n"
		"7f2000000000-7f2000800000 rw-s 00000000 00:10 3002 /anon_hugepage (deleted)\n"
		"KernelPageSize:     2048 kB\n"
		"Shared_Hugetlb:     2048 kB\n"
		"VmFlags: rd wr sh mr mw me de ht nr \n"
		"7f3000000000-7f3000401000 rw-p 00000000 00:00 0 \n"
		"Anonymous:             4 kB\n"
		"VmFlags: rd wr mr mw me ac \n";
	struct hk_pages_needed *pn = NULL;
	struct tree tr;
	size_t n = 0;

	(void)state;
	tree_open(&tr, "usage");
	fixture_write(tr.dir, "proc/5050/smaps", smaps);
	assert_int_equal(hk_pages_needed(tr.ctx, 5050, &pn, &n), 0);
	assert_int_equal(pn[0].hugetlb_pages, 4 + 1);
	assert_int_equal(pn[0].anon_pages, 3);
	assert_int_equal(pn[0].pages, 8);
	free(pn);
	tree_close(&tr);
}

/* Programs built against HK_1.1 to 1.3 get the same figures in the struct they know. */
static void test_pages_needed_v1_1(void **state)
{
	struct hkc_pages_needed_v1_1 *old = NULL;
	struct hk_pages_needed *pn = NULL;
	struct tree tr;
	size_t n = 0, n_old = 0;

	(void)state;
	assert_int_equal(sizeof(*old), 6 * sizeof(uint64_t));
	tree_open(&tr, "usage");
	assert_int_equal(hk_pages_needed(tr.ctx, 4949, &pn, &n), 0);
	assert_int_equal(hkc_pages_needed_v1_1(tr.ctx, 4949, &old, &n_old), 0);
	assert_int_equal(n_old, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(old[i].page_size, pn[i].page_size);
		assert_int_equal(old[i].pages, pn[i].pages);
		assert_int_equal(old[i].heap_pages, pn[i].heap_pages);
		assert_int_equal(old[i].anon_pages, pn[i].anon_pages);
		assert_int_equal(old[i].sysv_pages, pn[i].sysv_pages);
		assert_int_equal(old[i].hugetlb_pages, pn[i].hugetlb_pages);
	}
	assert_int_equal(old[1].page_size, 1024 * MiB);
	assert_int_equal(old[0].pages, 335);
	free(pn);
	free(old);
	assert_int_equal(hkc_pages_needed_v1_1(tr.ctx, 999, &old, &n_old), -ESRCH);
	tree_close(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smaps_parse),
		cmocka_unit_test(test_smaps_sysv_key),
		cmocka_unit_test(test_usage_tree),
		cmocka_unit_test(test_usage_shm_rss_scaled),
		cmocka_unit_test(test_pages_needed),
		cmocka_unit_test(test_pages_needed_sizes),
		cmocka_unit_test(test_pages_needed_hugetlb),
		cmocka_unit_test(test_pages_needed_v1_1),
		cmocka_unit_test(test_usage_shm_base_pages),
		cmocka_unit_test(test_usage_walk_budgets),
		cmocka_unit_test(test_usage_walk_depth),
		cmocka_unit_test(test_usage_mount_pagesize_zero),
		cmocka_unit_test(test_usage_cgroup_v1),
		cmocka_unit_test(test_usage_cgroup_choice),
		cmocka_unit_test(test_proc_dir_fd_pid_reuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
