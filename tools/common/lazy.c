// SPDX-License-Identifier: GPL-2.0-or-later
/* The tools' optional libraries, loaded on first use: see lazy.h. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lazy.h"

struct lazy_lib {
	const char *soname;
	const char *const *names; /* in the order of the struct's members */
	size_t n;
	void *fns;	 /* the struct: n pointers, no padding */
	const char *why; /* the failure, once there was one (in buf) */
	bool tried;
	char buf[256];
};

/* dlopen by SONAME, then every name; the loader's message on a failure. */
static bool lazy_load(struct lazy_lib *l)
{
	void *h;

	if (l->tried)
		return !l->why;
	l->tried = true;
	h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	for (size_t i = 0; h && i < l->n; i++) {
		void *p = dlsym(h, l->names[i]);

		if (!p)
			h = NULL;
		else
			memcpy((char *)l->fns + i * sizeof(p), &p, sizeof(p));
	}
	if (!h) {
		const char *e = dlerror();

		/* dlerror()'s text lasts until the next dl call: libhugekit may make one. */
		snprintf(l->buf, sizeof(l->buf), "%s", e ? e : l->soname);
		l->why = l->buf;
	}
	return !l->why;
}

/* The library's struct of pointers, or NULL and *ret_why. */
static const void *lazy_get(struct lazy_lib *l, const char **ret_why)
{
	if (lazy_load(l))
		return l->fns;
	*ret_why = l->why;
	return NULL;
}

#define LAZY_NAME(s) #s,
#define LAZY_LIB(so, syms, ptrs)                                                                   \
	{                                                                                          \
		.soname = so, .names = syms, .n = sizeof(syms) / sizeof(syms[0]), .fns = &ptrs     \
	}

static const char *const smartcols_names[] = {HKT_SMARTCOLS_SYMS(LAZY_NAME)};
static const char *const numa_names[] = {HKT_NUMA_SYMS(LAZY_NAME)};
static struct hkt_smartcols smartcols_fns;
static struct hkt_numa numa_fns;
static struct lazy_lib smartcols = LAZY_LIB(HKT_SMARTCOLS_SONAME, smartcols_names, smartcols_fns);
static struct lazy_lib numa = LAZY_LIB(HKT_NUMA_SONAME, numa_names, numa_fns);

/* One pointer per name, and no padding: lazy_load() fills them in order. */
_Static_assert(sizeof(smartcols_fns) == sizeof(smartcols_names) / sizeof(char *) * sizeof(void *),
	       "one pointer per name");
_Static_assert(sizeof(numa_fns) == sizeof(numa_names) / sizeof(char *) * sizeof(void *),
	       "one pointer per name");

const struct hkt_smartcols *hkt_smartcols(const char **ret_why)
{
	return lazy_get(&smartcols, ret_why);
}

const struct hkt_numa *hkt_numa(const char **ret_why)
{
	return lazy_get(&numa, ret_why);
}
