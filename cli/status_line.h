/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * status_line.h - one line on stderr rewritten in place, while recording.
 *
 * The line is drawn as "\r", the text and clear-to-end-of-line, with the
 * cursor left after it, and is cleared the same way before anything else is
 * printed: main()'s log callback calls status_line__clear() before every
 * message, so a warning never lands in the middle of the line, and the next
 * status_line__show() draws it again below. Nothing is ever drawn until
 * status_line__enable() found stderr to be a terminal.
 *
 * One line per process, not thread-safe: call from the thread that logs.
 */
#ifndef PROFILER_STATUS_LINE_H
#define PROFILER_STATUS_LINE_H

#include <stdbool.h>

/*
 * Allow the line if stderr is a terminal that understands clear-to-end-of-
 * line (not TERM=dumb). Returns whether it is allowed.
 */
bool status_line__enable(void);

/* Draw @fmt in place of the line there is, cut to the terminal's width. */
void status_line__show(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Erase the line, if one is drawn, leaving the cursor at the start of it. */
void status_line__clear(void);

#endif
