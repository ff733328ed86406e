/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * alloc.h - allocation profiling (--alloc): the uprobes on each target's
 * allocator, and what its sampled blocks add up to, per stack, as DHAT
 * counts them per allocation point.
 *
 * The allocator of a process is the first of its objects, in the order the
 * dynamic linker binds symbols, that defines `malloc`: the executable (a
 * static binary, or one linking jemalloc or tcmalloc statically), a
 * preloaded or linked allocator library, else the C library. Its malloc
 * family and free are probed there, anonymous mmap and munmap in the C
 * library. Uprobes are attached per process, so no other process on the
 * machine pays for them.
 *
 * The BPF program (bpf/alloc.bpf.h) samples calls by bytes and sends
 * each sampled block with its stack and, when it is freed, its free. Here
 * each block is scaled to what it stands for (profile.h, struct
 * profile_alloc) and counted in its stack_table entry: allocated, live now,
 * the stack's own peak, live at the global peak of the heap (found as DHAT
 * does: when the first free after a new peak comes, the entries changed
 * since the last peak copy what they hold), and at the end.
 *
 * Not thread-safe: the collector's thread only.
 */
#ifndef PROFILER_ALLOC_H
#define PROFILER_ALLOC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct profile_bpf;
struct proc_maps;
struct stack_entry;
struct sample_event;
struct free_event;
struct profile_stats;

struct alloc;

/*
 * Set up @skel, opened and not loaded, for sampling one allocation per
 * @rate bytes (1: every one), watching at most @max_live blocks (0: the
 * default); or, with @rate 0, leave the allocation programs out. 0 or -errno.
 */
int alloc__configure(struct profile_bpf *skel, uint64_t rate, uint64_t max_live);

/*
 * After @skel is loaded; @preload: the sampler preloaded into the command
 * (alloc_preload.h), or NULL. NULL and errno on failure.
 */
struct alloc *alloc__new(struct profile_bpf *skel, uint64_t rate, const char *preload);
void alloc__free(struct alloc *a);

/* What alloc__attach() returns for a program with no malloc to probe. */
#define ALLOC_NO_ALLOCATOR (-ENOMSG)
/* The one line that says so, for "cannot profile X: %s". */
#define ALLOC_NO_ALLOCATOR_MSG                                                                     \
	"it defines no malloc, nor does any library it loads (a static, stripped "                 \
	"program?): nothing for --alloc to probe"

/*
 * Probe the allocator of process @pid. @exe: the program it is about to
 * exec (a command not started yet), whose objects are found as the dynamic
 * linker would load them; NULL: a running process, whose are in its maps.
 * 0, ALLOC_NO_ALLOCATOR, or -errno with the reason logged.
 */
int alloc__attach(struct alloc *a, pid_t pid, const char *exe);

/*
 * Process @pid exec'd: probe its new program's allocator, unless it is the
 * one alloc__attach() was given. 0 or -errno.
 */
int alloc__exec(struct alloc *a, pid_t pid);

/* Remove every probe: the recording is over. */
void alloc__detach(struct alloc *a);

/*
 * Time what one hit of a probe at an allocator costs here: a probe like
 * the allocators' on a function of ours, called in a loop, against the
 * loop without it. Takes a few tens of milliseconds, and one grace period
 * of the kernel's to remove the probe. 0 or -errno.
 */
int alloc__measure_trap(struct alloc *a);

/* What the probes on the targets' allocators cost (alloc__cost()). */
struct alloc_cost {
	uint64_t trap_ns; /* a hit's trap, from alloc__measure_trap(); 0: not measured */
	uint64_t probed;  /* times a process's allocator was probed */
	/* With kernel.bpf_stats_enabled on: the allocator programs' hits and run time. */
	uint64_t hits, run_ns;
};

void alloc__cost(const struct alloc *a, struct alloc_cost *cost);

/*
 * The address in @maps of the allocation function an EVENT_ALLOC record
 * names, to show as the stack's leaf; 0 when @maps does not map it.
 */
uint64_t alloc__func_address(struct alloc *a, const struct proc_maps *maps,
			     const struct sample_event *e);

/*
 * Do @maps map what @e's record needs to be named: the allocation function
 * its leaf becomes, or the preloaded sampler?
 */
bool alloc__maps_hold(struct alloc *a, const struct proc_maps *maps, const struct sample_event *e);

/*
 * Is @e an anonymous mmap that the allocator made (glibc's malloc maps
 * large blocks)? Its callers in @maps hold a heap function's frame: the
 * block is counted as heap already, and must not be twice.
 */
bool alloc__by_allocator(struct alloc *a, const struct proc_maps *maps,
			 const struct sample_event *e);

/* Count the sampled block of @e, whose stack is @s. 0 or -ENOMEM. */
int alloc__add(struct alloc *a, struct stack_entry *s, const struct sample_event *e);

/* A sampled block was freed. */
void alloc__release(struct alloc *a, const struct free_event *e);

/*
 * Process @pid exited, or exec'd, at @time_ns (CLOCK_MONOTONIC): its blocks
 * still live are not any more, but count as live at the end for their
 * stacks (as leaked, in DHAT's words), and no longer in the heap's live
 * total.
 */
void alloc__exit(struct alloc *a, pid_t pid, uint64_t time_ns);

/* The recording ended at @end_ns (CLOCK_MONOTONIC): what is live now is live at the end. */
void alloc__finish(struct alloc *a, uint64_t end_ns);

/* The totals and losses, into @stats; the time of the heap's peak (CLOCK_MONOTONIC) or 0. */
void alloc__stats(const struct alloc *a, struct profile_stats *stats, uint64_t *gmax_time);

#endif
