/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * unwind_maps.h - the unwind tables the BPF program unwinds user stacks with.
 *
 * For each process it is given (a maps snapshot at a time), this builds
 * the unwind table of every mapped file that has call frame information
 * (one per build-id, shared by every process and container that maps it:
 * unwind_table.h), or reads it from the cache of an earlier run
 * (unwind_cache.h), copies it into the BPF program's row array, and writes
 * the process's entry: its executable mappings, each with its file's slice
 * of rows (bpf/profile.h). Code no file backs (a JIT) and files without CFI
 * are walked by frame pointers. The rows are bounded by the array's size;
 * when a table does not fit, the tables of files that no live process maps
 * any more are evicted, least recently loaded first, and if it still does
 * not fit its mappings get an empty table: their stacks end there, counted
 * as truncated, never walked by frame pointers through code that has none.
 *
 * Tables are read from the cache or built on a worker thread, so that
 * the caller's thread (the drain) never waits for a large library: a
 * process whose tables are not all ready yet has no entry in the BPF map,
 * and its stacks are copied and unwound in user space meanwhile, as before
 * its maps were first read. unwind_maps__poll() takes the finished tables
 * back and writes the entries they completed.
 *
 * Not thread-safe: one thread calls all of these. The unwinder must
 * outlive this.
 */
#ifndef PROFILER_UNWIND_MAPS_H
#define PROFILER_UNWIND_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_maps;
struct unwinder;
struct unwind_maps;

/* What was loaded, for -v. */
struct unwind_maps_stats {
	uint64_t procs;	      /* process entries written */
	uint64_t files;	      /* tables loaded, built or read from the cache */
	uint64_t cached;      /* of them, tables read from the cache */
	uint64_t rows;	      /* rows in the array now */
	uint64_t max_rows;    /* its size */
	uint64_t peak_rows;   /* the most it held */
	uint64_t unsupported; /* rows with a rule the BPF program cannot follow */
	uint64_t evicted;     /* tables evicted to make room */
	uint64_t over_limit;  /* tables that did not fit */
	uint64_t build_ns;    /* time the worker spent building tables */
	uint64_t cache_ns;    /* and looking for and reading cache files */
	uint64_t store_ns;    /* and writing cache files */
	uint64_t source_ns;   /* time the caller spent reading what the worker needs */
};

/*
 * Take over the BPF program's maps: @rows_fd (an mmapable array of
 * @max_rows struct unwind_row), @rules_fd and @procs_fd, by descriptor.
 * With @cache_dir (copied), the tables of files root or we own are read
 * from the cache files there, and those built are written there
 * (unwind_cache.h); NULL: every table is built. Returns NULL and sets
 * errno.
 */
struct unwind_maps *unwind_maps__new(struct unwinder *u, int rows_fd, size_t max_rows, int rules_fd,
				     int procs_fd, const char *cache_dir);
void unwind_maps__free(struct unwind_maps *um);

/*
 * Load the tables of the mappings in @maps, for process @maps->pid: its
 * entry is written now, or once the tables it waits for are built. 0 or
 * -errno.
 */
int unwind_maps__load(struct unwind_maps *um, const struct proc_maps *maps);

/* Take back the tables the worker finished, and write the entries they complete. */
void unwind_maps__poll(struct unwind_maps *um);

/* Wait for every table asked for so far, then unwind_maps__poll(). */
void unwind_maps__wait(struct unwind_maps *um);

/*
 * Forget the processes that exited, and the tables only they used, rows
 * and all: the memory, and the files held open, follow the processes
 * alive (a recording keeps unused tables in the array until their rows
 * are needed; an agent would keep every file that ever ran).
 */
void unwind_maps__forget_exited(struct unwind_maps *um);

void unwind_maps__stats(const struct unwind_maps *um, struct unwind_maps_stats *stats);

#endif
