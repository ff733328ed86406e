/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * privilege.h - why the kernel refused the BPF program or a perf event, in
 * words a user can act on.
 */
#ifndef PROFILER_PRIVILEGE_H
#define PROFILER_PRIVILEGE_H

/*
 * The kernel said no to @what with @err (EPERM, EACCES) for want of
 * privilege: say what this process lacks and what to do, the sysctls that
 * decided it as facts (lowering them is not the way: they guard every
 * program on the machine), or that a container's capabilities do not count.
 */
void privilege__warn(const char *what, int err);

#endif
