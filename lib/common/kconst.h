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
 * hex>, made under a temporary name <HKC_SHARE_TMP_PREFIX><pid>-<n> first.
 */
#define HKC_SHARE_DIR_PREFIX "hugekit-text-"
#define HKC_SHARE_TMP_PREFIX ".hugekit-tmp-"
