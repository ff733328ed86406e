/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unwind_cache.h - unwind tables kept between runs, one cache file per
 * build-id, so that a file whose table was built once is not built again:
 * libLLVM's 2.5 M rows take a second and a half to build from its CFI,
 * and tens of milliseconds to read back.
 *
 * The file (DIR/BUILD-ID.unwind, host byte order, never leaving the
 * machine): a header (magic, format version, build-id, producer, the ELF
 * file's fingerprint, the counts of struct unwind_table, the rows'
 * checksum, the header's), then the rows as struct unwind_table_row.
 *
 * Trust: a file is read as common/cache_file.h says (a regular file of
 * ours, in a directory of ours, neither writable by others, never through
 * a link or a FIFO), and used only when its header and checksums hold, it
 * is of this format version, build-id, producer and fingerprint, and its
 * rows are sorted with rules the BPF program knows; any other is ignored
 * with one warning line and the table is built again (and written anew
 * over a file of ours; a link, a FIFO or another's file stays).
 *
 * Only tables that were built are kept: a file without CFI, or not
 * x86-64, is known for one in microseconds (a section lookup), and corrupt
 * CFI is rare, so a negative answer would cost a file for nothing.
 *
 * Which directory to use is the caller's decision (cli/cache_dir.h), and
 * which files may be kept too (elf_file__cacheable()). Not thread-safe.
 */
#ifndef PROFILER_UNWIND_CACHE_H
#define PROFILER_UNWIND_CACHE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bumped whenever what a file holds changes meaning, older files then
 * ignored: its layout, or the rows unwind_table__build() computes for a
 * file. The producer (the profiler's version, from git describe) changes
 * with every commit, but not with edits not yet committed, nor in a build
 * from a tarball.
 */
#define UNWIND_CACHE_VERSION 3

struct unwind_table;

/* What a cache file is of, and who wrote it. */
struct unwind_cache_key {
	const char *dir;      /* the cache directory */
	const char *build_id; /* lowercase hex */
	/* What built the table (the profiler's version): another may build it otherwise. */
	const char *producer;
	uint64_t file_sum; /* the ELF file's fingerprint (elf__fingerprint()) */
};

/*
 * Fill @t (zeroed by the caller) from the cache file of @key, mapped: its
 * rows are read-only, and the caller releases it with
 * unwind_cache__release(), never unwind_table__release(). Returns 0;
 * -ENOENT when there is none; -EBADMSG when there is one not to be used,
 * ours to write anew; -EPERM when there is one not ours to replace (a
 * link, a FIFO, another's file); -EACCES when the directory is not ours
 * alone; -EINVAL for a build-id that is not hex; -ENOMEM. Every reason but
 * -ENOENT and -ENOMEM has been said with one pr_warn() line.
 */
int unwind_cache__load(const struct unwind_cache_key *key, struct unwind_table *t);

/* Unmap a table unwind_cache__load() filled, and zero it. */
void unwind_cache__release(struct unwind_table *t);

/*
 * Write @t to the cache file of @key, then evict the directory's least
 * recently used files beyond @max_bytes (0: no limit). 0 or a negative
 * errno; no file is left half written. -EACCES (said with pr_warn()) when
 * the directory is not ours alone.
 */
int unwind_cache__store(const struct unwind_cache_key *key, const struct unwind_table *t,
			uint64_t max_bytes);

/*
 * Make the checksums of the cache file image @file (@size bytes) agree
 * with what it holds, for the tests and fuzzing that change a file and
 * want its other checks tried. 0, or -EINVAL when it is shorter than its
 * header.
 */
int unwind_cache__seal(void *file, size_t size);

#endif
