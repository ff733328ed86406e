// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "status_line.h"

/* Carriage return, and clear to the end of the line (ECMA-48 EL). */
#define CLEAR_LINE "\r\033[K"

static bool enabled;
static bool shown;

bool status_line__enable(void)
{
	const char *term = getenv("TERM");

	enabled = isatty(STDERR_FILENO) && !(term && !strcmp(term, "dumb"));
	return enabled;
}

/* write() all of @buf, as stderr is unbuffered: one system call in practice. */
static void put(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

void status_line__show(const char *fmt, ...)
{
	char buf[256];
	struct winsize ws;
	size_t len, max;
	va_list ap;
	int n;

	if (!enabled)
		return;
	memcpy(buf, CLEAR_LINE, sizeof(CLEAR_LINE) - 1);
	va_start(ap, fmt);
	n = vsnprintf(buf + sizeof(CLEAR_LINE) - 1, sizeof(buf) - sizeof(CLEAR_LINE) + 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = strlen(buf);
	/*
	 * A line as wide as the terminal wraps (or leaves the cursor past its
	 * end), and "\r" then goes back to the start of the last row only:
	 * keep one column free.
	 */
	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 1) {
		max = sizeof(CLEAR_LINE) - 1 + ws.ws_col - 1;
		if (len > max)
			len = max;
	}
	put(buf, len);
	shown = true;
}

void status_line__clear(void)
{
	if (!shown)
		return;
	put(CLEAR_LINE, sizeof(CLEAR_LINE) - 1);
	shown = false;
}
