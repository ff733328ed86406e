/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * elf_cache.h - the ELF files of a recording, each read once.
 *
 * The collector's unwinder and the symbolizer ask the same cache for the
 * file a mapping maps, so each mapped file is read (mapped and its headers
 * parsed) once per recording, whichever stage asks first, and files with
 * the same build-id under other paths, inodes or containers share one
 * elf_file. The vDSO, which no file backs, is read from the process's
 * memory, else from our own (every 64-bit process of a kernel maps the
 * same one).
 *
 * A file is read through the descriptor its maps snapshot holds; when the
 * snapshot has none, through its path, but only while the path is still
 * the inode that was mapped (another file's names would be wrong names).
 *
 * The cache holds a reference to every elf_file it hands out, until
 * elf_cache__free(): callers that keep one past that take their own
 * (elf_file__get()). Not thread-safe.
 */
#ifndef PROFILER_ELF_CACHE_H
#define PROFILER_ELF_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct elf_cache;
struct elf_file;
struct mapped_file;

struct elf_cache_stats {
	uint64_t files;	     /* distinct ELF images read */
	uint64_t shared;     /* mapped files that found their build-id read already */
	uint64_t unreadable; /* mapped files that could not be read */
	uint64_t held;	     /* distinct ELF images kept now */
};

/* Returns NULL and sets errno on failure. */
struct elf_cache *elf_cache__new(void);
void elf_cache__free(struct elf_cache *c);

/*
 * The ELF file that @file maps, read the first time it is asked for. NULL
 * when it cannot be read (said once per file, as a warning when the file
 * was deleted or replaced, else at debug level) or memory runs out.
 */
struct elf_file *elf_cache__file(struct elf_cache *c, const struct mapped_file *file);

/*
 * The vDSO that process @pid maps at [@start, @start + @size), read from its
 * memory (@pid 0: ours). NULL when it cannot be read.
 */
struct elf_file *elf_cache__vdso(struct elf_cache *c, pid_t pid, uint64_t start, size_t size);

/* Is @file one to keep? */
typedef bool (*elf_cache_keep_fn)(const struct mapped_file *file, void *arg);

/*
 * Forget the mapped files @keep does not keep, and drop the cache's
 * reference to the images only they read (the vDSOs read from processes'
 * memory too): files no live process maps any more, for a cache that
 * lives as long as the agent. A file forgotten is read again if asked for.
 * Holders of their own reference (elf_file__get()) keep theirs.
 */
void elf_cache__retain(struct elf_cache *c, elf_cache_keep_fn keep, void *arg);

/* Does @c hold @f, or an image with its build-id? */
bool elf_cache__holds(const struct elf_cache *c, const struct elf_file *f);

void elf_cache__stats(const struct elf_cache *c, struct elf_cache_stats *stats);

#endif
