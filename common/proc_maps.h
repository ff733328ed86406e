/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * proc_maps.h - snapshots of /proc/PID/maps and the files they map.
 *
 * A snapshot is taken when a process is first seen and again when one of
 * its sampled addresses falls outside every mapping, and it is never changed
 * afterwards: an aggregated stack keeps a pointer to the snapshot that was
 * current when it was sampled, so the symbolizer can run after the process
 * has exited, exec'd or unmapped a library.
 *
 * Only executable mappings are kept (the only ones a sampled instruction
 * pointer can hit). Each file-backed one points to a `struct mapped_file`
 * from a file table shared by all snapshots: one per (device, inode), holding
 * a descriptor opened at snapshot time through /proc/PID/map_files (else
 * /proc/PID/root/PATH), so deleted files, replaced files and files inside
 * another mount namespace are read as the process saw them.
 */
#ifndef PROFILER_PROC_MAPS_H
#define PROFILER_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strset;

struct mapped_file {
	uint64_t dev, ino;
	const char *path; /* interned; as in maps, without " (deleted)" */
	int fd;		  /* read-only descriptor of the mapped file, or -1 */
	bool deleted;
	bool exe;     /* some snapshotted process runs it as its executable */
	bool evicted; /* its descriptor was closed to make room: opened again when named */
	/* The files with a descriptor, most recently snapshotted first (file_table's). */
	struct mapped_file *lru_prev, *lru_next;
};

struct proc_map {
	uint64_t start, end;	  /* [start, end) */
	uint64_t pgoff;		  /* file offset of start */
	const char *name;	  /* interned: path, "[vdso]", "[anon]", ... */
	struct mapped_file *file; /* NULL for anonymous and pseudo mappings */
};

struct proc_maps {
	pid_t pid;
	/* Only the mappings that stacks use, of a snapshot superseded (proc_maps__subset()). */
	bool trimmed;
	size_t nr;
	struct proc_map maps[]; /* sorted by start, non-overlapping */
};

/* One parsed line of /proc/PID/maps. @path points into the parsed line. */
struct proc_maps_line {
	uint64_t start, end, pgoff, dev, ino;
	char perms[5];
	const char *path; /* "" for anonymous mappings */
	size_t path_len;
};

/* Parse one line (with or without its newline); 0 or -EINVAL. */
int proc_maps__parse_line(const char *line, struct proc_maps_line *out);

struct file_table;

/*
 * Returns NULL and sets errno on failure. Strings are interned in @strings.
 * The table keeps at most a quarter of the descriptors RLIMIT_NOFILE allows
 * open (between 16 and 4,096): past that, the file least recently named by
 * a snapshot has its descriptor closed, so that a process mapping tens of
 * thousands of files does not use up the profiler's. The next snapshot
 * that names it opens it again; until then it is read through its path, as
 * one whose descriptor could not be opened.
 */
struct file_table *file_table__new(struct strset *strings);
/* Keep at most @max descriptors open from now on (at least 1). */
void file_table__limit_descriptors(struct file_table *files, size_t max);
/* How many descriptors the table holds open. */
size_t file_table__nr_descriptors(const struct file_table *files);
/* Closes every descriptor; snapshots that point into the table are then dangling. */
void file_table__free(struct file_table *files);

/*
 * Close and forget the files @keep does not keep: those no snapshot still
 * in use maps. The snapshots that map them must be freed already.
 */
void file_table__retain(struct file_table *files,
			bool (*keep)(const struct mapped_file *file, void *arg), void *arg);

/*
 * Snapshot the executable mappings of @pid from the text of its maps file.
 * Files are looked up in (or added to) @files, opening new ones through
 * /proc/@pid/. Returns NULL and sets errno on failure.
 */
struct proc_maps *proc_maps__parse(const char *text, pid_t pid, struct file_table *files);

/* Read /proc/@pid/maps and parse it; NULL with errno (ENOENT: no such process, ESRCH: exited). */
struct proc_maps *proc_maps__read(pid_t pid, struct file_table *files);

void proc_maps__free(struct proc_maps *maps);

/*
 * A copy of @maps, flagged trimmed, with only the mappings whose bit is set
 * in @keep (bit i of word i / 64 for maps[i]). NULL with errno on failure.
 */
struct proc_maps *proc_maps__subset(const struct proc_maps *maps, const uint64_t *keep);

/* The mapping covering @addr, or NULL. Binary search. */
const struct proc_map *proc_maps__find(const struct proc_maps *maps, uint64_t addr);

#endif
