/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to libhugekit-rt. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "pagesizes.h"
#include "parse.h"
#include "path.h"

#define RT_EXPORT __attribute__((visibility("default")))

/* libhugetlbfs's levels: 1 error, 2 warning (default), 3 info, 4 debug. */
enum {
	RT_ERROR = 1,
	RT_WARNING = 2,
	RT_INFO = 3,
	RT_DEBUG = 4
};

/* "libhugetlbfs: WARNING: ..." on stderr when the level allows (HUGETLB_VERBOSE). */
void rt_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The path layer on "/", opened once. */
const struct hk_path *rt_path(void);
