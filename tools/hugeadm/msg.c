// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hugeadm's messages: ha_msg, and the library's log shown through it. A leaf:
 * it needs nothing of the rest of hugeadm. Not in hugeadm_obj: the fuzz
 * targets that link those objects bring an ha_msg of their own.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <syslog.h>

#include "hugeadm.h"
#include "options.h"

static const char *const level_names[] = {
	[HA_ERROR] = "ERROR",
	[HA_WARNING] = "WARNING",
	[HA_INFO] = "INFO",
	[HA_DEBUG] = "DEBUG",
};

/* One line each: control characters from names in the message are written as \ooo. */
void ha_msg(const struct hugeadm_ctl *ctl, int level, const char *fmt, ...)
{
	char *msg = NULL, *safe = NULL;
	int n, err = errno;
	va_list ap;

	if (level > ctl->verbose)
		return;
	fflush(stdout);
	fprintf(stderr, "%s:%s: ", hkt_prog(), level_names[level < HA_DEBUG ? level : HA_DEBUG]);
	errno = err; /* for %m */
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n >= 0)
		safe = hkt_escape_ctl(msg, false);
	fputs(safe ? safe : "(out of memory)", stderr);
	free(safe);
	if (n >= 0)
		free(msg);
	fputc('\n', stderr);
}

/* The library's log, shown at the matching level. */
static void lib_log(void *data, int priority, const char *msg)
{
	int level = priority <= LOG_ERR	      ? HA_ERROR
		    : priority <= LOG_WARNING ? HA_WARNING
		    : priority <= LOG_INFO    ? HA_INFO
					      : HA_DEBUG;

	ha_msg(data, level, "%s", msg);
}

void ha_msg_attach(struct hugeadm_ctl *ctl)
{
	hk_set_log_fn(ctl->ctx, lib_log, ctl);
	hk_set_log_priority(ctl->ctx, ctl->verbose >= HA_DEBUG	   ? LOG_DEBUG
				      : ctl->verbose >= HA_INFO	   ? LOG_INFO
				      : ctl->verbose >= HA_WARNING ? LOG_WARNING
								   : LOG_ERR);
}
