// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/dwarf_index where its fast readers cannot read the
 * DWARF and libdw reads it instead: a split DWARF unit (its functions in a
 * .dwo file), a unit with a form nobody knows, and a line program header
 * our decoder does not read. Each case first finds what it looks for
 * where the fast path reads the DWARF, so that finding nothing cannot pass.
 * Fixtures: see DWARF_FIXTURES in the Makefile.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbolize/dwarf_index.h"
#include "symbolize/line_table.h"
#include "test.h"

struct fixture {
	struct elf_file *file;
	Elf *elf; /* @file's */
	struct dwarf_index *idx;
};

static int fixture_open(struct fixture *f, const char *name)
{
	const char *path = test__fixture(name);

	f->idx = NULL;
	f->elf = NULL;
	f->file = elf_file__open(path);
	if (!f->file)
		return -1;
	f->elf = elf_file__elf(f->file);
	f->idx = dwarf_index__new(f->file, path);
	return f->idx ? 0 : -1;
}

static void fixture_close(struct fixture *f)
{
	dwarf_index__free(f->idx);
	elf_file__put(f->file);
}

static struct dwarf_index_stats stats_of(const struct fixture *f)
{
	struct dwarf_index_stats st = { 0 };

	dwarf_index__add_stats(f->idx, &st);
	return st;
}

/* The value and size of symbol @name in @elf's .symtab, read with libelf alone. */
static int symbol(Elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, i, &sym))
				continue;
			n = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*value = sym.st_value;
				*size = sym.st_size;
				return 0;
			}
		}
	}
	return -1;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* One address's chain, as text: "fn file:line < fn file:line ...". */
static void chain_text(struct dwarf_index *idx, uint64_t addr, char *buf, size_t size)
{
	struct dwarf_loc locs[8];
	int nr = dwarf_index__lookup(idx, addr, locs, 8);
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < nr && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s %s:%u", i ? " < " : "",
				locs[i].function ? locs[i].function : "?",
				locs[i].file ? locs[i].file : "?", locs[i].line);
}

/*
 * How many addresses of split_outer() in fixture @name have split_inner()
 * inlined at them; and its chains at each offset into @chains (128 bytes
 * each, room for @max offsets).
 */
static int inlined_addresses(struct fixture *f, char (*chains)[128], size_t max)
{
	struct dwarf_loc locs[8];
	uint64_t value, size;
	int found = 0;

	if (symbol(f->elf, "split_outer", &value, &size) || !size || size > max)
		return -1;
	for (uint64_t a = value; a < value + size; a++) {
		int nr = dwarf_index__lookup(f->idx, a, locs, 8);

		chain_text(f->idx, a, chains[a - value], 128);
		if (nr == 2 && str_eq(locs[0].function, "split_inner") &&
		    str_eq(locs[1].function, "split_outer") && locs[0].line && locs[1].line)
			found++;
	}
	return found;
}

/* Precondition: the function and its inlined call are found with the DWARF in place. */
TEST(dwarf_index_split_unit_read_by_libdw)
{
	static char whole[256][128], split[256][128];
	struct dwarf_index_stats st;
	struct fixture f;
	int n_whole, n_split;

	CHECK(!fixture_open(&f, "split-dwarf-whole"));
	n_whole = inlined_addresses(&f, whole, 256);
	st = stats_of(&f);
	fixture_close(&f);
	CHECK(n_whole > 0);
	CHECK_U64(st.units, 1);
	CHECK_U64(st.unread[DWARF_UNIT_SPLIT] + st.by_libdw + st.lost, 0);

	CHECK(!fixture_open(&f, "split-dwarf"));
	n_split = inlined_addresses(&f, split, 256);
	st = stats_of(&f);
	fixture_close(&f);
	CHECK_U64(st.units, 1);
	CHECK_U64(st.unread[DWARF_UNIT_SPLIT], 1);
	CHECK_U64(st.by_libdw, 1);
	CHECK_U64(st.lost, 0);
	CHECK_U64(n_split, n_whole);
	/* The same code: the same chains, offset by offset. */
	for (int i = 0; i < 256; i++)
		CHECK_STR(split[i], whole[i]);
}

TEST(dwarf_index_split_unit_without_dwo_counted)
{
	static char chains[256][128];
	struct dwarf_index_stats st;
	struct fixture f;
	int n;

	CHECK(!fixture_open(&f, "split-dwarf-nodwo"));
	n = inlined_addresses(&f, chains, 256);
	st = stats_of(&f);
	fixture_close(&f);
	CHECK_U64(n, 0);
	CHECK_U64(st.units, 1);
	CHECK_U64(st.unread[DWARF_UNIT_SPLIT], 1);
	CHECK_U64(st.by_libdw, 0);
	CHECK_U64(st.lost, 1);
}

/* known_fn comes before the DIE with the unknown form, lost_fn after it. */
TEST(dwarf_index_unknown_form_counted)
{
	struct dwarf_index_stats st;
	struct dwarf_loc loc;
	char known[64] = "", lost[64] = "";
	struct fixture f;

	CHECK(!fixture_open(&f, "unknown-form.so"));
	/* Names point into the index: copied before it goes. */
	if (dwarf_index__lookup(f.idx, 0x1010, &loc, 1) == 1)
		snprintf(known, sizeof(known), "%s", loc.function ? loc.function : "(null)");
	if (dwarf_index__lookup(f.idx, 0x1110, &loc, 1) == 1)
		snprintf(lost, sizeof(lost), "%s", loc.function ? loc.function : "(null)");
	st = stats_of(&f);
	fixture_close(&f);
	CHECK_STR(known, "known_fn");
	CHECK_STR(lost, "(null)");
	CHECK_U64(st.units, 1);
	CHECK_U64(st.unread[DWARF_UNIT_UNKNOWN], 1);
	CHECK_U64(st.by_libdw, 0);
	CHECK_U64(st.lost, 1);
}

/*
 * overlapping-lines.so: two units with one line program (overlapping,
 * unordered sequences, one at address 0), the second's addresses 0x10000
 * up and its header in a form our decoder does not read, so that libdw
 * reads its file names. Both give the same lines at every address, and
 * the ones the fast path's clean-up gives.
 */
TEST(dwarf_index_line_fallback_cleans_up_like_fast_path)
{
	static const struct {
		uint64_t addr;
		uint32_t line; /* 0: none */
	} want[] = {
		{ 0x150, 0 },	/* the sequence at address 0 is discarded code */
		{ 0xf05, 40 },	/* a sequence before the one before it */
		{ 0x1005, 10 }, /* A */
		{ 0x1035, 12 }, /* A keeps what B, starting inside it, overlaps */
		{ 0x1045, 0 },	/* between A's end and B's first row after it */
		{ 0x1055, 22 }, /* B after A's end */
	};
	struct line_sections s = { 0 };
	struct line_table t;
	struct fixture f;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint32_t unit_length;
	int err_ours = 0, err_libdw = 0;

	CHECK(!fixture_open(&f, "overlapping-lines.so"));
	/* Precondition: our decoder reads the first program and not the second. */
	elf_getshdrstrndx(f.elf, &shstrndx);
	while ((scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (gelf_getshdr(scn, &shdr) &&
		    !strcmp(elf_strptr(f.elf, shstrndx, shdr.sh_name), ".debug_line") &&
		    (data = elf_getdata(scn, NULL))) {
			s.line = data->d_buf;
			s.line_size = data->d_size;
		}
	}
	if (s.line && s.line_size > 4) {
		memcpy(&unit_length, s.line, 4);
		err_ours = line_table__read(&t, &s, 0, "/src");
		line_table__release(&t);
		err_libdw = line_table__read(&t, &s, 4 + unit_length, "/src");
		line_table__release(&t);
	}
	for (uint64_t a = 0x100; a < 0x2000 && !test__failed(); a++) {
		struct dwarf_loc ours, libdw;
		int n1 = dwarf_index__lookup(f.idx, a, &ours, 1);
		int n2 = dwarf_index__lookup(f.idx, a + 0x10000, &libdw, 1);

		CHECK_U64(n1, 1);
		CHECK_U64(n2, 1);
		if (!str_eq(ours.file, libdw.file) || ours.line != libdw.line)
			test__fail(__FILE__, __LINE__, "at 0x%" PRIx64 ": %s:%u, libdw's %s:%u", a,
				   ours.file ? ours.file : "?", ours.line,
				   libdw.file ? libdw.file : "?", libdw.line);
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]) && !test__failed(); i++) {
		struct dwarf_loc ours, libdw;

		dwarf_index__lookup(f.idx, want[i].addr, &ours, 1);
		dwarf_index__lookup(f.idx, want[i].addr + 0x10000, &libdw, 1);
		if (ours.line != want[i].line || libdw.line != want[i].line ||
		    (want[i].line &&
		     (!str_eq(ours.file, "/src/b.c") || !str_eq(libdw.file, "/src/b.c"))))
			test__fail(__FILE__, __LINE__, "at 0x%" PRIx64 ": lines %u and %u, not %u",
				   want[i].addr, ours.line, libdw.line, want[i].line);
	}
	fixture_close(&f);
	CHECK(s.line);
	CHECK_U64(err_ours, 0);
	CHECK_U64(err_libdw, -ENOTSUP);
}
