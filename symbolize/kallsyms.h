/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kallsyms.h - the kernel's text symbols, from /proc/kallsyms or a file in its format.
 *
 * Each line is "ADDRESS TYPE NAME", with "\t[MODULE]" appended for symbols
 * of loadable modules (and of BPF programs and ftrace trampolines, whose
 * "modules" are [bpf] and [__builtin__ftrace]). Text symbols (types t, T,
 * w, W) are kept, sorted by address, one per address (T before W or w before
 * t, then the shortest name, then the smallest by strcmp()).
 *
 * kallsyms gives no sizes: a symbol covers the addresses up to the next
 * symbol, and the last one up to the end of its page.
 *
 * Without privilege (kernel.kptr_restrict) the kernel lists every address as
 * 0. Such a file loads without error but with no symbols, and
 * kallsyms__addresses_hidden() tells the caller why kernel frames stay
 * unresolved.
 *
 * Names and module names are owned by the kallsyms object. Immutable once
 * loaded, so lookups may run concurrently.
 */
#ifndef PROFILER_KALLSYMS_H
#define PROFILER_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kallsyms;

struct kallsym {
	uint64_t addr;
	const char *name;
	const char *module; /* without brackets; NULL for the kernel image */
};

/*
 * Read and index @path (NULL: /proc/kallsyms). Lines that do not parse are
 * skipped. Returns NULL and sets errno when the file cannot be read.
 */
struct kallsyms *kallsyms__load(const char *path);

/* The same from the text of a kallsyms file (NUL-terminated; copied). */
struct kallsyms *kallsyms__parse(const char *text);

void kallsyms__free(struct kallsyms *ks);

/* The symbol covering @addr, or NULL. Binary search. */
const struct kallsym *kallsyms__lookup(const struct kallsyms *ks, uint64_t addr);

/* All symbols, sorted by address with unique addresses; @nr receives their count. */
const struct kallsym *kallsyms__syms(const struct kallsyms *ks, size_t *nr);

/*
 * The addresses the symbols cover: [@start, @end), from the first symbol to
 * the end of the last one. Both 0 when there are no symbols.
 */
void kallsyms__range(const struct kallsyms *ks, uint64_t *start, uint64_t *end);

/* Were there text symbols, all at address 0 (hidden from us by kptr_restrict)? */
bool kallsyms__addresses_hidden(const struct kallsyms *ks);

#endif
