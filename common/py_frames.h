/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * py_frames.h - Python frames as addresses in a stack.
 *
 * A stack is a list of addresses from the collector to the symbolizer. A
 * Python frame has none of its own, so the collector gives each distinct
 * (function, file, line) one: an index into this table, tagged in the top
 * bits so that it lies in the hole between user and kernel addresses on
 * x86-64, where no code is ever mapped. Stacks of different processes
 * running the same code share the addresses, and so aggregate.
 *
 * The low four bits of such an address are 8, so that the byte before it,
 * which the symbolizer looks up for return addresses, names the same frame.
 *
 * The collector adds (during a recording), the symbolizer reads (after, or
 * between a serve window's drains): one thread, not thread-safe.
 */
#ifndef PROFILER_PY_FRAMES_H
#define PROFILER_PY_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hashtab.h"

struct strset;

#define PY_FRAME_ADDR_TAG 0x00fe000000000000ULL

/*
 * A frame of an interpreted function. Every format names it by its function,
 * "name (file:start_line)", the line where the function starts, as V8's
 * profiler names a JavaScript function: so one function is one node of a
 * flame graph, whichever of its lines ran. The line being run is kept where
 * a format has room for it (a pprof Line, a Firefox Profiler frame).
 */
struct py_frame_name {
	const char *name;     /* the function's qualified name; interned */
	const char *filename; /* its file, as its code object says, or NULL; interned */
	uint32_t line;	      /* the line being run, 0 when not known */
	uint32_t start_line;  /* the line the function starts at, 0 when not known */
	bool js;	      /* JavaScript's (V8's), not Python's */
};

struct py_frames {
	struct strset *strings; /* owned */
	struct hashtab index;	/* of struct py_frame_name *, by value */
	struct py_frame_name **names;
	size_t nr, alloc;
};

static inline bool py_frames__is_addr(uint64_t addr)
{
	return (addr & 0xffff000000000000ULL) == PY_FRAME_ADDR_TAG;
}

/* 0 or -ENOMEM. */
int py_frames__init(struct py_frames *t);
void py_frames__release(struct py_frames *t);

/*
 * The address of frame @f (its strings need not be interned), added if new: 0 and sets *@addr,
 * or -ENOMEM (-E2BIG past 2^44 frames).
 */
int py_frames__add(struct py_frames *t, const struct py_frame_name *f, uint64_t *addr);

/* The frame at @addr (or the byte before it), or NULL when it is not one of @t's. */
const struct py_frame_name *py_frames__get(const struct py_frames *t, uint64_t addr);

#endif
