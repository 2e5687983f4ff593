// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The segment plan of lib/common/segplan.c on program headers alone: a
 * typical PIE, gcc's cc1 (a non-PIE executable), a binary linked with
 * ld.hugetlbfs (2 MiB max-page-size), RELRO, bss, small segments, 1 GiB
 * pages, and headers that are hostile or odd. The expected addresses are
 * worked out by hand in the comments, not by the planner's formulas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <errno.h>
#include <sys/mman.h>

#include "segplan.h"

#define KiB UINT64_C(1024)
#define MiB (KiB * 1024)
#define GiB (MiB * 1024)
#define ALL (HKC_SEG_SEL_R | HKC_SEG_SEL_W)
#define RX (PF_R | PF_X)
#define RW (PF_R | PF_W)

#define LOAD(flags, vaddr, filesz, memsz)                                                          \
	{                                                                                          \
		.p_type = PT_LOAD, .p_flags = (flags), .p_vaddr = (vaddr), .p_filesz = (filesz),   \
		.p_memsz = (memsz), .p_align = 0x1000                                              \
	}
#define RELRO(vaddr, size)                                                                         \
	{                                                                                          \
		.p_type = PT_GNU_RELRO, .p_flags = PF_R, .p_vaddr = (vaddr), .p_memsz = (size)     \
	}
#define OTHER(type, vaddr, size)                                                                   \
	{                                                                                          \
		.p_type = (type), .p_flags = PF_R, .p_vaddr = (vaddr), .p_memsz = (size)           \
	}

static size_t plan(const ElfW(Phdr) * ph, size_t n, uintptr_t bias, uint64_t page, unsigned kinds,
		   bool flagged, struct hkc_seg_range *out)
{
	struct hkc_seg_in in = {.phdr = ph,
				.phnum = n,
				.bias = bias,
				.page_size = page,
				.base_page = 4096,
				.kinds = kinds,
				.flagged = flagged};
	size_t got = 99;

	assert_int_equal(hkc_seg_plan(&in, out, 8, &got), 0);
	return got;
}

static void expect(const struct hkc_seg_range *r, unsigned phdr, enum hkc_seg_kind kind, int prot,
		   uintptr_t start, uintptr_t end, uint64_t head, uint64_t tail)
{
	assert_int_equal(r->phdr, phdr);
	assert_int_equal(r->kind, kind);
	assert_int_equal(r->prot, prot);
	assert_int_equal(r->why, start == end ? HKC_SEG_SMALL : HKC_SEG_MOVE);
	assert_int_equal(r->start, start);
	assert_int_equal(r->end, end);
	assert_int_equal(r->head, head);
	assert_int_equal(r->tail, tail);
	/* Nothing moved is ever writable and executable, nor outside page boundaries. */
	assert_false((r->prot & PROT_WRITE) && (r->prot & PROT_EXEC));
}

/*
 * gcc -pie with -z separate-code, 16 MiB of text, loaded at a 4 KiB (not
 * 2 MiB) aligned bias: R, R+X, R, RW (RELRO at its start, then data, then
 * 28 MiB of bss).
 */
static const ElfW(Phdr) pie[] = {
	OTHER(PT_PHDR, 0x40, 0x2d8),
	LOAD(PF_R, 0, 0x2a40, 0x2a40),
	LOAD(RX, 0x3000, 0x1000123, 0x1000123),
	LOAD(PF_R, 0x1004000, 0x1f0000, 0x1f0000),
	LOAD(RW, 0x11f4d10, 0x400300, 0x2000000),
	OTHER(PT_DYNAMIC, 0x11f4d20, 0x1e0),
	RELRO(0x11f4d10, 0x2f0),
	OTHER(PT_GNU_STACK, 0, 0),
};
#define PIE_BIAS ((uintptr_t)0x555555554000)

static void test_pie(void **state)
{
	struct hkc_seg_range r[8];
	uint64_t huge, base;

	(void)state;
	assert_int_equal(plan(pie, 8, PIE_BIAS, 2 * MiB, ALL, false, r), 4);
	/* Headers 0x555555554000-0x555555556a40: no 2 MiB page inside. */
	expect(&r[0], 1, HKC_SEG_RODATA, PROT_READ, 0x555555554000, 0x555555554000, 0x2a40, 0);
	/*
	 * Text 0x555555557000-0x555556557123: 0x555555600000-0x555556400000
	 * (14 MiB) huge; 0xa9000 before, 0x157123 after on base pages.
	 */
	expect(&r[1], 2, HKC_SEG_TEXT, PROT_READ | PROT_EXEC, 0x555555600000, 0x555556400000,
	       0xa9000, 0x157123);
	/* Rodata 0x555556558000-0x555556748000: 0x555556600000-0x555556600000, nothing. */
	expect(&r[2], 3, HKC_SEG_RODATA, PROT_READ, 0x555556558000, 0x555556558000, 0x1f0000, 0);
	/*
	 * Data 0x555556748d10-0x555558748d10, RELRO to 0x555556749000, file part
	 * to 0x555556b49010: 0x555556800000-0x555558600000 (30 MiB) huge, not
	 * into the brk after it.
	 */
	expect(&r[3], 4, HKC_SEG_DATA, PROT_READ | PROT_WRITE, 0x555556800000, 0x555558600000,
	       0xb72f0, 0x148d10);
	assert_int_equal(r[3].relro_end, 0x555556749000);
	assert_int_equal(r[3].bss, 0x555556b49010);
	/* Data 0x555556748d10-0x555556b49010: 0x349010 huge, 0xb72f0 base. */
	hkc_seg_bytes(&r[3], HKC_SEG_DATA, r[3].start, r[3].end, &huge, &base);
	assert_int_equal(huge, 0x349010);
	assert_int_equal(base, 0xb72f0);
	/* Bss 0x555556b49010-0x555558748d10: to 0x555558600000 huge (0x1ab6ff0), 0x148d10 base. */
	hkc_seg_bytes(&r[3], HKC_SEG_BSS, r[3].start, r[3].end, &huge, &base);
	assert_int_equal(huge, 0x1ab6ff0);
	assert_int_equal(base, 0x148d10);
	/* Text is no part of the writable range, and nothing moved is nothing huge. */
	hkc_seg_bytes(&r[3], HKC_SEG_TEXT, r[3].start, r[3].end, &huge, &base);
	assert_int_equal(huge + base, 0);
	hkc_seg_bytes(&r[1], HKC_SEG_TEXT, 0, 0, &huge, &base);
	assert_int_equal(huge, 0);
	assert_int_equal(base, 0x1000123);

	/* R: the three non-writable ones; W: the writable one alone. */
	assert_int_equal(plan(pie, 8, PIE_BIAS, 2 * MiB, HKC_SEG_SEL_R, false, r), 3);
	assert_int_equal(r[2].phdr, 3);
	assert_int_equal(plan(pie, 8, PIE_BIAS, 2 * MiB, HKC_SEG_SEL_W, false, r), 1);
	assert_int_equal(r[0].phdr, 4);
	/* bss alone selects the writable segment, data with it (libhugetlbfs's W). */
	assert_int_equal(plan(pie, 8, PIE_BIAS, 2 * MiB, HKC_SEG_BIT(HKC_SEG_BSS), false, r), 1);
	assert_int_equal(r[0].kind, HKC_SEG_DATA);
	assert_int_equal(plan(pie, 8, PIE_BIAS, 2 * MiB, 0, false, r), 0);
}

/* readelf -lW /usr/lib/gcc/x86_64-linux-gnu/12/cc1 (Debian 12, gcc 12.2): EXEC, 14 headers. */
static const ElfW(Phdr) cc1[] = {
	OTHER(PT_PHDR, 0x400040, 0x310),
	OTHER(PT_INTERP, 0x400350, 0x1c),
	LOAD(PF_R, 0x400000, 0x230590, 0x230590),
	LOAD(RX, 0x631000, 0x13c3f15, 0x13c3f15),
	LOAD(PF_R, 0x19f5000, 0x9c7823, 0x9c7823),
	LOAD(RW, 0x23bdcf8, 0xec80, 0x1af028),
	OTHER(PT_DYNAMIC, 0x23c0d40, 0x250),
	OTHER(PT_NOTE, 0x400370, 0x20),
	OTHER(PT_NOTE, 0x400390, 0x44),
	OTHER(PT_TLS, 0x23bdcf8, 0x10),
	OTHER(PT_GNU_PROPERTY, 0x400370, 0x20),
	OTHER(PT_GNU_EH_FRAME, 0x2119aa4, 0x58494),
	OTHER(PT_GNU_STACK, 0, 0),
	RELRO(0x23bdcf8, 0x3308),
};

static void test_cc1(void **state)
{
	struct hkc_seg_range r[8];

	(void)state;
	assert_int_equal(plan(cc1, 14, 0, 2 * MiB, ALL, false, r), 4);
	/* 0x400000-0x630590: its first 2 MiB, already aligned, and not below it. */
	expect(&r[0], 2, HKC_SEG_RODATA, PROT_READ, 0x400000, 0x600000, 0, 0x30590);
	/* Text 0x631000-0x19f4f15: 0x800000-0x1800000 (16 of its 19.8 MiB). */
	expect(&r[1], 3, HKC_SEG_TEXT, PROT_READ | PROT_EXEC, 0x800000, 0x1800000, 0x1cf000,
	       0x1f4f15);
	/* 0x19f5000-0x23bc823: 0x1a00000-0x2200000. */
	expect(&r[2], 4, HKC_SEG_RODATA, PROT_READ, 0x1a00000, 0x2200000, 0xb000, 0x1bc823);
	/* 0x23bdcf8-0x256cd20, RELRO to 0x23c1000: 0x2400000 is the last page boundary. Nothing. */
	expect(&r[3], 5, HKC_SEG_DATA, PROT_READ | PROT_WRITE, 0x23bdcf8, 0x23bdcf8, 0x1af028, 0);
	assert_int_equal(r[3].relro_end, 0x23c1000);

	/* 1 GiB pages: nothing fits. */
	assert_int_equal(plan(cc1, 14, 0, GiB, ALL, false, r), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(r[i].why, HKC_SEG_SMALL);
		assert_int_equal(r[i].head, r[i].seg_end - r[i].seg_start);
	}
}

/*
 * Linked with ld.hugetlbfs (-z max-page-size=0x200000 -z separate-code): every
 * segment starts on a 2 MiB boundary, the gaps fill the rest of its pages.
 * The segments reach into the gaps: nothing lost at the edges but the RELRO
 * and the tail of the last segment (the brk follows it).
 */
static const ElfW(Phdr) aligned[] = {
	LOAD(PF_R, 0x400000, 0x720, 0x720),
	LOAD(RX, 0x600000, 0x375, 0x375),
	LOAD(PF_R, 0x800000, 0x1ec, 0x1ec),
	LOAD(RW, 0xbffde8, 0x248, 0x4002b8),
	RELRO(0xbffde8, 0x218),
};

static void test_aligned(void **state)
{
	struct hkc_seg_range r[8];

	(void)state;
	assert_int_equal(plan(aligned, 5, 0, 2 * MiB, ALL, false, r), 4);
	/* The first one reaches up to the next (0x600000), not below its own start. */
	expect(&r[0], 0, HKC_SEG_RODATA, PROT_READ, 0x400000, 0x600000, 0, 0);
	assert_int_equal(r[0].iend, 0x400000);
	expect(&r[1], 1, HKC_SEG_TEXT, PROT_READ | PROT_EXEC, 0x600000, 0x800000, 0, 0);
	assert_int_equal(r[1].istart, 0x600000);
	assert_int_equal(r[1].iend, 0x600000);
	/* Up to 0xbff000 is a gap: 0x800000-0xa00000. */
	expect(&r[2], 2, HKC_SEG_RODATA, PROT_READ, 0x800000, 0xa00000, 0, 0);
	/* 0xbffde8-0x10000a0, RELRO to 0xc00000: 0xc00000-0x1000000, the last 0xa0 bytes base. */
	expect(&r[3], 3, HKC_SEG_DATA, PROT_READ | PROT_WRITE, 0xc00000, 0x1000000, 0x218, 0xa0);
	assert_int_equal(r[3].istart, 0xc00000);

	/* The same at a PIE bias of 2 MiB alignment, for 1 GiB pages: nothing at all. */
	assert_int_equal(plan(aligned, 5, 0x7f0000000000, GiB, ALL, false, r), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r[i].why, HKC_SEG_SMALL);
}

/* RELRO ends just past a 2 MiB boundary: the writable range starts at the next one. */
static void test_relro_straddles(void **state)
{
	static const ElfW(Phdr) ph[] = {
		LOAD(RX, 0, 0x1ff000, 0x1ff000),
		LOAD(RW, 0x1ffd00, 0x700000, 0x700000),
		RELRO(0x1ffd00, 0x1300),
	};
	struct hkc_seg_range r[8];

	(void)state;
	assert_int_equal(plan(ph, 3, 0, 2 * MiB, HKC_SEG_SEL_W, false, r), 1);
	/* 0x1ffd00-0x8ffd00, RELRO to 0x201000: 0x400000-0x800000, not 0x200000-0x800000. */
	expect(&r[0], 1, HKC_SEG_DATA, PROT_READ | PROT_WRITE, 0x400000, 0x800000, 0x200300,
	       0xffd00);
	assert_int_equal(r[0].relro_end, 0x201000);
	/* A RELRO over the whole segment leaves nothing. */
	static const ElfW(Phdr) all[] = {
		LOAD(RW, 0x200000, 0x400000, 0x400000),
		RELRO(0x200000, 0x400000),
	};
	assert_int_equal(plan(all, 2, 0, 2 * MiB, ALL, false, r), 1);
	assert_int_equal(r[0].why, HKC_SEG_SMALL);
	assert_int_equal(r[0].head, 0x400000);
}

/* A writable segment that is all bss, and one with a few bytes of data. */
static void test_bss(void **state)
{
	static const ElfW(Phdr) ph[] = {
		LOAD(RX, 0x1000, 0x1000, 0x1000),
		LOAD(RW, 0x600000, 0, 0x600000),
	};
	static const ElfW(Phdr) some[] = {
		LOAD(RW, 0x600000, 0x100, 0x600000),
	};
	struct hkc_seg_range r[8];
	uint64_t huge, base;

	(void)state;
	assert_int_equal(plan(ph, 2, 0, 2 * MiB, ALL, false, r), 2);
	expect(&r[0], 0, HKC_SEG_TEXT, PROT_READ | PROT_EXEC, 0x1000, 0x1000, 0x1000, 0);
	expect(&r[1], 1, HKC_SEG_DATA, PROT_READ | PROT_WRITE, 0x600000, 0xc00000, 0, 0);
	assert_int_equal(r[1].bss, 0x600000);
	hkc_seg_bytes(&r[1], HKC_SEG_DATA, r[1].start, r[1].end, &huge, &base);
	assert_int_equal(huge + base, 0);
	hkc_seg_bytes(&r[1], HKC_SEG_BSS, r[1].start, r[1].end, &huge, &base);
	assert_int_equal(huge, 0x600000);
	assert_int_equal(base, 0);

	assert_int_equal(plan(some, 1, 0, 2 * MiB, ALL, false, r), 1);
	assert_int_equal(r[0].bss, 0x600100);
	hkc_seg_bytes(&r[0], HKC_SEG_DATA, r[0].start, r[0].end, &huge, &base);
	assert_int_equal(huge, 0x100);
	hkc_seg_bytes(&r[0], HKC_SEG_BSS, r[0].start, 0x800000, &huge, &base);
	assert_int_equal(huge, 0x1fff00);
	assert_int_equal(base, 0x400000);
}

/* Segments smaller than a huge page, or not across a boundary: nothing. */
static void test_small(void **state)
{
	static const ElfW(Phdr) ph[] = {
		LOAD(PF_R, 0, 0x1000, 0x1000),
		LOAD(RX, 0x1000, 0x1ff000, 0x1ff000), /* ends on the boundary, starts below it */
		LOAD(PF_R, 0x201000, 0x100000, 0x100000),
		LOAD(RW, 0x302000, 0x1000, 0x2fc000), /* 0x302000-0x5fe000: no whole page */
	};
	struct hkc_seg_range r[8];

	(void)state;
	assert_int_equal(plan(ph, 4, 0, 2 * MiB, ALL, false, r), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(r[i].why, HKC_SEG_SMALL);
		assert_int_equal(r[i].start, r[i].end);
		assert_int_equal(r[i].head, ph[i].p_memsz);
		assert_int_equal(r[i].tail, 0);
	}
}

/*
 * hugeedit's flags select alone. Unreadable never moves; writable and
 * executable moves only with libhugetlbfs's mark (its linker scripts' data
 * segment, FLAGS(0x00100007)), and then writable only.
 */
static void test_flags_and_prot(void **state)
{
	static const ElfW(Phdr) ph[] = {
		LOAD(PF_R, 0, 0x1000, 0x1000),
		LOAD(RX | PF_LINUX_HUGETLB, 0x200000, 0x400000, 0x400000),
		LOAD(PF_R, 0x600000, 0x400000, 0x400000),
		LOAD(RW | PF_X | PF_LINUX_HUGETLB, 0xa00000, 0x400000, 0x400000),
		LOAD(PF_X | PF_LINUX_HUGETLB, 0xe00000, 0x400000, 0x400000),
		LOAD(RW | PF_X, 0x1200000, 0x400000, 0x400000),
	};
	struct hkc_seg_range r[8];

	(void)state;
	assert_int_equal(plan(ph, 6, 0, 2 * MiB, ALL, true, r), 3);
	expect(&r[0], 1, HKC_SEG_TEXT, PROT_READ | PROT_EXEC, 0x200000, 0x600000, 0, 0);
	assert_false(r[0].x_dropped);
	expect(&r[1], 3, HKC_SEG_DATA, PROT_READ | PROT_WRITE, 0xa00000, 0xe00000, 0, 0);
	assert_true(r[1].x_dropped);
	assert_int_equal(r[2].phdr, 4);
	assert_int_equal(r[2].why, HKC_SEG_UNREADABLE);
	/* Flags and a selection of W: only the flagged writable one. */
	assert_int_equal(plan(ph, 6, 0, 2 * MiB, HKC_SEG_SEL_W, true, r), 1);
	assert_int_equal(r[0].phdr, 3);
	/* Without flags, W selects the unmarked writable and executable one too: it stays. */
	assert_int_equal(plan(ph, 6, 0, 2 * MiB, HKC_SEG_SEL_W, false, r), 2);
	assert_int_equal(r[1].phdr, 5);
	assert_int_equal(r[1].why, HKC_SEG_WX);
	assert_int_equal(r[1].prot, PROT_READ | PROT_WRITE | PROT_EXEC);
	assert_false(r[1].x_dropped);
	assert_int_equal(r[1].start, r[1].end);
	assert_int_equal(r[1].head, 0x400000);
}

/*
 * The headers of a program linked with 2.23's elf_x86_64.xBDT (gcc -no-pie
 * -Wl,-T,...): text and rodata in one R E segment at 16 MiB, data and bss
 * (96 + 160 bytes) in one marked RWX segment at 32 MiB, nothing after it
 * but the program break.
 */
static const ElfW(Phdr) xbdt[] = {
	OTHER(PT_PHDR, 0x1000040, 0x1c0),
	LOAD(RX | PF_LINUX_HUGETLB, 0x1000000, 0xbd8, 0xbd8),
	LOAD(RW | PF_X | PF_LINUX_HUGETLB, 0x2000000, 0x2c0, 0x360),
	OTHER(PT_DYNAMIC, 0x2000010, 0x1d0),
};

/* The last segment reaches up to the program break, never past it. */
static void test_brk(void **state)
{
	struct hkc_seg_range r[8];
	struct hkc_seg_in in = {.phdr = xbdt,
				.phnum = 4,
				.page_size = 2 * MiB,
				.base_page = 4096,
				.kinds = ALL,
				.flagged = true};
	size_t got = 0;

	(void)state;
	/* The break unknown: the text reaches up to the data's page; the data no further than itself. */
	assert_int_equal(plan(xbdt, 4, 0, 2 * MiB, ALL, true, r), 2);
	expect(&r[0], 1, HKC_SEG_TEXT, PROT_READ | PROT_EXEC, 0x1000000, 0x1200000, 0, 0);
	assert_int_equal(r[1].why, HKC_SEG_SMALL);
	assert_false(r[1].at_brk);
	/* The break 10 MiB on: the data's whole huge page, 0x2000000-0x2200000. */
	in.brk = 0x2a00000;
	assert_int_equal(hkc_seg_plan(&in, r, 8, &got), 0);
	assert_int_equal(got, 2);
	expect(&r[1], 2, HKC_SEG_DATA, PROT_READ | PROT_WRITE, 0x2000000, 0x2200000, 0, 0);
	assert_int_equal(r[1].istart, 0x2000000);
	assert_int_equal(r[1].iend, 0x2000000);
	assert_true(r[1].x_dropped);
	assert_false(r[1].at_brk);
	/* The break exactly at the end of that huge page: still whole. */
	in.brk = 0x2200000;
	assert_int_equal(hkc_seg_plan(&in, r, 8, &got), 0);
	assert_int_equal(r[1].end, 0x2200000);
	assert_false(r[1].at_brk);
	/* One page short of it (no ASLR: the break right after the bss): nothing, said so. */
	in.brk = 0x21ff000;
	assert_int_equal(hkc_seg_plan(&in, r, 8, &got), 0);
	assert_int_equal(r[1].why, HKC_SEG_SMALL);
	assert_true(r[1].at_brk);
	in.brk = 0x2001000;
	assert_int_equal(hkc_seg_plan(&in, r, 8, &got), 0);
	assert_int_equal(r[1].why, HKC_SEG_SMALL);
	assert_true(r[1].at_brk);
	/* A break inside the segment (nonsense) is no limit past it: nothing moves. */
	in.brk = 0x2000100;
	assert_int_equal(hkc_seg_plan(&in, r, 8, &got), 0);
	assert_int_equal(r[1].why, HKC_SEG_SMALL);
	assert_false(r[1].at_brk);
	/* Only the last segment looks at the break: the text's limit is the data segment. */
	assert_int_equal(r[0].end, 0x1200000);
	assert_false(r[0].at_brk);
}

static int plan_rc(const ElfW(Phdr) * ph, size_t n, uintptr_t bias, uint64_t page, size_t cap)
{
	struct hkc_seg_in in = {.phdr = ph,
				.phnum = n,
				.bias = bias,
				.page_size = page,
				.base_page = 4096,
				.kinds = ALL};
	struct hkc_seg_range r[8];
	size_t got = 99;
	int rc = hkc_seg_plan(&in, r, cap, &got);

	if (rc < 0)
		assert_int_equal(got, 0);
	return rc;
}

/* Hostile or broken headers: refused with an error, never followed, never a crash. */
static void test_hostile(void **state)
{
	static const ElfW(Phdr) overlap[] = {
		LOAD(RX, 0x200000, 0x400000, 0x400000),
		LOAD(RW, 0x500000, 0x400000, 0x400000),
	};
	static const ElfW(Phdr) unsorted[] = {
		LOAD(RW, 0x800000, 0x400000, 0x400000),
		LOAD(RX, 0x200000, 0x400000, 0x400000),
	};
	static const ElfW(Phdr) wraps[] = {
		LOAD(RX, 0x200000, 0x400000, 0x400000),
		LOAD(RW, UINTPTR_MAX - 0x1000, 0x100, 0x400000),
	};
	static const ElfW(Phdr) near_top[] = {
		LOAD(RW, UINTPTR_MAX - 0x3fffff, 0x100, 0x300000),
	};
	static const ElfW(Phdr) bad_file[] = {
		LOAD(RW, 0x200000, 0x400001, 0x400000),
	};
	static const ElfW(Phdr) bad_relro[] = {
		LOAD(RW, 0x200000, 0x400000, 0x400000),
		RELRO(UINTPTR_MAX - 0x10, 0x100),
	};
	static const ElfW(Phdr) empty_between[] = {
		LOAD(RX, 0x200000, 0x400000, 0x400000),
		LOAD(PF_R, 0x300000, 0, 0),
		LOAD(RW, 0x800000, 0x400000, 0x400000),
	};

	(void)state;
	assert_int_equal(plan_rc(overlap, 2, 0, 2 * MiB, 8), -EINVAL);
	assert_int_equal(plan_rc(unsorted, 2, 0, 2 * MiB, 8), -EINVAL);
	assert_int_equal(plan_rc(wraps, 2, 0, 2 * MiB, 8), -EOVERFLOW);
	/* The end fits, but cannot be rounded up to a page. */
	assert_int_equal(plan_rc(near_top, 1, 0, 2 * MiB, 8), -EOVERFLOW);
	/* The bias wraps the address. */
	assert_int_equal(plan_rc(overlap, 1, UINTPTR_MAX - 0x100000, 2 * MiB, 8), -EOVERFLOW);
	assert_int_equal(plan_rc(bad_file, 1, 0, 2 * MiB, 8), -EINVAL);
	assert_int_equal(plan_rc(bad_relro, 2, 0, 2 * MiB, 8), -EOVERFLOW);
	/* Page sizes: not a power of two, zero, below the base page. */
	assert_int_equal(plan_rc(overlap, 1, 0, 3 * MiB, 8), -EINVAL);
	assert_int_equal(plan_rc(overlap, 1, 0, 0, 8), -EINVAL);
	assert_int_equal(plan_rc(overlap, 1, 0, 2048, 8), -EINVAL);
	/* More selected segments than room. */
	assert_int_equal(plan_rc(cc1, 14, 0, 2 * MiB, 3), -ENOSPC);
	/* No headers at all; a NULL array with a count. */
	assert_int_equal(plan_rc(NULL, 0, 0, 2 * MiB, 8), 0);
	assert_int_equal(plan_rc(NULL, 3, 0, 2 * MiB, 8), -EINVAL);
	/* An empty PT_LOAD among them is no segment, and no neighbour. */
	assert_int_equal(plan_rc(empty_between, 3, 0, 2 * MiB, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_cc1),
		cmocka_unit_test(test_aligned),
		cmocka_unit_test(test_relro_straddles),
		cmocka_unit_test(test_bss),
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_flags_and_prot),
		cmocka_unit_test(test_brk),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
