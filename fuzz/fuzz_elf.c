// SPDX-License-Identifier: GPL-2.0-only
/*
 * ELF files through the symbolizer's module: the input is written to a
 * memfd, opened as the profiler opens a mapped file (elf_symtab__open_fd(),
 * its symbols, build-id and segments), made a module, and looked up at the
 * addresses its symbols and executable sections name. That reads the DWARF
 * (dwarf_index, die_reader, line_table), MiniDebugInfo (debuginfo) and CFI
 * (fde_table) of the file as a profile would, and the names found are
 * demangled. The same file opened as the collector does (elf_file) has its
 * unwind table built (unwind_table, reading .eh_frame and .debug_frame). Separate debug files are looked for in directories that do
 * not exist, and debuginfod is off.
 *
 * Checks: every lookup returns 1 to MODULE_MAX_LOCS frames whose strings can
 * be read, and asking again gives the same answer; an unwind table is
 * sorted, has no two rows in a row with the same rule, only rules the
 * builder makes, and no more rows than its bound.
 */
#include <gelf.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector/unwind_table.h"
#include "elf/elf_file.h"
#include "fuzz.h"
#include "symbolize/demangle.h"
#include "symbolize/elf_symtab.h"
#include "symbolize/module.h"

/* Enough addresses to reach every unit of a small file, few enough to stay fast. */
#define ELF_FUZZ_MAX_SYMS 64
#define ELF_FUZZ_MAX_SECTIONS 16

static void elf_fuzz_lookup(struct module *mod, uint64_t vaddr)
{
	struct module_loc locs[MODULE_MAX_LOCS], again[MODULE_MAX_LOCS];
	uint64_t start;
	int nr, nr_again;

	/* As the symbolizer names code that nothing names: through the FDE table. */
	if (!module__function_start(mod, vaddr, &start))
		FUZZ_CHECK(start <= vaddr);

	nr = module__lookup(mod, vaddr, locs);
	FUZZ_CHECK(nr >= 1 && nr <= MODULE_MAX_LOCS);
	for (int i = 0; i < nr; i++) {
		/* Reading them is the check: ASan sees a string freed or never ended. */
		if (locs[i].name) {
			FUZZ_CHECK(strlen(locs[i].name) < SIZE_MAX);
			/* As the symbolizer names frames (libiberty is not instrumented). */
			free(demangle(locs[i].name));
		}
		if (locs[i].file)
			FUZZ_CHECK(strlen(locs[i].file) < SIZE_MAX);
	}
	nr_again = module__lookup(mod, vaddr, again);
	FUZZ_CHECK(nr_again == nr);
	for (int i = 0; i < nr; i++) {
		FUZZ_CHECK(again[i].name == locs[i].name && again[i].file == locs[i].file);
		FUZZ_CHECK(again[i].line == locs[i].line);
	}
}

/* The executable sections' first, middle and last addresses. */
static void elf_fuzz_sections(struct module *mod, Elf *elf)
{
	Elf_Scn *scn = NULL;
	int n = 0;

	while ((scn = elf_nextscn(elf, scn)) && n < ELF_FUZZ_MAX_SECTIONS) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR) || !shdr.sh_size)
			continue;
		n++;
		elf_fuzz_lookup(mod, shdr.sh_addr);
		elf_fuzz_lookup(mod, shdr.sh_addr + shdr.sh_size / 2);
		elf_fuzz_lookup(mod, shdr.sh_addr + shdr.sh_size - 1);
	}
}

static void elf_fuzz_unwind_table(int fd)
{
	struct elf_file *f = elf_file__open_fd(fd, "fuzz.elf");
	struct unwind_table t = { 0 };

	if (!f)
		return;
	if (!unwind_table__build(&t, f)) {
		FUZZ_CHECK(t.nr && t.nr <= UNWIND_TABLE_MAX_ROWS);
		for (size_t i = 0; i < t.nr; i++) {
			const struct unwind_rule *r = &t.rows[i].rule,
						 *prev = &t.rows[i - !!i].rule;

			FUZZ_CHECK(r->cfa < UNWIND_CFA_NO_ROOM);
			FUZZ_CHECK(!i || t.rows[i - 1].pc < t.rows[i].pc);
			FUZZ_CHECK(!i || memcmp(r, prev, sizeof(*r)));
		}
	}
	unwind_table__release(&t);
	elf_file__put(f);
}

static int fuzz_elf(const uint8_t *data, size_t size)
{
	static const struct module_opts opts = {
		.root = "/nonexistent/fuzz-root",
		.debug_dir = "/nonexistent/fuzz-debug",
	};
	static int fd = -1;
	const struct elf_sym *syms;
	struct elf_symtab *tab;
	const char *build_id;
	struct module *mod;
	size_t nr_syms;
	uint64_t vaddr;

	fuzz_log_init();
	if (fd < 0) {
		unsetenv("DEBUGINFOD_URLS");
		fd = memfd_create("fuzz.elf", MFD_CLOEXEC);
		FUZZ_CHECK(fd >= 0);
	}
	FUZZ_CHECK(!ftruncate(fd, 0));
	FUZZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	elf_fuzz_unwind_table(fd);
	tab = elf_symtab__open_fd(fd, "fuzz.elf");
	if (!tab)
		return 0;
	build_id = elf_symtab__build_id(tab);
	FUZZ_CHECK(!build_id || strspn(build_id, "0123456789abcdef") == strlen(build_id));
	/* What the symbolizer asks of a mapping's file offsets. */
	for (uint64_t off = 0; off < size; off += size / 4 + 1)
		elf_symtab__offset_to_vaddr(tab, off, &vaddr);
	syms = elf_symtab__syms(tab, &nr_syms);
	for (size_t i = 0; i < nr_syms; i++) {
		FUZZ_CHECK(!i || syms[i - 1].addr < syms[i].addr);
		FUZZ_CHECK(syms[i].name && strlen(syms[i].name) < SIZE_MAX);
	}

	mod = module__new(tab, NULL, &opts);
	if (!mod) {
		elf_symtab__free(tab);
		return 0;
	}
	/* module__lookup() reads no symbol past its module: the table stays valid. */
	for (size_t i = 0; i < nr_syms && i < ELF_FUZZ_MAX_SYMS; i++) {
		elf_fuzz_lookup(mod, syms[i].addr);
		if (syms[i].size > 1) {
			elf_fuzz_lookup(mod, syms[i].addr + syms[i].size / 2);
			elf_fuzz_lookup(mod, syms[i].addr + syms[i].size - 1);
		}
	}
	elf_fuzz_sections(mod, elf_symtab__elf(module__symtab(mod)));
	module__free(mod);
	return 0;
}

FUZZ_TARGET(fuzz_elf)
