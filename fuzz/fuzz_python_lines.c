// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPython line tables, as a code object read from another process may hold
 * anything, through both decoders of collector/python_code: 3.10's
 * co_linetable (py_linetable_310()) and 3.11+'s location table
 * (py_locations()). Input: co_firstlineno (4 bytes, little-endian), then
 * the table. Each decoder's answer at every offset is compared with the
 * ranges the table describes, walked once here from the formats' rules
 * (as CPython's co_lines() walks them); a negative offset gives the first line, an
 * offset past the last range 0.
 */
#include "collector/python_code.h"
#include "fuzz.h"

static uint32_t pylines_fuzz_clamp(int64_t line)
{
	return line > 0 && line <= INT32_MAX ? (uint32_t)line : 0;
}

/*
 * [@start, @end) has line @line (-1: none) by @decode: its ends and its
 * middle, not every offset, since each answer walks the table again.
 */
static void pylines_fuzz_range(uint32_t (*decode)(const uint8_t *, size_t, int32_t, int64_t),
			       const uint8_t *table, size_t len, int32_t first, int64_t start,
			       int64_t end, int64_t line)
{
	int64_t offs[] = { start, start + 1, start + (end - start) / 2, end - 1 };

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (offs[i] >= start && offs[i] < end)
			FUZZ_CHECK(decode(table, len, first, offs[i]) == pylines_fuzz_clamp(line));
}

static void pylines_fuzz_310(const uint8_t *table, size_t len, int32_t first)
{
	int64_t end = 0, computed = first, line = -1;

	for (size_t i = 0; i + 2 <= len; i += 2) {
		int64_t start = end;

		end += table[i];
		if ((int8_t)table[i + 1] == -128) {
			line = -1;
		} else {
			computed += (int8_t)table[i + 1];
			line = computed;
		}
		pylines_fuzz_range(py_linetable_310, table, len, first, start, end, line);
	}
	FUZZ_CHECK(py_linetable_310(table, len, first, end) == 0);
}

static void pylines_fuzz_locations(const uint8_t *table, size_t len, int32_t first)
{
	int64_t end = 0, computed = first;

	for (size_t i = 0; i < len;) {
		unsigned int code = table[i] >> 3 & 15;
		int64_t start = end, line;
		size_t next = i + 1;

		while (next < len && !(table[next] & 0x80))
			next++;
		if (code >= 10 && code <= 12) {
			computed += code - 10;
		} else if (code == 13 || code == 14) {
			/* A signed varint: 6 bits a byte, 0x40 to go on, the sign in bit 0. */
			uint32_t v = 0;

			for (size_t j = i + 1, shift = 0; j < len; j++, shift += 6) {
				if (shift < 32)
					v |= (uint32_t)(table[j] & 0x3f) << shift;
				if (!(table[j] & 0x40))
					break;
			}
			computed += v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		}
		line = table[i] >= 0xf8 ? -1 : computed;
		end += ((table[i] & 7) + 1) * 2;
		pylines_fuzz_range(py_locations, table, len, first, start, end, line);
		i = next;
	}
	FUZZ_CHECK(py_locations(table, len, first, end) == 0);
}

static int fuzz_python_lines(const uint8_t *data, size_t size)
{
	uint8_t *table;
	int32_t first;
	size_t len;

	fuzz_log_init();
	if (size < 4)
		return 0;
	first = (int32_t)((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
			  (uint32_t)data[3] << 24);
	len = size - 4;
	/* A buffer of exactly the table's size, so that a read past it is seen. */
	table = malloc(len ? len : 1);
	if (!table)
		return 0;
	memcpy(table, data + 4, len);
	FUZZ_CHECK(py_linetable_310(table, len, first, -2) == pylines_fuzz_clamp(first));
	FUZZ_CHECK(py_locations(table, len, first, -1) == pylines_fuzz_clamp(first));
	pylines_fuzz_310(table, len, first);
	pylines_fuzz_locations(table, len, first);
	FUZZ_CHECK(py_linetable_310(table, len, first, INT64_MAX) == 0);
	FUZZ_CHECK(py_locations(table, len, first, INT64_MAX) == 0);
	free(table);
	return 0;
}

FUZZ_TARGET(fuzz_python_lines)
