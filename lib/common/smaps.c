// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smaps.h"

void hkc_smaps_free(struct hkc_smap *maps, size_t n)
{
	for (size_t i = 0; maps && i < n; i++)
		free(maps[i].name);
	free(maps);
}

/* "start-end perms offset major:minor inode   name": -EINVAL when it is not one. */
static int parse_header(const char *line, size_t len, struct hkc_smap *m)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[5];
	int pos = 0;
	char *copy = strndup(line, len);

	if (!copy)
		return -ENOMEM;
	if (sscanf(copy, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
		   &ino, &pos) != 7 ||
	    pos == 0 || end < start || strlen(perms) != 4) {
		free(copy);
		return -EINVAL;
	}
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	memcpy(m->perms, perms, sizeof(m->perms));
	m->offset = off;
	m->dev_major = maj;
	m->dev_minor = min;
	m->inode = ino;
	m->name = strdup(copy + pos);
	free(copy);
	return m->name ? 0 : -ENOMEM;
}

/* "Key:   123 kB": the number, or -EINVAL. */
static int field_kb(const char *v, size_t len, uint64_t *ret)
{
	uint64_t n = 0;
	size_t i = 0;

	while (i < len && v[i] == ' ')
		i++;
	if (i == len || v[i] < '0' || v[i] > '9')
		return -EINVAL;
	for (; i < len && v[i] >= '0' && v[i] <= '9'; i++) {
		if (n > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		n = n * 10 + (uint64_t)(v[i] - '0');
	}
	*ret = n;
	return 0;
}

static const struct {
	const char *key;
	size_t off;
} fields[] = {
	{"KernelPageSize", offsetof(struct hkc_smap, kernel_page_kb)},
	{"Rss", offsetof(struct hkc_smap, rss_kb)},
	{"Anonymous", offsetof(struct hkc_smap, anonymous_kb)},
	{"AnonHugePages", offsetof(struct hkc_smap, anon_huge_kb)},
	{"FilePmdMapped", offsetof(struct hkc_smap, file_pmd_kb)},
	{"Shared_Hugetlb", offsetof(struct hkc_smap, shared_hugetlb_kb)},
	{"Private_Hugetlb", offsetof(struct hkc_smap, private_hugetlb_kb)},
};

/* A line inside a mapping's block: a field we keep, VmFlags, or one we skip. */
static int parse_field(const char *line, size_t len, struct hkc_smap *m)
{
	const char *colon = memchr(line, ':', len);
	size_t klen;

	if (!colon)
		return -EINVAL;
	klen = (size_t)(colon - line);
	if (klen == 7 && memcmp(line, "VmFlags", 7) == 0) {
		/* Two-letter words separated by blanks. */
		for (const char *p = colon + 1; p + 2 <= line + len; p++) {
			if (p[-1] != ' ' || (p + 2 != line + len && p[2] != ' '))
				continue;
			m->ht |= p[0] == 'h' && p[1] == 't';
			m->nr |= p[0] == 'n' && p[1] == 'r';
			m->nh |= p[0] == 'n' && p[1] == 'h';
		}
		return 0;
	}
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		if (strlen(fields[f].key) == klen && memcmp(line, fields[f].key, klen) == 0)
			return field_kb(colon + 1, len - klen - 1,
					(uint64_t *)((char *)m + fields[f].off));
	}
	return 0;
}

/* A header starts with a hex digit and has a '-' before the first space. */
static bool is_header(const char *line, size_t len)
{
	size_t dash = strcspn(line, "- \n");

	return len > 0 && dash > 0 && dash < len && line[dash] == '-' &&
	       strspn(line, "0123456789abcdef") == dash;
}

int hkc_smaps_parse(const char *buf, struct hkc_smap **ret, size_t *ret_n)
{
	struct hkc_smap *maps = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	for (const char *line = buf; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (is_header(line, len)) {
			if (n == cap) {
				struct hkc_smap *t;

				cap = cap ? cap * 2 : 32;
				t = realloc(maps, cap * sizeof(*maps));
				if (!t) {
					rc = -ENOMEM;
					break;
				}
				maps = t;
			}
			rc = parse_header(line, len, &maps[n]);
			if (rc < 0)
				break;
			n++;
		} else if (len > 0) {
			if (n == 0) {
				rc = -EINVAL;
				break;
			}
			rc = parse_field(line, len, &maps[n - 1]);
			if (rc < 0)
				break;
		}
		line += len + (nl ? 1 : 0);
	}
	if (rc < 0) {
		hkc_smaps_free(maps, n);
		return rc;
	}
	*ret = maps;
	*ret_n = n;
	return 0;
}

bool hkc_smap_is_hugetlb(const struct hkc_smap *m, uint64_t base_kb)
{
	return m->ht || (m->kernel_page_kb > base_kb && base_kb > 0);
}

uint64_t hkc_smap_hugetlb_kb(const struct hkc_smap *m)
{
	return m->shared_hugetlb_kb + m->private_hugetlb_kb;
}

int64_t hkc_smap_sysv_key(const struct hkc_smap *m)
{
	const char *s = m->name;
	uint64_t key = 0;

	if (strncmp(s, "/SYSV", 5) != 0)
		return -1;
	s += 5;
	for (int i = 0; i < 8; i++, s++) {
		int d = *s >= '0' && *s <= '9'	 ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
						 : -1;
		if (d < 0)
			return -1;
		key = key * 16 + (uint64_t)d;
	}
	return *s == '\0' || *s == ' ' ? (int64_t)key : -1;
}
