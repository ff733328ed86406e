/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fde_table.h - where the functions of one ELF file start and end, as its
 * call frame information says: one [start, end) range per FDE of its
 * .eh_frame and of its .debug_frame (one range where both describe a
 * function).
 *
 * The symbolizer uses it to name code that no symbol names (static
 * functions of a stripped library) after the start of its function rather
 * than after the address, so that a function is one frame name, not one
 * per address sampled in it; the unwinder builds its tables one FDE at a
 * time from it (collector/unwind_table.h). Compilers emit one FDE per function (and one
 * per split-off cold part), and stripping keeps .eh_frame.
 *
 * libdw's dwarf_next_cfi() walks the entries; the initial location and
 * range of each FDE are decoded here with its CIE's pointer encoding
 * (absolute or, as gcc and clang emit them, PC-relative). An FDE that
 * starts outside the file's executable segments (one left behind for code
 * the linker discarded), or whose encoding is another, is left out. The
 * ranges are kept in one array sorted by start, for a binary search.
 *
 * Corrupt or truncated CFI yields the FDEs read before it: never an error.
 *
 * Immutable once built, so lookups may run concurrently.
 */
#ifndef PROFILER_FDE_TABLE_H
#define PROFILER_FDE_TABLE_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fde_table;
struct cursor;

/*
 * Read the FDEs of @elf, which is not kept. A file without CFI gives an
 * empty table. Returns NULL and sets errno on failure (ENOMEM).
 */
struct fde_table *fde_table__new(Elf *elf);
void fde_table__free(struct fde_table *tab);

struct fde_range {
	uint64_t start, end;
};

/*
 * fde_table__new() in two steps, for a table built on another thread:
 * libelf reads a file lazily and is not thread-safe, so fde_source__get()
 * reads what the table is built from on the thread that owns @elf, and
 * fde_table__build() reads only that (and the section contents it points
 * at, which live as long as @elf) on any thread.
 */
struct fde_source {
	bool elf; /* false: not ELF, no CFI */
	unsigned char ident[EI_NIDENT];
	struct fde_range *exec; /* the executable PT_LOAD segments */
	size_t nr_exec;
	Elf_Data *eh, *debug; /* .eh_frame, .debug_frame (NULL: none) */
	uint64_t eh_addr, debug_addr;
};

/* 0, or -ENOMEM. */
int fde_source__get(struct fde_source *src, Elf *elf);
void fde_source__release(struct fde_source *src);
/* As fde_table__new(). */
struct fde_table *fde_table__build(const struct fde_source *src);

/*
 * The start of the FDE whose range covers ELF virtual address @vaddr into
 * @start. Returns 0, or -ENOENT when none does. Binary search.
 */
int fde_table__lookup(const struct fde_table *tab, uint64_t vaddr, uint64_t *start);

/* How many ranges the table holds. */
size_t fde_table__nr(const struct fde_table *tab);

/* Range @i (below fde_table__nr()), in address order: [*@start, *@end). */
void fde_table__range(const struct fde_table *tab, size_t i, uint64_t *start, uint64_t *end);

/*
 * Two readings of CFI entries shared with collector/unwind_table.c, which
 * reads the same entries' instructions.
 *
 * A value in the format (the low four bits) of pointer encoding @enc,
 * sign-extended if it is signed, into *@v: 0, or -1 for a format we do not
 * read or a value past @c's end.
 */
int cfi__read_encoded(struct cursor *c, uint8_t enc, uint8_t addr_size, uint64_t *v);

/*
 * What @cie's augmentation says: its FDEs' pointer encoding in *@enc ('R',
 * else absolute) and whether they describe signal frames in *@signal ('S').
 * 0, or -1 when it has augmentations we do not know before its 'R' (their
 * data's size is unknown, so 'R's is too) or cannot be read.
 */
int cfi__cie_augmentation(const Dwarf_CIE *cie, bool big_endian, uint8_t addr_size, int *enc,
			  bool *signal);

#endif
