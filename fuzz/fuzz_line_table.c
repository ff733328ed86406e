// SPDX-License-Identifier: GPL-2.0-only
/*
 * DWARF line programs through our decoder (line_table__read()), straight
 * from bytes. The input is cut into sections (fuzz.h): .debug_line_str,
 * .debug_str, then .debug_line. Flags: bit 0 big-endian, bit 1 a
 * compilation directory; the program is read at offset 0 and, with bit 2,
 * again at the offset of the unit after it, as a file with several units
 * has them. The table must come out sorted, each row's file one of the
 * unit's files (or NULL, or "??"), and every string readable.
 */
#include <errno.h>

#include "fuzz.h"
#include "symbolize/line_table.h"

enum {
	LINE_FUZZ_BIG_ENDIAN = 1 << 0,
	LINE_FUZZ_COMP_DIR = 1 << 1,
	LINE_FUZZ_NEXT_UNIT = 1 << 2,
};

static void line_fuzz_check(const struct line_table *t)
{
	for (size_t i = 0; i < t->nr_files; i++)
		if (t->files[i])
			FUZZ_CHECK(strlen(t->files[i]) < SIZE_MAX);
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct line_row *row = &t->rows[i];

		FUZZ_CHECK(!i || t->rows[i - 1].addr <= row->addr);
		if (row->file)
			FUZZ_CHECK(strlen(row->file) < SIZE_MAX);
	}
}

/* The offset of the unit after the one at 0, from its initial length. */
static uint64_t line_fuzz_next_unit(const struct fuzz_sections *s, const uint8_t *line, size_t size)
{
	uint64_t len = 0;

	if (size < 4)
		return 0;
	for (int i = 0; i < 4; i++)
		len |= (uint64_t)line[s->flags & LINE_FUZZ_BIG_ENDIAN ? i : 3 - i] << (24 - 8 * i);
	return len < 0xfffffff0 ? 4 + len : 0;
}

static int fuzz_line_table(const uint8_t *data, size_t size)
{
	struct fuzz_sections s;
	struct line_sections ls;
	struct line_table t;
	const char *comp_dir;
	uint64_t next;

	if (fuzz_sections__split(&s, data, size, 3))
		return 0;
	ls = (struct line_sections){
		.line_str = s.data[0],
		.line_str_size = s.size[0],
		.str = s.data[1],
		.str_size = s.size[1],
		.line = s.data[2],
		.line_size = s.size[2],
		.big_endian = s.flags & LINE_FUZZ_BIG_ENDIAN,
	};
	comp_dir = s.flags & LINE_FUZZ_COMP_DIR ? "/comp/dir" : NULL;
	if (!line_table__read(&t, &ls, 0, comp_dir))
		line_fuzz_check(&t);
	line_table__release(&t);
	next = line_fuzz_next_unit(&s, ls.line, ls.line_size);
	if (s.flags & LINE_FUZZ_NEXT_UNIT && next) {
		if (!line_table__read(&t, &ls, next, comp_dir))
			line_fuzz_check(&t);
		line_table__release(&t);
	}
	fuzz_sections__release(&s);
	return 0;
}

FUZZ_TARGET(fuzz_line_table)
