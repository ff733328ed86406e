/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * map_guard.h - reading a target's files through mappings without dying of it.
 *
 * A file a profiled process maps belongs to that process's user, who can
 * truncate it while we read it: touching a page of our mapping past its new
 * end is then a SIGBUS, which would kill a recording, or the agent. libelf
 * maps the files it reads (ELF_C_READ_MMAP); reading them into memory of our
 * own instead costs their whole size (clang++'s libraries: a peak of 343 MiB
 * against 106 MiB), and reading them section by section costs each section
 * whole where a lookup touches a few pages.
 *
 * So the mappings of target files are registered here, and a SIGBUS inside
 * one of them gets a page of zeros mapped in place of the lost one: the read
 * goes on and reads zeros, which the parsers take as they take any corrupt
 * file (they bound what they read), and the fault is counted, for one warning.
 * A SIGBUS anywhere else is not ours to paper over: it kills the process as
 * it would have.
 *
 * The registry is a fixed table read by the signal handler without locks:
 * any thread may fault, one thread (the one that owns the files) adds and
 * removes.
 */
#ifndef PROFILER_MAP_GUARD_H
#define PROFILER_MAP_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* Mappings guarded at once; past this, one is read unguarded (and said with -vv). */
#define MAP_GUARD_MAX 16384

/*
 * Guard [@base, @base + @size), installing the handler the first time. 0,
 * -ENOSPC when the table is full, or -errno from sigaction().
 */
int map_guard__add(const void *base, size_t size);

/* Stop guarding the mapping at @base (before it is unmapped). */
void map_guard__remove(const void *base);

/* Pages replaced with zeros so far: files cut short while they were read. */
uint64_t map_guard__faults(void);

#endif
