// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pagesizes.h"

int hkc_default_page_size(const struct hkc_path *p, uint64_t *ret)
{
	uint64_t kb;
	char *buf;
	int rc;

	rc = hkc_path_read_allf(p, &buf, NULL, HK_PROC_MEMINFO);
	if (rc < 0)
		return rc;
	rc = hkc_kv_find_u64(buf, "Hugepagesize", &kb);
	free(buf);
	if (rc < 0)
		return rc;
	if (kb == 0 || kb > UINT64_MAX / 1024)
		return -EINVAL;
	*ret = kb * 1024;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* "hugepages-2048kB" -> 2097152; 0 for anything else. */
static uint64_t size_dir_bytes(const char *name)
{
	uint64_t kb;
	char num[32];
	size_t len;

	if (strncmp(name, "hugepages-", 10) != 0)
		return 0;
	name += 10;
	len = strlen(name);
	if (len < 3 || len - 2 >= sizeof(num) || strcmp(name + len - 2, "kB") != 0)
		return 0;
	memcpy(num, name, len - 2);
	num[len - 2] = '\0';
	if (hkc_parse_u64_strict(num, &kb) < 0 || kb == 0 || kb > UINT64_MAX / 1024)
		return 0;
	return kb * 1024;
}

int hkc_size_dirs(const struct hkc_path *p, const char *dir, uint64_t **ret_sizes, size_t *ret_n)
{
	uint64_t *sizes = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int rc;

	rc = hkc_path_opendirf(p, &d, "%s", dir);
	if (rc == 0) {
		while ((de = readdir(d))) {
			uint64_t sz = size_dir_bytes(de->d_name);

			if (!sz)
				continue;
			if (n == cap) {
				uint64_t *ns =
					realloc(sizes, (cap = cap ? cap * 2 : 8) * sizeof(*ns));

				if (!ns) {
					closedir(d);
					free(sizes);
					return -ENOMEM;
				}
				sizes = ns;
			}
			sizes[n++] = sz;
		}
		closedir(d);
	} else if (rc != -ENOENT) {
		return rc;
	}
	if (n)
		qsort(sizes, n, sizeof(*sizes), cmp_u64);
	if (!sizes && !(sizes = malloc(sizeof(*sizes))))
		return -ENOMEM;
	*ret_sizes = sizes;
	*ret_n = n;
	return 0;
}

int hkc_page_sizes(const struct hkc_path *p, uint64_t **ret_sizes, size_t *ret_n)
{
	uint64_t def = 0, *sizes;
	size_t n;
	int rc;

	rc = hkc_default_page_size(p, &def);
	if (rc < 0 && rc != -ENOENT)
		return rc;
	rc = hkc_size_dirs(p, HK_SYS_HUGEPAGES, &sizes, &n);
	if (rc < 0)
		return rc;
	/* Move the default size to the front, keeping the rest ascending. */
	for (size_t i = 0; def && i < n; i++) {
		if (sizes[i] == def) {
			memmove(sizes + 1, sizes, i * sizeof(*sizes));
			sizes[0] = def;
			break;
		}
	}
	*ret_sizes = sizes;
	*ret_n = n;
	return 0;
}

int hkc_base_page_size(const struct hkc_path *p, uint64_t *ret)
{
	uint64_t kb;
	char *buf;
	int rc;

	/* A tree may say what base page its machine had; otherwise ours. */
	rc = p->live ? -ENOENT : hkc_path_read_allf(p, &buf, NULL, HK_PROC_SMAPS);
	if (rc == -ENOENT) {
		long v = sysconf(_SC_PAGESIZE);

		if (v <= 0)
			return -EINVAL;
		*ret = (uint64_t)v;
		return 0;
	}
	if (rc < 0)
		return rc;
	rc = hkc_kv_find_u64(buf, "KernelPageSize", &kb);
	free(buf);
	if (rc < 0)
		return rc;
	*ret = kb * 1024;
	return 0;
}
