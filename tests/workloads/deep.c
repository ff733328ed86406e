// SPDX-License-Identifier: GPL-2.0-only
/*
 * deep [DEPTH [SECONDS [sleep]]]: burn CPU at the bottom of a DEPTH-deep
 * recursion (default 200: deeper than the 127 frames of a frame-pointer
 * walk, within the 1,024 of an unwound one); with "sleep", block there in
 * 1 ms sleeps instead, for time off CPU. Built with frame pointers (deep)
 * and without (deep-nofp).
 */
#include <string.h>
#include <unistd.h>

#include "work.h"

static volatile unsigned long sink;
static double end;
static int sleeping;

__attribute__((noinline)) void deep_leaf(void)
{
	while (now_seconds() < end) {
		if (sleeping)
			usleep(1000);
		else
			sink += burn(1);
	}
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
	sleeping = argc > 3 && !strcmp(argv[3], "sleep");
	recurse(depth);
	return 0;
}
