/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * targets.h - what -p, -t, --cgroup and -a name, checked and handed to the
 * collector: shared by a recording (record.c) and the agent (serve.c).
 */
#ifndef PROFILER_TARGETS_H
#define PROFILER_TARGETS_H

#include <sys/types.h>

#include "collector/collector.h"
#include "options.h"

/* The collector's options from the command line's (the caller adds its callbacks). */
void targets__collector_opts(const struct options *o, struct collector_opts *copts);

/*
 * Check what a user could have got wrong before anything starts: the -p
 * processes exist and are processes, the --cgroup is a cgroup v2
 * directory, the -t thread exists (its process into *@tid_process, else
 * 0). Says why on stderr; returns the exit status: 0 when all is well,
 * else 1 or 2.
 */
int targets__check(const struct options *o, pid_t *tid_process);

/* Add the -t thread's process (@tid_process) and the -p processes to @c. 0, or 1 said why. */
int targets__add(struct collector *c, const struct options *o, pid_t tid_process);

/*
 * Follow what the -p processes had started before sampling, as what they
 * fork from now on is followed (call it once sampling is attached): how
 * many processes, or -1 when descendants are not followed.
 */
int targets__add_descendants(struct collector *c, const struct options *o);

/* A profiler with many targets keeps one descriptor per mapped file open: raise the limit. */
void targets__raise_nofile_limit(void);

#endif
