/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json_string.h - the one JSON string escaper of the exporters that write
 * JSON (Firefox's processed format, DHAT's), for names found in binaries,
 * perf maps and command lines, which may hold any bytes.
 *
 * The escaped text goes out through a callback, so that each writer keeps
 * its own buffering (Firefox's goes through a gzip stream, DHAT's to a
 * FILE). Runs of characters that need no escape are handed over whole.
 * Stateless and thread-safe.
 */
#ifndef PROFILER_EXPORT_JSON_STRING_H
#define PROFILER_EXPORT_JSON_STRING_H

#include <stddef.h>

/* Append @len bytes at @data to what @ctx writes. */
typedef void (*json_put_fn)(void *ctx, const void *data, size_t len);

/*
 * Put the NUL-terminated @s, escaped for the inside of a JSON string (the
 * quotes around it are the caller's), through @put: '"' and '\\' get a
 * backslash, control characters below 0x20 become \u00XX, well-formed UTF-8
 * is kept as it is (common/utf8.h), and each byte of anything else becomes
 * U+FFFD, so the result is always valid UTF-8 that any JSON parser takes.
 */
void json_string__escape(const char *s, json_put_fn put, void *ctx);

#endif
