// SPDX-License-Identifier: GPL-2.0-only
/*
 * frameless [A B [SECONDS]]: spend A parts of the CPU in leaf() called from
 * caller_a() and B parts in leaf() called from caller_b() (default 70 30,
 * 10 seconds; a negative SECONDS runs until killed).
 *
 * Built by gcc with -fno-omit-frame-pointer, leaf() still sets up no frame:
 * it uses no stack, so gcc leaves %rbp alone and a frame-pointer walk from
 * inside it skips its caller. Built with -fomit-frame-pointer, no function
 * has a frame. The callers do work after the call, so it is not a tail call.
 */
#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf(unsigned long units)
{
	return burn(units);
}

__attribute__((noinline)) void caller_a(unsigned long units)
{
	sink += leaf(units);
}

__attribute__((noinline)) void caller_b(unsigned long units)
{
	sink += leaf(units);
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
