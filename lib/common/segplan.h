/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plan of a program's segments on huge pages, from its program headers
 * alone: which ranges of which PT_LOAD segments to move, with what
 * protection, and what stays on base pages at their edges. Pure arithmetic:
 * no system call, no allocation. The runtime (lib/runtime/segments.c) does
 * the moving.
 */
#pragma once

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The per-segment flag that hugeedit sets (libhugetlbfs's value, in the OS-specific range). */
#ifndef PF_LINUX_HUGETLB
#define PF_LINUX_HUGETLB 0x100000
#endif

/*
 * What a segment holds: text (R+X), rodata (R only), data (the file part of
 * the writable segment) and bss (its zero-filled tail). A writable segment
 * is planned as one range of kind data that covers its bss too.
 */
enum hkc_seg_kind {
	HKC_SEG_TEXT,
	HKC_SEG_RODATA,
	HKC_SEG_DATA,
	HKC_SEG_BSS,
	HKC_SEG_NKINDS
};

#define HKC_SEG_BIT(kind) (1u << (kind))
/* HUGETLB_ELFMAP's R: every non-writable segment; W: the writable one, data and bss together. */
#define HKC_SEG_SEL_R (HKC_SEG_BIT(HKC_SEG_TEXT) | HKC_SEG_BIT(HKC_SEG_RODATA))
#define HKC_SEG_SEL_W (HKC_SEG_BIT(HKC_SEG_DATA) | HKC_SEG_BIT(HKC_SEG_BSS))

/* Why a selected segment moves nothing. */
enum hkc_seg_why {
	HKC_SEG_MOVE,	    /* [start, end) is to be moved */
	HKC_SEG_SMALL,	    /* no aligned interior (after RELRO, for a writable one) */
	HKC_SEG_WX,	    /* writable and executable, not marked: never mapped so */
	HKC_SEG_UNREADABLE, /* no PF_R: it cannot be copied */
};

struct hkc_seg_in {
	const ElfW(Phdr) * phdr;
	size_t phnum;
	uintptr_t bias;	    /* load bias (dlpi_addr): 0 for a non-PIE executable */
	uint64_t page_size; /* the huge page size: a power of two, >= base_page */
	uint64_t base_page; /* a power of two */
	unsigned kinds;	    /* HKC_SEG_BIT()s of the kinds selected */
	bool flagged;	    /* only segments carrying PF_LINUX_HUGETLB (hugeedit) */
	/*
	 * Where the program break starts (0: unknown): the last segment's range
	 * may reach up to it, never past it; with 0 it ends in the segment.
	 */
	uintptr_t brk;
};

struct hkc_seg_range {
	unsigned phdr;		/* index of the PT_LOAD in the headers */
	enum hkc_seg_kind kind; /* TEXT, RODATA, or DATA (its bss included) */
	/*
	 * PROT_* of the segment; never PROT_WRITE with PROT_EXEC: a writable and
	 * executable one that carries PF_LINUX_HUGETLB (libhugetlbfs's linker
	 * scripts mark data and bss so, FLAGS(0x00100007)) is planned writable
	 * only, and x_dropped says so. Any other stays (HKC_SEG_WX).
	 */
	int prot;
	bool x_dropped;
	enum hkc_seg_why why;
	uintptr_t seg_start, seg_end; /* the segment in memory (bias + p_vaddr, + p_memsz) */
	uintptr_t bss;		      /* where its zero-filled tail starts (seg_end: none) */
	uintptr_t relro_end;	      /* end of the RELRO part at its start (seg_start: none) */
	/* The range to move, on huge page boundaries; start == end when why != MOVE. */
	uintptr_t start, end;
	/*
	 * The same range without the gaps between segments: start < istart when
	 * the range reaches down into the gap before the segment, iend < end
	 * when it reaches into the one after (the caller checks that the gap is
	 * free before it takes it, else it moves [istart, iend) only). After
	 * the last segment the gap runs up to the program break (brk).
	 */
	uintptr_t istart, iend;
	/* The range stops short of the end of the segment's last huge page: the program break is there. */
	bool at_brk;
	/* Bytes of the segment (RELRO included) left on base pages before and after [start, end). */
	uint64_t head, tail;
};

/* "text", "rodata", "data", "bss". */
const char *hkc_seg_kind_name(enum hkc_seg_kind kind);

/*
 * The ranges of the selected PT_LOAD segments, in header order, into
 * out[0..cap): one entry per selected non-empty segment, with why saying
 * when it moves nothing. Hostile headers are refused, never followed:
 * -EINVAL for a bad page size, overlapping or unsorted PT_LOADs, p_filesz >
 * p_memsz; -EOVERFLOW for addresses that wrap; -ENOSPC for more selected
 * segments than cap. *n is 0 on error.
 */
int hkc_seg_plan(const struct hkc_seg_in *in, struct hkc_seg_range *out, size_t cap, size_t *n);

/*
 * Bytes of kind in segment r (for a DATA range: DATA or BSS, its two parts)
 * on huge pages when [start, end) was moved (start == end: nothing), and on
 * base pages.
 */
void hkc_seg_bytes(const struct hkc_seg_range *r, enum hkc_seg_kind kind, uintptr_t start,
		   uintptr_t end, uint64_t *huge, uint64_t *base);
