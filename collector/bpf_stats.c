// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "bpf_stats.h"
#include "profile.skel.h"

/* The counter of every possible CPU, in an array the caller frees (*@nr long), or NULL. */
static __u64 *per_cpu(const struct profile_bpf *skel, enum profile_stat stat, int *nr)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u32 key = stat;
	__u64 *values;

	if (nr_cpus <= 0)
		return NULL;
	values = calloc(nr_cpus, sizeof(*values));
	if (values && bpf_map__lookup_elem(skel->maps.stats, &key, sizeof(key), values,
					   nr_cpus * sizeof(*values), 0))
		memset(values, 0, nr_cpus * sizeof(*values));
	*nr = nr_cpus;
	return values;
}

uint64_t bpf_stats__sum(const struct profile_bpf *skel, enum profile_stat stat)
{
	int nr_cpus = 0;
	__u64 *values = per_cpu(skel, stat, &nr_cpus);
	uint64_t sum = 0;

	for (int i = 0; values && i < nr_cpus; i++)
		sum += values[i];
	free(values);
	return sum;
}

void bpf_stats__per_cpu(const struct profile_bpf *skel, enum profile_stat stat, uint64_t *out,
			int nr)
{
	int nr_cpus = 0;
	__u64 *values = per_cpu(skel, stat, &nr_cpus);

	for (int i = 0; i < nr; i++)
		out[i] = values && i < nr_cpus ? values[i] : 0;
	free(values);
}
