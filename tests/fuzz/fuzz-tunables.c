// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * GLIBC_TUNABLES merging (lib/common/tunables.c): the user's tunables come
 * first and unchanged, ours are added once, never twice.
 * Input: a page size selector byte, then the user's GLIBC_TUNABLES.
 */
#include "fuzz.h"
#include "tunables.h"

static size_t count(const char *list, const char *name)
{
	size_t n = 0, len = strlen(name);

	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ":");

		n += l > len && strncmp(p, name, len) == 0 && p[len] == '=';
		p += l + (p[l] == ':');
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t sizes[] = {0, 1, 2097152, 1073741824, 65536, UINT64_MAX};
	char *existing, *out = NULL;
	uint64_t ps;

	if (size == 0)
		return 0;
	ps = sizes[data[0] % (sizeof(sizes) / sizeof(sizes[0]))];
	existing = fuzz_str(data + 1, size - 1);
	if (hkc_heap_tunables(data[0] & 0x80 ? NULL : existing, ps, &out) < 0)
		abort();
	if (!(data[0] & 0x80)) {
		if (strncmp(out, existing, strlen(existing)) != 0)
			abort();
		if (count(out, "glibc.malloc.hugetlb") < 1 ||
		    count(out, "glibc.malloc.hugetlb") >
			    count(existing, "glibc.malloc.hugetlb") + 1)
			abort();
		if (count(out, "glibc.malloc.mmap_threshold") >
		    count(existing, "glibc.malloc.mmap_threshold") + 1)
			abort();
	}
	free(out);
	free(existing);
	return 0;
}
