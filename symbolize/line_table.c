// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "elf/dwarf_cursor.h"
#include "line_table.h"

/* What a row says when its file number names no file, as addr2line does. */
static const char unknown_file[] = "??";

/* The string at @off of a string section, or NULL. */
static const char *section_str(const uint8_t *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return NULL;
	return (const char *)sec + off;
}

/* @dir/@name, or a copy of @name when @dir is NULL or empty; NULL on ENOMEM. */
static char *join(const char *dir, const char *name)
{
	size_t dl = dir ? strlen(dir) : 0, nl = strlen(name);
	char *path;

	path = malloc(dl + 1 + nl + 1);
	if (!path)
		return NULL;
	if (dl) {
		memcpy(path, dir, dl);
		path[dl++] = '/';
	}
	memcpy(path + dl, name, nl + 1);
	return path;
}

/*
 * The path of file @name in directory @dir (either may be relative), as
 * llvm-symbolizer and addr2line print it: made absolute with @comp_dir
 * when it is not already.
 */
static char *file_path(const char *comp_dir, const char *dir, const char *name)
{
	char *tmp, *path;

	if (name[0] == '/' || ((!dir || !*dir) && !comp_dir))
		return join(NULL, name);
	if (!dir || !*dir)
		return join(comp_dir, name);
	if (dir[0] == '/' || !comp_dir)
		return join(dir, name);
	tmp = join(comp_dir, dir);
	if (!tmp)
		return NULL;
	path = join(tmp, name);
	free(tmp);
	return path;
}

/* The header's fields that decoding the program needs. */
struct header {
	uint16_t version;
	uint8_t offset_size;
	uint8_t min_inst_len, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *opcode_lengths; /* opcode_base - 1 of them */
	const char **dirs;
	size_t nr_dirs;
};

static int add_file(struct line_table *t, size_t *alloc, char *path)
{
	if (array__reserve(&t->files, alloc, t->nr_files + 1, sizeof(*t->files))) {
		free(path);
		return -ENOMEM;
	}
	t->files[t->nr_files++] = path;
	return 0;
}

/* Before DWARF 5: NUL-terminated lists of directories, then of files. */
static int read_v4_names(struct line_table *t, struct header *h, struct cursor *c,
			 const char *comp_dir, size_t *alloc_files)
{
	size_t alloc_dirs = 16;
	const char *s;
	int err;

	h->dirs = malloc(alloc_dirs * sizeof(*h->dirs));
	if (!h->dirs)
		return -ENOMEM;
	/* Directory 0 is the compilation directory (file_path() adds it), file 0 none. */
	h->dirs[h->nr_dirs++] = NULL;
	while ((s = cursor__str(c)) && *s) {
		if (h->nr_dirs == alloc_dirs) {
			const char **tmp = realloc(h->dirs, 2 * alloc_dirs * sizeof(*tmp));

			if (!tmp)
				return -ENOMEM;
			h->dirs = tmp;
			alloc_dirs *= 2;
		}
		h->dirs[h->nr_dirs++] = s;
	}
	err = add_file(t, alloc_files, NULL);
	while (!err && (s = cursor__str(c)) && *s) {
		uint64_t dir = cursor__uleb(c);
		char *path;

		cursor__uleb(c); /* modification time */
		cursor__uleb(c); /* length */
		path = file_path(comp_dir, dir < h->nr_dirs ? h->dirs[dir] : NULL, s);
		err = path ? add_file(t, alloc_files, path) : -ENOMEM;
	}
	return err;
}

/*
 * One attribute of a DWARF 5 directory or file entry: its string if it is
 * one (@str), its number otherwise (@num). -ENOTSUP for a form we do not read.
 */
static int read_form(struct cursor *c, const struct line_sections *s, const struct header *h,
		     uint64_t form, const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = cursor__str(c);
		return 0;
	case DW_FORM_line_strp:
		*str = section_str(s->line_str, s->line_str_size, cursor__u(c, h->offset_size));
		return 0;
	case DW_FORM_strp:
		*str = section_str(s->str, s->str_size, cursor__u(c, h->offset_size));
		return 0;
	case DW_FORM_udata:
		*num = cursor__uleb(c);
		return 0;
	case DW_FORM_data1:
		*num = cursor__u(c, 1);
		return 0;
	case DW_FORM_data2:
		*num = cursor__u(c, 2);
		return 0;
	case DW_FORM_data4:
		*num = cursor__u(c, 4);
		return 0;
	case DW_FORM_data8:
		*num = cursor__u(c, 8);
		return 0;
	case DW_FORM_data16:
		cursor__skip(c, 16);
		return 0;
	case DW_FORM_block:
		cursor__skip(c, cursor__uleb(c));
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* DWARF 5: self-describing directory and file entries. */
static int read_v5_entries(struct cursor *c, const struct line_sections *s, const struct header *h,
			   bool files, struct line_table *t, size_t *alloc_files,
			   const char ***dirs, size_t *nr_dirs, const char *comp_dir)
{
	uint64_t formats[2 * 16], nr_formats, count;
	int err;

	nr_formats = cursor__u(c, 1);
	if (nr_formats > 16)
		return -ENOTSUP;
	for (uint64_t i = 0; i < 2 * nr_formats; i++)
		formats[i] = cursor__uleb(c);
	count = cursor__uleb(c);
	if (c->bad || count > (uint64_t)(c->end - c->p))
		return -EINVAL;
	if (!files) {
		*dirs = malloc((count ? count : 1) * sizeof(**dirs));
		if (!*dirs)
			return -ENOMEM;
	}
	for (uint64_t i = 0; i < count && !c->bad; i++) {
		const char *path = NULL, *str;
		uint64_t dir = 0, num;

		for (uint64_t k = 0; k < nr_formats; k++) {
			err = read_form(c, s, h, formats[2 * k + 1], &str, &num);
			if (err)
				return err;
			if (formats[2 * k] == DW_LNCT_path)
				path = str;
			else if (formats[2 * k] == DW_LNCT_directory_index)
				dir = num;
		}
		if (!files) {
			(*dirs)[(*nr_dirs)++] = path;
			continue;
		}
		if (!path) {
			err = add_file(t, alloc_files, NULL);
		} else {
			char *full =
				file_path(comp_dir, dir < *nr_dirs ? (*dirs)[dir] : NULL, path);

			err = full ? add_file(t, alloc_files, full) : -ENOMEM;
		}
		if (err)
			return err;
	}
	return 0;
}

struct program {
	struct line_table *t;
	size_t alloc_rows;
	size_t seq_start; /* first row of the sequence being decoded */
	bool sorted;	  /* every sequence so far starts at or after the previous one's end */
};

/*
 * Append a row, or leave out one no lookup could tell from the table
 * without it: a row at the address of the one before hides that one (the
 * last row at an address is the one in effect), and a row that says what
 * the one before said (compilers emit a row per column or statement flag,
 * which we do not report) adds nothing. A third of the rows, or more.
 */
static inline int add_row(struct program *pg, uint64_t addr, const char *file, uint32_t line,
			  uint32_t discriminator)
{
	struct line_row row = { addr, file, line, discriminator }, *prev;
	struct line_table *t = pg->t;

	if (t->nr_rows > pg->seq_start) {
		prev = &t->rows[t->nr_rows - 1];
		/*
		 * Addresses only go up within a sequence (DWARF 5, 6.2.5.1), as
		 * the sort and the lookups rely on: a program whose address
		 * goes back (a lower set_address, an advance that wraps) is
		 * corrupt from here.
		 */
		if (addr < prev->addr)
			return -EINVAL;
		if (prev->addr == addr) {
			*prev = row;
			return 0;
		}
		if (file && prev->file == file && prev->line == line &&
		    prev->discriminator == discriminator)
			return 0;
	}
	if (array__reserve(&t->rows, &pg->alloc_rows, t->nr_rows + 1, sizeof(*t->rows)))
		return -ENOMEM;
	t->rows[t->nr_rows++] = row;
	return 0;
}

/*
 * A sequence ended: keep it, unless it starts at address 0, where linkers
 * put the code they discarded (it would shadow nothing real, but sort
 * before everything).
 */
static void end_sequence(struct program *pg)
{
	struct line_table *t = pg->t;
	size_t start = pg->seq_start;

	/* Only its end: it covers nothing, but would sort among the others' rows. */
	if (start + 1 == t->nr_rows || (start < t->nr_rows && t->rows[start].addr == 0)) {
		t->nr_rows = start;
	} else if (start > 0 && start < t->nr_rows &&
		   t->rows[start].addr < t->rows[start - 1].addr) {
		pg->sorted = false;
	}
	pg->seq_start = t->nr_rows;
}
static const char *file_of(const struct line_table *t, uint64_t file)
{
	return file < t->nr_files && t->files[file] ? t->files[file] : unknown_file;
}

/* Run the line number program, DWARF's state machine, into rows. */
static int run_program(struct program *pg, const struct header *h, struct cursor *c)
{
	uint64_t addr = 0, file = 1, line = 1, discriminator = 0;
	int err = 0;

	while (!err && c->p < c->end && !c->bad) {
		uint8_t op = cursor__u(c, 1);

		if (op >= h->opcode_base) {
			uint8_t adj = op - h->opcode_base;

			addr += (uint64_t)(adj / h->line_range) * h->min_inst_len;
			line += h->line_base + adj % h->line_range;
			err = add_row(pg, addr, file_of(pg->t, file), line, discriminator);
			discriminator = 0;
			continue;
		}
		switch (op) {
		case 0: {
			uint64_t len = cursor__uleb(c);
			const uint8_t *next = c->p + (len <= (uint64_t)(c->end - c->p) ? len : 0);
			uint8_t sub;

			if (!len || len > (uint64_t)(c->end - c->p))
				return 0;
			sub = cursor__u(c, 1);
			if (sub == DW_LNE_end_sequence) {
				err = add_row(pg, addr, NULL, line, 0);
				if (!err)
					end_sequence(pg);
				addr = 0;
				file = line = 1;
				discriminator = 0;
			} else if (sub == DW_LNE_set_address && len - 1 <= 8) {
				addr = cursor__u(c, len - 1);
			} else if (sub == DW_LNE_set_discriminator) {
				discriminator = cursor__uleb(c);
			}
			c->p = next;
			break;
		}
		case DW_LNS_copy:
			err = add_row(pg, addr, file_of(pg->t, file), line, discriminator);
			discriminator = 0;
			break;
		case DW_LNS_advance_pc:
			addr += cursor__uleb(c) * h->min_inst_len;
			break;
		case DW_LNS_advance_line:
			line += cursor__sleb(c);
			break;
		case DW_LNS_set_file:
			file = cursor__uleb(c);
			break;
		case DW_LNS_const_add_pc:
			addr += (uint64_t)((255 - h->opcode_base) / h->line_range) *
				h->min_inst_len;
			break;
		case DW_LNS_fixed_advance_pc:
			addr += cursor__u(c, 2);
			break;
		default:
			/* Operands we have no use for (column, isa), or opcodes we do not know. */
			for (uint8_t i = 0; i < h->opcode_lengths[op - 1]; i++)
				cursor__uleb(c);
			break;
		}
	}
	/* Corrupt: the sequences before stay (the caller drops the unfinished one). */
	return err == -EINVAL ? 0 : err;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct line_row *const *x = a, *const *y = b;

	if ((*x)->addr != (*y)->addr)
		return (*x)->addr < (*y)->addr ? -1 : 1;
	return *x < *y ? -1 : *x > *y; /* program order */
}

/* Put the sequences in address order, each kept whole: rows within one only go up. */
static int sort_sequences(struct line_table *t)
{
	const struct line_row **starts;
	struct line_row *rows;
	size_t nr = 0, out = 0;

	starts = malloc(t->nr_rows * sizeof(*starts));
	rows = malloc(t->nr_rows * sizeof(*rows));
	if (!starts || !rows) {
		free(starts);
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nr_rows; i++)
		if (i == 0 || !t->rows[i - 1].file)
			starts[nr++] = &t->rows[i];
	qsort(starts, nr, sizeof(*starts), seq_cmp);
	for (size_t i = 0; i < nr; i++) {
		const struct line_row *r = starts[i];

		do
			rows[out++] = *r;
		while ((r++)->file);
	}
	free(starts);
	free(t->rows);
	t->rows = rows;
	return 0;
}

/*
 * After sorting, make the rows' addresses only go up, as the lookups'
 * binary search needs: a sequence starting inside the one before (broken
 * or hostile DWARF) loses its rows below that one's end, and a row going
 * back down within a sequence is left out. A sequence left with nothing
 * but its end goes too.
 */
static void drop_overlaps(struct line_table *t)
{
	size_t out = 0, seq_out;
	uint64_t floor = 0;

	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct line_row *r = &t->rows[i];

		if (i == 0 || !t->rows[i - 1].file)
			seq_out = out; /* a sequence starts */
		if (r->addr >= floor && (out == seq_out || r->addr >= t->rows[out - 1].addr))
			t->rows[out++] = *r;
		if (r->file)
			continue;
		/* Its end: kept only with a row before it. */
		if (out - seq_out < 2 || t->rows[out - 1].file) {
			out = seq_out;
		} else {
			floor = r->addr;
		}
	}
	t->nr_rows = out;
}

/*
 * The header's fields up to its directory and file tables, with @c left at
 * those, and where the program starts into @program: the header says its
 * own length, so the program can be run even when the tables cannot be read.
 */
static int read_header(struct header *h, struct cursor *c, const struct line_sections *s,
		       uint64_t offset, const uint8_t **program)
{
	uint64_t length;

	*c = (struct cursor){ .big_endian = s->big_endian };
	*h = (struct header){ .offset_size = 4 };
	if (!s->line || offset >= s->line_size)
		return -EINVAL;
	c->p = s->line + offset;
	c->end = s->line + s->line_size;
	if (cursor__unit(c, &h->offset_size))
		return -EINVAL;
	h->version = cursor__u(c, 2);
	if (h->version < 2 || h->version > 5)
		return -ENOTSUP;
	if (h->version >= 5)
		cursor__skip(c,
			     2); /* address and segment selector sizes: set_address says its own */
	length = cursor__u(c, h->offset_size);
	if (c->bad || length > (uint64_t)(c->end - c->p))
		return -EINVAL;
	*program = c->p + length;
	h->min_inst_len = cursor__u(c, 1);
	if (h->version >= 4)
		cursor__u(c, 1); /* maximum operations per instruction: 1 but on VLIW */
	cursor__u(c, 1); /* default_is_stmt: lookups use every row, as llvm-symbolizer does */
	h->line_base = (int8_t)cursor__u(c, 1);
	h->line_range = cursor__u(c, 1);
	h->opcode_base = cursor__u(c, 1);
	h->opcode_lengths = c->p;
	cursor__skip(c, h->opcode_base ? h->opcode_base - 1 : 0);
	if (c->bad || !h->line_range || !h->opcode_base || *program > c->end)
		return -EINVAL;
	return 0;
}

/*
 * Run the program at @program into @t's rows, by @t's files, and clean
 * them up: the one way rows get into a table, whoever read the file names,
 * so that a table is sorted and without overlaps the same way whichever
 * path built it.
 */
static int decode_rows(struct line_table *t, const struct header *h, struct cursor *c,
		       const uint8_t *program)
{
	struct program pg = { .t = t, .sorted = true };
	int err;

	c->p = program;
	c->bad = false;
	err = run_program(&pg, h, c);
	/* Rows after the last end of a sequence belong to none that finished. */
	t->nr_rows = pg.seq_start;
	if (!err && !pg.sorted) {
		err = sort_sequences(t);
		if (!err)
			drop_overlaps(t);
	}
	return err;
}

int line_table__read(struct line_table *t, const struct line_sections *s, uint64_t offset,
		     const char *comp_dir)
{
	const uint8_t *program;
	size_t alloc_files = 0;
	struct cursor c;
	struct header h;
	int err;

	memset(t, 0, sizeof(*t));
	err = read_header(&h, &c, s, offset, &program);
	if (err)
		return err;
	if (h.version < 5) {
		err = read_v4_names(t, &h, &c, comp_dir, &alloc_files);
	} else {
		err = read_v5_entries(&c, s, &h, false, t, &alloc_files, &h.dirs, &h.nr_dirs,
				      comp_dir);
		if (!err)
			err = read_v5_entries(&c, s, &h, true, t, &alloc_files, &h.dirs, &h.nr_dirs,
					      comp_dir);
	}
	free(h.dirs);
	if (!err)
		err = decode_rows(t, &h, &c, program);
	if (err)
		line_table__release(t);
	return err;
}

int line_table__read_rows(struct line_table *t, const struct line_sections *s, uint64_t offset)
{
	const uint8_t *program;
	struct cursor c;
	struct header h;
	int err;

	free(t->rows);
	t->rows = NULL;
	t->nr_rows = 0;
	err = read_header(&h, &c, s, offset, &program);
	if (!err)
		err = decode_rows(t, &h, &c, program);
	if (err) {
		free(t->rows);
		t->rows = NULL;
		t->nr_rows = 0;
	}
	return err;
}

void line_table__release(struct line_table *t)
{
	for (size_t i = 0; i < t->nr_files; i++)
		free(t->files[i]);
	free(t->files);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
