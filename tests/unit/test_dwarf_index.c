// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/dwarf_index through its header: an inline chain of this
 * test program itself (two always_inline functions, their lines known from
 * __LINE__), the lines of the symbols-pie fixture's functions, and addresses
 * no DWARF covers.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbolize/dwarf_index.h"
#include "test.h"
#include "tests/loaded_object.h"

/* --- an inline chain in this program ------------------------------------ */

static volatile int sink;
static int inner_line, middle_line, outer_line;

/* The address its call returns to: in the caller, after the call instruction. */
static __attribute__((noinline)) uintptr_t return_address(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

static inline __attribute__((always_inline)) uintptr_t dwarf_index_inner(void)
{
	uintptr_t pc;

	inner_line = __LINE__ + 1;
	pc = return_address();
	sink++;
	return pc;
}

static inline __attribute__((always_inline)) uintptr_t dwarf_index_middle(void)
{
	uintptr_t pc;

	middle_line = __LINE__ + 1;
	pc = dwarf_index_inner();
	sink++;
	return pc;
}

/* dwarf_index_inner inlined into dwarf_index_middle, inlined here. */
__attribute__((noinline)) uintptr_t dwarf_index_outer(void)
{
	uintptr_t pc;

	outer_line = __LINE__ + 1;
	pc = dwarf_index_middle();
	sink++;
	return pc;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Open @path's ELF and index its DWARF; NULL (and a failed check) when that fails. */
static struct dwarf_index *open_index(const char *path, struct elf_file **file)
{
	struct dwarf_index *idx;

	*file = elf_file__open(path);
	if (!*file) {
		test__fail(__FILE__, __LINE__, "cannot open '%s'", path);
		return NULL;
	}
	idx = dwarf_index__new(*file, path);
	if (!idx)
		test__fail(__FILE__, __LINE__, "dwarf_index__new('%s'): %s", path, strerror(errno));
	return idx;
}

static void close_index(struct dwarf_index *idx, struct elf_file *file)
{
	dwarf_index__free(idx);
	elf_file__put(file);
}

static void check_loc(const struct dwarf_loc *loc, const char *function, int line)
{
	CHECK_STR(loc->function, function);
	CHECK(ends_with(loc->file, "tests/unit/test_dwarf_index.c"));
	CHECK_U64(loc->line, line);
}

TEST(dwarf_index_inline_chain)
{
	uintptr_t pc = dwarf_index_outer() - 1; /* in the call instruction */
	struct dwarf_loc locs[DWARF_INDEX_MAX_DEPTH];
	struct loaded_object self;
	struct dwarf_index *idx;
	struct elf_file *file;
	int n;

	CHECK(loaded_object__find(&self, true));
	idx = open_index("/proc/self/exe", &file);
	if (idx) {
		n = dwarf_index__lookup(idx, pc - self.bias, locs, DWARF_INDEX_MAX_DEPTH);
		CHECK_U64(n, 3);
		check_loc(&locs[0], "dwarf_index_inner", inner_line);
		check_loc(&locs[1], "dwarf_index_middle", middle_line);
		check_loc(&locs[2], "dwarf_index_outer", outer_line);
		/* Room for fewer: the outer ones are dropped. */
		n = dwarf_index__lookup(idx, pc - self.bias, locs, 1);
		CHECK_U64(n, 1);
		check_loc(&locs[0], "dwarf_index_inner", inner_line);
	}
	close_index(idx, file);
}

/* --- the fixtures ------------------------------------------------------- */

/* The link-time address of function @name in symbols-pie, as the program prints it; 0 if none. */
static uint64_t fixture_vaddr(const char *name)
{
	char cmd[4200], line[256], sym[64];
	unsigned long long addr, vaddr, found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s'", test__fixture("symbols-pie"));
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "sym %63s %llx %llx", sym, &addr, &vaddr) == 3 &&
		    !strcmp(sym, name))
			found = vaddr;
	return pclose(f) == 0 ? found : 0;
}

/* Each fixture function's entry is in it, at a line of symbols.c, in source order. */
TEST(dwarf_index_fixture_lines)
{
	static const char *const names[] = { "fixture_alpha", "fixture_beta", "fixture_local" };
	struct dwarf_loc locs[DWARF_INDEX_MAX_DEPTH];
	uint32_t last_line = 0;
	struct dwarf_index *idx;
	struct elf_file *file;
	int n;

	idx = open_index(test__fixture("symbols-pie"), &file);
	for (size_t i = 0; idx && i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t vaddr = fixture_vaddr(names[i]);

		CHECK(vaddr);
		n = dwarf_index__lookup(idx, vaddr, locs, DWARF_INDEX_MAX_DEPTH);
		CHECK_U64(n, 1);
		CHECK_STR(locs[0].function, names[i]);
		CHECK(ends_with(locs[0].file, "tests/fixtures/symbols.c"));
		if (locs[0].line <= last_line)
			test__fail(__FILE__, __LINE__, "%s at line %u, not after line %u", names[i],
				   locs[0].line, last_line);
		last_line = locs[0].line;
	}
	close_index(idx, file);
}

TEST(dwarf_index_no_dwarf)
{
	struct dwarf_loc locs[DWARF_INDEX_MAX_DEPTH];
	struct dwarf_index *idx;
	uint64_t sized;
	GElf_Ehdr ehdr;
	struct elf_file *file;

	/* No unit covers _start (crt1.o has no DWARF) or the ELF header. */
	idx = open_index(test__fixture("symbols-pie"), &file);
	if (idx) {
		sized = fixture_vaddr("fixture_sized");
		CHECK(gelf_getehdr(elf_file__elf(file), &ehdr));
		CHECK(dwarf_index__lookup(idx, fixture_vaddr("main"), locs, 1) == 1);
		CHECK(dwarf_index__lookup(idx, ehdr.e_entry, locs, 1) == 0);
		CHECK(dwarf_index__lookup(idx, 0, locs, 1) == 0);
		/* fixture_sized is assembly inside symbols.c's unit: a unit, no function. */
		CHECK(sized);
		CHECK(dwarf_index__lookup(idx, sized, locs, 1) == 1);
		CHECK(!locs[0].function);
	}
	close_index(idx, file);

	/* A file without DWARF has no index. */
	file = elf_file__open(test__fixture("symbols-stripped"));
	CHECK(file);
	errno = 0;
	idx = dwarf_index__new(file, "symbols-stripped");
	if (idx || errno != ENOENT)
		test__fail(__FILE__, __LINE__, "symbols-stripped: index %p, %s", (void *)idx,
			   strerror(errno));
	close_index(idx, file);
}
