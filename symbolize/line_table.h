/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * line_table.h - one compilation unit's DWARF line program, decoded into a
 * sorted array of rows.
 *
 * libdw decodes line programs too (dwarf_getsrclines), but builds a linked
 * list of 48-byte rows with a malloc() each, sorts it, and keeps it as well
 * as our copy: on a 74 MB C++ binary with 20,000 random addresses that was
 * a third of symbolization time and a quarter of its memory. This decoder
 * writes rows straight into the array the lookups search. It reads DWARF 2
 * to 5, either byte order; a program it does not understand (a form it
 * does not know in a DWARF 5 header) fails with -ENOTSUP, so that the
 * caller can have libdw read the file names, and then this decoder the
 * rows (libdw's own rows are sorted row by row, which interleaves
 * overlapping sequences: no clean-up could untangle them again).
 *
 * Every read is bounds-checked: a corrupt program ends the table where it
 * goes wrong, never reads outside its section.
 */
#ifndef PROFILER_LINE_TABLE_H
#define PROFILER_LINE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sections a line program refers to, as the ELF file holds them (decompressed). */
struct line_sections {
	const uint8_t *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
	bool big_endian;
};

struct line_row {
	uint64_t addr;
	const char *file; /* NULL: a sequence ends here, no line from this address on */
	uint32_t line, discriminator;
};

struct line_table {
	struct line_row *rows; /* sorted by address; at one address, program order */
	size_t nr_rows;
	/*
	 * Source paths by the file numbers of this unit (DW_AT_call_file uses
	 * them too): absolute when the unit's directories allow, NULL for a
	 * number that names no file.
	 */
	char **files;
	size_t nr_files;
};

/*
 * Decode the line program at @offset in sections @s, of a unit whose
 * compilation directory is @comp_dir (may be NULL). Returns 0, -ENOMEM, -ENOTSUP (a header this
 * decoder does not read; @t is left empty), or -EINVAL (no program at
 * @offset). A program that goes wrong partway keeps the rows before.
 */
int line_table__read(struct line_table *t, const struct line_sections *s, uint64_t offset,
		     const char *comp_dir);

/*
 * Decode only the rows of the line program at @offset, into @t whose files
 * the caller has set (t->files and t->nr_files, malloc()ed, freed by
 * line_table__release()): for a header whose file table line_table__read()
 * does not read (-ENOTSUP), when someone else (libdw) has read it. The rows
 * are decoded and cleaned up exactly as line_table__read() does. Returns 0,
 * -ENOMEM, -ENOTSUP or -EINVAL as it does; on failure @t has no rows.
 */
int line_table__read_rows(struct line_table *t, const struct line_sections *s, uint64_t offset);
void line_table__release(struct line_table *t);

#endif
