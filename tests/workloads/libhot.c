// SPDX-License-Identifier: GPL-2.0-only
/* libhot.so: the hot function of uses_lib lives in this shared library. */
#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void lib_hot_loop(void)
{
	sink += burn(10);
}
