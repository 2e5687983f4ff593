/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GLIBC_TUNABLES for a heap on huge pages (glibc >= 2.35's glibc.malloc.hugetlb). */
#pragma once

#include <stdint.h>

/* mmap_threshold that keeps medium blocks in the (huge page) arenas. */
#define HKC_HEAP_MMAP_THRESHOLD (UINT64_C(4) << 20)

/*
 * existing (may be NULL) plus the tunables that put malloc's heap on huge
 * pages: page_size 0 = transparent huge pages (hugetlb=1), 1 = the kernel's
 * default huge page size (hugetlb=2), else that size in bytes. A tunable the
 * user already set is kept as it is, never overwritten. *ret is malloc'd.
 */
int hkc_heap_tunables(const char *existing, uint64_t page_size, char **ret);
