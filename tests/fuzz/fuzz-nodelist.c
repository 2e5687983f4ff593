// SPDX-License-Identifier: GPL-2.0-or-later
/* Node lists ("0,2-3", lib/common/parse.c): the nodes the grammar gives, sorted, unique. */
#include <errno.h>

#include "fuzz.h"
#include "parse.h"

/*
 * The grammar as parse.h states it, written afresh: empty (or one newline),
 * or ranges "A" or "A-B" (A <= B < HKC_MAX_NODES) separated by commas, then
 * one optional newline. Marks the nodes in set; 0 or -1.
 */
static int reference(const char *s, unsigned char *set)
{
	if (!*s || strcmp(s, "\n") == 0)
		return 0;
	for (;;) {
		unsigned long a = 0, b;

		if (*s < '0' || *s > '9')
			return -1;
		for (; *s >= '0' && *s <= '9'; s++)
			if ((a = a * 10 + (unsigned long)(*s - '0')) >= HKC_MAX_NODES)
				return -1;
		b = a;
		if (*s == '-') {
			s++;
			if (*s < '0' || *s > '9')
				return -1;
			for (b = 0; *s >= '0' && *s <= '9'; s++)
				if ((b = b * 10 + (unsigned long)(*s - '0')) >= HKC_MAX_NODES)
					return -1;
			if (b < a)
				return -1;
		}
		for (unsigned long i = a; i <= b; i++)
			set[i] = 1;
		if (*s == ',') {
			s++;
			continue;
		}
		return strcmp(s, "\n") == 0 || !*s ? 0 : -1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char set[HKC_MAX_NODES] = {0};
	char *s = fuzz_str(data, size);
	int *nodes = NULL;
	size_t n = 0, want = 0;
	int rc = hkc_nodelist_parse(s, &nodes, &n);

	if ((rc == 0) != (reference(s, set) == 0))
		abort();
	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			if (nodes[i] < 0 || nodes[i] >= HKC_MAX_NODES || !set[nodes[i]] ||
			    (i && nodes[i] <= nodes[i - 1]))
				abort();
		for (size_t i = 0; i < HKC_MAX_NODES; i++)
			want += set[i];
		if (n != want)
			abort();
		free(nodes);
	} else if (rc != -EINVAL && rc != -ERANGE && rc != -ENOMEM) {
		abort();
	}
	free(s);
	return 0;
}
