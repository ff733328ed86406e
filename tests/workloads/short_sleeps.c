// SPDX-License-Identifier: GPL-2.0-only
/*
 * short_sleeps [SECONDS [USEC]]: one thread sleeps USEC microseconds at a
 * time (default 20) for SECONDS (default 3), as RPC-style code blocks
 * briefly and often, then prints how long it ran, in nanoseconds, from
 * main() to its return: what --wall must add up to.
 */
#include <stdio.h>
#include <time.h>

#include "work.h"

__attribute__((noinline)) void short_sleep(const struct timespec *ts)
{
	nanosleep(ts, NULL);
}

int main(int argc, char **argv)
{
	double seconds = arg_seconds(argc, argv, 1, 3);
	long usec = argc > 2 ? atol(argv[2]) : 20;
	struct timespec ts = { .tv_sec = usec / 1000000, .tv_nsec = usec % 1000000 * 1000 };
	double start = now_seconds(), end = start + seconds;

	while (now_seconds() < end)
		short_sleep(&ts);
	printf("%.0f\n", (now_seconds() - start) * 1e9);
	return 0;
}
