/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * procfs.h - reading files under /proc, which report no size and may be
 * read in pieces.
 */
#ifndef PROFILER_PROCFS_H
#define PROFILER_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

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

/*
 * A process's command line is shown shortened to this many bytes: enough
 * for "postgres: alice sales [local] SELECT" or a JVM's main class, short
 * enough for a root frame or a label.
 */
#define PROCFS_CMDLINE_MAX 200

/*
 * Format the @len bytes of a /proc/PID/cmdline (arguments each ended by a
 * NUL; a program that rewrote its title may pad it with NULs) for display,
 * into @out (room for @size > 0 bytes, NUL-terminated): trailing NULs and
 * spaces dropped, the other NULs, between arguments, made spaces, control bytes
 * and bytes that are not UTF-8 written as \xNN, valid UTF-8 kept. At most
 * min(@size - 1, PROCFS_CMDLINE_MAX) bytes: a longer line is cut between
 * characters and ends in "...". Returns its length: 0 for an empty command
 * line (a kernel thread, a zombie).
 */
size_t procfs__format_cmdline(const char *raw, size_t len, char *out, size_t size);

/*
 * The command line of process @pid, formatted by procfs__format_cmdline()
 * into @out: its length (0: empty), or a negative errno (-ENOENT: no such
 * process). Reads at most the first 4 KiB of it.
 */
ssize_t procfs__read_cmdline(pid_t pid, char *out, size_t size);

/*
 * The cgroup v2 path in @text, the contents of a /proc/PID/cgroup ("0::/PATH"
 * among v1 lines), into @out (room for @size > 0 bytes, NUL-terminated, cut
 * to fit): its length, or 0 when there is none (cgroup v1 only).
 */
size_t procfs__parse_cgroup(const char *text, char *out, size_t size);
/* The cgroup v2 path of process @pid: its length (0: none), or a negative errno. */
ssize_t procfs__read_cgroup(pid_t pid, char *out, size_t size);

#endif
