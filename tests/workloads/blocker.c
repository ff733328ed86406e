// SPDX-License-Identifier: GPL-2.0-only
/*
 * blocker [A B [SECONDS]]: block A ms in wait_a() then B ms in wait_b(),
 * over and over (default 7 3, 10 seconds; a negative SECONDS runs until
 * killed), both through the C library's poll(), which sets up no frame
 * pointer: a frame-pointer walk from inside it skips wait_a() and wait_b().
 * Built with -fomit-frame-pointer (blocker-nofp), no function has a frame.
 * The callers do work after the call, so gcc does not make it a tail call.
 */
#include <poll.h>

#include "work.h"

static volatile int sink;

__attribute__((noinline)) void wait_a(int ms)
{
	sink += poll(NULL, 0, ms);
}

__attribute__((noinline)) void wait_b(int ms)
{
	sink += poll(NULL, 0, ms);
}

int main(int argc, char **argv)
{
	struct split s = split__args(argc, argv, 7, 3);

	while (split__running(&s)) {
		wait_a(s.a);
		wait_b(s.b);
	}
	return 0;
}
