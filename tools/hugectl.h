/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hugectl's parts: its messages (hugectl.c) and --collapse (hugectl-collapse.c). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>

enum {
	L_ERROR = 1,
	L_WARNING,
	L_INFO,
	L_DEBUG
};

/* "hugectl: LEVEL: message" on stderr when level is at most verbose. */
void hc_msg(int verbose, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* --collapse PID and the options that go with it, as parsed. */
struct hc_collapse {
	const char *pid;      /* --collapse's argument, not yet checked */
	bool heap, text, all; /* what to collapse; none given: all */
	bool json, dry_run;
	int verbose;
};

/* Check, collapse, report: hugectl's exit status. */
int hc_collapse(const struct hc_collapse *o);
