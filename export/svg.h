/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * svg.h - write a profile as one self-contained, interactive SVG flame graph.
 *
 * The graph holds the stacks folded output holds, merged the same way (by
 * process name and function names; pids and tids are not kept apart): the
 * process name is the root frame above "all" (svg__write_root() puts the
 * command line there instead, or nothing, as folded__write_root() does),
 * then frames run root to leaf
 * upwards, each function inlined into a frame a frame of its own. A frame's
 * width is its share of the total in folded's unit: samples on CPU,
 * microseconds in a PROFILE_OFFCPU (off-CPU only) or PROFILE_WALL profile,
 * or bytes allocated in a PROFILE_ALLOC one ("Allocation flame graph").
 * Siblings are sorted by name, so the same samples in any order give the
 * same bytes.
 *
 * Frames are colored by kind (user code, kernel, inlined, JIT, process) in
 * distinct hue families, the shade hashed from the name. Frames narrower
 * than 0.1 px of the 1180 px graph are not drawn (flamegraph.pl's default
 * --minwidth); a line at the top says how many and what share they hold.
 * Names are made valid XML: invalid UTF-8, control characters and the
 * characters XML cannot hold become U+FFFD, and markup characters are escaped.
 *
 * The embedded script (no external resources) zooms to a clicked frame
 * (Escape, "Reset zoom" or clicking "all" zooms out), searches frame names
 * for a regular expression ("Search", Ctrl-F or "/"), highlighting matches
 * and showing their share of the total, and shows a hovered frame's
 * details at the bottom; every frame also has a <title> tooltip.
 *
 * svg__write() does not modify @p and returns 0 or a negative errno
 * (-ENOMEM; -EIO or the stdio errno when @out fails). @out is neither flushed
 * nor closed: with a buffered stream, a write error may only show at the
 * caller's fflush() or fclose(). Thread-safe as long as @p is not being modified.
 */
#ifndef PROFILER_EXPORT_SVG_H
#define PROFILER_EXPORT_SVG_H

#include <stdio.h>

#include "common/profile.h"

/* Write @p as one self-contained interactive SVG flame graph. 0 or -errno. */
int svg__write(const struct profile *p, FILE *out);
/* The same, with @root above each stack's frames (svg__write() has PROFILE_ROOT_COMM). */
int svg__write_root(const struct profile *p, FILE *out, enum profile_root root);

#endif
