// SPDX-License-Identifier: GPL-2.0-or-later
/* seg-thread: linked with seg-threadlib, whose constructor starts a thread; prints "ok". */
#include <stdio.h>

int seg_threadlib_loaded(void);

int main(void)
{
	if (!seg_threadlib_loaded())
		return 1;
	printf("ok\n");
	return 0;
}
