/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tools' optional libraries, loaded when an option needs them, not at
 * every start: libsmartcols for hugeadm's tables (--pool-list prints without
 * it), libnuma for hugectl --membind. The headers give the types; no tool
 * links -lsmartcols or -lnuma. Each library is opened by its fixed SONAME
 * (RTLD_NOW | RTLD_LOCAL, never a path, never one from the environment; a
 * secure-execution program's loader ignores LD_LIBRARY_PATH) and never closed.
 * libhugekit loads libmount and libinih the same way (lib/core/dl.h).
 */
#pragma once

#include <libsmartcols.h>
#include <numa.h>

#define HKT_SMARTCOLS_SONAME "libsmartcols.so.1"
#define HKT_NUMA_SONAME "libnuma.so.1"

#define HKT_SMARTCOLS_SYMS(X)                                                                      \
	X(scols_new_table)                                                                         \
	X(scols_unref_table)                                                                       \
	X(scols_table_new_column)                                                                  \
	X(scols_table_new_line)                                                                    \
	X(scols_line_set_data)                                                                     \
	X(scols_print_table)

/* numa_nodes_ptr is a variable: its member is its address. */
#define HKT_NUMA_SYMS(X)                                                                           \
	X(numa_available)                                                                          \
	X(numa_max_node)                                                                           \
	X(numa_nodes_ptr)                                                                          \
	X(numa_bitmask_isbitset)                                                                   \
	X(numa_parse_nodestring)                                                                   \
	X(numa_set_membind)                                                                        \
	X(numa_bitmask_free)

#define HKT_LAZY_MEMBER(s) __typeof__(s) *s;

struct hkt_smartcols {
	HKT_SMARTCOLS_SYMS(HKT_LAZY_MEMBER)
};

struct hkt_numa {
	HKT_NUMA_SYMS(HKT_LAZY_MEMBER)
};

/*
 * The library, loaded on the first call (the tools are single-threaded): the
 * symbols, or NULL with *ret_why set to the loader's reason, which names the
 * library ("libnuma.so.1: cannot open shared object file: ..."). A failure is
 * kept.
 */
const struct hkt_smartcols *hkt_smartcols(const char **ret_why);
const struct hkt_numa *hkt_numa(const char **ret_why);
