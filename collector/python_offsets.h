/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python_offsets.h - where each supported CPython release keeps what the
 * profiler reads of it: thread states, frames, code objects, strings.
 *
 * The offsets come from each release's own headers (its internal ones
 * included), compiled for x86-64: tools/python-offsets.c prints them.
 * Running interpreters of each release check them: the code object's and
 * strings' in tests/unit/test_python_code.c, which reads live code objects
 * and compares them with what Python says they hold; the way from
 * _PyRuntime to each thread's frames in tests/e2e/python.sh, whose stacks
 * are known. Only release builds: a debug build
 * (python3.11d) lays objects out differently and is not supported.
 */
#ifndef PROFILER_PYTHON_OFFSETS_H
#define PROFILER_PYTHON_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/profile.h"

/* The offsets of CPython @major.@minor, or NULL when it is not supported. */
const struct python_offsets *python_offsets__find(unsigned int major, unsigned int minor);

/*
 * The CPython release a file holds the interpreter of, from its name:
 * "python3.11" and "libpython3.11.so.1.0" are 3.11, "libpython3.6m.so" 3.6.
 * A debug build's name ("python3.11d") is not one. True and sets *@major, *@minor when @path's
 * basename is such a name.
 */
bool python_version_from_path(const char *path, unsigned int *major, unsigned int *minor);

#endif
