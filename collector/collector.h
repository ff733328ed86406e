/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * collector.h - load the BPF program, sample, drain and aggregate.
 *
 * The collector opens one CPU-clock software perf event per online CPU at the
 * requested frequency, attaches the BPF program to each, and drains the ring
 * buffer in batches (the program wakes the reader only when the buffer fills
 * past a watermark; otherwise the reader polls every 10 ms). Samples of the
 * target processes are aggregated into a stack table; each process's maps are
 * snapshotted when it is first seen and again when a new stack has an address
 * outside the known mappings.
 *
 * Usage: collector__new(), collector__add_target() for each pid,
 * collector__start(), collector__run() until it returns, then read
 * collector__stacks() and collector__stats(). collector__stop() may be
 * called from a signal handler.
 *
 * `profiler serve` samples for days instead, and counts the samples of
 * each window a client asked for in a table of the window's own
 * (collector_opts.windows, collector__attach()), from its on_drain
 * callback.
 */
#ifndef PROFILER_COLLECTOR_H
#define PROFILER_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/stack_table.h"
#include "common/profile.h"

struct elf_cache;
struct strset;
struct py_frames;
struct bpf_progs;

/* How user stacks are unwound. */
enum call_graph {
	/*
	 * In the BPF program, from unwind tables built from each file's CFI
	 * (the default): unwind_maps.h. Until a process's tables are loaded,
	 * its samples copy the stack for CALL_GRAPH_DWARF's unwinder, and its
	 * intervals off CPU the top of the stack, unwound as far as it goes.
	 */
	CALL_GRAPH_CFI,
	CALL_GRAPH_FP,	  /* frame pointers only, as the kernel walks them */
	CALL_GRAPH_DWARF, /* CFI over a copy of the top of the stack, in user space */
};

/* The user stack --call-graph dwarf copies by default, as perf does. */
#define CALL_GRAPH_DWARF_DEFAULT_BYTES 8192
/*
 * What a sample copies, with unwind tables, of a process whose tables are
 * not loaded yet (a command's first milliseconds, and while a table it maps
 * is built): deep C++ stacks need more than perf's 8 KiB. Measured on a
 * clang++-14 -O2 compile at 999 Hz, a first run (tables built, not cached):
 * 355 of 392 such stacks ended at the end of an 8 KiB copy, 273 of 332 at
 * 16 KiB, 62 of 331 at 32 KiB; with tables built on the worker thread,
 * 34-45 of about 4,400 samples at 32 KiB, 1-13 of 8,800 at the most a
 * record takes (64 KiB), for the same CPU time. A copy stops at the top
 * of the stack, so shallow stacks send less.
 */
#define CALL_GRAPH_CFI_COPY_BYTES PROFILE_MAX_STACK_COPY
/* The memory unwind tables may take in the kernel by default: 4M rows. */
#define UNWIND_TABLE_DEFAULT_BYTES (32ULL << 20)

struct collector_opts {
	uint32_t freq_hz;	/* samples per second per CPU */
	uint64_t duration_ns;	/* 0: until stopped or every target exited */
	uint64_t ringbuf_bytes; /* 0: sized from frequency and CPUs */
	bool system_wide;	/* every process, or every one under @cgroup */
	const char *cgroup;	/* with @system_wide: only tasks in this cgroup v2 or below */
	pid_t tid;		/* only this thread (add its process as the target) */
	bool no_inherit;	/* do not follow processes the targets fork */
	bool offcpu;		/* record intervals off CPU too */
	bool offcpu_runnable;	/* ... also those spent waiting for a CPU (preempted) */
	uint64_t offcpu_min_ns; /* shorter intervals are not recorded */
	/*
	 * Shorter intervals are summed by thread and stack, each sum sent
	 * once it is this long (--wall); 0: every interval is its own record.
	 */
	uint64_t offcpu_sum_ns;
	bool idle;	 /* with @system_wide and no @cgroup: sample idle CPUs too, as "swapper" */
	bool thread_cpu; /* measure each thread's CPU time (thread_cpu.h): --wall */
	enum call_graph call_graph;
	uint32_t stack_bytes;	     /* CALL_GRAPH_DWARF: bytes of stack to copy; 0: the default */
	uint64_t unwind_table_bytes; /* CALL_GRAPH_CFI: the tables' memory; 0: the default */
	/*
	 * CALL_GRAPH_CFI and _DWARF: the most user frames unwound (from the
	 * tables, or a copy); 0: PROFILE_MAX_USER_STACK, the most there are.
	 * Frame pointers stop at PROFILE_MAX_STACK, as the kernel walks them.
	 */
	uint32_t max_frames;
	size_t max_stacks; /* distinct stacks kept, then overflow buckets (stack_table.h) */
	bool no_times;	   /* keep no timestamps: no output draws a timeline */
	bool no_python;	   /* leave CPython's frames out: its stacks show its C functions */
	bool no_java;	   /* never ask HotSpot JVMs for their perf maps (jvm.h) */
	bool no_node;	   /* leave V8's JavaScript frames out (v8.h): its machine code shows */
	/*
	 * --alloc: sample allocations instead of the CPU clock, one per
	 * @alloc_rate bytes on average (1: every one), watching at most
	 * @alloc_max_live blocks for their free (0: the default); 0: off.
	 * @command_path is the program the command will exec, for its allocator.
	 */
	uint64_t alloc_rate;
	uint64_t alloc_max_live;
	const char *command_path;
	/* The allocation sampler the command runs preloaded (alloc_preload.h), or NULL. */
	const char *alloc_preload;
	/* Else why not, said once its allocator is probed instead; or NULL. */
	const char *alloc_not_preloaded;
	/* Time a probe's trap at the start, for collector__alloc_cost() (-v). */
	bool alloc_cost;
	/*
	 * Count samples only in the windows attached (collector__attach()),
	 * not in collector__stacks(), which stays empty: profiler serve.
	 */
	bool windows;
	/*
	 * Called by collector__run() after each drain, at least every 10 ms
	 * while sampling, with @on_drain_ctx: where to show collector__stats()
	 * as they grow, say. NULL: nothing is called.
	 */
	void (*on_drain)(void *ctx);
	void *on_drain_ctx;
	/*
	 * CALL_GRAPH_CFI: the directory where unwind tables are kept between
	 * runs (collector/unwind_cache.h), copied; NULL: every table is built.
	 */
	const char *cache_dir;
};

/* Returns NULL and sets errno; the reason has been logged with pr_warn(). */
struct collector *collector__new(const struct collector_opts *opts, struct strset *strings);
void collector__free(struct collector *c);

/*
 * The ELF files of the targets' mappings, each read once: the unwinder's,
 * for the symbolizer to share (symbolizer_opts.elf_cache). Freed with @c.
 */
struct elf_cache *collector__elf_cache(struct collector *c);

/*
 * The Python frames the stacks' addresses stand for (py_frames.h), for the
 * symbolizer: valid until collector__free().
 */
const struct py_frames *collector__py_frames(const struct collector *c);

/*
 * The BPF programs loaded during a recording (bpf_progs.h), for the
 * symbolizer: valid until collector__free(). NULL for heap profiles.
 */
const struct bpf_progs *collector__bpf_progs(const struct collector *c);
/*
 * The agent, from its on_drain callback: read the BPF programs loaded
 * since, and count what each loaded has run by now (bpf_progs__loaded()).
 * 0, or -errno: no helper process to ask (collector/bpf_lister.h).
 */
int collector__count_bpf_progs(struct collector *c);
/*
 * The agent: forget the BPF programs found unloaded at or before
 * @before_ns (CLOCK_MONOTONIC), the start of the oldest window under way,
 * or now if there is none (bpf_progs__forget()).
 */
void collector__forget_bpf_progs(struct collector *c, uint64_t before_ns);
/*
 * The samples the kernel did not hand the BPF program so far, while the
 * CPU ran another BPF program: a count that only grows. From the thread
 * that runs the collector.
 */
uint64_t collector__samples_not_taken(struct collector *c);

/*
 * Profile process @pid. @child marks a process the caller forked: it is
 * reaped with waitpid() when it exits and its status is kept. A pid that
 * is a target already is left as it is. 0 or -errno (-ESRCH: no such
 * process).
 */
int collector__add_target(struct collector *c, pid_t pid, bool child);

/*
 * Follow the processes that @pid's process tree holds now, its descendants,
 * each as collector__add_target() follows a pid (what they fork later is
 * followed by the BPF program, unless opts.no_inherit). Call it after
 * collector__start(), which attaches the fork tracepoint: a process forked
 * while the tree is walked is then either found or reported. Descendants
 * that are targets already are skipped. How many were added is in *@added,
 * also on failure (they stay targets). 0 or -errno (-E2BIG: more processes
 * than PROFILE_MAX_TARGETS).
 */
int collector__add_descendants(struct collector *c, pid_t pid, size_t *added);

/* Open the perf events and attach the program: sampling starts. 0 or -errno. */
int collector__start(struct collector *c);

/*
 * The event the program samples on: the CPU clock of @cpu, for every task,
 * @freq_hz times a second. A descriptor, or a negative errno.
 */
int collector__open_cpu_clock(uint32_t freq_hz, int cpu);

/*
 * Drain samples until the duration elapsed, collector__stop() was called, or
 * every target exited, then drain what is left. 0 or -errno.
 */
int collector__run(struct collector *c);

/*
 * Can this kernel record time off CPU? It needs the sched_switch tracepoint,
 * as described in its BTF (@btf_path, or the running kernel's if NULL).
 * 0, or -ENOTSUP with the reason logged.
 */
int collector__check_offcpu(const char *btf_path);

/* Async-signal-safe. */
void collector__stop(struct collector *c);

const struct stack_table *collector__stacks(const struct collector *c);
/*
 * With collector_opts.thread_cpu, after collector__run(): the CPU time of
 * thread @tid of @pid during the recording, as the scheduler counted it,
 * into *@ns. false when it is not known (thread_cpu.h).
 */
bool collector__thread_cpu_ns(const struct collector *c, uint32_t pid, uint32_t tid, uint64_t *ns);

/*
 * Where the samples of a span of time are counted: a table of the stacks
 * sampled from @begin_ns to before @end_ns (CLOCK_MONOTONIC, as sample
 * times), their names interned in @strings.
 */
struct collector_window {
	struct stack_table stacks; /* set up by collector__attach() */
	struct strset *strings;
	uint64_t begin_ns, end_ns;
	uint64_t seq; /* set by collector__attach(): 1 for the first window, and so on */
};

/*
 * Count the samples of @w's span in @w from now on, as well as anywhere
 * else they are counted. @w's strings and span are set; its stacks are
 * (re)initialised here. 0 or -ENOMEM.
 */
int collector__attach(struct collector *c, struct collector_window *w);
/*
 * Count nothing more in @w, after the intervals off CPU under way at its
 * end, up to it (with opts.offcpu; an interval counts in a window for the
 * part of it in the window's span). Its stacks stay the caller's to
 * symbolize and release (stack_table__release()); the maps snapshots they
 * point to stay valid until the next collector__forget_exited() or drain
 * (collector__run(), which trims and frees the snapshots no attached
 * window's stack points to): symbolize it before either.
 */
void collector__detach(struct collector *c, struct collector_window *w);
/*
 * Forget the processes that exited, and free the maps snapshots that no
 * live process and no attached window's stack uses, then the files that
 * none of the snapshots left maps: their descriptors, their ELF images
 * (collector__elf_cache()) and unwind tables not in the BPF program's
 * array. Memory and descriptors follow the processes alive, not all that
 * ever ran. Stacks of windows detached before it must not be used after
 * it, nor ELF files from the cache that were not referenced.
 */
void collector__forget_exited(struct collector *c);
/* The processes the collector keeps state for: sampled or followed, and not known gone. */
size_t collector__nr_processes(const struct collector *c);

/* Counters of samples seen, lost, truncated and stack errors. */
void collector__stats(const struct collector *c, struct profile_stats *stats);
/* CLOCK_MONOTONIC and CLOCK_REALTIME at start, and the time sampled, in ns. */
/* --alloc: when the heap reached its peak (CLOCK_MONOTONIC), or 0. */
uint64_t collector__alloc_peak(const struct collector *c);
uint64_t collector__start_mono(const struct collector *c);
uint64_t collector__start_real(const struct collector *c);
uint64_t collector__duration(const struct collector *c);
/* Exit status (as from waitpid) of the child target, or -1 if it did not exit. */
int collector__child_status(const struct collector *c);
/*
 * What the probes on the targets' allocators cost (alloc.h's struct
 * alloc_cost). 0, or -ENOENT without --alloc.
 */
struct alloc_cost;
int collector__alloc_cost(const struct collector *c, struct alloc_cost *cost);
/*
 * BPF run time and run count of the sampling program, or with @offcpu of the
 * sched_switch one (needs kernel.bpf_stats_enabled). 0 or -errno (-ENOENT:
 * that program is not loaded).
 */
int collector__bpf_stats(const struct collector *c, bool offcpu, uint64_t *run_time_ns,
			 uint64_t *run_cnt);

#endif
