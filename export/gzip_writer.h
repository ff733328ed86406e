/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gzip_writer.h - compress a byte stream into a gzip file, as the pprof and
 * Firefox writers' .gz outputs want it: zlib's deflate with a gzip wrapper
 * whose header is fixed (no name, no time, "Unix" as the OS whatever the
 * host), so the same bytes in always give the same file.
 *
 * The writer owns its zlib stream and output buffer, not @out, which it
 * neither flushes nor closes: with a buffered stream, a write error may only
 * show at the caller's fflush() or fclose(). Functions return 0 or a
 * negative errno (-EIO or the stdio errno when @out fails) and log only
 * unexpected zlib failures. Not thread-safe.
 */
#ifndef PROFILER_EXPORT_GZIP_WRITER_H
#define PROFILER_EXPORT_GZIP_WRITER_H

#include <stddef.h>
#include <stdio.h>

struct gzip_writer;

/*
 * A writer of a gzip stream to @out at compression @level (1 to 9). NULL
 * and errno (ENOMEM, or EINVAL when zlib refuses) on failure.
 */
struct gzip_writer *gzip_writer__new(FILE *out, int level);

/* Compress @len bytes at @data, writing to @out what deflate gives out. */
int gzip_writer__write(struct gzip_writer *gz, const void *data, size_t len);

/* Compress what is left, and end the stream. Nothing may be written after. */
int gzip_writer__finish(struct gzip_writer *gz);

void gzip_writer__free(struct gzip_writer *gz);

#endif
