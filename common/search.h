/* SPDX-License-Identifier: GPL-2.0-only */
/* search.h - the binary search every sorted address table of the profiler uses. */
#ifndef PROFILER_SEARCH_H
#define PROFILER_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * The index of the last of the @n (> 0) sorted keys at @a that is <= @key,
 * given a[0] <= @key. Branch-free: the loop compiles to a conditional move,
 * so it costs the same whatever the keys, with no mispredicted branches.
 */
static inline size_t search__last_le(const uint64_t *a, size_t n, uint64_t key)
{
	const uint64_t *base = a;

	while (n > 1) {
		size_t half = n / 2;

		base = base[half] <= key ? base + half : base;
		n -= half;
	}
	return base - a;
}

#endif
