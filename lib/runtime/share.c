// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Shared text (HUGETLB_SHARE=1): the read-only ranges of a program, kept in
 * hugetlbfs files that every process of the same user and the same build maps,
 * so that a second copy of the program takes no new huge page.
 *
 * Where: <mount>/elflink-uid-<euid>/<exe>.<key>.<offset hex>, the mount
 * being HUGETLB_SHARE_PATH or the first hugetlbfs mount of the page size (in
 * the mount table's order, as api.c reads it) where the directory is, or can
 * be made. The directory is libhugetlbfs 2.23's (which makes it 0700 too, so
 * one it left is used as it is), and administrators' scripts that clean up
 * after 2.23 remove it. 2.23 keeps its own files there,
 * <exe>_<bits>_<phdr index> (and <that>.tmp while it makes one); a crash
 * leaves our temporary files: none of those names is ever one of ours (ours
 * end in "." and hex digits), and nothing but our own name is opened. The
 * runtime no longer uses hugekit-text-<euid>, its directory before 2.23's
 * layout (hugeadm --clean-shared-text still removes what is left there).
 * Unlike 2.23, HUGETLB_SHARE_PATH names the mount (or a directory on it)
 * where that directory is made, never the directory of the files itself: a
 * directory of the user's own is what keeps other users' files out.
 * Other users may write the mount (a 1777 mount, say), so nothing
 * found there is trusted by its name:
 *  - the directory is opened O_DIRECTORY|O_NOFOLLOW and must be ours
 *    (euid), 0700 or less, on hugetlbfs of the page size, not noexec: one made
 *    by someone else, a symbolic link or a loose mode is refused (with a
 *    warning) and the next mount is tried;
 *  - a file is opened from that directory's descriptor, O_NOFOLLOW and
 *    O_NONBLOCK (a FIFO does not hang the open), and everything is checked on
 *    that descriptor, which is the one returned: a regular file, ours, mode
 *    0400 or 0500, one link, the exact size, every page present (no hole
 *    whose first touch would need a new page), on hugetlbfs; then its
 *    contents are compared with the process's own: a file that differs is
 *    never returned (-ESTALE);
 *  - a new file is made under a temporary O_EXCL name, filled through a
 *    MAP_SHARED mapping that is populated first (an empty pool or a cgroup
 *    limit is then an error, never a SIGBUS in memcpy), made read-only and
 *    published in one renameat2(RENAME_NOREPLACE): a process that loses the
 *    race uses the winner's file, after the same checks.
 * Nothing here prints but rt_msg, exits or leaks a descriptor (O_CLOEXEC on
 * each one).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "kconst.h"
#include "share.h"

/* The longest build-id taken (SHA-256 would be 32 bytes; GNU ld writes 20). */
#define BUILD_ID_MAX 64

/* ---- the key ---------------------------------------------------------- */

static size_t note_align(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* Whether [addr, addr + len) lies inside one of the object's loaded PT_LOADs. */
static bool in_load(const struct dl_phdr_info *info, ElfW(Addr) vaddr, size_t len)
{
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr <= ph->p_filesz &&
		    len <= ph->p_filesz - (vaddr - ph->p_vaddr))
			return true;
	}
	return false;
}

/* The GNU build-id note's descriptor, from the PT_NOTE segments in memory. */
static bool build_id(const struct dl_phdr_info *info, const unsigned char **ret, size_t *ret_len)
{
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		size_t align = ph->p_align == 8 ? 8 : 4, left = ph->p_memsz;
		const unsigned char *p;

		if (ph->p_type != PT_NOTE || !in_load(info, ph->p_vaddr, ph->p_memsz))
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		while (left >= sizeof(ElfW(Nhdr))) {
			ElfW(Nhdr) nh;
			size_t name, desc;

			memcpy(&nh, p, sizeof(nh));
			name = note_align(nh.n_namesz, align);
			desc = note_align(nh.n_descsz, align);
			if (name > left - sizeof(nh) || desc > left - sizeof(nh) - name)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(p + sizeof(nh), "GNU", 4) == 0 && nh.n_descsz > 0 &&
			    nh.n_descsz <= BUILD_ID_MAX) {
				*ret = p + sizeof(nh) + name;
				*ret_len = nh.n_descsz;
				return true;
			}
			p += sizeof(nh) + name + desc;
			left -= sizeof(nh) + name + desc;
		}
	}
	return false;
}

int rt_share_key(const struct dl_phdr_info *info, char *buf, size_t size)
{
	const unsigned char *id;
	struct stat st;
	size_t len;
	int fd, n;

	if (info && build_id(info, &id, &len)) {
		if (size < 2 * len + 1)
			return -ENAMETOOLONG;
		for (size_t i = 0; i < len; i++)
			snprintf(buf + 2 * i, 3, "%02x", id[i]);
		return 0;
	}
	/* No build-id: the executable's identity, as stat(2) gives it. */
	fd = hkc_path_openf(rt_path(), O_PATH, HK_PROC_SELF_EXE);
	if (fd < 0)
		return fd;
	n = fstat(fd, &st);
	close(fd);
	if (n < 0)
		return -errno;
	n = snprintf(buf, size, "d%ju-i%ju-m%jd%09ld", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
		     (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* ---- the directory ---------------------------------------------------- */

/* Why a hugetlbfs directory or file cannot hold this page size's text, or NULL. */
static const char *fs_unfit(int fd, uint64_t page_size)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return "cannot statfs it";
	if ((uint32_t)sf.f_type != (uint32_t)HUGETLBFS_MAGIC)
		return "not on hugetlbfs";
	if ((uint64_t)sf.f_bsize != page_size)
		return "hugetlbfs of another page size";
	if (sf.f_flags & ST_NOEXEC)
		return "on a noexec mount";
	return NULL;
}

/*
 * The user's directory in the mount at mntfd: opened, or made (0700) and
 * opened, then checked. -ENOENT when it is not there and cannot be made
 * (mount read-only, not writable by us: try the next), -EACCES when what is
 * there is not ours or not safe (said, with the mount's name).
 */
static int user_dir(int mntfd, const char *mnt, uint64_t page_size)
{
	char name[32];
	const char *why = NULL;
	struct stat st;
	bool made = false;
	int fd;

	snprintf(name, sizeof(name), HKC_SHARE_DIR_PREFIX "%lu", (unsigned long)geteuid());
	fd = openat(mntfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(mntfd, name, 0700) == 0)
			made = true;
		else if (errno != EEXIST)
			return -ENOENT;
		fd = openat(mntfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		why = errno == ELOOP || errno == ENOTDIR ? "not a directory (a symbolic link?)"
							 : strerror(errno);
		goto refuse;
	}
	/* What we made, we make 0700 whatever the umask left. */
	if (made && fchmod(fd, 0700) < 0)
		why = "cannot set its mode";
	else if (fstat(fd, &st) < 0)
		why = "cannot stat it";
	else if (st.st_uid != geteuid())
		why = "owned by another user";
	else if ((st.st_mode & 07777) != 0700)
		why = "its mode is not 0700";
	else
		why = fs_unfit(fd, page_size);
	if (!why)
		return fd;
	close(fd);
refuse:
	rt_msg(RT_WARNING, "shared text: %s/%s: %s: not using it", mnt, name, why);
	return -EACCES;
}

struct dir_search {
	uint64_t page_size;
	int fd;	   /* the directory found */
	int rc;	   /* else why none: -ENOENT, or -EACCES when one was refused */
	char *mnt; /* the mount's path, for messages */
};

static bool try_mount(void *data, const char *mnt)
{
	struct dir_search *s = data;
	int mntfd, fd;

	mntfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mntfd < 0)
		return false;
	if (fs_unfit(mntfd, s->page_size)) {
		close(mntfd);
		return false;
	}
	fd = user_dir(mntfd, mnt, s->page_size);
	close(mntfd);
	if (fd == -EACCES)
		s->rc = -EACCES;
	if (fd < 0)
		return false;
	s->mnt = strdup(mnt);
	if (!s->mnt) {
		close(fd);
		s->rc = -ENOMEM;
		return true;
	}
	s->fd = fd;
	return true;
}

/* The share directory's descriptor and (malloc'd) mount path, or -errno. */
static int share_dir(uint64_t page_size, char **ret_mnt)
{
	const char *env = secure_getenv("HUGETLB_SHARE_PATH");
	struct dir_search s = {.page_size = page_size, .fd = -1, .rc = -ENOENT};
	const char *why;
	int mntfd, rc;

	if (env && *env) {
		/* The user named it: that one or none. */
		mntfd = open(env, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		why = mntfd < 0 ? strerror(errno) : fs_unfit(mntfd, page_size);
		if (why) {
			rt_msg(RT_WARNING,
			       "HUGETLB_SHARE_PATH=%s: %s (a hugetlbfs mount of %" PRIu64
			       " kB pages is needed): text not shared",
			       env, why, page_size / 1024);
			if (mntfd >= 0)
				close(mntfd);
			return -ENOENT;
		}
		s.fd = user_dir(mntfd, env, page_size);
		close(mntfd);
		if (s.fd == -ENOENT)
			rt_msg(RT_WARNING,
			       "HUGETLB_SHARE_PATH=%s: cannot make %s%lu there: text not shared",
			       env, HKC_SHARE_DIR_PREFIX, (unsigned long)geteuid());
		if (s.fd < 0)
			return s.fd;
		*ret_mnt = strdup(env);
		if (!*ret_mnt) {
			close(s.fd);
			return -ENOMEM;
		}
		return s.fd;
	}
	rc = rt_hugetlbfs_mounts(try_mount, &s);
	if (rc < 0)
		return rc;
	if (s.fd < 0) {
		if (s.rc == -ENOENT)
			rt_msg(RT_INFO,
			       "shared text: no hugetlbfs mount of %" PRIu64
			       " kB pages where %s%lu can be made (mount one, or set "
			       "HUGETLB_SHARE_PATH)",
			       page_size / 1024, HKC_SHARE_DIR_PREFIX, (unsigned long)geteuid());
		return s.rc;
	}
	*ret_mnt = s.mnt;
	return s.fd;
}

/* ---- the files -------------------------------------------------------- */

/*
 * Why the open file cannot be the text of req, or NULL; *rc is -EACCES for a
 * file that is not ours or not safe, -ESTALE for one of ours that holds
 * something else.
 */
static const char *file_unfit(int fd, const struct rt_share_req *req, int *rc)
{
	struct stat st;
	const char *why;

	*rc = -EACCES;
	if (fstat(fd, &st) < 0)
		return "cannot stat it";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (st.st_uid != geteuid())
		return "owned by another user";
	if ((st.st_mode & 07777) != 0400 && (st.st_mode & 07777) != 0500)
		return "its mode is not 0400 or 0500";
	if (st.st_nlink != 1)
		return "it has more than one name (a hard link)";
	why = fs_unfit(fd, req->page_size);
	if (why)
		return why;
	*rc = -ESTALE;
	if (st.st_size < 0 || (uint64_t)st.st_size != req->len)
		return "its size is not the text's";
	/* hugetlbfs counts the pages a file holds in its blocks: no hole. */
	if ((uint64_t)st.st_blocks * 512 != req->len)
		return "pages are missing from it";
	return NULL;
}

/*
 * Copy len bytes of this process's memory at src to dst through
 * process_vm_readv(2): a page that cannot be read is skipped and left as it
 * is in dst, never a SIGSEGV. The range may take in a gap between the
 * program's segments that nothing maps (segments.c extends edges into them):
 * the file holds zeros there. 0 or -errno (EPERM under a seccomp filter,
 * ENOSYS without CONFIG_CROSS_MEMORY_ATTACH: then nothing is shared).
 */
static int read_own(void *dst, const void *src, size_t len)
{
	uintptr_t page = rt_base_page_size(), s = (uintptr_t)src;
	pid_t pid = getpid();
	size_t done = 0;

	while (done < len) {
		struct iovec l = {(char *)dst + done, len - done};
		struct iovec r = {(char *)src + done, len - done};
		ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EFAULT)
			return -errno;
		/* Nothing readable at src + done: on to the next page. */
		done = (size_t)(((s + done) / page + 1) * page - s);
	}
	return 0;
}

/* 0 when the file's contents are the len bytes at src, else -ESTALE or the error. */
static int same_contents(int fd, const struct rt_share_req *req)
{
	const size_t chunk = 256 << 10;
	void *p = mmap(NULL, req->len, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
	char *buf = malloc(chunk);
	int rc = 0;

	if (p == MAP_FAILED || !buf) {
		rc = p == MAP_FAILED ? -errno : -ENOMEM;
		goto out;
	}
	/* Every page is there (checked); should one not be, an error, never SIGBUS. */
	if (madvise(p, req->len, MADV_POPULATE_READ) < 0)
		rc = -errno;
	for (size_t off = 0; rc == 0 && off < req->len; off += chunk) {
		size_t n = req->len - off < chunk ? req->len - off : chunk;

		memset(buf, 0, n);
		rc = read_own(buf, (const char *)req->src + off, n);
		if (rc == 0 && memcmp((char *)p + off, buf, n) != 0)
			rc = -ESTALE;
	}
out:
	if (p != MAP_FAILED)
		munmap(p, req->len);
	free(buf);
	return rc;
}

/*
 * A new file under a temporary name, filled from src and made read-only,
 * renamed to name unless name exists: 0, -EEXIST (lost the race), -errno.
 */
static int create(int dfd, const struct rt_share_req *req, const char *name)
{
	static atomic_uint counter;
	char tmp[64];
	void *p;
	int fd = -1, rc = 0;

	for (int i = 0; i < 16 && fd < 0; i++) {
		snprintf(tmp, sizeof(tmp), HKC_SHARE_TMP_PREFIX "%ld-%u", (long)getpid(),
			 atomic_fetch_add(&counter, 1));
		fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	if (req->len > (uint64_t)INT64_MAX || ftruncate(fd, (off_t)req->len) < 0) {
		rc = -errno;
		goto out;
	}
	/* A shared mapping reserves the pages now: ENOMEM when the pool has not enough. */
	p = mmap(NULL, req->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		goto out;
	}
	/* Fault every page in first: a failure is an error here, not a SIGBUS in memcpy. */
	if (madvise(p, req->len, MADV_POPULATE_WRITE) < 0)
		rc = -errno;
	else
		rc = read_own(p, req->src, req->len);
	munmap(p, req->len);
	if (rc == 0 && fchmod(fd, 0400) < 0)
		rc = -errno;
	if (rc == 0 && renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE) < 0) {
		rc = -errno;
		/* No renameat2 here: link(2) refuses an existing name the same way. */
		if ((rc == -EINVAL || rc == -ENOSYS) && linkat(dfd, tmp, dfd, name, 0) == 0)
			rc = 0;
		else if (rc == -EINVAL || rc == -ENOSYS)
			rc = -errno;
		if (rc < 0)
			goto out;
		unlinkat(dfd, tmp, 0);
	}
out:
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	close(fd);
	return rc;
}

/* The file's name: <exe>.<key>.<offset hex>, the exe's part cut to fit NAME_MAX. */
static int file_name(const struct rt_share_req *req, char *buf, size_t size)
{
	/* A leading dot would hide it, or make it look like a temporary file. */
	const char *e = req->exe_name + strspn(req->exe_name, ".");
	char tail[BUILD_ID_MAX * 2 + 40];
	size_t room, exe;
	int n;

	if (!*e)
		e = "_";
	exe = strlen(e);

	n = snprintf(tail, sizeof(tail), ".%s.%" PRIxPTR, req->key, req->offset);
	room = size < NAME_MAX + 1 ? size - 1 : NAME_MAX;
	if (n < 0 || (size_t)n >= sizeof(tail) || (size_t)n + 1 > room)
		return -ENAMETOOLONG;
	room -= (size_t)n;
	if (exe > room)
		exe = room;
	snprintf(buf, size, "%.*s%s", (int)exe, e, tail);
	return 0;
}

static bool valid(const struct rt_share_req *req)
{
	const char *k = req->key;

	if (!req->exe_name || !*req->exe_name || strchr(req->exe_name, '/') || !k || !*k ||
	    strspn(k, "0123456789abcdefghijklmnopqrstuvwxyz-") != strlen(k) || !req->src ||
	    !hkc_is_pow2(req->page_size) || req->page_size <= rt_base_page_size() ||
	    req->len == 0 || req->len % req->page_size != 0)
		return false;
	return true;
}

int rt_share_text_fd(const struct rt_share_req *req, bool *made)
{
	char name[NAME_MAX + 1], *mnt = NULL;
	const char *why = NULL;
	bool created = false;
	int dfd, fd = -1, rc;

	*made = false;
	if (!valid(req))
		return -EINVAL;
	/*
	 * A load address that is not a multiple of the page size (a PIE at a
	 * random address: the kernel aligns it to the segments' p_align, 4 KiB
	 * unless linked with -z max-page-size=2M) gives each start other
	 * ranges: nothing to share, and a file per start would fill the pool.
	 */
	if (req->offset % req->page_size != 0) {
		rt_msg(RT_INFO,
		       "shared text: %s is not loaded at a multiple of %" PRIu64
		       " kB (link it with -z max-page-size=%" PRIu64 "): not shared",
		       req->exe_name, req->page_size / 1024, req->page_size);
		return -EOPNOTSUPP;
	}
	rc = file_name(req, name, sizeof(name));
	if (rc < 0)
		return rc;
	dfd = share_dir(req->page_size, &mnt);
	if (dfd < 0)
		return dfd;
	/* Open it; make it when it is not there; at most twice round (a lost race). */
	for (int round = 0; round < 3; round++) {
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0) {
			why = file_unfit(fd, req, &rc);
			if (!why) {
				rc = same_contents(fd, req);
				if (rc == -ESTALE)
					why = "its contents are not this program's";
			}
			break;
		}
		rc = -errno;
		if (rc == -ELOOP) {
			rc = -EACCES;
			why = "a symbolic link";
		} else if (rc != -ENOENT) {
			/* Something is there that we cannot open (another user's): say so. */
			why = strerror(-rc);
		}
		if (rc != -ENOENT || round == 2)
			break;
		rc = create(dfd, req, name);
		if (rc == 0)
			created = true;
		else if (rc != -EEXIST)
			break;
	}
	if (fd >= 0 && !why && rc == 0) {
		*made = created;
		rt_msg(RT_DEBUG, "shared text: %s %s/%s%lu/%s", created ? "made" : "using", mnt,
		       HKC_SHARE_DIR_PREFIX, (unsigned long)geteuid(), name);
		free(mnt);
		close(dfd);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	if (why)
		rt_msg(RT_WARNING,
		       "shared text: %s/%s%lu/%s: %s: not mapping it (remove it: "
		       "hugeadm --clean-shared-text)",
		       mnt, HKC_SHARE_DIR_PREFIX, (unsigned long)geteuid(), name, why);
	else
		rt_msg(RT_INFO, "shared text: %s/%s%lu/%s: %s", mnt, HKC_SHARE_DIR_PREFIX,
		       (unsigned long)geteuid(), name, strerror(-rc));
	free(mnt);
	close(dfd);
	return rc < 0 ? rc : -EIO;
}
