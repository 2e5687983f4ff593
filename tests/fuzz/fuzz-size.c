// SPDX-License-Identifier: GPL-2.0-or-later
/* Both size grammars (lib/common/parse.c): libhugetlbfs's and the strict one. */
#include <errno.h>
#include <inttypes.h>

#include "fuzz.h"
#include "parse.h"

/*
 * The strict grammar as parse.h states it, written afresh: decimal digits,
 * then optionally K, M, G or T (either case), optionally followed by B or iB
 * (either case). 0 with the value, -EINVAL, or -ERANGE when it exceeds 2^64 - 1
 * (a number too large for 64 bits is -ERANGE whatever follows it).
 */
static int strict_reference(const char *s, uint64_t *ret)
{
	unsigned __int128 v = 0;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > UINT64_MAX)
			return -ERANGE;
	}
	if (*s) {
		const char *p = strchr("kKmMgGtT", *s);

		if (!p)
			return -EINVAL;
		shift = 10 * (int)(1 + (p - "kKmMgGtT") / 2);
		s++;
		if (*s == 'i' || *s == 'I') {
			s++;
			if (*s != 'b' && *s != 'B')
				return -EINVAL;
		}
		if (*s == 'b' || *s == 'B')
			s++;
		if (*s)
			return -EINVAL;
	}
	if ((v << shift) > UINT64_MAX)
		return -ERANGE;
	*ret = (uint64_t)(v << shift);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	uint64_t v = 0, want = 0;
	int rc, want_rc;

	rc = hkc_parse_size_legacy(s, &v);
	if (rc == 0 && (v == 0 || v > INT64_MAX))
		abort(); /* legacy sizes are > 0 and fit a long long */
	if (rc != 0 && rc != -EINVAL && rc != -EOVERFLOW)
		abort();
	rc = hkc_parse_size(s, &v);
	want_rc = strict_reference(s, &want);
	if (rc != want_rc || (rc == 0 && v != want))
		abort();
	free(s);
	return 0;
}
