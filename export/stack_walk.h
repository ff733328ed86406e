/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stack_walk.h - walk the stacks of sorted samples root first, doing again
 * only what differs from the sample before.
 *
 * The exporters build something per frame from the root down (folded's text,
 * the flame graph's nodes, Firefox's stack table), and sorted samples
 * (profile__sort()) mostly share their outer frames with the one before. A
 * stack_walk keeps, for the last sample walked, the caller's value at each
 * level of its stack (an offset, a node or a stack index, in a uint64_t):
 * level 0 is the root (what the caller puts above the frames: the process,
 * a "[truncated]" frame, nothing), level d > 0 is the stack after its d
 * outermost frames. A new sample whose root is the same and whose outer
 * frames are the same pointers starts where they end:
 *
 *	err = stack_walk__begin(&w, s, root_key, &level);
 *	if (level == 0)
 *		w.path[0] = <the root's value>, level = 1;
 *	v = w.path[level - 1];
 *	for (; level <= s->nr_frames; level++)
 *		w.path[level] = v = <v and stack_walk__frame(s, level)>;
 *	stack_walk__end(&w, s);
 *
 * Only stack_walk__end() makes a sample the one the next is compared with, so
 * a walk that fails half way leaves no stale path behind. The frames and the
 * path are the caller's to read and write; the walk owns the path's memory.
 * Not thread-safe.
 */
#ifndef PROFILER_EXPORT_STACK_WALK_H
#define PROFILER_EXPORT_STACK_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "common/profile.h"

struct stack_walk {
	const struct profile_sample *prev; /* the sample walked last, or NULL */
	uint64_t prev_root;		   /* its root key */
	uint64_t *path;			   /* path[level]: the caller's value at each level */
	size_t alloc_path;
};

/* An empty walk; release it with stack_walk__release(). */
void stack_walk__init(struct stack_walk *w);
void stack_walk__release(struct stack_walk *w);

/* Compare the next sample with none: it starts from the root. */
static inline void stack_walk__reset(struct stack_walk *w)
{
	w->prev = NULL;
}

/*
 * Start @s, whose root is @root_key (samples of different roots share
 * nothing). *@level is how many levels of w->path hold @s's values: 0 when
 * its root is new, else 1 + the number of outer frames it shares with the
 * sample walked last. Makes room in w->path for levels 0 to @s->nr_frames.
 * Returns 0 or -ENOMEM.
 */
int stack_walk__begin(struct stack_walk *w, const struct profile_sample *s, uint64_t root_key,
		      uint32_t *level);

/* The frame of @s at @level (1: the outermost, @s->nr_frames: the leaf). */
static inline const struct profile_frame *stack_walk__frame(const struct profile_sample *s,
							    uint32_t level)
{
	return s->frames[s->nr_frames - level];
}

/* @s is walked to its leaf, and w->path holds its values: compare the next sample with it. */
static inline void stack_walk__end(struct stack_walk *w, const struct profile_sample *s)
{
	w->prev = s;
}

#endif
