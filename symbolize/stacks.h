/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stacks.h - the collector's aggregated stacks, symbolized into a profile.
 *
 * stacks__symbolize() turns every entry of a stack table (collector/
 * stack_table.h: raw kernel and user addresses, leaf first) into one sample
 * of a profile (common/profile.h: symbolized frames), by these rules:
 *
 *  - Below each stack's leaf, kernel and user alike, an address is a return
 *    address: the instruction after a call, which belongs to the next
 *    function when the call ends its caller (a call to a noreturn
 *    function). The byte before it, inside the call, is looked up instead.
 *    The leaf is where the thread was and is looked up as it is.
 *  - An interval off CPU is recorded from the sched_switch tracepoint, so
 *    its kernel stack starts inside our own BPF program and the kernel code
 *    that runs it (bpf_*, __bpf_*, __traceiter_*): those frames at the top
 *    are dropped. Samples on CPU keep every frame.
 *  - An overflow bucket (a stack first seen after the table was full) has no
 *    addresses: its samples get the one frame "[stack table full]".
 *  - Timestamps become ns since @start_mono (CLOCK_MONOTONIC); one taken
 *    before it counts as 0.
 *  - With a thread's measured CPU time (--wall), its samples on CPU stand
 *    for that time, not one period each: see stacks_opts.thread_cpu.
 *
 * Why here: it drives the symbolizer, and reads the collector's output
 * type, as each stage reads the one before it (export/ reads the profile).
 * common/ holds the profile model and includes no stage; the collector
 * does not know the symbolizer. So the transform is the symbolize stage's
 * entry point for a whole recording, not the CLI's, and unit tests reach it.
 *
 * Not thread-safe (neither is the symbolizer).
 */
#ifndef PROFILER_STACKS_H
#define PROFILER_STACKS_H

#include <signal.h>
#include <stdint.h>

#include "common/profile.h"

struct stack_table;
struct strset;
struct symbolizer;

/* A frame that names no code, standing for a stack that is not known. */
struct pseudo_frame {
	struct profile_line line;
	struct profile_frame frame;
};

/* The one frame of an overflow bucket's samples. */
#define OVERFLOW_FRAME_NAME "[stack table full]"
/* ... and of a thread's time on CPU when it was never sampled there (--wall). */
#define UNSAMPLED_FRAME_NAME "[on CPU, not sampled]"

/*
 * Fill @f with @name, interned in @strings. The samples of a profile point
 * to @f->frame: it must outlive the profile. 0 or -ENOMEM.
 */
int pseudo_frame__init(struct pseudo_frame *f, struct strset *strings, const char *name);

/* The CPU time of thread @tid of @pid into *@ns: true when it is known. */
typedef bool (*thread_cpu_fn)(void *arg, uint32_t pid, uint32_t tid, uint64_t *ns);

struct stacks_opts {
	uint64_t start_mono; /* CLOCK_MONOTONIC ns that sample times are made relative to */
	/* For overflow buckets; may be NULL when the table never overflowed. */
	const struct pseudo_frame *overflow;
	/*
	 * When not NULL (--wall): each thread's samples on CPU share its CPU
	 * time in proportion to their counts (profile_sample.cpu_ns), and a
	 * thread with CPU time but no sample on CPU gets one sample of
	 * @unsampled (which must then be set), at its first record's time.
	 */
	thread_cpu_fn thread_cpu;
	void *thread_cpu_arg;
	const struct pseudo_frame *unsampled;
	/* When not NULL: checked before each stack, and a nonzero value aborts. */
	const volatile sig_atomic_t *stop;
};

/*
 * Add one sample to @p for each entry of @stacks, its frames from @sym, then
 * sort @p (profile__sort()). The frames belong to @sym, which must outlive
 * @p. Returns 0, -ENOMEM, -EINVAL for an overflow bucket with no
 * @opts->overflow (or a thread_cpu with no unsampled frame), or -EINTR
 * when *@opts->stop became nonzero; samples added by then stay in @p.
 */
int stacks__symbolize(struct profile *p, struct symbolizer *sym, const struct stack_table *stacks,
		      const struct stacks_opts *opts);

#endif
