/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * output.h - output files that appear whole or not at all.
 *
 * Data is written to a temporary file in the destination's directory and
 * renamed over the destination on commit, so a reader never sees a partial
 * profile and a failed run leaves no file behind. The path "-" is stdout.
 */
#ifndef PROFILER_OUTPUT_H
#define PROFILER_OUTPUT_H

#include <stdio.h>

struct output_file {
	const char *path; /* destination, or "-" */
	char *tmp_path;	  /* owned; NULL for stdout */
	FILE *fp;
};

/*
 * Can @path be written? Checked before profiling starts so a bad path fails
 * at once: the directory must exist and be writable and @path must not be
 * a directory. 0 or -errno.
 */
int output_file__check(const char *path);

/* Open a temporary file beside @path (or stdout). 0 or -errno. */
int output_file__open(struct output_file *out, const char *path);

/* Flush, close and rename into place. On failure the temporary file is removed. 0 or -errno. */
int output_file__commit(struct output_file *out);

/* Close and remove the temporary file. Safe after a failed commit or open. */
void output_file__abort(struct output_file *out);

#endif
