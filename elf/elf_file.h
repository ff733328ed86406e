/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elf_file.h - one ELF image, read once, for every stage that needs it.
 *
 * The unwinder (its CFI and load segments), the unwind-table builder (its
 * FDEs) and the symbolizer (its symbols, build-id and DWARF) all read the
 * same mapped files. An elf_file is what they share: the libelf handle,
 * the GNU build-id, the PT_LOAD segments, and, read the first time someone
 * asks, the CFI of .eh_frame and .debug_frame and the table of FDEs.
 * elf_cache.h hands out one elf_file per build-id for a whole recording.
 *
 * The image is a file mapped read-only (the descriptor is not kept: libelf
 * has read what it needs once elf_file__open_fd() returns) or a copy in
 * memory (the vDSO, MiniDebugInfo).
 *
 * Compressed sections (SHF_COMPRESSED, GNU's .zdebug_*) that would inflate
 * past a budget are dropped when the image is read: at most
 * ELF_INFLATE_RATIO times their compressed size, ELF_INFLATE_FLOOR at
 * least, and ELF_INFLATE_MAX in all for one file. Each dropped section
 * reads as SHT_NOBITS, so libdw and our readers see none, and the file gets
 * one warning naming it.
 *
 * Reference-counted: __open*() return one reference, elf_file__get() takes
 * another, elf_file__put() drops one and frees the image with the last.
 * Not thread-safe (the lazily read parts are filled in on first use).
 */
#ifndef PROFILER_ELF_FILE_H
#define PROFILER_ELF_FILE_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct elf_file;
struct fde_table;

/*
 * The budget of a file's compressed sections. zlib packs DWARF 3 to 10
 * times (objcopy --compress-debug-sections on Debian's own binaries); 32
 * leaves room for the odd repetitive section, while a zlib bomb (up to
 * 1032:1) is refused. The floor keeps small files' sections whatever their
 * ratio; the total bounds what one file can cost, however large.
 */
#define ELF_INFLATE_RATIO 32
#define ELF_INFLATE_FLOOR (16ULL << 20)
#define ELF_INFLATE_MAX (512ULL << 20)

/* The longest GNU build-id we accept, in bytes (SHA-1 is 20; some linkers use up to 64). */
#define ELF_BUILD_ID_MAX 64

/* A PT_LOAD segment: file bytes [offset, offset + filesz) are loaded at @vaddr. */
struct elf_segment {
	uint64_t offset, filesz, vaddr;
	bool exec;
};

/*
 * Read the ELF file open at @fd, named @name in messages (NULL: "(fd)").
 * The descriptor may be closed as soon as this returns. Returns NULL and
 * sets errno: ENOEXEC when it is not an ELF file or its headers lie
 * outside it, ENOMEM.
 */
struct elf_file *elf_file__open_fd(int fd, const char *name);

/* As elf_file__open_fd() for the file at @path. */
struct elf_file *elf_file__open(const char *path);

/*
 * Read the ELF image @image of @size bytes, which is taken over (freed with
 * the elf_file, or at once on failure). Errors as elf_file__open_fd().
 */
struct elf_file *elf_file__from_image(void *image, size_t size, const char *name);

/* Another reference to @f; returns @f. */
struct elf_file *elf_file__get(struct elf_file *f);
/* Drop a reference; the last one frees. NULL is a no-op. */
void elf_file__put(struct elf_file *f);

Elf *elf_file__elf(const struct elf_file *f);
const char *elf_file__name(const struct elf_file *f);

/* The GNU build-id in lowercase hex, or NULL when the file has none. */
const char *elf_file__build_id(const struct elf_file *f);

/* The owner of the file as it was opened; (uid_t)-1 for an image in memory, or unknown. */
uid_t elf_file__owner(const struct elf_file *f);

/*
 * May what is read from @f be kept in a cache for later runs: is it a file
 * root or our effective user owns? Anyone could give a file of theirs the
 * build-id of another, and what was kept of theirs would then be the
 * other's for every later run (a recording reads the files of every user).
 */
bool elf_file__cacheable(const struct elf_file *f);

/* Every PT_LOAD segment, in program-header order; *@nr of them. */
const struct elf_segment *elf_file__segments(const struct elf_file *f, size_t *nr);

/*
 * The load segment holding file offset @offset, an executable one when two
 * overlap (a page shared by the end of one and the start of the next), or
 * NULL when none does.
 */
const struct elf_segment *elf_file__segment(const struct elf_file *f, uint64_t offset);

/* @offset's ELF virtual address through elf_file__segment(): 0 or -ENOENT. */
int elf_file__offset_to_vaddr(const struct elf_file *f, uint64_t offset, uint64_t *vaddr);

/*
 * The file's own DWARF (libdw's handle, owned by @f), or NULL when it has
 * none; opened the first time.
 */
Dwarf *elf_file__dwarf(struct elf_file *f);

/* The CFI of .eh_frame, of .debug_frame: owned by @f, NULL when absent. Read the first time. */
Dwarf_CFI *elf_file__eh_cfi(struct elf_file *f);
Dwarf_CFI *elf_file__debug_cfi(struct elf_file *f);

/*
 * The [start, end) range of every FDE (fde_table.h), read the first time.
 * NULL when memory ran out then.
 */
const struct fde_table *elf_file__fdes(struct elf_file *f);

/* The table if elf_file__fdes() has read it, else NULL. */
const struct fde_table *elf_file__fdes_built(const struct elf_file *f);

/*
 * Does @f hold V8, the JavaScript engine (node, libnode.so)? Embedders
 * export V8's introspection constants (v8dbg_*) for debuggers. Looked up
 * the first time.
 */
bool elf_file__is_v8(struct elf_file *f);

/*
 * Give @f @fdes, built from @f's own fde_source (fde_table.h) on another
 * thread, to be what elf_file__fdes() returns; freed when @f has one.
 */
void elf_file__set_fdes(struct elf_file *f, struct fde_table *fdes);

/*
 * The build-id of the ELF file open at @fd into @buf (@size bytes, hex and
 * a NUL), without keeping the file: 0, -ENOENT (none), -ENOEXEC (not ELF),
 * -ENOSPC (@buf too small).
 */
int elf_file__read_build_id(int fd, char *buf, size_t size);

/* The section of @elf called @name that has contents (its header in *@shdr), or NULL. */
Elf_Scn *elf__find_section(Elf *elf, const char *name, GElf_Shdr *shdr);

/*
 * The contents of the section called @name (decompressed) and its address
 * into *@addr, or NULL when it has none or they cannot be read.
 */
Elf_Data *elf__section_data(Elf *elf, const char *name, uint64_t *addr);

/*
 * The value and size of the symbol @name defined in @elf, from .dynsym, else
 * .symtab: 0 or -ENOENT. A linear search: for the few names a caller asks once.
 */
int elf__find_symbol(Elf *elf, const char *name, uint64_t *value, uint64_t *size);

/*
 * The @size bytes of @elf's code (an executable section's, in the file) at
 * ELF address @vaddr, or NULL when no such section holds them all.
 */
const unsigned char *elf__code_bytes(Elf *elf, uint64_t vaddr, uint64_t size);

/*
 * The @size bytes at ELF address @vaddr of @elf, in a section with
 * contents in the file (an executable one when @code), or NULL.
 */
const unsigned char *elf__bytes_at(Elf *elf, uint64_t vaddr, uint64_t size, bool code);

/*
 * A fingerprint of the ELF file @elf, for the caches kept per build-id
 * (common/cache_file.h): its size, ELF header and section headers, which
 * another file with the same build-id (a forged one, or one rewritten in
 * place) is unlikely to share; cheap, as a warm run pays it. 0 when @elf
 * has no ELF header.
 */
uint64_t elf__fingerprint(Elf *elf);

#endif
