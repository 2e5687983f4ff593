// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbols for profilers (HUGETLB_PERFMAP=1, hugectl --perf-map). Text that
 * segments.c moved is anonymous memory ("/anon_hugepage" or anonymous THP):
 * perf finds no file behind those addresses and cannot name the functions.
 * perf reads /tmp/perf-PID.map for anonymous executable memory (its JIT
 * interface: one "START SIZE NAME" line a symbol, hexadecimal), so this
 * writes one: each function of the executable's symbol table (.symtab, else
 * .dynsym, read from /proc/self/exe) that lies in a moved executable range.
 *
 * /tmp is shared with every user: the file is made under a fresh name
 * (mkostemp: O_EXCL, mode 0600, never through a link), filled and renamed
 * into place. It stays 0600: its addresses are the layout that
 * /proc/PID/maps keeps from other users (ASLR), and perf reads a map only
 * of its own user or root anyway; a /tmp/perf-PID.map that another user left
 * there is never written through (the rename over it fails in the sticky
 * /tmp, and the library says so). It belongs to the process's user. It
 * stays after the program exits, as a JIT's does.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "kconst.h"

/* A symbol's type, in the word size of the build. */
#if __SIZEOF_POINTER__ == 8
#define SYM_TYPE(info) ELF64_ST_TYPE(info)
#else
#define SYM_TYPE(info) ELF32_ST_TYPE(info)
#endif

/* A symbol table larger than this is not read (a program's is a few MiB at most). */
#define PERFMAP_MAX_TABLE ((size_t)256 << 20)

struct table {
	ElfW(Sym) * sym;
	size_t nsym;
	char *str;
	size_t strsz;
};

/* len bytes at off of fd into a new buffer; NULL and errno. */
static void *read_at(int fd, off_t off, size_t len)
{
	char *b;
	size_t got = 0;

	if (len == 0 || len > PERFMAP_MAX_TABLE) {
		errno = EFBIG;
		return NULL;
	}
	b = malloc(len + 1);
	if (!b)
		return NULL;
	while (got < len) {
		ssize_t n = pread(fd, b + got, len - got, off + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(b);
			errno = n < 0 ? errno : EIO;
			return NULL;
		}
		got += (size_t)n;
	}
	b[len] = '\0'; /* a string table that is not terminated ends here */
	return b;
}

/* The section headers' table of type (SHT_SYMTAB, SHT_DYNSYM) and its strings; 0 or -errno. */
static int read_table(int fd, const ElfW(Ehdr) * eh, ElfW(Shdr) * sh, unsigned type,
		      struct table *t)
{
	for (size_t i = 0; i < eh->e_shnum; i++) {
		const ElfW(Shdr) *s = &sh[i], *strs;

		if (s->sh_type != type || s->sh_link >= eh->e_shnum ||
		    s->sh_entsize != sizeof(ElfW(Sym)))
			continue;
		strs = &sh[s->sh_link];
		t->sym = read_at(fd, (off_t)s->sh_offset, s->sh_size);
		t->str = t->sym ? read_at(fd, (off_t)strs->sh_offset, strs->sh_size) : NULL;
		if (!t->str) {
			free(t->sym);
			t->sym = NULL;
			return -errno;
		}
		t->nsym = s->sh_size / sizeof(ElfW(Sym));
		t->strsz = strs->sh_size;
		return 0;
	}
	return -ENOENT;
}

/* The executable's function symbols: .symtab, else .dynsym (a stripped program). 0 or -errno. */
static int read_symbols(struct table *t)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	int fd = hkc_path_openf(rt_path(), O_RDONLY, HK_PROC_SELF_EXE), rc;

	*t = (struct table){0};
	if (fd < 0)
		return fd;
	rc = pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
			     memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
			     eh.e_shentsize == sizeof(ElfW(Shdr)) && eh.e_shnum > 0
		     ? 0
		     : -ENOEXEC;
	if (rc == 0) {
		sh = read_at(fd, (off_t)eh.e_shoff, (size_t)eh.e_shnum * sizeof(*sh));
		rc = sh ? 0 : -errno;
	}
	if (rc == 0 && (rc = read_table(fd, &eh, sh, SHT_SYMTAB, t)) == -ENOENT)
		rc = read_table(fd, &eh, sh, SHT_DYNSYM, t);
	free(sh);
	close(fd);
	return rc;
}

/* Whether [a, a + len) lies in one of the n ranges. */
static bool inside(const struct rt_range *r, size_t n, uintptr_t a, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (a >= r[i].s && a < r[i].e && len <= r[i].e - a)
			return true;
	return false;
}

/* The lines of the map into f: the functions in the ranges. The number written. */
static size_t write_lines(FILE *f, const struct table *t, uintptr_t bias, const struct rt_range *r,
			  size_t n)
{
	size_t lines = 0;

	for (size_t i = 0; i < t->nsym; i++) {
		const ElfW(Sym) *s = &t->sym[i];
		uintptr_t a = bias + (uintptr_t)s->st_value;

		if (SYM_TYPE(s->st_info) != STT_FUNC || s->st_size == 0 ||
		    s->st_shndx == SHN_UNDEF || s->st_name >= t->strsz || !t->str[s->st_name] ||
		    !inside(r, n, a, s->st_size))
			continue;
		fprintf(f, "%" PRIxPTR " %" PRIx64 " %s\n", a, (uint64_t)s->st_size,
			t->str + s->st_name);
		lines++;
	}
	return lines;
}

/* The map, written aside and renamed into place. 0, or -errno. */
static int publish(const struct table *t, uintptr_t bias, const struct rt_range *r, size_t n,
		   const char *path, size_t *lines)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	*lines = write_lines(f, t, bias, r, n);
	if (fflush(f) != 0)
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

void rt_perfmap(uintptr_t bias, const struct rt_range *r, size_t n)
{
	const char *v = secure_getenv("HUGETLB_PERFMAP");
	struct table t;
	char path[64];
	size_t lines = 0;
	int rc;

	if (!v || strcmp(v, "1") != 0)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)getpid());
	if (n == 0) {
		rt_msg(RT_INFO, "HUGETLB_PERFMAP=1: no text was moved: %s not written", path);
		return;
	}
	rc = read_symbols(&t);
	if (rc == 0)
		rc = publish(&t, bias, r, n, path, &lines);
	free(t.sym);
	free(t.str);
	if (rc < 0) {
		rt_msg(RT_WARNING,
		       "HUGETLB_PERFMAP=1: cannot write %s (%s): profilers will not name "
		       "the functions of the moved text",
		       path, strerror(-rc));
		return;
	}
	rt_msg(RT_INFO, "HUGETLB_PERFMAP=1: %s: %zu functions of the moved text", path, lines);
}
