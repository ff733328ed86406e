/* SPDX-License-Identifier: GPL-2.0-only */
/* record.h - one profiling run, from options to a written file. */
#ifndef PROFILER_RECORD_H
#define PROFILER_RECORD_H

struct options;

/* Profile as @o says. Returns the process exit status: 0, or 1 on a runtime failure. */
int record(const struct options *o);

#endif
