/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * v8.h - the Node.js plug-in of the collector (runtime.h): JavaScript
 * functions named in node's stacks. See v8.c.
 */
#ifndef PROFILER_V8_H
#define PROFILER_V8_H

#include "runtime.h"

extern const struct runtime_ops v8_runtime;

#endif
