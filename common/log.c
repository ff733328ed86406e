// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>

#include "log.h"

static void default_print(enum log_level level, const char *fmt, va_list args)
{
	if (level != LOG_WARN)
		return;
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

static log_print_fn print_fn = default_print;

log_print_fn log_set_print(log_print_fn fn)
{
	log_print_fn old = print_fn;

	print_fn = fn ? fn : default_print;
	return old;
}

void log_printf(enum log_level level, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	print_fn(level, fmt, args);
	va_end(args);
}
