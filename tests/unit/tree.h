/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A libhugekit context on a scratch copy of a fixture tree, for the unit
 * tests of the public API. Include after <cmocka.h> and <hugekit/hugekit.h>.
 */
#pragma once

#include <syslog.h>

#include "fixture.h"

struct tree {
	char *dir;
	struct hk_ctx *ctx;
};

/* A copy of tests/fixtures/sysroot/<name>, or an empty tree for NULL; quiet whatever HK_DEBUG says. */
static inline void tree_open(struct tree *t, const char *name)
{
	t->dir = name ? fixture_copy(name) : fixture_empty();
	t->ctx = NULL;
	assert_int_equal(hk_new(t->dir, &t->ctx), 0);
	assert_non_null(t->ctx);
	hk_set_log_priority(t->ctx, LOG_ERR);
}

static inline void tree_close(struct tree *t)
{
	assert_null(hk_unref(t->ctx));
	fixture_remove(t->dir);
}
