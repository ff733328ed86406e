/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * work.h - CPU work in units of known cost, shared by the workloads.
 *
 * burn() spins @units times through a loop the compiler cannot remove, so two
 * functions burning A and B units from the same loop take A:B of the CPU.
 */
#ifndef WORKLOAD_WORK_H
#define WORKLOAD_WORK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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

/* A xorshift64 step of *@state (never 0): random enough for workloads. */
static inline uint64_t xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
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

/*
 * The "A B [SECONDS]" arguments of the workloads that split their time A:B
 * between two paths (@a and @b by default, 10 seconds; a negative SECONDS
 * runs until killed). Loop while split__running(), a turn of
 * split__turn() times A and B at a time.
 */
struct split {
	unsigned long a, b;
	double seconds, end;
	uint64_t seed;
};

static inline struct split split__args(int argc, char **argv, unsigned long a, unsigned long b)
{
	struct split s = {
		.a = argc > 2 ? strtoul(argv[1], NULL, 10) : a,
		.b = argc > 2 ? strtoul(argv[2], NULL, 10) : b,
		.seconds = arg_seconds(argc, argv, 3, 10),
		.seed = (uint64_t)getpid() << 1 | 1,
	};

	s.end = now_seconds() + s.seconds;
	return s;
}

static inline bool split__running(const struct split *s)
{
	return s->seconds < 0 || now_seconds() < s->end;
}

/*
 * How many times A and B the next turn runs: one, two or three, at random.
 * A:B is the same, but there is no fixed cycle (1.5 ms at 70 30) for a
 * sampling clock's fixed period to alias with, which on a busy machine
 * moved A's share by 5 points and more, for perf as for us.
 */
static inline unsigned long split__turn(struct split *s)
{
	return 1 + xorshift64(&s->seed) % 3;
}

#endif
