// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of elf/gopclntab against Go's own runtime: the gosym fixture
 * (tests/fixtures/gosym/main.go) printed, into gosym-frames.txt, the inline
 * chain runtime.Callers and runtime.FuncForPC give each address of a few of
 * its stacks; the reader must give the same names, files and lines, in the
 * program built whole and in its stripped copy (no symbols, no DWARF). Then
 * the table cut short: fewer answers, never another name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "elf/gopclntab.h"
#include "test.h"

/* One address of gosym-frames.txt and its chain, innermost first. */
struct go_frame {
	uint64_t addr;
	int nr;
	struct {
		char name[128], file[512];
		uint32_t line;
	} locs[4];
};

#define MAX_GO_FRAMES 64

/* Read fixture @fixture (gosym-frames.txt): the number of addresses, or -1. */
static int read_go_frames(const char *fixture, struct go_frame *frames)
{
	char line[1024], name[128], file[512];
	unsigned long long addr;
	unsigned int depth, lineno;
	int nr = 0;
	FILE *f;

	f = fopen(test__fixture(fixture), "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct go_frame *g;

		if (sscanf(line, "%llx\t%u\t%127[^\t]\t%511[^\t]\t%u", &addr, &depth, name, file,
			   &lineno) != 5 ||
		    depth >= 4)
			continue;
		if (!depth) {
			if (nr == MAX_GO_FRAMES)
				break;
			frames[nr++] = (struct go_frame){ .addr = addr };
		}
		g = &frames[nr - 1];
		if (!nr || g->addr != addr || (int)depth != g->nr)
			continue;
		strcpy(g->locs[depth].name, name);
		strcpy(g->locs[depth].file, file);
		g->locs[depth].line = lineno;
		g->nr++;
	}
	fclose(f);
	return nr;
}

/*
 * Fixture @fixture's table into @t, its file into *@elf (the caller puts
 * it), and what Go said of its addresses, from fixture @frames_txt, into
 * @frames: their number, or -1 with the case failed.
 */
static int open_fixture(const char *fixture, const char *frames_txt, struct go_frame *frames,
			struct elf_file **elf, struct gopclntab *t)
{
	int nr = read_go_frames(frames_txt, frames);

	*elf = nr > 0 ? elf_file__open(test__fixture(fixture)) : NULL;
	if (!*elf || gopclntab__open(t, elf_file__elf(*elf))) {
		test__fail(__FILE__, __LINE__, "%s: %d addresses in %s, %s", fixture, nr,
			   frames_txt, *elf ? "no table read" : "not opened");
		elf_file__put(*elf);
		return -1;
	}
	return nr;
}

/* Every address of the fixture's stacks (in fixture @frames_txt), as Go's runtime names them. */
static void check_fixture(const char *fixture, const char *frames_txt)
{
	struct gopclntab_loc locs[GOPCLNTAB_MAX_DEPTH];
	struct go_frame frames[MAX_GO_FRAMES];
	bool inlined = false, generic = false, method = false;
	struct elf_file *elf;
	struct gopclntab t;
	int nr;

	nr = open_fixture(fixture, frames_txt, frames, &elf, &t);
	CHECK(nr >= 8);
	CHECK(t.version >= 116 && t.nr_funcs > 1000);
	for (int i = 0; i < nr; i++) {
		const struct go_frame *g = &frames[i];
		int got = gopclntab__lookup(&t, g->addr, locs);

		if (got != g->nr)
			test__fail(__FILE__, __LINE__,
				   "%s 0x%" PRIx64 " (%s): %d functions, Go says %d", fixture,
				   g->addr, g->locs[0].name, got, g->nr);
		for (int k = 0; k < got && k < g->nr; k++) {
			CHECK_STR(locs[k].name, g->locs[k].name);
			CHECK_STR(locs[k].file, g->locs[k].file);
			CHECK_U64(locs[k].line, g->locs[k].line);
		}
		inlined |= g->nr > 1;
		generic |= strstr(g->locs[0].name, "[...]") != NULL;
		method |= strstr(g->locs[0].name, ".(*machine).") ||
			  strstr(g->locs[1].name, ".(*machine).");
	}
	/* The fixture's stacks have what they were written for. */
	CHECK(inlined && generic && method);
	elf_file__put(elf);
}

TEST(gopclntab_names_as_go_does)
{
	check_fixture("gosym", "gosym-frames.txt");
}

TEST(gopclntab_stripped_names_as_go_does)
{
	check_fixture("gosym-stripped", "gosym-frames.txt");
}

/* Linked by the system's linker (cgo), position-independent: the table is inside .data.rel.ro. */
TEST(gopclntab_cgo_pie_names_as_go_does)
{
	check_fixture("gosym-cgo-pie", "gosym-cgo-pie-frames.txt");
}

/* The runtime's outermost functions, by name: what the unwinder marks as roots. */
TEST(gopclntab_find_name)
{
	struct gopclntab_loc locs[GOPCLNTAB_MAX_DEPTH];
	struct go_frame frames[MAX_GO_FRAMES];
	struct elf_file *elf;
	struct gopclntab t;
	uint64_t lo, hi;
	int nr;

	nr = open_fixture("gosym-stripped", "gosym-frames.txt", frames, &elf, &t);
	CHECK(nr > 0);
	CHECK(gopclntab__find_name(&t, "runtime.goexit", &lo, &hi) == 0);
	CHECK(lo < hi && hi - lo < 64);
	/* Every goroutine's stack ends in goexit: the fixture's main does. */
	CHECK(frames[nr - 1].addr >= lo && frames[nr - 1].addr < hi);
	CHECK(gopclntab__lookup(&t, lo, locs) == 1);
	CHECK_STR(locs[0].name, "runtime.goexit");
	CHECK(gopclntab__find_name(&t, "runtime.no such function", &lo, &hi) == -ENOENT);
	/* Below the first function and past the last: nothing. */
	CHECK(gopclntab__lookup(&t, 0x1000, locs) == 0);
	CHECK(gopclntab__lookup(&t, UINT64_MAX - 1, locs) == 0);
	elf_file__put(elf);
}

/*
 * The table cut at every 4 KiB and at the last bytes: each answer is
 * none, the whole table's, or its machine function alone; never another
 * function's name.
 */
TEST(gopclntab_truncated)
{
	struct gopclntab_loc want[GOPCLNTAB_MAX_DEPTH], got[GOPCLNTAB_MAX_DEPTH];
	struct go_frame frames[MAX_GO_FRAMES];
	struct gopclntab whole, cut;
	struct gopclntab_region table;
	size_t nr_answered = 0, nr_cuts = 0;
	struct elf_file *elf;
	int nr;

	nr = open_fixture("gosym-stripped", "gosym-frames.txt", frames, &elf, &whole);
	CHECK(nr > 0);
	for (size_t size = 0; size <= whole.table.size;
	     size += size + 4096 < whole.table.size ? 4096 : 1) {
		table = whole.table;
		table.size = size;
		if (gopclntab__open_regions(&cut, &table, &whole.rodata, whole.gofunc))
			continue;
		nr_cuts++;
		for (int i = 0; i < nr; i++) {
			int n = gopclntab__lookup(&cut, frames[i].addr, got);
			int w = gopclntab__lookup(&whole, frames[i].addr, want);

			nr_answered += n > 0;
			/* A chain that cannot be read whole is its machine function alone. */
			if (n > 0 && n != w && n != 1)
				test__fail(__FILE__, __LINE__,
					   "cut at %zu: 0x%" PRIx64 ": %d of %d", size,
					   frames[i].addr, n, w);
			for (int k = 0; k < n && n <= w; k++)
				if (strcmp(got[k].name, want[w - n + k].name))
					test__fail(__FILE__, __LINE__,
						   "cut at %zu: 0x%" PRIx64 " named '%s'", size,
						   frames[i].addr, got[k].name);
		}
		if (size == whole.table.size)
			break;
	}
	/* The cuts past the header read, and some answered. */
	CHECK(nr_cuts > 0 && nr_answered > 0);
	elf_file__put(elf);
}

/* Not Go: no table. An older layout: refused as such. */
TEST(gopclntab_refuses)
{
	static const uint8_t go12[64] = { 0xfb, 0xff, 0xff, 0xff, 0, 0, 1, 8 };
	static const uint8_t junk[64] = { 0x7f, 'E', 'L', 'F' };
	struct gopclntab_region r = { .addr = 0x1000, .data = go12, .size = sizeof(go12) };
	struct elf_file *elf;
	struct gopclntab t;

	elf = elf_file__open(test__fixture("symbols-pie"));
	CHECK(elf);
	CHECK(gopclntab__open(&t, elf_file__elf(elf)) == -ENOENT);
	elf_file__put(elf);
	CHECK(gopclntab__open_regions(&t, &r, NULL, 0) == -ENOTSUP);
	r.data = junk;
	CHECK(gopclntab__open_regions(&t, &r, NULL, 0) == -EINVAL);
	r.size = 3;
	CHECK(gopclntab__open_regions(&t, &r, NULL, 0) == -EINVAL);
}
