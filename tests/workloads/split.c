// SPDX-License-Identifier: GPL-2.0-only
/*
 * split [A B [SECONDS]]: spend A parts of the CPU in hot_a() and B parts in
 * hot_b(), both called from compute() (default 70 30, 10 seconds; a negative
 * SECONDS runs until killed).
 */
#include <stdio.h>

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

	while (split__running(&s)) {
		unsigned long k = split__turn(&s);

		compute(k * s.a, k * s.b);
	}
	return 0;
}
