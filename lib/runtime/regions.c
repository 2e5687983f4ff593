// SPDX-License-Identifier: LGPL-2.1-or-later
/* The region table of the API: see regions.h. */
#include <errno.h>
#include <stdlib.h>

#include "regions.h"

size_t rt_regions_slot(uintptr_t key, size_t cap)
{
	return (size_t)(((uint64_t)key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (cap - 1);
}

/* The slot holding key, or the free slot where it would go. Needs cap > n. */
static size_t probe(const struct rt_regions *t, uintptr_t key)
{
	size_t i = rt_regions_slot(key, t->cap);

	while (t->slots[i].start && t->slots[i].start != key)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static struct rt_region *find(const struct rt_regions *t, uintptr_t key)
{
	size_t i;

	if (!t->cap || !key)
		return NULL;
	i = probe(t, key);
	return t->slots[i].start ? &t->slots[i] : NULL;
}

static int grow(struct rt_regions *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64, ocap = t->cap;
	struct rt_region *old = t->slots, *ns;

	if (ncap < ocap || ncap > SIZE_MAX / sizeof(*ns))
		return -ENOMEM;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	t->slots = ns;
	t->cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].start)
			t->slots[probe(t, old[i].start)] = old[i];
	free(old);
	return 0;
}

int rt_regions_add(struct rt_regions *t, const struct rt_region *r)
{
	int rc = 0;
	size_t i;

	if (!r->start)
		return -EINVAL;
	pthread_mutex_lock(&t->lock);
	if ((t->n + 1) * 4 > t->cap * 3)
		rc = grow(t);
	if (rc == 0) {
		i = probe(t, r->start);
		/* A mapping the program unmapped by itself may come back at the same address. */
		if (!t->slots[i].start)
			t->n++;
		t->slots[i] = *r;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* Remove the entry in slot i, shifting back the entries probed past it. */
static void del(struct rt_regions *t, size_t i)
{
	size_t mask = t->cap - 1, j = i, k;

	for (;;) {
		j = (j + 1) & mask;
		if (!t->slots[j].start)
			break;
		k = rt_regions_slot(t->slots[j].start, t->cap);
		/* The entry at j may move to i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->slots[i] = t->slots[j];
		i = j;
	}
	t->slots[i].start = 0;
	t->n--;
}

bool rt_regions_take(struct rt_regions *t, const uintptr_t *keys, size_t n, uintptr_t addr,
		     struct rt_region *ret)
{
	struct rt_region *r = NULL;

	pthread_mutex_lock(&t->lock);
	for (size_t c = 0; c < n && !r; c++) {
		r = find(t, keys[c]);
		if (r &&
		    (addr < r->start || addr - r->start >= r->page || addr - r->start >= r->len))
			r = NULL;
	}
	if (r) {
		*ret = *r;
		del(t, (size_t)(r - t->slots));
	}
	pthread_mutex_unlock(&t->lock);
	return r != NULL;
}

bool rt_regions_has(struct rt_regions *t, uintptr_t key)
{
	bool found;

	pthread_mutex_lock(&t->lock);
	found = find(t, key) != NULL;
	pthread_mutex_unlock(&t->lock);
	return found;
}

void rt_regions_fini(struct rt_regions *t)
{
	pthread_mutex_lock(&t->lock);
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
	pthread_mutex_unlock(&t->lock);
}

void rt_regions_lock(struct rt_regions *t)
{
	pthread_mutex_lock(&t->lock);
}

void rt_regions_unlock(struct rt_regions *t)
{
	pthread_mutex_unlock(&t->lock);
}
