// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/procfs.h"
#include "privileges.h"

/* Older headers lack the capabilities split out of CAP_SYS_ADMIN in 5.8 and 5.9. */
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

/* A uid or gid from the environment: all digits, below the invalid (uid_t)-1. */
static int parse_id(const char *s, unsigned int *id)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= UINT32_MAX)
		return -EINVAL;
	*id = v;
	return 0;
}

int invoker__from_sudo(struct invoker *u)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	struct passwd *pw;
	unsigned int v;

	memset(u, 0, sizeof(*u));
	if (getuid() != 0 || !uid)
		return -ENOENT;
	if (parse_id(uid, &v))
		return -EINVAL;
	u->uid = v;
	if (parse_id(gid, &v))
		return -EINVAL;
	u->gid = v;
	if (u->uid == 0)
		return -ENOENT;
	/*
	 * The user's groups as a login would give them: the command may need
	 * them (a device group, a shared directory), and root's own groups
	 * must not leak to it. A uid with no passwd entry gets SUDO_GID alone.
	 */
	u->groups[0] = u->gid;
	u->nr_groups = 1;
	pw = getpwuid(u->uid);
	if (pw) {
		int n = INVOKER_MAX_GROUPS;

		snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
		snprintf(u->home, sizeof(u->home), "%s", pw->pw_dir);
		if (getgrouplist(pw->pw_name, u->gid, u->groups, &n) >= 0)
			u->nr_groups = n;
	}
	return 0;
}

/* capget() or capset() (@nr) of our own capabilities, 64 bits in two structs. 0 or -errno. */
static int caps_v3(long nr, struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(nr, &hdr, data) ? -errno : 0;
}

int invoker__become(const struct invoker *u)
{
	struct __user_cap_data_struct none[2] = { 0 };
	int err;

	if (setgroups(u->nr_groups, u->groups) || setresgid(u->gid, u->gid, u->gid) ||
	    setresuid(u->uid, u->uid, u->uid))
		return -errno;
	/*
	 * Once privileges__drop() set SECBIT_NO_SETUID_FIXUP, becoming @u keeps
	 * the capabilities (invoker__run()): they go explicitly.
	 */
	err = caps_v3(SYS_capset, none);
	if (err)
		return err;
	/* Make sure there is no way back: a failed drop must not exec as root. */
	if (setuid(0) == 0 || getuid() != u->uid || geteuid() != u->uid)
		return -EPERM;
	if (*u->name && (setenv("USER", u->name, 1) || setenv("LOGNAME", u->name, 1)))
		return -errno;
	if (*u->home && setenv("HOME", u->home, 1))
		return -errno;
	return 0;
}

int invoker__run(const struct invoker *u, int (*fn)(void *arg), void *arg)
{
	int status, err;
	pid_t pid;

	/* What stdio holds would be written twice, by each process. */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		/* _exit(): the parent's atexit work (its BPF objects) is not the child's. */
		err = invoker__become(u);
		if (err)
			pr_warn("cannot become uid %u: %s", u->uid, strerror(-err));
		else
			err = fn(arg);
		_exit(err < 0 ? (-err > 255 ? EIO : -err) : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return -WEXITSTATUS(status);
	return -EINTR;
}

static uint64_t bit(int cap)
{
	return 1ULL << cap;
}

/*
 * What a run needs once the BPF program is attached and the perf events
 * are open (CAP_PERFMON, CAP_SYS_ADMIN, CAP_SYS_RESOURCE and the rest have
 * done their part by then):
 *  - CAP_BPF: bpf() on our own maps and programs (the off-CPU flush, the
 *    counters, run times); kernels before 6.5 ask it of every bpf() call;
 *  - CAP_SYS_PTRACE: /proc/PID/maps and /proc/PID/root of processes of
 *    other users, the targets' children included;
 *  - CAP_DAC_READ_SEARCH: the targets' files and debug files, whatever
 *    their permission bits (read and search only, never write);
 *  - CAP_CHECKPOINT_RESTORE: /proc/PID/map_files, the mapped inode itself,
 *    for files deleted or replaced since they were mapped (CAP_SYS_ADMIN
 *    before Linux 5.9, which did not have it);
 *  - CAP_SYSLOG: kernel addresses in /proc/kallsyms (kptr_restrict);
 *  - CAP_DAC_OVERRIDE: writing the output where root was asked to, as in a
 *    directory of the user who ran sudo;
 *  - CAP_SETUID and CAP_SETGID, CAP_KILL and CAP_SYS_ADMIN only when
 *    needed (struct privilege_needs): the first two to write outputs as
 *    the user who ran sudo (invoker__run()); the kernel asks CAP_SYS_ADMIN of every uprobe
 *    (CAP_PERFMON is not enough since it was found that a uprobe can
 *    write into a file's code).
 */
static uint64_t needed_caps(const struct privilege_needs *needs, long last)
{
	uint64_t keep = bit(CAP_SYS_PTRACE) | bit(CAP_DAC_READ_SEARCH) | bit(CAP_SYSLOG) |
			bit(CAP_DAC_OVERRIDE);

	keep |= last >= CAP_BPF ? bit(CAP_BPF) : bit(CAP_SYS_ADMIN);
	keep |= last >= CAP_CHECKPOINT_RESTORE ? bit(CAP_CHECKPOINT_RESTORE) : bit(CAP_SYS_ADMIN);
	if (needs->setid)
		keep |= bit(CAP_SETUID) | bit(CAP_SETGID);
	if (needs->kill)
		keep |= bit(CAP_KILL);
	if (needs->attach)
		keep |= bit(CAP_SYS_ADMIN);
	return keep;
}

int privileges__drop(const struct privilege_needs *needs)
{
	long last = procfs__read_long("/proc/sys/kernel/cap_last_cap", CAP_LAST_CAP);
	/* Zeroed: valgrind thinks capget() fills in only the first of the two. */
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t permitted, keep;
	int err;

	/* Whatever else happens, an exec can no longer gain privileges. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	err = caps_v3(SYS_capget, data);
	if (err)
		return err;
	permitted = data[0].permitted | (uint64_t)data[1].permitted << 32;
	keep = needed_caps(needs, last) & permitted;

	/*
	 * The bounding set and the securebits need CAP_SETPCAP, which goes
	 * last. With SECBIT_NOROOT an exec by uid 0 no longer gets every
	 * capability back, which would undo the rest.
	 */
	if (permitted & bit(CAP_SETPCAP)) {
		for (long cap = 0; cap <= last && cap < 64; cap++)
			if (!(keep & bit(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) &&
			    errno != EINVAL)
				return -errno;
		if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
						     SECBIT_NO_SETUID_FIXUP |
						     SECBIT_NO_SETUID_FIXUP_LOCKED))
			pr_debug("cannot set securebits: %s", strerror(errno));
	}
	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	data[0].inheritable = data[1].inheritable = 0;
	err = caps_v3(SYS_capset, data);
	if (err)
		return err;
	pr_debug("capabilities kept: %#llx", (unsigned long long)keep);
	return 0;
}
