// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeedit: show, set and clear the PF_LINUX_HUGETLB flag in the program
 * headers of an executable, the per-segment default that the runtime honours
 * when HUGETLB_ELFMAP is unset. The table is libhugetlbfs 2.23's, byte for
 * byte. --align raises p_align of the loadable segments to a huge page size,
 * so that the kernel loads a PIE at a base aligned to it (shared text).
 *
 * A file is never edited in place: it is read and validated whole (libelf),
 * the copy with the new flags goes to a temporary file in the same directory
 * (same owner, mode and extended attributes), is compared with the original
 * (only the p_flags and p_align words of PT_LOAD entries may differ) and read back through libelf, synced,
 * and renamed over the original. Any failure before the rename leaves the file
 * as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <hugekit/hugekit.h>
#include <hugetlbfs.h>

#include "tmpfile.h"

#include "opts.h"
#include "util.h"

enum {
	OPT_TEXT = HK_OPT_LONG_BASE,
	OPT_DATA,
	OPT_DISABLE,
	OPT_ALIGN,
	OPT_DRY_RUN,
	OPT_JSON,
};

// clang-format off
static const struct hkt_opt opts[] = {
	{ "text",         0,   HK_ARG_NONE, OPT_TEXT,    NULL, "put the text segment on huge pages by default", 0 },
	{ "data",         0,   HK_ARG_NONE, OPT_DATA,    NULL, "put the data segment (data and bss) on huge pages by default", 0 },
	{ "disable",      0,   HK_ARG_NONE, OPT_DISABLE, NULL, "put no segment on huge pages by default", 0 },
	{ "align",        0,   HK_ARG_OPTIONAL, OPT_ALIGN, "SIZE", "raise p_align of the loadable segments to SIZE\n(default: the default huge page size)", 0 },
	{ "dry-run",      0,   HK_ARG_NONE, OPT_DRY_RUN, NULL, "show the table as the edit would leave it; change nothing", 0 },
	{ "json",         0,   HK_ARG_NONE, OPT_JSON,    NULL, "print the segments as JSON", 0 },
	{ "help",         'h', HK_ARG_NONE, 'h',         NULL, "display this help", 0 },
	{ "version",      'V', HK_ARG_NONE, 'V',         NULL, "display version", 0 },
	{ "list-options", 0,   HK_ARG_NONE, HK_OPT_LIST_OPTIONS, NULL, "", HK_OPT_HIDDEN },
	{ 0 },
};
// clang-format on

__attribute__((noreturn)) static void usage(void)
{
	printf("Usage:\n %s [--text] [--data] | [--disable] [--align[=SIZE]] [options] FILE\n\n",
	       hkt_prog());
	printf("Show, or set and clear, which segments of the program FILE the hugekit\n"
	       "runtime puts on huge pages by default (without HUGETLB_ELFMAP).\n"
	       "Without --text, --data, --disable or --align: show, change nothing.\n\n");
	printf("Options:\n");
	hkt_opts_print_help(stdout, opts);
	printf("\nSee hugeedit(1).\n");
	exit(HK_EXIT_SUCCESS);
}

#define RWX (PF_R | PF_W | PF_X)

struct seg {
	size_t index; /* in the program header table */
	GElf_Phdr ph;
	Elf64_Word flags; /* p_flags after the edit */
	GElf_Xword align; /* p_align after the edit */
	bool text, data;
};

struct image {
	const char *name; /* as given, for messages */
	unsigned char *buf;
	size_t size;
	int cls;
	GElf_Half type; /* e_type */
	GElf_Off phoff;
	size_t phentsize;
	struct seg *segs; /* the PT_LOAD entries */
	size_t nsegs;
};

static void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ERROR: ", hkt_prog());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* fd's whole content into a buffer; -1 (said) on error or a size that moved. */
static int read_all(int fd, const char *name, const struct stat *st, struct image *im)
{
	size_t done = 0;
	char extra;

	if ((uintmax_t)st->st_size > SIZE_MAX) {
		err_msg("%s: too large", name);
		return -1;
	}
	im->size = (size_t)st->st_size;
	im->buf = malloc(im->size ? im->size : 1);
	if (!im->buf) {
		err_msg("%s: %s", name, strerror(ENOMEM));
		return -1;
	}
	while (done < im->size) {
		ssize_t n = pread(fd, im->buf + done, im->size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_msg("reading %s failed: %m", name);
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	if (done != im->size || pread(fd, &extra, 1, (off_t)done) != 0) {
		err_msg("%s changed size while being read", name);
		return -1;
	}
	return 0;
}

/* a + b <= limit, without overflow. */
static bool fits(uint64_t a, uint64_t b, uint64_t limit)
{
	return a <= limit && b <= limit - a;
}

/* 2.23's TEXT and DATA: exact R, W, X bits; TEXT has no zero-filled tail. */
static void classify(struct seg *s, GElf_Half machine)
{
	Elf64_Word rwx = s->ph.p_flags & RWX;

	s->text = rwx == (PF_R | PF_X) && s->ph.p_filesz == s->ph.p_memsz;
	/* 32-bit PowerPC's writable segment is executable (its PLT). */
	s->data = rwx == (machine == EM_PPC ? RWX : (PF_R | PF_W));
}

/* The identification bytes: ELF magic, a known class and byte order, a whole header. */
static int check_ident(struct image *im)
{
	const char *f = im->name;

	if (im->size < EI_NIDENT || memcmp(im->buf, ELFMAG, SELFMAG) != 0) {
		err_msg("%s: not an ELF file", f);
		return -1;
	}
	im->cls = im->buf[EI_CLASS];
	if (im->cls != ELFCLASS32 && im->cls != ELFCLASS64) {
		err_msg("%s: unknown ELF class %d", f, im->cls);
		return -1;
	}
	if (im->buf[EI_DATA] != ELFDATA2LSB && im->buf[EI_DATA] != ELFDATA2MSB) {
		err_msg("%s: unknown ELF byte order %d", f, im->buf[EI_DATA]);
		return -1;
	}
	if (im->size < (im->cls == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		err_msg("%s: truncated ELF header (%zu bytes)", f, im->size);
		return -1;
	}
	return 0;
}

/*
 * The ELF header into *eh and the program header count into *phnum: an
 * executable or shared object whose program header table lies in the file.
 */
static int check_ehdr(struct image *im, Elf *elf, GElf_Ehdr *eh, size_t *phnum)
{
	const char *f = im->name;

	if (!gelf_getehdr(elf, eh)) {
		err_msg("%s: truncated or corrupt ELF header: %s", f, elf_errmsg(-1));
		return -1;
	}
	if (eh->e_version != EV_CURRENT || im->buf[EI_VERSION] != EV_CURRENT) {
		err_msg("%s: unknown ELF version %u", f, eh->e_version);
		return -1;
	}
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) {
		err_msg("%s: not an executable or shared object (ELF type %u)", f, eh->e_type);
		return -1;
	}
	/*
	 * The counts from the header (libelf pretends that a table which does
	 * not fit has no entries), from section 0 only where they overflow.
	 */
	*phnum = eh->e_phnum;
	if (*phnum == PN_XNUM && elf_getphdrnum(elf, phnum) != 0) {
		err_msg("%s: corrupt program header count: %s", f, elf_errmsg(-1));
		return -1;
	}
	if (*phnum == 0) {
		err_msg("%s: no program headers", f);
		return -1;
	}
	im->type = eh->e_type;
	im->phoff = eh->e_phoff;
	im->phentsize = gelf_fsize(elf, ELF_T_PHDR, 1, EV_CURRENT);
	if (eh->e_phentsize != im->phentsize || *phnum > SIZE_MAX / im->phentsize ||
	    !fits(eh->e_phoff, *phnum * im->phentsize, im->size)) {
		err_msg("%s: the program header table does not fit in the file (truncated?)", f);
		return -1;
	}
	return 0;
}

/* The section header table and every section with content lie in the file. */
static int check_sections(const struct image *im, Elf *elf, const GElf_Ehdr *eh)
{
	const char *f = im->name;
	size_t shnum = eh->e_shnum, shentsize = gelf_fsize(elf, ELF_T_SHDR, 1, EV_CURRENT);
	Elf_Scn *scn = NULL;

	if ((eh->e_shoff || shnum) &&
	    (eh->e_shentsize != shentsize || !fits(eh->e_shoff, shentsize, im->size))) {
		err_msg("%s: the section header table does not fit in the file (truncated?)", f);
		return -1;
	}
	if (eh->e_shoff && shnum == 0 && elf_getshdrnum(elf, &shnum) != 0) {
		err_msg("%s: corrupt section header count: %s", f, elf_errmsg(-1));
		return -1;
	}
	if (shnum > SIZE_MAX / shentsize || !fits(eh->e_shoff, shnum * shentsize, im->size)) {
		err_msg("%s: the section header table does not fit in the file (truncated?)", f);
		return -1;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			err_msg("%s: corrupt section header: %s", f, elf_errmsg(-1));
			return -1;
		}
		if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL &&
		    !fits(sh.sh_offset, sh.sh_size, im->size)) {
			err_msg("%s: section %zu ends past the end of the file (truncated?)", f,
				elf_ndxscn(scn));
			return -1;
		}
	}
	return 0;
}

/* The PT_LOAD entries of the phnum program headers into im->segs, each in the file. */
static int load_segs(struct image *im, Elf *elf, size_t phnum, GElf_Half machine)
{
	const char *f = im->name;
	uint64_t addr_max = im->cls == ELFCLASS32 ? UINT32_MAX : UINT64_MAX;
	size_t n = 0;

	im->segs = calloc(phnum, sizeof(*im->segs));
	if (!im->segs) {
		err_msg("%s: %s", f, strerror(ENOMEM));
		return -1;
	}
	for (size_t i = 0; i < phnum; i++) {
		struct seg *s = &im->segs[n];

		if (!gelf_getphdr(elf, (int)i, &s->ph)) {
			err_msg("%s: corrupt program header %zu: %s", f, i, elf_errmsg(-1));
			return -1;
		}
		if (s->ph.p_type != PT_LOAD)
			continue;
		if (!fits(s->ph.p_offset, s->ph.p_filesz, im->size)) {
			err_msg("%s: segment %zu ends past the end of the file (truncated?)", f, i);
			return -1;
		}
		if (s->ph.p_filesz > s->ph.p_memsz ||
		    !fits(s->ph.p_vaddr, s->ph.p_memsz, addr_max)) {
			err_msg("%s: segment %zu has impossible sizes", f, i);
			return -1;
		}
		s->index = i;
		s->flags = s->ph.p_flags;
		s->align = s->ph.p_align;
		classify(s, machine);
		n++;
	}
	if (n == 0) {
		err_msg("%s: no loadable segment (PT_LOAD)", f);
		return -1;
	}
	im->nsegs = n;
	return 0;
}

/*
 * Everything hugeedit relies on, checked before anything is written: an ELF
 * executable or shared object whose headers, sections and loadable segments
 * all lie inside the file. -1 (said) when not.
 */
static int parse(struct image *im)
{
	GElf_Ehdr eh;
	size_t phnum;
	Elf *elf;
	int rc = -1;

	if (check_ident(im) < 0)
		return -1;
	elf = elf_memory((char *)im->buf, im->size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err_msg("%s: not an ELF file: %s", im->name, elf_errmsg(-1));
		goto out;
	}
	if (check_ehdr(im, elf, &eh, &phnum) < 0 || check_sections(im, elf, &eh) < 0 ||
	    load_segs(im, elf, phnum, eh.e_machine) < 0)
		goto out;
	rc = 0;
out:
	elf_end(elf);
	return rc;
}

/*
 * One changed word of the program header table: a p_flags or p_align of a
 * PT_LOAD entry, at its file offset, in the file's byte order.
 */
struct patch {
	size_t off, len;
	unsigned char bytes[8];
};

/* The patch that puts v in segment s's p_flags (align false) or p_align word. */
static int encode(const struct image *im, const struct seg *s, bool align, uint64_t v,
		  struct patch *p)
{
	bool is64 = im->cls == ELFCLASS64;
	size_t in_entry =
		align ? (is64 ? offsetof(Elf64_Phdr, p_align) : offsetof(Elf32_Phdr, p_align))
		      : (is64 ? offsetof(Elf64_Phdr, p_flags) : offsetof(Elf32_Phdr, p_flags));
	Elf64_Xword x = v;
	Elf32_Word w = (Elf32_Word)v;
	Elf_Data src = {.d_version = EV_CURRENT}, dst = {.d_version = EV_CURRENT};
	unsigned enc = im->buf[EI_DATA];

	p->off = (size_t)im->phoff + s->index * im->phentsize + in_entry;
	p->len = align && is64 ? 8 : 4;
	src.d_buf = p->len == 8 ? (void *)&x : (void *)&w;
	src.d_type = dst.d_type = p->len == 8 ? ELF_T_XWORD : ELF_T_WORD;
	src.d_size = dst.d_size = p->len;
	dst.d_buf = p->bytes;
	if (is64 ? !elf64_xlatetof(&dst, &src, enc) : !elf32_xlatetof(&dst, &src, enc))
		return -1;
	return 0;
}

/* 2.23's name of the segment's kind, or "". */
static const char *kind(const struct seg *s)
{
	if (s->text)
		return "TEXT";
	return s->data ? "DATA" : "";
}

static void print_table(const struct image *im)
{
	for (size_t i = 0; i < im->nsegs; i++) {
		const struct seg *s = &im->segs[i];

		printf("Segment %zu 0x%" PRIx64 " - 0x%" PRIx64 " (%s) default is %s pages\n",
		       s->index, (uint64_t)s->ph.p_vaddr, (uint64_t)(s->ph.p_vaddr + s->ph.p_memsz),
		       kind(s), s->flags & PF_LINUX_HUGETLB ? "HUGE" : "BASE");
	}
}

static void print_json(const struct image *im)
{
	struct hkt_json j;

	hkt_json_init(&j, stdout);
	hkt_json_open_object(&j, NULL);
	hkt_json_string(&j, "file", im->name);
	hkt_json_int(&j, "class", im->cls == ELFCLASS64 ? 64 : 32);
	hkt_json_string(&j, "byte_order", im->buf[EI_DATA] == ELFDATA2MSB ? "big" : "little");
	hkt_json_open_array(&j, "segments");
	for (size_t i = 0; i < im->nsegs; i++) {
		const struct seg *s = &im->segs[i];

		hkt_json_open_object(&j, NULL);
		hkt_json_u64(&j, "index", s->index);
		hkt_json_u64(&j, "vaddr", s->ph.p_vaddr);
		hkt_json_u64(&j, "memsz", s->ph.p_memsz);
		hkt_json_u64(&j, "offset", s->ph.p_offset);
		hkt_json_u64(&j, "filesz", s->ph.p_filesz);
		hkt_json_u64(&j, "flags", s->flags);
		hkt_json_u64(&j, "align", s->align);
		hkt_json_string(&j, "kind", kind(s));
		hkt_json_bool(&j, "huge", s->flags & PF_LINUX_HUGETLB);
		hkt_json_close_object(&j);
	}
	hkt_json_close_array(&j);
	hkt_json_close_object(&j);
	hkt_json_end(&j);
}

/* What an edit touches: the file, its directory, the temporary copy. */
struct edit {
	const char *name; /* as given */
	char *path;	  /* resolved */
	const char *base; /* in path */
	int dirfd, fd, tmpfd;
	struct stat st;
};

/*
 * The changed words of every segment, in file order (p_flags comes before
 * p_align in both classes); applied to the image, which becomes the copy.
 * -1 (said) when libelf cannot encode one.
 */
static int make_patches(struct image *im, struct patch *p, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < im->nsegs; i++) {
		struct seg *s = &im->segs[i];

		if (s->flags != s->ph.p_flags && encode(im, s, false, s->flags, &p[(*n)++]) < 0)
			goto fail;
		if (s->align != s->ph.p_align && encode(im, s, true, s->align, &p[(*n)++]) < 0)
			goto fail;
	}
	for (size_t k = 0; k < *n; k++)
		memcpy(im->buf + p[k].off, p[k].bytes, p[k].len);
	return 0;
fail:
	err_msg("%s: %s", im->name, elf_errmsg(-1));
	return -1;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Owner, then mode (a chown clears set-ID bits), then extended attributes. */
static int copy_attrs(struct edit *e)
{
	ssize_t len, vlen;
	char *names = NULL, *value = NULL;
	int rc = -1;

	if (fchown(e->tmpfd, e->st.st_uid, e->st.st_gid) < 0) {
		err_msg("%s: cannot give the new copy the owner %u:%u: %m", e->name,
			(unsigned)e->st.st_uid, (unsigned)e->st.st_gid);
		return -1;
	}
	if (fchmod(e->tmpfd, e->st.st_mode & 07777) < 0) {
		err_msg("%s: cannot give the new copy the mode %04o: %m", e->name,
			(unsigned)(e->st.st_mode & 07777));
		return -1;
	}
	len = flistxattr(e->fd, NULL, 0);
	if (len < 0 && (errno == ENOTSUP || errno == ENOSYS))
		return 0;
	if (len < 0)
		goto fail;
	names = malloc((size_t)len + 1);
	if (!names)
		goto fail;
	len = flistxattr(e->fd, names, (size_t)len);
	if (len < 0)
		goto fail;
	for (char *n = names; n < names + len; n += strlen(n) + 1) {
		vlen = fgetxattr(e->fd, n, NULL, 0);
		if (vlen < 0)
			goto fail_attr;
		free(value);
		value = malloc((size_t)vlen + 1);
		if (!value)
			goto fail_attr;
		vlen = fgetxattr(e->fd, n, value, (size_t)vlen);
		if (vlen < 0 || fsetxattr(e->tmpfd, n, value, (size_t)vlen, 0) < 0) {
		fail_attr:
			err_msg("%s: cannot copy the extended attribute %s: %m", e->name, n);
			goto out;
		}
	}
	rc = 0;
	goto out;
fail:
	err_msg("%s: cannot list the extended attributes: %m", e->name);
out:
	free(names);
	free(value);
	return rc;
}

/*
 * The copy against the original, read again from the file: equal but for the
 * changed p_flags and p_align words, which hold the new values; then libelf
 * reads the new flags and alignments back from the copy.
 */
static int verify(struct edit *e, const struct image *im, const struct patch *p, size_t n)
{
	static unsigned char a[1 << 16], b[1 << 16];
	size_t pos = 0, k = 0;
	Elf *elf;
	int rc = 0;

	while (pos < im->size) {
		size_t len = im->size - pos < sizeof(a) ? im->size - pos : sizeof(a);

		if (pread(e->fd, a, len, (off_t)pos) != (ssize_t)len ||
		    pread(e->tmpfd, b, len, (off_t)pos) != (ssize_t)len) {
			err_msg("%s: reading back the new copy failed: %m", e->name);
			return -1;
		}
		for (size_t i = 0; i < len; i++) {
			size_t at = pos + i;

			while (k < n && at >= p[k].off + p[k].len)
				k++;
			if (k < n && at >= p[k].off) {
				if (b[i] != im->buf[at])
					rc = -1;
			} else if (a[i] != b[i]) {
				rc = -1;
			}
		}
		pos += len;
	}
	if (rc == 0 && pread(e->tmpfd, a, 1, (off_t)pos) != 0)
		rc = -1;
	elf = rc == 0 ? elf_begin(e->tmpfd, ELF_C_READ, NULL) : NULL;
	for (size_t i = 0; elf && i < im->nsegs; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)im->segs[i].index, &ph) ||
		    ph.p_flags != im->segs[i].flags || ph.p_align != im->segs[i].align)
			rc = -1;
	}
	if (rc == 0 && !elf)
		rc = -1;
	elf_end(elf);
	if (rc < 0)
		err_msg("%s: the new copy is not the original with the new program headers; "
			"not replaced",
			e->name);
	return rc;
}

/* The original, unchanged since it was read, still under its name. */
static int unchanged(struct edit *e)
{
	struct stat now, named;

	if (fstat(e->fd, &now) < 0 || fstatat(e->dirfd, e->base, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
	    now.st_size != e->st.st_size || now.st_mtim.tv_sec != e->st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != e->st.st_mtim.tv_nsec ||
	    now.st_ctim.tv_sec != e->st.st_ctim.tv_sec ||
	    now.st_ctim.tv_nsec != e->st.st_ctim.tv_nsec || named.st_dev != e->st.st_dev ||
	    named.st_ino != e->st.st_ino) {
		err_msg("%s changed while being edited; not replaced", e->name);
		return -1;
	}
	return 0;
}

static int write_copy(struct edit *e, struct image *im)
{
	struct patch *patches = calloc(2 * im->nsegs, sizeof(*patches));
	struct hkt_tmpfile t = {.fd = -1};
	int rc = -1, err;
	size_t n;

	if (!patches) {
		err_msg("%s: %s", e->name, strerror(ENOMEM));
		goto out;
	}
	if (make_patches(im, patches, &n) < 0)
		goto out;
	/* No name until it is whole (O_TMPFILE), or a random one: none that others can plant. */
	err = hkt_tmpfile_open(&t, e->dirfd, e->base, 0600);
	if (err < 0) {
		err_msg("%s: cannot create a temporary file beside it: %s", e->name,
			strerror(-err));
		goto out;
	}
	e->tmpfd = t.fd;
	if (write_all(e->tmpfd, im->buf, im->size) < 0) {
		err_msg("%s: writing the new copy failed: %m", e->name);
		goto out;
	}
	if (copy_attrs(e) < 0)
		goto out;
	if (fsync(e->tmpfd) < 0) {
		err_msg("%s: syncing the new copy failed: %m", e->name);
		goto out;
	}
	if (verify(e, im, patches, n) < 0)
		goto out;
	if (unchanged(e) < 0)
		goto out;
	err = hkt_tmpfile_replace(&t, e->base);
	if (err < 0) {
		err_msg("%s: replacing it with the new copy failed (%s): %s", e->name, t.step,
			strerror(-err));
		goto out;
	}
	rc = 0;
out:
	e->tmpfd = -1;
	err = hkt_tmpfile_close(&t);
	if (err < 0 && rc == 0) {
		err_msg("%s: closing the new copy failed: %s", e->name, strerror(-err));
		rc = -1;
	}
	free(patches);
	return rc;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/*
 * The default huge page size in bytes (Hugepagesize, as ld.hugetlbfs reads
 * it); 2 MiB where the kernel has no hugetlb (a build machine).
 */
static uint64_t default_huge_size(void)
{
	struct hk_ctx *ctx = NULL;
	uint64_t size = 0;

	if (hk_new(NULL, &ctx) < 0 || hk_default_page_size(ctx, &size) < 0 || !is_pow2(size))
		size = 0;
	hk_unref(ctx);
	return size ? size : 2u << 20;
}

/*
 * --align: every PT_LOAD whose p_align is below size gets size. The kernel
 * then loads an ET_DYN file at a base aligned to size; the pages themselves
 * stay where they are, so each segment needs p_vaddr = p_offset modulo the
 * page size only (which the kernel and ld.so need anyway). An ET_EXEC file
 * is loaded at its fixed addresses: nothing to gain, left as it is (said).
 * -1 (said) when a segment cannot be aligned.
 */
static int set_align(struct image *im, uint64_t size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (im->type == ET_EXEC) {
		fprintf(stderr,
			"%s: %s is not position-independent (ET_EXEC: loaded at fixed "
			"addresses): --align would change nothing; its alignment is left as it is\n",
			hkt_prog(), im->name);
		return 0;
	}
	if (im->cls == ELFCLASS32 && size > UINT32_MAX) {
		err_msg("%s: --align=%" PRIu64 " does not fit in a 32-bit file's p_align", im->name,
			size);
		return -1;
	}
	for (size_t i = 0; i < im->nsegs; i++) {
		struct seg *s = &im->segs[i];

		if (s->ph.p_align >= size)
			continue;
		if ((s->ph.p_vaddr - s->ph.p_offset) % page) {
			err_msg("%s: segment %zu: p_vaddr 0x%" PRIx64 " and p_offset 0x%" PRIx64
				" differ by a part of a page: cannot be aligned",
				im->name, s->index, (uint64_t)s->ph.p_vaddr,
				(uint64_t)s->ph.p_offset);
			return -1;
		}
		s->align = size;
	}
	return 0;
}

/*
 * Open FILE to show it: through symbolic links, read-only. O_NONBLOCK: a FIFO
 * is refused (not a regular file), not waited on.
 */
static int open_show(struct edit *e)
{
	e->fd = open(e->name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (e->fd < 0) {
		err_msg("Opening %s failed: %m", e->name);
		return -1;
	}
	return 0;
}

/* Appends "/" COMP to the resolved path *PATH ("" is the root), or ".." takes its last name away. */
static int path_step(char **path, const char *comp)
{
	size_t len = strlen(*path);
	char *p;

	if (!strcmp(comp, "..")) {
		p = strrchr(*path, '/'); /* "" stays "" */
		if (p)
			*p = '\0';
	} else if (strcmp(comp, ".")) {
		p = realloc(*path, len + strlen(comp) + 2);
		if (!p)
			return -1;
		*path = p;
		p[len] = '/';
		strcpy(p + len + 1, comp);
	}
	return 0;
}

/*
 * The walk's end: the regular file BASE (mode, dev, ino its status when
 * looked up) in the directory reached (cur), opened for reading, with the
 * directory and the file's resolved path. -1 (said) when it is not, or not
 * the same file.
 */
static int walk_finish(struct edit *e, int cur, const struct hk_walk *w)
{
	struct stat opened;
	size_t len;

	/* Not opened (a FIFO would wait, a device could act) unless a regular file. */
	if (!S_ISREG(w->mode)) {
		err_msg("%s: not a regular file", e->name);
		return -1;
	}
	e->dirfd = openat(cur, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->dirfd < 0) {
		err_msg("Opening the directory of %s failed: %m", e->name);
		return -1;
	}
	e->fd = openat(e->dirfd, w->base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (e->fd < 0) {
		err_msg("Opening %s failed: %m", e->name);
		return -1;
	}
	if (fstat(e->fd, &opened) < 0 || (uint64_t)opened.st_dev != w->dev ||
	    (uint64_t)opened.st_ino != w->ino) {
		err_msg("%s changed while being opened; not edited", e->name);
		return -1;
	}
	len = strlen(e->path);
	if (path_step(&e->path, w->base) < 0) {
		err_msg("Opening %s failed: %m", e->name);
		return -1;
	}
	e->base = e->path + len + 1;
	return 0;
}

/*
 * Open FILE to edit it: the file a symbolic link leads to, by its directory
 * (where the copy is made) and its name there, through libhugekit's
 * symlink-safe walk (hk_walk): name by name, each looked up in the
 * directory the previous one opened, without following anything, so that a
 * directory renamed or replaced by a link meanwhile cannot send the edit
 * elsewhere (the review's RENAME_EXCHANGE race). The links met are followed
 * by their content read from the link opened; as root, only links that
 * belong to root (anyone else's link could lead anywhere).
 */
static int open_edit(struct edit *e)
{
	struct hk_walk w = {.size = sizeof(w)};
	int rc = hk_walk(e->name, HK_WALK_LINKS | HK_WALK_ROOT_LINKS, &w);

	errno = -rc;
	if (rc < 0 && w.problem == HK_WALK_LINK_NOT_ROOTS)
		err_msg("%s: the symbolic link %s belongs to user %ju, not root: not followed",
			e->name, w.where ? w.where : "?", (uintmax_t)w.link_uid);
	else if (rc < 0 && w.problem == HK_WALK_READLINK)
		err_msg("Reading the symbolic link %s failed: %m", w.where ? w.where : "?");
	else if (rc < 0)
		err_msg("Opening %s failed: %m", e->name);
	if (rc == 0) {
		e->path = w.path;
		w.path = NULL;
		rc = walk_finish(e, w.dirfd, &w);
	}
	hk_walk_fini(&w);
	return rc < 0 ? -1 : 0;
}

/* What the command line asks for. */
struct args {
	bool text, data, disable, dry_run, json;
	uint64_t align; /* --align's size, 0 without */
	const char *file;
};

/* Whether the command line changes the file (else it only shows it). */
static bool editing(const struct args *a)
{
	return a->text || a->data || a->disable || a->align;
}

/* The options and FILE into *a; exits on a usage error, -1 (said) on another. */
static int parse_args(int argc, char **argv, struct args *a)
{
	const char *align_arg = NULL;
	struct hkt_getopt g;
	int c;

	if (hkt_getopt_init(&g, opts, "") < 0)
		return -1;
	while ((c = hkt_getopt_next(&g, argc, argv)) != -1) {
		switch (c) {
		case OPT_TEXT:
			a->text = true;
			break;
		case OPT_DATA:
			a->data = true;
			break;
		case OPT_DISABLE:
			a->disable = true;
			break;
		case OPT_ALIGN:
			align_arg = optarg;
			a->align = optarg ? 0 : default_huge_size();
			break;
		case OPT_DRY_RUN:
			a->dry_run = true;
			break;
		case OPT_JSON:
			a->json = true;
			break;
		default:
			hkt_opts_standard(c, opts, usage);
		}
	}
	if (align_arg && (hk_parse_size(align_arg, &a->align) < 0 || !is_pow2(a->align) ||
			  a->align < (uint64_t)sysconf(_SC_PAGESIZE) || a->align > (16ull << 30))) {
		err_msg("--align=%s: not a size such as 2M or 1G (a power of two, the page size "
			"to 16G)",
			align_arg);
		return -1;
	}
	if (a->disable && (a->text || a->data)) {
		err_msg("--disable is not compatible with --text or --data");
		return -1;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s: %s\n", hkt_prog(),
			optind == argc ? "no FILE given" : "more than one FILE given");
		hkt_errtryhelp();
	}
	if (a->dry_run && !editing(a)) {
		fprintf(stderr, "%s: --dry-run needs --text, --data, --disable or --align\n",
			hkt_prog());
		hkt_errtryhelp();
	}
	a->file = argv[optind];
	return 0;
}

/* FILE opened (to show or to edit), read and parsed into *im; -1 (said) on failure. */
static int load(struct edit *e, struct image *im, bool edit)
{
	if ((edit ? open_edit(e) : open_show(e)) < 0)
		return -1;
	if (fstat(e->fd, &e->st) < 0) {
		err_msg("%s: %m", e->name);
		return -1;
	}
	if (!S_ISREG(e->st.st_mode)) {
		err_msg("%s: not a regular file", e->name);
		return -1;
	}
	if (read_all(e->fd, e->name, &e->st, im) < 0 || parse(im) < 0)
		return -1;
	return 0;
}

/* The new flags and alignments of the segments; whether any differs from the file's. */
static bool apply(struct image *im, const struct args *a)
{
	bool change = false;

	for (size_t i = 0; i < im->nsegs; i++) {
		struct seg *s = &im->segs[i];

		if (a->text || a->data || a->disable) {
			s->flags = s->ph.p_flags & ~(Elf64_Word)PF_LINUX_HUGETLB;
			if ((a->text && s->text) || (a->data && s->data))
				s->flags |= PF_LINUX_HUGETLB;
		}
		change |= s->flags != s->ph.p_flags || s->align != s->ph.p_align;
	}
	return change;
}

/* What an edit and its image hold, given back. */
static void edit_fini(struct edit *e, struct image *im)
{
	if (e->tmpfd >= 0)
		close(e->tmpfd);
	if (e->fd >= 0)
		close(e->fd);
	if (e->dirfd >= 0)
		close(e->dirfd);
	free(e->path);
	free(im->segs);
	free(im->buf);
}

int main(int argc, char **argv)
{
	struct args a = {0};
	struct edit e = {.dirfd = -1, .fd = -1, .tmpfd = -1};
	struct image im = {0};
	int rc = HK_EXIT_FAILURE;

	hkt_close_stdout_atexit();
	/* Privileged for someone else (privilege.h): never; it rewrites what its caller names. */
	if (hk_privileged_for_other()) {
		fprintf(stderr,
			"%s: not run set-user-ID, set-group-ID or with file capabilities for "
			"another user: it rewrites the files its caller names\n",
			hkt_prog());
		return HK_EXIT_FAILURE;
	}
	if (parse_args(argc, argv, &a) < 0)
		return HK_EXIT_FAILURE;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err_msg("libelf: %s", elf_errmsg(-1));
		return HK_EXIT_FAILURE;
	}

	e.name = a.file;
	im.name = e.name;
	if (load(&e, &im, editing(&a)) < 0)
		goto out;
	if (a.align && set_align(&im, a.align) < 0)
		goto out;
	if (editing(&a) && apply(&im, &a) && !a.dry_run) {
		/* A second name would keep the old content: the rename breaks the link. */
		if (e.st.st_nlink > 1) {
			err_msg("%s has %ju hard links; the edit would reach this name only: not edited",
				e.name, (uintmax_t)e.st.st_nlink);
			goto out;
		}
		if (write_copy(&e, &im) < 0)
			goto out;
	}
	if (a.json)
		print_json(&im);
	else
		print_table(&im);
	rc = HK_EXIT_SUCCESS;
out:
	edit_fini(&e, &im);
	return rc;
}
