/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * options.h - the command line of `profiler`, parsed and checked.
 *
 * Parsing does no I/O beyond reading argv, so every usage error can be unit
 * tested; checks that need the system (does the pid exist, can the output be
 * written) happen in record() before profiling starts.
 */
#ifndef PROFILER_OPTIONS_H
#define PROFILER_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/profile.h"
#include "collector/collector.h"
#include "export/export.h"

#define DEFAULT_FREQ_HZ 99
#define DEFAULT_PPROF_OUTPUT "profile.pb.gz"
#define DEFAULT_OFFCPU_MIN_US 100
/* --wall sums intervals off CPU shorter than this by thread and stack. */
#define WALL_SUM_US 10000
/* Distinct stacks kept before new ones go to overflow buckets: bounds memory. */
#define DEFAULT_MAX_STACKS 200000
/* --alloc: bytes allocated per sample on average, as Go's runtime samples its heap. */
#define DEFAULT_ALLOC_RATE (512 * 1024)
/* profiler serve: where it listens unless --listen says otherwise (loopback only). */
#define DEFAULT_LISTEN "127.0.0.1:7071"
/* -o may be given this many times: one profile, written in several formats. */
#define MAX_OUTPUTS 8

struct output_spec {
	const char *path; /* a file, or "-" for stdout */
	enum export_format format;
};

struct options {
	int serve;		  /* `profiler serve`: the agent, not one recording */
	const char *listen;	  /* serve: HOST:PORT */
	int raw_kernel_addresses; /* serve: kernel addresses as they are, not offsets from _text */
	const char *token_file;	  /* serve: the bearer token requests must carry, or NULL */
	pid_t *pids;		  /* owned */
	size_t nr_pids;
	char **command;	    /* points into argv: COMMAND ARGS after "--", or NULL */
	pid_t tid;	    /* -t: one thread, or 0 */
	const char *cgroup; /* --cgroup: a cgroup v2 directory, or NULL */
	int system_wide;    /* -a */
	/* At least one after parsing, each path once, at most one "-". */
	struct output_spec outputs[MAX_OUTPUTS];
	size_t nr_outputs;
	struct export_opts export; /* --root-frame */
	uint32_t freq_hz;
	uint64_t duration_ns;	/* 0: until Ctrl-C or the targets exit */
	uint64_t ringbuf_bytes; /* 0: automatic */
	int no_inherit;		/* do not follow forked processes */
	int no_python;		/* leave CPython's frames out */
	int no_java;		/* never ask JVMs for their perf maps */
	int no_node;		/* leave V8's JavaScript frames unnamed: its machine code shows */
	int no_cache;		/* --no-cache: no cache of answers (symbolize/symcache.h) */
	int offcpu;		/* record time off CPU (set by --wall too) */
	int wall;		/* merge on- and off-CPU time into wall-clock time */
	uint64_t offcpu_min_ns; /* shorter intervals off CPU are not recorded */
	int no_idle;		/* -a: leave out the samples of idle CPUs */
	uint64_t max_stacks;	/* --max-stacks */
	int verbose;
	int help;
	int version; /* --version: print it, nothing else */
	/* --call-graph, and its dwarf=SIZE (0: the default). */
	enum call_graph call_graph;
	uint32_t stack_bytes;
	uint64_t unwind_table_bytes; /* --unwind-memory; 0: the default */
	uint32_t max_frames;	     /* --max-frames; 0: the default */
	uint64_t alloc_rate;	     /* --alloc: bytes per sample (1: every call); 0: off */
	uint64_t alloc_max_live;     /* --alloc-max-live; 0: the default */
	int alloc_uprobes;	     /* --alloc-uprobes: no sampler preloaded into a COMMAND */
};

/*
 * Parse @argv into @o: a recording's options, or those of `profiler serve`
 * when @argv[1] is "serve". Returns 0, or -EINVAL with a one-line reason in
 * @err (no trailing newline). @max_freq is the highest allowed -F (the
 * kernel's perf_event_max_sample_rate); 0 means no limit.
 */
int options__parse(struct options *o, int argc, char **argv, uint32_t max_freq, char *err,
		   size_t err_size);
void options__release(struct options *o);

extern const char options_usage[];
extern const char serve_usage[];

#endif
