/* SPDX-License-Identifier: GPL-2.0-only */
/* sort.h - sorting the large address arrays of the symbolizer. */
#ifndef PROFILER_SORT_H
#define PROFILER_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int sort__u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sort the @nr addresses at @a in ascending order. A radix sort over the
 * bytes the addresses differ in (three or four for one file's code): a
 * unit's millions of row addresses took qsort() ten times as long. Falls
 * back to qsort() when memory runs out.
 */
static inline void sort__u64(uint64_t *a, size_t nr)
{
	uint64_t min, max, *tmp, *from = a, *to;
	unsigned int bytes = 0;

	if (nr < 2)
		return;
	min = max = a[0];
	for (size_t i = 1; i < nr; i++) {
		min = a[i] < min ? a[i] : min;
		max = a[i] > max ? a[i] : max;
	}
	while (bytes < 8 && (max - min) >> (8 * bytes))
		bytes++;
	tmp = malloc(nr * sizeof(*tmp));
	if (!tmp) {
		qsort(a, nr, sizeof(*a), sort__u64_cmp);
		return;
	}
	to = tmp;
	for (unsigned int b = 0; b < bytes; b++) {
		size_t count[257] = { 0 };
		uint64_t *swap;

		for (size_t i = 0; i < nr; i++)
			count[((from[i] - min) >> (8 * b) & 0xff) + 1]++;
		for (int d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < nr; i++)
			to[count[(from[i] - min) >> (8 * b) & 0xff]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != a)
		memcpy(a, from, nr * sizeof(*a));
	free(tmp);
}

#endif
