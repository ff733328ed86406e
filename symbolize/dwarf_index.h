/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dwarf_index.h - source lines and inline chains of one ELF file's DWARF.
 *
 * libdw finds the units and resolves names and range lists; the rest is
 * ours. Asking libdw per address is far too slow for a profiler:
 * dwarf_getscopes() walks a whole compilation unit per query, and
 * libdwfl's symbol lookups scan linearly. Instead, per file:
 *
 *  - an address -> compilation unit table, built on first use from every
 *    unit's DW_AT_ranges / low_pc-high_pc (not .debug_aranges, which clang
 *    and Go may omit), sorted, overlaps cut so that a binary search finds
 *    one unit (duplicate template code can leave several claiming a range);
 *  - per unit, built the first time an address falls in it: its line table
 *    as a sorted array (line_table.h decodes the program), and the ranges
 *    of its functions and of the calls inlined into them, one sorted array
 *    per inline depth, so that the chain for an address is one binary
 *    search per depth (die_reader.h reads the DIEs in one pass).
 *
 * Names are looked up when a lookup first needs them and kept per function.
 *
 * A unit the fast DIE reader cannot read (a split DWARF skeleton, whose
 * DIEs are in a .dwo file; a form it does not know; truncated data) is
 * read through libdw instead, which is slower but rare. Units neither can
 * read whole lose functions and inline chains: they are counted
 * (dwarf_index__stats()), and the first of a file is warned about.
 *
 * A lookup reports the chain innermost first, as addr2line -i does: the
 * innermost function with the line at the address, then each caller it was
 * inlined into with the line of that inlined call, ending with the function
 * the address is in.
 *
 * Not thread-safe (units are indexed lazily).
 */
#ifndef PROFILER_DWARF_INDEX_H
#define PROFILER_DWARF_INDEX_H

#include <libelf.h>
#include <stdint.h>

struct dwarf_index;

/* The longest inline chain indexed: calls inlined deeper are left out (real code: far less). */
#define DWARF_INDEX_MAX_DEPTH 64

/* One function of an inline chain, and where in its source it was at the address. */
struct dwarf_loc {
	/*
	 * The function's linker name (DW_AT_linkage_name, through
	 * abstract_origin and specification), else its DW_AT_name; NULL when
	 * the DWARF names none. Not demangled.
	 */
	const char *function;
	const char *file; /* source file as the line table names it, NULL when unknown */
	uint32_t line;	  /* 0 when unknown */
	uint32_t discriminator;
};

/* Why the fast DIE reader could not read a unit. */
enum dwarf_unit_fault {
	DWARF_UNIT_SPLIT,   /* a split DWARF skeleton: the DIEs are in a .dwo file */
	DWARF_UNIT_UNKNOWN, /* a form (or unit type or version) the reader does not know */
	DWARF_UNIT_CORRUPT, /* truncated or corrupt: the reader could not read on */
	NR_DWARF_UNIT_FAULTS,
};

/* What became of the units that lookups needed (units are read when first needed). */
struct dwarf_index_stats {
	uint64_t units;			       /* units read for a lookup */
	uint64_t unread[NR_DWARF_UNIT_FAULTS]; /* ... the fast DIE reader could not read, by why */
	uint64_t by_libdw;		       /* ... of those, read whole by libdw instead */
	uint64_t lost;			       /* ... of those, libdw could not read whole either */
};

struct elf_file;

/*
 * Index the DWARF of @file, through its one libdw handle
 * (elf_file__dwarf(), which other readers of the file share); the index
 * takes a reference to @file, since it points into its sections. @name
 * (copied) names the file in warnings, may be NULL. Returns NULL and sets
 * errno on failure: ENOENT when @file has no DWARF.
 */
struct dwarf_index *dwarf_index__new(struct elf_file *file, const char *name);
void dwarf_index__free(struct dwarf_index *idx);

/*
 * The inline chain at ELF virtual address @vaddr, innermost first, into
 * @locs (at most @max; the outer ones are dropped when deeper). Returns the
 * number of entries: 0 when no unit covers @vaddr. A unit covering @vaddr
 * without a function there gives one entry with a NULL function and the
 * line, if the line table has one.
 */
int dwarf_index__lookup(struct dwarf_index *idx, uint64_t vaddr, struct dwarf_loc *locs, int max);

/* An address range, [lo, hi). */
struct dwarf_span {
	uint64_t lo, hi;
};

/*
 * Where the answers of dwarf_index__lookup() around @vaddr may change, for
 * callers that keep answers by address range (symcache.h). When a unit
 * covers @vaddr: its ranges, as the address -> unit table has them, into
 * @ranges, and into @breaks (unsorted, repeats allowed) the addresses in
 * them where one of its rows begins with another line, or a function or an
 * inlined call begins or ends: from one break to the next, every lookup
 * answers the same. The unit is indexed if it was not. When no unit
 * covers @vaddr: the gap between units that holds it, and no breaks. The
 * arrays are malloc()ed, the caller frees them. Returns 1 (a unit), 0 (a
 * gap), -ENOTSUP for a unit whose answers are not the file's alone or not
 * whole (a split unit, one that could not be read), or -ENOMEM.
 */
int dwarf_index__breaks(struct dwarf_index *idx, uint64_t vaddr, struct dwarf_span **ranges,
			size_t *nr_ranges, uint64_t **breaks, size_t *nr_breaks);

/* Adds @idx's counts to @stats. */
void dwarf_index__add_stats(const struct dwarf_index *idx, struct dwarf_index_stats *stats);

#endif
