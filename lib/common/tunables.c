// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunables.h"

/* "a=1:b=2" has the tunable name? */
static bool has_tunable(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, ":");

		if (l > len && strncmp(p, name, len) == 0 && p[len] == '=')
			return true;
		p += l + (p[l] == ':');
	}
	return false;
}

int hkc_heap_tunables(const char *existing, uint64_t page_size, char **ret)
{
	char hugetlb[64], threshold[64];
	const char *sep = existing && *existing ? ":" : "";
	int n;

	if (page_size == 0)
		snprintf(hugetlb, sizeof(hugetlb), "glibc.malloc.hugetlb=1");
	else if (page_size == 1)
		snprintf(hugetlb, sizeof(hugetlb), "glibc.malloc.hugetlb=2");
	else
		snprintf(hugetlb, sizeof(hugetlb), "glibc.malloc.hugetlb=%" PRIu64, page_size);
	snprintf(threshold, sizeof(threshold), "glibc.malloc.mmap_threshold=%" PRIu64,
		 HKC_HEAP_MMAP_THRESHOLD);
	if (has_tunable(existing, "glibc.malloc.hugetlb"))
		hugetlb[0] = '\0';
	/* THP needs no threshold change: large blocks are THP-aligned mappings anyway. */
	if (page_size == 0 || has_tunable(existing, "glibc.malloc.mmap_threshold"))
		threshold[0] = '\0';
	n = asprintf(ret, "%s%s%s%s%s", existing ? existing : "", hugetlb[0] ? sep : "", hugetlb,
		     threshold[0] && (hugetlb[0] || *sep) ? ":" : "", threshold);
	return n < 0 ? -ENOMEM : 0;
}
