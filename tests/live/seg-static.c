// SPDX-License-Identifier: GPL-2.0-or-later
/* seg-static: linked statically, so no preloaded library is ever loaded into it; prints "ok". */
#include <stdio.h>
#include <string.h>

static char bss[4 << 20];

int main(void)
{
	memset(bss, 1, sizeof(bss));
	printf("%s\n", bss[sizeof(bss) - 1] == 1 ? "ok" : "bad");
	return 0;
}
