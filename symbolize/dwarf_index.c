// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/search.h"
#include "elf/elf_file.h"
#include "die_reader.h"
#include "dwarf_index.h"
#include "line_table.h"

#define MAX_DEPTH DWARF_INDEX_MAX_DEPTH
/* DIE nesting we follow; deeper trees are hostile or broken. */
#define MAX_NESTING 256
#define NO_NODE UINT32_MAX

/*
 * Searches go through a sparse index first, every BLOCK-th key of a sorted
 * array of records that start with their uint64_t key, then scan one block.
 * A unit's rows and ranges run to megabytes: a plain binary search misses
 * the cache at each of its last steps, which made the searches most of a
 * lookup once units were indexed. The index is 1/BLOCK of the keys.
 */
#define BLOCK_SHIFT 4
#define BLOCK (1 << BLOCK_SHIFT)

struct sparse {
	uint64_t *keys;
	size_t nr;
};

/* A range of code: [lo, hi) belongs to node @node (unit or function, by context). */
struct piece {
	uint64_t lo, hi;
	uint32_t node;
};

/* A function (depth 0) or an inlined call (depth > 0) in a unit. */
struct node {
	/*
	 * Where the name is, found when first needed: the DIE's abstract
	 * origin or specification when it has one, which many inlined calls
	 * of one function share, else the DIE itself.
	 */
	Dwarf_Off name_die;
	uint32_t parent;    /* the enclosing node, NO_NODE at depth 0 */
	uint32_t call_line; /* inlined calls: where the call was, in the parent */
	const char *call_file;
	const char *name; /* valid once @named */
	bool named;
};

struct level {
	struct piece *pieces;
	size_t nr, alloc;
	struct sparse index;
};

/* The name a DIE holds, NULL for none. */
struct name_entry {
	Dwarf *dwarf; /* whose DIE: the file's, or a split unit's .dwo */
	Dwarf_Off die;
	const char *name;
};

/* A relative source path as libdw gave it, and made absolute. */
struct path_entry {
	const char *raw;
	char *full;
};

struct unit {
	Dwarf_Die die;
	uint64_t info_offset; /* of the unit header, in .debug_info */
	/* Where the DIEs of its functions are: the file's, or for a split unit its .dwo's. */
	Dwarf *dwarf;
	bool split; /* a skeleton unit: its DIEs are in a .dwo file, which libdw reads */
	Dwarf_Files *libdw_files; /* when libdw read the line program */
	size_t nr_libdw_files;
	const char *comp_dir; /* NULL: unknown */
	bool indexed;	      /* tried: the tables below are what could be read */
	bool lost;	      /* its functions could not be read whole (unit_lost()) */
	/* Rows, and files for DW_AT_call_file unless libdw read the program. */
	struct line_table lines;
	struct sparse row_index;
	struct node *nodes;
	size_t nr_nodes, alloc_nodes;
	struct level *levels; /* by inline depth; allocated when the unit is indexed */
	int nr_levels;
};

struct dwarf_index {
	struct elf_file *file; /* our reference */
	Dwarf *dwarf;	       /* @file's, which the unwinder's .debug_frame shares */
	char *name;	       /* of the file, for warnings; may be NULL */
	struct dwarf_index_stats stats;
	bool warned; /* of a unit lost */
	struct unit *units;
	size_t nr_units;
	struct piece *ranges; /* address -> unit, sorted, no overlaps */
	size_t nr_ranges;
	struct sparse range_index;
	struct hashtab paths;	       /* of struct path_entry, by raw pointer */
	struct hashtab names;	       /* of struct name_entry, by DIE */
	struct line_sections sections; /* .debug_line and its strings, for our decoder */
	struct die_sections dies;      /* .debug_info and what it refers to, likewise */
};

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1; /* the wider first: it wins the overlap */
	return x->node < y->node ? -1 : x->node > y->node;
}

/*
 * Sort @p as piece_cmp() orders them. A radix sort on the start address,
 * then qsort() for the rare runs of one start: qsort()'s calls through a
 * comparator were a twentieth of symbolizing a C program's addresses.
 */
static void sort_by_lo(struct piece *p, size_t nr)
{
	uint64_t min = p[0].lo, max = p[0].lo;
	struct piece *tmp, *from = p, *to;
	unsigned int bytes = 0;

	for (size_t i = 1; i < nr; i++) {
		min = p[i].lo < min ? p[i].lo : min;
		max = p[i].lo > max ? p[i].lo : max;
	}
	while (bytes < 8 && (max - min) >> (8 * bytes))
		bytes++;
	tmp = malloc(nr * sizeof(*tmp));
	if (!tmp) {
		qsort(p, nr, sizeof(*p), piece_cmp);
		return;
	}
	to = tmp;
	for (unsigned int b = 0; b < bytes; b++) {
		size_t count[257] = { 0 };
		struct piece *swap;

		for (size_t i = 0; i < nr; i++)
			count[((from[i].lo - min) >> (8 * b) & 0xff) + 1]++;
		for (int d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < nr; i++)
			to[count[(from[i].lo - min) >> (8 * b) & 0xff]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != p)
		memcpy(p, from, nr * sizeof(*p));
	free(tmp);
	for (size_t i = 0, j; i < nr; i = j) {
		for (j = i + 1; j < nr && p[j].lo == p[i].lo; j++)
			;
		if (j - i > 1)
			qsort(p + i, j - i, sizeof(*p), piece_cmp);
	}
}

/*
 * Sort @p and cut overlaps so that a binary search finds one piece per
 * address: where pieces overlap, the one that starts first keeps the
 * shared part. Empty pieces go. Returns the new count.
 */
static size_t sort_pieces(struct piece *p, size_t nr)
{
	uint64_t covered = 0;
	size_t out = 0;

	if (nr < 2)
		return nr && p[0].lo < p[0].hi ? 1 : 0;
	/* Functions often come in address order: then there is nothing to sort. */
	for (size_t i = 1; i < nr; i++) {
		if (p[i].lo <= p[i - 1].lo) {
			sort_by_lo(p, nr);
			break;
		}
	}
	for (size_t i = 0; i < nr; i++) {
		struct piece cur = p[i];

		if (out && cur.lo < covered)
			cur.lo = covered;
		if (cur.lo >= cur.hi)
			continue;
		p[out++] = cur;
		covered = cur.hi;
	}
	return out;
}

static inline uint64_t record_key(const void *base, size_t stride, size_t i)
{
	uint64_t key;

	memcpy(&key, (const char *)base + i * stride, sizeof(key));
	return key;
}

/* Index @nr records of @stride bytes at @base; on ENOMEM, searches go without. */
static void sparse_build(struct sparse *s, const void *base, size_t nr, size_t stride)
{
	free(s->keys);
	s->nr = (nr + BLOCK - 1) >> BLOCK_SHIFT;
	s->keys = s->nr ? malloc(s->nr * sizeof(*s->keys)) : NULL;
	if (!s->keys) {
		s->nr = 0;
		return;
	}
	for (size_t i = 0; i < s->nr; i++)
		s->keys[i] = record_key(base, stride, i << BLOCK_SHIFT);
}

/* How many of the @nr records have a key at or below @key: the index of the first above. */
static size_t count_le(const void *base, size_t nr, size_t stride, const struct sparse *s,
		       uint64_t key)
{
	size_t lo = 0, hi = nr, block, i, end;

	if (s->keys) {
		if (key < s->keys[0])
			return 0;
		/* The block whose first key is the last at or below @key; scan it. */
		block = search__last_le(s->keys, s->nr, key);
		i = block << BLOCK_SHIFT;
		end = (block + 1) << BLOCK_SHIFT < nr ? (block + 1) << BLOCK_SHIFT : nr;
		while (i < end && record_key(base, stride, i) <= key)
			i++;
		return i;
	}
	/* No index (it could not be allocated): a plain binary search. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (record_key(base, stride, mid) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The piece containing @addr, or NULL. */
static const struct piece *find_piece(const struct piece *p, size_t nr, const struct sparse *s,
				      uint64_t addr)
{
	size_t n = count_le(p, nr, sizeof(*p), s, addr);

	/* The last piece starting at or below @addr may contain it. */
	if (!n || addr >= p[n - 1].hi)
		return NULL;
	return &p[n - 1];
}

/*
 * Call @fn for each address range of @die. Returns how many it had (the
 * ranges read before a DWARF error count), or the first error of @fn.
 */
static int die_ranges(Dwarf_Die *die, int (*fn)(void *ctx, uint64_t lo, uint64_t hi), void *ctx)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int n = 0, err;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		/* Ranges of code the linker dropped start at 0 (or at -1 with newer linkers). */
		if (start >= end || !start)
			continue;
		err = fn(ctx, start, end);
		if (err)
			return err;
		n++;
	}
	return n;
}

/* --- the address -> unit table ---------------------------------------------- */

struct units_ctx {
	struct dwarf_index *idx;
	size_t alloc;
	uint32_t unit;
};

static int add_unit_range(void *ctx, uint64_t lo, uint64_t hi)
{
	struct units_ctx *c = ctx;
	struct dwarf_index *idx = c->idx;

	if (array__reserve(&idx->ranges, &c->alloc, idx->nr_ranges + 1, sizeof(*idx->ranges)))
		return -ENOMEM;
	idx->ranges[idx->nr_ranges++] = (struct piece){ lo, hi, c->unit };
	return 0;
}

static int index_units(struct dwarf_index *idx)
{
	struct units_ctx ctx = { .idx = idx };
	Dwarf_Off off = 0, next;
	size_t alloc_units = 0, header_size;
	Dwarf_Die cudie;
	int ret;

	/* dwarf_next_unit() rather than dwarf_get_units(): our DIE reader needs the header's offset. */
	while ((ret = dwarf_next_unit(idx->dwarf, off, &next, &header_size, NULL, NULL, NULL, NULL,
				      NULL, NULL)) == 0) {
		Dwarf_Off unit = off;
		uint8_t unit_type = 0;
		int tag;

		off = next;
		if (!dwarf_offdie(idx->dwarf, unit + header_size, &cudie))
			continue;
		tag = dwarf_tag(&cudie);
		if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit &&
		    tag != DW_TAG_skeleton_unit)
			continue;
		if (array__reserve(&idx->units, &alloc_units, idx->nr_units + 1,
				   sizeof(*idx->units)))
			return -ENOMEM;
		memset(&idx->units[idx->nr_units], 0, sizeof(*idx->units));
		idx->units[idx->nr_units].die = cudie;
		idx->units[idx->nr_units].info_offset = unit;
		idx->units[idx->nr_units].dwarf = idx->dwarf;
		/* DWARF 5's skeleton units, and GNU's DWARF 4 ones (a compile unit with a dwo_id). */
		dwarf_cu_info(cudie.cu, NULL, &unit_type, NULL, NULL, NULL, NULL, NULL);
		idx->units[idx->nr_units].split = unit_type == DW_UT_skeleton;
		ctx.unit = idx->nr_units++;
		ret = die_ranges(&cudie, add_unit_range, &ctx);
		if (ret < 0)
			return -ENOMEM;
		/* A unit without ranges has no code we could find it by: not kept. */
		if (!ret)
			idx->nr_units--;
	}
	if (ret < 0)
		pr_debug("dwarf: stopped reading units: %s", dwarf_errmsg(-1));
	idx->nr_ranges = sort_pieces(idx->ranges, idx->nr_ranges);
	sparse_build(&idx->range_index, idx->ranges, idx->nr_ranges, sizeof(*idx->ranges));
	return 0;
}

/* The data of section @name, decompressed if it is (libdw has done so for the ones it read). */
static const uint8_t *section_data(Elf *elf, size_t shstrndx, const char *name, size_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;
		bool gnu;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!sname)
			continue;
		/* ".debug_x", or GNU's compressed ".zdebug_x". */
		gnu = !strncmp(sname, ".zdebug", 7);
		if (gnu ? strcmp(sname + 2, name + 1) : strcmp(sname, name))
			continue;
		if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		data = elf_getdata(scn, NULL);
		/* A .zdebug section says it is compressed only by its "ZLIB" header. */
		if (gnu && data && data->d_size >= 4 && !memcmp(data->d_buf, "ZLIB", 4)) {
			if (elf_compress_gnu(scn, 0, 0) < 0)
				return NULL;
			data = elf_getdata(scn, NULL);
		}
		if (!data || !data->d_buf)
			return NULL;
		*size = data->d_size;
		return data->d_buf;
	}
	return NULL;
}

/* Where our line program decoder and DIE reader read; without .debug_line, libdw decodes. */
static void find_sections(struct dwarf_index *idx)
{
	struct line_sections *s = &idx->sections;
	Elf *elf = dwarf_getelf(idx->dwarf);
	size_t shstrndx;
	GElf_Ehdr ehdr;

	if (!elf || !gelf_getehdr(elf, &ehdr) || elf_getshdrstrndx(elf, &shstrndx))
		return;
	s->big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
	s->line = section_data(elf, shstrndx, ".debug_line", &s->line_size);
	s->line_str = section_data(elf, shstrndx, ".debug_line_str", &s->line_str_size);
	s->str = section_data(elf, shstrndx, ".debug_str", &s->str_size);
	idx->dies = (struct die_sections){ .big_endian = s->big_endian };
	idx->dies.info = section_data(elf, shstrndx, ".debug_info", &idx->dies.info_size);
	idx->dies.abbrev = section_data(elf, shstrndx, ".debug_abbrev", &idx->dies.abbrev_size);
	idx->dies.addr = section_data(elf, shstrndx, ".debug_addr", &idx->dies.addr_size);
	idx->dies.ranges = section_data(elf, shstrndx, ".debug_ranges", &idx->dies.ranges_size);
	idx->dies.rnglists =
		section_data(elf, shstrndx, ".debug_rnglists", &idx->dies.rnglists_size);
}

struct dwarf_index *dwarf_index__new(struct elf_file *file, const char *name)
{
	Dwarf *dwarf = elf_file__dwarf(file);
	struct dwarf_index *idx;
	int err;

	if (!dwarf) {
		errno = ENOENT;
		return NULL;
	}
	idx = calloc(1, sizeof(*idx));
	if (!idx)
		return NULL;
	if (name && !(idx->name = strdup(name))) {
		free(idx);
		return NULL;
	}
	idx->file = elf_file__get(file);
	idx->dwarf = dwarf;
	find_sections(idx);
	err = index_units(idx);
	if (err) {
		dwarf_index__free(idx);
		errno = -err;
		return NULL;
	}
	if (!idx->nr_ranges) {
		dwarf_index__free(idx);
		errno = ENOENT;
		return NULL;
	}
	return idx;
}

static void unit_free(struct unit *u)
{
	free(u->row_index.keys);
	line_table__release(&u->lines);
	free(u->nodes);
	for (int d = 0; d < u->nr_levels; d++) {
		free(u->levels[d].pieces);
		free(u->levels[d].index.keys);
	}
	free(u->levels);
}

void dwarf_index__free(struct dwarf_index *idx)
{
	struct name_entry *n;
	struct path_entry *e;
	size_t i;

	if (!idx)
		return;
	hashtab__for_each_entry(&idx->paths, i, e) {
		free(e->full);
		free(e);
	}
	hashtab__release(&idx->paths);
	hashtab__for_each_entry(&idx->names, i, n)
		free(n);
	hashtab__release(&idx->names);
	for (i = 0; i < idx->nr_units; i++)
		unit_free(&idx->units[i]);
	free(idx->units);
	free(idx->ranges);
	free(idx->range_index.keys);
	elf_file__put(idx->file);
	free(idx->name);
	free(idx);
}

void dwarf_index__add_stats(const struct dwarf_index *idx, struct dwarf_index_stats *stats)
{
	stats->units += idx->stats.units;
	for (int i = 0; i < NR_DWARF_UNIT_FAULTS; i++)
		stats->unread[i] += idx->stats.unread[i];
	stats->by_libdw += idx->stats.by_libdw;
	stats->lost += idx->stats.lost;
}

/* --- source paths ------------------------------------------------------------ */

static bool path_eq(const void *entry, const void *key)
{
	return ((const struct path_entry *)entry)->raw == key;
}

/*
 * @path made absolute with the unit's compilation directory, as
 * llvm-symbolizer and addr2line print it: libdw leaves a DWARF 5 file
 * relative when its directory entry is. Kept per libdw string, so each
 * file is joined once. On ENOMEM, @path as it is.
 */
static const char *full_path(struct dwarf_index *idx, const struct unit *u, const char *path)
{
	uint64_t hash = hash_mix(0, (uintptr_t)path);
	struct path_entry *e;
	size_t dir_len, len;

	if (!path || path[0] == '/' || !u->comp_dir)
		return path;
	e = hashtab__find(&idx->paths, hash, path_eq, path);
	if (e)
		return e->full;
	e = malloc(sizeof(*e));
	dir_len = strlen(u->comp_dir);
	len = strlen(path);
	if (!e || !(e->full = malloc(dir_len + 1 + len + 1))) {
		free(e);
		return path;
	}
	memcpy(e->full, u->comp_dir, dir_len);
	e->full[dir_len] = '/';
	memcpy(e->full + dir_len + 1, path, len + 1);
	e->raw = path;
	if (hashtab__insert(&idx->paths, hash, e)) {
		free(e->full);
		free(e);
		return path;
	}
	return e->full;
}

/* --- one unit's line table ----------------------------------------------------- */

/*
 * The unit's file names from libdw, for a line program header our decoder
 * does not read; the rows are still decoded by ours, so that they are
 * cleaned up the one way (libdw's dwarf_getsrclines() sorts rows one by
 * one, which interleaves overlapping sequences beyond repair).
 */
static int index_lines_libdw(struct dwarf_index *idx, struct unit *u, uint64_t offset)
{
	struct line_table *t = &u->lines;
	Dwarf_Files *files;
	size_t nr;
	int err;

	if (dwarf_getsrcfiles(&u->die, &files, &nr) || !nr)
		return 0;
	t->files = calloc(nr, sizeof(*t->files));
	if (!t->files)
		return -ENOMEM;
	t->nr_files = nr;
	for (size_t i = 0; i < nr; i++) {
		const char *path = full_path(idx, u, dwarf_filesrc(files, i, NULL, NULL));

		if (path && !(t->files[i] = strdup(path)))
			return -ENOMEM;
	}
	err = line_table__read_rows(t, &idx->sections, offset);
	return err == -ENOMEM ? err : 0;
}

static int index_lines(struct dwarf_index *idx, struct unit *u)
{
	Dwarf_Attribute attr;
	Dwarf_Word offset;
	int err;

	if (!dwarf_attr(&u->die, DW_AT_stmt_list, &attr) || dwarf_formudata(&attr, &offset) ||
	    !idx->sections.line)
		return 0;
	err = line_table__read(&u->lines, &idx->sections, offset, u->comp_dir);
	if (err == -ENOTSUP) {
		pr_debug("dwarf: line program at 0x%llx: %s, file names read by libdw instead",
			 (unsigned long long)offset, strerror(-err));
		return index_lines_libdw(idx, u, offset);
	}
	return err == -ENOMEM ? err : 0;
}

/* The row in effect at @addr: the last at or below it, unless a sequence ended there. */
static const struct line_row *find_row(const struct unit *u, uint64_t addr)
{
	const struct line_row *rows = u->lines.rows;
	size_t n = count_le(rows, u->lines.nr_rows, sizeof(*rows), &u->row_index, addr);

	if (!n || !rows[n - 1].file)
		return NULL;
	return &rows[n - 1];
}

/* --- one unit's functions and inlined calls ------------------------------------- */

struct range_ctx {
	struct level *level;
	uint32_t node;
};

static int add_scope_range(void *ctx, uint64_t lo, uint64_t hi)
{
	struct range_ctx *c = ctx;
	struct level *l = c->level;

	if (array__reserve(&l->pieces, &l->alloc, l->nr + 1, sizeof(*l->pieces)))
		return -ENOMEM;
	l->pieces[l->nr++] = (struct piece){ lo, hi, c->node };
	return 0;
}

/* The path of file number @file of @u (DW_AT_call_file), or NULL. */
static const char *call_file(struct dwarf_index *idx, struct unit *u, uint64_t file)
{
	const struct line_table *t = &u->lines;

	if (t->files)
		return file < t->nr_files ? t->files[file] : NULL;
	/* libdw read the line program: it has the file names too. */
	if (!u->libdw_files && dwarf_getsrcfiles(&u->die, &u->libdw_files, &u->nr_libdw_files))
		u->nr_libdw_files = 0;
	if (file >= u->nr_libdw_files)
		return NULL;
	return full_path(idx, u, dwarf_filesrc(u->libdw_files, file, NULL, NULL));
}

/*
 * Add a node for @die, a function (@parent NO_NODE) or a call inlined into
 * @parent, at inline depth @depth. @r is the fast reader that read @die,
 * or NULL when libdw did: then @d is the DIE as libdw has it. Returns the
 * node, or NO_NODE when @die has no code (errno 0) or memory ran out
 * (errno ENOMEM).
 */
static uint32_t add_node(struct dwarf_index *idx, struct unit *u, const struct die_reader *r,
			 Dwarf_Die *d, const struct die *die, int depth, uint32_t parent)
{
	struct range_ctx ctx = { .node = u->nr_nodes };
	struct level *l;
	struct node *n;
	size_t first;
	Dwarf_Die off_die;
	int nr = 0;

	errno = 0;
	if (!die->has_ranges && !(die->has_low_pc && die->has_high_pc))
		return NO_NODE;
	/* Levels come as deep as the unit's calls go, not all MAX_DEPTH of them. */
	if (depth >= u->nr_levels) {
		struct level *tmp = realloc(u->levels, (depth + 1) * sizeof(*tmp));

		if (!tmp) {
			errno = ENOMEM;
			return NO_NODE;
		}
		memset(tmp + u->nr_levels, 0, (depth + 1 - u->nr_levels) * sizeof(*tmp));
		u->levels = tmp;
		u->nr_levels = depth + 1;
	}
	l = ctx.level = &u->levels[depth];
	first = l->nr;
	if (array__reserve(&u->nodes, &u->alloc_nodes, u->nr_nodes + 1, sizeof(*u->nodes)) ||
	    u->nr_nodes >= NO_NODE) {
		errno = ENOMEM;
		return NO_NODE;
	}
	n = &u->nodes[u->nr_nodes];
	*n = (struct node){ .name_die = die->origin ? die->origin : die->offset, .parent = parent };
	if (parent != NO_NODE) {
		if (die->has_call_file)
			n->call_file = call_file(idx, u, die->call_file);
		n->call_line = die->call_line <= UINT32_MAX ? die->call_line : 0;
	}
	if (die->has_ranges) {
		nr = r ? die_reader__ranges(r, die, add_scope_range, &ctx) : -ENOTSUP;
		/* A list our reader does not read (or a DIE it did not read): libdw may. */
		if (nr == -ENOTSUP) {
			nr = 0;
			l->nr = first;
			if (!d && dwarf_offdie(u->dwarf, die->offset, &off_die))
				d = &off_die;
			if (d)
				nr = die_ranges(d, add_scope_range, &ctx);
		}
	} else {
		uint64_t hi = die->high_pc_is_offset ? die->low_pc + die->high_pc : die->high_pc;

		/* Code the linker dropped starts at 0. */
		if (die->low_pc && die->low_pc < hi)
			nr = add_scope_range(&ctx, die->low_pc, hi) ?: 1;
	}
	if (nr <= 0) {
		errno = nr < 0 ? ENOMEM : 0;
		return NO_NODE;
	}
	return u->nr_nodes++;
}

/* A DIE whose children the walk reads: under function @node, calls inlined at @depth. */
struct scope {
	uint32_t node;
	int depth;
};

/*
 * Whether the children of @die hold code, and under what: functions (even
 * one nested in another) and the calls inlined into them, and what may
 * hold those (blocks; namespaces and types, where C++ lambdas and Rust
 * methods sit). Adds the nodes on the way. -ENOMEM, 0: skip the children,
 * 1: read them under @next.
 */
static int enter(struct dwarf_index *idx, struct unit *u, const struct die_reader *r, Dwarf_Die *d,
		 const struct die *die, const struct scope *cur, struct scope *next)
{
	uint32_t node;

	*next = *cur;
	switch (die->tag) {
	case DW_TAG_subprogram:
		node = add_node(idx, u, r, d, die, 0, NO_NODE);
		*next = (struct scope){ node, 1 };
		break;
	case DW_TAG_inlined_subroutine:
		if (cur->node == NO_NODE || cur->depth >= MAX_DEPTH)
			return 0;
		node = add_node(idx, u, r, d, die, cur->depth, cur->node);
		*next = (struct scope){ node, cur->depth + 1 };
		break;
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_interface_type:
		return 1;
	default:
		return 0;
	}
	if (node == NO_NODE)
		return errno == ENOMEM ? -ENOMEM : 0;
	return 1;
}

/*
 * Read the unit's functions and inlined calls with the fast DIE reader.
 * Returns 0, -ENOMEM, -ENOTSUP (a unit or form it does not read) or
 * -EINVAL (truncated or corrupt: it could not read on).
 */
static int index_scopes_fast(struct dwarf_index *idx, struct unit *u)
{
	struct scope stack[MAX_NESTING], root = { NO_NODE, 0 };
	int top = -1, skip = 0, ret;
	struct die_reader r;
	struct die die;

	ret = die_reader__init(&r, &idx->dies, u->info_offset);
	if (ret)
		return ret;
	while ((ret = die_reader__next(&r, &die)) > 0) {
		struct scope next;

		if (!die.tag) { /* the end of a list of children */
			if (skip)
				skip--;
			else if (top >= 0)
				top--;
			continue;
		}
		if (skip) {
			skip += die.has_children;
			continue;
		}
		ret = enter(idx, u, &r, NULL, &die, top >= 0 ? &stack[top] : &root, &next);
		if (ret < 0)
			break;
		if (!die.has_children)
			continue;
		if (ret && top + 1 < MAX_NESTING)
			stack[++top] = next;
		else
			skip = 1;
	}
	die_reader__release(&r);
	return ret < 0 ? ret : 0;
}

/* @d as the fast reader gives a DIE, for enter(). */
static void libdw_die(Dwarf_Die *d, struct die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Addr lo, hi;
	Dwarf_Word value;
	Dwarf_Die ref;

	*die = (struct die){
		.offset = dwarf_dieoffset(d),
		.tag = dwarf_tag(d) > 0 ? dwarf_tag(d) : 0,
		.has_children = dwarf_haschildren(d) > 0,
		.has_ranges = dwarf_hasattr(d, DW_AT_ranges),
	};
	if (!die->has_ranges && !dwarf_lowpc(d, &lo) && !dwarf_highpc(d, &hi)) {
		die->has_low_pc = die->has_high_pc = true;
		die->low_pc = lo;
		die->high_pc = hi;
	}
	if (dwarf_attr(d, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &value)) {
		die->has_call_file = true;
		die->call_file = value;
	}
	if (dwarf_attr(d, DW_AT_call_line, &attr) && !dwarf_formudata(&attr, &value))
		die->call_line = value;
	/* As the fast reader: no origin in another file (dwz), whose offsets mean nothing here. */
	if ((dwarf_attr(d, DW_AT_abstract_origin, &attr) ||
	     dwarf_attr(d, DW_AT_specification, &attr)) &&
	    dwarf_formref_die(&attr, &ref) && dwarf_cu_getdwarf(ref.cu) == dwarf_cu_getdwarf(d->cu))
		die->origin = dwarf_dieoffset(&ref);
}

/*
 * The slow way, for a unit the fast reader cannot read: libdw walks the
 * children of @parent, read under @cur. Returns 0, -ENOMEM, or -EINVAL
 * when libdw could not read on either.
 */
static int index_scopes_libdw(struct dwarf_index *idx, struct unit *u, Dwarf_Die *parent,
			      const struct scope *cur, int nesting)
{
	Dwarf_Die child;
	int ret;

	for (ret = dwarf_child(parent, &child); !ret; ret = dwarf_siblingof(&child, &child)) {
		struct scope next;
		struct die die;

		libdw_die(&child, &die);
		ret = enter(idx, u, NULL, &child, &die, cur, &next);
		if (ret < 0)
			return ret;
		/* As the fast reader does, deeper trees are not followed. */
		if (ret && die.has_children && nesting + 1 < MAX_NESTING) {
			ret = index_scopes_libdw(idx, u, &child, &next, nesting + 1);
			if (ret)
				return ret;
		}
	}
	return ret < 0 ? -EINVAL : 0;
}

/* Forget the functions read so far: a reader that failed partway is read again by the other. */
static void unit_reset_scopes(struct unit *u)
{
	u->nr_nodes = 0;
	for (int d = 0; d < u->nr_levels; d++)
		u->levels[d].nr = 0;
}

static const char *const fault_names[NR_DWARF_UNIT_FAULTS] = {
	[DWARF_UNIT_SPLIT] = "split DWARF",
	[DWARF_UNIT_UNKNOWN] = "a form or unit type the reader does not know",
	[DWARF_UNIT_CORRUPT] = "truncated or corrupt",
};

/* Count unit @u lost, and warn of the first of the file (the others: see the frame summary). */
static void unit_lost(struct dwarf_index *idx, struct unit *u, enum dwarf_unit_fault fault)
{
	const char *why = fault_names[fault], *dwo = NULL;
	Dwarf_Attribute attr;
	char buf[256];

	idx->stats.lost++;
	u->lost = true;
	if (fault == DWARF_UNIT_SPLIT) {
		if (dwarf_attr(&u->die, DW_AT_dwo_name, &attr) ||
		    dwarf_attr(&u->die, DW_AT_GNU_dwo_name, &attr))
			dwo = dwarf_formstring(&attr);
		snprintf(buf, sizeof(buf), "split DWARF file '%s' not found", dwo ? dwo : "?");
		why = buf;
	}
	log_printf(idx->warned ? LOG_DEBUG : LOG_WARN,
		   "symbolize: cannot read the DWARF unit at 0x%llx of '%s' (its functions lose "
		   "inline frames): %s",
		   (unsigned long long)u->info_offset, idx->name ? idx->name : "(unnamed)", why);
	idx->warned = true;
}

static int index_scopes(struct dwarf_index *idx, struct unit *u)
{
	struct scope root = { NO_NODE, 0 };
	enum dwarf_unit_fault fault = DWARF_UNIT_SPLIT;
	Dwarf_Die top = u->die;
	int ret = 0;

	idx->stats.units++;
	if (!u->split) {
		ret = index_scopes_fast(idx, u);
		if (ret == -ENOMEM)
			return ret;
		fault = ret == -ENOTSUP ? DWARF_UNIT_UNKNOWN : DWARF_UNIT_CORRUPT;
	}
	if (ret || u->split) {
		idx->stats.unread[fault]++;
		unit_reset_scopes(u);
		if (u->split) {
			/* libdw finds the .dwo file (DW_AT_dwo_name, in the compilation directory). */
			memset(&top, 0, sizeof(top));
			dwarf_cu_info(u->die.cu, NULL, NULL, NULL, &top, NULL, NULL, NULL);
			u->dwarf = top.cu ? dwarf_cu_getdwarf(top.cu) : NULL;
		}
		ret = u->dwarf ? index_scopes_libdw(idx, u, &top, &root, 0) : -ENOENT;
		if (ret == -ENOMEM)
			return ret;
		if (ret) {
			unit_lost(idx, u, fault);
		} else {
			idx->stats.by_libdw++;
			pr_debug("dwarf: unit at 0x%llx: %s, read by libdw",
				 (unsigned long long)u->info_offset, fault_names[fault]);
		}
	}
	for (int d = 0; d < u->nr_levels; d++) {
		struct level *l = &u->levels[d];

		l->nr = sort_pieces(l->pieces, l->nr);
		sparse_build(&l->index, l->pieces, l->nr, sizeof(*l->pieces));
	}
	return 0;
}

static int index_unit(struct dwarf_index *idx, struct unit *u)
{
	Dwarf_Attribute attr;
	int err;

	u->indexed = true;
	if (dwarf_attr(&u->die, DW_AT_comp_dir, &attr))
		u->comp_dir = dwarf_formstring(&attr);
	err = index_lines(idx, u);
	if (!err) {
		sparse_build(&u->row_index, u->lines.rows, u->lines.nr_rows,
			     sizeof(*u->lines.rows));
		err = index_scopes(idx, u);
	}
	if (err) {
		pr_warn("dwarf: cannot index a unit: %s", strerror(-err));
		unit_free(u);
		u->levels = NULL;
		memset(&u->row_index, 0, sizeof(u->row_index));
		u->nodes = NULL;
		u->nr_nodes = u->alloc_nodes = 0;
		u->nr_levels = 0;
		return err;
	}
	return 0;
}

/* --- lookups ------------------------------------------------------------------- */

/* What die_name() collects from one DIE's attributes. */
struct name_attrs {
	const char *linkage, *name;
	Dwarf_Attribute next; /* DW_AT_abstract_origin or DW_AT_specification */
	bool has_next;
};

static int collect_name_attr(Dwarf_Attribute *attr, void *arg)
{
	struct name_attrs *n = arg;

	switch (dwarf_whatattr(attr)) {
	case DW_AT_linkage_name:
	case DW_AT_MIPS_linkage_name:
		n->linkage = dwarf_formstring(attr);
		break;
	case DW_AT_name:
		n->name = dwarf_formstring(attr);
		break;
	case DW_AT_abstract_origin:
	case DW_AT_specification:
		n->next = *attr;
		n->has_next = true;
		break;
	default:
		break;
	}
	return DWARF_CB_OK;
}

/*
 * The function's linker name, else its plain name, from @die or the DIEs
 * its abstract_origin and specification lead to (where C++ keeps the
 * names): the first linker name on the way, as llvm-symbolizer takes it,
 * else the first name. One pass over each DIE's attributes: asking
 * dwarf_attr_integrate() for each of the three walked the chain three times.
 */
static const char *die_name(Dwarf_Die *die)
{
	const char *name = NULL;
	Dwarf_Die cur = *die;

	for (int hops = 0; hops < 16; hops++) {
		struct name_attrs n = { 0 };

		if (dwarf_getattrs(&cur, collect_name_attr, &n, 0) < 0)
			break;
		if (n.linkage)
			return n.linkage;
		if (!name)
			name = n.name;
		if (!n.has_next || !dwarf_formref_die(&n.next, &cur))
			break;
	}
	return name;
}

static bool name_eq(const void *entry, const void *key)
{
	const struct name_entry *e = entry, *k = key;

	return e->die == k->die && e->dwarf == k->dwarf;
}

/*
 * The name of @n of @u, looked up once per DIE that holds it: libdw takes
 * microseconds. Kept out of line: most lookups find it in @n already, and
 * inlined into dwarf_index__lookup() it cost that 1% more instructions.
 */
static __attribute__((noinline)) const char *node_name_find(struct dwarf_index *idx,
							    const struct unit *u, struct node *n)
{
	struct name_entry *e, key;
	Dwarf_Die die;
	uint64_t hash;

	key = (struct name_entry){ .dwarf = u->dwarf, .die = n->name_die };
	hash = hash_mix((uintptr_t)u->dwarf, n->name_die);
	e = hashtab__find(&idx->names, hash, name_eq, &key);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		*e = key;
		if (dwarf_offdie(u->dwarf, n->name_die, &die))
			e->name = die_name(&die);
		if (hashtab__insert(&idx->names, hash, e)) {
			free(e);
			return NULL;
		}
	}
	n->named = true;
	n->name = e->name;
	return n->name;
}

static inline const char *node_name(struct dwarf_index *idx, const struct unit *u, struct node *n)
{
	return n->named ? n->name : node_name_find(idx, u, n);
}

int dwarf_index__lookup(struct dwarf_index *idx, uint64_t vaddr, struct dwarf_loc *locs, int max)
{
	uint32_t chain[MAX_DEPTH];
	const struct piece *p;
	const struct line_row *row;
	struct unit *u;
	int depth = 0, nr = 0;

	if (max <= 0)
		return 0;
	p = find_piece(idx->ranges, idx->nr_ranges, &idx->range_index, vaddr);
	if (!p)
		return 0;
	u = &idx->units[p->node];
	if (!u->indexed && index_unit(idx, u))
		return 0;

	for (int d = 0; d < u->nr_levels; d++) {
		const struct level *l = &u->levels[d];

		p = find_piece(l->pieces, l->nr, &l->index, vaddr);
		/* Broken nesting (a call outside its caller's ranges) ends the chain. */
		if (!p || (d && u->nodes[p->node].parent != chain[d - 1]))
			break;
		chain[depth++] = p->node;
	}

	row = find_row(u, vaddr);
	locs[0] = (struct dwarf_loc){
		.file = row ? row->file : NULL,
		.line = row ? row->line : 0,
		.discriminator = row ? row->discriminator : 0,
	};
	if (!depth)
		return 1;
	/* Innermost first: each call's location is in the node that made it. */
	for (int d = depth - 1; d >= 0 && nr < max; d--) {
		struct node *n = &u->nodes[chain[d]];

		if (nr) {
			const struct node *callee = &u->nodes[chain[d + 1]];

			locs[nr] = (struct dwarf_loc){
				.file = callee->call_file,
				.line = callee->call_line,
			};
		}
		locs[nr++].function = node_name(idx, u, n);
	}
	return nr;
}

/* --- where answers change ------------------------------------------------------ */

struct breaks {
	uint64_t *addrs;
	size_t nr, alloc;
};

static int breaks_add(struct breaks *b, uint64_t addr)
{
	if (array__reserve(&b->addrs, &b->alloc, b->nr + 1, sizeof(*b->addrs)))
		return -ENOMEM;
	b->addrs[b->nr++] = addr;
	return 0;
}

static bool same_line(const struct line_row *a, const struct line_row *b)
{
	return a->file == b->file && a->line == b->line && a->discriminator == b->discriminator;
}

/* The breaks of unit @u: see dwarf_index__breaks(). */
static int unit_breaks(const struct unit *u, struct breaks *b)
{
	const struct line_row *rows = u->lines.rows;

	/*
	 * A row that repeats its predecessor's line changes no answer (rows
	 * differ by column, statement flag, view): most rows of optimized code.
	 */
	for (size_t i = 0; i < u->lines.nr_rows; i++)
		if ((!i || !same_line(&rows[i], &rows[i - 1])) && breaks_add(b, rows[i].addr))
			return -ENOMEM;
	for (int d = 0; d < u->nr_levels; d++) {
		const struct level *l = &u->levels[d];

		for (size_t i = 0; i < l->nr; i++)
			if (breaks_add(b, l->pieces[i].lo) || breaks_add(b, l->pieces[i].hi))
				return -ENOMEM;
	}
	return 0;
}

int dwarf_index__breaks(struct dwarf_index *idx, uint64_t vaddr, struct dwarf_span **ranges,
			size_t *nr_ranges, uint64_t **breaks, size_t *nr_breaks)
{
	size_t n = count_le(idx->ranges, idx->nr_ranges, sizeof(*idx->ranges), &idx->range_index,
			    vaddr);
	struct breaks b = { 0 };
	struct dwarf_span *r;
	struct unit *u;
	uint32_t unit;
	size_t nr = 0;
	int err;

	*ranges = NULL;
	*breaks = NULL;
	*nr_ranges = *nr_breaks = 0;
	if (!n || vaddr >= idx->ranges[n - 1].hi) {
		r = malloc(sizeof(*r));
		if (!r)
			return -ENOMEM;
		r->lo = n ? idx->ranges[n - 1].hi : 0;
		r->hi = n < idx->nr_ranges ? idx->ranges[n].lo : UINT64_MAX;
		*ranges = r;
		*nr_ranges = 1;
		return 0;
	}
	unit = idx->ranges[n - 1].node;
	for (size_t i = 0; i < idx->nr_ranges; i++)
		nr += idx->ranges[i].node == unit;
	r = malloc(nr * sizeof(*r));
	if (!r)
		return -ENOMEM;
	nr = 0;
	for (size_t i = 0; i < idx->nr_ranges; i++)
		if (idx->ranges[i].node == unit)
			r[nr++] = (struct dwarf_span){ idx->ranges[i].lo, idx->ranges[i].hi };
	/*
	 * Answers to keep are the file's alone, and whole: not those of a
	 * split unit, whose functions are in a .dwo file elsewhere, nor of a
	 * unit that could not be read (memory ran out, or it was lost).
	 */
	u = &idx->units[unit];
	err = u->indexed ? 0 : index_unit(idx, u);
	if (!err && (u->split || u->lost))
		err = -ENOTSUP;
	if (!err)
		err = unit_breaks(u, &b);
	if (err) {
		free(r);
		free(b.addrs);
		return err == -ENOMEM ? -ENOMEM : -ENOTSUP;
	}
	*ranges = r;
	*nr_ranges = nr;
	*breaks = b.addrs;
	*nr_breaks = b.nr;
	return 1;
}
