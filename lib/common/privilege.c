// SPDX-License-Identifier: LGPL-2.1-or-later
/* Privileged, and privileged for someone else: see privilege.h. */
#include "privilege.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paths.h"

const struct hkc_creds *hkc_creds_fake;
bool hkc_fake_caller_reads;

bool hkc_creds_privileged(const struct hkc_creds *c)
{
	return c->euid == 0 || c->secure || c->caps;
}

bool hkc_creds_for_other(const struct hkc_creds *c)
{
	return c->ruid != 0 && (c->secure || c->euid != c->ruid || c->egid != c->rgid);
}

/* Any effective capability; -errno when capget fails. */
static int caps_effective(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {0};

	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (d[i].effective)
			return 1;
	return 0;
}

/*
 * This process's credentials (or the tests' stand-in): the ids and AT_SECURE
 * by two system calls, the capabilities (capget) only when with_caps.
 */
static void creds(struct hkc_creds *c, bool with_caps)
{
	uid_t suid;
	gid_t sgid;

	if (hkc_creds_fake) {
		*c = *hkc_creds_fake;
		return;
	}
	/* Never fail for the calling process's own ids (getresuid(2)). */
	(void)getresuid(&c->ruid, &c->euid, &suid);
	(void)getresgid(&c->rgid, &c->egid, &sgid);
	c->secure = getauxval(AT_SECURE) != 0;
	c->caps = with_caps && caps_effective() != 0;
}

void hkc_creds_get(struct hkc_creds *c)
{
	creds(c, true);
}

bool hkc_privileged(void)
{
	struct hkc_creds c;

	hkc_creds_get(&c);
	return hkc_creds_privileged(&c);
}

bool hkc_privileged_for_other(void)
{
	struct hkc_creds c;

	/* The capabilities are not part of the question: no capget(2) at every start. */
	creds(&c, false);
	return hkc_creds_for_other(&c);
}

bool hkc_caller_can_read_fd(int fd)
{
	char path[64];

	if (hkc_creds_fake)
		return hkc_fake_caller_reads;
	if (snprintf(path, sizeof(path), "/" HK_PROC_SELF_FD "/%d", fd) >= (int)sizeof(path))
		return false;
	/* No AT_EACCESS: the real uid and gid, and no capability unless the real uid is 0. */
	return faccessat(AT_FDCWD, path, R_OK, 0) == 0;
}

int hkc_drop_privileges(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {0};
	uid_t uid = getuid(), ru, eu, su;
	gid_t gid = getgid(), rg, eg, sg;

	/* The group first: after the uid changes, the right to change it may be gone. */
	if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	/* Root (real uid 0) keeps what it had: it is not privileged for someone else. */
	if (uid != 0 && syscall(SYS_capset, &h, d) < 0)
		return -errno;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return -errno;
	if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid ||
	    (uid != 0 && caps_effective() != 0))
		return -EPERM;
	return 0;
}
