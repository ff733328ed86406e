// SPDX-License-Identifier: GPL-2.0-only
/*
 * qsort_cmp [SECONDS]: sort arrays with the C library's qsort(), whose
 * comparator does nearly all the work, so samples land in compare(), called
 * from inside the C library (built without frame pointers), called from
 * sort_all() (default 10 seconds; a negative SECONDS runs until killed).
 */
#include <stdlib.h>

#include "work.h"

#define NR_VALUES 64

static volatile unsigned long sink;

__attribute__((noinline)) int compare(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	sink += burn(1);
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void sort_all(unsigned long *values, unsigned long seed)
{
	for (int i = 0; i < NR_VALUES; i++)
		values[i] = (seed = seed * 6364136223846793005UL + 1442695040888963407UL) >> 33;
	qsort(values, NR_VALUES, sizeof(values[0]), compare);
	sink += values[0];
}

int main(int argc, char **argv)
{
	static unsigned long values[NR_VALUES];
	double seconds = arg_seconds(argc, argv, 1, 10);
	double end = now_seconds() + seconds;
	unsigned long seed = 1;

	while (seconds < 0 || now_seconds() < end)
		sort_all(values, seed++);
	return 0;
}
