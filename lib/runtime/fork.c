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
 * So, once the program has such memory, a fork handler gives the child its
 * own copy: in the child, for each private anonymous hugetlb mapping
 * ("/anon_hugepage" in /proc/self/maps) that is writable or PROT_NONE (not
 * the program's text or rodata, which is never written), it makes a new
 * private mapping, copies into it the pages that are present (mincore:
 * reading a page never needs a new one; a page that is not present reads as
 * zeros on either side), gives it the protection of the original (glibc's
 * arena heaps are PROT_NONE beyond their top) and puts it in its place with
 * mremap(MREMAP_FIXED). The new mapping is on huge pages of the original's
 * size (PROCMAP_QUERY tells it; the parent asks before fork()) as far as
 * the pool and a hugetlb cgroup let this child reserve and fault them now
 * (huge_most: the most pages that map, all faulted with
 * MADV_POPULATE_WRITE, so a limit is an error here and never a SIGBUS
 * later); the rest of the mapping goes on base pages (transparent huge
 * pages where the kernel allows them), and the first child of the run that
 * falls back warns once. Writable mappings only: a PROT_NONE reserve goes
 * on base pages.
 *
 * The parent waits for the child's move (a pipe, as long as the child
 * lives) so that its own writes cannot take pages from under the child's
 * copy. Its other threads do not wait: a write
 * of theirs with no free page in the pool takes the page from the child, whose copy
 * would then have zeros; the parent's record of the pages it had (struct
 * fork_record) tells the child, which then leaves that mapping as it is (a
 * touch of the page: the kernel's SIGBUS, never wrong data). The child
 * handler allocates nothing (mmap only), and runs on a stack of base pages
 * that the parent made for it (side): a forked thread's stack, or the
 * stack given to clone(), may lie in the very memory being moved. A forked
 * child of a threaded program may only call async-signal-safe functions,
 * and a malloc would write to the heap being moved.
 *
 * The parent keeps its huge pages and, once the child has moved, needs no
 * copy for its own writes either. _Fork() and clone() without CLONE_VM run
 * no fork handler: this library's _Fork and clone do the same moves around
 * glibc's (clone's child starts on the side stack and moves before it
 * touches the caller's stack). posix_spawn, vfork and system() (glibc's
 * uses posix_spawn) share the parent's memory until exec and need nothing.
 * What remains is in libhugekit-rt(7): the raw clone system call runs no
 * wrapper; glibc writes the lock of every malloc arena of the parent's
 * threads in the child before any handler runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
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
	size_t bit;   /* index of the first page's bit in bits[] */
	size_t hpage; /* its huge page size (PROCMAP_QUERY); 0: unknown, base pages */
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
 * Shared (MAP_SHARED, made once by watch()) by this process and every child
 * forked from it, theirs too: whether a child already warned that some of
 * its copy is on base pages (once a run, the others at the information level).
 */
static struct fork_shared {
	atomic_int warned;
} * shared;
/* In a child, during child(): the bytes of its copy on base pages, for the one line it says. */
static size_t child_base;
/* HK_RT_FORK=base: children copy onto base pages only (for measurements). */
static bool fork_base;
/*
 * Per thread: two threads may fork at once. move_pipe: the child says it has
 * moved; go_pipe: the parent says the record is complete.
 */
static __thread int move_pipe[2] = {-1, -1}, go_pipe[2] = {-1, -1};
static __thread struct fork_record *record;
/*
 * A stack of base pages the child moves on, made by prepare(): the thread
 * that forks may run on a stack that is itself in the memory being moved (a
 * stack from malloc, for clone() or a thread), whose copy would miss the
 * frames that the copy itself writes.
 */
#define RT_FORK_SIDE ((size_t)128 << 10)
static __thread char *side;
static ucontext_t side_back, side_run; /* the child's, during child() */

/*
 * The write ends of the move pipes of every fork in progress in this
 * process (fd + 1; 0: free), with their inodes. A child of another thread's
 * fork inherits them; while it holds one, that parent's wait for end of file
 * (its child gone, or its fork failed) lasts as long as this child lives.
 * So a child closes the others' ones that it has, checked by inode (the
 * number may be another file here).
 */
#define RT_FORK_SLOTS 64
static struct fork_slot {
	atomic_int fd;
	dev_t dev;
	ino_t ino;
} slots[RT_FORK_SLOTS];
static __thread int my_slot = -1;

/*
 * Held from a thread's pipes to the end of its fork (and around the close of
 * its write end): another thread's fork then copies the slots and the
 * descriptors as they are together. Given up after a second (a child of the
 * raw clone system call may have a copy that no one releases): the slots
 * then miss a pipe now and then, as without them.
 */
static atomic_int fork_lock;
static __thread bool fork_locked;

static void gate_lock(void)
{
	struct timespec t0, t;
	int free_lock = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!atomic_compare_exchange_weak(&fork_lock, &free_lock, 1)) {
		free_lock = 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 1)
			return;
		sched_yield();
	}
	fork_locked = true;
}

static void gate_unlock(void)
{
	if (fork_locked)
		atomic_store(&fork_lock, 0);
	fork_locked = false;
}

static void slot_take(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	for (int i = 0; i < RT_FORK_SLOTS; i++) {
		int free_fd = 0;

		if (atomic_compare_exchange_strong(&slots[i].fd, &free_fd, -1)) {
			slots[i].dev = st.st_dev;
			slots[i].ino = st.st_ino;
			atomic_store(&slots[i].fd, fd + 1);
			my_slot = i;
			return;
		}
	}
}

static void slot_drop(void)
{
	if (my_slot >= 0)
		atomic_store(&slots[my_slot].fd, 0);
	my_slot = -1;
}

/* In a child: close the write ends of the other forks in progress, and forget them all. */
static void slots_close_others(void)
{
	struct stat st;

	for (int i = 0; i < RT_FORK_SLOTS; i++) {
		int fd = atomic_load(&slots[i].fd) - 1;

		if (i != my_slot && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == slots[i].dev &&
		    st.st_ino == slots[i].ino)
			close(fd);
		atomic_store(&slots[i].fd, 0);
	}
	my_slot = -1;
}

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

/* Whether this runs on the side stack. */
static bool on_side_now(void)
{
	char here;

	return side && &here >= side && &here < side + RT_FORK_SIDE;
}

static void drop_record(void)
{
	if (record)
		munmap(record, record->len);
	record = NULL;
	/* Not the stack this runs on (a child of clone(), see trampoline()): it goes with the child. */
	if (side && !on_side_now())
		munmap(side, RT_FORK_SIDE);
	side = NULL;
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
	int qfd; /* /proc/self/maps, for PROCMAP_QUERY */
	struct fork_map map[RT_FORK_MAPS];
};

/*
 * The page size of the mapping at a, from the kernel (PROCMAP_QUERY, Linux
 * 6.11); 0 when it cannot tell. The layout is the kernel's uapi one
 * (linux/fs.h, struct procmap_query), which the build's headers may lack.
 */
struct rt_procmap_query {
	uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size,
		vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define RT_PROCMAP_QUERY _IOWR('f', 17, struct rt_procmap_query)

static size_t page_size_at(int fd, uintptr_t a)
{
	struct rt_procmap_query q = {.size = sizeof(q), .query_addr = a};

	if (fd < 0 || ioctl(fd, RT_PROCMAP_QUERY, &q) < 0 || q.vma_start > a || a >= q.vma_end)
		return 0;
	return (size_t)q.vma_page_size;
}

static void add_range(uintptr_t a, uintptr_t b, const char *perms, void *arg)
{
	struct ranges *r = arg;
	size_t hp;

	if (r->n == RT_FORK_MAPS)
		return; /* not recorded: the child leaves it shared */
	/* Huge pages for the child's copy of what it may write; a PROT_NONE reserve gets base pages. */
	hp = perms[1] == 'w' ? page_size_at(r->qfd, a) : 0;
	r->map[r->n].a = a;
	r->map[r->n].b = b;
	r->map[r->n].bit = r->pages;
	r->map[r->n].hpage = hp > rt_base_page_size() && a % hp == 0 && b % hp == 0 ? hp : 0;
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
	r->qfd = rt_path_is_ready() ? hkc_path_openf(rt_path(), O_RDONLY, HK_PROC_SELF_MAPS) : -1;
	each_hugetlb_map(add_range, r);
	if (r->qfd >= 0)
		close(r->qfd);
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
	if (fork_locked)
		return; /* a fork from a signal handler within this thread's fork */
	gate_lock();
	if (pipe2(move_pipe, O_CLOEXEC) < 0 || pipe2(go_pipe, O_CLOEXEC) < 0) {
		close_pipe();
		gate_unlock();
		return;
	}
	slot_take(move_pipe[1]);
	side = mmap(NULL, RT_FORK_SIDE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (side == MAP_FAILED)
		side = NULL;
	make_record();
}

static void parent(void)
{
	struct pollfd pfd;
	char c = 1;

	gate_unlock();
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
	gate_lock(); /* no other thread's fork between the two */
	slot_drop();
	close(move_pipe[1]);
	gate_unlock();
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
 * A private hugetlb mapping of pages of size hp, as many of n as the pool
 * (and a hugetlb cgroup) lets this process reserve and fault now, all
 * faulted (MADV_POPULATE_WRITE: a limit is an error here, never a SIGBUS
 * later); *got of them. NULL when none.
 */
static char *huge_most(size_t n, size_t hp, size_t *got)
{
	int flags =
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (__builtin_ctzl(hp) << MAP_HUGE_SHIFT);
	size_t k = n, page = rt_base_page_size();
	unsigned char v;
	char *m = mmap(NULL, n * hp, PROT_READ | PROT_WRITE, flags, -1, 0);

	*got = 0;
	if (m == MAP_FAILED) {
		/* The most that the pool reserves lies in [lo, hi]: a binary search. */
		size_t lo = 0, hi = n - 1;

		while (lo < hi) {
			size_t mid = hi - (hi - lo) / 2;
			char *t = mmap(NULL, mid * hp, PROT_READ | PROT_WRITE, flags, -1, 0);

			if (t == MAP_FAILED) {
				hi = mid - 1;
			} else {
				munmap(t, mid * hp);
				lo = mid;
			}
		}
		k = lo;
		if (k == 0 ||
		    (m = mmap(NULL, k * hp, PROT_READ | PROT_WRITE, flags, -1, 0)) == MAP_FAILED)
			return NULL;
	}
	if (madvise(m, k * hp, MADV_POPULATE_WRITE) < 0 && errno != EINVAL) {
		/* A cgroup's limit: keep the pages that were had, the first ones. */
		size_t had = 0;

		while (had < k && mincore(m + had * hp, page, &v) == 0 && (v & 1))
			had++;
		munmap(m + had * hp, (k - had) * hp);
		k = had;
		if (k == 0)
			return NULL;
	}
	*got = k;
	return m;
}

/* dst takes the place of [a, a + len): its protection, then one mremap; false when it cannot. */
static bool put(char *dst, uintptr_t a, size_t len, int prot)
{
	if (len == 0)
		return true;
	if ((prot != (PROT_READ | PROT_WRITE) && mprotect(dst, len, prot) < 0) ||
	    mremap(dst, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a) == MAP_FAILED) {
		munmap(dst, len);
		return false;
	}
	return true;
}

/*
 * Put pages with the same contents and protection in place of [a, b), a
 * mapping the parent's record has; else leave it shared. Huge pages of the
 * mapping's size as far as the pool has them for this child (its own
 * reservation, as the parent has its own), base pages for the rest.
 */
static void move_one(uintptr_t a, uintptr_t b, const char *perms, void *arg)
{
	const struct fork_record *rec = arg;
	const struct fork_map *f = NULL;
	size_t len = b - a, k = 0, hlen, page = rt_base_page_size();
	int prot = prot_of(perms);
	char *h = NULL, *m = NULL;

	for (size_t i = 0; i < rec->n && !f; i++)
		if (rec->map[i].a == a && rec->map[i].b == b)
			f = &rec->map[i];
	if (!f)
		return; /* made or changed by another thread while forking: the parent cannot tell */
	/* The stack this runs on (no side stack could be made): a copy would miss its own frames. */
	if (!on_side_now() && (uintptr_t)&f >= a && (uintptr_t)&f < b)
		return;
	if (f->hpage && !fork_base)
		h = huge_most(len / f->hpage, f->hpage, &k);
	hlen = k * f->hpage;
	if (hlen < len && !(m = map_like(a + hlen, len - hlen))) {
		if (h)
			munmap(h, hlen);
		return; /* no memory: the child keeps sharing, as without this library */
	}
	if (!copy_present(h, (char *)a, hlen, prot & PROT_READ, rec->bits, f->bit) ||
	    !copy_present(m, (char *)(a + hlen), len - hlen, prot & PROT_READ, rec->bits,
			  f->bit + hlen / page)) {
		/* Data gone: the original, whose touch ends in SIGBUS, not zeros. */
		if (h)
			munmap(h, hlen);
		if (m)
			munmap(m, len - hlen);
		if (!(prot & PROT_READ))
			mprotect((void *)a, len, prot); /* made readable for the copy */
		return;
	}
	if (!put(h, a, hlen, prot)) {
		if (m)
			munmap(m, len - hlen);
		return;
	}
	if (put(m, a + hlen, len - hlen, prot) && f->hpage && !fork_base)
		child_base += len - hlen;
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

/*
 * What part of this child's copy is on base pages: one warning a run (the
 * first child to say it, when the run has said nothing), else information.
 * rt_msg formats into its own buffer and writes once: no allocation, no lock.
 */
static void say_base(void)
{
	bool first = shared && atomic_exchange(&shared->warned, 1) == 0;

	rt_msg(first ? rt_run_level(RT_WARNING) : RT_INFO,
	       "a forked child (pid %ld): %zu kB of its private huge page memory on base pages "
	       "(the pool, or a hugetlb cgroup's limit, has no more for its copy)",
	       (long)getpid(), child_base / 1024);
}

static void moves(void)
{
	each_hugetlb_map(move_one, record);
}

/* fn() on the side stack, back here when it returns; on this stack where there is none. */
static void on_side(void (*fn)(void))
{
	if (!side || on_side_now() || getcontext(&side_run) < 0) {
		fn();
		return;
	}
	side_run.uc_stack.ss_sp = side;
	side_run.uc_stack.ss_size = RT_FORK_SIDE;
	side_run.uc_link = &side_back;
	makecontext(&side_run, fn, 0);
	if (swapcontext(&side_back, &side_run) < 0)
		fn();
}

static void child(void)
{
	char c = 1;
	ssize_t got;

	if (!atomic_load(&watching))
		return;
	/* The only thread here: the lock of the thread that forked is this one's to drop. */
	atomic_store(&fork_lock, 0);
	fork_locked = false;
	slots_close_others();
	if (move_pipe[0] < 0)
		return;
	/* Wait until the parent's record is complete; without it, move nothing. */
	close(go_pipe[1]);
	go_pipe[1] = -1;
	while ((got = read(go_pipe[0], &c, 1)) < 0 && errno == EINTR)
		;
	child_base = 0;
	if (got == 1 && record)
		on_side(moves);
	if (child_base)
		say_base();
	/* The read end is still open here: no SIGPIPE. */
	while (write(move_pipe[1], &c, 1) < 0 && errno == EINTR)
		;
	close_pipe();
	drop_record();
}

/* glibc's _Fork and clone, which the wrappers below call. */
static pid_t (*real_fork)(void);
static int (*real_clone)(int (*)(void *), void *, int, void *, ...);
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
	real_fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "_Fork");
	real_clone = (int (*)(int (*)(void *), void *, int, void *, ...))dlsym(RTLD_NEXT, "clone");
}

static void watch(void)
{
	const char *v = secure_getenv("HK_RT_FORK");
	void *m;

	/* HK_RT_FORK=share: leave children sharing the huge pages (for measurements). */
	if (v && strcmp(v, "share") == 0)
		return;
	fork_base = v && strcmp(v, "base") == 0;
	m = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED)
		shared = m;
	/* Now, while the program may still allocate: a wrapper called later does not. */
	pthread_once(&resolve_once, resolve);
	if (pthread_atfork(prepare, parent, child) == 0)
		atomic_store(&watching, true);
}

/*
 * _Fork() (glibc 2.34) makes a child as fork() does but runs no fork
 * handler: the same moves around it, here. glibc's own fork() calls its
 * _Fork internally, never this one.
 */
RT_EXPORT pid_t _Fork(void)
{
	pid_t pid;

	pthread_once(&resolve_once, resolve);
	if (!real_fork) {
		errno = ENOSYS;
		return -1;
	}
	if (!atomic_load(&watching))
		return real_fork();
	prepare();
	pid = real_fork();
	if (pid == 0)
		child();
	else
		parent();
	return pid;
}

struct tramp {
	int (*fn)(void *);
	void *arg;
	char *stack; /* the caller's stack (its top); NULL: the child starts on it */
};

static const struct tramp *tramp_now; /* the child's, for run_user() */

/* The caller's function, on the caller's stack; its value is the child's exit status, as glibc's. */
static void run_user(void)
{
	syscall(SYS_exit, tramp_now->fn(tramp_now->arg));
}

/*
 * The child of clone(), started on the side stack: moved first, then the
 * caller's function on the caller's stack (which may lie in the very memory
 * moved: nothing is written to it before the move, so an empty pool is no
 * SIGBUS there).
 */
static int trampoline(void *p)
{
	const struct tramp *t = p;

	child();
	if (t->stack && getcontext(&side_run) == 0) {
		tramp_now = t;
		/* The context's stack ends at the caller's top: only that end is used. */
		side_run.uc_stack.ss_sp = t->stack - 4096;
		side_run.uc_stack.ss_size = 4096;
		side_run.uc_link = NULL;
		makecontext(&side_run, run_user, 0);
		setcontext(&side_run);
	}
	return t->fn(t->arg);
}

/*
 * clone() without CLONE_VM copies the memory as fork() does, and runs no
 * fork handler either: the child's start goes through trampoline(). With
 * CLONE_VM (threads, posix_spawn) nothing is copied; with CLONE_VFORK the
 * parent could not answer the child's wait for the record; with
 * CLONE_SETTLS the child's thread-local state is not ours; with CLONE_FILES
 * the child shares the parent's descriptors, and the pipes, closed on both
 * sides, would be closed twice in the one table (a descriptor that the other
 * side opened meanwhile under the same number with them): left as they are.
 */
RT_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	struct tramp t = {.fn = fn, .arg = arg};
	pid_t *ptid, *ctid;
	void *tls;
	va_list ap;
	int pid;

	/* The optional arguments, passed on as they came: the kernel reads them only as flags say. */
	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	pthread_once(&resolve_once, resolve);
	if (!real_clone) {
		errno = ENOSYS;
		return -1;
	}
	if ((flags & (CLONE_VM | CLONE_VFORK | CLONE_SETTLS | CLONE_FILES)) || !fn ||
	    !atomic_load(&watching))
		return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
	prepare();
	if (side && stack) {
		t.stack = stack;
		stack = side + RT_FORK_SIDE;
	}
	pid = real_clone(trampoline, stack, flags, &t, ptid, tls, ctid);
	parent();
	return pid;
}

void rt_fork_watch(void)
{
	pthread_once(&watch_once, watch);
}
