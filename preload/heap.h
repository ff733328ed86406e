/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * heap.h - what the profiler and libprofiler-heap.so (preload/heap.c), the
 * allocation sampler it preloads into the commands it starts, agree on.
 */
#ifndef PROFILER_PRELOAD_HEAP_H
#define PROFILER_PRELOAD_HEAP_H

/* The library's file name, installed beside the profiler. */
#define HEAP_LIBRARY "libprofiler-heap.so"
/* Mean bytes between samples (1: every call), in the environment of the processes it runs in. */
#define HEAP_RATE_ENV "PROFILER_HEAP_RATE"
/* "0": the processes it runs in keep it from their children (--no-inherit). */
#define HEAP_CHILDREN_ENV "PROFILER_HEAP_CHILDREN"
/* Where the profiler's uprobes go: a sampled call returned, a sampled block is freed. */
#define HEAP_SAMPLED_FUNC "profiler_heap_sampled"
#define HEAP_FREED_FUNC "profiler_heap_freed"

#endif
