// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fork() and private huge pages. After fork() the child shares the private
 * hugetlb pages of its parent (the heap under hugectl --heap, the regions of
 * get_huge_pages) copy-on-write. Its first write to one needs a new huge
 * page, and only the parent holds the reservation: with no free page in the
 * pool the child dies of SIGBUS, and when the parent writes first, the
 * kernel takes the page away from the child, which dies when it touches it.
 * bash subshells, $(...), os.fork and prefork servers do exactly this.
 *
 * So, once the program has such memory, a fork handler moves the child off
 * it: in the child, for each private anonymous hugetlb mapping
 * ("/anon_hugepage" in /proc/self/maps) that is writable or PROT_NONE (not
 * the program's text or rodata, which is never written), it makes an anonymous mapping of
 * base pages, copies into it the huge pages that are present (mincore:
 * reading a page never needs a new one; a page that is not present reads as
 * zeros on either side), gives it the protection of the original (glibc's
 * arena heaps are PROT_NONE beyond their top) and puts it in its place with
 * mremap(MREMAP_FIXED). The parent waits for the child's move (a pipe, as
 * long as the child lives) so that its own writes cannot take pages from
 * under the child's copy. Its other threads do not wait: a write of theirs
 * with no free page in the pool takes the page from the child, whose copy
 * would then have zeros; the parent's record of the pages it had (struct
 * fork_record) tells the child, which then leaves that mapping as it is (a
 * touch of the page: the kernel's SIGBUS, never wrong data). The child
 * handler allocates nothing: a forked child of a
 * threaded program may only call async-signal-safe functions, and a malloc
 * would write to the very heap being moved.
 *
 * The child keeps its memory on base pages (transparent huge pages where the
 * kernel allows them); the parent keeps its huge pages
 * and, once the child has moved, needs no copy for its own writes either.
 * posix_spawn, vfork and system() (glibc's uses posix_spawn) share the
 * parent's memory until exec and need nothing. What remains is in
 * libhugekit-rt(7): raw clone(2) and _Fork() run no fork handler; glibc
 * writes the lock of every malloc arena of the parent's threads in the child
 * before any handler runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "kconst.h"

/*
 * What the parent knows of its private hugetlb mappings at fork(), for the
 * child: each range and one bit per base page, set where the parent had the
 * page (mincore) before fork() or just after it. A page set here and not
 * present in the child was taken from it by a write of the parent (the
 * parent holds the reservation: the kernel unmaps the page from the child):
 * its data is gone, and a copy would put zeros where the child had data. The
 * child then leaves that mapping as it is, and a touch of the page ends it
 * with the kernel's SIGBUS, as without this library. Shared (MAP_SHARED),
 * so that the parent's second look after fork() reaches the child.
 */
#define RT_FORK_MAPS 512

struct fork_map {
	uintptr_t a, b;
	size_t bit; /* index of the first page's bit in bits[] */
};

struct fork_record {
	size_t len; /* of this mapping, in bytes */
	size_t n;
	struct fork_map map[RT_FORK_MAPS];
	unsigned char bits[];
};

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static atomic_bool watching;
/*
 * Per thread: two threads may fork at once. move_pipe: the child says it has
 * moved; go_pipe: the parent says the record is complete.
 */
static __thread int move_pipe[2] = {-1, -1}, go_pipe[2] = {-1, -1};
static __thread struct fork_record *record;

static void close_fds(int *fds)
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static void close_pipe(void)
{
	close_fds(move_pipe);
	close_fds(go_pipe);
}

static void drop_record(void)
{
	if (record)
		munmap(record, record->len);
	record = NULL;
}

typedef void map_fn(uintptr_t a, uintptr_t b, const char *perms, void *arg);
static void each_hugetlb_map(map_fn *fn, void *arg);

/* Set the bits of the pages of [a, b) the calling process has; all of them where it cannot tell. */
static void mark_present(uintptr_t a, uintptr_t b, unsigned char *bits, size_t bit)
{
	size_t page = rt_base_page_size(), chunk = 4096 * page;
	unsigned char vec[4096];

	for (uintptr_t off = a; off < b; off += chunk) {
		size_t n = b - off < chunk ? b - off : chunk, pages = n / page;
		bool unknown = mincore((void *)off, n, vec) < 0;

		for (size_t i = 0; i < pages; i++, bit++)
			if (unknown || (vec[i] & 1))
				bits[bit / 8] |= (unsigned char)(1u << (bit % 8));
	}
}

struct ranges {
	size_t n, pages;
	struct fork_map map[RT_FORK_MAPS];
};

static void add_range(uintptr_t a, uintptr_t b, const char *perms, void *arg)
{
	struct ranges *r = arg;

	(void)perms;
	if (r->n == RT_FORK_MAPS)
		return; /* not recorded: the child leaves it shared */
	r->map[r->n].a = a;
	r->map[r->n].b = b;
	r->map[r->n].bit = r->pages;
	r->pages += (b - a) / rt_base_page_size();
	r->n++;
}

/* In the parent, before fork(): the ranges and the pages it has now. */
static void make_record(void)
{
	struct ranges *r;
	size_t len;
	void *m;

	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return;
	r->n = r->pages = 0;
	each_hugetlb_map(add_range, r);
	len = sizeof(struct fork_record) + (r->pages + 7) / 8;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		record = m;
		record->len = len;
		record->n = r->n;
		memcpy(record->map, r->map, r->n * sizeof(r->map[0]));
		for (size_t i = 0; i < r->n; i++)
			mark_present(r->map[i].a, r->map[i].b, record->bits, r->map[i].bit);
	}
	munmap(r, sizeof(*r));
}

static void prepare(void)
{
	if (!atomic_load(&watching))
		return;
	/* Opened now, in the parent: the child may not allocate. */
	rt_path();
	if (pipe2(move_pipe, O_CLOEXEC) < 0 || pipe2(go_pipe, O_CLOEXEC) < 0) {
		close_pipe();
		return;
	}
	make_record();
}

static void parent(void)
{
	struct pollfd pfd;
	char c = 1;

	if (move_pipe[0] < 0)
		return;
	/*
	 * A second look, now that the child exists: a page that another thread
	 * touched between prepare() and fork() is here now (the parent keeps the
	 * pages it had; a write of its own gives it a new one).
	 */
	if (record)
		for (size_t i = 0; i < record->n; i++)
			mark_present(record->map[i].a, record->map[i].b, record->bits,
				     record->map[i].bit);
	/* The read end is still open here: no SIGPIPE when fork() failed. */
	while (write(go_pipe[1], &c, 1) < 0 && errno == EINTR)
		;
	close(move_pipe[1]);
	move_pipe[1] = -1;
	/*
	 * One byte when the child has moved; end of file when it is gone (or
	 * fork failed, or it called exec). No time limit: while the child
	 * copies, a write of the parent to a shared page with no free page in
	 * the pool would take the page from it.
	 */
	pfd.fd = move_pipe[0];
	pfd.events = POLLIN;
	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	if (pfd.revents & POLLIN)
		while (read(move_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
	close_pipe();
	drop_record();
}

static unsigned long hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

static bool bit_set(const unsigned char *bits, size_t bit)
{
	return bits[bit / 8] & (1u << (bit % 8));
}

/*
 * Copy the present pages of [src, src + len) to dst, making src readable if
 * need be. False, and src to be left as it is, where a page that the parent
 * had (bits from bit on) is not there or cannot be read: a copy would have
 * zeros where the child had data.
 */
static bool copy_present(char *dst, char *src, size_t len, bool readable, const unsigned char *bits,
			 size_t bit)
{
	size_t page = rt_base_page_size(), chunk = 4096 * page;
	unsigned char vec[4096];

	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk, pages = n / page, i = 0;

		if (mincore(src + off, n, vec) < 0)
			return false;
		while (i < pages) {
			size_t j = i;

			if (!(vec[i] & 1)) {
				if (bit_set(bits, bit + off / page + i))
					return false; /* taken by the parent */
				i++;
				continue;
			}
			while (j < pages && (vec[j] & 1))
				j++;
			if (!readable) {
				if (mprotect(src, len, PROT_READ) < 0)
					return false;
				readable = true;
			}
			/* One fault for the run, not one per page (kernel 5.14; else faulted by memcpy). */
			madvise(dst + off + i * page, (j - i) * page, MADV_POPULATE_WRITE);
			memcpy(dst + off + i * page, src + off + i * page, (j - i) * page);
			i = j;
		}
	}
	return true;
}

/*
 * An anonymous private mapping of len bytes, aligned like [a, a + len) up
 * to RT_FORK_ALIGN, so that where transparent huge pages are allowed
 * (enabled: madvise or always) the copy gets them: copying into 4 KiB pages
 * took 5 to 40 times as long as into 2 MiB ones on the development machine.
 */
#define RT_FORK_ALIGN ((size_t)2 << 20)

static char *map_like(uintptr_t a, size_t len)
{
	size_t al = RT_FORK_ALIGN;
	char *raw, *m;

	while (al > rt_base_page_size() && (a & (al - 1)))
		al /= 2;
	raw = mmap(NULL, len + al, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	m = (char *)(((uintptr_t)raw + al - 1) & ~((uintptr_t)al - 1));
	if (m > raw)
		munmap(raw, (size_t)(m - raw));
	if (raw + len + al > m + len)
		munmap(m + len, (size_t)(raw + len + al - (m + len)));
	madvise(m, len, MADV_HUGEPAGE);
	return m;
}

static int prot_of(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

/*
 * Put base pages with the same contents and protection in place of [a, b),
 * a mapping the parent's record has; else leave it shared.
 */
static void move_one(uintptr_t a, uintptr_t b, const char *perms, void *arg)
{
	const struct fork_record *rec = arg;
	const struct fork_map *f = NULL;
	size_t len = b - a;
	int prot = prot_of(perms);
	char *m;

	for (size_t i = 0; i < rec->n && !f; i++)
		if (rec->map[i].a == a && rec->map[i].b == b)
			f = &rec->map[i];
	if (!f)
		return; /* made or changed by another thread while forking: the parent cannot tell */
	m = map_like(a, len);
	if (!m)
		return; /* no memory: the child keeps sharing, as without this library */
	if (!copy_present(m, (char *)a, len, prot & PROT_READ, rec->bits, f->bit)) {
		/* Data gone: the original, whose touch ends in SIGBUS, not zeros. */
		munmap(m, len);
		if (!(prot & PROT_READ))
			mprotect((void *)a, len, prot); /* made readable for the copy */
		return;
	}
	if ((prot != (PROT_READ | PROT_WRITE) && mprotect(m, len, prot) < 0) ||
	    mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a) == MAP_FAILED)
		munmap(m, len);
}

/* One line of maps: "start-end perms offset dev inode   path". */
static void maybe_call(const char *line, map_fn *fn, void *arg)
{
	static const char anon[] = "/anon_hugepage";
	const char *p = line;
	uintptr_t a, b;
	char perms[5];

	a = hex(&p);
	if (*p++ != '-')
		return;
	b = hex(&p);
	if (*p++ != ' ' || strlen(p) < 5)
		return;
	memcpy(perms, p, 4);
	perms[4] = '\0';
	if (perms[3] != 'p' || b <= a)
		return;
	/*
	 * The program's text and rodata that segments.c put on huge pages, as
	 * long as they stay read-only: never written, so never copied, the
	 * child shares them. Any other read-only mapping may be made writable
	 * again and written (a region the program protected for a while): it
	 * moves.
	 */
	if (perms[1] != 'w' && rt_segments_holds(a, b))
		return;
	/* The path is the sixth field. */
	for (int field = 1; field < 5; field++) {
		p = strchr(p, ' ');
		if (!p)
			return;
		while (*p == ' ')
			p++;
	}
	if (strncmp(p, anon, sizeof(anon) - 1) == 0)
		fn(a, b, perms, arg);
}

/* Call fn for each private anonymous hugetlb mapping; maps is read into the stack: no allocation. */
static void each_hugetlb_map(map_fn *fn, void *arg)
{
	char buf[8192];
	size_t have = 0;
	bool skipping = false;
	int fd;

	fd = rt_path_is_ready() ? hkc_path_openf(rt_path(), O_RDONLY, HK_PROC_SELF_MAPS)
				: open(HK_ABS(HK_PROC_SELF_MAPS), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			if (!skipping)
				maybe_call(line, fn, arg);
			skipping = false;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		/* A line longer than the buffer (a long path): not ours, skip to its end. */
		if (have == sizeof(buf) - 1) {
			have = 0;
			skipping = true;
		}
	}
	close(fd);
}

static void child(void)
{
	char c = 1;
	ssize_t got;

	if (!atomic_load(&watching) || move_pipe[0] < 0)
		return;
	/* Wait until the parent's record is complete; without it, move nothing. */
	close(go_pipe[1]);
	go_pipe[1] = -1;
	while ((got = read(go_pipe[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (got == 1 && record)
		each_hugetlb_map(move_one, record);
	/* The read end is still open here: no SIGPIPE. */
	while (write(move_pipe[1], &c, 1) < 0 && errno == EINTR)
		;
	close_pipe();
	drop_record();
}

static void watch(void)
{
	const char *v = secure_getenv("HK_RT_FORK");

	/* HK_RT_FORK=share: leave children sharing the huge pages (for measurements). */
	if (v && strcmp(v, "share") == 0)
		return;
	if (pthread_atfork(prepare, parent, child) == 0)
		atomic_store(&watching, true);
}

void rt_fork_watch(void)
{
	pthread_once(&watch_once, watch);
}
