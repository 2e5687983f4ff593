/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The problems a configuration or a plan reports, collected for the unit tests. */
#pragma once

#include <stdio.h>
#include <string.h>

struct errs {
	char buf[8192];
	unsigned n;
};

/* An hk_config_error_fn: "FILE:LINE: message" lines into the struct errs at data. */
static inline void collect(void *data, const char *file, unsigned line, const char *msg)
{
	struct errs *e = data;
	size_t len = strlen(e->buf);

	snprintf(e->buf + len, sizeof(e->buf) - len, "%s:%u: %s\n", file ? file : "-", line, msg);
	e->n++;
}
