/* SPDX-License-Identifier: GPL-2.0-only */
/* clock.h - a clock's time now, in nanoseconds. */
#ifndef PROFILER_CLOCK_H
#define PROFILER_CLOCK_H

#include <stdint.h>
#include <time.h>

/* @clock (CLOCK_MONOTONIC, as BPF times samples, or CLOCK_REALTIME) now, in ns. */
static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif
