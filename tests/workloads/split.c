// SPDX-License-Identifier: GPL-2.0-only
/*
 * split [A B [SECONDS]]: spend A parts of the CPU in hot_a() and B parts in
 * hot_b(), both called from compute() (default 70 30, 10 seconds; a negative
 * SECONDS runs until killed).
 */
#include <stdio.h>
#include <unistd.h>

#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void hot_a(unsigned long units)
{
	sink += burn(units);
}

__attribute__((noinline)) void hot_b(unsigned long units)
{
	sink += burn(units);
}

__attribute__((noinline)) void compute(unsigned long a, unsigned long b)
{
	hot_a(a);
	hot_b(b);
}

int main(int argc, char **argv)
{
	struct split s = split__args(argc, argv, 70, 30);
	uint64_t seed = (uint64_t)getpid() << 1 | 1;

	/*
	 * Turns of one, two or three times A and B at random: A:B all the
	 * same, but no fixed cycle (1.5 ms at 70 30) for a clock's fixed
	 * period to alias with, which on a busy machine moved hot_a's share
	 * by 5 points and more, for perf as for us.
	 */
	while (split__running(&s)) {
		unsigned long k = 1 + xorshift64(&seed) % 3;

		compute(k * s.a, k * s.b);
	}
	return 0;
}
