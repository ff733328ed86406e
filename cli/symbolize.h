/* SPDX-License-Identifier: GPL-2.0-only */
/* symbolize.h - `profiler symbolize`, the addr2line-compatible subcommand. */
#ifndef PROFILER_CLI_SYMBOLIZE_H
#define PROFILER_CLI_SYMBOLIZE_H

extern const char symbolize_usage[];

/* Run `profiler symbolize` with @argv[0] "symbolize"; returns the exit status. */
int symbolize_main(int argc, char **argv);

#endif
