// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "export/stack_walk.h"

void stack_walk__init(struct stack_walk *w)
{
	memset(w, 0, sizeof(*w));
}

void stack_walk__release(struct stack_walk *w)
{
	free(w->path);
	stack_walk__init(w);
}

int stack_walk__begin(struct stack_walk *w, const struct profile_sample *s, uint64_t root_key,
		      uint32_t *level)
{
	const struct profile_sample *prev = w->prev;
	uint32_t n = s->nr_frames, pn, l = 0;

	w->prev = NULL;
	*level = 0;
	if (array__reserve(&w->path, &w->alloc_path, (size_t)n + 1, sizeof(*w->path)))
		return -ENOMEM;
	if (prev && w->prev_root == root_key) {
		pn = prev->nr_frames;
		while (l < n && l < pn && s->frames[n - 1 - l] == prev->frames[pn - 1 - l])
			l++;
		*level = l + 1;
	}
	w->prev_root = root_key;
	return 0;
}
