// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The privilege rule (lib/common/privilege.c) on made-up credentials: who is
 * privileged (the owner checks of the configuration apply) and who is
 * privileged for someone else (hugeadm refuses caller-named paths, hugectl
 * and hugeedit refuse to run); and the running test's own credentials read
 * the same way as the system calls give them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privilege.h"

struct row {
	const char *what;
	struct hkc_creds c;
	bool privileged, for_other;
};

static void test_rule(void **state)
{
	static const struct row rows[] = {
		{"a user, nothing more", {1000, 1000, 1000, 1000, false, false}, false, false},
		{"root", {0, 0, 0, 0, false, true}, true, false},
		{"root running a set-user-ID program", {0, 0, 0, 0, true, true}, true, false},
		{"root running a set-user-ID nobody program",
		 {0, 65534, 0, 0, true, false},
		 true,
		 false},
		{"a user running a set-user-ID root program",
		 {1000, 0, 1000, 1000, true, true},
		 true,
		 true},
		{"a user running a set-group-ID program",
		 {1000, 1000, 1000, 42, true, false},
		 true,
		 true},
		{"a user running a program with file capabilities",
		 {1000, 1000, 1000, 1000, true, true},
		 true,
		 true},
		/* Ambient capabilities: the caller's own (a service manager gave them). */
		{"a user with ambient capabilities",
		 {1000, 1000, 1000, 1000, false, true},
		 true,
		 false},
		/* Not AT_SECURE, yet other ids (a parent that changed only its effective uid). */
		{"effective uid not the real one", {1000, 0, 1000, 1000, false, true}, true, true},
		{"effective gid not the real one",
		 {1000, 1000, 1000, 0, false, false},
		 false,
		 true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (hkc_creds_privileged(&rows[i].c) != rows[i].privileged)
			fail_msg("%s: privileged should be %d", rows[i].what, rows[i].privileged);
		if (hkc_creds_for_other(&rows[i].c) != rows[i].for_other)
			fail_msg("%s: for someone else should be %d", rows[i].what,
				 rows[i].for_other);
	}
}

/* The fake stands in for the process in every function; without it, the process itself. */
static void test_this_process(void **state)
{
	static const struct hkc_creds setuid_root = {1000, 0, 1000, 1000, true, true};
	struct hkc_creds c;
	char path[] = "/tmp/hk-test-privilege.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	hkc_creds_get(&c);
	assert_int_equal(c.ruid, getuid());
	assert_int_equal(c.euid, geteuid());
	assert_int_equal(c.rgid, getgid());
	assert_int_equal(c.egid, getegid());
	assert_int_equal(c.secure, getauxval(AT_SECURE) != 0);
	/* The tests run as root or as a user, never set-user-ID. */
	assert_false(hkc_privileged_for_other());
	assert_int_equal(hkc_privileged(), geteuid() == 0 || c.caps);
	/* Its own new file: the real user reads it. */
	assert_true(hkc_caller_can_read_fd(fd));

	hkc_creds_fake = &setuid_root;
	hkc_fake_caller_reads = false;
	assert_true(hkc_privileged());
	assert_true(hkc_privileged_for_other());
	assert_false(hkc_caller_can_read_fd(fd));
	hkc_creds_fake = NULL;
	assert_false(hkc_privileged_for_other());
	close(fd);
	unlink(path);
}

/* A file the real user may not read (mode 0000), when that user is not root. */
static void test_caller_cannot_read(void **state)
{
	char path[] = "/tmp/hk-test-privilege.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0), 0);
	/* Root reads any file (access(2) gives the real uid 0 its capabilities). */
	assert_int_equal(hkc_caller_can_read_fd(fd), getuid() == 0);
	/* As a set-user-ID root program run by nobody: real uid 65534, effective 0. */
	if (geteuid() == 0) {
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(setresuid(65534, 0, 0) < 0 ? 2 : hkc_caller_can_read_fd(fd) ? 1 : 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_this_process),
		cmocka_unit_test(test_caller_cannot_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
