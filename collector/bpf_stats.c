// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>

#include <bpf/libbpf.h>

#include "bpf_stats.h"
#include "profile.skel.h"

uint64_t bpf_stats__sum(const struct profile_bpf *skel, enum profile_stat stat)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u32 key = stat;
	uint64_t sum = 0;
	__u64 *values;

	if (nr_cpus <= 0)
		return 0;
	values = calloc(nr_cpus, sizeof(*values));
	if (!values)
		return 0;
	if (!bpf_map__lookup_elem(skel->maps.stats, &key, sizeof(key), values,
				  nr_cpus * sizeof(*values), 0))
		for (int i = 0; i < nr_cpus; i++)
			sum += values[i];
	free(values);
	return sum;
}
