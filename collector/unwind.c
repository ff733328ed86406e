// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "bpf/profile.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "elf/elf_cache.h"
#include "elf/elf_file.h"
#include "elf/gopclntab.h"
#include "unwind.h"
#include "unwind_table.h"

/* Entries of a DWARF expression's stack: CFI expressions use two or three. */
#define EXPR_STACK 16

struct unwinder {
	struct elf_cache *elves; /* the mapped files (ours to free if @own_elves) */
	bool own_elves;
};

/* The registers of one frame; a bit of @known per register whose value is known. */
struct regs {
	uint64_t v[PROFILE_NR_REGS];
	uint32_t known;
	bool signal; /* interrupted here by a signal: @v[IP] is exact, not a return address */
};

/* The copy of the user stack: @size bytes that were at @base. */
struct stack_copy {
	uint64_t base;
	const unsigned char *data;
	size_t size;
};

#define REG_BIT(r) (1U << (r))
#define ALL_REGS (REG_BIT(PROFILE_NR_REGS) - 1)

struct unwinder *unwinder__new(struct elf_cache *elves)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->elves = elves;
	if (!elves) {
		u->elves = elf_cache__new();
		u->own_elves = true;
		if (!u->elves) {
			free(u);
			return NULL;
		}
	}
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->own_elves)
		elf_cache__free(u->elves);
	free(u);
}

/*
 * The ELF file (or vDSO) that @map maps, or NULL. Every 64-bit process of
 * this kernel maps the same vDSO as we do: ours is read.
 */
static struct elf_file *unwinder__map_file(struct unwinder *u, const struct proc_map *map)
{
	if (map->file)
		return elf_cache__file(u->elves, map->file);
	if (!strcmp(map->name, "[vdso]"))
		return elf_cache__vdso(u->elves, 0, map->start, map->end - map->start);
	return NULL;
}

struct elf_file *unwinder__table_file(struct unwinder *u, const struct proc_map *map,
				      uint64_t *bias)
{
	struct elf_file *f = unwinder__map_file(u, map);
	const struct elf_segment *seg;

	/* A Go binary has a table without CFI: its code keeps frame pointers (unwind_table.h). */
	if (!f ||
	    !(elf_file__eh_cfi(f) || elf_file__debug_cfi(f) ||
	      gopclntab__is_go(elf_file__elf(f))) ||
	    !(seg = elf_file__segment(f, map->pgoff)))
		return NULL;
	*bias = map->start - map->pgoff + seg->offset - seg->vaddr;
	return f;
}

/*
 * The CFI row for the code at @addr in @maps, or NULL when no mapped file
 * has CFI for it. The caller frees it.
 */
static Dwarf_Frame *unwinder__frame(struct unwinder *u, const struct proc_maps *maps, uint64_t addr)
{
	const struct proc_map *map = proc_maps__find(maps, addr);
	Dwarf_CFI *eh_cfi, *debug_cfi;
	Dwarf_Frame *frame;
	struct elf_file *f;
	uint64_t vaddr;

	if (!map || !(f = unwinder__map_file(u, map)) ||
	    elf_file__offset_to_vaddr(f, addr - map->start + map->pgoff, &vaddr))
		return NULL;
	eh_cfi = elf_file__eh_cfi(f);
	if (eh_cfi && !dwarf_cfi_addrframe(eh_cfi, vaddr, &frame))
		return frame;
	debug_cfi = elf_file__debug_cfi(f);
	if (debug_cfi && !dwarf_cfi_addrframe(debug_cfi, vaddr, &frame))
		return frame;
	return NULL;
}

static bool stack_read(const struct stack_copy *mem, uint64_t addr, uint64_t *val)
{
	if (addr < mem->base || mem->size < sizeof(*val) ||
	    addr - mem->base > mem->size - sizeof(*val))
		return false;
	memcpy(val, mem->data + (addr - mem->base), sizeof(*val));
	return true;
}

bool unwind_input__read(const struct unwind_input *in, uint64_t addr, uint64_t *val)
{
	struct stack_copy mem = { in->regs[PROFILE_REG_SP], in->stack, in->stack_size };

	return stack_read(&mem, addr, val);
}

/*
 * Evaluate the DWARF expression of a CFI rule, with @cfa for
 * DW_OP_call_frame_cfa. *@is_value tells whether the result is the value
 * itself (the expression ends with DW_OP_stack_value) or the address where
 * it is saved. Only what CFI uses is supported: registers, constants,
 * arithmetic, comparisons and reads from the stack copy, which is what
 * compilers and glibc's hand-written CFI (PLT entries, signal trampolines)
 * emit. 0, -ENOENT (a register not known), -EFAULT (a read outside the
 * copy, at *@out) or -EINVAL (anything else).
 */
static int eval_ops(const Dwarf_Op *ops, size_t nops, const struct regs *r, uint64_t cfa,
		    const struct stack_copy *mem, uint64_t *out, bool *is_value)
{
	uint64_t st[EXPR_STACK], a, b;
	size_t n = 0;

	*is_value = false;
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		int64_t offset;
		int reg = unwind_op_breg(op, &offset);

		if (n == EXPR_STACK)
			return -EINVAL;
		if (reg >= 0) {
			if (reg >= PROFILE_NR_REGS || !(r->known & REG_BIT(reg)))
				return -ENOENT;
			st[n++] = r->v[reg] + offset;
			continue;
		}
		if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
			st[n++] = op->atom - DW_OP_lit0;
			continue;
		}
		switch (op->atom) {
		case DW_OP_call_frame_cfa:
			st[n++] = cfa;
			continue;
		case DW_OP_const1u:
		case DW_OP_const1s:
		case DW_OP_const2u:
		case DW_OP_const2s:
		case DW_OP_const4u:
		case DW_OP_const4s:
		case DW_OP_const8u:
		case DW_OP_const8s:
		case DW_OP_constu:
		case DW_OP_consts:
			st[n++] = op->number;
			continue;
		case DW_OP_nop:
			continue;
		case DW_OP_stack_value:
			if (i != nops - 1)
				return -EINVAL;
			*is_value = true;
			continue;
		}
		if (!n)
			return -EINVAL;
		switch (op->atom) {
		case DW_OP_plus_uconst:
			st[n - 1] += op->number;
			continue;
		case DW_OP_deref:
			if (!stack_read(mem, st[n - 1], &st[n - 1])) {
				*out = st[n - 1];
				return -EFAULT;
			}
			continue;
		}
		if (n < 2)
			return -EINVAL;
		a = st[--n];
		b = st[n - 1];
		switch (op->atom) {
		case DW_OP_plus:
			b += a;
			break;
		case DW_OP_minus:
			b -= a;
			break;
		case DW_OP_and:
			b &= a;
			break;
		case DW_OP_or:
			b |= a;
			break;
		case DW_OP_shl:
			b = a < 64 ? b << a : 0;
			break;
		case DW_OP_shr:
			b = a < 64 ? b >> a : 0;
			break;
		case DW_OP_ge:
			b = (int64_t)b >= (int64_t)a;
			break;
		case DW_OP_gt:
			b = (int64_t)b > (int64_t)a;
			break;
		case DW_OP_le:
			b = (int64_t)b <= (int64_t)a;
			break;
		case DW_OP_lt:
			b = (int64_t)b < (int64_t)a;
			break;
		case DW_OP_eq:
			b = b == a;
			break;
		case DW_OP_ne:
			b = b != a;
			break;
		default:
			return -EINVAL;
		}
		st[n - 1] = b;
	}
	if (!n)
		return -EINVAL;
	*out = st[n - 1];
	return 0;
}

/* The CFA: 0, -EFAULT when it needs a read outside the copy (at *@cfa), or another -errno. */
static int frame_cfa(Dwarf_Frame *frame, const struct regs *r, const struct stack_copy *mem,
		     uint64_t *cfa)
{
	Dwarf_Op *ops;
	size_t nops;
	bool is_value;

	if (dwarf_frame_cfa(frame, &ops, &nops) || !nops)
		return -EINVAL;
	return eval_ops(ops, nops, r, 0, mem, cfa, &is_value);
}

/*
 * The caller's register @reg: 0 (in *@val), 1 (same as now), -ENOENT
 * (undefined), -EFAULT (saved outside the copy, at *@val) or another -errno.
 */
static int frame_register(Dwarf_Frame *frame, int reg, const struct regs *r, uint64_t cfa,
			  const struct stack_copy *mem, uint64_t *val)
{
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	bool is_value;
	int err;

	if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops))
		return -EINVAL;
	if (!nops)
		return ops ? -ENOENT : 1; /* undefined, or same_value */
	err = eval_ops(ops, nops, r, cfa, mem, val, &is_value);
	if (err)
		return err;
	if (!is_value && !stack_read(mem, *val, val))
		return -EFAULT;
	return 0;
}

/* Does the CFA expression read the frame pointer? */
static bool uses_frame_pointer(Dwarf_Frame *frame)
{
	Dwarf_Op *ops;
	size_t nops;
	int64_t offset;

	if (dwarf_frame_cfa(frame, &ops, &nops))
		return true;
	for (size_t i = 0; i < nops; i++)
		if (unwind_op_breg(&ops[i], &offset) == PROFILE_REG_BP)
			return true;
	return false;
}

int unwinder__leaf_caller(struct unwinder *u, const struct proc_maps *maps,
			  const struct unwind_input *in, uint64_t *ra)
{
	struct stack_copy mem = { in->regs[PROFILE_REG_SP], in->stack, in->stack_size };
	struct regs r = { .known = ALL_REGS };
	Dwarf_Frame *frame;
	uint64_t cfa;
	int err = -ENOENT;

	memcpy(r.v, in->regs, sizeof(r.v));
	frame = unwinder__frame(u, maps, r.v[PROFILE_REG_IP]);
	if (!frame)
		return -ENOENT;
	if (uses_frame_pointer(frame) || frame_cfa(frame, &r, &mem, &cfa) ||
	    frame_register(frame, PROFILE_REG_IP, &r, cfa, &mem, ra) || !*ra)
		goto out_free;
	/* A return address outside any code is not one, or code mapped since @maps. */
	err = proc_maps__find(maps, *ra) ? 0 : -ENXIO;
out_free:
	free(frame);
	return err;
}

enum step {
	STEP_OK,
	STEP_END,      /* the outermost frame: the stack is complete */
	STEP_NO_STACK, /* the caller's frame is above the copy */
	STEP_FAIL,     /* nothing usable tells where the caller is */
};

/*
 * Why reading @addr failed: above the copy's start, it is a frame the copy
 * was too short for; below, no frame at all (the stack grows down).
 */
static enum step read_failure(const struct stack_copy *mem, uint64_t addr)
{
	return addr >= mem->base ? STEP_NO_STACK : STEP_FAIL;
}

/* Callee-saved registers in the x86-64 psABI (rbx, rbp, r12-r15): the ones a caller keeps. */
static const int callee_saved[] = { 3, PROFILE_REG_BP, 12, 13, 14, 15 };

/*
 * One frame up through the frame-pointer chain, for code without CFI. A
 * zero frame pointer marks the outermost frame (the psABI asks it of
 * _start, and a process starts with it, in the dynamic linker's _start,
 * which has no CFI).
 */
static enum step step_frame_pointer(struct regs *r, const struct stack_copy *mem,
				    uint64_t *frame_bp)
{
	uint64_t bp = r->v[PROFILE_REG_BP], next_bp, ip;

	if ((r->known & REG_BIT(PROFILE_REG_BP)) && !bp)
		return STEP_END;
	if (!(r->known & REG_BIT(PROFILE_REG_BP)) || bp < r->v[PROFILE_REG_SP])
		return STEP_FAIL;
	*frame_bp = bp;
	if (!stack_read(mem, bp, &next_bp) || !stack_read(mem, bp + 8, &ip))
		return read_failure(mem, bp);
	r->known = REG_BIT(PROFILE_REG_BP) | REG_BIT(PROFILE_REG_SP) | REG_BIT(PROFILE_REG_IP);
	r->v[PROFILE_REG_BP] = next_bp;
	r->v[PROFILE_REG_SP] = bp + 16;
	r->v[PROFILE_REG_IP] = ip;
	r->signal = false;
	return ip ? STEP_OK : STEP_END;
}

/*
 * From the frame in @r to its caller's. @leaf: @r's ip is the sampled one,
 * exact. *@frame_bp: the frame's frame pointer when it was left by it, else 0.
 */
static enum step step(struct unwinder *u, const struct proc_maps *maps, struct regs *r,
		      const struct stack_copy *mem, bool leaf, uint64_t *frame_bp)
{
	uint64_t ip = r->v[PROFILE_REG_IP], cfa, val;
	struct regs caller = { .known = 0 };
	Dwarf_Frame *frame;
	enum step ret = STEP_FAIL;
	bool signal = false;
	int err;

	/* A return address is after the call, which may be the function's last instruction. */
	frame = unwinder__frame(u, maps, leaf || r->signal ? ip : ip - 1);
	*frame_bp = 0;
	if (!frame)
		return step_frame_pointer(r, mem, frame_bp);
	err = frame_cfa(frame, r, mem, &cfa);
	if (err == -EFAULT)
		ret = read_failure(mem, cfa);
	if (err || cfa <= r->v[PROFILE_REG_SP])
		goto out_free; /* unusable, or no progress: a loop */
	err = frame_register(frame, PROFILE_REG_IP, r, cfa, mem, &val);
	if (err == -ENOENT) {
		ret = STEP_END; /* "undefined": nothing called this frame */
		goto out_free;
	}
	if (err == -EFAULT)
		ret = read_failure(mem, val);
	if (err)
		goto out_free;
	caller.v[PROFILE_REG_IP] = val;
	caller.v[PROFILE_REG_SP] = cfa;
	caller.known = REG_BIT(PROFILE_REG_IP) | REG_BIT(PROFILE_REG_SP);
	for (size_t i = 0; i < sizeof(callee_saved) / sizeof(callee_saved[0]); i++) {
		int reg = callee_saved[i];

		err = frame_register(frame, reg, r, cfa, mem, &val);
		if (err == 1 && (r->known & REG_BIT(reg)))
			val = r->v[reg];
		else if (err)
			continue;
		caller.v[reg] = val;
		caller.known |= REG_BIT(reg);
	}
	dwarf_frame_info(frame, NULL, NULL, &signal);
	caller.signal = signal;
	*r = caller;
	ret = caller.v[PROFILE_REG_IP] ? STEP_OK : STEP_END;
out_free:
	free(frame);
	return ret;
}

size_t unwinder__unwind(struct unwinder *u, const struct proc_maps *maps,
			const struct unwind_input *in, const struct unwind_frame_hook *hook,
			uint64_t *ips, size_t max, enum unwind_stop *stop)
{
	struct stack_copy mem = { in->regs[PROFILE_REG_SP], in->stack, in->stack_size };
	struct regs r = { .known = ALL_REGS };
	uint64_t frame_bp;
	enum step ret;
	size_t nr = 0;

	*stop = UNWIND_MAX_FRAMES;
	memcpy(r.v, in->regs, sizeof(r.v));
	while (nr < max) {
		ips[nr++] = r.v[PROFILE_REG_IP];
		ret = step(u, maps, &r, &mem, nr == 1, &frame_bp);
		if (frame_bp && hook)
			ips[nr - 1] = hook->frame(hook->arg, in, frame_bp, ips[nr - 1]);
		switch (ret) {
		case STEP_OK:
			continue;
		case STEP_END:
			*stop = UNWIND_COMPLETE;
			break;
		case STEP_NO_STACK:
			*stop = UNWIND_STACK_ENDED;
			break;
		case STEP_FAIL:
			*stop = UNWIND_NO_FRAME;
			break;
		}
		break;
	}
	return nr;
}
