/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * module.h - what one ELF file tells about its addresses: function names,
 * source lines and inline chains, from wherever the file keeps them.
 *
 * Names come from the file's own .symtab; a file with only .dynsym (every
 * stripped distribution binary) also gets the .symtab of its separate debug
 * file, else of its MiniDebugInfo (.gnu_debugdata), which holds the static
 * functions .dynsym lacks. Lines and inline chains come from the file's own
 * DWARF, else its debug file's (see debuginfo.h for where that is looked
 * for). Debug information is looked for the first time an address needs it.
 *
 * Go's code is named from the file's own function table (.gopclntab,
 * elf/gopclntab.h), stripped or not, with lines and inline chains: Go's
 * names, as its tracebacks print them; DWARF is not read for it.
 *
 * A lookup reports what addr2line -i -f would: the inline chain innermost
 * first; the outermost function is named by the symbol table when a symbol
 * covers the address, as llvm-symbolizer and perf do, else by the DWARF.
 *
 * Not thread-safe.
 */
#ifndef PROFILER_MODULE_H
#define PROFILER_MODULE_H

#include <stdbool.h>
#include <stdint.h>

#include "dwarf_index.h"

struct elf_symtab;
struct module;

struct module_opts {
	const char *root;      /* the target's root ("/proc/PID/root"); NULL: "/" */
	const char *debug_dir; /* NULL: /usr/lib/debug */
};

/* One function of an address's inline chain; strings owned by the module. */
struct module_loc {
	const char *name; /* linker name (not demangled), NULL when unknown */
	const char *file; /* source file, NULL when unknown */
	uint32_t line;	  /* 0 when unknown */
	uint32_t discriminator;
};

/* The deepest inline chain: as deep as the DWARF index goes, so none is cut short. */
#define MODULE_MAX_LOCS DWARF_INDEX_MAX_DEPTH

/*
 * A module for @tab (taken over, freed with the module), the symbols of the
 * file mapped at @path in the target's root (@path may be NULL when
 * unknown, which only disables debuglink lookups next to it). @opts is
 * copied. Returns NULL and sets errno on failure; @tab is the caller's then.
 */
struct module *module__new(struct elf_symtab *tab, const char *path,
			   const struct module_opts *opts);
void module__free(struct module *mod);

const struct elf_symtab *module__symtab(const struct module *mod);

/*
 * The inline chain at ELF virtual address @vaddr into @locs (room for
 * MODULE_MAX_LOCS), innermost first. Returns the number of entries, at
 * least 1; locs[0].name is NULL when nothing names the address.
 */
int module__lookup(struct module *mod, uint64_t vaddr, struct module_loc *locs);

/*
 * Do the module's answers come from its own file alone: a full .symtab and
 * DWARF of its own, nothing looked for elsewhere? Then they are the file's,
 * by build-id, and may be kept between runs.
 */
bool module__self_contained(struct module *mod);

/*
 * Addresses whose answers module__lookup() can give in one go, for callers
 * that keep answers by address range (symcache.h).
 */
struct module_region {
	struct dwarf_span *ranges; /* sorted, disjoint */
	size_t nr_ranges;
	/* sorted, each inside a range and not at its start: from one to the next, one answer */
	uint64_t *breaks;
	size_t nr_breaks;
};

/*
 * The region around ELF virtual address @vaddr: the ranges of the DWARF
 * unit that holds it, else the extent of the symbol that covers it between
 * units; and the breaks in them, the addresses where module__lookup()'s
 * answer may change. Returns 0, -ENOENT when neither a unit nor a symbol
 * covers @vaddr (code named by its FDE, which is not a region), or -ENOMEM.
 */
int module__region(struct module *mod, uint64_t vaddr, struct module_region *r);
void module_region__release(struct module_region *r);

/*
 * For code that nothing names: the start of the function holding ELF
 * virtual address @vaddr, as the file's own CFI (.eh_frame and
 * .debug_frame) tells, into @start. The table of FDEs is read the first
 * time. Returns 0, or -ENOENT when no FDE covers @vaddr.
 */
int module__function_start(struct module *mod, uint64_t vaddr, uint64_t *start);

/* Adds what became of the DWARF units of the file that lookups needed to @stats. */
void module__add_dwarf_stats(const struct module *mod, struct dwarf_index_stats *stats);

#endif
