/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symcache.h - a file's answers kept between runs, one cache file per
 * build-id, so that a file symbolized again is not indexed again.
 *
 * What is kept is the final answer: for each address range of the file
 * over which the symbolizer answers the same, the inline chain with names
 * demangled, in the manner of a gsym file. A second run then reads no
 * DWARF, decodes no line program and demangles nothing for the ranges the
 * first one covered: a lookup is a table read in place, from the file
 * mapped into memory.
 *
 * Ranges are added a region at a time (module__region(): one DWARF unit,
 * or one symbol between units), for the regions that addresses of a run
 * fell in, after its answers are out (symbolizer__save_cache()): a run
 * pays only for the parts of the file it needs, and the cache file grows
 * with what runs have needed.
 *
 * The file (DIR/BUILD-ID.sym, host byte order, never leaving the machine):
 * a header (magic, format version, build-id, sizes, checksums); a bucket
 * table (address >> shift -> first interval); the intervals (offset from
 * the base address, chain), tiling the covered span, the uncovered parts
 * marked; the chains (per line a node of six words: name, linker name,
 * file, line, discriminator, the next node out); the strings (offsets by
 * id, then the bytes, each string NUL-terminated).
 *
 * Trust: a file is read only when it is a regular file owned by our
 * effective user and writable by no one else, in a directory that is ours
 * and writable by no one else, its header and checksum hold, and it is of
 * this format version, build-id, producer and file fingerprint; any other is
 * ignored with a one-line warning and never believed. Every lookup is
 * still bounds-checked, so that no file can make us read outside it.
 * Files are opened, written and evicted as common/cache_file.h says.
 *
 * Which directory to use is the caller's decision (cli/cache_dir.h). Not
 * thread-safe.
 */
#ifndef PROFILER_SYMCACHE_H
#define PROFILER_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever what a file holds changes meaning: older files are then ignored. */
#define SYMCACHE_VERSION 2
/* The deepest chain kept; deeper ones are not cached (the symbolizer's limit too). */
#define SYMCACHE_MAX_LINES 64

/* One function of an inline chain, innermost first, as the symbolizer answers it. */
struct symcache_line {
	const char *name;	 /* demangled; NULL: nothing names it */
	const char *system_name; /* linker name; NULL with @name */
	const char *file;	 /* NULL when unknown */
	uint32_t line, discriminator;
};

struct symcache;
struct strset;

/*
 * The cache of the file with build-id @build_id (lowercase hex) in
 * directory @dir. @producer names what writes the answers (the profiler's
 * version): a file another wrote is not used, as its answers may differ.
 * @file_sum is a fingerprint of the file (of its ELF and section headers):
 * a file another with the same build-id wrote is not used either. Lookups
 * intern the strings they answer in @strings (which must outlive it): what its cache file holds, if there is one we trust
 * (else empty, with a warning naming the file and why when there was one).
 * NULL and errno ENOMEM when memory runs out, EINVAL for a build-id that
 * is not hex.
 */
struct symcache *symcache__open(const char *dir, const char *build_id, const char *producer,
				uint64_t file_sum, struct strset *strings);
void symcache__free(struct symcache *c);

/*
 * The answer at @vaddr into @lines (room for SYMCACHE_MAX_LINES): the
 * number of lines, 0 when the cache does not cover @vaddr. The strings are
 * interned: the file's in the strset given to symcache__open(), those
 * added by the caller's (symcache__add()).
 */
int symcache__lookup(struct symcache *c, uint64_t vaddr, struct symcache_line *lines);

/*
 * Cover [@lo, @hi) with the answer @lines (@nr of them, 1 to
 * SYMCACHE_MAX_LINES), whose strings must outlive @c. The ranges of a
 * region come in address order, one after another, and never overlap what
 * the cache covers. Returns 0, -EINVAL for a range it cannot keep, or
 * -ENOMEM.
 */
int symcache__add(struct symcache *c, uint64_t lo, uint64_t hi, const struct symcache_line *lines,
		  int nr);

/*
 * Write what the cache holds to its file when anything was added, then
 * evict the directory's least recently used files beyond @max_bytes (0: no
 * limit). Returns 0 (also when there was nothing to write), or a negative
 * errno: no file is left half written.
 */
int symcache__save(struct symcache *c, uint64_t max_bytes);

/* The path of the cache file, for messages. */
const char *symcache__path(const struct symcache *c);

#endif
