// SPDX-License-Identifier: GPL-2.0-only
/*
 * inline [A B [SECONDS]]: spend A parts of the CPU in caller_a() and B parts
 * in caller_b() (default 70 30, 10 seconds; a negative SECONDS runs until
 * killed), all of it in hot_inline(), which is inlined into both: there is
 * no out-of-line copy, so a profile shows hot_inline only from DWARF's
 * inline records.
 */
#include <stdio.h>

#include "work.h"

static volatile unsigned long sink;

/* burn()'s loop, written out here so that the leaf is a line of this file. */
static inline __attribute__((always_inline)) unsigned long hot_inline(unsigned long units)
{
	unsigned long x = units;

	for (unsigned long i = 0; i < units * UNIT_ITERATIONS; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) void caller_a(unsigned long units)
{
	sink += hot_inline(units);
}

__attribute__((noinline)) void caller_b(unsigned long units)
{
	sink += hot_inline(units);
}

int main(int argc, char **argv)
{
	struct split s = split__args(argc, argv, 70, 30);

	while (split__running(&s)) {
		unsigned long k = split__turn(&s);

		caller_a(k * s.a);
		caller_b(k * s.b);
	}
	return 0;
}
