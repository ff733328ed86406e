/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * procs.h - the collector's process table: what it knows of each process it
 * samples or follows, and who wants to hear of them.
 *
 * A process is in the table from its first sample or exec, or, for a -p
 * target or a descendant, from when it became one: its latest snapshot of
 * /proc/PID/maps, its command line and cgroup, and whether it is followed
 * until its exit. Targets forked later, and the command, are followed
 * (procs__reap()) before they are in the table. Every snapshot taken is kept, since stacks point
 * to the one that was current when they were first seen, until
 * procs__forget_exited() finds it unused; so are the files they map
 * (common/proc_maps.h's file table).
 *
 * Targets are followed through a pidfd, which is readable once the process
 * exited (even as a zombie), or where there is none with kill(); the
 * command the caller started is reaped.
 *
 * The parts of the collector that keep state per process (the unwind
 * tables, each language runtime, heap profiling) register a watcher and are
 * told, in the order they registered:
 *
 *   snapshot  a new snapshot of a process's maps was taken (when it is
 *             first seen, after its exec, when a stack left the last one);
 *   exec      it exec'd: what it ran is gone (told before its new snapshot);
 *   gone      a target was seen exited: a new process may take its pid;
 *   exit      a target exited, and the records it sent before were drained
 *             (the first procs__reap() after the one that saw it gone);
 *   forget    processes are being forgotten: drop the state of those for
 *             which @known does not hold.
 *
 * Not thread-safe: the drain thread owns it.
 */
#ifndef PROFILER_PROCS_H
#define PROFILER_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/hashtab.h"

struct elf_cache;
struct proc_maps;
struct strset;

/* A process's maps are re-read at most this often, for addresses they do not cover. */
#define PROCS_REFRESH_NS (20ULL * 1000 * 1000)

struct proc {
	pid_t pid;
	struct proc_maps *maps; /* latest snapshot, or NULL if none could be read */
	uint64_t snapshot_time; /* CLOCK_MONOTONIC of the last attempt; 0: none yet */
	uint32_t code_gen;	/* the code generation of the stack that took its snapshot */
	char *cmdline;		/* shortened (procfs.h); NULL: empty or unreadable */
	char *cgroup;		/* its cgroup v2 path (procfs.h); NULL: unknown */
	uint64_t cmdline_seq;	/* both read for this window (collector_window.seq); 0: not yet */
	bool followed;		/* a live target added with its maps: -p, or a descendant */
};

/*
 * What taking snapshots cost the drain thread: reading the maps and what
 * the watchers do with each (building unwind tables, finding a runtime),
 * the time no record is drained.
 */
struct procs_stats {
	uint64_t snapshots; /* taken, or tried */
	uint64_t ns;	    /* their time, watchers included */
	uint64_t max_ns;    /* the longest one */
	pid_t max_pid;	    /* ... of this process */
};

/* What a part of the collector hears of processes; any callback may be NULL. */
struct proc_watcher {
	void (*snapshot)(void *ctx, const struct proc_maps *maps);
	void (*exec)(void *ctx, pid_t pid, uint64_t time_ns);
	void (*gone)(void *ctx, pid_t pid);
	void (*exit)(void *ctx, pid_t pid, uint64_t time_ns);
	void (*forget)(void *ctx, bool (*known)(pid_t pid, void *arg), void *arg);
	void *ctx;
};

struct procs;

/*
 * File names are interned in @strings; the ELF images of files no snapshot
 * maps any more are dropped from @elves. NULL and errno on failure.
 */
struct procs *procs__new(struct strset *strings, struct elf_cache *elves);
void procs__free(struct procs *t);

/* Tell @w (copied) of every process event from now on. 0 or -ENOMEM. */
int procs__watch(struct procs *t, const struct proc_watcher *w);

/* The process @pid, or NULL when it is not in the table. */
struct proc *procs__find(struct procs *t, pid_t pid);
/* The process @pid, added if new (with no snapshot yet); NULL on ENOMEM. */
struct proc *procs__get(struct procs *t, pid_t pid);

/* Take a new snapshot of @p's maps, and tell the watchers; on failure keep the previous one. */
void procs__snapshot(struct procs *t, struct proc *p);
/*
 * A newer snapshot of @p's maps than @maps, for a stack that has an address
 * outside them: taken now unless the last one is younger than
 * PROCS_REFRESH_NS. NULL when there is none.
 */
const struct proc_maps *procs__newer_maps(struct procs *t, struct proc *p,
					  const struct proc_maps *maps);
/*
 * Read @p's command line and cgroup as they are now, for window @seq. One
 * that cannot be read (the process exited, /proc hides it) or is empty (a
 * kernel thread) is NULL: exporters show the name.
 */
void procs__read_cmdline(struct proc *p, uint64_t seq);

/*
 * Follow @pid until it exits; @child marks the command the caller forked,
 * reaped when it exits. With @snapshot, read its maps and command line now
 * (for window @seq): the process may be short-lived, and its first sample
 * near. 0 or -errno (-ESRCH: no such process).
 */
int procs__follow(struct procs *t, pid_t pid, bool child, bool snapshot, uint64_t seq);
/* Undo the last procs__follow() (the BPF program could not take the target). */
void procs__unfollow_last(struct procs *t);
/* Is @pid followed until it exits? */
bool procs__followed(struct procs *t, pid_t pid);

/*
 * Process @pid exec'd at @time_ns: tell the watchers, then take its new
 * snapshot and command line (for window @seq). A process not in the table
 * is added when @add. 0, -ENOENT when it is not there, or -ENOMEM.
 */
int procs__exec(struct procs *t, pid_t pid, uint64_t time_ns, uint64_t seq, bool add);

/*
 * Look at the targets: those seen gone at the last look have their exit
 * told; those gone now are no longer followed (their descriptors closed,
 * the command reaped, "gone" told). True while at least one is alive, or
 * when there are none to follow (-a).
 */
bool procs__reap(struct procs *t);
/* The targets followed or seen gone but not yet forgotten, and the first one's pid. */
size_t procs__nr_targets(const struct procs *t);
pid_t procs__first_target(const struct procs *t);
/* Exit status (as from waitpid) of the command, or -1 if it did not exit. */
int procs__child_status(const struct procs *t);

/*
 * Forget the processes that exited, then the snapshots that no process
 * left has and that are not in @used_maps (a pointer set, common/hashtab.h:
 * those the caller's stacks point to), then the files no snapshot left
 * maps, their descriptors and ELF images. 0, or -ENOMEM with nothing freed
 * that could still be needed.
 */
int procs__forget_exited(struct procs *t, const struct hashtab *used_maps);
/*
 * Forget only the snapshots that no process has as its latest and that are
 * not in @used_maps, then the files no snapshot left maps: what a recording
 * does not need of a process that maps and unmaps code all along. 0, or
 * -ENOMEM with nothing freed that could still be needed.
 */
int procs__forget_snapshots(struct procs *t, const struct hashtab *used_maps);
/*
 * For the stacks that point to @maps, a snapshot superseded, a snapshot
 * with only the mappings they use, whose bits @used sets (bit i of word
 * i / 64 for maps[i]): a new one, or one kept already that holds the same.
 * NULL when @maps has nothing to leave out (it is then flagged trimmed, not
 * to be looked at again) or on ENOMEM. @maps is freed by the next
 * procs__forget_snapshots() that no stack keeps it for.
 */
const struct proc_maps *procs__trim_snapshot(struct procs *t, const struct proc_maps *maps,
					     const uint64_t *used);
/* How many snapshots are kept. */
size_t procs__nr_snapshots(const struct procs *t);
/* The processes in the table. */
size_t procs__nr(const struct procs *t);
void procs__stats(const struct procs *t, struct procs_stats *stats);

#endif
