// SPDX-License-Identifier: GPL-2.0-only
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "utf8.h"

void log_write_escaped(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8__char_len(p, SIZE_MAX);

		if (*p == '\\') {
			fputs("\\\\", f);
		} else if (*p == '\n') {
			fputs("\\n", f);
		} else if (*p == '\t' || (*p >= 0x20 && *p < 0x7f)) {
			fputc(*p, f);
		} else if (n > 1 && !(n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		} else {
			fprintf(f, "\\x%02x", *p);
		}
		p++;
	}
}

static void default_print(enum log_level level, const char *fmt, va_list args)
{
	char *msg;

	if (level != LOG_WARN)
		return;
	if (vasprintf(&msg, fmt, args) < 0)
		return;
	log_write_escaped(stderr, msg);
	fputc('\n', stderr);
	free(msg);
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
