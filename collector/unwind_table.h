/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unwind_table.h - the unwind table of one ELF file, for the BPF unwinder.
 *
 * Built from the file's call frame information (.eh_frame, else
 * .debug_frame): for every address its FDEs cover, the rule that finds the
 * caller's frame, in the few forms the BPF program can follow (bpf/profile.h,
 * struct unwind_rule). Rows are sorted by address and each holds until the
 * next; a row with UNWIND_CFA_NONE ends an FDE that the next does not
 * follow at once, and rules the BPF program cannot follow (general DWARF
 * expressions) are UNWIND_CFA_UNSUPPORTED, so that the stack ends there,
 * marked truncated, rather than going on to a wrong caller. x86-64 only.
 */
#ifndef PROFILER_UNWIND_TABLE_H
#define PROFILER_UNWIND_TABLE_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/profile.h"

struct unwind_table_row {
	uint32_t pc; /* the file's address (ELF vaddr) */
	struct unwind_rule rule;
};

struct unwind_table {
	struct unwind_table_row *rows; /* sorted by pc, no two in a row with the same rule */
	size_t nr, alloc;
	size_t nr_fdes;	       /* FDEs read */
	size_t nr_unsupported; /* rows whose rule the BPF program cannot follow */
};

struct elf_file;

/*
 * Build @t (zeroed by the caller) for the FDEs of @f (elf_file__fdes()),
 * each read through its .eh_frame or, where that has no such FDE, its
 * .debug_frame. 0, -ENOENT
 * when the file has no CFI, -ENOTSUP for a file that is not x86-64,
 * -ENOMEM, or -EINVAL when no FDE could be read (corrupt CFI; what was
 * read before a corruption is kept).
 */
int unwind_table__build(struct unwind_table *t, struct elf_file *f);
void unwind_table__release(struct unwind_table *t);

/* The register a DW_OP_breg* or DW_OP_bregx operation reads (its offset in *@off), or -1. */
int unwind_op_breg(const Dwarf_Op *op, int64_t *off);

/* The row covering file address @pc, or NULL. */
const struct unwind_table_row *unwind_table__find(const struct unwind_table *t, uint64_t pc);

#endif
