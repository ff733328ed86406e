/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpf_stats.h - the BPF program's counters (bpf/profile.h, enum
 * profile_stat), one per CPU, summed.
 */
#ifndef PROFILER_BPF_STATS_H
#define PROFILER_BPF_STATS_H

#include <stdint.h>

#include "bpf/profile.h"

struct profile_bpf;

/* Counter @stat of @skel's program, summed over every CPU; 0 when it cannot be read. */
uint64_t bpf_stats__sum(const struct profile_bpf *skel, enum profile_stat stat);

/*
 * Counter @stat of each of the @nr CPUs into @values (all 0 when it cannot
 * be read).
 */
void bpf_stats__per_cpu(const struct profile_bpf *skel, enum profile_stat stat, uint64_t *values,
			int nr);

#endif
