/* SPDX-License-Identifier: GPL-2.0-only */
/* hex.h - reading hex digits, for the parsers of text files that give addresses in hex. */
#ifndef PROFILER_HEX_H
#define PROFILER_HEX_H

/* The value of the hex digit @c (either case), or -1 when @c is not one. */
static inline int hex__digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
