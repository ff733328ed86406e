/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * alloc_preload.h - `profiler --alloc -- COMMAND` runs the command with its
 * own allocation sampler preloaded (preload/heap.c, libprofiler-heap.so:
 * an LD_PRELOAD entry and PROFILER_HEAP_RATE in its environment), so that
 * the command pays a uprobe per sample, not per call. Where the dynamic
 * linker would not preload it (a static program, a set-user-ID one) or the
 * library is not beside the profiler, the allocator is probed instead
 * (alloc.h), as for -p.
 */
#ifndef PROFILER_ALLOC_PRELOAD_H
#define PROFILER_ALLOC_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The sampler beside the running profiler (DIR/libprofiler-heap.so, or
 * DIR/../lib/profiler/libprofiler-heap.so once installed), into @path: 0,
 * or -ENOENT, or -EPERM for a file its owner (root or the profiler's) does
 * not keep others from writing.
 */
int alloc_preload__library(char *path, size_t size);

/*
 * Why the dynamic linker would not preload a library into @exe (or the
 * interpreter of a script): a static program, a set-user-ID or set-group-ID
 * one, one that cannot be read; NULL when it would.
 */
const char *alloc_preload__refused(const char *exe);

/*
 * The environment to run the command in: this process's, with @library
 * first in LD_PRELOAD and PROFILER_HEAP_RATE=@rate; unless @children, the
 * sampler removes itself from the environment its children get. NULL on
 * ENOMEM; free with alloc_preload__free_env().
 */
char **alloc_preload__env(const char *library, uint64_t rate, bool children);
void alloc_preload__free_env(char **env);

/*
 * Does process @pid, which just exec'd, run the sampler: its environment
 * asks for it and its program is one the linker preloads it into?
 */
bool alloc_preload__runs(pid_t pid, const char *library);

/*
 * The program that runs when @exe is exec'd: itself, or the interpreter
 * its "#!" line names (one level), into @buf.
 */
const char *alloc_exec_target(const char *exe, char *buf, size_t size);

#endif
