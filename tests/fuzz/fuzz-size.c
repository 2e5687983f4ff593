// SPDX-License-Identifier: GPL-2.0-or-later
/* Both size grammars (lib/common/parse.c): libhugetlbfs's and the strict one. */
#include <errno.h>
#include <inttypes.h>

#include "fuzz.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	uint64_t v = 0;
	int rc;

	rc = hkc_parse_size_legacy(s, &v);
	if (rc == 0 && (v == 0 || v > INT64_MAX))
		abort(); /* legacy sizes are > 0 and fit a long long */
	if (rc != 0 && rc != -EINVAL && rc != -EOVERFLOW)
		abort();
	rc = hkc_parse_size(s, &v);
	if (rc == 0) {
		/* Strict: digits first, no sign, no space, nothing left over. */
		if (s[0] < '0' || s[0] > '9' || strpbrk(s, " \t\n+-.x"))
			abort();
		/* A bare number is itself. */
		if (strspn(s, "0123456789") == strlen(s) && v != strtoull(s, NULL, 10))
			abort();
	} else if (rc != -EINVAL && rc != -ERANGE) {
		abort();
	}
	free(s);
	return 0;
}
