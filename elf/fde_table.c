// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/log.h"
#include "common/search.h"
#include "elf/dwarf_cursor.h"
#include "elf/elf_file.h"
#include "elf/fde_table.h"

struct fde_table {
	uint64_t *starts; /* sorted, unique */
	uint64_t *ends;	  /* ends[i]: where the range that starts at starts[i] ends */
	size_t nr;
};

/* One CFI section being read, and the ranges read so far. */
struct cfi_reader {
	unsigned char ident[EI_NIDENT];
	uint8_t addr_size;
	Elf_Data *data;
	uint64_t sh_addr; /* where PC-relative values are relative to */
	bool eh_frame;
	/* The CIE of the last FDE: consecutive FDEs mostly share theirs. */
	Dwarf_Off cie_off;
	int cie_enc; /* its FDE pointer encoding, -1 when we cannot read it */
	bool cie_known;
	const struct fde_range *exec; /* the executable PT_LOAD segments */
	size_t nr_exec;
	struct fde_range *ranges;
	size_t nr, alloc;
};

int cfi__read_encoded(struct cursor *c, uint8_t enc, uint8_t addr_size, uint64_t *v)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		*v = cursor__u(c, addr_size);
		break;
	case DW_EH_PE_uleb128:
		*v = cursor__uleb(c);
		break;
	case DW_EH_PE_udata2:
		*v = cursor__u(c, 2);
		break;
	case DW_EH_PE_udata4:
		*v = cursor__u(c, 4);
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		*v = cursor__u(c, 8);
		break;
	case DW_EH_PE_sleb128:
		*v = cursor__sleb(c);
		break;
	case DW_EH_PE_sdata2:
		*v = (int16_t)cursor__u(c, 2);
		break;
	case DW_EH_PE_sdata4:
		*v = (int32_t)cursor__u(c, 4);
		break;
	default:
		return -1;
	}
	return c->bad ? -1 : 0;
}

int cfi__cie_augmentation(const Dwarf_CIE *cie, bool big_endian, uint8_t addr_size, int *enc,
			  bool *signal)
{
	const char *aug = cie->augmentation;
	struct cursor c;
	uint64_t v;

	*enc = DW_EH_PE_absptr;
	*signal = strchr(aug, 'S'); /* no data: wherever it is */
	if (!*aug)
		return 0;
	/* Without 'z', the augmentation data has no size ("eh", from g++ 2). */
	if (*aug != 'z' || !cie->augmentation_data)
		return -1;
	c = (struct cursor){
		.p = cie->augmentation_data,
		.end = cie->augmentation_data + cie->augmentation_data_size,
		.big_endian = big_endian,
	};
	for (aug++; *aug && !c.bad; aug++) {
		uint8_t e;

		switch (*aug) {
		case 'R': /* what follows it cannot change it */
			*enc = cursor__u(&c, 1);
			return c.bad ? -1 : 0;
		case 'L': /* the LSDA's encoding */
			cursor__skip(&c, 1);
			break;
		case 'P': /* the personality routine's encoding and address */
			e = cursor__u(&c, 1);
			if (e != DW_EH_PE_omit && ((e & 0x70) == DW_EH_PE_aligned ||
						   cfi__read_encoded(&c, e, addr_size, &v)))
				return -1;
			break;
		case 'S': /* signal frame; 'B' and 'G': AArch64's pointer authentication, MTE */
		case 'G':
			break;
		default:
			return -1;
		}
	}
	return c.bad ? -1 : 0;
}

/* The FDE pointer encoding of the CIE at @off, or -1 when it cannot be read. */
static int cfi_reader__cie_encoding(const struct cfi_reader *r, Dwarf_Off off)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	bool signal;
	int enc;

	if (dwarf_next_cfi(r->ident, r->data, r->eh_frame, off, &next, &e) || !dwarf_cfi_cie_p(&e))
		return -1;
	if (cfi__cie_augmentation(&e.cie, r->ident[EI_DATA] == ELFDATA2MSB, r->addr_size, &enc,
				  &signal))
		return -1;
	return enc;
}

static bool cfi_reader__in_exec(const struct cfi_reader *r, uint64_t addr)
{
	for (size_t i = 0; i < r->nr_exec; i++)
		if (addr >= r->exec[i].start && addr < r->exec[i].end)
			return true;
	return false;
}

/* Add the range of @fde, if its encoding is one we read and it starts in code; 0 or -ENOMEM. */
static int cfi_reader__add_fde(struct cfi_reader *r, const Dwarf_FDE *fde)
{
	uint64_t start, len, mask = r->addr_size == 4 ? UINT32_MAX : UINT64_MAX;
	struct cursor c = {
		.p = fde->start,
		.end = fde->end,
		.big_endian = r->ident[EI_DATA] == ELFDATA2MSB,
	};
	int enc;

	if (!r->cie_known || r->cie_off != fde->CIE_pointer) {
		r->cie_off = fde->CIE_pointer;
		r->cie_enc = cfi_reader__cie_encoding(r, fde->CIE_pointer);
		r->cie_known = true;
	}
	enc = r->cie_enc;
	/*
	 * Compilers emit PC-relative locations in .eh_frame and absolute ones
	 * in .debug_frame; data-, text- and function-relative ones need bases
	 * only a target's ABI knows, indirect ones memory we do not have.
	 */
	if (enc < 0 || enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect) ||
	    ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel))
		return 0;
	if (cfi__read_encoded(&c, enc, r->addr_size, &start) ||
	    cfi__read_encoded(&c, enc, r->addr_size, &len))
		return 0;
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		start += r->sh_addr + (fde->start - (const uint8_t *)r->data->d_buf);
	start &= mask;
	len &= mask;
	if (!len || start + len < start || !cfi_reader__in_exec(r, start))
		return 0;
	if (array__reserve(&r->ranges, &r->alloc, r->nr + 1, sizeof(*r->ranges)))
		return -ENOMEM;
	r->ranges[r->nr++] = (struct fde_range){ start, start + len };
	return 0;
}

/* Add the FDEs of CFI section @scn; 0 or -ENOMEM. Stops at the first entry it cannot parse. */
static int cfi_reader__read(struct cfi_reader *r, Elf_Data *data, uint64_t sh_addr, bool eh_frame)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int ret;

	r->data = data;
	r->sh_addr = sh_addr;
	r->eh_frame = eh_frame;
	r->cie_known = false;
	while ((ret = dwarf_next_cfi(r->ident, r->data, eh_frame, off, &next, &e)) == 0) {
		if (!dwarf_cfi_cie_p(&e) && cfi_reader__add_fde(r, &e.fde))
			return -ENOMEM;
		off = next;
	}
	if (ret < 0)
		pr_debug("fde_table: stopped reading %s at offset %llu: %s",
			 eh_frame ? ".eh_frame" : ".debug_frame", (unsigned long long)off,
			 dwarf_errmsg(-1));
	return 0;
}

int fde_source__get(struct fde_source *src, Elf *elf)
{
	const char *ident;
	size_t nr_phdrs;

	*src = (struct fde_source){ 0 };
	ident = elf_getident(elf, NULL);
	if (!ident)
		return 0; /* not ELF: no CFI */
	memcpy(src->ident, ident, EI_NIDENT);
	src->elf = true;
	if (!elf_getphdrnum(elf, &nr_phdrs)) {
		src->exec = calloc(nr_phdrs ? nr_phdrs : 1, sizeof(*src->exec));
		if (!src->exec)
			return -ENOMEM;
		for (size_t i = 0; i < nr_phdrs; i++) {
			GElf_Phdr phdr;

			if (gelf_getphdr(elf, i, &phdr) && phdr.p_type == PT_LOAD &&
			    (phdr.p_flags & PF_X))
				src->exec[src->nr_exec++] =
					(struct fde_range){ phdr.p_vaddr,
							    phdr.p_vaddr + phdr.p_memsz };
		}
	}
	src->eh = elf__section_data(elf, ".eh_frame", &src->eh_addr);
	src->debug = elf__section_data(elf, ".debug_frame", &src->debug_addr);
	return 0;
}

void fde_source__release(struct fde_source *src)
{
	free(src->exec);
	memset(src, 0, sizeof(*src));
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* Sort the ranges into @tab, one per start (the longest). 0 or -ENOMEM. */
static int fde_table__fill(struct fde_table *tab, struct fde_range *ranges, size_t nr)
{
	bool sorted = true;
	size_t n = 0;

	if (!nr)
		return 0;
	/* A section in address order already needs no sort: one pass to find out. */
	for (size_t i = 1; i < nr && sorted; i++)
		sorted = ranges[i - 1].start <= ranges[i].start;
	if (!sorted)
		qsort(ranges, nr, sizeof(*ranges), range_cmp);
	tab->starts = malloc(nr * sizeof(*tab->starts));
	tab->ends = malloc(nr * sizeof(*tab->ends));
	if (!tab->starts || !tab->ends)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		if (n && tab->starts[n - 1] == ranges[i].start) {
			if (ranges[i].end > tab->ends[n - 1])
				tab->ends[n - 1] = ranges[i].end;
			continue;
		}
		tab->starts[n] = ranges[i].start;
		tab->ends[n] = ranges[i].end;
		n++;
	}
	tab->nr = n;
	return 0;
}

struct fde_table *fde_table__new(Elf *elf)
{
	struct fde_source src;
	struct fde_table *tab;
	int err = fde_source__get(&src, elf);

	if (err) {
		errno = -err;
		return NULL;
	}
	tab = fde_table__build(&src);
	fde_source__release(&src);
	return tab;
}

struct fde_table *fde_table__build(const struct fde_source *src)
{
	struct cfi_reader r = { .exec = src->exec, .nr_exec = src->nr_exec };
	struct fde_table *tab;
	int err = 0;

	tab = calloc(1, sizeof(*tab));
	if (!tab)
		return NULL;
	if (!src->elf)
		return tab; /* not ELF: no CFI */
	memcpy(r.ident, src->ident, EI_NIDENT);
	r.addr_size = r.ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	if (src->eh)
		err = cfi_reader__read(&r, src->eh, src->eh_addr, true);
	/*
	 * Both: a program built with -fno-asynchronous-unwind-tables has its
	 * own functions in .debug_frame only, and .eh_frame all the same, for
	 * the C runtime's start files. Where both describe a function, the
	 * ranges are the same.
	 */
	if (!err && src->debug)
		err = cfi_reader__read(&r, src->debug, src->debug_addr, false);
	if (!err)
		err = fde_table__fill(tab, r.ranges, r.nr);
	free(r.ranges);
	if (err) {
		fde_table__free(tab);
		errno = -err;
		return NULL;
	}
	return tab;
}

void fde_table__free(struct fde_table *tab)
{
	if (!tab)
		return;
	free(tab->starts);
	free(tab->ends);
	free(tab);
}

int fde_table__lookup(const struct fde_table *tab, uint64_t vaddr, uint64_t *start)
{
	size_t i;

	if (!tab->nr || vaddr < tab->starts[0])
		return -ENOENT;
	i = search__last_le(tab->starts, tab->nr, vaddr);
	if (vaddr >= tab->ends[i])
		return -ENOENT;
	*start = tab->starts[i];
	return 0;
}

size_t fde_table__nr(const struct fde_table *tab)
{
	return tab->nr;
}

void fde_table__range(const struct fde_table *tab, size_t i, uint64_t *start, uint64_t *end)
{
	*start = tab->starts[i];
	*end = tab->ends[i];
}
