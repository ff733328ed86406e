/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * perf_map.h - the symbols of JIT-compiled code, from a perf map file.
 *
 * Runtimes that compile code at run time write the name of each function they
 * compile to /tmp/perf-PID.map: Node with --perf-basic-prof, Python 3.12+ with
 * -X perf, the JVM through an agent. Each line is "START SIZE NAME": START and
 * SIZE in hex, with or without 0x, NAME the rest of the line (it may hold
 * spaces). Fields are separated by spaces or tabs.
 *
 * A runtime that recompiles or frees code reuses its addresses, so lines may
 * overlap: a later line wins over an earlier one wherever they overlap, as in
 * perf. Overlaps are resolved once, when loading: the symbols kept are
 * disjoint, each covering the addresses where its line is the last one, so an
 * earlier line partly covered by a later one keeps only what is left of it
 * (possibly as two symbols of the same name, on either side).
 *
 * Lines that do not parse, are longer than 64 KiB, hold a NUL byte or cover
 * no address (size 0, or a range past 2^64) are skipped and counted; blank
 * lines are ignored. A last line without a newline is read, as perf does.
 * Files larger than 256 MiB are refused (EFBIG), as is anything but a regular
 * file (EINVAL): the files are written by the profiled process, which we may
 * not trust. For the same reason a file is read 1 MiB at a time, never held
 * whole, and only its first 2^20 symbols and 64 MiB of their names are kept:
 * past that budget the rest is not read, with one warning naming the file
 * (a JVM or node lists some thousands to some hundred thousands of
 * functions; a 255 MB file of 8 million lines cost 865 MB before).
 *
 * The file grows while its process runs: load it again to see later lines.
 * Names are owned by the perf_map. Immutable once loaded, so lookups may run
 * concurrently.
 */
#ifndef PROFILER_PERF_MAP_H
#define PROFILER_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_map;

struct perf_map_sym {
	uint64_t addr, size; /* the addresses where this line is the last one */
	const char *name;    /* as in the file, not demangled; owned by the perf_map */
};

/* Read and index @path. NULL and errno on failure (ENOENT: no such file). */
struct perf_map *perf_map__load(const char *path);

/*
 * The same for a file in a shared directory: not through a symbolic link,
 * and only if it belongs to root or to @owner (EPERM otherwise).
 */
struct perf_map *perf_map__load_owned(const char *path, uid_t owner);

/*
 * The perf map of process @pid, as it sees it: /tmp/perf-NSPID.map in its
 * root directory (/proc/PID/root), NSPID being its pid in its own pid
 * namespace (the last field of the NSpid line of /proc/PID/status; @pid on
 * kernels without one). Symbolic links are resolved within the process's
 * root, and the file must belong to root or to the owner of the process.
 * NULL and errno on failure: ENOENT when the process wrote no map, ESRCH when
 * it does not exist, EPERM when the file belongs to another user.
 */
struct perf_map *perf_map__load_pid(int pid);

void perf_map__free(struct perf_map *map);

/*
 * The perf maps of processes kept from one symbolizer to the next (one per
 * scrape of `profiler serve`): a process's map is read again only when its
 * file is another or has changed, by (device, inode, size, mtime); a JIT
 * appends to its map, which changes its size. Not thread-safe.
 */
struct perf_map_cache;

struct perf_map_cache *perf_map_cache__new(void);
void perf_map_cache__free(struct perf_map_cache *c);

/*
 * As perf_map__load_pid(), from @c when the file is unchanged. The map is
 * @c's: valid at least until the next perf_map_cache__sweep(), and freed by
 * the first sweep that finds it unused since the one before.
 */
const struct perf_map *perf_map_cache__load_pid(struct perf_map_cache *c, int pid);

/* Forget the maps no perf_map_cache__load_pid() asked for since the last sweep. */
void perf_map_cache__sweep(struct perf_map_cache *c);

/* The symbol covering @addr, or NULL. Binary search. */
const struct perf_map_sym *perf_map__lookup(const struct perf_map *map, uint64_t addr);

/* All symbols, sorted by address and disjoint; @nr receives their count. */
const struct perf_map_sym *perf_map__syms(const struct perf_map *map, size_t *nr);

/* How many lines were skipped (see above). */
size_t perf_map__nr_skipped(const struct perf_map *map);

#endif
