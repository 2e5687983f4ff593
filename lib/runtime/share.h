/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private to libhugekit-rt: text shared between processes through hugetlbfs
 * files (HUGETLB_SHARE=1). segments.c asks; share.c answers.
 */
#pragma once

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_share_req {
	const char *exe_name; /* basename of the executable, for the file name */
	const char *key;      /* its identity: rt_share_key() */
	uintptr_t offset;     /* start of the range, relative to the load base */
	const void *src;      /* the range as the process has it now (unmapped pages: zeros) */
	size_t len;	      /* a multiple of page_size */
	uint64_t page_size;   /* the huge page size of the file */
};

/*
 * The executable's identity: its GNU build-id in hex, from the PT_NOTE
 * segments in memory, else "d<dev>-i<ino>-m<mtime ns>" of the executable.
 * 0, or -errno (-ENAMETOOLONG when buf is too small).
 */
int rt_share_key(const struct dl_phdr_info *info, char *buf, size_t size);

/*
 * An O_RDONLY, O_CLOEXEC descriptor of a hugetlbfs file of exactly len bytes,
 * equal to the len bytes at src, for this executable and range: made by the
 * first process (copied from src, published in one rename), checked by later
 * ones (owner, mode, no symlink, one link, size, every page present,
 * contents) on the descriptor that is returned. *made tells which. -errno
 * when there is none to use (the caller then makes a private copy): -ENOENT
 * no share directory, -EACCES unsafe or foreign, -ESTALE different contents,
 * -EOPNOTSUPP an offset that is not a multiple of the page size (the load
 * address is not aligned to it, so each start has other ranges),
 * -EINVAL a request it cannot serve, or the system's error (-ENOMEM: the pool
 * cannot hold a new file). The directory is HUGETLB_SHARE_PATH (read here,
 * with secure_getenv) or found among the hugetlbfs mounts of the page size.
 * Why a file or directory was refused is said here (rt_msg WARNING, naming
 * it), why none could be made at INFO: the caller need not say it again.
 */
int rt_share_text_fd(const struct rt_share_req *req, bool *made);
