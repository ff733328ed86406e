// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "elf/elf_file.h"
#include "elf/fde_table.h"
#include "unwind_table.h"

/* DWARF register numbers of x86-64. */
#define REG_BP 6
#define REG_SP 7
#define REG_RA 16
/* Where a signal trampoline's CFA expression reads the interrupted rsp: see native_unwind.bpf.h. */
#define UCONTEXT_RSP 160

static int table_push(struct unwind_table *t, uint64_t pc, const struct unwind_rule *rule)
{
	if (pc > UINT32_MAX)
		return 0; /* beyond what a row holds: that code keeps no rows */
	if (array__reserve(&t->rows, &t->alloc, t->nr + 1, sizeof(*t->rows)))
		return -ENOMEM;
	t->rows[t->nr].pc = pc;
	t->rows[t->nr].rule = *rule;
	t->nr++;
	return 0;
}

int unwind_op_breg(const Dwarf_Op *op, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*off = (int64_t)op->number;
		return op->atom - DW_OP_breg0;
	}
	if (op->atom == DW_OP_bregx) {
		*off = (int64_t)op->number2;
		return op->number < 32 ? (int)op->number : 32;
	}
	return -1;
}

static bool op_is_lit(const Dwarf_Op *op, unsigned int *n)
{
	if (op->atom < DW_OP_lit0 || op->atom > DW_OP_lit31)
		return false;
	*n = op->atom - DW_OP_lit0;
	return true;
}

/*
 * The CFA expression of x86-64 PLT entries, as binutils writes it:
 * rsp + off + ((rip & 15) >= N) << 3.
 */
static bool is_plt_expression(const Dwarf_Op *ops, size_t nops, int64_t *off, unsigned int *n)
{
	int64_t zero;
	unsigned int lit;

	return nops == 9 && unwind_op_breg(&ops[0], off) == REG_SP &&
	       unwind_op_breg(&ops[1], &zero) == REG_RA && zero == 0 && op_is_lit(&ops[2], &lit) &&
	       lit == 15 && ops[3].atom == DW_OP_and && op_is_lit(&ops[4], n) &&
	       ops[5].atom == DW_OP_ge && op_is_lit(&ops[6], &lit) && lit == 3 &&
	       ops[7].atom == DW_OP_shl && ops[8].atom == DW_OP_plus;
}

/* Register @reg saved at CFA + *@off, as libdw spells DW_CFA_offset: true, else false. */
static bool saved_at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* The rule of one CFI row, in the terms of struct unwind_rule. */
static struct unwind_rule row_rule(Dwarf_Frame *frame, bool signal)
{
	struct unwind_rule rule = { .cfa = UNWIND_CFA_UNSUPPORTED };
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	int64_t off, bp_off;
	unsigned int n;
	int reg;

	/* The return address: undefined in the outermost frame, else at CFA - 8. */
	if (dwarf_frame_register(frame, REG_RA, ops_mem, &ops, &nops))
		return rule;
	if (!nops && ops) {
		rule.cfa = UNWIND_CFA_END;
		return rule;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) || !nops)
		return rule;
	reg = unwind_op_breg(&ops[0], &off);
	if (signal) {
		/* glibc's __restore_rt: CFA = *(rsp + offset of the saved rsp in the ucontext). */
		if (nops == 2 && reg == REG_SP && off == UCONTEXT_RSP && ops[1].atom == DW_OP_deref)
			rule.cfa = UNWIND_CFA_SIGNAL;
		return rule;
	}
	if (nops == 1 && (reg == REG_SP || reg == REG_BP))
		rule.cfa = reg == REG_SP ? UNWIND_CFA_SP : UNWIND_CFA_BP;
	else if (nops == 2 && reg == REG_BP && ops[1].atom == DW_OP_deref)
		rule.cfa = UNWIND_CFA_DEREF_BP;
	else if (is_plt_expression(ops, nops, &off, &n))
		rule.cfa = UNWIND_CFA_PLT, rule.bp_off = n;
	else
		return rule;
	if (off < INT32_MIN || off > INT32_MAX) {
		rule.cfa = UNWIND_CFA_UNSUPPORTED;
		return rule;
	}
	rule.cfa_off = off;

	if (dwarf_frame_register(frame, REG_RA, ops_mem, &ops, &nops) ||
	    !saved_at_cfa(ops, nops, &off) || off != -8) {
		rule.cfa = UNWIND_CFA_UNSUPPORTED;
		return rule;
	}
	if (rule.cfa == UNWIND_CFA_PLT)
		return rule; /* rbp untouched */
	if (dwarf_frame_register(frame, REG_BP, ops_mem, &ops, &nops)) {
		rule.bp = UNWIND_BP_LOST;
	} else if (!nops) {
		rule.bp = ops ? UNWIND_BP_LOST : UNWIND_BP_SAME; /* undefined, or same value */
	} else if (saved_at_cfa(ops, nops, &bp_off) && bp_off >= INT16_MIN && bp_off <= INT16_MAX) {
		rule.bp = UNWIND_BP_AT_CFA;
		rule.bp_off = bp_off;
	} else if (nops == 1 && unwind_op_breg(&ops[0], &bp_off) == REG_BP && bp_off >= INT16_MIN &&
		   bp_off <= INT16_MAX) {
		rule.bp = UNWIND_BP_AT_BP; /* a realigned frame saves rbp where rbp points */
		rule.bp_off = bp_off;
	} else {
		rule.bp = UNWIND_BP_LOST;
	}
	return rule;
}

/*
 * The rows of the FDE covering [@lo, @hi), from @f's .eh_frame (@eh_cfi) or,
 * where that has no such FDE, its .debug_frame (whose DWARF is opened only
 * then), then a row that ends it. Whether it is a signal trampoline libdw
 * says, from its CIE.
 */
static int add_fde(struct unwind_table *t, struct elf_file *f, Dwarf_CFI *eh_cfi, uint64_t lo,
		   uint64_t hi)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	Dwarf_CFI *cfi = eh_cfi;
	Dwarf_Frame *frame;
	uint64_t addr = lo;
	int err;

	if (!cfi || dwarf_cfi_addrframe(cfi, lo, &frame))
		cfi = elf_file__debug_cfi(f);
	else
		free(frame);
	while (cfi && addr < hi) {
		Dwarf_Addr start, end;
		struct unwind_rule rule;
		bool signal = false;

		if (dwarf_cfi_addrframe(cfi, addr, &frame))
			break;
		dwarf_frame_info(frame, &start, &end, &signal);
		rule = row_rule(frame, signal);
		free(frame);
		t->nr_unsupported += rule.cfa == UNWIND_CFA_UNSUPPORTED;
		err = table_push(t, addr, &rule);
		if (err)
			return err;
		if (end <= addr)
			break;
		addr = end;
	}
	return table_push(t, hi, &none);
}

static int row_cmp(const void *a, const void *b)
{
	const struct unwind_table_row *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* At the same address an FDE's first row wins over the end of the one before. */
	return (x->rule.cfa == UNWIND_CFA_NONE) - (y->rule.cfa == UNWIND_CFA_NONE);
}

static bool rule_eq(const struct unwind_rule *a, const struct unwind_rule *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->bp == b->bp &&
	       a->bp_off == b->bp_off;
}

/* Sort the rows, keep one per address, and drop those that change nothing. */
static void table_compact(struct unwind_table *t)
{
	size_t n = 0;

	if (!t->nr)
		return; /* no rows, and no array to sort */
	qsort(t->rows, t->nr, sizeof(*t->rows), row_cmp);
	/* One row per address first: the one that won, even if it changes nothing. */
	for (size_t i = 0; i < t->nr; i++)
		if (!n || t->rows[n - 1].pc != t->rows[i].pc)
			t->rows[n++] = t->rows[i];
	t->nr = n;
	n = 0;
	for (size_t i = 0; i < t->nr; i++)
		if (!n || !rule_eq(&t->rows[n - 1].rule, &t->rows[i].rule))
			t->rows[n++] = t->rows[i];
	t->nr = n;
}

int unwind_table__build(struct unwind_table *t, struct elf_file *f)
{
	Dwarf_CFI *eh_cfi = elf_file__eh_cfi(f);
	const struct fde_table *fdes;
	Elf *elf = elf_file__elf(f);
	GElf_Ehdr ehdr;
	int err = 0;

	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64)
		return -ENOTSUP;
	if (!eh_cfi && !elf_file__debug_cfi(f))
		return -ENOENT;
	fdes = elf_file__fdes(f);
	if (!fdes)
		return -ENOMEM;
	t->nr_fdes = fde_table__nr(fdes);
	for (size_t i = 0; i < t->nr_fdes && !err; i++) {
		uint64_t lo, hi;

		fde_table__range(fdes, i, &lo, &hi);
		err = add_fde(t, f, eh_cfi, lo, hi);
	}
	if (err)
		return err;
	table_compact(t);
	/* CFI sections with no FDE that can be read: corrupt. */
	return t->nr ? 0 : -EINVAL;
}

void unwind_table__release(struct unwind_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

const struct unwind_table_row *unwind_table__find(const struct unwind_table *t, uint64_t pc)
{
	size_t lo = 0, hi = t->nr;

	/* The last row at or below @pc. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
}
