/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * no_samples.h - why a recording got no samples, in one warning line.
 *
 * An empty profile is written all the same (exit 0): nothing failed, the
 * targets did nothing the profiler could see. The warning names the likely
 * cause from what the options asked for and what /proc says at the end:
 * the targets were idle, their work is in child processes (named), the
 * command exited at once, the cgroup is empty, or the samples were lost.
 */
#ifndef PROFILER_NO_SAMPLES_H
#define PROFILER_NO_SAMPLES_H

#include <stdbool.h>

struct options;
struct profile;

/*
 * Warn through pr_warn() if @p has neither samples nor intervals off CPU.
 * @command_exited: the command of -- COMMAND exited by itself (rather than
 * being stopped when profiling ended).
 */
void no_samples__warn(const struct options *o, const struct profile *p, bool command_exited);

#endif
