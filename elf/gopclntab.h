/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gopclntab.h - what a Go binary's .gopclntab says about its code: the
 * function at an address, its file and line, and the functions the Go
 * compiler inlined there. Go keeps this table for its own tracebacks, so
 * stripping a binary (-ldflags='-s -w', as Debian does) leaves it: it names
 * Go code where no symbol or DWARF is left.
 *
 * The layouts of Go 1.16-1.17, 1.18-1.19 and 1.20 on are read (their pcHeader
 * magics 0xfffffffa, 0xfffffff0, 0xfffffff1); an older table (Go 1.2-1.15) is
 * refused with -ENOTSUP. Inline trees need the address of the binary's
 * `go:func.*` data from Go 1.18 on, which only its moduledata gives: found
 * by looking in .noptrdata for the structure that points at the table.
 *
 * The table is hostile input: every offset is checked against the sections
 * it points into, a value table stops at its end, an inline chain at
 * GOPCLNTAB_MAX_DEPTH; a corrupt table gives fewer answers, never a read
 * outside the sections or a name that is not the table's. x86-64 (little
 * endian, 8-byte pointers) only.
 */
#ifndef PROFILER_GOPCLNTAB_H
#define PROFILER_GOPCLNTAB_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A part of the file's image: @size bytes at ELF address @addr. */
struct gopclntab_region {
	uint64_t addr;
	const uint8_t *data;
	size_t size;
};

struct gopclntab {
	struct gopclntab_region table; /* .gopclntab */
	struct gopclntab_region
		rodata;	      /* where go:func.* (inline trees) is: .rodata or .data.rel.ro */
	unsigned int version; /* 116, 118 or 120: the first Go release of the layout */
	uint32_t nr_funcs;
	uint64_t text_start; /* what the function table's entries are offsets from (1.18 on) */
	uint64_t gofunc;     /* go:func.*, 0 when not found: no inline trees */
	/* Offsets into .gopclntab of its parts; sizes to the next part or the end. */
	size_t funcnames, cutab, filetab, pctab, functab;
	size_t funcnames_size, cutab_size, filetab_size, pctab_size, functab_size;
	size_t func_entry_size; /* of one function table entry: 8, or 16 before 1.18 */
};

/* The innermost inlined functions kept of one address, its own function included. */
#define GOPCLNTAB_MAX_DEPTH 32

/* One function of an address's inline chain: strings point into the table. */
struct gopclntab_loc {
	const char *name; /* as Go prints it: regexp.(*machine).add */
	const char *file; /* NULL when the table does not say */
	uint32_t line;	  /* 0 when the table does not say */
};

/*
 * Is @elf Go's: a file with a function table, or with the build information
 * Go's linker writes (the table may then be inside .data.rel.ro)? Cheap:
 * section headers only.
 */
bool gopclntab__is_go(Elf *elf);

/*
 * Read the table of ELF file @elf into @t, pointing into @elf's data,
 * which must outlive @t: 0, -ENOENT when the file has no .gopclntab (not
 * Go), -ENOTSUP for a layout not read, -EINVAL when it is corrupt.
 */
int gopclntab__open(struct gopclntab *t, Elf *elf);

/*
 * The same from regions already found: the table and, for inline trees,
 * the data go:func.* is in, where @gofunc (0: unknown) is. For the fuzzer
 * and for callers that have read the sections some other way.
 */
int gopclntab__open_regions(struct gopclntab *t, const struct gopclntab_region *table,
			    const struct gopclntab_region *rodata, uint64_t gofunc);

/*
 * The function holding ELF address @pc: its index into *@func and its
 * extent into [@lo, @hi). 0, or -ENOENT when no function does.
 */
int gopclntab__find(const struct gopclntab *t, uint64_t pc, uint32_t *func, uint64_t *lo,
		    uint64_t *hi);

/* The code the table covers, [@lo, @hi): 0, or -ENOENT when it has no functions. */
int gopclntab__text(const struct gopclntab *t, uint64_t *lo, uint64_t *hi);

/* funcFlag_SPWRITE (Go 1.17 on): the function writes the stack pointer as pcsp does not say. */
#define GOPCLNTAB_FLAG_SPWRITE 2

/* What the unwinder needs of function @func (0 to nr_funcs - 1). */
struct gopclntab_func {
	uint64_t lo, hi;
	uint8_t flags; /* GOPCLNTAB_FLAG_*; 0 before Go 1.17 */
};

int gopclntab__func(const struct gopclntab *t, uint32_t func, struct gopclntab_func *f);

/*
 * The stack pointer's depth below its value at the call (the return
 * address's slot) through function @func, from its pcsp table: @fn(@pc,
 * @depth, @arg) for each stretch from @pc on, in address order; a
 * non-zero return stops the walk and is returned. -ENOENT when the
 * function has no table or it is corrupt (after the stretches read); a
 * table that ends before the next function (padding) is whole.
 */
int gopclntab__sp_depths(const struct gopclntab *t, uint32_t func,
			 int (*fn)(uint64_t pc, int32_t depth, void *arg), void *arg);

/* The name of function @func, or NULL. */
const char *gopclntab__name(const struct gopclntab *t, uint32_t func);

/* The extent of the function named @name into [@lo, @hi): 0, or -ENOENT. A linear search. */
int gopclntab__find_name(const struct gopclntab *t, const char *name, uint64_t *lo, uint64_t *hi);

/*
 * The inline chain at ELF address @pc into @locs (room for
 * GOPCLNTAB_MAX_DEPTH), innermost first, the function holding @pc last.
 * Returns the number of entries, 0 when no function holds @pc.
 */
int gopclntab__lookup(const struct gopclntab *t, uint64_t pc, struct gopclntab_loc *locs);

#endif
