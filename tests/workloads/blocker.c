// SPDX-License-Identifier: GPL-2.0-only
/*
 * blocker [A B [SECONDS]]: block A ms in wait_a() then B ms in wait_b(),
 * over and over (default 7 3, 10 seconds; a negative SECONDS runs until
 * killed), both through the C library's poll(), which sets up no frame
 * pointer: a frame-pointer walk from inside it skips wait_a() and wait_b().
 */
#include <poll.h>

#include "work.h"

__attribute__((noinline)) void wait_a(int ms)
{
	poll(NULL, 0, ms);
}

__attribute__((noinline)) void wait_b(int ms)
{
	poll(NULL, 0, ms);
}

int main(int argc, char **argv)
{
	int a = argc > 2 ? atoi(argv[1]) : 7;
	int b = argc > 2 ? atoi(argv[2]) : 3;
	double seconds = arg_seconds(argc, argv, 3, 10);
	double end = now_seconds() + seconds;

	while (seconds < 0 || now_seconds() < end) {
		wait_a(a);
		wait_b(b);
	}
	return 0;
}
