// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Live collapse (lib/core/collapse.c) on fixture smaps: which mappings are
 * chosen and their whole 2 MiB parts, the asking loop against a fake
 * process_madvise (batches, partial advice, a refusal in the middle, an
 * error of the whole process), the accounting after and the reasons of
 * refusals; and hk_collapse_process on the tree "collapse" (a dry run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <hugekit/hugekit.h>

#include "collapse.h"
#include "kconst.h"
#include "tree.h"

#define MIB (1024 * 1024ULL)

/*
 * One mapping of smaps: header, the fields the collapse reads, VmFlags. huge:
 * AnonHugePages of an anonymous mapping, FilePmdMapped of a file's.
 */
static char *map(uint64_t start, uint64_t end, const char *perms, uint64_t off, uint64_t ino,
		 const char *name, uint64_t rss, uint64_t huge, const char *flags)
{
	uint64_t ahp = ino ? 0 : huge, fpmd = ino ? huge : 0;
	char *s;

	assert_true(
		asprintf(&s,
			 "%09jx-%09jx %s %08jx fe:00 %ju %s\nRss: %ju kB\nAnonHugePages: %ju kB\n"
			 "FilePmdMapped: %ju kB\nVmFlags: %s\n",
			 (uintmax_t)start, (uintmax_t)end, perms, (uintmax_t)off, (uintmax_t)ino,
			 name, (uintmax_t)rss, (uintmax_t)ahp, (uintmax_t)fpmd, flags) > 0);
	return s;
}

static void parse(const char *buf, struct hkc_smap **m, size_t *n)
{
	assert_int_equal(hkc_smaps_parse(buf, m, n), 0);
}

static void test_kind(void **state)
{
	static const struct {
		const char *line;
		int kind;
	} cases[] = {
		{"00400000-00600000 rw-p 0 00:00 0 [heap]\n", HK_COLLAPSE_KIND_HEAP},
		{"00400000-00600000 rw-p 0 00:00 0 \n", HK_COLLAPSE_KIND_HEAP},
		{"00400000-00600000 rw-p 0 00:00 0 [anon:arena]\n", HK_COLLAPSE_KIND_HEAP},
		{"00400000-00600000 rw-p 0 00:00 0 [stack]\n", -1},
		{"00400000-00600000 r--p 0 00:00 0 \n", -1},
		{"00400000-00600000 rw-s 0 00:01 4 /dev/zero (deleted)\n", -1},
		{"00400000-00600000 rw-s 0 00:01 4 [anon_shmem:buf]\n", -1},
		{"00400000-00600000 rw-p 0 00:10 9 /anon_hugepage (deleted)\nVmFlags: rd wr ht\n",
		 -1},
		{"00400000-00600000 rw-p 0 00:00 0 \nVmFlags: rd wr ht\n", -1},
		{"00400000-00600000 rw-p 0 00:00 0 \nVmFlags: rd wr nr\n", -1},
		{"00400000-00600000 r-xp 0 fe:00 7 /usr/bin/prog\n", HK_COLLAPSE_KIND_TEXT},
		{"00400000-00600000 r-xp 0 fe:00 7 /usr/bin/prog (deleted)\n",
		 HK_COLLAPSE_KIND_TEXT},
		{"00400000-00600000 r--p 0 fe:00 7 /usr/bin/prog\n", -1},
		{"00400000-00600000 rw-p 0 fe:00 7 /usr/bin/prog\n", -1},
		{"00400000-00600000 r-xs 0 fe:00 7 /usr/bin/prog\n", -1},
		{"00400000-00600000 r-xp 0 00:00 0 [vdso]\n", -1},
		{"ffffffffff600000-ffffffffff601000 --xp 0 00:00 0 [vsyscall]\n", -1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hkc_smap *m;
		size_t n;

		parse(cases[i].line, &m, &n);
		assert_int_equal(n, 1);
		if (hkl_collapse_kind(&m[0]) != cases[i].kind)
			fail_msg("%s: kind %d, wanted %d", cases[i].line, hkl_collapse_kind(&m[0]),
				 cases[i].kind);
		hkc_smaps_free(m, n);
	}
}

/* A collapse of kinds over buf, selected (pmd 2 MiB). */
static struct hk_collapse *selected(const char *buf, unsigned kinds, bool thp_disabled)
{
	struct hk_collapse *c = calloc(1, sizeof(*c));
	struct hkc_smap *m;
	size_t n;

	assert_non_null(c);
	c->kinds = kinds;
	c->pmd_size = 2 * MIB;
	c->thp_disabled = thp_disabled;
	parse(buf, &m, &n);
	assert_int_equal(hkl_collapse_select(c, m, n), 0);
	hkc_smaps_free(m, n);
	return c;
}

/* The fixture tree's process 5151: every kind of mapping once (tests/fixtures/README.md). */
static char *fixture_smaps(void)
{
	char *dir = fixture_copy("collapse"), path[4096], *buf = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/5151/smaps", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&buf, &len, '\0', f) > 0);
	fclose(f);
	fixture_remove(dir);
	return buf;
}

static void test_select(void **state)
{
	char *buf = fixture_smaps();
	struct hk_collapse *c = selected(buf, HK_COLLAPSE_HEAP | HK_COLLAPSE_TEXT, false);
	const struct hk_collapse_total *heap = hk_collapse_total(c, HK_COLLAPSE_KIND_HEAP);
	const struct hk_collapse_total *text = hk_collapse_total(c, HK_COLLAPSE_KIND_TEXT);
	/* start, from, to, result, why, in address order */
	static const struct {
		uint64_t start, from, to;
		enum hk_collapse_result result;
		enum hk_collapse_why why;
	} want[] = {
		{0x555555600000, 0x555555600000, 0x555555e00000, HK_COLLAPSE_NOT_ASKED, 0},
		{0x555557000000, 0x555557000000, 0x555557400000, HK_COLLAPSE_NOT_ASKED, 0},
		{0x7f0000000000, 0x7f0000000000, 0x7f0010000000, HK_COLLAPSE_NOT_ASKED, 0},
		/* unaligned start: the whole part after it */
		{0x7f0010001000, 0x7f0010200000, 0x7f0010400000, HK_COLLAPSE_NOT_ASKED, 0},
		{0x7f0010400000, 0x7f0010400000, 0x7f0010400000, HK_COLLAPSE_TOO_SMALL, 0},
		{0x7f0010600000, 0x7f0010600000, 0x7f0010a00000, HK_COLLAPSE_NOT_ASKED,
		 HK_COLLAPSE_WHY_NOHUGEPAGE},
		/* libbig.so: address and file offset 4 KiB apart */
		{0x7f0011000000, 0x7f0011000000, 0x7f0011400000, HK_COLLAPSE_MISALIGNED, 0},
		{0x7f0011400000, 0x7f0011400000, 0x7f0011400000, HK_COLLAPSE_TOO_SMALL, 0},
	};

	(void)state;
	assert_int_equal(hk_collapse_count(c), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < hk_collapse_count(c); i++) {
		const struct hk_collapse_range *r = hk_collapse_range_at(c, i);

		assert_true(r->start == want[i].start);
		assert_true(r->from == want[i].from);
		assert_true(r->to == want[i].to);
		assert_int_equal(r->result, want[i].result);
		assert_int_equal(r->why, want[i].why);
	}
	assert_null(hk_collapse_range_at(c, hk_collapse_count(c)));
	assert_string_equal(hk_collapse_range_at(c, 1)->name, "[heap]");
	assert_string_equal(hk_collapse_range_at(c, 0)->perms, "r-xp");
	/* [heap], 256 MiB, the unaligned 4 MiB, the 1 MiB, [anon:arena]: nothing else. */
	assert_int_equal(heap->before.mappings, 5);
	assert_int_equal(heap->before.rss_kb, 4096 + 262144 + 100 + 1024 + 512);
	assert_int_equal(heap->before.huge_kb, 2048);
	assert_int_equal(heap->asked, 4);
	assert_int_equal(heap->asked_kb, 4096 + 262144 + 2048 + 4096);
	assert_memory_equal(&heap->after, &heap->before, sizeof(heap->before));
	assert_int_equal(text->before.mappings, 3);
	assert_int_equal(text->before.rss_kb, 8192 + 1000 + 1200);
	assert_int_equal(text->asked, 1);
	assert_int_equal(text->asked_kb, 8192);
	hk_collapse_free(c);
	/* The heap alone: no text range, no text total. */
	c = selected(buf, HK_COLLAPSE_HEAP, true);
	assert_int_equal(hk_collapse_count(c), 5);
	assert_null(hk_collapse_total(c, HK_COLLAPSE_KIND_TEXT));
	assert_non_null(hk_collapse_total(c, HK_COLLAPSE_KIND_HEAP));
	/* THP off for the process: every range to ask would be refused for it (nh first). */
	assert_int_equal(hk_collapse_range_at(c, 0)->why, HK_COLLAPSE_WHY_THP_DISABLED);
	assert_int_equal(hk_collapse_range_at(c, 4)->why, HK_COLLAPSE_WHY_NOHUGEPAGE);
	hk_collapse_free(c);
	free(buf);
}

/* ---- the asking loop against a fake process_madvise ---- */

/* Each call: the iovecs' start addresses; the fake refuses listed addresses. */
static struct {
	size_t calls, sizes[16];
	uint64_t first[16];
	uint64_t refuse[4];
	int refuse_errno[4];
	int whole_error;     /* an error of the process, for every call */
	ssize_t short_by;    /* bytes the first successful call leaves out of its last range */
	bool advise_nothing; /* return 0 */
} fake;

static ssize_t fake_madvise(int pidfd, const struct iovec *iov, size_t n, int advice,
			    unsigned flags)
{
	ssize_t done = 0;

	assert_int_equal(pidfd, 42);
	assert_int_equal(advice, MADV_COLLAPSE);
	assert_int_equal(flags, 0);
	assert_true(n >= 1 && n <= HKL_COLLAPSE_IOV_MAX);
	if (fake.calls < 16) {
		fake.sizes[fake.calls] = n;
		fake.first[fake.calls] = (uintptr_t)iov[0].iov_base;
	}
	fake.calls++;
	if (fake.whole_error) {
		errno = fake.whole_error;
		return -1;
	}
	if (fake.advise_nothing)
		return 0;
	for (size_t i = 0; i < n; i++) {
		for (int r = 0; r < 4; r++) {
			if (fake.refuse[r] && fake.refuse[r] == (uintptr_t)iov[i].iov_base) {
				/* The kernel: what it advised before, else the error. */
				if (done)
					return done;
				errno = fake.refuse_errno[r];
				return -1;
			}
		}
		done += (ssize_t)iov[i].iov_len;
	}
	if (fake.short_by) {
		done -= fake.short_by;
		fake.short_by = 0;
	}
	return done;
}

/* n anonymous mappings of 4 MiB, 2 MiB apart (each its own range). */
static char *four_mib_maps(size_t n)
{
	char *buf = calloc(n, 128);
	size_t len = 0;

	assert_non_null(buf);
	for (size_t i = 0; i < n; i++) {
		uint64_t s = 0x100000000ULL + i * 6 * MIB;

		len += (size_t)sprintf(buf + len, "%jx-%jx rw-p 0 00:00 0 \nRss: 4096 kB\n",
				       (uintmax_t)s, (uintmax_t)(s + 4 * MIB));
	}
	return buf;
}

static uint64_t range_start(size_t i)
{
	return 0x100000000ULL + i * 6 * MIB;
}

static void test_ask_refusals(void **state)
{
	char *buf = four_mib_maps(4);
	struct hk_collapse *c = selected(buf, HK_COLLAPSE_HEAP, false);

	(void)state;
	memset(&fake, 0, sizeof(fake));
	/* The second refused (EINVAL), the fourth too (ENOMEM): asked again after each. */
	fake.refuse[0] = range_start(1);
	fake.refuse_errno[0] = EINVAL;
	fake.refuse[1] = range_start(3);
	fake.refuse_errno[1] = ENOMEM;
	assert_int_equal(hkl_collapse_ask(c, 42, fake_madvise), 0);
	assert_int_equal(fake.calls, 4);
	assert_true(fake.first[0] == range_start(0) && fake.sizes[0] == 4);
	assert_true(fake.first[1] == range_start(1) && fake.sizes[1] == 3);
	assert_true(fake.first[2] == range_start(2) && fake.sizes[2] == 2);
	assert_true(fake.first[3] == range_start(3) && fake.sizes[3] == 1);
	assert_int_equal(c->ranges[0].result, HK_COLLAPSE_COLLAPSED);
	assert_int_equal(c->ranges[1].result, HK_COLLAPSE_REFUSED);
	assert_int_equal(c->ranges[1].error, EINVAL);
	assert_int_equal(c->ranges[2].result, HK_COLLAPSE_COLLAPSED);
	assert_int_equal(c->ranges[3].result, HK_COLLAPSE_REFUSED);
	assert_int_equal(c->ranges[3].error, ENOMEM);
	hk_collapse_free(c);
	free(buf);
}

static void test_ask_batches(void **state)
{
	const size_t n = 2 * HKL_COLLAPSE_IOV_MAX + 452;
	char *buf = four_mib_maps(n);
	struct hk_collapse *c = selected(buf, HK_COLLAPSE_HEAP, false);

	(void)state;
	memset(&fake, 0, sizeof(fake));
	assert_int_equal(hkl_collapse_ask(c, 42, fake_madvise), 0);
	/* At most UIO_MAXIOV ranges a call, each batch from where the last ended. */
	assert_int_equal(fake.calls, 3);
	assert_int_equal(fake.sizes[0], HKL_COLLAPSE_IOV_MAX);
	assert_int_equal(fake.sizes[1], HKL_COLLAPSE_IOV_MAX);
	assert_int_equal(fake.sizes[2], 452);
	assert_true(fake.first[1] == range_start(HKL_COLLAPSE_IOV_MAX));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c->ranges[i].result, HK_COLLAPSE_COLLAPSED);
	hk_collapse_free(c);
	free(buf);
}

static void test_ask_partial(void **state)
{
	char *buf = four_mib_maps(3);
	struct hk_collapse *c = selected(buf, HK_COLLAPSE_HEAP, false);

	(void)state;
	/* A call that stops inside the last range: that range is asked again. */
	memset(&fake, 0, sizeof(fake));
	fake.short_by = 4096;
	assert_int_equal(hkl_collapse_ask(c, 42, fake_madvise), 0);
	assert_int_equal(fake.calls, 2);
	assert_true(fake.first[1] == range_start(2) && fake.sizes[1] == 1);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(c->ranges[i].result, HK_COLLAPSE_COLLAPSED);
	hk_collapse_free(c);
	/* A call that advises nothing and says nothing: each range once, never a loop. */
	c = selected(buf, HK_COLLAPSE_HEAP, false);
	memset(&fake, 0, sizeof(fake));
	fake.advise_nothing = true;
	assert_int_equal(hkl_collapse_ask(c, 42, fake_madvise), 0);
	assert_int_equal(fake.calls, 3);
	assert_int_equal(c->ranges[2].result, HK_COLLAPSE_REFUSED);
	assert_int_equal(c->ranges[2].error, EIO);
	hk_collapse_free(c);
	/* An error of the whole process: returned, the ranges left as they were. */
	c = selected(buf, HK_COLLAPSE_HEAP, false);
	memset(&fake, 0, sizeof(fake));
	fake.whole_error = ESRCH;
	assert_int_equal(hkl_collapse_ask(c, 42, fake_madvise), -ESRCH);
	assert_int_equal(fake.calls, 1);
	assert_int_equal(c->ranges[0].result, HK_COLLAPSE_NOT_ASKED);
	hk_collapse_free(c);
	free(buf);
}

/* ---- after ---- */

/*
 * Two heap mappings (256 MiB, 8 MiB), a file's text (4 MiB, aligned) and a
 * heap mapping marked nh (4 MiB), with these Rss and huge kB.
 */
static char *four_maps(const uint64_t rss[4], const uint64_t huge[4])
{
	char *parts[4], *s;

	parts[0] = map(0x200000000, 0x210000000, "rw-p", 0, 0, "", rss[0], huge[0], "rd wr");
	parts[1] = map(0x210000000, 0x210800000, "rw-p", 0, 0, "", rss[1], huge[1], "rd wr");
	parts[2] = map(0x300000000, 0x300400000, "r-xp", 0x200000, 9, "/usr/bin/big", rss[2],
		       huge[2], "rd ex");
	parts[3] = map(0x310000000, 0x310400000, "rw-p", 0, 0, "", rss[3], huge[3], "rd wr nh");
	assert_true(asprintf(&s, "%s%s%s%s", parts[0], parts[1], parts[2], parts[3]) > 0);
	for (int i = 0; i < 4; i++)
		free(parts[i]);
	return s;
}

static void test_account(void **state)
{
	char *before = four_maps((uint64_t[]){262144, 1024, 4096, 4096}, (uint64_t[]){0, 0, 0, 0});
	char *after = four_maps((uint64_t[]){262144, 4096, 4096, 4096},
				(uint64_t[]){262144, 2048, 2048, 0});
	struct hk_collapse *c;
	const struct hk_collapse_total *t;
	struct hkc_smap *m;
	size_t n;

	(void)state;
	c = selected(before, HK_COLLAPSE_HEAP | HK_COLLAPSE_TEXT, false);
	/* What the kernel said: the first collapsed, the others refused. */
	c->ranges[0].result = HK_COLLAPSE_COLLAPSED;
	for (int i = 1; i < 4; i++) {
		c->ranges[i].result = HK_COLLAPSE_REFUSED;
		c->ranges[i].error = EINVAL;
	}
	parse(after, &m, &n);
	hkl_collapse_account(c, m, n);
	hkc_smaps_free(m, n);
	assert_int_equal(c->ranges[0].huge_kb_after, 262144);
	assert_int_equal(c->ranges[0].why, HK_COLLAPSE_WHY_NONE);
	/* Heap EINVAL with parts not resident before: never touched. */
	assert_int_equal(c->ranges[1].huge_kb_after, 2048);
	assert_int_equal(c->ranges[1].rss_kb_after, 4096);
	assert_int_equal(c->ranges[1].why, HK_COLLAPSE_WHY_UNTOUCHED);
	assert_int_equal(c->ranges[2].why, HK_COLLAPSE_WHY_FILE_THP);
	assert_int_equal(c->ranges[3].why, HK_COLLAPSE_WHY_NOHUGEPAGE);
	t = hk_collapse_total(c, HK_COLLAPSE_KIND_HEAP);
	assert_int_equal(t->before.huge_kb, 0);
	assert_int_equal(t->after.huge_kb, 262144 + 2048);
	assert_int_equal(t->after.rss_kb, 262144 + 4096 + 4096);
	assert_int_equal(t->after.mappings, 3);
	assert_int_equal(t->collapsed, 1);
	assert_int_equal(t->refused, 2);
	/* Text: FilePmdMapped is its huge pages (a refusal may have done some parts). */
	assert_int_equal(c->ranges[2].huge_kb_after, 2048);
	t = hk_collapse_total(c, HK_COLLAPSE_KIND_TEXT);
	assert_int_equal(t->refused, 1);
	assert_int_equal(t->after.huge_kb, 2048);
	hk_collapse_free(c);
	/* ENOMEM, EAGAIN: no reason but the errno's. */
	c = selected(after, HK_COLLAPSE_HEAP, false);
	c->ranges[0].result = HK_COLLAPSE_REFUSED;
	c->ranges[0].error = ENOMEM;
	c->ranges[1].result = HK_COLLAPSE_REFUSED;
	c->ranges[1].error = EAGAIN;
	parse(after, &m, &n);
	hkl_collapse_account(c, m, n);
	hkc_smaps_free(m, n);
	assert_int_equal(c->ranges[0].why, HK_COLLAPSE_WHY_NONE);
	assert_int_equal(c->ranges[1].why, HK_COLLAPSE_WHY_NONE);
	hk_collapse_free(c);
	free(before);
	free(after);
}

/* ---- the public call on a tree: dry runs only ---- */

static void test_process_tree(void **state)
{
	enum hk_collapse_problem problem = HK_COLLAPSE_UNREAD;
	struct hk_collapse *c = NULL;
	struct tree t;

	(void)state;
	tree_open(&t, "collapse");
	assert_int_equal(hk_collapse_process(t.ctx, 5151, HK_COLLAPSE_HEAP | HK_COLLAPSE_DRY_RUN,
					     &c, &problem),
			 0);
	assert_int_equal(problem, HK_COLLAPSE_NO_PROBLEM);
	assert_string_equal(hk_collapse_comm(c), "collapsee");
	assert_false(hk_collapse_thp_disabled(c));
	assert_true(hk_collapse_pmd_size(c) == 2 * MIB);
	assert_int_equal(hk_collapse_count(c), 5);
	assert_int_equal(hk_collapse_total(c, HK_COLLAPSE_KIND_HEAP)->asked_kb, 272384);
	hk_collapse_free(c);
	assert_int_equal(hk_collapse_process(t.ctx, 5252, HK_COLLAPSE_HEAP | HK_COLLAPSE_DRY_RUN,
					     &c, &problem),
			 0);
	assert_true(hk_collapse_thp_disabled(c));
	assert_int_equal(hk_collapse_range_at(c, 0)->why, HK_COLLAPSE_WHY_THP_DISABLED);
	hk_collapse_free(c);
	/* A tree is never asked; no such process; bad flags. */
	assert_int_equal(hk_collapse_process(t.ctx, 5151, HK_COLLAPSE_HEAP, &c, &problem),
			 -EOPNOTSUPP);
	assert_int_equal(hk_collapse_process(t.ctx, 9999, HK_COLLAPSE_TEXT | HK_COLLAPSE_DRY_RUN,
					     &c, &problem),
			 -ESRCH);
	assert_int_equal(problem, HK_COLLAPSE_NO_PROCESS);
	assert_int_equal(hk_collapse_process(t.ctx, 5151, HK_COLLAPSE_DRY_RUN, &c, NULL), -EINVAL);
	assert_int_equal(hk_collapse_process(t.ctx, 5151, 8 | HK_COLLAPSE_HEAP, &c, NULL), -EINVAL);
	assert_int_equal(hk_collapse_process(t.ctx, 0, HK_COLLAPSE_HEAP, &c, NULL), -EINVAL);
	/* smaps that do not parse: unread. */
	fixture_write(t.dir, "proc/5151/smaps", "not smaps\n");
	assert_int_equal(hk_collapse_process(t.ctx, 5151, HK_COLLAPSE_HEAP | HK_COLLAPSE_DRY_RUN,
					     &c, &problem),
			 -EINVAL);
	assert_int_equal(problem, HK_COLLAPSE_UNREAD);
	tree_close(&t);
	/* A kernel without THP: no hpage_pmd_size. */
	tree_open(&t, NULL);
	fixture_write(t.dir, "proc/4242/smaps", "");
	fixture_write(t.dir, "proc/4242/comm", "x\n");
	fixture_write(t.dir, "proc/4242/status", "Name:\tx\n");
	assert_int_equal(hk_collapse_process(t.ctx, 4242, HK_COLLAPSE_HEAP | HK_COLLAPSE_DRY_RUN,
					     &c, &problem),
			 -ENOENT);
	assert_int_equal(problem, HK_COLLAPSE_UNSUPPORTED);
	tree_close(&t);
}

int main(void)
{
	// clang-format off
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_ask_refusals),
		cmocka_unit_test(test_ask_batches),
		cmocka_unit_test(test_ask_partial),
		cmocka_unit_test(test_account),
		cmocka_unit_test(test_process_tree),
	};
	// clang-format on

	return cmocka_run_group_tests(tests, NULL, NULL);
}
