// SPDX-License-Identifier: GPL-2.0-only
/*
 * deep [DEPTH [SECONDS]]: burn CPU at the bottom of a DEPTH-deep recursion
 * (default 200), deeper than the 127 frames a sample can hold, so every
 * sample's user stack is truncated.
 */
#include "work.h"

static volatile unsigned long sink;
static double end;

__attribute__((noinline)) void deep_leaf(void)
{
	while (now_seconds() < end)
		sink += burn(1);
}

__attribute__((noinline)) void recurse(int depth)
{
	if (depth > 0)
		recurse(depth - 1);
	else
		deep_leaf();
	sink++; /* keeps the call from becoming a jump */
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 200;

	end = now_seconds() + arg_seconds(argc, argv, 2, 10);
	recurse(depth);
	return 0;
}
