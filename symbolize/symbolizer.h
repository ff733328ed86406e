/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symbolizer.h - addresses to frames.
 *
 * User address -> mapping (from the snapshot the sample was taken under) ->
 * file offset -> ELF virtual address (through the covering PT_LOAD, so PIE
 * executables and shared libraries need no special case) -> the file's
 * module (module.h): the function from its symbols, and from its DWARF the
 * source line and the functions inlined at the address. Names are
 * demangled; the linker names stay as the frames' system names. Code that
 * no file backs is looked up in the process's perf map (/tmp/perf-PID.map,
 * written by JIT compilers). Kernel addresses resolve through
 * /proc/kallsyms, modules included. The addresses the collector gives
 * Python frames (py_frames.h) name the Python function, file and line.
 *
 * Every answer is memoized per (mapping, address): the same address always
 * yields the same `struct profile_frame` pointer, which exporters use to
 * de-duplicate. Modules are cached per file and shared between files with
 * the same build-id. Frames and mappings belong to the symbolizer and stay
 * valid until symbolizer__free(); names are interned in the strset given to
 * symbolizer__new(), which must outlive it.
 *
 * Unresolvable addresses are never dropped: they become frames named
 * "MODULE+0xADDR" or "[unknown]" when no mapping covers them. ADDR is an
 * ELF address, so `addr2line -e MODULE 0xADDR` agrees: the start of the
 * function holding the address when the file's CFI (.eh_frame or
 * .debug_frame) has an FDE covering it, so that one unnamed function is one
 * name, else the address itself.
 *
 * Function names lose the symbol version GNU ld appends in .symtab
 * ("memcpy@@GLIBC_2.14" is memcpy), the system names too.
 *
 * Not thread-safe.
 */
#ifndef PROFILER_SYMBOLIZER_H
#define PROFILER_SYMBOLIZER_H

#include <stdint.h>
#include <sys/types.h>

#include "common/profile.h"
#include "symbolize/dwarf_index.h"

struct bpf_progs;
struct elf_cache;
struct elf_file;
struct kallsyms;
struct perf_map_cache;
struct proc_maps;
struct py_frames;
struct strset;

/*
 * The modules of the files symbolized (module.h), each read once: a
 * symbolizer has a set of its own, or is lent one that outlives it, for
 * symbolizers one after another to share what reading and indexing a
 * file's symbols and DWARF took (profiler serve's windows). Not
 * thread-safe.
 */
struct module_set;

struct module_set *module_set__new(void);
void module_set__free(struct module_set *set);
size_t module_set__count(const struct module_set *set);
/* Is the module of ELF file @elf to be kept? */
typedef bool (*module_keep_fn)(const struct elf_file *elf, void *arg);
/* Free the modules @keep does not keep (no symbolizer using @set may be alive). */
void module_set__retain(struct module_set *set, module_keep_fn keep, void *arg);

struct symbolizer_opts {
	const char *kallsyms_path; /* NULL: /proc/kallsyms */
	/*
	 * The kernel's symbols, read already (kallsyms__load()), to share
	 * between symbolizers; must outlive the symbolizer. NULL: read from
	 * @kallsyms_path at the first kernel address.
	 */
	const struct kallsyms *kallsyms;
	/*
	 * The BPF programs the collector read (bpf_progs.h), which name
	 * frames of their code with source lines; must outlive the
	 * symbolizer. NULL: kallsyms names such frames, bpf_prog_TAG_NAME.
	 */
	const struct bpf_progs *bpf_progs;
	/* Modules to use and add to; must outlive the symbolizer. NULL: a set of its own. */
	struct module_set *modules;
	const char *debug_dir; /* global debug directory; NULL: /usr/lib/debug */
	/*
	 * The ELF files, shared with the collector's unwinder so that each is
	 * read once; must outlive the symbolizer. NULL: a cache of its own.
	 */
	struct elf_cache *elf_cache;
	/*
	 * Whose /tmp/perf-PID.map files to read, besides root's, for processes
	 * that exited (their owner is unknown by then): the user the profiler
	 * acts for, a decision for the caller (under sudo, the user who ran
	 * it). 0: our real uid.
	 */
	uid_t trusted_uid;
	/*
	 * The perf maps of live processes, kept from one symbolizer to the
	 * next (perf_map.h); must outlive the symbolizer, and be swept only
	 * once it is freed. NULL: each read for this symbolizer alone.
	 */
	struct perf_map_cache *perf_maps;
	/*
	 * What the addresses of Python frames stand for (py_frames.h), from
	 * the collector; must outlive the symbolizer. NULL: none.
	 */
	const struct py_frames *py_frames;
	/*
	 * Where to keep the answers of files between runs (symcache.h), for
	 * files whose symbols and DWARF are their own; NULL: nowhere. The
	 * cache is read as files are first needed and written by
	 * symbolizer__save_cache().
	 */
	const char *cache_dir;
	uint64_t cache_max_bytes; /* of @cache_dir; 0: CACHE_FILE_DEFAULT_MAX_BYTES */
	/* What writes the cache (the profiler's version): another's files are not read. */
	const char *cache_producer;
};

struct symbolizer_stats {
	uint64_t frames;		    /* distinct frames handed out */
	uint64_t resolved;		    /* ... that named a function */
	uint64_t unmapped;		    /* ... whose address no mapping covered */
	uint64_t sources[NR_FRAME_SOURCES]; /* ... by how they were symbolized */
	struct dwarf_index_stats dwarf;	    /* the DWARF units lookups needed, of every file */
};

/* Returns NULL and sets errno on failure. */
struct symbolizer *symbolizer__new(struct strset *strings, const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *sym);

/*
 * Frame for user address @addr of a process whose maps were @maps (may be
 * NULL). Never NULL: when memory runs out, a shared "[unknown]" frame (and
 * one warning).
 */
const struct profile_frame *symbolizer__user_frame(struct symbolizer *sym,
						   const struct proc_maps *maps, uint64_t addr);

/* Frame for kernel address @addr; never NULL, as for user addresses. */
const struct profile_frame *symbolizer__kernel_frame(struct symbolizer *sym, uint64_t addr);

/*
 * For `profiler symbolize`: open the ELF file at @path as a mapping whose
 * addresses are the file's ELF virtual addresses. Returns 0 and sets
 * @mapping, or a negative errno (-ENOEXEC: not an ELF file).
 */
int symbolizer__open_elf(struct symbolizer *sym, const char *path,
			 const struct profile_mapping **mapping);

/* Frame for ELF virtual address @vaddr of a file opened by symbolizer__open_elf(). */
const struct profile_frame *symbolizer__elf_frame(struct symbolizer *sym,
						  const struct profile_mapping *mapping,
						  uint64_t vaddr);

/* Room for one answer of symbolizer__elf_lookup(). */
struct symbolizer_answer {
	struct profile_frame frame;
	struct profile_line lines[DWARF_INDEX_MAX_DEPTH];
	/* "BASENAME+0xADDR" for code nothing names: a basename is at most NAME_MAX */
	char placeholder[255 + sizeof("+0x") + 16];
};

/*
 * As symbolizer__elf_frame(), without the memo: the frame is built in
 * @answer, valid until its next use, and nothing is kept per address, so
 * memory follows the file and not the number of addresses asked. Names and
 * file names are still interned, as for every frame (they are the file's,
 * a number bounded by it), except the placeholder name of unnamed code,
 * which lives in @answer. NULL when memory runs out.
 */
const struct profile_frame *symbolizer__elf_lookup(struct symbolizer *sym,
						   const struct profile_mapping *mapping,
						   uint64_t vaddr,
						   struct symbolizer_answer *answer);

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *stats);

/*
 * Learn, for each file with a cache (symbolizer_opts.cache_dir), the
 * regions of the addresses its cache had no answer for (symcache.h), and
 * write its cache file: the work of a first run is done here, once the
 * answers are out. Failures are warned about, once per file, and otherwise
 * ignored: the cache is only ever a shortcut.
 */
void symbolizer__save_cache(struct symbolizer *sym);

#endif
