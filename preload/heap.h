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

/*
 * The assembly of a function @name that does nothing, for a uprobe: it
 * begins with a push, which the kernel emulates at a uprobe (an instruction
 * stepped out of line, as the compiler's lone `ret` is, costs a second
 * trap). For a top-level __asm__ of .text.
 */
#define HEAP_PROBE_POINT(name)                                                                     \
	".globl " name "\n"                                                                        \
	".type " name ", @function\n" name ":\n"                                                   \
	".cfi_startproc\n"                                                                         \
	"push %rbp\n"                                                                              \
	".cfi_adjust_cfa_offset 8\n"                                                               \
	"pop %rbp\n"                                                                               \
	".cfi_adjust_cfa_offset -8\n"                                                              \
	"ret\n"                                                                                    \
	".cfi_endproc\n"                                                                           \
	".size " name ", . - " name "\n"

#endif
