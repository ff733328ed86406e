/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * privileges.h - who the profiler acts for, and what it keeps of root.
 *
 * The profiler runs as root (or with CAP_BPF + CAP_PERFMON) beside programs
 * it does not trust, and reads files they control. Two things limit what a
 * mistake or a hostile target can make of that:
 *
 *  - Under sudo, the command it starts runs as the user who ran sudo
 *    (SUDO_UID, SUDO_GID, and that user's groups from the group database,
 *    as a login would give them), and the profiles it writes belong to
 *    that user.
 *  - Once sampling is attached it keeps only the capabilities it still
 *    needs (privileges__drop()), and can never regain the others: not by
 *    exec (no new privileges, no root fix-ups), not from the bounding set.
 *
 * Not thread-safe: call these before any thread starts.
 */
#ifndef PROFILER_PRIVILEGES_H
#define PROFILER_PRIVILEGES_H

#include <stdbool.h>
#include <sys/types.h>

#define INVOKER_MAX_GROUPS 256

/* The user who ran `sudo profiler ...`. */
struct invoker {
	uid_t uid;
	gid_t gid;
	gid_t groups[INVOKER_MAX_GROUPS]; /* supplementary groups, @gid among them */
	int nr_groups;
	char name[64]; /* "" when the uid has no passwd entry */
	char home[256];
};

/*
 * Fill @u from SUDO_UID and SUDO_GID when we run as root under sudo for
 * another user. 0, or -ENOENT when not (not root, not sudo, or sudo for
 * root itself), or -EINVAL when the variables are malformed.
 */
int invoker__from_sudo(struct invoker *u);

/*
 * Become @u: supplementary groups, group, then user, and HOME, USER and
 * LOGNAME as a login would set them. For a forked child about to exec.
 * 0 or -errno; on failure the process may be half changed: do not exec.
 */
int invoker__become(const struct invoker *u);

/*
 * Run @fn(@arg) in a forked child that is @u and nothing more: @u's ids
 * and groups, no capability left, so the kernel checks what it does with
 * files as it would for @u (how outputs are written under sudo: a file @u
 * could not create or replace is refused, as it would be to her). The
 * child shares nothing written back: @fn's return (0 or -errno) comes back
 * as its exit status. Needs CAP_SETUID and CAP_SETGID. 0 or -errno: -EINTR
 * when the child was killed by a signal.
 */
int invoker__run(const struct invoker *u, int (*fn)(void *arg), void *arg);

/* What the profiler still does after attaching, which decides what it keeps. */
struct privilege_needs {
	bool setid;  /* write outputs as another user (CAP_SETUID, CAP_SETGID): invoker__run() */
	bool kill;   /* signal a command that runs as another user (CAP_KILL) */
	bool attach; /* attach uprobes to processes found later (CAP_SYS_ADMIN) */
};

/*
 * Keep only the capabilities that the rest of a run needs (see privileges.c
 * for the list and why), in the permitted, effective and bounding sets; set
 * no-new-privileges, and, when allowed, the securebits that stop an exec
 * from giving root its capabilities back. Capabilities we do not have stay
 * absent. 0 or -errno.
 */
int privileges__drop(const struct privilege_needs *needs);

#endif
