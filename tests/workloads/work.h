/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * work.h - CPU work in units of known cost, shared by the workloads.
 *
 * burn() spins @units times through a loop the compiler cannot remove, so two
 * functions burning A and B units from the same loop take A:B of the CPU.
 */
#ifndef WORKLOAD_WORK_H
#define WORKLOAD_WORK_H

#include <stdlib.h>
#include <time.h>

#define UNIT_ITERATIONS 20000

static inline unsigned long burn(unsigned long units)
{
	unsigned long x = units;

	for (unsigned long i = 0; i < units * UNIT_ITERATIONS; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds to run from argv[i], or @def; a negative value means forever. */
static inline double arg_seconds(int argc, char **argv, int i, double def)
{
	return argc > i ? atof(argv[i]) : def;
}

#endif
