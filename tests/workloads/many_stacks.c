// SPDX-License-Identifier: GPL-2.0-only
/*
 * many_stacks [SECONDS [DEPTH]]: burn CPU at the bottom of recursions whose
 * depth (1 to DEPTH, default 48) and path through two functions, left()
 * and right(), are drawn at random for each descent: nearly every sample
 * has a stack never seen before, so the profiler's table of distinct
 * stacks grows for as long as it samples.
 */
#include <stdint.h>

#include "work.h"

static volatile unsigned long sink;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void)
{
	return xorshift64(&rng);
}

void left(int depth, uint64_t path);
void right(int depth, uint64_t path);

/* One step down: the low bit of @path picks the next function. */
static inline void step(int depth, uint64_t path)
{
	if (!depth)
		sink += burn(1);
	else if (path & 1)
		right(depth - 1, path >> 1);
	else
		left(depth - 1, path >> 1);
}

__attribute__((noinline)) void left(int depth, uint64_t path)
{
	step(depth, path);
	sink++; /* keeps the call from becoming a jump */
}

__attribute__((noinline)) void right(int depth, uint64_t path)
{
	step(depth, path);
	sink++;
}

int main(int argc, char **argv)
{
	double seconds = arg_seconds(argc, argv, 1, 10), end = now_seconds() + seconds;
	int depth = argc > 2 ? atoi(argv[2]) : 48;

	if (depth < 1 || depth > 64)
		depth = 48;
	while (seconds < 0 || now_seconds() < end) {
		uint64_t r = next_random();

		left((int)(r % depth), next_random());
	}
	return 0;
}
