// SPDX-License-Identifier: GPL-2.0-only
/*
 * early_exit [SECONDS]: burns CPU in short_lived_work() for SECONDS (default
 * 1) and exits, so a profiler still running must symbolize it after the fact.
 */
#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void short_lived_work(void)
{
	sink += burn(10);
}

int main(int argc, char **argv)
{
	double end = now_seconds() + arg_seconds(argc, argv, 1, 1);

	while (now_seconds() < end)
		short_lived_work();
	return 0;
}
