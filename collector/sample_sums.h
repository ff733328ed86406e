/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sample_sums.h - the samples the BPF program counted rather than sent.
 *
 * Where no output needs each sample's time, the BPF program sends a
 * thread's first sample of each stack (SAMPLE_SUMMED) and counts the later
 * ones in its `sample_sums` map (bpf/profile.h, struct sum_key). This keeps,
 * for each first sample, the stack entry it was counted in and how its
 * user stack was judged; once sampling stopped, each count in the map is
 * added to that entry (stack_table__add_count()) and judged the same. A
 * count whose first sample never came (the ring buffer was full) is an
 * orphan: lost.
 *
 * Not thread-safe: the drain thread owns it.
 */
#ifndef PROFILER_SAMPLE_SUMS_H
#define PROFILER_SAMPLE_SUMS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hashtab.h"

struct bpf_map;
struct sample_record;
struct stack_entry;
struct stack_judgement;
struct stack_table;
struct user_stacks;

struct sample_sums {
	struct hashtab firsts; /* struct summed_first by its key */
	uint64_t nr_counts;    /* counts read from the map */
	uint64_t orphans;      /* samples in them whose first sample never came */
	uint64_t idle;	       /* ... in them of idle CPUs (tid 0) */
};

void sample_sums__init(struct sample_sums *s);
void sample_sums__release(struct sample_sums *s);

/*
 * First sample @r (its record, checked by event__parse()) was counted in
 * @entry, its user stack judged @j: where its later samples go. Two stacks
 * of a thread whose hashes collide: the first one's stands for both.
 * 0 or -ENOMEM.
 */
int sample_sums__remember(struct sample_sums *s, const struct sample_record *r,
			  struct stack_entry *entry, const struct stack_judgement *j);

/*
 * Add every count in @map, the BPF program's `sample_sums`, to its first
 * sample's entry in @table, judged as that one was in @us. 0 or -errno.
 */
int sample_sums__flush(struct sample_sums *s, const struct bpf_map *map, struct stack_table *table,
		       struct user_stacks *us);

#endif
