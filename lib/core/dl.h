/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmount and libinih, loaded on first use (dlopen), not at the start of
 * every program that links libhugekit: pagesize, hugectl --help and
 * hugeadm --pool-list read neither mounts nor configuration files, and do not
 * pay for loading libmount, libblkid, libselinux, libpcre2 and libinih.
 *
 * The headers give the functions' types at compile time (a function pointer
 * of __typeof__(mnt_new_table)); nothing links -lmount or -linih. Each library
 * is opened once per process by its fixed SONAME (never a path, never one from
 * the environment), RTLD_NOW | RTLD_LOCAL, and never closed. The dynamic
 * loader finds it as it finds any DT_NEEDED library: in a secure-execution
 * program (set-user-ID, file capabilities) it ignores LD_LIBRARY_PATH, and
 * libhugekit carries no RUNPATH, so only the system's directories are searched.
 */
#pragma once

#include <ini.h>
#include <libmount.h>

#define HKL_LIBMOUNT_SONAME "libmount.so.1"
#define HKL_LIBINIH_SONAME "libinih.so.1"

/* Every libmount function libhugekit calls. */
#define HKL_LIBMOUNT_FUNCS(X)                                                                      \
	X(mnt_new_table)                                                                           \
	X(mnt_unref_table)                                                                         \
	X(mnt_new_iter)                                                                            \
	X(mnt_free_iter)                                                                           \
	X(mnt_table_get_userdata)                                                                  \
	X(mnt_table_set_userdata)                                                                  \
	X(mnt_table_set_parser_errcb)                                                              \
	X(mnt_table_parse_stream)                                                                  \
	X(mnt_table_next_fs)                                                                       \
	X(mnt_fs_match_fstype)                                                                     \
	X(mnt_fs_get_option)                                                                       \
	X(mnt_fs_get_target)                                                                       \
	X(mnt_fs_strdup_options)                                                                   \
	X(mnt_fs_get_id)                                                                           \
	X(mnt_optstr_get_option)                                                                   \
	X(mnt_new_context)                                                                         \
	X(mnt_free_context)                                                                        \
	X(mnt_context_set_fstype)                                                                  \
	X(mnt_context_set_source)                                                                  \
	X(mnt_context_set_target)                                                                  \
	X(mnt_context_set_options)                                                                 \
	X(mnt_context_mount)                                                                       \
	X(mnt_context_umount)                                                                      \
	X(mnt_context_get_status)                                                                  \
	X(mnt_context_get_syscall_errno)

/* Every libinih function libhugekit calls. */
#define HKL_LIBINIH_FUNCS(X) X(ini_parse_stream)

#define HKL_DL_POINTER(f) __typeof__(f) *f;

struct hkl_libmount {
	HKL_LIBMOUNT_FUNCS(HKL_DL_POINTER)
};

struct hkl_libinih {
	HKL_LIBINIH_FUNCS(HKL_DL_POINTER)
};

/*
 * The library's functions, loaded on the first call (thread-safe): 0 and
 * *ret set, or -ELIBACC and *ret_why (static text naming the library and the
 * loader's reason, e.g. "libmount.so.1: cannot open shared object file: No
 * such file or directory"). A failure is kept: later calls fail the same way.
 */
int hkl_libmount(const struct hkl_libmount **ret, const char **ret_why);
int hkl_libinih(const struct hkl_libinih **ret, const char **ret_why);
