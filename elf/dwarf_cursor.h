/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dwarf_cursor.h - bounds-checked reads of DWARF data: fixed-size integers
 * in the file's byte order, LEB128 numbers and strings. A read past the end
 * gives 0 (or NULL), moves the cursor to the end and sets @bad, so a parser
 * can read on and check once.
 */
#ifndef PROFILER_DWARF_CURSOR_H
#define PROFILER_DWARF_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cursor {
	const uint8_t *p, *end;
	bool big_endian;
	bool bad;
};

static inline void cursor__fail(struct cursor *c)
{
	c->bad = true;
	c->p = c->end;
}

/* An unsigned integer of @n bytes (at most 8). */
static inline uint64_t cursor__u(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		cursor__fail(c);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[c->big_endian ? i : n - 1 - i] << (8 * (n - 1 - i));
	c->p += n;
	return v;
}

/*
 * A LEB128's value bits, low first, into *@v; returns how many bits it had
 * (0 when it ran off the end, failing @c) and its last byte in *@last.
 */
static inline unsigned int cursor__leb(struct cursor *c, uint64_t *v, uint8_t *last)
{
	unsigned int shift = 0;

	*v = 0;
	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*last = b;
			return shift;
		}
	}
	cursor__fail(c);
	*v = 0;
	return 0;
}

static inline uint64_t cursor__uleb(struct cursor *c)
{
	uint64_t v;
	uint8_t last;

	cursor__leb(c, &v, &last);
	return v;
}

static inline int64_t cursor__sleb(struct cursor *c)
{
	uint64_t v;
	uint8_t last;
	unsigned int shift = cursor__leb(c, &v, &last);

	/* Sign-extend from the last byte's top value bit. */
	if (shift && shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

static inline void cursor__skip(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		cursor__fail(c);
	else
		c->p += n;
}

/* A NUL-terminated string at the cursor, or NULL. */
static inline const char *cursor__str(struct cursor *c)
{
	const uint8_t *nul = memchr(c->p, 0, c->end - c->p);
	const char *s = (const char *)c->p;

	if (!nul) {
		cursor__fail(c);
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/*
 * A unit header's initial length: 4 bytes, or 0xffffffff and 8 for the
 * 64-bit format, whose offsets are 8 bytes (@offset_size). Ends the cursor
 * at the unit's end. Returns 0, or -1 when the length does not fit.
 */
static inline int cursor__unit(struct cursor *c, uint8_t *offset_size)
{
	uint64_t length = cursor__u(c, 4);

	*offset_size = 4;
	if (length == 0xffffffff) {
		*offset_size = 8;
		length = cursor__u(c, 8);
	} else if (length >= 0xfffffff0) {
		return -1;
	}
	if (c->bad || length > (uint64_t)(c->end - c->p))
		return -1;
	c->end = c->p + length;
	return 0;
}

#endif
