// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/search.h"
#include "elf/elf_file.h"
#include "elf_symtab.h"

/*
 * Lookups search a sparse index of every 64th address first, then one block
 * of 64 addresses (8 cache lines). On a million symbols the index is 125 KiB
 * and stays in L2, where a plain binary search misses the cache at each of
 * its last ten steps.
 */
#define BLOCK_SHIFT 6

struct elf_symtab {
	struct elf_file *file; /* our reference */
	Elf *elf;	       /* @file's */
	/*
	 * The search keys apart from the symbols, so that the last steps of a
	 * binary search touch one cache line instead of several.
	 */
	uint64_t *addrs;
	uint64_t *index; /* addrs[i << BLOCK_SHIFT] */
	struct elf_sym *syms;
	size_t nr, nr_index;
	bool dynsym;
	char *plt_names; /* the PLT entries' names, "NAME@plt", one after another */
};

/* A symbol while the table is built: what the de-duplication needs besides elf_sym. */
struct cand {
	uint64_t addr, size;
	const char *name;
	uint32_t rank; /* binding: 0 GLOBAL, 1 WEAK, 2 LOCAL; 3 a PLT entry */
	uint32_t shndx;
};

static const char *elf_msg(void)
{
	return elf_errmsg(-1);
}

static uint32_t bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t lx, ly;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return 0;
}

/*
 * Where a symbol of size 0 in section @shndx may end at the latest: the
 * end of its section if that is loaded, else of the segment holding @addr.
 */
static uint64_t section_end(const struct elf_symtab *tab, const uint64_t *sec_end, size_t nr_secs,
			    uint32_t shndx, uint64_t addr)
{
	if (shndx < nr_secs && sec_end[shndx] > addr)
		return sec_end[shndx];
	size_t nr_segs;
	const struct elf_segment *segs = elf_file__segments(tab->file, &nr_segs);

	for (size_t i = 0; i < nr_segs; i++) {
		const struct elf_segment *s = &segs[i];

		if (addr >= s->vaddr && addr - s->vaddr < s->filesz)
			return s->vaddr + s->filesz;
	}
	return addr;
}

/* The end address of every SHF_ALLOC section, indexed by section number; 0 for others. */
static uint64_t *section_ends(Elf *elf, size_t *nr)
{
	Elf_Scn *scn = NULL;
	uint64_t *ends;
	size_t shnum;

	if (elf_getshdrnum(elf, &shnum))
		shnum = 0;
	ends = calloc(shnum ? shnum : 1, sizeof(*ends));
	if (!ends)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		size_t idx = elf_ndxscn(scn);
		GElf_Shdr shdr;

		if (idx < shnum && gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_ALLOC))
			ends[idx] = shdr.sh_addr + shdr.sh_size;
	}
	*nr = shnum;
	return ends;
}

/*
 * Collect the function symbols of @scn. libelf hands out the section in
 * memory representation (converted if the file's byte order differs), so it
 * is read in place rather than through a gelf_getsym() call and copy per
 * symbol; names point into the string table, not copied.
 */
static int collect_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, const char *path,
			   struct cand **out, size_t *nr_out)
{
	bool is64 = gelf_getclass(elf) == ELFCLASS64;
	bool thumb = false;
	Elf_Data *data, *strdata;
	const char *strs;
	size_t nr, strsz, n = 0;
	struct cand *cands;
	GElf_Ehdr ehdr;
	bool terminated;

	if (gelf_getehdr(elf, &ehdr))
		thumb = ehdr.e_machine == EM_ARM;
	data = elf_getdata(scn, NULL);
	strdata = elf_getdata(elf_getscn(elf, shdr->sh_link), NULL);
	/*
	 * A section of type SHT_NOBITS has a size but no bytes: libelf gives
	 * it a NULL buffer of that size, which a corrupt sh_link can name.
	 */
	if (!data || !strdata || data->d_type != ELF_T_SYM || (data->d_size && !data->d_buf) ||
	    (strdata->d_size && !strdata->d_buf)) {
		pr_debug("elf_symtab: cannot read the symbols of '%s': %s", path, elf_msg());
		return -EINVAL;
	}
	strs = strdata->d_buf;
	strsz = strdata->d_size;
	terminated = strsz && strs[strsz - 1] == '\0';
	nr = data->d_size / (is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
	cands = malloc((nr ? nr : 1) * sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		uint64_t value, size;
		uint32_t name;
		uint16_t shndx;
		unsigned char info;

		if (is64) {
			const Elf64_Sym *s = (const Elf64_Sym *)data->d_buf + i;

			value = s->st_value;
			size = s->st_size;
			name = s->st_name;
			shndx = s->st_shndx;
			info = s->st_info;
		} else {
			const Elf32_Sym *s = (const Elf32_Sym *)data->d_buf + i;

			value = s->st_value;
			size = s->st_size;
			name = s->st_name;
			shndx = s->st_shndx;
			info = s->st_info;
		}
		if ((ELF64_ST_TYPE(info) != STT_FUNC && ELF64_ST_TYPE(info) != STT_GNU_IFUNC) ||
		    !value || shndx == SHN_UNDEF || !name || name >= strsz)
			continue;
		/* A string table without a final NUL: check each name. */
		if (!terminated && !memchr(strs + name, '\0', strsz - name))
			continue;
		if (thumb)
			value &= ~1ULL;
		cands[n++] = (struct cand){
			.addr = value,
			.size = size,
			.name = strs + name,
			.rank = bind_rank(ELF64_ST_BIND(info)),
			.shndx = shndx >= SHN_LORESERVE ? UINT32_MAX : shndx,
		};
	}
	*out = cands;
	*nr_out = n;
	return 0;
}

struct sort_key {
	uint64_t key; /* address less the lowest one */
	size_t idx;   /* into the candidates */
};

/*
 * Sort by address with an LSD radix sort, one pass per byte in which the
 * addresses differ (3 or 4 for most files). qsort() with a comparator was
 * 70% of the loading time of a 145k-symbol library (Rust's libLLVM); this
 * took the whole load from 31 to 14 ms. Sorts @keys in place; 0 or -ENOMEM.
 */
static int radix_sort(struct sort_key *keys, size_t nr)
{
	size_t(*counts)[256] = calloc(8, sizeof(*counts));
	struct sort_key *tmp, *src = keys, *dst;

	tmp = malloc((nr ? nr : 1) * sizeof(*tmp));
	if (!counts || !tmp) {
		free(counts);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		for (int b = 0; b < 8; b++)
			counts[b][(keys[i].key >> (8 * b)) & 0xff]++;
	dst = tmp;
	for (int b = 0; b < 8; b++) {
		size_t pos = 0;
		struct sort_key *swap;

		/* All keys share this byte: the pass would not move anything. */
		if (counts[b][(src[0].key >> (8 * b)) & 0xff] == nr)
			continue;
		for (int d = 0; d < 256; d++) {
			size_t c = counts[b][d];

			counts[b][d] = pos;
			pos += c;
		}
		for (size_t i = 0; i < nr; i++)
			dst[counts[b][(src[i].key >> (8 * b)) & 0xff]++] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	free(counts);
	if (src == tmp)
		memcpy(keys, tmp, nr * sizeof(*keys));
	free(tmp);
	return 0;
}

/* Sort the candidates, keep one per address and give size-0 symbols their extent. */
static int build_table(struct elf_symtab *tab, const struct cand *cands, size_t nr)
{
	struct sort_key *keys;
	uint64_t *sec_end, min = UINT64_MAX;
	size_t nr_secs = 0, n = 0;
	int err = -ENOMEM;

	if (!nr)
		return 0;
	keys = malloc(nr * sizeof(*keys));
	tab->addrs = malloc(nr * sizeof(*tab->addrs));
	tab->syms = malloc(nr * sizeof(*tab->syms));
	sec_end = section_ends(tab->elf, &nr_secs);
	if (!keys || !tab->addrs || !tab->syms || !sec_end)
		goto out_free;
	for (size_t i = 0; i < nr; i++)
		if (cands[i].addr < min)
			min = cands[i].addr;
	for (size_t i = 0; i < nr; i++)
		keys[i] = (struct sort_key){ cands[i].addr - min, i };
	if (radix_sort(keys, nr))
		goto out_free;
	for (size_t i = 0; i < nr;) {
		const struct cand *best = &cands[keys[i].idx];
		uint64_t size = best->size;
		size_t j;

		for (j = i + 1; j < nr && keys[j].key == keys[i].key; j++) {
			const struct cand *c = &cands[keys[j].idx];

			if (c->size > size)
				size = c->size;
			if (cand_cmp(c, best) < 0)
				best = c;
		}
		tab->addrs[n] = best->addr;
		tab->syms[n] = (struct elf_sym){ best->addr, size, best->name };
		/* keys[0..n] are consumed: remember the section for the pass below. */
		keys[n].idx = best - cands;
		n++;
		i = j;
	}
	for (size_t i = 0; i < n; i++) {
		struct elf_sym *s = &tab->syms[i];
		uint64_t end;

		if (s->size)
			continue;
		end = section_end(tab, sec_end, nr_secs, cands[keys[i].idx].shndx, s->addr);
		if (i + 1 < n && tab->addrs[i + 1] < end)
			end = tab->addrs[i + 1];
		s->size = end - s->addr;
	}
	tab->nr = n;
	tab->nr_index = ((n - 1) >> BLOCK_SHIFT) + 1;
	tab->index = malloc(tab->nr_index * sizeof(*tab->index));
	if (!tab->index)
		goto out_free;
	for (size_t i = 0; i < tab->nr_index; i++)
		tab->index[i] = tab->addrs[i << BLOCK_SHIFT];
	err = 0;
out_free:
	free(sec_end);
	free(keys);
	return err;
}

/* A GOT slot, and the name of the symbol the dynamic loader puts in it. */
struct got_slot {
	uint64_t addr;
	const char *name;
	size_t len;
};

static int got_slot_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Add to @slots the GOT slots that relocation section @scn (SHT_RELA) fills
 * with a function's address (JUMP_SLOT, GLOB_DAT), named from the symbol
 * table it links to. Bytes a hostile file controls: every index and offset
 * is checked.
 */
static int collect_got_slots(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, struct got_slot **slots,
			     size_t *nr, size_t *alloc)
{
	Elf_Scn *symscn = elf_getscn(elf, shdr->sh_link);
	Elf_Data *rel = elf_getdata(scn, NULL), *syms, *strs;
	GElf_Shdr symshdr;
	size_t nr_rels, nr_syms;

	if (!rel || !rel->d_buf || rel->d_type != ELF_T_RELA || !symscn ||
	    !gelf_getshdr(symscn, &symshdr) || !(syms = elf_getdata(symscn, NULL)) ||
	    !syms->d_buf || syms->d_type != ELF_T_SYM ||
	    !(strs = elf_getdata(elf_getscn(elf, symshdr.sh_link), NULL)) || !strs->d_buf)
		return 0;
	nr_rels = rel->d_size / sizeof(Elf64_Rela);
	nr_syms = syms->d_size / sizeof(Elf64_Sym);
	for (size_t i = 0; i < nr_rels; i++) {
		const Elf64_Rela *r = (const Elf64_Rela *)rel->d_buf + i;
		uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
		const Elf64_Sym *s;
		const char *name;
		size_t len;

		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !sym ||
		    sym >= nr_syms)
			continue;
		s = (const Elf64_Sym *)syms->d_buf + sym;
		if ((ELF64_ST_TYPE(s->st_info) != STT_FUNC &&
		     ELF64_ST_TYPE(s->st_info) != STT_NOTYPE &&
		     ELF64_ST_TYPE(s->st_info) != STT_GNU_IFUNC) ||
		    !s->st_name || s->st_name >= strs->d_size)
			continue;
		name = (const char *)strs->d_buf + s->st_name;
		len = strnlen(name, strs->d_size - s->st_name);
		if (!len || len == strs->d_size - s->st_name)
			continue; /* no final NUL */
		if (*nr == *alloc) {
			size_t n = *alloc ? 2 * *alloc : 64;
			struct got_slot *more = realloc(*slots, n * sizeof(*more));

			if (!more)
				return -ENOMEM;
			*slots = more;
			*alloc = n;
		}
		(*slots)[(*nr)++] = (struct got_slot){ r->r_offset, name, len };
	}
	return 0;
}

/*
 * The PLT's entries, as perf and objdump name them: "puts@plt". An entry
 * has no symbol of its own, yet a program that calls a library function
 * in a loop spends samples there, which would otherwise be unnamed. Each
 * entry of .plt, .plt.sec and .plt.got jumps through a GOT slot
 * (`jmp *disp(%rip)`, after an endbr64 or a bnd prefix on some), which a
 * relocation (.rela.plt, .rela.dyn) names. x86-64 only. Appended to
 * @cands (@nr; room for them made here), their names into tab->plt_names.
 */
static int collect_plt(struct elf_symtab *tab, struct cand **cands, size_t *nr)
{
	struct got_slot *slots = NULL;
	size_t nr_slots = 0, alloc = 0, names_len = 0, used = 0;
	struct cand *more;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	int err = 0;

	if (!gelf_getehdr(tab->elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    gelf_getclass(tab->elf) != ELFCLASS64)
		return 0;
	while (!err && (scn = elf_nextscn(tab->elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_RELA)
			err = collect_got_slots(tab->elf, scn, &shdr, &slots, &nr_slots, &alloc);
	}
	if (err || !nr_slots)
		goto out;
	qsort(slots, nr_slots, sizeof(*slots), got_slot_cmp);
	for (size_t i = 0; i < nr_slots; i++)
		names_len += slots[i].len + sizeof("@plt");
	/* An entry takes its slot's name: there are at most as many as slots. */
	more = realloc(*cands, (*nr + nr_slots) * sizeof(*more));
	if (more)
		*cands = more;
	tab->plt_names = malloc(names_len);
	if (!more || !tab->plt_names) {
		err = -ENOMEM;
		goto out;
	}
	for (scn = NULL; (scn = elf_nextscn(tab->elf, scn)) != NULL;) {
		size_t shstrndx, entsize;
		const char *sname;
		const uint8_t *code;
		Elf_Data *data;
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR) || elf_getshdrstrndx(tab->elf, &shstrndx) ||
		    !(sname = elf_strptr(tab->elf, shstrndx, shdr.sh_name)) ||
		    (strcmp(sname, ".plt") && strcmp(sname, ".plt.sec") &&
		     strcmp(sname, ".plt.got")) ||
		    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		code = data->d_buf;
		entsize = shdr.sh_entsize == 8 || shdr.sh_entsize == 16 ? shdr.sh_entsize : 16;
		for (size_t e = 0; e + entsize <= data->d_size; e += entsize) {
			for (size_t o = e; o + 6 <= e + entsize; o++) {
				int32_t disp;
				struct got_slot key, *slot;

				if (code[o] != 0xff || code[o + 1] != 0x25)
					continue;
				memcpy(&disp, code + o + 2, sizeof(disp));
				key.addr = shdr.sh_addr + o + 6 + (int64_t)disp;
				slot = bsearch(&key, slots, nr_slots, sizeof(*slots), got_slot_cmp);
				if (!slot || used + slot->len + sizeof("@plt") > names_len)
					break;
				memcpy(tab->plt_names + used, slot->name, slot->len);
				memcpy(tab->plt_names + used + slot->len, "@plt", sizeof("@plt"));
				(*cands)[(*nr)++] = (struct cand){
					.addr = shdr.sh_addr + e,
					.size = entsize,
					.name = tab->plt_names + used,
					.rank = 3,
					.shndx = elf_ndxscn(scn),
				};
				used += slot->len + sizeof("@plt");
				break;
			}
		}
	}
out:
	free(slots);
	return err;
}

static int read_symbols(struct elf_symtab *tab, const char *path)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr shdr, symtab_shdr, dynsym_shdr;
	struct cand *cands = NULL;
	size_t nr = 0;
	int err;

	while ((scn = elf_nextscn(tab->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			symtab_shdr = shdr;
		} else if (shdr.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dynsym_shdr = shdr;
		}
	}
	if (symtab) {
		err = collect_symbols(tab->elf, symtab, &symtab_shdr, path, &cands, &nr);
	} else if (dynsym) {
		tab->dynsym = true;
		err = collect_symbols(tab->elf, dynsym, &dynsym_shdr, path, &cands, &nr);
	} else {
		pr_debug("elf_symtab: no symbol table in '%s'", path);
		err = 0;
	}
	if (!err)
		err = collect_plt(tab, &cands, &nr);
	if (err) {
		free(cands);
		return err;
	}
	err = build_table(tab, cands, nr);
	free(cands);
	return err;
}

struct elf_symtab *elf_symtab__new(struct elf_file *file)
{
	struct elf_symtab *tab;
	int err;

	tab = calloc(1, sizeof(*tab));
	if (!tab)
		return NULL;
	tab->file = elf_file__get(file);
	tab->elf = elf_file__elf(file);
	err = read_symbols(tab, elf_file__name(file));
	if (err) {
		elf_symtab__free(tab);
		errno = -err;
		return NULL;
	}
	return tab;
}

/* A symbol table of @file, which is dropped: NULL (with errno) when @file is. */
static struct elf_symtab *elf_symtab__from_file(struct elf_file *file)
{
	struct elf_symtab *tab;
	int err;

	if (!file)
		return NULL;
	tab = elf_symtab__new(file);
	err = errno;
	elf_file__put(file);
	errno = err;
	return tab;
}

struct elf_symtab *elf_symtab__open_fd(int fd, const char *path)
{
	return elf_symtab__from_file(elf_file__open_fd(fd, path));
}

struct elf_symtab *elf_symtab__open(const char *path)
{
	return elf_symtab__from_file(elf_file__open(path));
}

struct elf_symtab *elf_symtab__open_mem(const void *image, size_t size, const char *name)
{
	void *copy = malloc(size ? size : 1);

	if (!copy)
		return NULL;
	memcpy(copy, image, size);
	return elf_symtab__from_file(elf_file__from_image(copy, size, name));
}

void elf_symtab__free(struct elf_symtab *tab)
{
	if (!tab)
		return;
	free(tab->addrs);
	free(tab->index);
	free(tab->syms);
	free(tab->plt_names);
	elf_file__put(tab->file);
	free(tab);
}

/* The index of the last of the @n (> 0) sorted @a that is <= @key, given a[0] <= @key. */
const struct elf_sym *elf_symtab__lookup(const struct elf_symtab *tab, uint64_t vaddr)
{
	const struct elf_sym *sym;
	size_t lo, n;

	if (!tab->nr || vaddr < tab->addrs[0])
		return NULL;
	lo = search__last_le(tab->index, tab->nr_index, vaddr) << BLOCK_SHIFT;
	n = tab->nr - lo < (1 << BLOCK_SHIFT) ? tab->nr - lo : (1 << BLOCK_SHIFT);
	sym = &tab->syms[lo + search__last_le(tab->addrs + lo, n, vaddr)];
	return vaddr - sym->addr < sym->size ? sym : NULL;
}

const struct elf_sym *elf_symtab__syms(const struct elf_symtab *tab, size_t *nr)
{
	*nr = tab->nr;
	return tab->syms;
}

Elf *elf_symtab__elf(const struct elf_symtab *tab)
{
	return tab->elf;
}

struct elf_file *elf_symtab__file(const struct elf_symtab *tab)
{
	return tab->file;
}

bool elf_symtab__from_dynsym(const struct elf_symtab *tab)
{
	return tab->dynsym;
}

const char *elf_symtab__build_id(const struct elf_symtab *tab)
{
	return elf_file__build_id(tab->file);
}

int elf_symtab__offset_to_vaddr(const struct elf_symtab *tab, uint64_t file_offset, uint64_t *vaddr)
{
	return elf_file__offset_to_vaddr(tab->file, file_offset, vaddr);
}

static bool version_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' ||
	       c == '$' || (!first && c >= '0' && c <= '9');
}

size_t elf_sym__unversioned_len(const char *name)
{
	const char *at = strchr(name, '@'), *v;

	if (!at || at == name || !strcmp(at, "@plt"))
		return strlen(name);
	v = at[1] == '@' ? at + 2 : at + 1;
	if (!version_char(*v, true))
		return strlen(name);
	while (*++v)
		if (!version_char(*v, false))
			return strlen(name);
	return at - name;
}
