/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * firefox.h - write a profile in the Firefox Profiler's (profiler.firefox.com)
 * "processed" format, at preprocessedProfileVersion 49, as samply 0.13
 * writes it (Mozilla's mach and taskcluster write 47 and 48): tables per
 * thread, and a samples weight column, which the Gecko format the browser
 * itself writes lacks. Every later frontend upgrades it on loading (the
 * current one, 75 at profiler-cli 0.10.0, shares tables between threads);
 * a frontend older than 49 refuses it.
 *
 * Threads. One thread per (pid, tid), ordered by pid then tid, all in the
 * top-level "threads" array: the profiler groups threads into processes by
 * pid (a string in this format), and takes the thread whose tid is the pid
 * for the process's main thread (isMainThread). A thread's "name" and
 * "processName" are the thread_name and process_name of its samples; when a
 * tid changed names during the profile (an exec), those of the name that
 * has the most samples.
 *
 * Samples. Every sample is written at its real time: one row per timestamp
 * in sample->times, in ms since profile->start_time, rows of a thread sorted
 * by time (rows of one time in the samples' order). A sample without times
 * (a hand-built profile) has its rows at time 0. The "threadCPUDelta" column
 * (meta.sampleUnits: ns) gives each on-CPU row one sampling period of CPU
 * time and each row off CPU none, from which the profiler draws the CPU
 * graph and ranks threads by CPU use; an allocation profile's rows stand
 * for no CPU time and have no such column.
 *
 * Weights. In a CPU profile every row counts one sample (weightType
 * "samples", weight null). In off-CPU and wall-clock profiles every row
 * weighs the time it stands for (weightType "tracing-ms", weight in ms): an
 * on-CPU row one sampling period, a row off CPU its share of the sample's
 * time off CPU (the profile keeps each stack's total, not each interval's
 * length: the sample's rows split it evenly, to the nanosecond), so that
 * the call tree, flame graph and function list give shares of time, as
 * pprof's wall and offcpu values do, and a thread's total is its time.
 * In an allocation profile (PROFILE_ALLOC) a row is a sampled call and
 * weighs bytes (weightType "bytes", weight an integer): a sample's rows
 * split its bytes allocated evenly (the profile keeps each stack's total,
 * not each call's size), so the call tree's totals are bytes allocated, as
 * folded output and pprof's alloc_space give them, heap and anonymous mmap
 * alike, while the timeline shows when the calls were sampled; a sample
 * without times is one row, at its first allocation (alloc.first_ns).
 * profiler-cli reports those trees with weightType "bytes".
 *
 * Frames. Each line of a frame (its inline chain) is a frame of its own,
 * outermost first in the stack, the outermost at inlineDepth 0 and what was
 * inlined into it at 1, 2 ... (the profiler marks those "inlined"). A
 * frame's function has the function's name, its source file (fileName) when
 * known, and as its resource the module, a library by name (the profiler
 * shows "module!function"): the basename of the frame's mapping, or
 * "[kernel.kallsyms]" for a kernel frame without one; a frame without a
 * mapping has no resource. The source line goes in the frame table's "line"
 * column (null when unknown). Frames have no address ("address" -1, no
 * native symbol, no "libs"): the profile is symbolicated (meta.symbolicated).
 *
 * Categories (meta.categories; a frame's category colors the samples whose
 * leaf it is): 0 "User" yellow, 1 "Kernel" orange (kernel frames), 2 "JIT"
 * green (frames named from a perf map), 3 "Off-CPU" blue, 4 "Other" grey
 * (the synthetic frames below and the markers).
 *
 * Off-CPU intervals (sample->offcpu, in PROFILE_OFFCPU and PROFILE_WALL
 * profiles) get one row per interval, at the time the thread left the CPU,
 * whose stack is the blocked stack with a leaf frame "[off-CPU]" in the
 * Off-CPU category, and no CPU time. The stack chart draws each row until
 * the thread's next row, which comes once it runs again.
 *
 * What the profile may be missing shows in the profiler itself:
 * - a truncated stack (sample->truncated: outer frames may be missing) gets
 *   the root frame "[truncated]", above the frames that were read;
 * - a sample without frames gets the one frame "[unknown]";
 * - the first thread carries the profile's summary (profile__summary()) as
 *   interval markers spanning the profile (startTime 0, endTime
 *   profile->duration), a marker a line, named by the line: the same words
 *   and numbers as stderr and pprof's comments. A profile without samples
 *   gets one empty thread, "[no samples]" with pid and tid 0, to hold them.
 *
 * meta.platform and meta.oscpu name the machine (profile->host): "Linux" and
 * "Linux RELEASE MACHINE", as `uname -srm` prints them; the profiler shows
 * oscpu as the platform. meta.profilingStartTime and profilingEndTime (0 and
 * profile->duration) bound the timeline.
 *
 * Tables are per thread, as the format wants them at this version, and
 * built in the order in which a walk of the thread's samples (by thread
 * name, process name, then array order, which is profile__sort()'s order;
 * each stack from the root) first meets strings, resources, functions,
 * frames and stacks: after profile__sort(), the same samples always give
 * the same bytes. Strings are escaped as JSON requires; bytes that are not
 * valid UTF-8 become U+FFFD.
 *
 * firefox__write() does not modify @p and returns 0 or a negative errno
 * (-ENOMEM; -EOVERFLOW past 2^32 - 1 stacks, frames, functions or strings in
 * a thread; -EIO or the stdio errno when @out fails) and logs only
 * unexpected zlib failures. Gzipped output has a fixed header (no name, no
 * time) like the pprof writer's. @out is neither flushed nor closed: with a
 * buffered stream, a write error may only show at the caller's fflush() or
 * fclose(). On error, part of the output may have been written.
 * Thread-safe as long as @p is not being modified.
 */
#ifndef PROFILER_EXPORT_FIREFOX_H
#define PROFILER_EXPORT_FIREFOX_H

#include <stdbool.h>
#include <stdio.h>

struct profile;

/* Write @p in the Firefox Profiler's processed format (version 49); gzipped if @gzip. */
int firefox__write(const struct profile *p, FILE *out, bool gzip);

#endif
