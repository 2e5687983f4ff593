// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

static int suffix_shift(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 10;
	case 'm':
	case 'M':
		return 20;
	case 'g':
	case 'G':
		return 30;
	case 't':
	case 'T':
		return 40;
	default:
		return -1;
	}
}

int hkc_parse_size_legacy(const char *s, uint64_t *ret)
{
	long long v;
	char *end;
	int shift;

	if (!s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno == ERANGE)
		return -EOVERFLOW;
	if (end == s || v <= 0)
		return -EINVAL;
	shift = suffix_shift(*end);
	/* libhugetlbfs knows no T: an unknown suffix is ignored, so is the rest. */
	if (shift > 0 && shift <= 30) {
		if ((unsigned long long)v > (unsigned long long)LLONG_MAX >> shift)
			return -EOVERFLOW;
		v <<= shift;
	}
	*ret = (uint64_t)v;
	return 0;
}

/*
 * digits in base, then optionally one suffix up to max_shift (K 10, M 20, G
 * 30, T 40), optionally followed by "B" or "iB"; nothing else. *ret_suffixed
 * (may be NULL): a suffix was given.
 */
static int parse_suffixed(const char *s, int base, int max_shift, uint64_t *ret, bool *ret_suffixed)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end) {
		shift = suffix_shift(*end);
		if (shift < 0 || shift > max_shift)
			return -EINVAL;
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		else if (end[-1] == 'i' || end[-1] == 'I')
			return -EINVAL; /* "2Mi" */
		if (*end)
			return -EINVAL;
	}
	if (shift && v > (ULLONG_MAX >> shift))
		return -ERANGE;
	*ret = (uint64_t)(v << shift);
	if (ret_suffixed)
		*ret_suffixed = shift > 0;
	return 0;
}

int hkc_parse_size(const char *s, uint64_t *ret)
{
	return parse_suffixed(s, 10, 40, ret, NULL);
}

int hkc_parse_amount(const char *s, uint64_t *ret, bool *ret_bytes)
{
	return parse_suffixed(s, 0, 30, ret, ret_bytes);
}

static int parse_node(const char **sp, unsigned long *ret)
{
	const char *s = *sp;
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno == ERANGE || v >= HKC_MAX_NODES)
		return -ERANGE;
	*sp = end;
	*ret = v;
	return 0;
}

int hkc_nodelist_parse(const char *s, int **ret_nodes, size_t *ret_n)
{
	unsigned char seen[HKC_MAX_NODES] = {0};
	size_t n = 0, i;
	int *nodes;

	if (!s)
		return -EINVAL;
	if (*s == '\0' || strcmp(s, "\n") == 0)
		goto done;
	for (;;) {
		unsigned long a, b;
		int rc = parse_node(&s, &a);

		if (rc < 0)
			return rc;
		b = a;
		if (*s == '-') {
			s++;
			rc = parse_node(&s, &b);
			if (rc < 0)
				return rc;
			if (b < a)
				return -EINVAL;
		}
		for (i = a; i <= b; i++)
			seen[i] = 1;
		if (*s == ',') {
			s++;
			continue;
		}
		if (*s == '\n')
			s++;
		if (*s != '\0')
			return -EINVAL;
		break;
	}
done:
	for (i = 0; i < HKC_MAX_NODES; i++)
		n += seen[i];
	nodes = malloc((n ? n : 1) * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < HKC_MAX_NODES; i++)
		if (seen[i])
			nodes[n++] = (int)i;
	*ret_nodes = nodes;
	*ret_n = n;
	return 0;
}

char *hkc_trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

void hkc_format_size(char *buf, size_t sz, uint64_t v)
{
	static const char units[] = "KMGTPE";
	int u = -1;

	while (v >= 1024 && v % 1024 == 0 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, sz, "%" PRIu64, v);
	else
		snprintf(buf, sz, "%" PRIu64 "%c", v, units[u]);
}

int hkc_verbosity_env(const char *verbose, const char *debug, int def)
{
	long v = 0;

	if (debug)
		return HKC_VERBOSE_DEBUG;
	if (!verbose)
		return def;
	while (*verbose == ' ' || *verbose == '\t')
		verbose++;
	if (*verbose == '-' && isdigit((unsigned char)verbose[1]))
		return 0;
	if (*verbose == '+')
		verbose++;
	for (; isdigit((unsigned char)*verbose) && v <= 99; verbose++)
		v = v * 10 + (*verbose - '0');
	return v > 99 ? 99 : (int)v;
}

int hkc_parse_mode(const char *s, uint32_t *ret)
{
	uint32_t v = 0;
	size_t n = 0;

	/* Leading zeros beyond four digits ("00755") are still a mode. */
	while (s[n] == '0' && s[n + 1])
		n++;
	if (!s[n] || strspn(s + n, "01234567") != strlen(s + n) || strlen(s + n) > 4)
		return -EINVAL;
	for (; s[n]; n++)
		v = v * 8 + (uint32_t)(s[n] - '0');
	*ret = v;
	return 0;
}
