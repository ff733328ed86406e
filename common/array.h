/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * array.h - growing a heap array geometrically, the one way the profiler
 * does it: array__reserve(&arr, &alloc, nr + 1, sizeof(*arr)) before
 * appending arr[nr++].
 */
#ifndef PROFILER_ARRAY_H
#define PROFILER_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Make room for @need elements of @size bytes in the array *@arrp (a
 * pointer to the array pointer) that has room for *@alloc; doubles from
 * 16. Returns 0, or -ENOMEM with the array untouched.
 */
static inline int array__reserve(void *arrp, size_t *alloc, size_t need, size_t size)
{
	size_t n = *alloc ? *alloc : 16;
	void *mem;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	mem = realloc(*(void **)arrp, n * size);
	if (!mem)
		return -ENOMEM;
	*(void **)arrp = mem;
	*alloc = n;
	return 0;
}

#endif
