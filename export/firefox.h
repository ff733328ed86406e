/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * firefox.h - write a profile as a Gecko profile, the JSON format that the
 * Firefox Profiler (profiler.firefox.com) opens directly, at meta.version 24:
 * the version its own `perf script` importer and samply write, which every
 * later frontend upgrades.
 *
 * Threads. One thread per (pid, tid), ordered by pid then tid, all in the
 * top-level "threads" array ("processes" is empty): the profiler groups
 * threads into processes by pid. A thread's "name" and "processName" are the
 * thread_name and process_name of its samples; when a tid changed names
 * during the profile (an exec), those of the name that has the most samples.
 *
 * Samples. Every sample is written at its real time: one row per timestamp
 * in sample->times, in ms since profile->start_time, rows of a thread sorted
 * by time (rows of one time in the samples' order). A sample without times
 * (a hand-built profile) has its rows at time 0. "eventDelay" is always 0.
 * The format has no weight column, so each row counts as one sample; the
 * "threadCPUDelta" column (meta.sampleUnits: ns) gives each on-CPU row one
 * sampling period of CPU time, from which the profiler draws the CPU graph
 * and ranks threads by CPU use.
 *
 * Frames. Each line of a frame (its inline chain) is a frame of its own,
 * outermost first in the stack, named "function (in module)" so the profiler
 * shows "module!function": module is the basename of the frame's mapping, or
 * "[kernel.kallsyms]" for a kernel frame without one; a frame without a
 * mapping is just "function". A ')' in a module name becomes '_', as the
 * profiler's parser stops the module at the first ')'. The source line goes
 * in the frame table's "line" column (null when unknown); source file names
 * have no place in this format (the "function (file:line)" form means
 * JavaScript to the profiler).
 *
 * Categories (meta.categories; a frame's category colors the samples whose
 * leaf it is): 0 "User" yellow, 1 "Kernel" orange (kernel frames), 2 "JIT"
 * green (frames named from a perf map), 3 "Off-CPU" blue, 4 "Other" grey
 * (the synthetic frames below and the markers).
 *
 * Off-CPU intervals (sample->offcpu, in PROFILE_OFFCPU and PROFILE_WALL
 * profiles) get one row per interval, at the time the thread left the CPU,
 * whose stack is the blocked stack with a leaf frame "[off-CPU]" in the
 * Off-CPU category, and no CPU time. The timeline is then right to within a
 * sampling period: the stack chart draws each row until the thread's next
 * row, which comes once it runs again, and the CPU graph shows the gap as
 * idle. But the call tree counts rows, so an interval weighs as much as one
 * on-CPU sample whatever its length: the format has no weights, and the
 * profile keeps only each stack's total time off CPU, not each interval's
 * length, from which rows could be spread over the interval without
 * inventing times. For time off CPU by stack, use the pprof or folded output.
 *
 * What the profile may be missing shows in the profiler itself:
 * - a truncated stack (sample->truncated: outer frames may be missing) gets
 *   the root frame "[truncated]", above the frames that were read;
 * - a sample without frames gets the one frame "[unknown]";
 * - the first thread carries four interval markers spanning the profile
 *   (startTime 0, endTime profile->duration), always written, zero or not:
 *   "lost samples: N", "truncated stacks: N", "stack read errors: N" and
 *   "processes with unreadable maps: N" (profile->stats). A profile without
 *   samples gets one empty thread, "[no samples]" with pid and tid 0, to hold
 *   them.
 *
 * Tables are per thread, as the format wants them, and built in the order in
 * which a walk of the thread's samples (by thread name, process name, then
 * array order, which is profile__sort()'s order; each stack from the root)
 * first meets strings, frames and stacks: after profile__sort(), the same
 * samples always give the same bytes. Strings are escaped as JSON
 * requires; bytes that are not valid UTF-8 become U+FFFD.
 *
 * firefox__write() does not modify @p and returns 0 or a negative errno
 * (-ENOMEM; -EOVERFLOW past 2^32 - 1 stacks, frames or strings in a thread;
 * -EIO or the stdio errno when @out fails) and logs only unexpected zlib
 * failures. Gzipped output has a fixed header (no name, no time) like the
 * pprof writer's. @out is neither flushed nor closed: with a buffered stream,
 * a write error may only show at the caller's fflush() or fclose(). On error,
 * part of the output may have been written. Thread-safe as long as @p is not
 * being modified.
 */
#ifndef PROFILER_EXPORT_FIREFOX_H
#define PROFILER_EXPORT_FIREFOX_H

#include <stdbool.h>
#include <stdio.h>

struct profile;

/* Write @p as a Gecko profile (the Firefox Profiler's format, version 24); gzipped if @gzip. */
int firefox__write(const struct profile *p, FILE *out, bool gzip);

#endif
