/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hugetlbfs.h: the libhugetlbfs application API, as provided by libhugekit-rt.
 *
 * Source compatible with libhugetlbfs 2.23/2.24 (same names, types and
 * values); programs built against libhugetlbfs run against libhugekit-rt,
 * which exports these functions at libhugetlbfs's symbol versions. Link with
 * -lhugekit-rt (or -lhugetlbfs where the compatibility names are installed).
 */
#ifndef _HUGETLBFS_H
#define _HUGETLBFS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* statfs(2) f_type of a hugetlbfs file system. */
#define HUGETLBFS_MAGIC 0x958458f6

/* Process flag of the kernel for hugetlb users; kept for source compatibility. */
#define PF_LINUX_HUGETLB 0x100000

/*
 * The library's default huge page size in bytes: HUGETLB_DEFAULT_PAGE_SIZE
 * when it names a size the kernel supports, else the kernel's default. On
 * success errno is set to 0; without huge page support, -1 with errno ENOSYS.
 */
long gethugepagesize(void);

/*
 * Up to n_elem huge page sizes the kernel supports, the default size first.
 * Returns the number stored; (NULL, 0) returns how many there are. -1 with
 * errno EINVAL when n_elem < 0, or pagesizes is NULL and n_elem > 0.
 */
int gethugepagesizes(long pagesizes[], int n_elem);

/*
 * Like gethugepagesizes(), with the base page size in front: the base page
 * size first, then the huge page sizes. (NULL, 0) returns the count.
 */
int getpagesizes(long pagesizes[], int n_elem);

/* 1 when mount is on a hugetlbfs file system, 0 when not, -1 when statfs fails. */
int hugetlbfs_test_path(const char *mount);

/*
 * A hugetlbfs mount point for the default huge page size that the caller
 * may read, write and search (or one listed in HUGETLB_PATH), or NULL when
 * there is none. The string belongs to the library; do not free it.
 */
const char *hugetlbfs_find_path(void);

/* The same for the given huge page size in bytes; NULL for an unknown size. */
const char *hugetlbfs_find_path_for_size(long page_size);

/*
 * An open file on the default size's hugetlbfs mount, already unlinked, for
 * mapping huge pages: close it when done. -1 when there is no such mount or
 * the file cannot be created.
 */
int hugetlbfs_unlinked_fd(void);

/* The same on the mount of the given huge page size. */
int hugetlbfs_unlinked_fd_for_size(long page_size);

/* Flags of get_huge_pages(). */
typedef unsigned long ghp_t;
/* Back the region with huge pages of the default size. */
#define GHP_DEFAULT ((ghp_t)0x01UL)
#define GHP_MASK (GHP_DEFAULT)

/*
 * A private, anonymous, zero-filled region of len bytes (rounded up by the
 * kernel to whole huge pages) on huge pages of the default size, aligned
 * to a huge page. NULL with errno set when the pool cannot give the pages.
 * Free it with free_huge_pages().
 */
void *get_huge_pages(size_t len, ghp_t flags);

/* Unmap a whole region returned by get_huge_pages(). */
void free_huge_pages(void *ptr);

/* Flags of get_hugepage_region(). */
typedef unsigned long ghr_t;
/* Huge pages or nothing: NULL when the pool cannot give them. */
#define GHR_STRICT ((ghr_t)0x10000000U)
/* Base pages when huge pages are not available. */
#define GHR_FALLBACK ((ghr_t)0x20000000U)
/* Start the buffer a pseudo-random number of cache lines into the space the rounding wastes. */
#define GHR_COLOR ((ghr_t)0x40000000U)
/* What the library judges best: fall back and colour. */
#define GHR_DEFAULT (GHR_FALLBACK | GHR_COLOR)
#define GHR_MASK (GHR_FALLBACK | GHR_STRICT | GHR_COLOR)

/*
 * A buffer of len bytes on huge pages, len rounded up to whole huge pages;
 * with GHR_FALLBACK on base pages when huge pages cannot be had, with
 * GHR_COLOR not necessarily at the start of a page. NULL with errno set on
 * failure. Free it with free_hugepage_region().
 */
void *get_hugepage_region(size_t len, ghr_t flags);

/* Free a buffer returned by get_hugepage_region(). */
void free_hugepage_region(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* _HUGETLBFS_H */
