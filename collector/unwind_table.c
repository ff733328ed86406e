// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "elf/dwarf_cursor.h"
#include "elf/elf_file.h"
#include "elf/fde_table.h"
#include "elf/gopclntab.h"
#include "unwind_table.h"

/* DWARF register numbers of x86-64. */
#define REG_BP 6
#define REG_SP 7
#define REG_RA 16
/* Where a signal trampoline's CFA expression reads the interrupted rsp: see native_unwind.bpf.h. */
#define UCONTEXT_RSP 160

int unwind_table__push(struct unwind_table *t, uint64_t pc, const struct unwind_rule *rule)
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

struct unwind_rule unwind_rule__of(const struct unwind_ops *cfa, const struct unwind_ops *ra,
				   const struct unwind_ops *bp, bool signal)
{
	struct unwind_rule rule = { .cfa = UNWIND_CFA_UNSUPPORTED };
	const Dwarf_Op *ops = cfa->ops;
	size_t nops = cfa->nr;
	int64_t off, bp_off;
	unsigned int n;
	int reg;

	/* The return address: undefined in the outermost frame, else at CFA - 8. */
	if (ra->err)
		return rule;
	if (!ra->nr && ra->ops) {
		rule.cfa = UNWIND_CFA_END;
		return rule;
	}
	if (cfa->err || !nops)
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

	if (!saved_at_cfa(ra->ops, ra->nr, &off) || off != -8) {
		rule.cfa = UNWIND_CFA_UNSUPPORTED;
		return rule;
	}
	if (rule.cfa == UNWIND_CFA_PLT)
		return rule; /* rbp untouched */
	ops = bp->ops;
	nops = bp->nr;
	if (bp->err) {
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
 * The interpreter of call frame information.
 *
 * libdw reads CFI one address at a time: dwarf_cfi_addrframe() replays an
 * FDE's instructions from its start up to the address asked, so building a
 * table row by row through it is quadratic in an FDE's rows (0.46 s for
 * libLLVM-14.so.1's 950,000 rows, against 0.13 s in one pass: bench/run's
 * unwind/build), and libdw has no call that walks an FDE's rows in order. So we interpret each FDE's instructions ourselves, once,
 * adding a row at every advance of the location. Of each row we keep what
 * unwind_rule__of() reads, in the form libdw's dwarf_frame_cfa() and
 * dwarf_frame_register() give it, and where libdw cannot read a row (an
 * unknown opcode, an operand past the end, a restore_state with nothing
 * remembered) neither do we: the table is the one libdw's reading gives, row
 * for row (tests/unit/test_unwind_table.c compares them on this machine's
 * libraries, and tests/fixtures/cfi_rules.S has a row of every kind). As
 * libdw's, a register no instruction names keeps its value, and the CFA is
 * undefined until one defines it.
 */

/* A register's rule, as libdw keeps it. */
enum cfi_reg_kind {
	RULE_SAME, /* or unspecified: the same to libdw on x86-64 */
	RULE_UNDEFINED,
	RULE_OFFSET,	 /* saved at CFA + value */
	RULE_VAL_OFFSET, /* is CFA + value */
	RULE_REGISTER,	 /* in register value */
	RULE_EXPRESSION, /* saved where the expression says (value bytes at expr) */
	RULE_VAL_EXPRESSION,
};

struct cfi_reg {
	enum cfi_reg_kind kind;
	uint64_t value;
	const uint8_t *expr;
};

enum cfi_cfa_kind {
	CFA_UNDEFINED,
	CFA_REG_OFFSET,
	CFA_EXPRESSION,
	CFA_INVALID, /* a new register or offset for a CFA that had none: libdw reads no CFA */
};

/* The rules of one row: only the CFA's and the registers unwind_rule__of() reads. */
struct cfi_state {
	enum cfi_cfa_kind cfa_kind;
	uint64_t cfa_reg, cfa_off; /* CFA_EXPRESSION: cfa_off bytes at cfa_expr */
	const uint8_t *cfa_expr;
	struct cfi_reg bp, ra;
};

struct cfi_cie {
	uint64_t off; /* in its section */
	uint64_t code_align;
	int64_t data_align;
	int enc; /* its FDEs' pointer encoding, -1 when we cannot read them */
	bool signal, sized_aug;
	size_t fde_aug_size; /* without 'z' */
	const uint8_t *insns, *insns_end;
	int init_read; /* 0: not yet, 1: @init holds, -1: libdw cannot read it either */
	struct cfi_state init;
};

struct cfi_fde {
	uint64_t start, end;
	const uint8_t *insns, *insns_end;
	size_t cie; /* index in the section's CIEs */
};

/* One CFI section's entries, read once: the FDEs sorted by start, the CIEs by offset. */
struct cfi_section {
	const uint8_t *buf;
	size_t size;
	uint64_t addr; /* where PC-relative values are relative to */
	bool eh;
	struct cfi_cie *cies;
	size_t nr_cies, alloc_cies;
	struct cfi_fde *fdes;
	size_t nr_fdes, alloc_fdes;
};

/* How deep DW_CFA_remember_state may nest: compilers nest one or two. */
#define CFI_STACK_MAX 16
/* Operations of an expression we keep: the PLT's 9, with what libdw adds around them. */
#define CFI_OPS_MAX 12

/* The instructions of one CIE or FDE being run. */
struct cfi_run {
	const struct cfi_section *sec;
	const struct cfi_cie *cie;
	const struct cfi_state *init; /* the CIE's initial rules; NULL while reading them */
	struct cursor c;
	uint64_t loc;
	struct cfi_state st;
	struct cfi_state stack[CFI_STACK_MAX];
	size_t depth;
};

enum cfi_step {
	STEP_RULE,     /* changed a rule, or nothing */
	STEP_ADVANCE,  /* moved the location */
	STEP_INVALID,  /* what libdw refuses to read */
	STEP_TOO_DEEP, /* remember_state nested beyond CFI_STACK_MAX */
};

static enum cfi_step cfi_run__set(struct cfi_run *r, uint64_t reg, enum cfi_reg_kind kind,
				  uint64_t value, const uint8_t *expr)
{
	struct cfi_reg *rule = reg == REG_BP ? &r->st.bp : reg == REG_RA ? &r->st.ra : NULL;

	if (r->c.bad)
		return STEP_INVALID;
	if (rule)
		*rule = (struct cfi_reg){ kind, value, expr };
	return STEP_RULE;
}

/* A DW_FORM_block operand (ULEB128 length, bytes): its bytes, its length in *@len, or NULL. */
static const uint8_t *cfi_run__block(struct cfi_run *r, uint64_t *len)
{
	const uint8_t *p;

	*len = cursor__uleb(&r->c);
	p = r->c.p;
	cursor__skip(&r->c, *len);
	return r->c.bad ? NULL : p;
}

/* Run one instruction. */
static enum cfi_step cfi_run__step(struct cfi_run *r)
{
	const struct cfi_cie *cie = r->cie;
	struct cursor *c = &r->c;
	uint8_t op = cursor__u(c, 1);
	uint64_t reg, v, delta;
	const uint8_t *p;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		delta = op & 0x3f;
		goto advance;
	case DW_CFA_offset:
		v = cursor__uleb(c);
		return cfi_run__set(r, op & 0x3f, RULE_OFFSET, v * (uint64_t)cie->data_align, NULL);
	case DW_CFA_restore:
		reg = op & 0x3f;
		goto restore;
	}
	switch (op) {
	case DW_CFA_nop:
		return STEP_RULE;
	case DW_CFA_set_loc:
		p = c->p;
		if (cfi__read_encoded(c, cie->enc, 8, &v))
			return STEP_INVALID;
		if ((cie->enc & 0x70) == DW_EH_PE_pcrel)
			v += r->sec->addr + (p - r->sec->buf);
		else if ((cie->enc & 0x70) != DW_EH_PE_absptr)
			return STEP_INVALID;
		if (!r->init)
			return STEP_INVALID;
		r->loc = v;
		return STEP_ADVANCE;
	case DW_CFA_advance_loc1:
		delta = cursor__u(c, 1);
		goto advance;
	case DW_CFA_advance_loc2:
		delta = cursor__u(c, 2);
		goto advance;
	case DW_CFA_advance_loc4:
		delta = cursor__u(c, 4);
		goto advance;
	case DW_CFA_MIPS_advance_loc8:
		delta = cursor__u(c, 8);
		goto advance;
	case DW_CFA_offset_extended:
		reg = cursor__uleb(c);
		v = cursor__uleb(c);
		return cfi_run__set(r, reg, RULE_OFFSET, v * (uint64_t)cie->data_align, NULL);
	case DW_CFA_offset_extended_sf:
		reg = cursor__uleb(c);
		v = cursor__sleb(c);
		return cfi_run__set(r, reg, RULE_OFFSET, v * (uint64_t)cie->data_align, NULL);
	case DW_CFA_GNU_negative_offset_extended:
		reg = cursor__uleb(c);
		v = -cursor__uleb(c);
		return cfi_run__set(r, reg, RULE_OFFSET, v * (uint64_t)cie->data_align, NULL);
	case DW_CFA_val_offset:
		reg = cursor__uleb(c);
		v = cursor__uleb(c);
		return cfi_run__set(r, reg, RULE_VAL_OFFSET, v * (uint64_t)cie->data_align, NULL);
	case DW_CFA_val_offset_sf:
		reg = cursor__uleb(c);
		v = cursor__sleb(c);
		return cfi_run__set(r, reg, RULE_VAL_OFFSET, v * (uint64_t)cie->data_align, NULL);
	case DW_CFA_restore_extended:
		reg = cursor__uleb(c);
		goto restore;
	case DW_CFA_undefined:
		return cfi_run__set(r, cursor__uleb(c), RULE_UNDEFINED, 0, NULL);
	case DW_CFA_same_value:
		return cfi_run__set(r, cursor__uleb(c), RULE_SAME, 0, NULL);
	case DW_CFA_register:
		reg = cursor__uleb(c);
		return cfi_run__set(r, reg, RULE_REGISTER, cursor__uleb(c), NULL);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		reg = cursor__uleb(c);
		p = cfi_run__block(r, &v);
		return cfi_run__set(r, reg,
				    op == DW_CFA_expression ? RULE_EXPRESSION : RULE_VAL_EXPRESSION,
				    v, p);
	case DW_CFA_remember_state:
		if (r->depth == CFI_STACK_MAX)
			return STEP_TOO_DEEP;
		r->stack[r->depth++] = r->st;
		return STEP_RULE;
	case DW_CFA_restore_state:
		if (!r->depth)
			return STEP_INVALID;
		r->st = r->stack[--r->depth];
		return STEP_RULE;
	case DW_CFA_def_cfa:
		r->st.cfa_reg = cursor__uleb(c);
		r->st.cfa_off = cursor__uleb(c);
		r->st.cfa_kind = CFA_REG_OFFSET;
		break;
	case DW_CFA_def_cfa_sf:
		r->st.cfa_reg = cursor__uleb(c);
		r->st.cfa_off = cursor__sleb(c) * (uint64_t)cie->data_align;
		r->st.cfa_kind = CFA_REG_OFFSET;
		break;
	case DW_CFA_def_cfa_register:
		r->st.cfa_reg = cursor__uleb(c);
		goto cfa_changed;
	case DW_CFA_def_cfa_offset:
		r->st.cfa_off = cursor__uleb(c);
		goto cfa_changed;
	case DW_CFA_def_cfa_offset_sf:
		r->st.cfa_off = cursor__sleb(c) * (uint64_t)cie->data_align;
		goto cfa_changed;
	case DW_CFA_def_cfa_expression:
		r->st.cfa_expr = cfi_run__block(r, &r->st.cfa_off);
		r->st.cfa_kind = CFA_EXPRESSION;
		break;
	case DW_CFA_GNU_args_size:
		cursor__uleb(c);
		break;
	default: /* DW_CFA_GNU_window_save is SPARC's and AArch64's */
		return STEP_INVALID;
	}
	return c->bad ? STEP_INVALID : STEP_RULE;

cfa_changed:
	if (r->st.cfa_kind != CFA_REG_OFFSET)
		r->st.cfa_kind = CFA_INVALID;
	return c->bad ? STEP_INVALID : STEP_RULE;
advance:
	/* The CIE's own instructions have no location to move. */
	if (c->bad || !r->init)
		return STEP_INVALID;
	r->loc += delta * cie->code_align;
	return STEP_ADVANCE;
restore:
	if (c->bad || !r->init)
		return STEP_INVALID;
	if (reg == REG_BP)
		r->st.bp = r->init->bp;
	else if (reg == REG_RA)
		r->st.ra = r->init->ra;
	return STEP_RULE;
}

/*
 * Operation @op with operands @number and @number2, the @n-th of @o's:
 * the first CFI_OPS_MAX are kept, the others only counted.
 */
static void ops_add(struct unwind_ops *o, Dwarf_Op *mem, uint8_t atom, uint64_t number,
		    uint64_t number2)
{
	if (o->nr < CFI_OPS_MAX)
		mem[o->nr] = (Dwarf_Op){ .atom = atom, .number = number, .number2 = number2 };
	o->nr++;
}

/*
 * The operations of the DWARF expression of @len bytes at @p into @o, as
 * libdw reads it: @err when it has an operation libdw does not know or an
 * operand past its end.
 */
static void expression_ops(const uint8_t *p, uint64_t len, Dwarf_Op *mem, struct unwind_ops *o)
{
	struct cursor c = { .p = p, .end = p + len };

	while (c.p < c.end && !c.bad) {
		uint8_t atom = cursor__u(&c, 1);
		uint64_t n = 0, n2 = 0;

		if ((atom >= DW_OP_lit0 && atom <= DW_OP_lit31) ||
		    (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)) {
			ops_add(o, mem, atom, 0, 0);
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			ops_add(o, mem, atom, cursor__sleb(&c), 0);
			continue;
		}
		switch (atom) {
		case DW_OP_addr:
		case DW_OP_const8u:
		case DW_OP_const8s:
			n = cursor__u(&c, 8);
			break;
		case DW_OP_const1u:
		case DW_OP_pick:
		case DW_OP_deref_size:
		case DW_OP_xderef_size:
			n = cursor__u(&c, 1);
			break;
		case DW_OP_const1s:
			n = (int8_t)cursor__u(&c, 1);
			break;
		case DW_OP_const2u:
		case DW_OP_call2:
			n = cursor__u(&c, 2);
			break;
		case DW_OP_const2s:
		case DW_OP_skip:
		case DW_OP_bra:
			n = (int16_t)cursor__u(&c, 2);
			break;
		case DW_OP_const4u:
		case DW_OP_call4:
		case DW_OP_call_ref:
			n = cursor__u(&c, 4);
			break;
		case DW_OP_const4s:
			n = (int32_t)cursor__u(&c, 4);
			break;
		case DW_OP_constu:
		case DW_OP_plus_uconst:
		case DW_OP_regx:
		case DW_OP_piece:
			n = cursor__uleb(&c);
			break;
		case DW_OP_consts:
		case DW_OP_fbreg:
			n = cursor__sleb(&c);
			break;
		case DW_OP_bregx:
			n = cursor__uleb(&c);
			n2 = cursor__sleb(&c);
			break;
		case DW_OP_bit_piece:
			n = cursor__uleb(&c);
			n2 = cursor__uleb(&c);
			break;
		case DW_OP_deref:
		case DW_OP_dup ... DW_OP_over:
		case DW_OP_swap ... DW_OP_plus:
		case DW_OP_shl ... DW_OP_xor:
		case DW_OP_eq ... DW_OP_ne:
		case DW_OP_nop:
		case DW_OP_push_object_address:
		case DW_OP_form_tls_address:
		case DW_OP_call_frame_cfa:
		case DW_OP_stack_value:
		case DW_OP_GNU_push_tls_address:
			break;
		default:
			o->err = true;
			return;
		}
		ops_add(o, mem, atom, n, n2);
	}
	o->err = c.bad;
}

/* The rule of register @reg in libdw's terms (dwarf_frame_register()). */
static void reg_ops(const struct cfi_reg *reg, Dwarf_Op *mem, struct unwind_ops *o)
{
	*o = (struct unwind_ops){ .ops = mem };
	switch (reg->kind) {
	case RULE_UNDEFINED:
		break;
	case RULE_SAME:
		o->ops = NULL;
		break;
	case RULE_OFFSET:
	case RULE_VAL_OFFSET:
		ops_add(o, mem, DW_OP_call_frame_cfa, 0, 0);
		if (reg->value)
			ops_add(o, mem, DW_OP_plus_uconst, reg->value, 0);
		if (reg->kind == RULE_VAL_OFFSET)
			ops_add(o, mem, DW_OP_stack_value, 0, 0);
		break;
	case RULE_REGISTER:
		ops_add(o, mem, DW_OP_regx, reg->value, 0);
		break;
	case RULE_EXPRESSION:
	case RULE_VAL_EXPRESSION:
		if (!reg->value)
			break; /* no operations: libdw says so, as for undefined */
		/* The CFA is pushed before the expression runs. */
		ops_add(o, mem, DW_OP_call_frame_cfa, 0, 0);
		expression_ops(reg->expr, reg->value, mem, o);
		if (reg->kind == RULE_VAL_EXPRESSION)
			ops_add(o, mem, DW_OP_stack_value, 0, 0);
		break;
	}
}

static struct unwind_rule state_rule(const struct cfi_state *st, bool signal)
{
	Dwarf_Op cfa_mem[CFI_OPS_MAX], ra_mem[CFI_OPS_MAX], bp_mem[CFI_OPS_MAX];
	struct unwind_ops cfa = { .ops = cfa_mem }, ra, bp;

	if (st->cfa_kind == CFA_REG_OFFSET)
		ops_add(&cfa, cfa_mem, DW_OP_bregx, st->cfa_reg, st->cfa_off);
	else if (st->cfa_kind == CFA_EXPRESSION)
		expression_ops(st->cfa_expr, st->cfa_off, cfa_mem, &cfa);
	else if (st->cfa_kind == CFA_INVALID)
		cfa.err = true;
	reg_ops(&st->ra, ra_mem, &ra);
	reg_ops(&st->bp, bp_mem, &bp);
	return unwind_rule__of(&cfa, &ra, &bp, signal);
}

/* The table being built, and what bounds its cost. */
struct builder {
	struct unwind_table *t;
	const struct unwind_source *src;
	struct cfi_section eh, debug;
	bool has_eh, debug_read;
	uint64_t steps, max_steps;
	size_t nr_too_deep; /* FDEs given up: remember_state nested too deep */
};

static int builder__row(struct builder *b, uint64_t pc, const struct cfi_state *st, bool signal)
{
	struct unwind_rule rule = state_rule(st, signal);

	b->t->nr_unsupported += rule.cfa == UNWIND_CFA_UNSUPPORTED;
	if (b->t->nr >= UNWIND_TABLE_MAX_ROWS)
		return -E2BIG;
	return unwind_table__push(b->t, pc, &rule);
}

/* The initial rules of CIE @cie: libdw's x86-64 defaults, then its instructions. */
static int builder__cie_init(struct builder *b, const struct cfi_section *sec, struct cfi_cie *cie)
{
	struct cfi_run r;

	if (cie->init_read)
		return cie->init_read > 0 ? 0 : -EINVAL;
	cie->init_read = -1;
	r = (struct cfi_run){
		.sec = sec,
		.cie = cie,
		.c = { .p = cie->insns, .end = cie->insns_end },
		.st = { .bp.kind = RULE_SAME, .ra.kind = RULE_SAME },
	};
	while (r.c.p < r.c.end) {
		if (++b->steps > b->max_steps)
			return -E2BIG;
		switch (cfi_run__step(&r)) {
		case STEP_RULE:
			continue;
		case STEP_TOO_DEEP:
			b->nr_too_deep++;
			return -EINVAL;
		default:
			return -EINVAL;
		}
	}
	cie->init = r.st;
	cie->init_read = 1;
	return 0;
}

/*
 * The rows of @fde from *@addr (which it covers) while below @hi, moving
 * *@addr on; *@nr_rows counts them. 0 when it leaves the FDE at *@addr, 1
 * when its rows end, -EINVAL when libdw could not read the row at *@addr,
 * -E2BIG when the file is given up, -ENOMEM.
 */
static int builder__fde(struct builder *b, struct cfi_section *sec, const struct cfi_fde *fde,
			uint64_t *addr, uint64_t hi, size_t *nr_rows)
{
	struct cfi_cie *cie = &sec->cies[fde->cie];
	struct cfi_run run, *r = &run;
	int err;

	err = builder__cie_init(b, sec, cie);
	if (err)
		return err;
	/* Field by field: the remembered states need no zeroing, once per FDE. */
	r->sec = sec;
	r->cie = cie;
	r->init = &cie->init;
	r->c = (struct cursor){ .p = fde->insns, .end = fde->insns_end };
	r->loc = fde->start;
	r->st = cie->init;
	r->depth = 0;
	while (r->c.p < r->c.end) {
		if (++b->steps > b->max_steps)
			return -E2BIG;
		switch (cfi_run__step(r)) {
		case STEP_RULE:
			continue;
		case STEP_TOO_DEEP:
			b->nr_too_deep++;
			return -EINVAL;
		case STEP_INVALID:
			return -EINVAL;
		case STEP_ADVANCE:
			break;
		}
		/* Until the location passes *@addr, the rules are still those before it. */
		if (r->loc <= *addr)
			continue;
		b->steps++;
		err = builder__row(b, *addr, &r->st, cie->signal);
		if (err)
			return err;
		(*nr_rows)++;
		*addr = r->loc;
		if (*addr >= hi || *addr >= fde->end)
			return 0; /* the row there, if any, is another FDE's or not ours */
	}
	/* Past its last instruction, its last rules hold to its end. */
	b->steps++;
	err = builder__row(b, *addr, &r->st, cie->signal);
	if (err)
		return err;
	(*nr_rows)++;
	if (fde->end <= *addr)
		return 1;
	*addr = fde->end;
	return 0;
}

/* The FDE of @sec covering @addr (the last to start at or below it), or NULL. */
static const struct cfi_fde *cfi_section__find(const struct cfi_section *sec, uint64_t addr)
{
	size_t lo = 0, hi = sec->nr_fdes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sec->fdes[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= sec->fdes[lo - 1].end)
		return NULL;
	return &sec->fdes[lo - 1];
}

/*
 * The rows of [@lo, @hi) from @sec, FDE after FDE (one ends where the next
 * starts when a range of the FDE table is longer than the FDE), as libdw
 * gives them address by address: 0 when they end, -E2BIG, -ENOMEM.
 */
static int builder__range(struct builder *b, struct cfi_section *sec, uint64_t lo, uint64_t hi,
			  size_t *nr_rows)
{
	uint64_t addr = lo;

	while (addr < hi) {
		const struct cfi_fde *fde = cfi_section__find(sec, addr);
		int err;

		if (!fde)
			return 0;
		err = builder__fde(b, sec, fde, &addr, hi, nr_rows);
		if (err)
			return err == 1 || err == -EINVAL ? 0 : err;
	}
	return 0;
}

static int cie_cmp_off(const void *key, const void *entry)
{
	uint64_t off = *(const uint64_t *)key;
	const struct cfi_cie *cie = entry;

	return off < cie->off ? -1 : off > cie->off;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct cfi_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

static int cfi_section__add_cie(struct cfi_section *sec, Dwarf_Off off, const Dwarf_CIE *e)
{
	struct cfi_cie *cie;
	bool signal;
	int enc;

	if (array__reserve(&sec->cies, &sec->alloc_cies, sec->nr_cies + 1, sizeof(*sec->cies)))
		return -ENOMEM;
	cie = &sec->cies[sec->nr_cies++];
	*cie = (struct cfi_cie){
		.off = off,
		.code_align = e->code_alignment_factor,
		.data_align = e->data_alignment_factor,
		.insns = e->initial_instructions,
		.insns_end = e->initial_instructions_end,
		.sized_aug = e->augmentation[0] == 'z',
		.fde_aug_size = e->fde_augmentation_data_size,
	};
	if (cfi__cie_augmentation(e, false, 8, &enc, &signal))
		enc = -1;
	/* As fde_table reads them: PC-relative or absolute, and direct. */
	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect) ||
	    ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel))
		enc = -1;
	cie->enc = enc;
	cie->signal = signal;
	return 0;
}

/* Read CFI section @data (.eh_frame when @eh) at address @addr into @sec: 0, -ENOMEM. */
static int cfi_section__read(struct cfi_section *sec, Elf_Data *data, uint64_t addr, bool eh)
{
	unsigned char ident[EI_NIDENT] = { [EI_CLASS] = ELFCLASS64, [EI_DATA] = ELFDATA2LSB };
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	bool sorted = true;
	size_t n = 0;

	sec->buf = data->d_buf;
	sec->size = data->d_size;
	sec->addr = addr;
	sec->eh = eh;
	/*
	 * Entries are read in order: CIEs sorted by offset. An FDE is decoded
	 * once all are read (its CIE may follow it); until then its start
	 * holds its offset, its cie its CIE's.
	 */
	while (!dwarf_next_cfi(ident, data, sec->eh, off, &next, &e)) {
		if (dwarf_cfi_cie_p(&e)) {
			if (cfi_section__add_cie(sec, off, &e.cie))
				return -ENOMEM;
		} else {
			if (array__reserve(&sec->fdes, &sec->alloc_fdes, sec->nr_fdes + 1,
					   sizeof(*sec->fdes)))
				return -ENOMEM;
			sec->fdes[sec->nr_fdes++] = (struct cfi_fde){
				.start = (uint64_t)(e.fde.start - sec->buf),
				.insns_end = e.fde.end,
				.cie = e.fde.CIE_pointer,
			};
		}
		off = next;
	}
	for (size_t i = 0; i < sec->nr_fdes; i++) {
		struct cfi_fde fde = sec->fdes[i];
		uint64_t cie_off = fde.cie, at = fde.start, start, len;
		struct cfi_cie *cie =
			bsearch(&cie_off, sec->cies, sec->nr_cies, sizeof(*sec->cies), cie_cmp_off);
		struct cursor c = { .p = sec->buf + at, .end = fde.insns_end };

		/* What neither libdw nor the FDE table can read is left out. */
		if (!cie || cie->enc < 0 || cfi__read_encoded(&c, cie->enc, 8, &start) ||
		    cfi__read_encoded(&c, cie->enc, 8, &len))
			continue;
		if ((cie->enc & 0x70) == DW_EH_PE_pcrel)
			start += sec->addr + at;
		if (cie->sized_aug)
			cursor__skip(&c, cursor__uleb(&c));
		else
			cursor__skip(&c, cie->fde_aug_size);
		if (!len || start + len < start || c.bad)
			continue;
		fde.start = start;
		fde.end = start + len;
		fde.insns = c.p;
		fde.cie = cie - sec->cies;
		if (n && fde_cmp(&sec->fdes[n - 1], &fde) > 0)
			sorted = false;
		sec->fdes[n++] = fde;
	}
	sec->nr_fdes = n;
	if (!sorted)
		qsort(sec->fdes, sec->nr_fdes, sizeof(*sec->fdes), fde_cmp);
	return 0;
}

static void cfi_section__release(struct cfi_section *sec)
{
	free(sec->cies);
	free(sec->fdes);
}

/* The .debug_frame of @b's file, read the first time an FDE is not in its .eh_frame. */
static struct cfi_section *builder__debug(struct builder *b, int *err)
{
	const struct unwind_source *src = b->src;

	*err = 0;
	if (!b->debug_read) {
		b->debug_read = true;
		if (src->debug) {
			*err = cfi_section__read(&b->debug, src->debug, src->debug_addr, false);
			b->max_steps += (uint64_t)b->debug.size * UNWIND_TABLE_STEPS_PER_BYTE;
		}
	}
	return b->debug.nr_fdes ? &b->debug : NULL;
}

/*
 * The rows of the FDE table's range [@lo, @hi): from .eh_frame or, where
 * that has no row at @lo, from .debug_frame; then a row that ends it.
 */
static int builder__add_range(struct builder *b, uint64_t lo, uint64_t hi)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	struct cfi_section *debug;
	size_t nr_rows = 0;
	int err = 0;

	if (b->has_eh)
		err = builder__range(b, &b->eh, lo, hi, &nr_rows);
	if (!err && !nr_rows && (debug = builder__debug(b, &err)))
		err = builder__range(b, debug, lo, hi, &nr_rows);
	if (err)
		return err;
	if (b->t->nr >= UNWIND_TABLE_MAX_ROWS)
		return -E2BIG;
	return unwind_table__push(b->t, hi, &none);
}

/* A row that says there is no CFI from here on: an FDE's end, or Go code's frame pointers. */
static bool is_gap(const struct unwind_table_row *row)
{
	return row->rule.cfa == UNWIND_CFA_NONE || row->rule.cfa == UNWIND_CFA_FP;
}

static int row_cmp(const void *a, const void *b)
{
	const struct unwind_table_row *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* At the same address an FDE's first row wins over the end of the one before. */
	return is_gap(x) - is_gap(y);
}

static bool rule_eq(const struct unwind_rule *a, const struct unwind_rule *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->bp == b->bp &&
	       a->bp_off == b->bp_off;
}

/* Drop the rows of sorted @t that change nothing. */
static void drop_repeats(struct unwind_table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nr; i++)
		if (!n || !rule_eq(&t->rows[n - 1].rule, &t->rows[i].rule))
			t->rows[n++] = t->rows[i];
	t->nr = n;
}

void unwind_table__compact(struct unwind_table *t)
{
	bool sorted = true;
	size_t n = 0;

	/*
	 * FDEs come in address order and so do their rows: one pass finds out
	 * whether the sort (most of the time of a build) can be spared.
	 */
	for (size_t i = 1; i < t->nr && sorted; i++)
		sorted = t->rows[i - 1].pc <= t->rows[i].pc;
	if (!sorted)
		qsort(t->rows, t->nr, sizeof(*t->rows), row_cmp);
	/*
	 * One row per address first: the one that won (the first, or an FDE's
	 * first row over the end of the one before), even if it changes nothing.
	 */
	for (size_t i = 0; i < t->nr; i++) {
		if (!n || t->rows[n - 1].pc != t->rows[i].pc)
			t->rows[n++] = t->rows[i];
		else if (is_gap(&t->rows[n - 1]) && !is_gap(&t->rows[i]))
			t->rows[n - 1] = t->rows[i];
	}
	t->nr = n;
	drop_repeats(t);
}

/*
 * Go's code in a file: Go 1.16 on, with its function table. Each
 * function's rows come from its pcsp table, which says how far below the
 * return address the stack pointer is at each of its instructions: the
 * CFA is that far above it, and rbp, which Go saves at once where it moves
 * the stack pointer, is saved 16 below the CFA. A function that moves the
 * stack pointer another way (SPWRITE) is walked by its frame pointer.
 *
 * Then the runtime's functions whose rows are their own: where every
 * stack ends (each goroutine's in goexit, each thread's in mstart, the
 * first thread's in rt0_go; Go's traceback stops there too), and those
 * that call on another stack, whose callers are found by rbp wherever it
 * leads; and its signal restorer. Go's table names them without the .abi0
 * of their symbols.
 */
static const struct {
	const char *name;
	uint8_t cfa;
	/*
	 * From the byte before: Go's signal restorer, as glibc's __restore_rt,
	 * is where the kernel makes a handler return to, and a caller's row
	 * is looked up at its return address less one.
	 */
	bool from_before;
} go_runtime_rows[] = {
	{ "runtime.goexit", UNWIND_CFA_END, false },
	{ "runtime.mstart", UNWIND_CFA_END, false },
	{ "runtime.rt0_go", UNWIND_CFA_END, false },
	{ "runtime.systemstack", UNWIND_CFA_FP_SWITCH, false },
	{ "runtime.mcall", UNWIND_CFA_FP_SWITCH, false },
	{ "runtime.asmcgocall", UNWIND_CFA_FP_SWITCH, false },
	{ "runtime.morestack", UNWIND_CFA_FP_SWITCH, false },
	/* Go 1.21 renamed it: the registers the signal interrupted are in the ucontext at rsp. */
	{ "runtime.sigreturn", UNWIND_CFA_SIGNAL, true },
	{ "runtime.sigreturn__sigaction", UNWIND_CFA_SIGNAL, true },
};

static int go_sp_row(uint64_t pc, int32_t depth, void *arg)
{
	struct unwind_table *t = arg;
	struct unwind_rule rule = { .cfa = UNWIND_CFA_SP, .cfa_off = 8 + depth };

	/* As for CFI: a file that asks for more rows than any table holds is given up. */
	if (t->nr >= UNWIND_TABLE_MAX_ROWS)
		return -E2BIG;
	if (depth < 0 || depth > (1 << 24))
		rule = (struct unwind_rule){ .cfa = UNWIND_CFA_FP };
	else if (depth > 0)
		rule.bp = UNWIND_BP_AT_CFA, rule.bp_off = -16;
	return unwind_table__push(t, pc, &rule);
}

/* Rows for Go's functions that no FDE covers, and a gap where Go's code ends. 0 or -ENOMEM. */
static int go_function_rows(struct unwind_table *t, const struct unwind_source *src)
{
	static const struct unwind_rule fp = { .cfa = UNWIND_CFA_FP },
					none = { .cfa = UNWIND_CFA_NONE };
	const struct gopclntab *go = &src->go.table;
	struct gopclntab_func f = { 0 };
	uint64_t start;
	int err = 0;

	for (uint32_t i = 0; i < go->nr_funcs && !err; i++) {
		size_t before = t->nr;

		if (gopclntab__func(go, i, &f) || !fde_table__lookup(src->fdes, f.lo, &start))
			continue;
		if (f.flags & GOPCLNTAB_FLAG_SPWRITE) {
			err = unwind_table__push(t, f.lo, &fp);
		} else if ((err = gopclntab__sp_depths(go, i, go_sp_row, t)) == -ENOENT) {
			/* A table cut short or corrupt: none of its rows, frame pointers instead. */
			t->nr = before;
			err = unwind_table__push(t, f.lo, &fp);
		}
	}
	return err ? err : unwind_table__push(t, f.hi, &none);
}

/* Rows of rule @rule for [@lo, @hi) of sorted @t, over what it had there. 0 or -ENOMEM. */
static int table_overlay(struct unwind_table *t, uint64_t lo, uint64_t hi,
			 const struct unwind_rule *rule)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	const struct unwind_table_row *at_hi = unwind_table__find(t, hi);
	struct unwind_rule after = at_hi ? at_hi->rule : none;
	size_t first = 0, end;

	if (hi > UINT32_MAX || lo >= hi)
		return 0;
	while (first < t->nr && t->rows[first].pc < lo)
		first++;
	for (end = first; end < t->nr && t->rows[end].pc <= hi; end++)
		;
	if (array__reserve(&t->rows, &t->alloc, t->nr + 2, sizeof(*t->rows)))
		return -ENOMEM;
	memmove(&t->rows[first + 2], &t->rows[end], (t->nr - end) * sizeof(*t->rows));
	t->nr = t->nr - (end - first) + 2;
	t->rows[first] = (struct unwind_table_row){ .pc = lo, .rule = *rule };
	t->rows[first + 1] = (struct unwind_table_row){ .pc = hi, .rule = after };
	return 0;
}

/* Frame pointers in the gaps between FDEs of sorted @t within [@lo, @hi). */
static void fp_in_gaps(struct unwind_table *t, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->rows[i].rule.cfa == UNWIND_CFA_NONE && t->rows[i].pc >= lo &&
		    t->rows[i].pc < hi)
			t->rows[i].rule = (struct unwind_rule){ .cfa = UNWIND_CFA_FP };
}

/*
 * After sorting @t: frame pointers in the gaps between FDEs inside Go's
 * code (cgo's C), then the runtime's functions of go_runtime_rows. 0 or
 * -ENOMEM.
 */
static int go_runtime_overlay(struct unwind_table *t, const struct gopclntab *go)
{
	uint64_t text_lo, text_hi;

	if (gopclntab__text(go, &text_lo, &text_hi))
		return 0;
	fp_in_gaps(t, text_lo, text_hi);
	for (size_t i = 0; i < sizeof(go_runtime_rows) / sizeof(*go_runtime_rows); i++) {
		struct unwind_rule rule = { .cfa = go_runtime_rows[i].cfa };
		uint64_t lo, hi;

		if (!gopclntab__find_name(go, go_runtime_rows[i].name, &lo, &hi) &&
		    table_overlay(t, lo - (go_runtime_rows[i].from_before && lo), hi, &rule))
			return -ENOMEM;
	}
	drop_repeats(t);
	return 0;
}

/*
 * After sorting @t, for a file with V8 in it: frame pointers in the gaps
 * between FDEs of its .text, where V8's embedded builtins are (they have
 * no CFI, and keep frame pointers, as the code V8 generates does), and
 * before its first FDE. 0 or -ENOMEM.
 */
static int v8_overlay(struct unwind_table *t, const struct unwind_source *src)
{
	static const struct unwind_rule fp = { .cfa = UNWIND_CFA_FP };
	uint64_t first = t->nr ? t->rows[0].pc : src->v8_text_hi;

	fp_in_gaps(t, src->v8_text_lo, src->v8_text_hi);
	if (first > src->v8_text_lo &&
	    table_overlay(t, src->v8_text_lo, first < src->v8_text_hi ? first : src->v8_text_hi,
			  &fp))
		return -ENOMEM;
	drop_repeats(t);
	return 0;
}

int unwind_source__get(struct unwind_source *src, struct elf_file *f)
{
	Elf *elf = elf_file__elf(f);
	GElf_Shdr shdr;
	GElf_Ehdr ehdr;

	*src = (struct unwind_source){ .name = elf_file__name(f) };
	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64)
		return -ENOTSUP;
	/* As libdw reads them: .eh_frame when it has one, .debug_frame when its DWARF reads. */
	if (elf_file__eh_cfi(f))
		src->eh = elf__section_data(elf, ".eh_frame", &src->eh_addr);
	src->has_eh = elf_file__eh_cfi(f) != NULL;
	if ((!src->has_eh || elf__find_section(elf, ".debug_frame", &shdr)) &&
	    elf_file__debug_cfi(f)) {
		src->debug = elf__section_data(elf, ".debug_frame", &src->debug_addr);
		src->has_debug = true;
	}
	src->go.present = !gopclntab__open(&src->go.table, elf);
	if (elf_file__is_v8(f) && elf__find_section(elf, ".text", &shdr)) {
		src->v8 = true;
		src->v8_text_lo = shdr.sh_addr;
		src->v8_text_hi = shdr.sh_addr + shdr.sh_size;
	}
	if (!src->has_eh && !src->has_debug && !src->go.present)
		return -ENOENT;
	src->fdes = elf_file__fdes_built(f);
	return src->fdes ? 0 : fde_source__get(&src->fde_src, elf);
}

void unwind_source__release(struct unwind_source *src)
{
	fde_source__release(&src->fde_src);
}

int unwind_table__build(struct unwind_table *t, struct elf_file *f)
{
	struct unwind_source src;
	int err;

	if (!elf_file__fdes(f))
		return -ENOMEM;
	err = unwind_source__get(&src, f);
	if (!err)
		err = unwind_table__build_source(t, &src);
	unwind_source__release(&src);
	return err;
}

int unwind_table__build_source(struct unwind_table *t, const struct unwind_source *src)
{
	struct builder b = { .t = t, .src = src };
	const struct fde_table *fdes = src->fdes;
	int err = 0;

	if (src->has_eh) {
		if (src->eh)
			err = cfi_section__read(&b.eh, src->eh, src->eh_addr, true);
		b.has_eh = true;
	}
	b.max_steps = (uint64_t)b.eh.size * UNWIND_TABLE_STEPS_PER_BYTE + 65536;
	t->nr_fdes = fde_table__nr(fdes);
	for (size_t i = 0; i < t->nr_fdes && !err; i++) {
		uint64_t lo, hi;

		fde_table__range(fdes, i, &lo, &hi);
		err = builder__add_range(&b, lo, hi);
	}
	if (err == -E2BIG)
		pr_warn("unwind: giving up on '%s': its CFI asks for over %zu rows or %llu steps",
			src->name, (size_t)UNWIND_TABLE_MAX_ROWS, (unsigned long long)b.max_steps);
	else if (b.nr_too_deep)
		pr_warn("unwind: left out %zu FDEs of '%s': remember_state nested over %d deep",
			b.nr_too_deep, src->name, CFI_STACK_MAX);
	if (!err && src->go.present && (err = go_function_rows(t, src)) == -E2BIG)
		pr_warn("unwind: giving up on '%s': its Go function table asks for over %zu rows",
			src->name, (size_t)UNWIND_TABLE_MAX_ROWS);
	cfi_section__release(&b.eh);
	cfi_section__release(&b.debug);
	if (err)
		return err;
	unwind_table__compact(t);
	if (src->go.present && (err = go_runtime_overlay(t, &src->go.table)))
		return err;
	if (src->v8 && (err = v8_overlay(t, src)))
		return err;
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
