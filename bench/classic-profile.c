// SPDX-License-Identifier: GPL-2.0-only
/*
 * classic-profile [-F HZ] [-d SECONDS] PID[,PID...]: load bench/classic.bpf.c,
 * the classic stack-id-map design, on a CPU-clock perf event of every CPU,
 * sample the given processes for SECONDS (default 3) at HZ (default 99),
 * then read the counts and stacks back as such a profiler would, and print
 *
 *   runs N         times the program ran (kernel.bpf_stats_enabled=1)
 *   run_time_ns N  the time it ran, in all
 *   ns_per_run N   run_time_ns / runs
 *   samples N      samples counted, the sum of the counts map
 *   keys N         distinct (pid, user stack, kernel stack, comm) keys
 *   stack_errors N samples whose user stack id was an error (e.g. a full map)
 *   read_ns N      reading every key and both of its stacks at the end
 *
 * The figures come from bpf_obj_get_info_by_fd() as ours do
 * (collector__bpf_stats()), the same counters as /proc/self/fdinfo shows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "collector/collector.h"
#include "bench/classic.h"
#include "bench/classic.skel.h"

static void usage(void)
{
	fprintf(stderr, "usage: classic-profile [-F HZ] [-d SECONDS] PID[,PID...]\n");
	exit(2);
}

static int add_targets(struct classic_bpf *skel, const char *list)
{
	const char *p = list;
	__u8 one = 1;

	while (*p) {
		char *end;
		unsigned long pid = strtoul(p, &end, 10);
		__u32 key = pid;

		if (end == p || pid == 0 || pid > INT32_MAX || (*end && *end != ',')) {
			fprintf(stderr, "classic-profile: invalid pid list '%s'\n", list);
			return -EINVAL;
		}
		if (bpf_map__update_elem(skel->maps.targets, &key, sizeof(key), &one, sizeof(one),
					 BPF_ANY)) {
			fprintf(stderr, "classic-profile: cannot add pid %lu: %s\n", pid,
				strerror(errno));
			return -errno;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

/*
 * What a classic profiler does once sampling stops: every key, and the
 * frames of both of its stacks. The stacks are only fetched, not used.
 */
static int read_profile(struct classic_bpf *skel, unsigned long long *samples,
			unsigned long long *keys, unsigned long long *errors)
{
	int counts = bpf_map__fd(skel->maps.counts), stacks = bpf_map__fd(skel->maps.stacks);
	static __u64 ips[CLASSIC_MAX_STACK];
	struct classic_key key, next;
	void *prev = NULL;
	__u64 count;

	*samples = *keys = *errors = 0;
	while (!bpf_map_get_next_key(counts, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(counts, &key, &count))
			continue; /* cannot happen: nothing deletes */
		*samples += count;
		(*keys)++;
		if (key.user_stack_id < 0)
			*errors += count;
		else
			bpf_map_lookup_elem(stacks, &key.user_stack_id, ips);
		if (key.kernel_stack_id >= 0)
			bpf_map_lookup_elem(stacks, &key.kernel_stack_id, ips);
	}
	return errno == ENOENT ? 0 : -errno;
}

int main(int argc, char **argv)
{
	unsigned long freq = 99, seconds = 3;
	unsigned long long samples, keys, errors;
	struct bpf_link **links = NULL;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct classic_bpf *skel;
	int opt, nr_cpus, ret = 1;
	uint64_t t0;

	while ((opt = getopt(argc, argv, "F:d:")) != -1) {
		char *end;

		switch (opt) {
		case 'F':
			freq = strtoul(optarg, &end, 10);
			if (*end || !freq)
				usage();
			break;
		case 'd':
			seconds = strtoul(optarg, &end, 10);
			if (*end || !seconds)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();

	skel = classic_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "classic-profile: cannot load the BPF program: %s\n",
			strerror(errno));
		return 1;
	}
	if (add_targets(skel, argv[optind]))
		goto out_destroy;
	nr_cpus = libbpf_num_possible_cpus();
	links = nr_cpus > 0 ? calloc(nr_cpus, sizeof(*links)) : NULL;
	if (!links) {
		fprintf(stderr, "classic-profile: cannot count the CPUs\n");
		goto out_destroy;
	}
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		int fd = collector__open_cpu_clock(freq, cpu);

		if (fd == -ENODEV)
			continue; /* a possible CPU that is offline */
		if (fd < 0) {
			fprintf(stderr,
				"classic-profile: cannot open a cpu-clock event on cpu %d: %s\n",
				cpu, strerror(-fd));
			goto out_detach;
		}
		links[cpu] = bpf_program__attach_perf_event(skel->progs.classic_sample, fd);
		if (!links[cpu]) {
			fprintf(stderr, "classic-profile: cannot attach on cpu %d: %s\n", cpu,
				strerror(errno));
			close(fd);
			goto out_detach;
		}
	}

	sleep(seconds);
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		bpf_link__destroy(links[cpu]);
		links[cpu] = NULL;
	}

	if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.classic_sample), &info, &len)) {
		fprintf(stderr, "classic-profile: cannot read the program's stats: %s\n",
			strerror(errno));
		goto out_detach;
	}
	if (!info.run_cnt)
		fprintf(stderr,
			"classic-profile: no runs counted: is kernel.bpf_stats_enabled 1?\n");
	t0 = now_ns();
	if (read_profile(skel, &samples, &keys, &errors)) {
		fprintf(stderr, "classic-profile: cannot read the counts: %s\n", strerror(errno));
		goto out_detach;
	}
	printf("runs %llu\nrun_time_ns %llu\nns_per_run %llu\nsamples %llu\nkeys %llu\n"
	       "stack_errors %llu\nread_ns %llu\n",
	       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
	       info.run_cnt ? (unsigned long long)(info.run_time_ns / info.run_cnt) : 0ULL, samples,
	       keys, errors, (unsigned long long)(now_ns() - t0));
	ret = 0;
out_detach:
	for (int cpu = 0; links && cpu < nr_cpus; cpu++)
		bpf_link__destroy(links[cpu]);
	free(links);
out_destroy:
	classic_bpf__destroy(skel);
	return ret;
}
