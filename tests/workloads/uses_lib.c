// SPDX-License-Identifier: GPL-2.0-only
/* uses_lib [SECONDS]: spends its time in lib_hot_loop() from libhot.so. */
#include "work.h"

void lib_hot_loop(void);

__attribute__((noinline)) void call_library(void)
{
	lib_hot_loop();
}

int main(int argc, char **argv)
{
	double end = now_seconds() + arg_seconds(argc, argv, 1, 10);

	while (now_seconds() < end)
		call_library();
	return 0;
}
