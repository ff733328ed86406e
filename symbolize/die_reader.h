/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * die_reader.h - the DIEs of one DWARF compilation unit, in order, with
 * only the attributes that place code: pc ranges and inlined call sites.
 *
 * Indexing a unit visits every DIE once. Through libdw (dwarf_child,
 * dwarf_siblingof, dwarf_attr) that cost half of symbolizing 20,000
 * addresses of a C program: each call finds the DIE's abbreviation again
 * under a lock and decodes attributes one by one. This reader parses the
 * unit's abbreviation table once and walks the DIEs linearly, skipping the
 * attributes it does not need by their forms' sizes. Names and range lists
 * are left to libdw, by DIE offset, for the few DIEs that need them.
 *
 * It reads DWARF 2 to 5 compile and partial units in either byte order. A
 * form it does not know, or data that runs past the unit, ends the walk
 * with an error (the caller may have libdw read the unit instead); every
 * read is bounds-checked. Split units (in .dwo files) are not read: their
 * skeleton in the executable says -ENOTSUP, or has no functions (GNU's
 * DWARF 4 extension).
 */
#ifndef PROFILER_DIE_READER_H
#define PROFILER_DIE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct die_sections {
	const uint8_t *info, *abbrev, *addr, *ranges, *rnglists;
	size_t info_size, abbrev_size, addr_size, ranges_size, rnglists_size;
	bool big_endian;
};

struct abbrev;
struct attr_spec;

struct die_reader {
	const struct die_sections *s;
	const uint8_t *p, *end; /* the unit's DIEs still to read */
	uint64_t unit_offset;	/* of the unit header: unit references count from it */
	uint8_t version, addr_size, offset_size;
	uint64_t addr_base;	/* DW_AT_addr_base of the unit, for DW_FORM_addrx */
	uint64_t rnglists_base; /* DW_AT_rnglists_base, for DW_FORM_rnglistx */
	uint64_t base;		/* the unit's DW_AT_low_pc, where its range lists start */
	bool read_unit_die;
	struct abbrev *abbrevs;
	size_t nr_abbrevs;
	struct attr_spec *specs;
	size_t nr_specs;
};

struct die {
	uint64_t offset; /* in .debug_info, as libdw's dwarf_offdie() takes it */
	uint32_t tag;	 /* 0: a null entry, which ends a list of children */
	bool has_children;
	bool has_low_pc, has_high_pc, high_pc_is_offset, has_ranges;
	bool ranges_index; /* @ranges is a DW_FORM_rnglistx index, not an offset */
	uint64_t ranges;
	bool has_call_file;
	uint64_t low_pc, high_pc;
	uint64_t call_file, call_line;
	/*
	 * The DIE that DW_AT_abstract_origin or DW_AT_specification names (the
	 * function's name is there), as a .debug_info offset; 0 for none, or
	 * one in another file (dwz).
	 */
	uint64_t origin;
};

/*
 * Start reading the unit at @offset of .debug_info. Returns 0, -EINVAL
 * when the unit header is broken, -ENOTSUP for a unit this reader does not
 * read (a type or split unit, an unknown version), or -ENOMEM.
 */
int die_reader__init(struct die_reader *r, const struct die_sections *s, uint64_t offset);
void die_reader__release(struct die_reader *r);

/*
 * The next DIE (or null entry) into @die. Returns 1, 0 at the end of the
 * unit, -ENOTSUP at an attribute of a form this reader does not know, or
 * -EINVAL when the data cannot be read on (truncated or corrupt).
 */
int die_reader__next(struct die_reader *r, struct die *die);

/*
 * Call @fn for each range of @die's DW_AT_ranges list (.debug_ranges, or
 * DWARF 5's .debug_rnglists), skipping empty ones and those at address 0
 * (code the linker dropped). Returns how many @fn took, @fn's first error,
 * or -ENOTSUP when this reader cannot read the list (libdw may).
 */
int die_reader__ranges(const struct die_reader *r, const struct die *die,
		       int (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx);

#endif
