/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A parser of /proc/PID/smaps: one record per mapping with the fields that
 * say what holds huge pages (hugetlb) and what could (anonymous memory).
 * Pure text processing: no system call but malloc.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hkc_smap {
	uint64_t start, end; /* the range, end exclusive */
	char perms[5];	     /* "rw-p" */
	uint64_t offset;
	unsigned dev_major, dev_minor;
	uint64_t inode;
	char *name; /* the path, "[heap]", "/SYSV00001234 (deleted)"; "" when anonymous */
	/* The fields, in kB as smaps writes them; 0 when absent. */
	uint64_t kernel_page_kb;
	uint64_t rss_kb;
	uint64_t anonymous_kb;
	uint64_t anon_huge_kb;
	uint64_t file_pmd_kb; /* FilePmdMapped: file pages mapped by PMD (file THP) */
	uint64_t shared_hugetlb_kb;
	uint64_t private_hugetlb_kb;
	bool ht; /* VmFlags names "ht" (a hugetlb mapping) */
	bool nr; /* "nr": MAP_NORESERVE, no memory set aside (a sparse reservation) */
	bool nh; /* "nh": kept off transparent huge pages (MADV_NOHUGEPAGE; MAP_STACK since 6.7) */
};

/*
 * Parse a whole smaps buffer. The array and each name are malloc'd: free with
 * hkc_smaps_free(). A header line that does not parse is -EINVAL; an
 * unknown field is ignored. An empty buffer (a kernel thread) gives n = 0.
 */
int hkc_smaps_parse(const char *buf, struct hkc_smap **ret, size_t *ret_n);
void hkc_smaps_free(struct hkc_smap *maps, size_t n);

/* A hugetlb mapping: VmFlags "ht", or (older kernels) a kernel page above base_kb. */
bool hkc_smap_is_hugetlb(const struct hkc_smap *m, uint64_t base_kb);
/* Its huge pages in use, in kB (shared and private). */
uint64_t hkc_smap_hugetlb_kb(const struct hkc_smap *m);
/* The key of a SysV segment's mapping ("/SYSV0000abcd (deleted)"), or -1 for any other. */
int64_t hkc_smap_sysv_key(const struct hkc_smap *m);
