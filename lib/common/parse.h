/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsers shared by the admin library, the runtime and the tools: sizes, node lists, verbosity. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The libhugetlbfs size grammar (reference §1.1): strtol with base 0 (decimal,
 * 0x hex, leading-0 octal), one optional K/M/G suffix in either case, anything
 * after the first suffix character ignored. The value must be > 0.
 * -EINVAL for bad input, -EOVERFLOW when it does not fit.
 */
int hkc_parse_size_legacy(const char *s, uint64_t *ret);

/*
 * The strict grammar for new options: decimal digits, then optionally one of
 * K, M, G, T (binary multiples, either case) optionally followed by "B" or
 * "iB". No sign, space, fraction or trailing text. -EINVAL, -ERANGE.
 */
int hkc_parse_size(const char *s, uint64_t *ret);

/*
 * An amount of hugeadm's options (--pool-pages-min 2M:AMOUNT, --max-size):
 * the number as libhugetlbfs read it (base 0: decimal, 0x hex, leading-0
 * octal), then optionally K, M or G in either case, optionally followed by
 * "B" or "iB"; nothing else (2.23 ignored trailing text). *ret_bytes (may be
 * NULL): a suffix made it a memory amount; else a count. 0 is allowed.
 * -EINVAL, -ERANGE.
 */
int hkc_parse_amount(const char *s, uint64_t *ret, bool *ret_bytes);

/*
 * A file mode in octal (a configuration's [mount] mode): 1 to 4 octal
 * digits, nothing else, 0000 to 7777 ("755", "0700", "1777"). -EINVAL.
 */
int hkc_parse_mode(const char *s, uint32_t *ret);

static inline bool hkc_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Largest node number accepted in a node list (the kernel's MAX_NUMNODES). */
#define HKC_MAX_NODES 1024

/*
 * A node list as the kernel writes it and numactl reads it: "0", "0,2-3".
 * One trailing newline is allowed; an empty string gives an empty list.
 * The result is sorted and without duplicates. -EINVAL, -ERANGE, -ENOMEM.
 */
int hkc_nodelist_parse(const char *s, int **ret_nodes, size_t *ret_n);

/*
 * A size with the largest binary unit that divides it: 2M, 1G, 64K, 512 (K,
 * M, G, T, P, E; what the kernel's memparse() and hugeadm's messages read).
 */
void hkc_format_size(char *buf, size_t sz, uint64_t v);

/* a + b, or UINT64_MAX where it would wrap: page counts that are summed. */
static inline uint64_t hkc_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* a - b, or 0 where it would go below. */
static inline uint64_t hkc_sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* s without the blanks at both ends: the start, and the end cut in place. */
char *hkc_trim(char *s);

/* The verbosity HUGETLB_DEBUG gives: libhugetlbfs's debug level. */
#define HKC_VERBOSE_DEBUG 4

/*
 * The verbosity from libhugetlbfs's environment, read the same way by every
 * tool and by the runtime, as 2.23 reads it: debug (HUGETLB_DEBUG) set, to
 * any value, gives HKC_VERBOSE_DEBUG whatever verbose says; else verbose
 * (HUGETLB_VERBOSE), when set, is its leading decimal number (after blanks;
 * none, as in "" or "abc", is 0), held to 0..99; else def.
 */
int hkc_verbosity_env(const char *verbose, const char *debug, int def);
