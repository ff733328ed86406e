/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * output.h - output files that appear whole or not at all.
 *
 * Data is written to a temporary file in the destination's directory and
 * renamed over the destination on commit, so a reader never sees a partial
 * profile and a failed run leaves no file behind. The path "-" is stdout. A
 * destination that exists and is not a regular file (a FIFO, a terminal,
 * /dev/null, perhaps through a link such as /dev/stdout) is written as it
 * is: there is nothing to rename, and replacing it would break it.
 *
 * A symbolic link that another user planted in a sticky, world-writable
 * directory (/tmp), as the path or as its directory, is never followed:
 * output_file__check() and output_file__open() return -ELOOP for it.
 *
 * Several outputs commit together in two steps: output_file__close() on
 * each (where a full disk shows), then output_file__commit_all() (the
 * renames), so a failure to write one leaves every destination as it was.
 */
#ifndef PROFILER_OUTPUT_H
#define PROFILER_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct output_file {
	const char *path; /* destination, or "-" */
	char *tmp_path;	  /* owned; NULL for stdout and destinations written as they are */
	FILE *fp;	  /* NULL once closed */
	bool direct;	  /* writing to the destination itself, not stdout */
};

/*
 * Can @path be written? Checked before profiling starts so a bad path fails
 * at once: the directory must exist and be writable and @path must not be
 * a directory. 0 or -errno.
 */
int output_file__check(const char *path);

/* Open a temporary file beside @path (or stdout, or @path itself as above). 0 or -errno. */
int output_file__open(struct output_file *out, const char *path);

/*
 * Give the new file to @uid:@gid (for the user who ran sudo). Nothing to do
 * for stdout and destinations written as they are. 0 or -errno.
 */
int output_file__chown(struct output_file *out, uid_t uid, gid_t gid);

/* Flush and close, and make the data durable; nothing is renamed yet. 0 or -errno. */
int output_file__close(struct output_file *out);

/*
 * Close (if output_file__close() was not called) and rename into place.
 * On failure the temporary file is removed. 0 or -errno.
 */
int output_file__commit(struct output_file *out);

/* Close and remove the temporary file. Safe after a failed commit or open. */
void output_file__abort(struct output_file *out);

/*
 * The second step for @nr outputs (opened, written, and closed or not):
 * rename each into place, in order, and after a failure abort the rest, so
 * only a rename failing midway leaves some renamed. 0, or the first
 * failure's -errno with *@failed set to the index of that output.
 */
int output_file__commit_all(struct output_file *out, size_t nr, size_t *failed);

#endif
