/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * runtime.h - a language runtime as a plug-in of the collector.
 *
 * The native unwinder walks and the symbolizer names machine code that
 * files describe. A runtime whose functions are data (CPython's
 * interpreted frames) or code generated at run time (a JVM's JIT) needs
 * more: finding its processes, handing the BPF program what it needs to
 * read their frames, and naming those frames. Each runtime is one
 * `struct runtime_ops` in a user-space file of its own (python.c's
 * python_runtime is the worked example), one BPF unit (bpf/), and one line
 * in runtime_registry[] (runtime.c); the collector runs them all through
 * struct runtimes and knows nothing else of any. CONTRIBUTING.md, "Adding a runtime", walks through one.
 *
 * The calls, all from the drain thread:
 *
 *   wanted     is it on? (options such as --no-python turn it off)
 *   configure  before the BPF program is loaded, with whether it is on:
 *              its read-only settings (rodata);
 *   new        with the program loaded and the runtime on: its state;
 *   snapshot, exec, forget
 *              the process table's events (procs.h, struct proc_watcher):
 *              a snapshot is where a runtime finds its processes and
 *              writes their per-process data into its BPF maps;
 *   frame      a frame of a stack user space unwinds from a copy (one
 *              taken before the BPF program had its process's tables),
 *              left by its frame pointer: what the runtime's BPF unit
 *              would have put in its place there, if anything;
 *   merge      each sample's stacks once the native user stack is whole:
 *              put the runtime's frames in it, as addresses that the
 *              symbolizer names (common/py_frames.h) or that its perf map
 *              names;
 *   finish     sampling stopped: anything the symbolizer will need that
 *              must be fetched while the processes live (a JVM's perf map);
 *   report     -v, at the end: what it read;
 *   fix        a process's stacks end early: what would make them whole,
 *              if the runtime knows (a JVM's flag), for the warning.
 *
 * Every callback but wanted, new and free may be NULL.
 */
#ifndef PROFILER_RUNTIME_H
#define PROFILER_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/hashtab.h"

struct collector_opts;
struct elf_cache;
struct profile_bpf;
struct proc_maps;
struct procs;
struct py_frames;
struct sample_event;
struct unwind_input;

/* What a runtime may use of the collector's. */
struct runtime_env {
	struct profile_bpf *skel; /* the BPF program, loaded: its maps and counters */
	struct elf_cache *elves;  /* each mapped file's ELF image, read once */
	struct py_frames *frames; /* where interpreted frames get their addresses */
};

struct runtime_ops {
	const char *name;
	/*
	 * Can the recording go on without it? A runtime that cannot start
	 * is then left out, saying why at debug level (-vv); otherwise the
	 * recording fails.
	 */
	bool optional;
	bool (*wanted)(const struct collector_opts *opts);
	void (*configure)(struct profile_bpf *skel, bool on);
	/* The runtime's state, or NULL with errno set. */
	void *(*new)(const struct runtime_env *env);
	void (*free)(void *rt);
	void (*snapshot)(void *rt, const struct proc_maps *maps);
	void (*exec)(void *rt, pid_t pid, uint64_t time_ns);
	void (*forget)(void *rt, bool (*known)(pid_t pid, void *arg), void *arg);
	/*
	 * The frame at @ip of @pid, whose frame pointer is @bp: @ip, or the
	 * runtime's frame, with its SAMPLE_* flag added to *@flags.
	 */
	uint64_t (*frame)(void *rt, pid_t pid, const struct unwind_input *in, uint64_t bp,
			  uint64_t ip, uint32_t *flags);
	/* 0 or a negative errno, which stops the recording (-ENOMEM). */
	int (*merge)(void *rt, struct sample_event *e);
	void (*finish)(void *rt);
	void (*report)(void *rt, const struct runtime_env *env);
	/* What would make whole the stacks of the process @maps describes, or NULL. */
	const char *(*fix)(const struct proc_maps *maps);
};

/*
 * The processes a runtime has looked at, by pid, for a runtime to keep its
 * own per-process state in (entries of @entry_size bytes, each starting
 * with a struct runtime_proc) and in its BPF map (@map_fd, keyed by tgid:
 * the entry of each process @loaded is deleted with it). @clear, if not
 * NULL, releases what the runtime keeps in an entry beyond these fields,
 * when its process execs or is forgotten.
 */
struct runtime_proc {
	pid_t pid;
	bool checked; /* its files were looked at */
	bool loaded;  /* in the runtime's BPF map */
};

struct runtime_procs {
	struct hashtab table;
	size_t entry_size;
	int map_fd;
	void (*clear)(struct runtime_proc *p, void *arg);
	void *arg;
};

/* The entry of process @pid, added (zeroed, unchecked) if @add: NULL if none, or on ENOMEM. */
struct runtime_proc *runtime_procs__get(struct runtime_procs *t, pid_t pid, bool add);
/* Process @pid ran another program: out of the map, cleared, to be looked at again. */
void runtime_procs__exec(struct runtime_procs *t, pid_t pid);
/* Forget the processes for which @known(pid, @arg) does not hold. */
void runtime_procs__forget(struct runtime_procs *t, bool (*known)(pid_t pid, void *arg), void *arg);
/* Free every entry (cleared): @t is then empty. */
void runtime_procs__release(struct runtime_procs *t);

/* Every runtime there is, NULL-terminated, in the order their frames are merged. */
extern const struct runtime_ops *const runtime_registry[];

/* One runtime started. */
struct runtime {
	const struct runtime_ops *ops;
	void *state;
};

/* The runtimes a recording runs: those of the registry its options want. */
struct runtimes {
	struct runtime *list;
	size_t nr;
	struct runtime_env env;
};

/* Before the BPF program of @skel is loaded: each runtime's settings, on or off by @opts. */
void runtimes__configure(struct profile_bpf *skel, const struct collector_opts *opts);
/*
 * Start the runtimes @opts wants, with the BPF program loaded. 0 or
 * -errno, the reason logged: a runtime that is not optional failed.
 */
int runtimes__start(struct runtimes *rts, const struct runtime_env *env,
		    const struct collector_opts *opts);
/* Stop them all; @rts may then be started again. */
void runtimes__stop(struct runtimes *rts);
/* Let each hear of processes (procs.h). 0 or -ENOMEM. */
int runtimes__watch(struct runtimes *rts, struct procs *procs);
/* What stands for a frame in a stack unwound from a copy: struct runtime_ops' frame. */
uint64_t runtimes__frame(struct runtimes *rts, pid_t pid, const struct unwind_input *in,
			 uint64_t bp, uint64_t ip, uint32_t *flags);
/* What would make the stacks of @maps' process whole, by the first runtime that knows: or NULL. */
const char *runtimes__fix(const struct runtimes *rts, const struct proc_maps *maps);
/* Put each runtime's frames in @e's user stack. 0 or the first -errno. */
int runtimes__merge(struct runtimes *rts, struct sample_event *e);
/* Sampling stopped: (-v) each runtime's report, then its finish. */
void runtimes__report(struct runtimes *rts);
void runtimes__finish(struct runtimes *rts);

#endif
