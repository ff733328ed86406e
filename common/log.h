/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log.h - the one place library code reports to.
 *
 * Library code (collector/, symbolize/, export/, common/) never prints. It
 * calls pr_warn()/pr_info()/pr_debug(), which forward to the callback that
 * main() installs with log_set_print(), in the shape of libbpf_set_print().
 * Without a callback, warnings go to stderr and the rest is dropped.
 *
 * Messages are lowercase, name their subject in quotes and put the cause
 * last, with no trailing newline: the callback adds it.
 */
#ifndef PROFILER_LOG_H
#define PROFILER_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

enum log_level {
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

typedef void (*log_print_fn)(enum log_level level, const char *fmt, va_list args);

/* Install @fn as the sink for every message; returns the previous one. */
log_print_fn log_set_print(log_print_fn fn);

void log_printf(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Write message @s to @f as a terminal should get it: a message may quote
 * what a target wrote (a JVM's answer, a file name, a perf map's line),
 * and those bytes must not drive root's terminal. Printable ASCII, tabs
 * and well-formed UTF-8 go as they are; control characters, DEL, C1
 * controls (U+0080 to U+009F, which some terminals obey) and malformed
 * UTF-8 go as \xNN, a newline as \n (one message, one line), and a
 * backslash as \\ so that what is escaped can be told apart.
 */
void log_write_escaped(FILE *f, const char *s);

#define pr_warn(fmt, ...) log_printf(LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) log_printf(LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log_printf(LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif
