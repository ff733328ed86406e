// SPDX-License-Identifier: GPL-2.0-only
/*
 * execer SECONDS PROGRAM [ARGS...]: burn CPU in before_exec() for SECONDS,
 * then exec PROGRAM: one process that runs two binaries, one after the
 * other, so a profile must name the functions of both.
 */
#include <stdio.h>
#include <unistd.h>

#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void before_exec(double seconds)
{
	double end = now_seconds() + seconds;

	while (now_seconds() < end)
		sink += burn(1);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: execer SECONDS PROGRAM [ARGS...]\n");
		return 2;
	}
	before_exec(arg_seconds(argc, argv, 1, 1));
	execv(argv[2], argv + 2);
	perror("execer: execv");
	return 127;
}
