// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * For seg-test: a 3 MiB object that the program uses (a copy relocation
 * puts it in the program's bss), filled by this library's constructor,
 * which runs before a preloaded library's.
 */
#include <stddef.h>

extern char seg_lib_buf[3 << 20];
char seg_lib_buf[3 << 20];

__attribute__((constructor)) static void fill(void)
{
	for (size_t i = 0; i < sizeof(seg_lib_buf); i += 4096)
		seg_lib_buf[i] = (char)(1 + i / 4096 % 100);
}
