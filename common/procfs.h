/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * procfs.h - reading files under /proc, which report no size and may be
 * read in pieces.
 */
#ifndef PROFILER_PROCFS_H
#define PROFILER_PROCFS_H

#include <stddef.h>

/*
 * The whole of @path, NUL-terminated, in a buffer the caller frees; its
 * length in *@len if @len is not NULL. NULL with errno on failure.
 */
char *procfs__read_file(const char *path, size_t *len);

/* The integer at the start of @path (a sysctl under /proc/sys), or @def if unreadable. */
long procfs__read_long(const char *path, long def);

/*
 * Open @path (absolute or not) under the directory @root, a process's
 * /proc/PID/root, as if @root were "/": a symbolic link the process
 * planted, absolute or full of "..", resolves inside its root and never
 * reaches a file of ours. Without openat2() (before Linux 5.6, or under a
 * seccomp filter) at least the last component is not followed. @flags as
 * for open(). A descriptor, or a negative errno.
 */
int procfs__open_in_root(int root, const char *path, int flags);

#endif
