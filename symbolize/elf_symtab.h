/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elf_symtab.h - the function symbols of one ELF file, sorted for lookup.
 *
 * An elf_symtab holds the STT_FUNC and STT_GNU_IFUNC symbols with a nonzero
 * value of one ELF file (an elf_file, elf/elf_file.h), taken from .symtab, or
 * from .dynsym only when there is no .symtab, in one array sorted by
 * address. The file's load segments and build-id are its elf_file's.
 * libdwfl's symbol lookup is a linear scan; this is
 * a binary search over a compact array (43 ns per lookup on libLLVM-14's
 * 33,850 symbols, measured with bench/symbolize-bench).
 *
 * The entries of the PLT (.plt, .plt.sec, .plt.got, on x86-64), which no
 * symbol covers, are named as perf and objdump name them, "puts@plt", from
 * the relocation of the GOT slot each jumps through: a program calling a
 * library function in a loop spends samples there.
 *
 * Of several symbols at one address one is kept, chosen deterministically:
 * GLOBAL (or GNU_UNIQUE) before WEAK before LOCAL, then the shortest name,
 * then the smallest by strcmp(); it takes the largest size among them.
 *
 * Symbol names point into the file's string table, which stays mapped (the
 * table holds a reference to its elf_file) until elf_symtab__free(): no
 * name is copied, but the PLT entries', which are the table's own.
 *
 * A file without any function symbol (a stripped executable) is not an error:
 * it opens with no symbols, and offset translation and the build-id still work.
 *
 * An elf_symtab is immutable once opened, so lookups may run concurrently.
 */
#ifndef PROFILER_ELF_SYMTAB_H
#define PROFILER_ELF_SYMTAB_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_symtab;

struct elf_sym {
	uint64_t addr; /* ELF virtual address (st_value) */
	/*
	 * Bytes covered: st_size, or for a symbol of size 0 the distance to the
	 * next symbol (or to the end of its section when it is the last one).
	 */
	uint64_t size;
	const char *name; /* linker name, not demangled; owned by the elf_symtab */
};

struct elf_file;

/*
 * Read the symbols of @file, of which the table takes a reference of its
 * own (the caller keeps its). Returns NULL and sets errno on failure.
 */
struct elf_symtab *elf_symtab__new(struct elf_file *file);

/*
 * Read the symbols of the ELF file open as @fd; @path is only used in
 * messages (may be NULL). The caller keeps, and closes, @fd.
 * Returns NULL and sets errno on failure (ENOEXEC: not an ELF file).
 */
struct elf_symtab *elf_symtab__open_fd(int fd, const char *path);

/* The same for the file at @path. */
struct elf_symtab *elf_symtab__open(const char *path);

/*
 * The same for an ELF image in memory (the vDSO as read from a process);
 * @image is copied. @name is only used in messages (may be NULL).
 */
struct elf_symtab *elf_symtab__open_mem(const void *image, size_t size, const char *name);

void elf_symtab__free(struct elf_symtab *tab);

/*
 * The symbol covering ELF virtual address @vaddr: the last one at or below
 * it, if @vaddr is within its size. NULL when none covers it. Binary search.
 */
const struct elf_sym *elf_symtab__lookup(const struct elf_symtab *tab, uint64_t vaddr);

/* All symbols, sorted by address with unique addresses; @nr receives their count. */
const struct elf_sym *elf_symtab__syms(const struct elf_symtab *tab, size_t *nr);

/* The file's ELF handle, for reading its DWARF; valid until elf_symtab__free(). */
Elf *elf_symtab__elf(const struct elf_symtab *tab);

/* The file itself; the table's reference, valid until elf_symtab__free(). */
struct elf_file *elf_symtab__file(const struct elf_symtab *tab);

/* Were the symbols taken from .dynsym (the file has no .symtab)? */
bool elf_symtab__from_dynsym(const struct elf_symtab *tab);

/*
 * The length of symbol name @name without the version GNU ld appends in
 * .symtab to the names of versioned symbols ("memcpy@@GLIBC_2.14" for the
 * default version, "memcpy@GLIBC_2.2.5" for another): the length up to the
 * first '@' when one or two '@' and a version node name (letters, digits,
 * '_', '.', '$'; not a digit first) end @name, else strlen(@name). .dynsym
 * names carry no version (it is in .gnu.version); C++ and Rust mangled
 * names never contain '@'.
 */
size_t elf_sym__unversioned_len(const char *name);

/* The GNU build-id in lowercase hex, or NULL if the file has none. Owned by @tab. */
const char *elf_symtab__build_id(const struct elf_symtab *tab);

/*
 * Translate @file_offset to an ELF virtual address through the PT_LOAD
 * segment whose file bytes cover it (an executable one if several do).
 * Returns 0, or -ENOENT when no segment covers @file_offset.
 */
int elf_symtab__offset_to_vaddr(const struct elf_symtab *tab, uint64_t file_offset,
				uint64_t *vaddr);

#endif
