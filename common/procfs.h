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

#endif
