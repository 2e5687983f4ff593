/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers for unit tests: scratch copies of the fixture trees. */
#pragma once

/*
 * Copy tests/fixtures/sysroot/<name> ($HK_FIXTURES/<name>) to a fresh
 * mkdtemp() directory and return its path (malloc'd). Tests may write there.
 * Aborts the test run when the copy fails.
 */
char *fixture_copy(const char *name);
/* Remove a scratch tree made by fixture_copy() or fixture_empty() and free the path. */
void fixture_remove(char *dir);
/* An empty scratch directory. */
char *fixture_empty(void);
/* Write (create, with parents) a file under dir with the given content. */
void fixture_write(const char *dir, const char *relpath, const char *content);
