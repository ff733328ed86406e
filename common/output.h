/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * output.h - output files that appear whole or not at all.
 *
 * Data is written to a temporary file in the destination's directory and
 * renamed over the destination on commit, so a reader never sees a partial
 * profile and a failed run leaves no file behind. The file has no name
 * while it is written (O_TMPFILE, where the file system has it): it gets a
 * temporary one when closed, for the rename, so a profiler killed while
 * writing (SIGKILL) leaves nothing either. The path "-" is stdout. A
 * destination that exists and is not a regular file (a FIFO, a terminal,
 * /dev/null, perhaps through a link such as /dev/stdout) is written as it
 * is: there is nothing to rename, and replacing it would break it.
 *
 * A FIFO is opened without waiting for a reader: with none, -ENXIO at
 * once, rather than a profiler that hangs. With OUTPUT_REGULAR_ONLY (the
 * outputs of `sudo profiler`) only a regular file, or nothing, may be at
 * the path: anything else is -EINVAL.
 *
 * A symbolic link that another user planted in a sticky, world-writable
 * directory (/tmp), as the path or as its directory, is never followed:
 * output_file__check() and output_file__open() return -ELOOP for it. In
 * such a directory a file that belongs neither to us nor to the
 * directory's owner is not ours to replace: -EPERM, as rename() would
 * say.
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

/* Flags of output_file__check() and output_file__open(). */
#define OUTPUT_REGULAR_ONLY (1U << 0) /* a FIFO, a device or a socket at the path is -EINVAL */

struct output_file {
	const char *path; /* destination, or "-" */
	char *tmp_path;	  /* owned; NULL for stdout, destinations written as they are and
			     a file with no name yet */
	FILE *fp;	  /* NULL once closed */
	bool direct;	  /* writing to the destination itself, not stdout */
	bool unnamed;	  /* writing to a file with no name yet (O_TMPFILE) */
};

/*
 * Can @path be written? Checked before profiling starts so a bad path fails
 * at once: the directory must exist and be writable and @path must not be
 * a directory (or, with @flags OUTPUT_REGULAR_ONLY, anything but a
 * regular file), nor a file we may not replace. 0 or -errno.
 */
int output_file__check(const char *path, unsigned int flags);

/*
 * Open a temporary file beside @path (or stdout, or @path itself as above),
 * with @flags as output_file__check() has them. 0 or -errno.
 */
int output_file__open(struct output_file *out, const char *path, unsigned int flags);

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
