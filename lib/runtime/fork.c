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
 * ("/anon_hugepage" in /proc/self/maps), it makes an anonymous mapping of
 * base pages, copies into it the huge pages that are present (mincore:
 * reading a page never needs a new one; a page that is not present reads as
 * zeros on either side), gives it the protection of the original (glibc's
 * arena heaps are PROT_NONE beyond their top) and puts it in its place with
 * mremap(MREMAP_FIXED). The parent waits for the child's move (a pipe; at
 * most RT_FORK_WAIT_MS) so that its own writes cannot take pages from under
 * the child's copy. The child handler allocates nothing: a forked child of a
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

/* How long the parent waits for its child to move off the shared huge pages. */
#define RT_FORK_WAIT_MS 10000

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static atomic_bool watching;
/* Per thread: two threads may fork at once. */
static __thread int move_pipe[2] = {-1, -1};

static void close_pipe(void)
{
	for (int i = 0; i < 2; i++) {
		if (move_pipe[i] >= 0)
			close(move_pipe[i]);
		move_pipe[i] = -1;
	}
}

static void prepare(void)
{
	if (!atomic_load(&watching))
		return;
	/* Opened now, in the parent: the child may not allocate. */
	rt_path();
	if (pipe2(move_pipe, O_CLOEXEC) < 0)
		move_pipe[0] = move_pipe[1] = -1;
}

static void parent(void)
{
	struct pollfd pfd;
	char c;

	if (move_pipe[0] < 0)
		return;
	close(move_pipe[1]);
	move_pipe[1] = -1;
	/* One byte when the child has moved; end of file when it is gone (or fork failed). */
	pfd.fd = move_pipe[0];
	pfd.events = POLLIN;
	while (poll(&pfd, 1, RT_FORK_WAIT_MS) < 0 && errno == EINTR)
		;
	if (pfd.revents & POLLIN)
		while (read(move_pipe[0], &c, 1) < 0 && errno == EINTR)
			;
	close_pipe();
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

/* Copy the present pages of [src, src + len) to dst, making src readable if need be. */
static void copy_present(char *dst, char *src, size_t len, bool readable)
{
	size_t page = rt_base_page_size(), chunk = 4096 * page;
	unsigned char vec[4096];

	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk, pages = n / page, i = 0;

		if (mincore(src + off, n, vec) < 0)
			memset(vec, 1, pages); /* cannot tell: copy it all */
		while (i < pages) {
			size_t j = i;

			if (!(vec[i] & 1)) {
				i++;
				continue;
			}
			while (j < pages && (vec[j] & 1))
				j++;
			if (!readable) {
				if (mprotect(src, len, PROT_READ) < 0)
					return;
				readable = true;
			}
			/* One fault for the run, not one per page (kernel 5.14; else faulted by memcpy). */
			madvise(dst + off + i * page, (j - i) * page, MADV_POPULATE_WRITE);
			memcpy(dst + off + i * page, src + off + i * page, (j - i) * page);
			i = j;
		}
	}
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

/* Put base pages with the same contents and protection in place of [a, b). */
static void move_one(uintptr_t a, uintptr_t b, const char *perms)
{
	size_t len = b - a;
	int prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		   (perms[2] == 'x' ? PROT_EXEC : 0);
	char *m = map_like(a, len);

	if (!m)
		return; /* no memory: the child keeps sharing, as without this library */
	copy_present(m, (char *)a, len, prot & PROT_READ);
	if ((prot != (PROT_READ | PROT_WRITE) && mprotect(m, len, prot) < 0) ||
	    mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a) == MAP_FAILED)
		munmap(m, len);
}

/* One line of maps: "start-end perms offset dev inode   path". */
static void maybe_move(const char *line)
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
	/* The path is the sixth field. */
	for (int field = 1; field < 5; field++) {
		p = strchr(p, ' ');
		if (!p)
			return;
		while (*p == ' ')
			p++;
	}
	if (strncmp(p, anon, sizeof(anon) - 1) == 0)
		move_one(a, b, perms);
}

/* Read maps a chunk at a time, into the stack: no allocation. */
static void move_all(void)
{
	char buf[8192];
	size_t have = 0;
	bool skipping = false;
	int fd;

	fd = rt_path_is_ready() ? hk_path_openf(rt_path(), O_RDONLY, HK_PROC_SELF_MAPS)
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
				maybe_move(line);
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

	if (!atomic_load(&watching))
		return;
	move_all();
	if (move_pipe[1] >= 0)
		while (write(move_pipe[1], &c, 1) < 0 && errno == EINTR)
			;
	close_pipe();
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
