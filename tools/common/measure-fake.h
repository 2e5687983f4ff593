/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fake rounds of the measuring tools' test copies (tlbmiss_cost-fake,
 * cpupcstat-fake: tests/CMakeLists.txt builds them with HK_MEASURE_FAKE; they
 * are never installed, and the installed tools hold no trace of this).
 */
#pragma once

#ifdef HK_MEASURE_FAKE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "util.h"

/*
 * HK_MEASURE_FAKE="A B SECONDS [switched|stalled]; ..." (hkt_fake_parse) as
 * the rounds of cfg, on a fake clock. secure_getenv: a privileged run
 * (setuid, file capabilities) never takes it. 0 when it is not set, 1 when
 * taken, -1 after a message.
 */
static inline int hkt_fake_hook(struct hkt_fake *f, struct hkt_measure_cfg *cfg)
{
	const char *text = secure_getenv("HK_MEASURE_FAKE");
	size_t bad = 0;
	int rc;

	if (!text)
		return 0;
	rc = hkt_fake_parse(f, text, &bad);
	if (rc < 0) {
		fprintf(stderr, "%s: HK_MEASURE_FAKE: round %zu: %s\n", hkt_prog(), bad,
			strerror(-rc));
		return -1;
	}
	cfg->sample = hkt_fake_sample;
	cfg->clock = hkt_fake_clock;
	cfg->ctx = f;
	return 1;
}
#endif
