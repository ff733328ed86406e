/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stack_table.h - samples aggregated into distinct stacks.
 *
 * One entry per distinct (pid, tid, thread name, on or off CPU, kernel stack,
 * user stack, labels, code generation), counting how often it was seen, for how long when off CPU,
 * and keeping every record's timestamp for exporters that draw a timeline.
 * An entry also keeps the maps snapshot that was current when it was first
 * seen, for the symbolizer.
 *
 * Adding a sample that matches an entry costs one hash of the stack and no
 * allocation beyond the timestamp array's geometric growth. Not thread-safe.
 *
 * Memory is bounded by @max_stacks: once that many distinct stacks are
 * kept, a sample of a stack not seen before is counted in its thread's
 * overflow bucket, an entry with no frames and @overflow set (exporters
 * show it as one "[stack table full]" frame), so its thread and its count
 * stay in the profile. Buckets are capped too (max_stacks / 16, at least
 * 64); past that the sample is dropped and counted in @dropped. A kept
 * entry holds at most 2 * PROFILE_MAX_STACK addresses plus, unless
 * @no_times, 8 bytes per sample for its timestamps: the one cost that grows
 * with the length of the run, paid only for an output with a timeline.
 */
#ifndef PROFILER_STACK_TABLE_H
#define PROFILER_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hashtab.h"

struct proc_maps;

/* Which stacks of a sample are known to be cut short (stack_sample, stack_entry). */
#define STACK_USER_TRUNCATED (1U << 0)
#define STACK_KERNEL_TRUNCATED (1U << 1)

/*
 * One sample or interval off CPU to count, as the collector decoded it:
 * its thread, its stacks (leaf first, pointed to, copied only when new) and
 * what it weighs.
 */
struct stack_sample {
	uint32_t pid, tid;
	bool offcpu;	    /* an interval off CPU, not a sample */
	uint32_t truncated; /* STACK_*_TRUNCATED */
	uint64_t time_ns;   /* CLOCK_MONOTONIC */
	uint64_t weight_ns; /* off CPU: how long; an allocation: its bytes */
	/*
	 * Off CPU: intervals in @weight_ns; on CPU, the samples it stands for
	 * (more than one for those the BPF program counted). At least 1.
	 */
	uint32_t nr_intervals;
	/* What it counts as: @nr_intervals for a sample, 1 for anything else. */
	uint64_t count;
	uint16_t nr_kernel, nr_user;
	const uint64_t *kernel, *user; /* NULL where there are none */
	const char *labels;	       /* interned (common/profile.h's format), NULL: none */
	uint32_t code_gen; /* its process's code generation (bpf/profile.h's sample_head) */
};

/*
 * What the sampled allocations of one stack add up to (--alloc), scaled to
 * what they stand for: fractions of a block while sampling (alloc.h).
 */
struct stack_alloc {
	double bytes, blocks;		/* allocated */
	double cur_bytes, cur_blocks;	/* live now (at the end, once finished) */
	double max_bytes, max_blocks;	/* live at this stack's own peak */
	double gmax_bytes, gmax_blocks; /* live at the heap's last peak copied */
	double lifetime_ns; /* the lifetimes of its blocks freed, and at the end of all */
	double gone_bytes, gone_blocks; /* live when their process exited or exec'd */
	uint64_t first_ns, last_ns;	/* CLOCK_MONOTONIC of its first and last sampled block */
	bool mmap;			/* anonymous mmap, not heap */
	bool changed;			/* since the heap's last peak was copied (alloc.c) */
};

struct stack_entry {
	uint32_t pid, tid;
	const char *thread_name;      /* interned */
	const char *process_name;     /* interned */
	const char *cmdline;	      /* interned: the process's when first seen, or NULL */
	const char *cgroup;	      /* interned: the process's cgroup v2 path then, or NULL */
	const char *labels;	      /* interned: the samples' labels, or NULL */
	const struct proc_maps *maps; /* snapshot in effect when first seen, or NULL */
	bool maps_stale;	      /* @maps misses the leaf: look again at the end */
	uint32_t code_gen;	      /* the code its addresses were in (struct stack_sample's) */
	uint32_t truncated;	      /* STACK_*_TRUNCATED of the first sample */
	uint16_t nr_kernel, nr_user;
	bool offcpu;		  /* intervals off CPU, not samples */
	bool overflow;		  /* an overflow bucket: new stacks past max_stacks, no frames */
	uint64_t count;		  /* samples, or intervals off CPU */
	uint64_t weight_ns;	  /* off CPU: the intervals' total length */
	uint64_t nr_intervals;	  /* off CPU: the intervals, several per record when summed */
	uint64_t *times;	  /* @count CLOCK_MONOTONIC timestamps, ns; NULL with no_times */
	struct stack_alloc alloc; /* EVENT_ALLOC records: @count is the blocks sampled */
	size_t alloc_times;
	uint64_t ips[]; /* nr_kernel kernel then nr_user user addresses, leaf first */
};

struct stack_table {
	struct hashtab entries;
	size_t nr_samples;	  /* every sample added, dropped ones included */
	size_t max_stacks;	  /* distinct stacks kept before overflowing; 0: no limit */
	bool no_times;		  /* keep no timestamps: entries' @times stay NULL */
	size_t nr_stacks;	  /* entries that are stacks, not overflow buckets */
	size_t nr_buckets;	  /* overflow buckets */
	uint64_t overflowed;	  /* samples counted in an overflow bucket */
	uint64_t dropped;	  /* samples dropped: the buckets were full too */
	struct stack_entry *drop; /* what dropped samples are counted in, never exported */
};

/* An empty table; set @max_stacks before the first stack_table__add(). */
void stack_table__init(struct stack_table *t);
/* Frees every entry. */
void stack_table__release(struct stack_table *t);

/*
 * Count @e: with @no_times, as many samples as it stands for (@count, for
 * samples the BPF program counted); with times, one, since samples are
 * only counted so where no times are kept.
 * @thread_name and @process_name are interned. When the stack is
 * new, *@is_new is set and the entry is returned so the caller can attach a
 * maps snapshot. Past max_stacks the entry returned is an overflow bucket,
 * or for a dropped sample an entry that is not in the table. Returns NULL
 * on ENOMEM.
 */
struct stack_entry *stack_table__add(struct stack_table *t, const struct stack_sample *e,
				     const char *thread_name, const char *process_name,
				     bool *is_new);

/*
 * Count @n more samples of the stack of entry @s, which stack_table__add()
 * returned (an overflow bucket or the dropped samples' entry included), as
 * if as many samples as its first had been added: for samples the BPF
 * program counted after the first it sent. Only without times: 0, or
 * -EINVAL when @t keeps them.
 */
int stack_table__add_count(struct stack_table *t, struct stack_entry *s, uint64_t n);

/*
 * Processes with user stacks in @t but no maps to symbolize them with.
 * Only those count: a forked child that exited before anything read its
 * maps, and was never sampled, lost nothing.
 */
uint64_t stack_table__unmapped_pids(const struct stack_table *t);

#define stack_table__for_each_entry(t, i, e) hashtab__for_each_entry(&(t)->entries, i, e)

#endif
