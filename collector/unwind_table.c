// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_table.h"

/* DWARF register numbers of x86-64. */
#define REG_BP 6
#define REG_SP 7
#define REG_RA 16
/* Where a signal trampoline's CFA expression reads the interrupted rsp: see profile.bpf.c. */
#define UCONTEXT_RSP 160

/* The pointer encoding and kind of the CIEs seen so far, by offset. */
struct cie_info {
	uint64_t offset;
	uint8_t fde_encoding; /* DW_EH_PE_* of FDE addresses */
	bool signal;	      /* 'S': its FDEs are signal trampolines */
};

struct cie_list {
	struct cie_info *v;
	size_t nr, alloc;
};

/* A section's bytes and the address they are loaded at, for pc-relative pointers. */
struct cfi_section {
	const unsigned char *data;
	size_t size;
	uint64_t addr;
	bool eh_frame;
};

static int table_push(struct unwind_table *t, uint64_t pc, const struct unwind_rule *rule)
{
	if (pc > UINT32_MAX)
		return 0; /* beyond what a row holds: that code keeps no rows */
	if (t->nr == t->alloc) {
		size_t alloc = t->alloc ? 2 * t->alloc : 1024;
		void *mem = alloc > SIZE_MAX / sizeof(*t->rows) ?
				    NULL :
				    realloc(t->rows, alloc * sizeof(*t->rows));

		if (!mem)
			return -ENOMEM;
		t->rows = mem;
		t->alloc = alloc;
	}
	t->rows[t->nr].pc = pc;
	t->rows[t->nr].rule = *rule;
	t->nr++;
	return 0;
}

/*
 * Read an encoded pointer (DW_EH_PE_*) at @p, which is at section offset
 * @off, into *@val; returns its size in bytes, or 0 when it is past @end or
 * of an encoding not used for code addresses.
 */
static size_t read_encoded(const struct cfi_section *sec, const unsigned char *p,
			   const unsigned char *end, uint8_t enc, uint64_t *val)
{
	size_t size;
	int64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = 2;
		break;
	default:
		return 0;
	}
	if (end - p < (ptrdiff_t)size)
		return 0;
	if (size == 8) {
		memcpy(&v, p, 8);
	} else if (size == 4) {
		int32_t w;
		uint32_t u;

		memcpy(&w, p, 4);
		memcpy(&u, p, 4);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? w : (int64_t)u;
	} else {
		int16_t w;
		uint16_t u;

		memcpy(&w, p, 2);
		memcpy(&u, p, 2);
		v = (enc & 0x0f) == DW_EH_PE_sdata2 ? w : (int64_t)u;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += sec->addr + (uint64_t)(p - sec->data);
		break;
	default:
		return 0; /* datarel, textrel, funcrel: not in FDEs of x86-64 code */
	}
	*val = v;
	return size;
}

/* The size of a pointer encoded with @enc, to skip it; 0 when unknown. */
static size_t encoded_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	}
	return 0;
}

/* Note a CIE's FDE pointer encoding from its augmentation ("zR", "zPLR", "zRS", ...). */
static int cie_list_add(struct cie_list *l, uint64_t offset, const Dwarf_CIE *cie,
			const struct cfi_section *sec)
{
	struct cie_info info = { offset, sec->eh_frame ? DW_EH_PE_absptr : DW_EH_PE_udata8, false };
	const char *aug = cie->augmentation;
	const uint8_t *data = cie->augmentation_data;
	size_t i = 0, size = cie->augmentation_data_size;

	for (; aug && *aug; aug++) {
		switch (*aug) {
		case 'z':
			break;
		case 'R':
			if (i < size)
				info.fde_encoding = data[i++];
			break;
		case 'L':
			i++;
			break;
		case 'P':
			if (i < size) {
				uint8_t enc = data[i++];

				i += encoded_size(enc);
			}
			break;
		case 'S':
			info.signal = true;
			break;
		default:
			aug = " "; /* unknown: what follows cannot be read */
			break;
		}
	}
	if (l->nr == l->alloc) {
		size_t alloc = l->alloc ? 2 * l->alloc : 16;
		void *mem = realloc(l->v, alloc * sizeof(*l->v));

		if (!mem)
			return -ENOMEM;
		l->v = mem;
		l->alloc = alloc;
	}
	l->v[l->nr++] = info;
	return 0;
}

/* The CIE at @offset; FDEs mostly follow their CIE, so look from the last one back. */
static const struct cie_info *cie_list_find(const struct cie_list *l, uint64_t offset)
{
	for (size_t i = l->nr; i-- > 0;)
		if (l->v[i].offset == offset)
			return &l->v[i];
	return NULL;
}

/* The register a DW_OP_breg* operation reads (its offset in *@off), or -1. */
static int op_breg(const Dwarf_Op *op, int64_t *off)
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

	return nops == 9 && op_breg(&ops[0], off) == REG_SP && op_breg(&ops[1], &zero) == REG_RA &&
	       zero == 0 && op_is_lit(&ops[2], &lit) && lit == 15 && ops[3].atom == DW_OP_and &&
	       op_is_lit(&ops[4], n) && ops[5].atom == DW_OP_ge && op_is_lit(&ops[6], &lit) &&
	       lit == 3 && ops[7].atom == DW_OP_shl && ops[8].atom == DW_OP_plus;
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
	reg = op_breg(&ops[0], &off);
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
	} else if (nops == 1 && op_breg(&ops[0], &bp_off) == REG_BP && bp_off >= INT16_MIN &&
		   bp_off <= INT16_MAX) {
		rule.bp = UNWIND_BP_AT_BP; /* a realigned frame saves rbp where rbp points */
		rule.bp_off = bp_off;
	} else {
		rule.bp = UNWIND_BP_LOST;
	}
	return rule;
}

/* The rows of the FDE covering [@lo, @hi), then a row that ends it. */
static int add_fde(struct unwind_table *t, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, bool signal)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	uint64_t addr = lo;
	int err;

	while (addr < hi) {
		Dwarf_Addr start, end;
		Dwarf_Frame *frame;
		struct unwind_rule rule;
		bool sig = false;

		if (dwarf_cfi_addrframe(cfi, addr, &frame))
			break;
		dwarf_frame_info(frame, &start, &end, &sig);
		rule = row_rule(frame, signal || sig);
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

/* The section named @name, with its bytes and load address. */
static bool find_section(Elf *elf, const char *name, struct cfi_section *sec, Elf_Data **data)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *s;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		s = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!s || strcmp(s, name))
			continue;
		if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return false;
		if (!gelf_getshdr(scn, &shdr))
			return false;
		*data = elf_getdata(scn, NULL);
		if (!*data || !(*data)->d_buf)
			return false;
		sec->data = (*data)->d_buf;
		sec->size = (*data)->d_size;
		sec->addr = shdr.sh_addr;
		return true;
	}
	return false;
}

/* Read every FDE of @sec into rows: 0 or -errno. */
static int read_section(struct unwind_table *t, Elf *elf, Elf_Data *data,
			const struct cfi_section *sec, Dwarf_CFI *cfi)
{
	struct cie_list cies = { 0 };
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off offset = 0, next;
	Dwarf_CFI_Entry entry;
	int ret, err = 0;

	while ((ret = dwarf_next_cfi(ident, data, sec->eh_frame, offset, &next, &entry)) == 0) {
		const struct cie_info *cie;
		const unsigned char *p, *end;
		uint64_t lo, len;
		size_t n;

		if (dwarf_cfi_cie_p(&entry)) {
			err = cie_list_add(&cies, offset, &entry.cie, sec);
			if (err)
				break;
			offset = next;
			continue;
		}
		offset = next;
		cie = cie_list_find(&cies, entry.fde.CIE_pointer);
		p = entry.fde.start;
		end = entry.fde.end;
		if (!cie || p < sec->data || end > sec->data + sec->size)
			continue;
		n = read_encoded(sec, p, end, cie->fde_encoding, &lo);
		/* The range is a length: the same size, not pc-relative. */
		if (!n || !read_encoded(sec, p + n, end, cie->fde_encoding & 0x0f, &len) || !len ||
		    lo + len < lo)
			continue;
		t->nr_fdes++;
		err = add_fde(t, cfi, lo, lo + len, cie->signal);
		if (err)
			break;
	}
	free(cies.v);
	if (err)
		return err;
	/* A corrupt entry ends the section: what came before it stands. */
	return ret < 0 && !t->nr ? -EINVAL : 0;
}

int unwind_table__build(struct unwind_table *t, Elf *elf, Dwarf_CFI *eh_cfi, Dwarf_CFI *debug_cfi)
{
	struct cfi_section sec = { 0 };
	Elf_Data *data;
	GElf_Ehdr ehdr;
	int err;

	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64)
		return -ENOTSUP;
	if (eh_cfi && find_section(elf, ".eh_frame", &sec, &data)) {
		sec.eh_frame = true;
		err = read_section(t, elf, data, &sec, eh_cfi);
	} else if (debug_cfi && find_section(elf, ".debug_frame", &sec, &data)) {
		err = read_section(t, elf, data, &sec, debug_cfi);
	} else {
		return -ENOENT;
	}
	if (err)
		return err;
	table_compact(t);
	return t->nr ? 0 : -ENOENT;
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
