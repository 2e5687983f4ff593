// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The segment plan (segplan.h). Every address is checked before it is
 * computed: headers come from the program, which may be hostile or odd, and
 * a wrapped address would move memory that is not the segment's.
 */
#include <errno.h>
#include <sys/mman.h>

#include "segplan.h"

const char *hkc_seg_kind_name(enum hkc_seg_kind kind)
{
	static const char *const names[] = {"text", "rodata", "data", "bss"};

	return (unsigned)kind < HKC_SEG_NKINDS ? names[kind] : "?";
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Callers keep v <= UINTPTR_MAX - (a - 1): every segment end is checked so. */
static uintptr_t up(uintptr_t v, uint64_t a)
{
	return (uintptr_t)((v + (a - 1)) & ~(a - 1));
}

static uintptr_t down(uintptr_t v, uint64_t a)
{
	return (uintptr_t)(v & ~(a - 1));
}

static uintptr_t max_u(uintptr_t a, uintptr_t b)
{
	return a > b ? a : b;
}

static uintptr_t min_u(uintptr_t a, uintptr_t b)
{
	return a < b ? a : b;
}

/* [*s, *e) of a header in memory; false when it wraps or cannot be rounded up to a page. */
static bool span(const ElfW(Phdr) * p, uintptr_t bias, uint64_t page, uintptr_t *s, uintptr_t *e)
{
	if (p->p_vaddr > UINTPTR_MAX - bias)
		return false;
	*s = bias + (uintptr_t)p->p_vaddr;
	if (p->p_memsz > UINTPTR_MAX - *s)
		return false;
	*e = *s + (uintptr_t)p->p_memsz;
	return *e <= UINTPTR_MAX - (page - 1);
}

static int prot_of(ElfW(Word) flags)
{
	return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) |
	       (flags & PF_X ? PROT_EXEC : 0);
}

static enum hkc_seg_kind kind_of(ElfW(Word) flags)
{
	if (flags & PF_W)
		return HKC_SEG_DATA;
	return flags & PF_X ? HKC_SEG_TEXT : HKC_SEG_RODATA;
}

static bool selected(const struct hkc_seg_in *in, ElfW(Word) flags)
{
	enum hkc_seg_kind k = kind_of(flags);
	unsigned bits = k == HKC_SEG_DATA ? HKC_SEG_SEL_W : HKC_SEG_BIT(k);

	if (in->flagged && !(flags & PF_LINUX_HUGETLB))
		return false;
	return (in->kinds & bits) != 0;
}

/* The end of RELRO in [s, e) when a PT_GNU_RELRO starts there (s: none); -EOVERFLOW. */
static int relro_end(const struct hkc_seg_in *in, uintptr_t s, uintptr_t e, uintptr_t *ret)
{
	*ret = s;
	for (size_t i = 0; i < in->phnum; i++) {
		const ElfW(Phdr) *p = &in->phdr[i];
		uintptr_t rs, re;

		if (p->p_type != PT_GNU_RELRO)
			continue;
		if (!span(p, in->bias, in->page_size, &rs, &re))
			return -EOVERFLOW;
		/* A RELRO that reaches into this segment protects everything up to its end. */
		if (rs < e && re > s)
			*ret = max_u(*ret, min_u(re, e));
	}
	return 0;
}

/* Which pages of r to move: the aligned interior, reaching into the gaps lo..hi where it can. */
static void place(struct hkc_seg_range *r, uint64_t page, uintptr_t lo, uintptr_t hi)
{
	uintptr_t s = r->relro_end;

	r->istart = up(s, page);
	r->iend = down(r->seg_end, page);
	r->start = r->istart;
	r->end = r->iend;
	/* Down into the gap before: only with no RELRO, whose pages stay as they are. */
	if (s == r->seg_start && down(s, page) >= lo)
		r->start = down(s, page);
	if (up(r->seg_end, page) <= hi)
		r->end = up(r->seg_end, page);
	if (r->start >= r->end) {
		r->why = HKC_SEG_SMALL;
		r->start = r->end = r->istart = r->iend = r->seg_start;
	}
}

/*
 * The gaps around segment i (r), up to the neighbours' pages: [*lo, and
 * hi) (UINTPTR_MAX and 0: none). None before the first; after the last, up
 * to the program break where it is known (r->at_brk: it cuts the last huge
 * page short).
 */
static void gaps(const struct hkc_seg_in *in, size_t i, struct hkc_seg_range *r, uintptr_t *lo,
		 uintptr_t *hi)
{
	for (size_t j = 0; j < in->phnum; j++) {
		const ElfW(Phdr) *q = &in->phdr[j];
		uintptr_t s = 0, e = 0;

		if (j == i || q->p_type != PT_LOAD || q->p_memsz == 0)
			continue;
		span(q, in->bias, in->page_size, &s, &e);
		if (e <= r->seg_start && (*lo == UINTPTR_MAX || up(e, in->base_page) > *lo))
			*lo = up(e, in->base_page);
		if (s >= r->seg_end && (*hi == 0 || down(s, in->base_page) < *hi))
			*hi = down(s, in->base_page);
	}
	if (*hi == 0 && in->brk > r->seg_end) {
		*hi = down(in->brk, in->base_page);
		r->at_brk = up(r->seg_end, in->page_size) > *hi;
	}
}

int hkc_seg_plan(const struct hkc_seg_in *in, struct hkc_seg_range *out, size_t cap, size_t *n)
{
	uintptr_t prev_end = 0;
	bool have_prev = false;
	size_t k = 0;
	int rc;

	*n = 0;
	if (!pow2(in->base_page) || !pow2(in->page_size) || in->page_size < in->base_page ||
	    (!in->phdr && in->phnum))
		return -EINVAL;
	/* Every PT_LOAD: sane, in ascending order, not overlapping the one before. */
	for (size_t i = 0; i < in->phnum; i++) {
		const ElfW(Phdr) *p = &in->phdr[i];
		uintptr_t s = 0, e = 0;

		if (p->p_type != PT_LOAD)
			continue;
		if (p->p_filesz > p->p_memsz)
			return -EINVAL;
		if (!span(p, in->bias, in->page_size, &s, &e))
			return -EOVERFLOW;
		if (p->p_memsz == 0)
			continue;
		if (have_prev && s < prev_end)
			return -EINVAL;
		prev_end = e;
		have_prev = true;
	}
	for (size_t i = 0; i < in->phnum; i++) {
		const ElfW(Phdr) *p = &in->phdr[i];
		struct hkc_seg_range *r;
		uintptr_t lo = UINTPTR_MAX, hi = 0;

		if (p->p_type != PT_LOAD || p->p_memsz == 0 || !selected(in, p->p_flags))
			continue;
		if (k == cap)
			return -ENOSPC;
		r = &out[k];
		*r = (struct hkc_seg_range){.phdr = (unsigned)i, .kind = kind_of(p->p_flags)};
		span(p, in->bias, in->page_size, &r->seg_start, &r->seg_end);
		r->prot = prot_of(p->p_flags);
		r->bss = r->kind == HKC_SEG_DATA ? r->seg_start + (uintptr_t)p->p_filesz
						 : r->seg_end;
		r->relro_end = r->seg_start;
		if (r->kind == HKC_SEG_DATA &&
		    (rc = relro_end(in, r->seg_start, r->seg_end, &r->relro_end)) < 0)
			return rc;
		gaps(in, i, r, &lo, &hi);
		if (!(p->p_flags & PF_R))
			r->why = HKC_SEG_UNREADABLE;
		else if ((p->p_flags & PF_W) && (p->p_flags & PF_X) &&
			 !(p->p_flags & PF_LINUX_HUGETLB))
			r->why = HKC_SEG_WX;
		else if ((p->p_flags & PF_W) && (p->p_flags & PF_X)) {
			r->prot &= ~PROT_EXEC;
			r->x_dropped = true;
		}
		if (r->why == HKC_SEG_MOVE)
			place(r, in->page_size, lo, hi);
		else
			r->start = r->end = r->istart = r->iend = r->seg_start;
		r->head = r->start > r->seg_start ? min_u(r->start, r->seg_end) - r->seg_start : 0;
		r->tail = r->end < r->seg_end ? r->seg_end - max_u(r->end, r->seg_start) : 0;
		if (r->start == r->end) {
			r->head = r->seg_end - r->seg_start;
			r->tail = 0;
		}
		k++;
	}
	*n = k;
	return 0;
}

/* Bytes of [a, b) inside [s, e). */
static uint64_t overlap(uintptr_t a, uintptr_t b, uintptr_t s, uintptr_t e)
{
	a = max_u(a, s);
	b = min_u(b, e);
	return b > a ? b - a : 0;
}

void hkc_seg_bytes(const struct hkc_seg_range *r, enum hkc_seg_kind kind, uintptr_t start,
		   uintptr_t end, uint64_t *huge, uint64_t *base)
{
	uintptr_t s = r->seg_start, e = r->seg_end;

	if (r->kind == HKC_SEG_DATA) {
		if (kind == HKC_SEG_DATA)
			e = r->bss;
		else if (kind == HKC_SEG_BSS)
			s = r->bss;
		else
			e = s;
	} else if (kind != r->kind) {
		e = s;
	}
	*huge = overlap(start, end, s, e);
	*base = (e - s) - *huge;
}
