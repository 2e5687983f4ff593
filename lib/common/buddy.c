// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buddy.h"

/* A decimal number ending at one of the characters of stop (or the string's end). */
static int take_u64(const char **s, const char *stop, uint64_t *ret)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p && !strchr(stop, *p))
		return -EINVAL;
	*s = p;
	*ret = v;
	return 0;
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "Node 0, zone   Normal      2      1 ..." up to the end of the line. */
static int parse_line(const char *p, struct hkc_buddy_zone *z)
{
	uint64_t v;
	size_t len;

	memset(z, 0, sizeof(*z));
	if (strncmp(p, "Node ", 5) != 0)
		return -EINVAL;
	p = skip_blanks(p + 5);
	if (take_u64(&p, ",", &v) < 0 || *p != ',' || v > 1024)
		return -EINVAL;
	z->node = (int)v;
	p = skip_blanks(p + 1);
	if (strncmp(p, "zone", 4) != 0 || (p[4] != ' ' && p[4] != '\t'))
		return -EINVAL;
	p = skip_blanks(p + 4);
	len = strcspn(p, " \t\n");
	if (len == 0 || len >= sizeof(z->zone))
		return -EINVAL;
	memcpy(z->zone, p, len);
	p = skip_blanks(p + len);
	while (*p && *p != '\n') {
		if (z->n_orders == HKC_BUDDY_MAX_ORDERS || take_u64(&p, " \t\n", &v) < 0)
			return -EINVAL;
		z->free[z->n_orders++] = v;
		p = skip_blanks(p);
	}
	return z->n_orders ? 0 : -EINVAL;
}

int hkc_buddyinfo_parse(const char *buf, struct hkc_buddy_zone **ret_zones, size_t *ret_n,
			size_t *ret_bad_line)
{
	struct hkc_buddy_zone *zones = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	const char *line, *nl;

	*ret_bad_line = 0;
	for (line = buf; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		lineno++;
		if (n == cap) {
			struct hkc_buddy_zone *more;

			cap = cap ? cap * 2 : 8;
			more = realloc(zones, cap * sizeof(*zones));
			if (!more) {
				free(zones);
				return -ENOMEM;
			}
			zones = more;
		}
		if (parse_line(line, &zones[n]) < 0 ||
		    (n > 0 && zones[n].n_orders != zones[0].n_orders)) {
			free(zones);
			*ret_bad_line = lineno;
			return -EINVAL;
		}
		n++;
	}
	*ret_zones = zones;
	*ret_n = n;
	return 0;
}

bool hkc_buddy_zone_hugetlb(const char *zone)
{
	static const char *const zones[] = {"DMA32", "Normal", "HighMem", "Movable"};

	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
		if (strcmp(zone, zones[i]) == 0)
			return true;
	return false;
}

uint64_t hkc_buddy_blocks(const struct hkc_buddy_zone *z, unsigned order)
{
	uint64_t sum = 0;

	for (unsigned k = order; k < z->n_orders; k++) {
		uint64_t per = UINT64_C(1) << (k - order);
		uint64_t add = z->free[k] > UINT64_MAX / per ? UINT64_MAX : z->free[k] * per;

		sum = add > UINT64_MAX - sum ? UINT64_MAX : sum + add;
	}
	return sum;
}

int hkc_vmstat_find(const char *buf, const char *name, uint64_t *ret)
{
	size_t len = strlen(name);
	const char *line, *p;

	if (!len)
		return -EINVAL;
	for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, name, len) != 0 || (line[len] != ' ' && line[len] != '\t'))
			continue;
		p = skip_blanks(line + len);
		return take_u64(&p, "\n", ret);
	}
	return -ENOENT;
}
