// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/PID/smaps: hkc_smaps_parse on the input, then the helpers that
 * hugeadm --usage and --pages-needed apply to each mapping. A mapping's
 * range must be ordered and its name a string, whatever the input.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "smaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hkc_smap *m = NULL;
	char *s = fuzz_str(data, size);
	size_t n = 0;

	if (!s)
		return 0;
	if (hkc_smaps_parse(s, &m, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			if (m[i].end < m[i].start || !m[i].name || strlen(m[i].perms) != 4)
				abort();
			(void)hkc_smap_is_hugetlb(&m[i], 4);
			(void)hkc_smap_hugetlb_kb(&m[i]);
			(void)hkc_smap_sysv_key(&m[i]);
		}
		hkc_smaps_free(m, n);
	}
	free(s);
	return 0;
}
