// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysfs counters and knobs: hkc_parse_u64_strict against strtoull, the same
 * bytes read back through the path layer as a counter file, and as a THP
 * knob ("always [madvise] never").
 */
#include <errno.h>
#include <hugekit/hugekit.h>

#include "fuzz.h"
#include "path.h"

static struct hk_ctx *ctx;
static struct hkc_path path;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_tree_init();
	fuzz_put_str("sys/kernel/mm/transparent_hugepage/enabled", "");
	if (hk_new(fuzz_root, &ctx) < 0 || hkc_path_init(&path, fuzz_root) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size), *end, *v = NULL;
	uint64_t a = 0, b = 0;
	int rc = hkc_parse_u64_strict(s, &a);
	size_t digits = strspn(s, "0123456789");

	if (rc == 0) {
		/* Digits, then at most one newline: strtoull's value. */
		if (digits == 0 || (s[digits] && strcmp(s + digits, "\n") != 0))
			abort();
		errno = 0;
		b = strtoull(s, &end, 10);
		if (errno || a != b)
			abort();
	}
	fuzz_put("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", data, size);
	rc = hkc_path_read_u64f(&path, &b, "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
	/* The file holds the input up to its first NUL too, or more: never a different number. */
	if (rc == 0 && strlen(s) == size && (hkc_parse_u64_strict(s, &a) < 0 || a != b))
		abort();
	fuzz_put("sys/kernel/mm/transparent_hugepage/enabled", data, size);
	if (hk_thp_read(ctx, "enabled", &v) == 0) {
		if (strchr(v, '\n') || strlen(v) > size)
			abort(); /* part of the first line */
		free(v);
	}
	if (hk_thp_modes(ctx, "enabled", &v) == 0)
		free(v);
	free(s);
	return 0;
}
