/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The region table of the API (private to libhugekit-rt, and built into the
 * unit test tests/unit/test-rt-api.c): which mappings get_huge_pages and
 * get_hugepage_region handed out, mapping start -> length and page size.
 * Open addressing with linear probing, a power-of-two capacity at most 3/4
 * full, deletion by shifting back the entries probed past the hole (no
 * tombstones). Every function but rt_regions_slot takes the table's lock.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_region {
	uintptr_t start; /* of the mapping; 0: a free slot */
	size_t len;	 /* bytes mapped */
	size_t page;	 /* page size of the mapping */
};

struct rt_regions {
	pthread_mutex_t lock;
	struct rt_region *slots;
	size_t cap, n;
};

#define RT_REGIONS_INIT                                                                            \
	{                                                                                          \
		.lock = PTHREAD_MUTEX_INITIALIZER                                                  \
	}

/* The home slot of key in a table of capacity cap (a power of two). */
size_t rt_regions_slot(uintptr_t key, size_t cap);

/* Record r (r->start != 0); an entry with the same start is replaced. 0 or -ENOMEM. */
int rt_regions_add(struct rt_regions *t, const struct rt_region *r);

/*
 * Take out the first of keys[0..n) that names a region: its start, and
 * addr lies in [start, start + min(page, len)). true with *ret filled, or
 * false when none does.
 */
bool rt_regions_take(struct rt_regions *t, const uintptr_t *keys, size_t n, uintptr_t addr,
		     struct rt_region *ret);

/* Whether a region starts at key (for tests). */
bool rt_regions_has(struct rt_regions *t, uintptr_t key);

/* Free the slots (for tests; the library's own table lives as long as the process). */
void rt_regions_fini(struct rt_regions *t);

/* fork(): the table is locked around it so that the child never inherits it locked. */
void rt_regions_lock(struct rt_regions *t);
void rt_regions_unlock(struct rt_regions *t);
