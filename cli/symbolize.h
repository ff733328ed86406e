/* SPDX-License-Identifier: GPL-2.0-only */
/* symbolize.h - `profiler symbolize`, the addr2line-compatible subcommand. */
#ifndef PROFILER_CLI_SYMBOLIZE_H
#define PROFILER_CLI_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const char symbolize_usage[];

/* Longer input lines are not addresses; their bytes are skipped, not buffered. */
#define SYMBOLIZE_MAX_LINE 4096

/* Called per input line: its address, or @valid false for a line that is not one. */
typedef int (*symbolize_address_fn)(void *ctx, uint64_t addr, bool valid);

/*
 * Read the lines of @fd until its end, through @buf of @size bytes (more
 * than SYMBOLIZE_MAX_LINE), and call @fn for each, in order: a hex address
 * with or without 0x, blanks (space, tab, CR) around it allowed, or not an
 * address. A line longer than SYMBOLIZE_MAX_LINE is never one, however it
 * was read. stdout is flushed after each read. Returns 0, the first
 * error @fn returned, -EIO when stdout fails, or -errno when reading fails.
 */
int symbolize_read_addresses(int fd, char *buf, size_t size, symbolize_address_fn fn, void *ctx);

/* Run `profiler symbolize` with @argv[0] "symbolize"; returns the exit status. */
int symbolize_main(int argc, char **argv);

#endif
