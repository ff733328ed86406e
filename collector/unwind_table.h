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
 *
 * Built in one pass over each FDE's instructions (see the head of the
 * interpreter in unwind_table.c for why we read them ourselves). Hostile CFI
 * costs bounded time and memory: a file whose reading takes more than
 * UNWIND_TABLE_STEPS_PER_BYTE instructions and rows per byte of its CFI, or
 * more than UNWIND_TABLE_MAX_ROWS rows, is given up with one warning.
 */
#ifndef PROFILER_UNWIND_TABLE_H
#define PROFILER_UNWIND_TABLE_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/profile.h"
#include "elf/fde_table.h"
#include "elf/gopclntab.h"

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

/*
 * At most this many rows a file, 48 MiB of struct unwind_table_row (the
 * array doubles from 16, so never more): the BPF program's row array holds
 * 4 Mi rows by default (32 MiB, collector.h), and clang's largest libraries
 * have 1 Mi.
 */
#define UNWIND_TABLE_MAX_ROWS (4UL << 20)
/*
 * At most this many instructions read and rows written per byte of CFI
 * (plus a few thousand): well-formed CFI reads each instruction once and
 * writes fewer rows than it has bytes.
 */
#define UNWIND_TABLE_STEPS_PER_BYTE 4

struct elf_file;

/*
 * What building a file's table reads of it. libelf and libdw read a file
 * lazily, and neither is thread-safe: unwind_source__get() does all the
 * reading, on the thread that owns the file, and then
 * unwind_table__build_source() reads only this and the memory it points
 * at, on any thread, for as long as the file is held open.
 */
/*
 * A Go binary's function table (elf/gopclntab.h), which the table is
 * built from where no FDE covers Go's code: Go writes no .eh_frame, and
 * stripping removes its .debug_frame.
 */
struct unwind_go {
	bool present;
	struct gopclntab table;
};

struct unwind_source {
	const char *name;
	/* elf_file__fdes() when the file has read it, else what to build it from */
	const struct fde_table *fdes;
	struct fde_source fde_src;
	bool has_eh, has_debug;	      /* CFI libdw reads in .eh_frame, .debug_frame */
	Elf_Data *eh, *debug;	      /* their contents (NULL: none) */
	uint64_t eh_addr, debug_addr; /* and addresses */
	struct unwind_go go;
	/* V8 (elf_file__is_v8()): its .text, where code without FDEs keeps frame pointers */
	bool v8;
	uint64_t v8_text_lo, v8_text_hi;
};

/*
 * Read what building @f's table takes into @src: 0, -ENOENT when the file
 * has no CFI and is not Go's, -ENOTSUP for a file that is not x86-64, -ENOMEM. Released
 * with unwind_source__release() whatever it returns.
 */
int unwind_source__get(struct unwind_source *src, struct elf_file *f);
void unwind_source__release(struct unwind_source *src);

/*
 * Build @t (zeroed by the caller) for the FDEs of @src (@src->fdes, which
 * must be set: fde_table__build() of its fde_src), each read through
 * its .eh_frame or, where that has no such FDE, its .debug_frame. 0,
 * -ENOMEM, -E2BIG when its CFI asks for more than the bounds above (logged
 * as a warning), or -EINVAL when no FDE could be read (corrupt CFI; what
 * was read before a corruption is kept). Thread-safe for different @t.
 */
int unwind_table__build_source(struct unwind_table *t, const struct unwind_source *src);

/* unwind_source__get() and unwind_table__build_source() in one, with their errors. */
int unwind_table__build(struct unwind_table *t, struct elf_file *f);
void unwind_table__release(struct unwind_table *t);

/*
 * Add a row at file address @pc to @t, unsorted (none when @pc does not fit
 * a row's 32 bits: that code keeps no rows): 0 or -ENOMEM. For builders.
 */
int unwind_table__push(struct unwind_table *t, uint64_t pc, const struct unwind_rule *rule);

/*
 * Sort @t's rows, keep one per address (an FDE's first row over the end of
 * the one before) and drop those that change nothing: the last step of
 * unwind_table__build(), for other builders of tables (the tests').
 */
void unwind_table__compact(struct unwind_table *t);

/*
 * The CFA's or a register's rule at one row, as libdw's dwarf_frame_cfa() or
 * dwarf_frame_register() give it: @err when it cannot be read, else @nr
 * operations at @ops. For a register, no operations mean undefined (@ops
 * not NULL) or the same value (@ops NULL).
 */
struct unwind_ops {
	const Dwarf_Op *ops;
	size_t nr;
	bool err;
};

/*
 * The rule of one row in the terms of struct unwind_rule, from the rules of
 * the CFA, the return address (register 16) and rbp (6), and whether the
 * CIE is of a signal frame. The tests build rows with libdw and compare.
 */
struct unwind_rule unwind_rule__of(const struct unwind_ops *cfa, const struct unwind_ops *ra,
				   const struct unwind_ops *bp, bool signal);

/* The register a DW_OP_breg* or DW_OP_bregx operation reads (its offset in *@off), or -1. */
int unwind_op_breg(const Dwarf_Op *op, int64_t *off);

/* The row covering file address @pc, or NULL. */
const struct unwind_table_row *unwind_table__find(const struct unwind_table *t, uint64_t pc);

#endif
