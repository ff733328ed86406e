/* SPDX-License-Identifier: GPL-2.0-only */
/* bench.h - what the benchmark programs share: a clock and a fixed random sequence. */
#ifndef PROFILER_BENCH_H
#define PROFILER_BENCH_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* xorshift64*: a fixed sequence, so every run looks up the same addresses. */
static inline uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

#endif
