// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Shared text (HUGETLB_SHARE=1): not built yet. Every call says there is
 * nothing to share, and the caller makes a private copy.
 */
#include <errno.h>

#include "share.h"

int rt_share_key(const struct dl_phdr_info *info, char *buf, size_t size)
{
	(void)info;
	(void)buf;
	(void)size;
	return -ENOSYS;
}

int rt_share_text_fd(const struct rt_share_req *req, bool *made)
{
	(void)req;
	*made = false;
	return -ENOSYS;
}
