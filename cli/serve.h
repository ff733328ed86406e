/* SPDX-License-Identifier: GPL-2.0-only */
/* serve.h - `profiler serve`: the agent that continuous-profiling backends scrape. */
#ifndef PROFILER_SERVE_H
#define PROFILER_SERVE_H

struct options;

/*
 * Sample as @o says and answer scrapes over HTTP until SIGTERM or SIGINT
 * (or, with -p, until every target exited). Returns the process exit
 * status: 0, or 1 on a runtime failure.
 */
int serve(const struct options *o);

#endif
