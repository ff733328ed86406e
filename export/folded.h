/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * folded.h - write a profile as collapsed ("folded") stacks, the input of
 * Brendan Gregg's flamegraph.pl, speedscope, inferno and the Firefox Profiler.
 *
 * One line per distinct stack per process name, as stackcollapse-perf.pl
 * writes by default: samples of different pids and tids are merged when their
 * process names and frame names agree.
 *
 *   PROCESS;ROOT_FRAME;...;LEAF_FRAME COUNT
 *
 * - PROCESS is the process name with spaces and control characters made '_'
 *   ("[unknown]" when not known). folded__write_root() chooses what else
 *   roots the stacks (enum profile_root): with PROFILE_ROOT_CMDLINE the
 *   process's command line, spaces kept (the name where there is none, a
 *   kernel thread's), so that processes of one program run with different
 *   arguments stay apart; with PROFILE_ROOT_NONE nothing, the stacks of
 *   every process merged.
 * - Frames run root to leaf; kernel frames carry the suffix "_[k]". A sample
 *   without frames gets the single frame "[unknown]".
 * - So that flamegraph.pl's parser cannot be misled, a ';' in a frame name
 *   becomes ':', control characters (newline, tab, ...) become spaces, and
 *   a name ending in whitespace and a number ("foo 12") has that whitespace
 *   made '_' ("foo_12"), which would otherwise be read as a second count.
 * - COUNT is the sum of the merged samples' counts; in a PROFILE_OFFCPU
 *   profile, microseconds off CPU (on-CPU samples are left out, as bcc's
 *   offcputime does); in a PROFILE_WALL one, microseconds of wall-clock time,
 *   on-CPU samples weighing one sampling period each; in a PROFILE_ALLOC
 *   one, bytes allocated (estimated when sampled), heap blocks and anonymous
 *   mmaps alike: a stack ends in the call that allocated (malloc, mmap ...).
 *   Draw those with `flamegraph.pl --countname=bytes`.
 * - Lines are sorted bytewise (as `LC_ALL=C sort` sorts them), so the same
 *   samples give the same bytes in any order. Nothing else is written: no
 *   comments or statistics, which flamegraph.pl would count as bad lines.
 *
 * folded__write() does not modify @p and returns 0 or a negative errno
 * (-ENOMEM; -EIO or the stdio errno when @out fails). @out is neither flushed
 * nor closed: with a buffered stream, a write error may only show at the
 * caller's fflush() or fclose(). Thread-safe as long as @p is not being modified.
 */
#ifndef PROFILER_EXPORT_FOLDED_H
#define PROFILER_EXPORT_FOLDED_H

#include <stdio.h>

#include "common/profile.h"

/* With the process name as the root: folded__write_root(p, out, PROFILE_ROOT_COMM). */
int folded__write(const struct profile *p, FILE *out);
int folded__write_root(const struct profile *p, FILE *out, enum profile_root root);

#endif
