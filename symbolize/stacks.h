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

/* The one frame of an overflow bucket's samples. */
struct overflow_frame {
	struct profile_line line;
	struct profile_frame frame;
};

/*
 * Fill @f with "[stack table full]", interned in @strings. The samples of a
 * profile point to @f->frame: it must outlive the profile. 0 or -ENOMEM.
 */
int overflow_frame__init(struct overflow_frame *f, struct strset *strings);

struct stacks_opts {
	uint64_t start_mono; /* CLOCK_MONOTONIC ns that sample times are made relative to */
	/* For overflow buckets; may be NULL when the table never overflowed. */
	const struct overflow_frame *overflow;
	/* When not NULL: checked before each stack, and a nonzero value aborts. */
	const volatile sig_atomic_t *stop;
};

/*
 * Add one sample to @p for each entry of @stacks, its frames from @sym, then
 * sort @p (profile__sort()). The frames belong to @sym, which must outlive
 * @p. Returns 0, -ENOMEM, -EINVAL for an overflow bucket with no
 * @opts->overflow, or -EINTR when *@opts->stop became nonzero; samples
 * added by then stay in @p.
 */
int stacks__symbolize(struct profile *p, struct symbolizer *sym, const struct stack_table *stacks,
		      const struct stacks_opts *opts);

#endif
