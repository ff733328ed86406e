/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * file_access.h - whether a user could read a file the profiler, as root,
 * opened on a target's behalf: a perf map or a debug file found through a
 * path that user controls (a symbolic link to a root-only file must not
 * put its contents in a profile).
 */
#ifndef PROFILER_FILE_ACCESS_H
#define PROFILER_FILE_ACCESS_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Could user @uid, of group @gid, read the file of @st by its mode bits?
 * Its owner could make it readable, root reads anything; supplementary
 * groups are not known here, so a file readable only by one of them is
 * taken as not readable: a perf map or debug file is the user's own, or
 * world-readable.
 */
static inline bool file_readable_by(const struct stat *st, uid_t uid, gid_t gid)
{
	if (uid == 0 || st->st_uid == uid)
		return true;
	if (st->st_gid == gid && (st->st_mode & S_IRGRP))
		return true;
	return st->st_mode & S_IROTH;
}

#endif
