/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cache_file.h - the files a cache directory (cli/cache_dir.h) holds, one
 * per build-id and kind (DIR/BUILD-ID.KIND: symbolize/symcache.h's
 * answers, collector/unwind_cache.h's unwind tables), and the rules every
 * kind follows to read and write them.
 *
 * Trust: a file is opened to be read only when it is a regular file owned
 * by our effective user and writable by no one else, in a directory that
 * is ours and writable by no one else; what it holds is then the caller's
 * to check (header, checksum, version). A file is written under a
 * temporary name and renamed into place, so that a reader sees a whole
 * file or none; a FIFO, a link or another's file in its place is never
 * written through. After a write, the directory's least recently used
 * cache files (by mtime, which an open to read refreshes), of every kind,
 * go until it holds at most the size limit, and the temporary files of
 * writers that died go too.
 *
 * Nothing here prints but pr_debug(): the reasons a file is not used are
 * handed back for the caller to say. Several processes may read and write
 * one directory at once: each sees a whole file or none.
 */
#ifndef PROFILER_CACHE_FILE_H
#define PROFILER_CACHE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The default size limit of a cache directory. */
#define CACHE_FILE_DEFAULT_MAX_BYTES (1ULL << 30)
/* Room for the hex of the longest build-id we meet (a SHA-1's 20 bytes; 64 allowed) and a NUL. */
#define CACHE_FILE_BUILD_ID_MAX 136

/*
 * The checksum of the cache files: four lanes of multiply-rotate rounds
 * over 64-bit words, then folded. Bodies of tens of megabytes are checked
 * at every open: this runs at memory speed.
 */
uint64_t cache_file__checksum(const void *data, size_t size);

/* Can @build_id name a file: lowercase hex digits only, so that it never climbs out of the directory? */
bool cache_file__build_id_ok(const char *build_id);

/*
 * Is @dir, when there is one, a directory of ours that no one else may
 * write? Else a file in it could be anyone's, or be replaced under us.
 * True when it does not exist (yet); false with *@why set otherwise.
 */
bool cache_file__dir_ok(const char *dir, const char **why);

/*
 * Open the cache file @path to be read, its size in *@size, its mtime
 * refreshed (used now: the last to be evicted). Returns the descriptor;
 * -ENOENT when there is none; another negative errno, with *@why set, for
 * one not to be read: then *@foreign says whether it is not ours to
 * replace either (a link, a FIFO, another's file). Never blocks on a FIFO.
 */
int cache_file__open(const char *path, size_t *size, const char **why, bool *foreign);

/*
 * Write the cache file @path of directory @dir (made, 0700, if missing):
 * @write(@fd, @ctx) fills a new temporary file (0600) and returns 0 or a
 * negative errno; the file is renamed into place only when it succeeded.
 * Then evicts what is beyond @max_bytes in @dir (0: no limit), @path
 * staying. Returns 0 or a negative errno (-EPERM, with *@why set, when
 * @dir is not ours alone); no file is left half written. No fsync(): a
 * file cut short by a crash fails its checksum and is ignored, and a cache
 * is only ever a shortcut.
 */
int cache_file__write(const char *dir, const char *path, int (*write)(int fd, void *ctx), void *ctx,
		      uint64_t max_bytes, const char **why);

/* pwrite() all of @size bytes at @offset; 0 or a negative errno. */
int cache_file__write_at(int fd, const void *buf, size_t size, uint64_t offset);

/* pread() all of @size bytes at @offset; 0, -EIO when the file ends before, or a negative errno. */
int cache_file__read_at(int fd, void *buf, size_t size, uint64_t offset);

#endif
