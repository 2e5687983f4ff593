// SPDX-License-Identifier: LGPL-2.1-or-later
/* libmount and libinih on first use: see dl.h. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dl.h"
#include "path.h"

/* A function of the library: its name and where its pointer goes. */
struct dl_sym {
	const char *name;
	size_t offset;
};

struct dl_lib {
	const char *soname;
	const struct dl_sym *syms;
	size_t n;
	void *fns; /* the library's struct of pointers */
	int rc;
	char why[256];
};

#define HKL_DL_SYM(type, f) {#f, offsetof(type, f)},
#define MOUNT_SYM(f) HKL_DL_SYM(struct hkl_libmount, f)
#define INIH_SYM(f) HKL_DL_SYM(struct hkl_libinih, f)

static const struct dl_sym mount_syms[] = {HKL_LIBMOUNT_FUNCS(MOUNT_SYM)};
static const struct dl_sym inih_syms[] = {HKL_LIBINIH_FUNCS(INIH_SYM)};

static struct hkl_libmount mount_fns;
static struct hkl_libinih inih_fns;

static struct dl_lib libmount = {.soname = HKL_LIBMOUNT_SONAME,
				 .syms = mount_syms,
				 .n = sizeof(mount_syms) / sizeof(mount_syms[0]),
				 .fns = &mount_fns};
static struct dl_lib libinih = {.soname = HKL_LIBINIH_SONAME,
				.syms = inih_syms,
				.n = sizeof(inih_syms) / sizeof(inih_syms[0]),
				.fns = &inih_fns};

static void dl_fail(struct dl_lib *l, const char *why)
{
	snprintf(l->why, sizeof(l->why), "%s", why ? why : "cannot be loaded");
	l->rc = -ELIBACC;
}

static void dl_load(struct dl_lib *l)
{
	void *h;
	int rc = hkc_fault_dlopen(l->soname);

	if (rc < 0) {
		char why[128];

		snprintf(why, sizeof(why), "%s: %s", l->soname, strerror(-rc));
		dl_fail(l, why);
		return;
	}
	/* A fixed SONAME, searched as a DT_NEEDED name is (see dl.h). */
	h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		dl_fail(l, dlerror());
		return;
	}
	for (size_t i = 0; i < l->n; i++) {
		void *p = dlsym(h, l->syms[i].name);

		if (!p) {
			dl_fail(l, dlerror());
			return; /* h stays open: dlclose() would gain nothing */
		}
		memcpy((char *)l->fns + l->syms[i].offset, &p, sizeof(p));
	}
}

static pthread_once_t mount_once = PTHREAD_ONCE_INIT, inih_once = PTHREAD_ONCE_INIT;

static void load_mount(void)
{
	dl_load(&libmount);
}

static void load_inih(void)
{
	dl_load(&libinih);
}

static int dl_get(pthread_once_t *once, void (*load)(void), const struct dl_lib *l,
		  const char **ret_why)
{
	pthread_once(once, load);
	if (l->rc < 0 && ret_why)
		*ret_why = l->why;
	return l->rc;
}

int hkl_libmount(const struct hkl_libmount **ret, const char **ret_why)
{
	int rc = dl_get(&mount_once, load_mount, &libmount, ret_why);

	if (rc == 0)
		*ret = &mount_fns;
	return rc;
}

int hkl_libinih(const struct hkl_libinih **ret, const char **ret_why)
{
	int rc = dl_get(&inih_once, load_inih, &libinih, ret_why);

	if (rc == 0)
		*ret = &inih_fns;
	return rc;
}
