// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The program's text, data and bss on huge pages (HUGETLB_ELFMAP, or the
 * PF_LINUX_HUGETLB flags hugeedit sets), for any executable, PIE or not,
 * without relinking. In the constructor, before main() and while this is
 * the only thread, for each chosen PT_LOAD segment of the main executable
 * (lib/common/segplan.c plans the ranges from its program headers): the
 * whole segment rounded out to huge pages where the rest of those pages
 * holds nothing (the maps, read once; below the program break), else the
 * interior aligned to the huge page size, is copied into huge pages built
 * aside (an anonymous MAP_HUGETLB mapping, prefaulted, or transparent huge
 * pages made with MADV_COLLAPSE), given the segment's protection (never
 * writable and executable at once: the RWX data segment of 2.23's linker
 * scripts moves writable only) and put in place of the original with one
 * mremap(MREMAP_FIXED): the program never sees a half-moved segment. Edges
 * that share a huge page with another mapping stay on base pages; RELRO
 * stays as ld.so left it; the brk heap is never covered. Addresses do not
 * change, so dl_iterate_phdr, dladdr and backtraces stay right.
 *
 * Whatever fails leaves the original mapping as it was: the program runs on
 * base pages, with one warning a run. An empty pool falls back to
 * transparent huge pages where the kernel allows them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "kconst.h"
#include "share.h"

/* Ranges planned at most: a program has 4 or 5 PT_LOAD segments. */
#define SEG_MAX 16

enum backing {
	BK_NONE,
	BK_HUGETLB,
	BK_THP
};

/* R or W of HUGETLB_ELFMAP: how, and the hugetlb page size (0: the default one). */
struct part {
	enum backing bk;
	uint64_t size;
};

struct conf {
	struct part r, w;
	bool flagged;  /* by hugeedit's flags: HUGETLB_ELFMAP unset */
	bool minimal;  /* HUGETLB_MINIMAL_COPY (default yes): untouched bss not copied */
	bool share;    /* HUGETLB_SHARE=1 */
	bool share2;   /* HUGETLB_SHARE=2: refused */
	bool force;    /* HUGETLB_FORCE_ELFMAP=yes */
	bool thp_ok;   /* transparent huge pages enabled: always or madvise */
	uint64_t pmd;  /* their size */
	uint64_t page; /* base page size */
};

/* The main executable, as dl_iterate_phdr gives it first. */
struct exe {
	struct dl_phdr_info info;
	bool found;
};

static struct {
	bool asked;
	uint64_t huge, base;
} stats[HKC_SEG_NKINDS];

/* The ranges moved, for the report: the heap line leaves them out. */
static struct {
	uintptr_t s, e;
	bool exec;
} moved[SEG_MAX];
static size_t nmoved;

bool rt_segments_bytes(enum hkc_seg_kind kind, uint64_t *huge, uint64_t *base)
{
	if ((unsigned)kind >= HKC_SEG_NKINDS || !stats[kind].asked)
		return false;
	*huge = stats[kind].huge;
	*base = stats[kind].base;
	return true;
}

bool rt_segments_holds(uintptr_t a, uintptr_t b)
{
	for (size_t i = 0; i < nmoved; i++)
		if (a >= moved[i].s && b <= moved[i].e)
			return true;
	return false;
}

/* The fallback warning: once a run (then, and in children, at the information level). */
static void warn_run(const char *what, const char *why, bool thp)
{
	rt_msg(rt_run_level(RT_WARNING), "program segments: %s (%s): %s", what, why,
	       thp ? "on transparent huge pages instead" : "they stay on base pages");
	rt_mark_said();
}

static bool thp_enabled(uint64_t *pmd)
{
	char *mode = NULL;
	bool on;

	if (hkc_path_read_u64f(rt_path(), pmd, HK_SYS_THP "/hpage_pmd_size") < 0 ||
	    !hkc_is_pow2(*pmd))
		*pmd = UINT64_C(2) << 20;
	if (hkc_path_read_stringf(rt_path(), &mode, HK_SYS_THP "/enabled") < 0)
		return false;
	on = strstr(mode, "[always]") || strstr(mode, "[madvise]");
	free(mode);
	return on;
}

/* The value after "R=" or "W=" (len bytes of v; none: the default backing). */
static bool parse_value(const char *all, const char *v, size_t len, bool thp, struct part *p)
{
	char buf[32];
	uint64_t size;

	p->bk = thp ? BK_THP : BK_HUGETLB;
	p->size = 0;
	if (len == 0)
		return true;
	if (len >= sizeof(buf)) {
		rt_msg(RT_WARNING, "HUGETLB_ELFMAP=%s: bad page size: part ignored", all);
		return false;
	}
	memcpy(buf, v, len);
	buf[len] = '\0';
	if (strcasecmp(buf, "thp") == 0) {
		p->bk = BK_THP;
		return true;
	}
	if (hkc_parse_size_legacy(buf, &size) < 0) {
		rt_msg(RT_WARNING, "HUGETLB_ELFMAP=%s: bad page size %s: part ignored", all, buf);
		return false;
	}
	if (!hkc_path_existsf(rt_path(), HK_SYS_HUGEPAGES_SIZE, size / 1024)) {
		rt_msg(RT_WARNING,
		       "Hugepage size %s unavailable on this machine: HUGETLB_ELFMAP part ignored",
		       buf);
		return false;
	}
	p->bk = BK_HUGETLB;
	p->size = size;
	return true;
}

/*
 * HUGETLB_ELFMAP: unset, hugeedit's flags; "no"; else ':'-separated parts
 * of the letters R and W (either case), each optionally "=<size>" or
 * "=thp". False when nothing is to be done.
 */
static bool read_conf(struct conf *c)
{
	const char *v = secure_getenv("HUGETLB_ELFMAP");
	const char *mc = secure_getenv("HUGETLB_MORECORE");
	const char *mcopy = secure_getenv("HUGETLB_MINIMAL_COPY");
	const char *share = secure_getenv("HUGETLB_SHARE");
	const char *force = secure_getenv("HUGETLB_FORCE_ELFMAP");
	bool thp = mc && strcasecmp(mc, "thp") == 0;

	*c = (struct conf){.minimal = !mcopy || strcasecmp(mcopy, "no") != 0,
			   .page = rt_base_page_size()};
	if (v && strcasecmp(v, "no") == 0) {
		rt_msg(RT_INFO, "HUGETLB_ELFMAP=no, not attempting to remap program segments");
		return false;
	}
	if (!v || !*v) {
		c->flagged = true;
		parse_value(v, NULL, 0, thp, &c->r);
		c->w = c->r;
	} else {
		for (const char *p = v; *p;) {
			size_t l = strcspn(p, ":"), letters = strspn(p, "RrWw");
			struct part part;

			if (letters == 0 || letters > l || (letters < l && p[letters] != '=')) {
				rt_msg(RT_WARNING,
				       "HUGETLB_ELFMAP=%s: %.*s is not R, W, RW or no: part ignored",
				       v, (int)l, p);
			} else if (parse_value(v, p + letters + (letters < l),
					       l - letters - (letters < l), thp, &part)) {
				for (size_t i = 0; i < letters; i++)
					*(p[i] == 'R' || p[i] == 'r' ? &c->r : &c->w) = part;
			}
			p += l + (p[l] == ':');
		}
	}
	c->share = share && strcmp(share, "1") == 0;
	c->force = force && strcasecmp(force, "yes") == 0;
	c->share2 = share && strcmp(share, "2") == 0;
	return c->r.bk != BK_NONE || c->w.bk != BK_NONE;
}

/* Said once the program has something to move. */
static void say_conf(struct conf *c)
{
	if (c->force)
		rt_msg(RT_INFO, "HUGETLB_FORCE_ELFMAP=yes: nothing to force, hugekit remaps the "
				"aligned interiors of any program without relinking");
	if (c->share2)
		rt_msg(RT_WARNING, "HUGETLB_SHARE=2: writable segments are never shared; "
				   "nothing is shared");
	c->thp_ok = thp_enabled(&c->pmd);
}

/* Whether hugeedit flagged one of the program's segments. */
static bool any_flagged(const struct dl_phdr_info *info)
{
	for (size_t i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    (info->dlpi_phdr[i].p_flags & PF_LINUX_HUGETLB))
			return true;
	return false;
}

/* "Threads:" of /proc/self/status; 0 when it cannot be read. */
static uint64_t threads(void)
{
	char *buf = NULL;
	uint64_t n = 0;

	if (hkc_path_read_allf(rt_path(), &buf, NULL, HK_PROC_SELF_STATUS) < 0 ||
	    hkc_kv_find_u64(buf, "Threads", &n) < 0)
		n = 0;
	free(buf);
	return n;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct exe *exe = data;

	(void)size;
	exe->info = *info;
	exe->found = true;
	return 1;
}

/* One line of maps: its range, permissions and file. */
struct map {
	uintptr_t a, b;
	char perms[5];
	unsigned long major, minor, inode;
};

static bool next_map(const char **p, struct map *m)
{
	const char *line = *p;
	int got;

	if (!line || !*line)
		return false;
	*p = strchr(line, '\n');
	if (*p)
		(*p)++;
	got = sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %*x %lx:%lx %lu", &m->a, &m->b, m->perms,
		     &m->major, &m->minor, &m->inode);
	if (got != 6)
		m->a = m->b = 0;
	return true;
}

/* The mapping of maps holding addr (a zero range when none). */
static struct map map_at(const char *maps, uintptr_t addr)
{
	struct map m;

	while (next_map(&maps, &m))
		if (m.a <= addr && addr < m.b)
			return m;
	return (struct map){0};
}

/*
 * Whether [a, b) is a gap the range may take: nothing mapped there, or the
 * executable's own file mapped PROT_NONE (how ld.so fills the holes
 * between segments).
 */
static bool gap_free(const char *maps, uintptr_t a, uintptr_t b, const struct map *file)
{
	struct map m;

	if (a >= b)
		return true;
	while (next_map(&maps, &m)) {
		if (m.b <= a || m.a >= b)
			continue;
		/* An anonymous PROT_NONE mapping (inode 0) is somebody's reserve. */
		if (strcmp(m.perms, "---p") != 0 || file->inode == 0 || m.inode != file->inode ||
		    m.major != file->major || m.minor != file->minor)
			return false;
	}
	return true;
}

static uintptr_t page_up(uintptr_t v, size_t page)
{
	return (v + page - 1) & ~(uintptr_t)(page - 1);
}

static uintptr_t page_down(uintptr_t v, size_t page)
{
	return v & ~(uintptr_t)(page - 1);
}

/*
 * Copy [from, to) into dst (the copy of the range starting at base). Pages
 * at or above zero_from that were never touched (neither present nor
 * swapped, says pagemap) are zeros: not copied.
 */
static void copy(char *dst, uintptr_t base, uintptr_t from, uintptr_t to, uintptr_t zero_from,
		 size_t page)
{
	uint64_t pm[512];
	int fd = -1;

	if (zero_from < to)
		fd = hkc_path_openf(rt_path(), O_RDONLY, HK_PROC_SELF_PAGEMAP);
	if (fd < 0 || zero_from < from)
		zero_from = fd < 0 ? to : from;
	memcpy(dst + (from - base), (void *)from, zero_from - from);
	for (uintptr_t a = zero_from; a < to;) {
		size_t n = (to - a) / page < 512 ? (to - a) / page : 512, i = 0;
		ssize_t got = pread(fd, pm, n * sizeof(pm[0]), (off_t)(a / page * sizeof(pm[0])));

		if (got != (ssize_t)(n * sizeof(pm[0]))) {
			memcpy(dst + (a - base), (void *)a, to - a);
			break;
		}
		while (i < n) {
			size_t j = i;

			/* Bit 63: present; bit 62: swapped. */
			while (j < n && (pm[j] >> 62))
				j++;
			if (j > i)
				memcpy(dst + (a + i * page - base), (void *)(a + i * page),
				       (j - i) * page);
			while (j < n && !(pm[j] >> 62))
				j++;
			i = j;
		}
		a += n * page;
	}
	if (fd >= 0)
		close(fd);
}

/* An anonymous mapping of len bytes on hugetlb pages of size, prefaulted; NULL and errno. */
static char *build_hugetlb(size_t len, uint64_t size)
{
	int shift = __builtin_ctzll(size);
	char *m =
		mmap(NULL, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT), -1, 0);
	int err;

	if (m == MAP_FAILED)
		return NULL;
	/* Faulted now: a pool or cgroup shortage is an error here, not a SIGBUS in the copy. */
	if (madvise(m, len, MADV_POPULATE_WRITE) < 0 && errno != EINVAL) {
		err = errno;
		munmap(m, len);
		errno = err;
		return NULL;
	}
	return m;
}

/* An anonymous mapping of len bytes aligned to pmd, for transparent huge pages; NULL and errno. */
static char *build_thp(size_t len, uint64_t pmd)
{
	char *raw, *m;
	int err;

	if (len > SIZE_MAX - pmd) {
		errno = ENOMEM;
		return NULL;
	}
	raw = mmap(NULL, len + pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	m = (char *)page_up((uintptr_t)raw, pmd);
	if (m > raw)
		munmap(raw, (size_t)(m - raw));
	if (raw + len + pmd > m + len)
		munmap(m + len, (size_t)(raw + len + pmd - (m + len)));
	if (madvise(m, len, MADV_HUGEPAGE) < 0 ||
	    (madvise(m, len, MADV_POPULATE_WRITE) < 0 && errno != EINVAL)) {
		err = errno;
		munmap(m, len);
		errno = err;
		return NULL;
	}
	return m;
}

/*
 * mremap(MREMAP_FIXED) unmaps its destination before it moves, and a move
 * can still fail after that (ENOMEM: the map count, memory). Then nothing
 * is at [s, s + len) but the copy at m holds what was there: it goes back on
 * base pages, written and then given its protection (never W+X).
 */
static void put_back(const char *m, uintptr_t s, size_t len, int prot)
{
	unsigned char v;
	void *b;

	if (mincore((void *)s, 1, &v) == 0 || errno != ENOMEM)
		return; /* still mapped: the original is as it was */
	b = mmap((void *)s, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (b == MAP_FAILED)
		return;
	memcpy(b, m, len);
	mprotect(b, len, prot);
}

/*
 * The copy at m takes the place of [s, s + len): its protection first
 * (never writable and executable), then one mremap. On failure m is gone
 * and the original is as it was (or put back from m). 0 or -errno.
 */
static int put(char *m, uintptr_t s, size_t len, int prot)
{
	int err;

	if (mprotect(m, len, prot) == 0 &&
	    mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)s) != MAP_FAILED)
		return 0;
	err = errno;
	if (prot & PROT_READ)
		put_back(m, s, len, prot);
	munmap(m, len);
	return -err;
}

struct move {
	const struct hkc_seg_range *r;
	uintptr_t s, e;
	enum backing bk;
	uint64_t size;
	const char *how; /* for the information line */
};

/*
 * Build and fill a copy of [s, e) and put it in place. The copy is of the
 * segment's own pages (the gaps it reaches into are PROT_NONE, or holes:
 * zeros). Signals are held from the copy to the mremap: a handler's write
 * to the data in between would be lost.
 */
static int move_copy(const struct move *mv, const struct conf *c)
{
	const struct hkc_seg_range *r = mv->r;
	size_t len = mv->e - mv->s;
	uintptr_t from =
		mv->s > page_down(r->seg_start, c->page) ? mv->s : page_down(r->seg_start, c->page);
	uintptr_t to = mv->e < page_up(r->seg_end, c->page) ? mv->e : page_up(r->seg_end, c->page);
	uintptr_t zero_from = r->kind == HKC_SEG_DATA && c->minimal ? page_up(r->bss, c->page) : to;
	sigset_t all, old;
	char *m;
	int rc;

	m = mv->bk == BK_THP ? build_thp(len, c->pmd) : build_hugetlb(len, mv->size);
	if (!m)
		return -errno;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	copy(m, mv->s, from, to, zero_from, c->page);
	rc = 0;
	if (mv->bk == BK_THP && madvise(m, len, MADV_COLLAPSE) < 0) {
		rc = -errno;
		munmap(m, len);
	}
	if (rc == 0)
		rc = put(m, mv->s, len, r->prot);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* The executable's file name, for the shared file's name. */
static const char *exe_name(char *buf, size_t size)
{
	const struct hkc_path *p = rt_path();
	ssize_t n = p->rootfd >= 0 ? readlinkat(p->rootfd, HK_PROC_SELF_EXE, buf, size - 1) : -1;
	const char *slash;

	if (n <= 0)
		return program_invocation_short_name;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	return slash ? slash + 1 : buf;
}

/*
 * Text or rodata from a shared hugetlbfs file (share.c), mapped aside
 * private and read-only (no reservation) and put in place. 0, or -errno:
 * then the caller makes a private copy.
 */
static int move_shared(const struct move *mv, const struct exe *exe, bool *made)
{
	struct rt_share_req req = {.offset = mv->s - exe->info.dlpi_addr,
				   .src = (const void *)mv->s,
				   .len = mv->e - mv->s,
				   .page_size = mv->size};
	char key[128], name[PATH_MAX];
	char *m;
	int fd, rc;

	rc = rt_share_key(&exe->info, key, sizeof(key));
	if (rc < 0)
		return rc;
	req.key = key;
	req.exe_name = exe_name(name, sizeof(name));
	fd = rt_share_text_fd(&req, made);
	if (fd < 0)
		return fd;
	m = mmap(NULL, req.len, PROT_READ, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
	rc = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (rc < 0)
		return rc;
	return put(m, mv->s, req.len, mv->r->prot);
}

static void account(const struct hkc_seg_range *r, uintptr_t s, uintptr_t e)
{
	for (int k = 0; k < HKC_SEG_NKINDS; k++) {
		uint64_t huge, base;

		if (!(r->kind == HKC_SEG_DATA ? HKC_SEG_SEL_W & HKC_SEG_BIT(k) : (int)r->kind == k))
			continue;
		hkc_seg_bytes(r, k, s, e, &huge, &base);
		stats[k].asked = true;
		stats[k].huge += huge;
		stats[k].base += base;
	}
}

static const char *why_not(const struct hkc_seg_range *r)
{
	switch (r->why) {
	case HKC_SEG_WX:
		return "writable and executable";
	case HKC_SEG_UNREADABLE:
		return "not readable";
	default:
		return r->relro_end > r->seg_start ? "no aligned interior after RELRO"
		       : r->at_brk		   ? "no aligned interior below the program break"
						   : "no aligned interior";
	}
}

/*
 * Whether the executable's load base is aligned to the range's huge page
 * size. A PIE with p_align 4 kB is loaded at a base randomized in 4 kB steps:
 * the aligned interior, and so the shared file's content, differs from run to
 * run, and each run would leave a one-off file holding pool pages. Said once
 * a run when not.
 */
static bool base_aligned(const struct move *mv, const struct exe *exe)
{
	const ElfW(Phdr) *ph = exe->info.dlpi_phdr;
	uint64_t align = 0;
	char name[PATH_MAX];

	if (exe->info.dlpi_addr % mv->size == 0)
		return true;
	for (size_t i = 0; i < exe->info.dlpi_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_align > align)
			align = ph[i].p_align;
	rt_msg(rt_run_level(RT_WARNING),
	       "shared text: %s is not loaded at a %" PRIu64
	       " kB boundary (a PIE with p_align %" PRIu64
	       " kB): each copy keeps its own; run hugeedit --align on it or link it with "
	       "ld.hugetlbfs --hugetlbfs-align",
	       exe_name(name, sizeof(name)), mv->size / 1024, align / 1024);
	rt_mark_said();
	return false;
}

/*
 * Move [mv->s, mv->e) on hugetlb pages: shared when asked and possible, else
 * a private copy; on failure, say so once and fall back to transparent huge
 * pages where they are enabled. 0 or -errno.
 */
static int move_hugetlb(struct move *mv, const struct conf *c, const struct exe *exe, bool *made,
			bool *shared)
{
	const char *name = hkc_seg_kind_name(mv->r->kind);
	char what[64];
	int rc = -ENOENT;

	if (mv->size && c->share && !(mv->r->prot & PROT_WRITE)) {
		const char *why = "the program is not loaded at a huge page boundary";

		if (base_aligned(mv, exe)) {
			rc = move_shared(mv, exe, made);
			*shared = rc == 0;
			if (rc == 0)
				return 0;
			why = strerror(-rc);
		}
		rt_msg(RT_INFO, "segment %u (%s): not shared (%s): a private copy", mv->r->phdr,
		       name, why);
	}
	if (mv->size && (rc = move_copy(mv, c)) == 0)
		return 0;
	if (mv->size)
		snprintf(what, sizeof(what), "no %" PRIu64 " kB huge pages", mv->size / 1024);
	else
		snprintf(what, sizeof(what), "no huge page size");
	rt_msg(RT_INFO, "segment %u (%s): %s (%s)", mv->r->phdr, name, what, strerror(-rc));
	warn_run(what, strerror(-rc), c->thp_ok);
	if (c->thp_ok)
		mv->bk = BK_THP;
	return rc;
}

/*
 * What stays on base pages at an edge of a moved range, and why: RELRO
 * (read-only, never on a writable huge page), the program break, or another
 * mapping in the huge page the edge shares.
 */
static void say_edges(const struct hkc_seg_range *r, const struct move *mv, char *buf, size_t size)
{
	uint64_t before = mv->s > r->seg_start ? mv->s - r->seg_start : 0;
	uint64_t after = mv->e < r->seg_end ? r->seg_end - mv->e : 0;

	if (!before && !after) {
		snprintf(buf, size, "the whole segment");
		return;
	}
	snprintf(buf, size,
		 "its aligned interior; on base pages: %" PRIu64 " bytes before it%s, %" PRIu64
		 " after%s",
		 before,
		 !before		       ? ""
		 : r->relro_end > r->seg_start ? " (RELRO)"
					       : " (its huge page holds another mapping)",
		 after,
		 !after	     ? ""
		 : r->at_brk ? " (its huge page reaches the program break)"
			     : " (its huge page holds another mapping)");
}

/* The backing, for the information line. */
static void say_how(const struct move *mv, bool made, bool shared, char *how, size_t size)
{
	if (mv->bk == BK_THP)
		snprintf(how, size, "transparent huge pages");
	else
		/* Shared only where the file was: a private copy was said as such. */
		snprintf(how, size, "%" PRIu64 " kB hugetlb pages%s", mv->size / 1024,
			 !shared ? ""
			 : made	 ? ", shared (file made)"
				 : ", shared (file reused)");
}

/*
 * The range to move: the whole segment rounded out to huge pages (the plan
 * keeps it below the program break) where the gaps it reaches into hold
 * nothing (maps, read now), else the interior on that side.
 */
static void trim(struct move *mv, const struct conf *c, const char *maps)
{
	const struct hkc_seg_range *r = mv->r;
	struct map file = map_at(maps, r->seg_start);

	if (!gap_free(maps, mv->s, page_down(r->seg_start, c->page), &file))
		mv->s = r->istart;
	if (!gap_free(maps, page_up(r->seg_end, c->page), mv->e, &file))
		mv->e = r->iend;
}

/* Move one range by its part of the configuration; says what it did. */
static void move_range(const struct hkc_seg_range *r, const struct part *part, const struct conf *c,
		       const struct exe *exe, const char *maps, uint64_t size)
{
	struct move mv = {.r = r, .s = r->start, .e = r->end, .bk = part->bk, .size = size};
	const char *name = hkc_seg_kind_name(r->kind);
	char how[96], edges[160];
	bool made = false, shared = false;
	int rc = -EOPNOTSUPP;

	if (r->why == HKC_SEG_MOVE)
		trim(&mv, c, maps);
	if (r->why != HKC_SEG_MOVE || mv.s >= mv.e) {
		rt_msg(RT_INFO,
		       "segment %u (%s): %#" PRIxPTR "-%#" PRIxPTR " stays on base pages: %s",
		       r->phdr, name, r->seg_start, r->seg_end,
		       r->why == HKC_SEG_MOVE ? "no aligned interior beside the gaps" : why_not(r));
		account(r, 0, 0);
		return;
	}
	if (mv.bk == BK_HUGETLB)
		rc = move_hugetlb(&mv, c, exe, &made, &shared);
	/* THP pages are pmd-sized: a range planned for larger pages is aligned for them too. */
	if (rc < 0 && mv.bk == BK_THP) {
		rc = c->thp_ok ? move_copy(&mv, c) : -EOPNOTSUPP;
		if (rc < 0)
			warn_run("no transparent huge pages",
				 rc == -EOPNOTSUPP ? "disabled" : strerror(-rc), false);
	}
	if (rc < 0) {
		rt_msg(RT_INFO, "segment %u (%s): %#" PRIxPTR "-%#" PRIxPTR " stays on base pages",
		       r->phdr, name, r->seg_start, r->seg_end);
		account(r, 0, 0);
		return;
	}
	/* A child of fork() gets private hugetlb data on base pages (fork.c); text is never written. */
	if (mv.bk == BK_HUGETLB && (r->prot & PROT_WRITE))
		rt_fork_watch();
	account(r, mv.s, mv.e);
	if (nmoved < SEG_MAX) {
		moved[nmoved].s = mv.s;
		moved[nmoved].e = mv.e;
		moved[nmoved++].exec = r->prot & PROT_EXEC;
	}
	say_how(&mv, made, shared, how, sizeof(how));
	say_edges(r, &mv, edges, sizeof(edges));
	rt_msg(RT_INFO, "segment %u (%s): %#" PRIxPTR "-%#" PRIxPTR " (%zu kB) on %s: %s%s",
	       r->phdr, name, mv.s, mv.e, (size_t)(mv.e - mv.s) / 1024, how, edges,
	       r->x_dropped ? "; not executable (libhugetlbfs's linker script made it writable "
			      "and executable)"
			    : "");
}

/*
 * Where the program break starts: the [heap] mapping's start, else (no heap
 * yet) the break itself. 0 when it cannot be told: then no range reaches past
 * the end of the last segment.
 */
static uintptr_t brk_start(const char *maps)
{
	static const char heap[] = " [heap]\n";
	const char *h = strstr(maps, heap), *line;
	void *b = sbrk(0);
	uintptr_t a;

	if (h) {
		for (line = h; line > maps && line[-1] != '\n'; line--)
			;
		return sscanf(line, "%" SCNxPTR "-", &a) == 1 ? a : 0;
	}
	return b == (void *)-1 ? 0 : (uintptr_t)b;
}

/* Plan the segments of kinds for part's page size and move them. */
static void plan_part(const struct conf *c, const struct exe *exe, const char *maps,
		      const struct part *part, unsigned kinds, uintptr_t brk)
{
	uint64_t size = part->bk == BK_THP ? c->pmd
			: part->size	   ? part->size
					   : rt_default_page_size();
	struct hkc_seg_in in = {
		.phdr = exe->info.dlpi_phdr,
		.phnum = exe->info.dlpi_phnum,
		.bias = exe->info.dlpi_addr,
		/* No hugetlb page size: planned for THP's, which the fallback uses. */
		.page_size = size ? size : c->pmd,
		.base_page = c->page,
		.kinds = kinds,
		.flagged = c->flagged,
		.brk = brk};
	struct hkc_seg_range r[SEG_MAX];
	size_t n;
	int rc;

	if (part->bk == BK_NONE)
		return;
	rc = hkc_seg_plan(&in, r, SEG_MAX, &n);
	if (rc < 0) {
		rt_msg(RT_WARNING,
		       "the program's headers cannot be planned (%s): program segments "
		       "stay on base pages",
		       strerror(-rc));
		return;
	}
	for (size_t i = 0; i < n; i++)
		move_range(&r[i], part, c, exe, maps, part->bk == BK_THP ? 0 : size);
}

/* The executable ranges moved, for profilers (HUGETLB_PERFMAP). */
static void perfmap(const struct exe *exe)
{
	struct rt_range r[SEG_MAX];
	size_t n = 0;

	for (size_t i = 0; i < nmoved; i++)
		if (moved[i].exec)
			r[n++] = (struct rt_range){.s = moved[i].s, .e = moved[i].e};
	rt_perfmap(exe->info.dlpi_addr, r, n);
}

void rt_segments(void)
{
	struct exe exe = {.found = false};
	struct conf c;
	char *maps = NULL;
	uintptr_t brk;
	uint64_t n;

	if (!read_conf(&c))
		return;
	dl_iterate_phdr(first_object, &exe);
	/* Without HUGETLB_ELFMAP, a program that hugeedit did not mark costs nothing more. */
	if (!exe.found || (c.flagged && !any_flagged(&exe.info)))
		return;
	say_conf(&c);
	n = threads();
	if (n != 1) {
		if (n > 1)
			rt_msg(rt_run_level(RT_WARNING),
			       "threads are running (started by a library's constructor): "
			       "program segments stay on base pages");
		else
			rt_msg(RT_WARNING, "cannot tell whether threads are running: program "
					   "segments stay on base pages");
		rt_mark_said();
		return;
	}
	if (hkc_path_read_allf(rt_path(), &maps, NULL, HK_PROC_SELF_MAPS) < 0) {
		rt_msg(RT_WARNING, "cannot read the program's mappings: program segments stay on "
				   "base pages");
		return;
	}
	brk = brk_start(maps);
	if (c.r.bk == c.w.bk && c.r.size == c.w.size) {
		plan_part(&c, &exe, maps, &c.r, HKC_SEG_SEL_R | HKC_SEG_SEL_W, brk);
	} else {
		plan_part(&c, &exe, maps, &c.r, HKC_SEG_SEL_R, brk);
		plan_part(&c, &exe, maps, &c.w, HKC_SEG_SEL_W, brk);
	}
	free(maps);
	perfmap(&exe);
}
