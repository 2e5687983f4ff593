// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Preloaded before the runtime: an mremap(MREMAP_FIXED) that fails the way
 * the kernel's can, after it has unmapped the destination (ENOMEM from the
 * map count or memory, once the old mapping there is gone). Other calls go
 * to libc's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *(*real)(void *, size_t, size_t, int, ...) =
		(void *(*)(void *, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
		munmap(new_addr, new_len);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return real(old, old_len, new_len, flags);
}
