/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live collapse's parts (collapse.c), private to libhugekit and its unit
 * tests: which mappings are chosen, the asking loop, the accounting.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <hugekit/hugekit.h>

#include "smaps.h"

/* process_madvise(2)'s form: the bytes advised, or -1 with errno. */
typedef ssize_t hkl_madvise_fn(int pidfd, const struct iovec *iov, size_t n, int advice,
			       unsigned flags);

/* The most iovecs one call takes (the kernel's UIO_MAXIOV). */
#define HKL_COLLAPSE_IOV_MAX 1024

struct hk_collapse {
	int pid;
	char *comm;
	bool thp_disabled;
	bool dry_run;
	unsigned kinds; /* HK_COLLAPSE_HEAP | HK_COLLAPSE_TEXT */
	uint64_t pmd_size;
	struct hk_collapse_range *ranges;
	size_t n;
	struct hk_collapse_total totals[HK_COLLAPSE_NKINDS];
};

/* The kind a mapping is of (enum hk_collapse_kind), or -1: not one that is collapsed. */
int hkl_collapse_kind(const struct hkc_smap *m);
/*
 * The mappings of c->kinds in maps into c->ranges (their names copied),
 * their whole parts of c->pmd_size, the result of those not to be asked,
 * and the totals before (after: the same). 0 or -ENOMEM.
 */
int hkl_collapse_select(struct hk_collapse *c, const struct hkc_smap *maps, size_t n);
/*
 * Ask fn for every range with parts, at most HKL_COLLAPSE_IOV_MAX a call;
 * a range the kernel refuses is told (its errno) and the call goes on after
 * it. 0, or the -errno that concerns the whole process (-ESRCH, -EACCES,
 * -EPERM, -EINTR, -EBADF, -EFAULT, -ENOSYS): then the ranges not reached
 * are left as they were.
 */
int hkl_collapse_ask(struct hk_collapse *c, int pidfd, hkl_madvise_fn *fn);
/* The smaps after: each range's and each kind's "after", and the reasons of the refusals. */
void hkl_collapse_account(struct hk_collapse *c, const struct hkc_smap *maps, size_t n);
