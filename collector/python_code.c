// SPDX-License-Identifier: GPL-2.0-only
/*
 * python_code.c - CPython code objects read out of another process, and
 * the line of an instruction by CPython's own line-number algorithms
 * (Objects/codeobject.c of each release, Objects/locations.md for 3.11+).
 *
 * The memory read may be anything: a freed object, another type, a frame
 * torn while the process ran on. So every length is bounded before it is
 * allocated, every string's layout is checked, and the table decoders never
 * read past the table, whatever its bytes. On well-formed tables they give
 * what CPython gives; on others, some line or 0.
 */
#include "python_code.h"

#include "common/remote_mem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PyASCIIObject.length: after ob_refcnt and ob_type in every release. */
#define PY_UNICODE_LENGTH 16

/* PyASCIIObject.state's bits: interned:2, kind:3, compact:1, ascii:1. */
#define PY_STATE_KIND(s) (((s) >> 2) & 7)
#define PY_STATE_COMPACT(s) (((s) >> 5) & 1)
#define PY_STATE_ASCII(s) (((s) >> 6) & 1)

/* Append code point @c to @out as UTF-8; how many bytes (1 to 4). */
static size_t put_utf8(char *out, uint32_t c)
{
	if (c < 0x80) {
		out[0] = c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = 0xc0 | c >> 6;
		out[1] = 0x80 | (c & 0x3f);
		return 2;
	}
	if (c < 0x10000) {
		out[0] = 0xe0 | c >> 12;
		out[1] = 0x80 | (c >> 6 & 0x3f);
		out[2] = 0x80 | (c & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | c >> 18;
	out[1] = 0x80 | (c >> 12 & 0x3f);
	out[2] = 0x80 | (c >> 6 & 0x3f);
	out[3] = 0x80 | (c & 0x3f);
	return 4;
}

/*
 * The str object at @addr as a NUL-terminated UTF-8 string, in *@out
 * (malloc'ed). Only compact strings, which every name and file name of a
 * code object is (they are made by the compiler or unmarshalled, never
 * legacy PyUnicode_FromUnicode strings). A NUL character, which no name
 * or path holds, or a code point past U+10FFFF is -EINVAL: garbage. A
 * lone surrogate (a file name decoded with surrogateescape) becomes
 * U+FFFD, so that the result is valid UTF-8.
 */
static int read_unicode(pid_t pid, const struct python_offsets *off, uint64_t addr, char **out)
{
	uint32_t state, kind;
	uint64_t data;
	int64_t length;
	uint8_t *raw;
	char *s, *p;
	int err;

	*out = NULL;
	err = remote_read(pid, addr + PY_UNICODE_LENGTH, &length, sizeof(length));
	if (err)
		return err;
	err = remote_read(pid, addr + off->unicode_state, &state, sizeof(state));
	if (err)
		return err;
	if (length < 0 || length > PY_CODE_MAX_STRING || !PY_STATE_COMPACT(state))
		return -EINVAL;
	kind = PY_STATE_KIND(state);
	if (kind != 1 && kind != 2 && kind != 4)
		return -EINVAL;
	/* An ASCII string is one byte a character, or it is not one. */
	if (PY_STATE_ASCII(state) && kind != 1)
		return -EINVAL;
	data = addr + (PY_STATE_ASCII(state) ? off->unicode_ascii : off->unicode_compact);

	raw = malloc(length * kind + 1);
	s = malloc(length * 4 + 1);
	if (!raw || !s) {
		err = -ENOMEM;
		goto out_free;
	}
	err = remote_read(pid, data, raw, length * kind);
	if (err)
		goto out_free;
	p = s;
	for (int64_t i = 0; i < length; i++) {
		uint32_t c;

		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, raw + 2 * i, 2);
			c = u;
		} else {
			memcpy(&c, raw + 4 * i, 4);
		}
		if (!c || c > 0x10ffff || (PY_STATE_ASCII(state) && c >= 0x80)) {
			err = -EINVAL;
			goto out_free;
		}
		if (c >= 0xd800 && c <= 0xdfff)
			c = 0xfffd;
		p += put_utf8(p, c);
	}
	*p = '\0';
	free(raw);
	*out = s;
	return 0;

out_free:
	free(raw);
	free(s);
	return err;
}

/* The bytes object at @addr: its contents in *@out (malloc'ed), their size in *@len. */
static int read_bytes(pid_t pid, const struct python_offsets *off, uint64_t addr, uint8_t **out,
		      size_t *len)
{
	int64_t size;
	uint8_t *buf;
	int err;

	*out = NULL;
	*len = 0;
	err = remote_read(pid, addr + off->bytes_size, &size, sizeof(size));
	if (err)
		return err;
	if (size < 0 || size > PY_CODE_MAX_LINETABLE)
		return -EINVAL;
	buf = malloc(size ? size : 1);
	if (!buf)
		return -ENOMEM;
	err = remote_read(pid, addr + off->bytes_data, buf, size);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = size;
	return 0;
}

int py_code__read(pid_t pid, const struct python_offsets *off, uint64_t addr, struct py_code *code)
{
	uint16_t name = off->code_qualname != PY_NO_FIELD ? off->code_qualname : off->code_name;
	uint64_t filename, qualname, linetable;
	int err;

	memset(code, 0, sizeof(*code));
	err = remote_read(pid, addr + off->code_firstlineno, &code->firstlineno,
			  sizeof(code->firstlineno));
	if (!err)
		err = remote_read_u64(pid, addr + off->code_filename, &filename);
	if (!err)
		err = remote_read_u64(pid, addr + name, &qualname);
	if (!err)
		err = remote_read_u64(pid, addr + off->code_linetable, &linetable);
	if (!err)
		err = read_unicode(pid, off, qualname, &code->qualname);
	if (!err)
		err = read_unicode(pid, off, filename, &code->filename);
	if (!err)
		err = read_bytes(pid, off, linetable, &code->linetable, &code->linetable_len);
	if (err)
		py_code__release(code);
	return err;
}

void py_code__release(struct py_code *code)
{
	free(code->qualname);
	free(code->filename);
	free(code->linetable);
	memset(code, 0, sizeof(*code));
}

int64_t py_code__offset(const struct python_offsets *off, uint64_t code_addr, uint64_t instr)
{
	instr &= (1ULL << PY_FRAME_LINE_SHIFT) - 1;
	code_addr &= ~PY_FRAME_ENTRY;
	/* 3.10's f_lasti: an int, 2-byte code units, -1 before the first. */
	if (off->code_adaptive == PY_NO_FIELD)
		return (int64_t)(int32_t)(uint32_t)instr * 2;
	/* 3.11+: a pointer into co_code_adaptive; before the first, one unit before it. */
	return (int64_t)(instr - (code_addr + off->code_adaptive));
}

/* A line as the API returns it: none (CPython's -1) and what no line is are 0. */
static uint32_t line_result(int64_t line)
{
	return line > 0 && line <= INT32_MAX ? (uint32_t)line : 0;
}

/*
 * 3.10 (PyCode_Addr2Line() by _PyCode_CheckLineNumber() and
 * PyLineTable_NextAddressRange()): pairs of (byte length, line delta), the
 * delta -128 for no line. Ranges of length 0 only carry deltas past +-127
 * on to the next; CPython asserts the table does not end in one, we stop.
 */
uint32_t py_linetable_310(const uint8_t *table, size_t len, int32_t firstlineno, int64_t offset)
{
	int64_t start = -1, end = 0, computed = firstlineno, line = -1;
	size_t i = 0;

	if (offset < 0)
		return line_result(firstlineno);
	while (end <= offset) {
		do {
			int8_t ldelta;

			if (len - i < 2)
				return 0;
			start = end;
			end += table[i];
			ldelta = (int8_t)table[i + 1];
			i += 2;
			if (ldelta == -128) {
				line = -1;
			} else {
				computed += ldelta;
				line = computed;
			}
		} while (start == end);
	}
	return line_result(line);
}

/*
 * A location table's varint at @table[*@i]: 6-bit chunks, least
 * significant first, bit 6 set on all but the last. CPython reads on
 * without a bound; we stop at the table's end, and ignore chunks past 32
 * bits (a real line delta is an int).
 */
static uint32_t locations_varint(const uint8_t *table, size_t len, size_t i)
{
	uint32_t val = 0;
	unsigned int shift = 0;

	while (i < len) {
		uint8_t b = table[i++];

		if (shift < 32)
			val |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return val;
}

/* The line delta of the entry whose first byte is @table[@i] (CPython's get_line_delta()). */
static int64_t locations_line_delta(const uint8_t *table, size_t len, size_t i)
{
	unsigned int code = table[i] >> 3 & 15;
	uint32_t uval;

	switch (code) {
	case 10: /* one-line forms: the line delta is the code - 10 */
	case 11:
	case 12:
		return code - 10;
	case 13: /* no columns */
	case 14: /* long form: line delta, then end line delta and columns */
		uval = locations_varint(table, len, i + 1);
		return uval & 1 ? -(int64_t)(uval >> 1) : (int64_t)(uval >> 1);
	default: /* 0-9 short forms: the same line; 15: no location */
		return 0;
	}
}

/*
 * 3.11+ (PyCode_Addr2Line() by _PyCode_CheckLineNumber() and its
 * advance()): each entry covers (bits 0-2) + 1 code units. An entry whose
 * first byte is 0xf8-0xff has no line; every other moves the line by its
 * delta. An entry runs to the next byte with bit 7 set.
 */
uint32_t py_locations(const uint8_t *table, size_t len, int32_t firstlineno, int64_t offset)
{
	int64_t end = 0, computed = firstlineno, line = -1;
	size_t i = 0;

	if (offset < 0)
		return line_result(firstlineno);
	while (end <= offset) {
		if (i >= len)
			return 0;
		computed += locations_line_delta(table, len, i);
		line = table[i] >> 3 == 0x1f ? -1 : computed;
		end += ((table[i] & 7) + 1) * 2;
		do
			i++;
		while (i < len && !(table[i] & 128));
	}
	return line_result(line);
}

uint32_t py_code__line(const struct python_offsets *off, const struct py_code *code, int64_t offset)
{
	if (off->version < 0x030b)
		return py_linetable_310(code->linetable, code->linetable_len, code->firstlineno,
					offset);
	return py_locations(code->linetable, code->linetable_len, code->firstlineno, offset);
}
