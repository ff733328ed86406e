/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * utf8.h - the one UTF-8 validator of the profiler, for the exporters that
 * must write valid UTF-8 (JSON, XML) from names found in binaries and perf
 * maps, which may hold any bytes. Inline: it runs once per character.
 */
#ifndef PROFILER_UTF8_H
#define PROFILER_UTF8_H

#include <stddef.h>

/*
 * The length of the well-formed UTF-8 sequence at @s, which has @len (> 0)
 * bytes left, or 0 when it is not one: no overlong forms, surrogates or code
 * points past U+10FFFF (Unicode's table 3-7). An ASCII byte, NUL included,
 * is a sequence of 1. The bytes are read in order and none after the first
 * that does not fit, so a NUL-terminated @s may be given @len SIZE_MAX: its
 * NUL fails the continuation test.
 */
static inline size_t utf8__char_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

#endif
