/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * golang.h - the Go plug-in of the collector (runtime.h): goroutines'
 * pprof labels on their samples. See golang.c.
 */
#ifndef PROFILER_GOLANG_H
#define PROFILER_GOLANG_H

#include "runtime.h"

extern const struct runtime_ops go_runtime;

#endif
