// SPDX-License-Identifier: GPL-2.0-only
/*
 * The layouts read here are Go's own (runtime/symtab.go, runtime/runtime2.go
 * and cmd/link/internal/ld/pcln.go of each release): the offsets below are
 * theirs on amd64.
 */
#include <errno.h>
#include <string.h>

#include "elf/elf_file.h"
#include "elf/gopclntab.h"

/* pcHeader.magic of each layout read, and the first release that wrote it. */
#define MAGIC_GO116 0xfffffffaU
#define MAGIC_GO118 0xfffffff0U
#define MAGIC_GO120 0xfffffff1U

/* _FUNCDATA_InlTree and _PCDATA_InlTreeIndex, the same in every release read. */
#define FUNCDATA_INL_TREE 3
#define PCDATA_INL_TREE_INDEX 2

/* Where moduledata.gofunc is (1.18 on), and moduledata.text to check the guess by. */
#define MODULEDATA_TEXT 176
#define MODULEDATA_GOFUNC_GO118 304
#define MODULEDATA_GOFUNC_GO120 320 /* 1.20 added covctrs and ecovctrs before it */

/* The most bytes one value table may take: a function of a few MiB of code. */
#define MAX_PCVALUE_STEPS (1U << 20)

static bool region_has(const struct gopclntab_region *r, uint64_t addr, uint64_t len)
{
	return r->data && addr >= r->addr && len <= r->size && addr - r->addr <= r->size - len;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The 32-bit word at @off of the table, in *@v: false past its end. */
static bool table32(const struct gopclntab *t, size_t off, uint32_t *v)
{
	if (off > t->table.size || t->table.size - off < 4)
		return false;
	*v = get32(t->table.data + off);
	return true;
}

static bool table64(const struct gopclntab *t, size_t off, uint64_t *v)
{
	if (off > t->table.size || t->table.size - off < 8)
		return false;
	*v = get64(t->table.data + off);
	return true;
}

/* The NUL-terminated string at @off of a part [@base, @base + @size), or NULL. */
static const char *table_string(const struct gopclntab *t, size_t base, size_t size, uint64_t off)
{
	const char *s;

	if (off >= size)
		return NULL;
	s = (const char *)t->table.data + base + off;
	return memchr(s, '\0', size - off) ? s : NULL;
}

/*
 * The header's offsets are of parts that follow it in this order; each
 * part's size is up to the next one, the last's up to the table's end.
 */
static int set_parts(struct gopclntab *t, uint64_t funcnames, uint64_t cutab, uint64_t filetab,
		     uint64_t pctab, uint64_t functab)
{
	uint64_t end = t->table.size;

	if (!(funcnames <= cutab && cutab <= filetab && filetab <= pctab && pctab <= functab &&
	      functab <= end))
		return -EINVAL;
	t->funcnames = funcnames;
	t->cutab = cutab;
	t->filetab = filetab;
	t->pctab = pctab;
	t->functab = functab;
	t->funcnames_size = cutab - funcnames;
	t->cutab_size = filetab - cutab;
	t->filetab_size = pctab - filetab;
	t->pctab_size = functab - pctab;
	t->functab_size = end - functab;
	/* nfunc entries and the one that ends the last function. */
	if ((uint64_t)t->nr_funcs + 1 > t->functab_size / t->func_entry_size)
		return -EINVAL;
	return 0;
}

int gopclntab__open_regions(struct gopclntab *t, const struct gopclntab_region *table,
			    const struct gopclntab_region *rodata, uint64_t gofunc)
{
	uint64_t nfunc, off[5];
	uint32_t magic;
	size_t hdr;

	*t = (struct gopclntab){ .table = *table };
	if (rodata)
		t->rodata = *rodata;
	if (!table32(t, 0, &magic))
		return -EINVAL;
	switch (magic) {
	case MAGIC_GO116:
		t->version = 116;
		break;
	case MAGIC_GO118:
		t->version = 118;
		break;
	case MAGIC_GO120:
		t->version = 120;
		break;
	default:
		return (magic & 0xfffffff0U) == 0xfffffff0U || magic == 0xfffffffbU ? -ENOTSUP :
										      -EINVAL;
	}
	/* pad, pad, minLC (1 on x86), ptrSize */
	if (t->table.size < 8 || t->table.data[4] || t->table.data[5] || t->table.data[6] != 1 ||
	    t->table.data[7] != 8)
		return -EINVAL;
	/* nfunc, nfiles, [textStart,] funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset */
	hdr = 8;
	if (!table64(t, hdr, &nfunc) || nfunc >= UINT32_MAX)
		return -EINVAL;
	hdr += 16;
	if (t->version >= 118) {
		if (!table64(t, hdr, &t->text_start))
			return -EINVAL;
		hdr += 8;
	}
	for (int i = 0; i < 5; i++, hdr += 8)
		if (!table64(t, hdr, &off[i]))
			return -EINVAL;
	t->nr_funcs = nfunc;
	t->func_entry_size = t->version >= 118 ? 8 : 16;
	if (set_parts(t, off[0], off[1], off[2], off[3], off[4]))
		return -EINVAL;
	t->gofunc = gofunc;
	return 0;
}

/* The entry address of function table entry @i (nr_funcs: the end of the last). */
static bool entry_pc(const struct gopclntab *t, uint32_t i, uint64_t *pc)
{
	size_t at = t->functab + (size_t)i * t->func_entry_size;
	uint32_t off;

	if (t->version < 118)
		return table64(t, at, pc);
	if (!table32(t, at, &off))
		return false;
	*pc = t->text_start + off;
	return true;
}

/* The offset into the table of function @i's _func. */
static bool func_offset(const struct gopclntab *t, uint32_t i, size_t *at)
{
	size_t entry = t->functab + (size_t)i * t->func_entry_size;
	uint64_t off;
	uint32_t off32;

	if (t->version < 118) {
		if (!table64(t, entry + 8, &off))
			return false;
	} else {
		if (!table32(t, entry + 4, &off32))
			return false;
		off = off32;
	}
	/* Relative to the function table (pclntab in Go's words). */
	if (off > t->table.size - t->functab)
		return false;
	*at = t->functab + off;
	return true;
}

int gopclntab__find(const struct gopclntab *t, uint64_t pc, uint32_t *func, uint64_t *lo,
		    uint64_t *hi)
{
	uint32_t a = 0, b = t->nr_funcs;
	uint64_t entry;

	if (!t->nr_funcs)
		return -ENOENT;
	/* The last entry at or below @pc. */
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;

		if (!entry_pc(t, mid, &entry))
			return -ENOENT;
		if (entry <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	if (!a || !entry_pc(t, a - 1, lo) || !entry_pc(t, a, hi) || pc >= *hi)
		return -ENOENT;
	*func = a - 1;
	return 0;
}

int gopclntab__text(const struct gopclntab *t, uint64_t *lo, uint64_t *hi)
{
	return t->nr_funcs && entry_pc(t, 0, lo) && entry_pc(t, t->nr_funcs, hi) && *lo < *hi ?
		       0 :
		       -ENOENT;
}

/*
 * A function's _func, as the fields this reader uses: where they are in
 * each layout (1.16: an 8-byte entry first; 1.20: startLine before funcID).
 */
struct func_info {
	uint64_t entry;
	uint32_t nameoff, pcsp, pcfile, pcln, npcdata, cu_offset;
	uint8_t flag, nfuncdata;
	size_t pcdata; /* offset into the table of pcdata[0] */
};

static bool read_func(const struct gopclntab *t, uint32_t i, struct func_info *f)
{
	size_t at, fixed;

	if (!func_offset(t, i, &at) || !entry_pc(t, i, &f->entry))
		return false;
	if (t->version < 118) {
		fixed = 44;
		at += 4; /* the 8-byte entry: the 32-bit fields are 4 further than in 1.18 */
	} else {
		fixed = t->version >= 120 ? 44 : 40;
	}
	if (!table32(t, at + 4, &f->nameoff) || !table32(t, at + 16, &f->pcsp) ||
	    !table32(t, at + 20, &f->pcfile) || !table32(t, at + 24, &f->pcln) ||
	    !table32(t, at + 28, &f->npcdata) || !table32(t, at + 32, &f->cu_offset))
		return false;
	if (t->version < 118)
		at -= 4;
	if (at + fixed > t->table.size)
		return false;
	f->nfuncdata = t->table.data[at + fixed - 1];
	/* Right after funcID; a pad byte before 1.17, which Go wrote as 0. */
	f->flag = t->table.data[at + fixed - 3];
	f->pcdata = at + fixed;
	return f->npcdata <= (t->table.size - f->pcdata) / 4;
}

static const char *func_name(const struct gopclntab *t, uint32_t nameoff)
{
	return table_string(t, t->funcnames, t->funcnames_size, nameoff);
}

const char *gopclntab__name(const struct gopclntab *t, uint32_t func)
{
	struct func_info f;

	return read_func(t, func, &f) ? func_name(t, f.nameoff) : NULL;
}

int gopclntab__find_name(const struct gopclntab *t, const char *name, uint64_t *lo, uint64_t *hi)
{
	for (uint32_t i = 0; i < t->nr_funcs; i++) {
		const char *n = gopclntab__name(t, i);

		if (n && !strcmp(n, name))
			return entry_pc(t, i, lo) && entry_pc(t, i + 1, hi) && *lo < *hi ? 0 :
											   -ENOENT;
	}
	return -ENOENT;
}

/* An unsigned LEB128 of the value tables, at *@p below @end: false when cut short. */
static bool read_uvarint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	uint32_t shift = 0, r = 0;

	while (*p < end && shift < 35) {
		uint8_t b = *(*p)++;

		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
		shift += 7;
	}
	return false;
}

/*
 * A walk through value table @off (into pctab) of function @f: each step
 * is a zigzag value delta (0 ends the table, except first) and a pc delta
 * (times minLC, 1 on x86), runtime.step's format; the value holds from
 * the step's pc to the next one's.
 */
struct pc_steps {
	const uint8_t *p, *end;
	uint64_t pc;   /* where the next stretch starts */
	uint32_t val;  /* the value, as Go's int32, in unsigned arithmetic: no overflow */
	uint32_t step; /* steps taken */
	bool ended;    /* at the table's end, not at a corruption */
};

static bool pc_steps__start(struct pc_steps *s, const struct gopclntab *t,
			    const struct func_info *f, uint32_t off)
{
	if (!off || off >= t->pctab_size)
		return false;
	*s = (struct pc_steps){
		.p = t->table.data + t->pctab + off,
		.end = t->table.data + t->pctab + t->pctab_size,
		.pc = f->entry,
		.val = UINT32_MAX, /* -1 */
	};
	return true;
}

/* The next stretch, [*@lo, *@hi) with value *@val: false at the table's end or a corruption. */
static bool pc_steps__next(struct pc_steps *s, uint64_t *lo, uint64_t *hi, int32_t *val)
{
	uint32_t uv, pcdelta;

	if (s->step >= MAX_PCVALUE_STEPS || !read_uvarint(&s->p, s->end, &uv))
		return false;
	if (!uv && s->step) {
		s->ended = true;
		return false;
	}
	if (!read_uvarint(&s->p, s->end, &pcdelta))
		return false;
	s->step++;
	s->val += (uv & 1) ? ~(uv >> 1) : uv >> 1;
	*lo = s->pc;
	s->pc += pcdelta;
	*hi = s->pc;
	*val = (int32_t)s->val;
	return true;
}

/* The value that table @off (0: none) of function @f gives @pc: runtime.pcvalue(). */
static bool pcvalue(const struct gopclntab *t, const struct func_info *f, uint32_t off, uint64_t pc,
		    int32_t *val)
{
	struct pc_steps s;
	uint64_t lo, hi;

	if (!pc_steps__start(&s, t, f, off))
		return false;
	while (pc_steps__next(&s, &lo, &hi, val))
		if (pc < hi)
			return true;
	return false;
}

int gopclntab__func(const struct gopclntab *t, uint32_t func, struct gopclntab_func *out)
{
	struct func_info f;

	if (func >= t->nr_funcs || !read_func(t, func, &f) || !entry_pc(t, func + 1, &out->hi) ||
	    out->hi <= f.entry)
		return -ENOENT;
	out->lo = f.entry;
	out->flags = f.flag;
	return 0;
}

int gopclntab__sp_depths(const struct gopclntab *t, uint32_t func,
			 int (*fn)(uint64_t pc, int32_t depth, void *arg), void *arg)
{
	uint64_t lo, hi, end = 0;
	struct func_info f;
	struct pc_steps s;
	int32_t depth;

	if (func >= t->nr_funcs || !read_func(t, func, &f) || !entry_pc(t, func + 1, &end) ||
	    !pc_steps__start(&s, t, &f, f.pcsp))
		return -ENOENT;
	while (s.pc < end && pc_steps__next(&s, &lo, &hi, &depth)) {
		int err;

		if (hi == lo) /* an empty stretch: corrupt */
			return -ENOENT;
		err = fn(lo, depth, arg);
		if (err)
			return err;
	}
	/* A table may end before the next function does: the padding between them. */
	return s.pc >= end || s.ended ? 0 : -ENOENT;
}

/* The source file and line of @pc in function @f, into @loc. */
static void position(const struct gopclntab *t, const struct func_info *f, uint64_t pc,
		     struct gopclntab_loc *loc)
{
	int32_t file, line;
	uint32_t off;

	loc->file = NULL;
	loc->line = 0;
	if (pcvalue(t, f, f->pcln, pc, &line) && line > 0)
		loc->line = line;
	if (!pcvalue(t, f, f->pcfile, pc, &file) || file < 0)
		return;
	/* The file's index in its compilation unit's part of cutab: an offset into filetab. */
	if ((uint64_t)f->cu_offset + file >= t->cutab_size / 4 ||
	    !table32(t, t->cutab + ((size_t)f->cu_offset + file) * 4, &off) || off == UINT32_MAX)
		return;
	loc->file = table_string(t, t->filetab, t->filetab_size, off);
}

/*
 * Does function @f have an inline tree: false when not; true with its ELF
 * address in *@addr, 0 when it cannot be found (the table is corrupt, or
 * go:func.* was not found).
 */
static bool inline_tree(const struct gopclntab *t, const struct func_info *f, uint64_t *addr)
{
	size_t at = f->pcdata + (size_t)f->npcdata * 4;
	uint32_t off;

	*addr = 0;
	if (f->nfuncdata <= FUNCDATA_INL_TREE)
		return false;
	if (t->version < 118) {
		/* Pointers, 8-aligned in the file as in memory; 0 is none. */
		at += (t->table.addr + at) & 4;
		return !table64(t, at + FUNCDATA_INL_TREE * 8, addr) || *addr;
	}
	if (!table32(t, at + FUNCDATA_INL_TREE * 4, &off))
		return true;
	if (off == UINT32_MAX)
		return false;
	if (t->gofunc)
		*addr = t->gofunc + off;
	return true;
}

/* Entry @ix of the inline tree at @tree: the inlined function's name offset and the call's pc. */
static bool inlined_call(const struct gopclntab *t, uint64_t tree, int32_t ix, uint32_t *nameoff,
			 uint32_t *parent_pc)
{
	/* 1.20: funcID, 3 pad, nameOff, parentPc, startLine; before: parent, funcID, pad, file, line, func_, parentPc. */
	uint64_t size = t->version >= 120 ? 16 : 20, name_at = t->version >= 120 ? 4 : 12;
	uint64_t at = tree + (uint64_t)ix * size;
	const uint8_t *p;

	if (ix < 0 || !region_has(&t->rodata, at, size))
		return false;
	p = t->rodata.data + (at - t->rodata.addr);
	*nameoff = get32(p + name_at);
	*parent_pc = get32(p + size - (t->version >= 120 ? 8 : 4));
	return true;
}

int gopclntab__lookup(const struct gopclntab *t, uint64_t pc, struct gopclntab_loc *locs)
{
	uint64_t lo, hi, tree, at = pc;
	uint32_t func, index_table = 0;
	struct func_info f;
	bool whole = true;
	int nr = 0;
	int32_t ix;

	if (gopclntab__find(t, pc, &func, &lo, &hi) || !read_func(t, func, &f))
		return 0;
	/* A tree that cannot be read: the chain cannot be either. */
	if (inline_tree(t, &f, &tree) && !tree)
		whole = false;
	if (tree && f.npcdata > PCDATA_INL_TREE_INDEX &&
	    !table32(t, f.pcdata + PCDATA_INL_TREE_INDEX * 4, &index_table))
		whole = false;
	/*
	 * Each inlined function: its name from the tree, its position at @at;
	 * then @at becomes the call's, in the function it was inlined into,
	 * whose index the same table gives.
	 */
	while (tree && index_table && nr < GOPCLNTAB_MAX_DEPTH - 1) {
		uint32_t nameoff, parent_pc;

		if (!pcvalue(t, &f, index_table, at, &ix)) {
			whole = false;
			break;
		}
		if (ix < 0)
			break;
		if (!inlined_call(t, tree, ix, &nameoff, &parent_pc) ||
		    !(locs[nr].name = func_name(t, nameoff)) || parent_pc >= hi - lo ||
		    lo + parent_pc == at) {
			whole = false;
			break;
		}
		position(t, &f, at, &locs[nr]);
		nr++;
		at = lo + parent_pc;
	}
	/*
	 * A chain that could not be read to its end: the machine function
	 * alone, at no line (the one at @pc is an inlined function's).
	 */
	if (!whole)
		nr = 0;
	locs[nr].name = func_name(t, f.nameoff);
	if (!locs[nr].name) /* a corrupt name: no answer rather than a wrong one */
		return 0;
	if (whole)
		position(t, &f, at, &locs[nr]);
	else
		locs[nr].file = NULL, locs[nr].line = 0;
	return nr + 1;
}

static bool region_of(Elf *elf, const char *name, struct gopclntab_region *r)
{
	Elf_Data *d = elf__section_data(elf, name, &r->addr);

	if (!d || !d->d_buf)
		return false;
	r->data = d->d_buf;
	r->size = d->d_size;
	return true;
}

/*
 * The table's section: .gopclntab, or .data.rel.ro.gopclntab in a
 * position-independent executable Go linked itself.
 */
static Elf_Data *table_section(Elf *elf, uint64_t *addr)
{
	Elf_Data *d = elf__section_data(elf, ".gopclntab", addr);

	return d ? d : elf__section_data(elf, ".data.rel.ro.gopclntab", addr);
}

/*
 * A position-independent executable that the system's linker linked (cgo)
 * has the table inside .data.rel.ro, with no section of its own: the
 * first 8-aligned header there that reads as one. 0 or -ENOENT.
 */
static int find_in_relro(struct gopclntab *t, Elf *elf, const struct gopclntab_region *rodata)
{
	static const uint8_t magics[][4] = { { 0xfa, 0xff, 0xff, 0xff },
					     { 0xf0, 0xff, 0xff, 0xff },
					     { 0xf1, 0xff, 0xff, 0xff } };
	struct gopclntab_region relro, table;
	static const uint8_t tail[4] = { 0, 0, 1, 8 };

	if (!region_of(elf, ".data.rel.ro", &relro))
		return -ENOENT;
	for (size_t off = 0; off + 8 <= relro.size; off += 8) {
		const uint8_t *p = relro.data + off;
		bool magic = false;

		for (size_t i = 0; i < sizeof(magics) / sizeof(*magics); i++)
			magic |= !memcmp(p, magics[i], 4);
		if (!magic || memcmp(p + 4, tail, 4))
			continue;
		table = (struct gopclntab_region){ relro.addr + off, p, relro.size - off };
		if (!gopclntab__open_regions(t, &table, rodata, 0) && t->nr_funcs)
			return 0;
	}
	return -ENOENT;
}

/*
 * moduledata.gofunc (Go 1.18 on): runtime.firstmoduledata is in .noptrdata
 * and starts with a pointer to the table; its text field must be the
 * table's text start, and gofunc must be in @rodata. 0 when not found.
 */
static uint64_t find_gofunc(Elf *elf, const struct gopclntab *t)
{
	size_t at = t->version >= 120 ? MODULEDATA_GOFUNC_GO120 : MODULEDATA_GOFUNC_GO118;
	struct gopclntab_region data;

	if (!region_of(elf, ".noptrdata", &data))
		return 0;
	for (size_t off = 0; off + at + 8 <= data.size; off += 8) {
		const uint8_t *m = data.data + off;
		uint64_t gofunc;

		if (get64(m) != t->table.addr || get64(m + 8) != t->table.addr + t->funcnames ||
		    get64(m + MODULEDATA_TEXT) != t->text_start)
			continue;
		gofunc = get64(m + at);
		return region_has(&t->rodata, gofunc, 1) ? gofunc : 0;
	}
	return 0;
}

bool gopclntab__is_go(Elf *elf)
{
	GElf_Shdr shdr;

	return elf__find_section(elf, ".gopclntab", &shdr) ||
	       elf__find_section(elf, ".data.rel.ro.gopclntab", &shdr) ||
	       elf__find_section(elf, ".go.buildinfo", &shdr);
}

int gopclntab__open(struct gopclntab *t, Elf *elf)
{
	struct gopclntab_region table, rodata = { 0 };
	Elf_Data *d;
	int err;

	/* Inline trees are in .rodata: without it, none. */
	if (!region_of(elf, ".rodata", &rodata))
		rodata = (struct gopclntab_region){ 0 };
	d = table_section(elf, &table.addr);
	if (d && d->d_buf) {
		table.data = d->d_buf;
		table.size = d->d_size;
		err = gopclntab__open_regions(t, &table, &rodata, 0);
	} else if (elf__find_section(elf, ".go.buildinfo", &(GElf_Shdr){ 0 })) {
		err = find_in_relro(t, elf, &rodata);
	} else {
		return -ENOENT;
	}
	if (!err && t->version >= 118)
		t->gofunc = find_gofunc(elf, t);
	return err;
}
