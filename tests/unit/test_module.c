// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/module through its header: the symbols-pie fixture's
 * functions named with their lines, the same addresses in the stripped copy
 * (nothing names them, the CFI still finds where they start), and an inline
 * chain of this test program itself, named outermost by the symbol table.
 * Addresses come from the fixture program and from this process, never from
 * our own ELF code.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/elf_symtab.h"
#include "symbolize/module.h"
#include "test.h"
#include "tests/loaded_object.h"

/* No debug directory: what a module finds is the fixture's own. */
static const struct module_opts no_debug_dir = { .debug_dir = "/nonexistent" };

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

static struct module *open_module(const char *path)
{
	struct elf_symtab *tab = elf_symtab__open(path);
	struct module *mod;

	if (!tab) {
		test__fail(__FILE__, __LINE__, "elf_symtab__open('%s'): %s", path, strerror(errno));
		return NULL;
	}
	mod = module__new(tab, path, &no_debug_dir);
	if (!mod)
		test__fail(__FILE__, __LINE__, "module__new('%s'): %s", path, strerror(errno));
	return mod;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

TEST(module_names_and_lines)
{
	struct module_loc locs[MODULE_MAX_LOCS];
	uint64_t alpha = fixture_vaddr("fixture_alpha");
	uint64_t beta = fixture_vaddr("fixture_beta");
	uint64_t sized = fixture_vaddr("fixture_sized");
	struct module *mod;
	uint32_t line;

	CHECK(alpha && beta && sized);
	mod = open_module(test__fixture("symbols-pie"));
	if (!mod)
		return;
	/* A function's first and a later byte: its name, a line of symbols.c. */
	CHECK_U64(module__lookup(mod, alpha, locs), 1);
	CHECK_STR(locs[0].name, "fixture_alpha");
	CHECK(ends_with(locs[0].file, "tests/fixtures/symbols.c"));
	CHECK(locs[0].line > 0);
	line = locs[0].line;
	CHECK_U64(module__lookup(mod, beta + 1, locs), 1);
	CHECK_STR(locs[0].name, "fixture_beta");
	CHECK(ends_with(locs[0].file, "tests/fixtures/symbols.c"));
	CHECK(locs[0].line > line);
	/* Assembly the DWARF names no function in: the symbol table names it. */
	CHECK_U64(module__lookup(mod, sized, locs), 1);
	CHECK_STR(locs[0].name, "fixture_sized");
	/* Past fixture_sized's one byte, no symbol covers the padding. */
	CHECK_U64(module__lookup(mod, sized + 1, locs), 1);
	CHECK(!locs[0].name);
	module__free(mod);
}

/* The stripped copy: no .symtab, no DWARF, no debug file; its .eh_frame remains. */
TEST(module_stripped)
{
	struct module_loc locs[MODULE_MAX_LOCS];
	uint64_t alpha = fixture_vaddr("fixture_alpha"), start = 0;
	struct module *mod;

	CHECK(alpha);
	mod = open_module(test__fixture("symbols-stripped"));
	if (!mod)
		return;
	CHECK_U64(module__lookup(mod, alpha + 2, locs), 1);
	CHECK(!locs[0].name && !locs[0].file && !locs[0].line);
	CHECK(module__function_start(mod, alpha + 2, &start) == 0);
	CHECK_U64(start, alpha);
	CHECK(module__function_start(mod, 0, &start) == -ENOENT);
	module__free(mod);
}

/* --- an inline chain in this program ------------------------------------ */

static volatile int sink;
static int inner_line, outer_line;

static __attribute__((noinline)) uintptr_t return_address(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

static inline __attribute__((always_inline)) uintptr_t module_inner(void)
{
	uintptr_t pc;

	inner_line = __LINE__ + 1;
	pc = return_address();
	sink++;
	return pc;
}

/* module_inner inlined here. */
__attribute__((noinline)) uintptr_t module_outer(void)
{
	uintptr_t pc;

	outer_line = __LINE__ + 1;
	pc = module_inner();
	sink++;
	return pc;
}

TEST(module_inline_chain)
{
	uintptr_t pc = module_outer() - 1; /* in the call instruction */
	struct module_loc locs[MODULE_MAX_LOCS];
	struct loaded_object self;
	struct module *mod;

	CHECK(loaded_object__find(&self, true));
	mod = open_module("/proc/self/exe");
	if (!mod)
		return;
	CHECK_U64(module__lookup(mod, pc - self.bias, locs), 2);
	CHECK_STR(locs[0].name, "module_inner");
	CHECK(ends_with(locs[0].file, "tests/unit/test_module.c"));
	CHECK_U64(locs[0].line, inner_line);
	CHECK_STR(locs[1].name, "module_outer");
	CHECK_U64(locs[1].line, outer_line);
	module__free(mod);
}

static void free_null(void)
{
	module__free(NULL);
}

/* __free(NULL) is a no-op (STYLE.md): it neither crashes nor touches errno. */
TEST(module_free_null)
{
	const char *what = test__in_child(free_null);

	if (what)
		test__fail(__FILE__, __LINE__, "module__free(NULL): %s", what);
}
