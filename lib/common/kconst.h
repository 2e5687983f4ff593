/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel constants that the build machine's headers may be too old to have,
 * each with its value from the kernel's uapi, in one place; and the names the
 * runtime gives its shared-text files, which hugeadm lists and removes.
 */
#pragma once

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6 /* linux/magic.h */
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1 /* renameat2(2), Linux 3.15 */
#endif

/*
 * Shared text: <hugetlbfs mount>/<HKC_SHARE_DIR_PREFIX><euid>/<exe>.<key>.<offset
 * hex>, made under a temporary name <HKC_SHARE_TMP_PREFIX><pid>-<n> first. The
 * directory is libhugetlbfs 2.23's, which keeps its own files there as
 * <exe>_<bits>_<phdr index> (<that>.tmp while one is made): no name of one
 * is a name of the other. Before 2.23's layout the runtime used
 * <HKC_SHARE_OLD_DIR_PREFIX><euid>: hugeadm still lists and removes its files.
 */
#define HKC_SHARE_DIR_PREFIX "elflink-uid-"
#define HKC_SHARE_OLD_DIR_PREFIX "hugekit-text-"
#define HKC_SHARE_TMP_PREFIX ".hugekit-tmp-"
