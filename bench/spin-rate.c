// SPDX-License-Identifier: GPL-2.0-only
/*
 * spin-rate [THREADS [SECONDS]]: burn CPU in THREADS threads (default: one
 * per online CPU) for SECONDS (default 3), then print "units_per_sec N",
 * the work all of them did per second of wall time, and "units_per_cpu_sec
 * N", per second of CPU time the process was charged (getrusage()).
 * bench/overhead runs it alone, under our profiler and under perf record:
 * what a profiler costs its target shows as a lower rate.
 *
 * The second rate holds on a busy machine, where other programs take turns
 * on the CPUs: the time the sampling interrupt and its BPF program take is
 * charged to the task they interrupt, so it shows as less work per CPU
 * second, but time others run (the profiler's own drain included) does not.
 *
 * The work is tests/workloads/work.h's burn(), one unit at a time, a few
 * frames deep so that both profilers walk a real stack.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tests/workloads/work.h"

static double end;
static atomic_ulong units;
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long spin_leaf(void)
{
	return burn(1);
}

__attribute__((noinline)) static unsigned long spin_step(void)
{
	return spin_leaf() + 1;
}

static void *spin(void *arg)
{
	unsigned long done = 0;

	(void)arg;
	while (now_seconds() < end) {
		sink += spin_step();
		done++;
	}
	atomic_fetch_add(&units, done);
	return NULL;
}

int main(int argc, char **argv)
{
	long nr = argc > 1 ? atol(argv[1]) : sysconf(_SC_NPROCESSORS_ONLN);
	double seconds = arg_seconds(argc, argv, 2, 3), start;
	pthread_t threads[256];
	struct rusage ru;
	double cpu;
	int err;

	if (nr < 1 || nr > 256 || seconds <= 0) {
		fprintf(stderr, "usage: spin-rate [THREADS (1-256) [SECONDS (> 0)]]\n");
		return 2;
	}
	start = now_seconds();
	end = start + seconds;
	for (long i = 0; i < nr; i++) {
		err = pthread_create(&threads[i], NULL, spin, NULL);
		if (err) {
			fprintf(stderr, "spin-rate: cannot start a thread: %s\n", strerror(err));
			return 1;
		}
	}
	for (long i = 0; i < nr; i++)
		pthread_join(threads[i], NULL);
	seconds = now_seconds() - start;
	getrusage(RUSAGE_SELF, &ru);
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	      ru.ru_stime.tv_usec / 1e6;
	printf("units_per_sec %.0f\nunits_per_cpu_sec %.0f\n", atomic_load(&units) / seconds,
	       cpu > 0 ? atomic_load(&units) / cpu : 0.0);
	return 0;
}
