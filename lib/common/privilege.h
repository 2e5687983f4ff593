/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether this process holds privileges, and whether it holds them for
 * someone else: one rule for libhugekit (the owner checks of the
 * configuration, the messages that would quote a file) and for the tools
 * (hugeadm refuses the paths its caller names; hugectl and hugeedit refuse to
 * run at all).
 *
 * Privileged: the effective uid is 0, the kernel started the program in
 * secure-execution mode (AT_SECURE: set-user-ID, set-group-ID, file
 * capabilities), or any capability is effective.
 *
 * Privileged for someone else: the real uid is not 0, and the program gained
 * rights at exec that its caller did not have: AT_SECURE (the kernel sets it
 * for set-user-ID and set-group-ID programs and for file capabilities that
 * raised the permitted set), or effective ids other than the real ones. The
 * real user is the caller; what the program may do beyond that user's rights
 * is not the caller's to steer. Not for someone else: root (real uid 0), who
 * could do all of it itself, and a user whose capabilities are ambient ones
 * (a service manager gave them to that user's processes: the caller holds
 * them and could use them directly). Both are privileged, so the owner checks
 * apply to them.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct hkc_creds {
	uid_t ruid, euid;
	gid_t rgid, egid;
	bool secure; /* getauxval(AT_SECURE) */
	bool caps;   /* any effective capability (capget fails: taken as yes) */
};

/* The rule on given credentials (for tests, and the functions below). */
bool hkc_creds_privileged(const struct hkc_creds *c);
bool hkc_creds_for_other(const struct hkc_creds *c);

/* This process's credentials now (or the tests' stand-in, hkc_creds_fake). */
void hkc_creds_get(struct hkc_creds *c);
bool hkc_privileged(void);
bool hkc_privileged_for_other(void);

/*
 * Whether the real user (not the privileges) may read the file open on fd:
 * access(2) on its /proc/self/fd entry, which checks the real ids and, for a
 * real uid other than 0, no capability. False when that cannot be told.
 */
bool hkc_caller_can_read_fd(int fd);

/*
 * Give up every privilege for good: the effective and saved ids become the
 * real ones, no capability is left (permitted, effective, inheritable,
 * ambient). 0, or -errno; checked after the change.
 */
int hkc_drop_privileges(void);

/*
 * For the unit tests only: when set, hkc_creds_get returns *hkc_creds_fake and
 * hkc_caller_can_read_fd returns hkc_fake_caller_reads. Never set by the
 * libraries or the tools.
 */
extern const struct hkc_creds *hkc_creds_fake;
extern bool hkc_fake_caller_reads;
