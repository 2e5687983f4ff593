/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "path.h"

/* Default huge page size in bytes (Hugepagesize: in /proc/meminfo). -ENOENT without hugetlb. */
int hkc_default_page_size(const struct hkc_path *p, uint64_t *ret);

/*
 * Every huge page size the kernel supports, in bytes: the default size first,
 * as the kernel reports it, then the others in ascending order. A kernel
 * without hugetlb gives an empty list (and 0).
 */
int hkc_page_sizes(const struct hkc_path *p, uint64_t **ret_sizes, size_t *ret_n);

/* The base page size: sysconf() on a live system, KernelPageSize in a tree. */
int hkc_base_page_size(const struct hkc_path *p, uint64_t *ret);

/*
 * The sizes (bytes, ascending) of the "hugepages-<N>kB" directories in dir
 * (HK_SYS_HUGEPAGES, HK_SYS_THP); a missing dir gives an empty list.
 * free(*ret_sizes) afterwards.
 */
int hkc_size_dirs(const struct hkc_path *p, const char *dir, uint64_t **ret_sizes, size_t *ret_n);
