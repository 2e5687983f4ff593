/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to libhugekit-rt. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pagesizes.h"
#include "parse.h"
#include "path.h"
#include "segplan.h"

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

/*
 * The path layer on "/". Opened at the first call that succeeds: while it
 * cannot be opened (no file descriptor left, say) the context has no root
 * (rootfd -1, every access fails) and the next call tries again.
 */
const struct hkc_path *rt_path(void);
/* Whether rt_path() has its root (then it takes no lock and allocates nothing). */
bool rt_path_is_ready(void);

/* The base page size, read once. */
size_t rt_base_page_size(void);

/* api.c: its locks, taken around fork() so that a child never inherits them held. */
void rt_api_prefork(void);
void rt_api_postfork(void);
/*
 * api.c: every hugetlbfs mount point of the mount table, in its order, escapes
 * decoded: fn(data, mount point) until it returns true. 0, or -errno when the
 * table cannot be read.
 */
int rt_hugetlbfs_mounts(bool (*fn)(void *data, const char *mnt), void *data);

/*
 * fork.c: from now on, a child of fork() gets its private hugetlb memory
 * moved to base pages (see there). Idempotent, thread-safe.
 */
void rt_fork_watch(void);

/*
 * rt.c: a warning about this run at its level (said by the launched
 * program, at the information level in its children and once it was said),
 * and marking it said for the images this process executes next.
 */
int rt_run_level(int level);
void rt_mark_said(void);

/* The default huge page size, read once (0 while it cannot be read). */
uint64_t rt_default_page_size(void);

/*
 * segments.c: the program's text, data and bss on huge pages
 * (HUGETLB_ELFMAP, hugeedit's flags), from the constructor, before main().
 */
void rt_segments(void);
/* For the report: bytes of a kind on huge and on base pages; false when the kind was not asked. */
bool rt_segments_bytes(enum hkc_seg_kind kind, uint64_t *huge, uint64_t *base);
/* Whether [a, b) lies in a range rt_segments() moved (the report counts it apart). */
bool rt_segments_holds(uintptr_t a, uintptr_t b);

/* A range of addresses, [s, e). */
struct rt_range {
	uintptr_t s, e;
};

/*
 * perfmap.c: with HUGETLB_PERFMAP=1, /tmp/perf-PID.map for the n executable
 * ranges rt_segments() moved (the executable loaded at bias): the functions
 * in them, for perf. Says why when it cannot.
 */
void rt_perfmap(uintptr_t bias, const struct rt_range *r, size_t n);
