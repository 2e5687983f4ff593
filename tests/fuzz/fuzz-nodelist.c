// SPDX-License-Identifier: GPL-2.0-or-later
/* Node lists ("0,2-3", lib/common/parse.c): sorted, unique, in range. */
#include <errno.h>

#include "fuzz.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	int *nodes = NULL;
	size_t n = 0;
	int rc = hkc_nodelist_parse(s, &nodes, &n);

	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			if (nodes[i] < 0 || nodes[i] >= HKC_MAX_NODES ||
			    (i && nodes[i] <= nodes[i - 1]))
				abort();
		free(nodes);
	} else if (rc != -EINVAL && rc != -ERANGE && rc != -ENOMEM) {
		abort();
	}
	free(s);
	return 0;
}
