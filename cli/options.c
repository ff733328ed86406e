// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "serve/http.h"

/* One line of help per line of source. */
/* clang-format off */
const char options_usage[] =
"Usage: profiler [OPTIONS] -p PID[,PID...]\n"
"       profiler [OPTIONS] -- COMMAND [ARGS...]\n"
"       profiler [OPTIONS] -a | -t TID | --cgroup PATH\n"
"       profiler symbolize [-e FILE] [-afiCs] [ADDR...]   (see symbolize --help)\n"
"       profiler serve [--listen HOST:PORT] [OPTIONS]    (see serve --help)\n"
"\n"
"Sample the user and kernel call stacks of running processes, of a command it\n"
"starts, or of the whole machine, with a BPF program on a CPU clock (or, with\n"
"--alloc, on their allocator), and write a symbolized profile: functions,\n"
"source lines and inlined calls, from the files' symbols, DWARF and debug\n"
"files, JIT perf maps and kallsyms.\n"
"\n"
"Targets:\n"
"  -p, --pid PID[,PID...]  these processes (all their threads) and their\n"
"                          descendants: those running when profiling starts\n"
"                          (the start line counts them) and those forked later\n"
"  -- COMMAND [ARGS...]    start COMMAND and profile it (and what it forks)\n"
"                          until it exits\n"
"  -a, --all               every process on the machine, and idle CPUs as the\n"
"                          process 'swapper' (as perf shows them)\n"
"  -t, --tid TID           one thread\n"
"      --cgroup PATH       the processes of a cgroup v2 directory\n"
"      --no-inherit        only the -p processes or COMMAND, not their\n"
"                          descendants\n"
"      --no-idle           with -a, leave out the samples of idle CPUs\n"
"\n"
"What to record:\n"
"  -F, --freq HZ           samples per second per CPU (default 99)\n"
"  -d, --duration SEC      stop after SEC seconds (default: Ctrl-C, or when\n"
"                          every target has exited)\n"
"      --off-cpu           also time spent blocked off CPU, with the stack\n"
"                          that blocked\n"
"      --wall              on- and off-CPU time (blocked or waiting for a CPU)\n"
"                          merged: each thread adds up to its wall-clock time;\n"
"                          intervals under 10 ms are summed by thread and stack\n"
"      --off-cpu-min USEC  ignore shorter times off CPU (default 100; with\n"
"                          --wall 0: every interval counts)\n"
"      --ringbuf-size BYTES ring buffer size (default: half a second of the\n"
"                          records -F, the CPUs and --off-cpu/--wall produce)\n"
"      --call-graph MODE   how user stacks are unwound (see CALL GRAPHS below):\n"
"                          cfi (the default), fp, or dwarf[=SIZE]\n"
"      --unwind-memory MB  kernel memory for cfi's unwind tables (default 32,\n"
"                          4M rows; the tables in use are shown with -v)\n"
"      --max-frames N      user frames unwound per stack with cfi or dwarf\n"
"                          (default and most 1024; fp: the kernel's 127)\n"
"      --max-stacks N      distinct stacks kept (default 200000); past it, new\n"
"                          stacks count as [stack table full] (bounds memory)\n"
"      --no-python         show CPython's C functions, not the Python functions\n"
"                          they run (CPython 3.10-3.13 are read by default)\n"
"      --no-node           show V8's builtins and machine code, not the\n"
"                          JavaScript functions they run (node 18-22 are read)\n"
"      --no-java           never ask HotSpot JVMs for their perf maps (by\n"
"                          default each is asked through its attach socket,\n"
"                          which sends it SIGQUIT the first time)\n"
"      --alloc[=BYTES]     sample allocations instead of the CPU (see HEAP\n"
"                          PROFILES below): one per BYTES allocated on average\n"
"                          (default 512K; K, M and G suffixes); --alloc=1\n"
"                          records every one. -p or a COMMAND only\n"
"      --alloc-max-live N  sampled blocks watched for their free at once\n"
"                          (default 262144); past it, blocks count as live\n"
"      --alloc-uprobes     probe a COMMAND's allocator, as -p does, instead\n"
"                          of preloading the profiler's sampler into it\n"
"\n"
"Output:\n"
"  -o, --output FILE       write the profile to FILE; '-' is stdout. The format\n"
"                          follows the extension (.pb.gz/.pb: pprof,\n"
"                          .folded/.txt: folded, .json/.json.gz: Firefox\n"
"                          Profiler, .svg: flame graph, .dhat.json: DHAT, of\n"
"                          an allocation profile) unless -f is given.\n"
"                          Give -o several times for several formats of one\n"
"                          profile. Default: profile.pb.gz, or stdout for -f\n"
"                          folded\n"
"  -f, --format FMT        pprof | folded | firefox | svg | dhat\n"
"      --root-frame WHAT   what folded stacks and the flame graph start with:\n"
"                          comm (the process name, the default), cmdline (its\n"
"                          command line), labels (the samples' Go pprof\n"
"                          labels, else the process name) or none (every\n"
"                          process merged)\n"
"      --no-cache          neither read nor write the cache of answers and\n"
"                          unwind tables kept per build-id, in\n"
"                          $XDG_CACHE_HOME/profiler (else /var/cache/profiler\n"
"                          for root, ~/.cache/profiler for others)\n"
"  -v, --verbose           more messages; twice for debug output; three times\n"
"                          for libbpf's too\n"
"  -h, --help              show this help\n"
"  -V, --version           show the version and exit\n"
"\n"
"Call graphs: cfi (default) unwinds user stacks in the BPF program from tables\n"
"built from each mapped file's .eh_frame (else .debug_frame): whole stacks\n"
"through code with or without frame pointers, on and off CPU, and records of\n"
"addresses only (a few hundred bytes). Code without unwind information (a JIT)\n"
"is walked by its frame pointers. A process's first samples, before its\n"
"tables are loaded, copy up to 64 KiB of stack that is unwound in user space.\n"
"fp walks frame pointers only, as the kernel does: the cheapest, but code\n"
"built without them (most distribution packages) loses callers. dwarf[=SIZE]\n"
"copies the top SIZE bytes (default 8192) of the stack of every on-CPU sample\n"
"and unwinds them in user space, as perf record --call-graph dwarf does: many\n"
"times the ring-buffer traffic, and not for --off-cpu or --wall.\n"
"\n"
"pprof sample types: samples/count and cpu/nanoseconds; with --off-cpu also\n"
"offcpu/nanoseconds; with --wall samples/count and wall/nanoseconds. Folded\n"
"counts are samples; with --off-cpu microseconds blocked; with --wall\n"
"microseconds of wall-clock time; with --alloc bytes allocated.\n"
"\n"
"Heap profiles: --alloc samples allocations by bytes, each sample scaled to\n"
"the bytes and blocks it stands for, as Go and tcmalloc do. A COMMAND runs\n"
"with the profiler's sampler preloaded (LD_PRELOAD=libprofiler-heap.so),\n"
"which counts bytes in the process and traps only for a sample; -p puts\n"
"uprobes on each target's allocator (the malloc family and free of the\n"
"program, a library it loads, or the C library), which trap at every call\n"
"(-v says what a call costs). Anonymous mmap and munmap are blocks of their\n"
"own kind. pprof gets Go's heap types alloc_objects, alloc_space,\n"
"inuse_objects and inuse_space (live at the end); -f dhat writes DHAT's JSON\n"
"for valgrind's dh_view.html, with the peak and the blocks' lifetimes.\n"
"\n"
"While sampling, a status line on a terminal's stderr (not beside a COMMAND)\n"
"shows the time, the samples so far and those lost. A profile with no samples\n"
"is still written, with a warning naming the likely cause.\n"
"\n"
"Needs root, or CAP_BPF and CAP_PERFMON (and CAP_SYS_ADMIN for --alloc's\n"
"uprobes), and Linux 5.17 or later with BTF (/sys/kernel/btf/vmlinux); cfi\n"
"and dwarf unwind x86-64 stacks (elsewhere, fp).\n"
"Exit status: 0 success (an empty profile included), 1 runtime failure (no\n"
"privilege, a cgroup v1 directory, ...), 2 usage error (a --cgroup path that\n"
"is no cgroup, ...), 128+N killed by signal N before the profile was written.\n"
"\n"
"Examples:\n"
"  profiler -p 1234 -d 10 -o out.pb.gz     # 10 s of pid 1234, for go tool pprof\n"
"  go tool pprof -http=:8080 out.pb.gz      # browse it\n"
"  profiler -F 499 -f folded -- ./myprog | flamegraph.pl > flame.svg\n"
"  profiler -p 1234,1240 -o app.folded     # two processes, Ctrl-C to stop\n"
"  profiler --wall -d 5 -p 1234 -o wall.pb.gz  # where the time goes, asleep or not\n"
"  profiler -a -d 5 -o all.pb.gz           # the whole machine for 5 s\n"
"  profiler -p $(pgrep -o postgres) -d 10 --root-frame cmdline -o pg.svg\n"
"                                          # a server and its backends\n"
"  profiler --call-graph fp -a -F 999 -o fp.pb.gz   # the cheapest stacks\n";

const char serve_usage[] =
"Usage: profiler serve [--listen HOST:PORT] [-a | -p PID[,PID...] | --cgroup PATH]\n"
"                      [-F HZ] [--off-cpu] [--call-graph MODE] [--max-stacks N]\n"
"                      [--token-file FILE]\n"
"\n"
"Profile continuously and serve the profiles over HTTP as Go's net/http/pprof\n"
"does, for Parca, Grafana Pyroscope (Alloy) or go tool pprof to pull:\n"
"\n"
"  GET /debug/pprof/profile?seconds=N   the next N seconds (default 30, 1 to\n"
"                         300) as gzipped pprof; &format=folded, svg or\n"
"                         firefox for another format\n"
"  GET /debug/pprof/      an index of the endpoints\n"
"  GET /metrics           the agent's counters, in Prometheus's text format\n"
"\n"
"Every scrape is recorded from the one sampling session, each over its own\n"
"window: several at once (up to 8) do not disturb each other. Samples carry\n"
"the labels pid, tid, comm, thread, cmdline and cgroup.\n"
"\n"
"      --listen HOST:PORT  where to listen (default " DEFAULT_LISTEN "; port 0:\n"
"                          any free one). Profiles show code, addresses and\n"
"                          command lines: an address that is not loopback\n"
"                          must be given here, and belongs behind a firewall\n"
"      --raw-kernel-addresses  kernel frames at their addresses: by default a\n"
"                          served profile holds their offsets from _text\n"
"                          (the names are the same), so that a client learns\n"
"                          nothing of where the kernel is (KASLR)\n"
"      --token-file FILE   answer only requests that carry the token on FILE's\n"
"                          first line as 'Authorization: Bearer TOKEN', as\n"
"                          Parca's and Alloy's bearer_token_file send it;\n"
"                          others get 401. FILE should be readable by root only\n"
"\n"
"Targets, as for a recording: -a (the default), -p PID[,PID...] (serving ends\n"
"when they have all exited), --cgroup PATH, --no-inherit, --no-idle.\n"
"What to record, as for a recording: -F, --off-cpu, --off-cpu-min,\n"
"--call-graph, --unwind-memory, --max-frames, --max-stacks, --ringbuf-size,\n"
"--no-python, --no-node, --no-java, --root-frame (for folded and svg). -v, --verbose;\n"
"-h, --help.\n"
"\n"
"SIGTERM or SIGINT stops it: a scrape being recorded gets a 503.\n"
"Needs root, or CAP_BPF and CAP_PERFMON.\n"
"Exit status: 0 stopped by a signal or every -p target exited, 1 runtime\n"
"failure (the address is in use, no privilege, ...), 2 usage error.\n"
"\n"
"Examples:\n"
"  profiler serve                          # the whole machine, on 127.0.0.1:7071\n"
"  go tool pprof -top 'http://127.0.0.1:7071/debug/pprof/profile?seconds=10'\n"
"  curl -s 'http://127.0.0.1:7071/debug/pprof/profile?seconds=5&format=folded'\n";
/* clang-format on */

enum {
	OPT_RINGBUF_SIZE = 256,
	OPT_CGROUP,
	OPT_NO_INHERIT,
	OPT_NO_PYTHON,
	OPT_NO_JAVA,
	OPT_NO_NODE,
	OPT_NO_CACHE,
	OPT_OFFCPU,
	OPT_WALL,
	OPT_OFFCPU_MIN,
	OPT_NO_IDLE,
	OPT_RAW_KERNEL_ADDRESSES,
	OPT_TOKEN_FILE,
	OPT_CALL_GRAPH,
	OPT_MAX_STACKS,
	OPT_UNWIND_MEMORY,
	OPT_MAX_FRAMES,
	OPT_ROOT_FRAME,
	OPT_LISTEN,
	OPT_ALLOC,
	OPT_ALLOC_MAX_LIVE,
	OPT_ALLOC_UPROBES,
};

static const struct option long_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF_SIZE },
	{ "all", no_argument, NULL, 'a' },
	{ "tid", required_argument, NULL, 't' },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "no-python", no_argument, NULL, OPT_NO_PYTHON },
	{ "no-java", no_argument, NULL, OPT_NO_JAVA },
	{ "no-node", no_argument, NULL, OPT_NO_NODE },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "off-cpu", no_argument, NULL, OPT_OFFCPU },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "off-cpu-min", required_argument, NULL, OPT_OFFCPU_MIN },
	{ "no-idle", no_argument, NULL, OPT_NO_IDLE },
	{ "raw-kernel-addresses", no_argument, NULL, OPT_RAW_KERNEL_ADDRESSES },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },
	{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
	{ "root-frame", required_argument, NULL, OPT_ROOT_FRAME },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "alloc", optional_argument, NULL, OPT_ALLOC },
	{ "alloc-max-live", required_argument, NULL, OPT_ALLOC_MAX_LIVE },
	{ "alloc-uprobes", no_argument, NULL, OPT_ALLOC_UPROBES },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

static int fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A whole decimal number in [min, max]. */
static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* A number of bytes, with an optional K, M or G (binary) suffix, in [@min, @max]. */
static bool parse_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	static const char suffixes[] = "KMG";
	char digits[32], *suffix;
	size_t len = strlen(s);
	uint64_t v;

	if (!len || len >= sizeof(digits))
		return false;
	memcpy(digits, s, len + 1);
	suffix = strchr(suffixes, s[len - 1]);
	if (suffix && *suffix)
		digits[len - 1] = '\0';
	if (!parse_u64(digits, 0, UINT64_MAX, &v))
		return false;
	for (int shift = suffix && *suffix ? 10 * (int)(suffix - suffixes + 1) : 0; shift;
	     shift -= 10) {
		if (v > UINT64_MAX >> 10)
			return false;
		v <<= 10;
	}
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

static int parse_pids(struct options *o, const char *arg, char *err, size_t size)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return fail(err, size, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t pid;
		pid_t *pids;

		if (!parse_u64(tok, 1, 0x3fffffff, &pid)) {
			ret = fail(err, size, "invalid pid '%s': expected a positive number", tok);
			break;
		}
		pids = realloc(o->pids, (o->nr_pids + 1) * sizeof(*pids));
		if (!pids) {
			ret = fail(err, size, "out of memory");
			break;
		}
		o->pids = pids;
		o->pids[o->nr_pids++] = pid;
	}
	if (!ret && !o->nr_pids)
		ret = fail(err, size, "invalid pid list '%s'", arg);
	free(copy);
	return ret;
}

static int parse_duration(const char *arg, uint64_t *ns)
{
	char *end;
	double sec;

	errno = 0;
	sec = strtod(arg, &end);
	if (errno || end == arg || *end || !(sec > 0) || sec > 1e9)
		return -EINVAL;
	*ns = (uint64_t)(sec * 1e9);
	return *ns ? 0 : -EINVAL;
}

/* --call-graph cfi | fp | dwarf[=SIZE], the last two as perf record spells them. */
static int parse_call_graph(struct options *o, const char *arg, char *err, size_t size)
{
	uint64_t bytes;

	if (!strcmp(arg, "cfi")) {
		o->call_graph = CALL_GRAPH_CFI;
		return 0;
	}
	if (!strcmp(arg, "fp")) {
		o->call_graph = CALL_GRAPH_FP;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != '='))
		return fail(err, size, "invalid --call-graph '%s': use cfi, fp or dwarf[=SIZE]",
			    arg);
#if !defined(__x86_64__)
	/* The registers a copy is unwound from are x86-64's: elsewhere it would record none. */
	return fail(err, size, "--call-graph dwarf is x86-64 only: use --call-graph fp here");
#endif
	o->call_graph = CALL_GRAPH_DWARF;
	if (!arg[5])
		return 0;
	if (!parse_u64(arg + 6, 64, PROFILE_MAX_STACK_COPY, &bytes))
		return fail(err, size,
			    "invalid --call-graph stack size '%s': expected 64 to %d bytes",
			    arg + 6, PROFILE_MAX_STACK_COPY);
	o->stack_bytes = bytes;
	return 0;
}

/* --root-frame comm | cmdline | labels | none. */
static int parse_root_frame(struct options *o, const char *arg, char *err, size_t size)
{
	if (!strcmp(arg, "comm"))
		o->export.root = PROFILE_ROOT_COMM;
	else if (!strcmp(arg, "cmdline"))
		o->export.root = PROFILE_ROOT_CMDLINE;
	else if (!strcmp(arg, "labels"))
		o->export.root = PROFILE_ROOT_LABELS;
	else if (!strcmp(arg, "none"))
		o->export.root = PROFILE_ROOT_NONE;
	else
		return fail(err, size,
			    "invalid --root-frame '%s': use comm, cmdline, labels or none", arg);
	return 0;
}

static int add_output(struct options *o, const char *path, char *err, size_t size)
{
	if (!*path)
		return fail(err, size, "empty output path");
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (!strcmp(o->outputs[i].path, path))
			return fail(err, size, "-o '%s' given twice", path);
	if (o->nr_outputs == MAX_OUTPUTS)
		return fail(err, size, "too many -o: at most %d outputs", MAX_OUTPUTS);
	o->outputs[o->nr_outputs++].path = path;
	return 0;
}

/*
 * Each output's format: from -f, or from its extension. Without -o, pprof
 * goes to DEFAULT_PPROF_OUTPUT and folded to stdout; stdout without -f is
 * folded, for a pipe. -f names one format, so it takes one output.
 */
static int output_formats(struct options *o, const char *name, char *err, size_t size)
{
	enum export_format format = EXPORT_NONE;

	if (name) {
		format = export_format__from_name(name);
		if (format == EXPORT_NONE)
			return fail(err, size, "unknown format '%s': use one of %s", name,
				    export_format__names());
		if (o->nr_outputs > 1)
			return fail(
				err, size,
				"-f with several -o: name each output's format by its extension");
	}
	if (!o->nr_outputs) {
		o->outputs[0].path = format == EXPORT_NONE || format == EXPORT_PPROF ?
					     DEFAULT_PPROF_OUTPUT :
					     "-";
		o->nr_outputs = 1;
	}
	for (size_t i = 0; i < o->nr_outputs; i++) {
		struct output_spec *out = &o->outputs[i];

		if (format != EXPORT_NONE)
			out->format = format;
		else if (!strcmp(out->path, "-"))
			out->format = EXPORT_FOLDED;
		else
			out->format = export_format__from_path(out->path);
		if (out->format == EXPORT_NONE)
			return fail(
				err, size,
				"cannot tell the format of '%s' from its extension: use -f with "
				"one of %s",
				out->path, export_format__names());
	}
	return 0;
}

/*
 * What profiler serve refuses: each scrape says where its profile goes, how
 * long and in which format, and the agent outlives any one command.
 */
static int serve_checks(struct options *o, const char *format, char *err, size_t size)
{
	int kinds = !!o->nr_pids + o->system_wide + !!o->cgroup;

	if (o->command)
		return fail(err, size,
			    "profiler serve runs until stopped and takes no command: start the "
			    "command, then give its pid with -p");
	if (o->nr_outputs || format)
		return fail(err, size,
			    "profiler serve writes no file: each scrape asks for its format "
			    "(?format=pprof|folded|svg|firefox)");
	if (o->duration_ns)
		return fail(err, size,
			    "profiler serve has no -d: each scrape asks for its length "
			    "(?seconds=N), and SIGTERM stops the agent");
	if (o->tid)
		return fail(err, size, "profiler serve takes -a, -p or --cgroup, not -t");
	if (o->wall)
		return fail(err, size,
			    "profiler serve does not do --wall yet: use --off-cpu, whose profiles "
			    "keep time on and off CPU apart");
	if (kinds > 1)
		return fail(err, size, "-p, -a and --cgroup cannot be combined: choose one target");
	/* The whole machine unless told otherwise, as an agent is run. */
	if (!kinds)
		o->system_wide = 1;
	return 0;
}

int options__parse(struct options *o, int argc, char **argv, uint32_t max_freq, char *err,
		   size_t size)
{
	const char *format = NULL;
	char host[256], port[8];
	bool offcpu_min_given = false, freq_given = false;
	uint64_t v;
	int c, kinds;

	memset(o, 0, sizeof(*o));
	if (argc > 1 && !strcmp(argv[1], "serve")) {
		o->serve = 1;
		o->listen = DEFAULT_LISTEN;
		argc--;
		argv++;
	}
	o->freq_hz = DEFAULT_FREQ_HZ;
	o->offcpu_min_ns = DEFAULT_OFFCPU_MIN_US * 1000;
	o->max_stacks = DEFAULT_MAX_STACKS;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:o:f:F:d:at:vhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pids(o, optarg, err, size))
				return -EINVAL;
			break;
		case 'o':
			if (add_output(o, optarg, err, size))
				return -EINVAL;
			break;
		case 'f':
			format = optarg;
			break;
		case 'F':
			freq_given = true;
			if (!parse_u64(optarg, 1, UINT32_MAX, &v))
				return fail(err, size,
					    "invalid frequency '%s': expected 1 Hz or more",
					    optarg);
			if (max_freq && v > max_freq)
				return fail(
					err, size,
					"frequency %s Hz is above kernel.perf_event_max_sample_rate"
					" (%u): lower -F or raise the sysctl",
					optarg, max_freq);
			o->freq_hz = v;
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration_ns))
				return fail(err, size,
					    "invalid duration '%s': expected seconds above 0",
					    optarg);
			break;
		case OPT_RINGBUF_SIZE:
			if (!parse_u64(optarg, 4096, 1ULL << 31, &o->ringbuf_bytes))
				return fail(
					err, size,
					"invalid ring buffer size '%s': expected 4096 to 2147483648 "
					"bytes",
					optarg);
			break;
		case 'a':
			o->system_wide = 1;
			break;
		case 't':
			if (!parse_u64(optarg, 1, 0x3fffffff, &v))
				return fail(err, size,
					    "invalid thread id '%s': expected a positive number",
					    optarg);
			o->tid = v;
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case OPT_NO_PYTHON:
			o->no_python = 1;
			break;
		case OPT_NO_CACHE:
			o->no_cache = 1;
			break;
		case OPT_NO_JAVA:
			o->no_java = 1;
			break;
		case OPT_NO_NODE:
			o->no_node = 1;
			break;
		case OPT_NO_INHERIT:
			o->no_inherit = 1;
			break;
		case OPT_NO_IDLE:
			o->no_idle = 1;
			break;
		case OPT_OFFCPU:
			o->offcpu = 1;
			break;
		case OPT_WALL:
			o->wall = o->offcpu = 1;
			break;
		case OPT_OFFCPU_MIN:
			if (!parse_u64(optarg, 0, UINT64_MAX / 1000, &v))
				return fail(err, size,
					    "invalid --off-cpu-min '%s': expected microseconds",
					    optarg);
			o->offcpu_min_ns = v * 1000;
			offcpu_min_given = true;
			break;
		case OPT_MAX_STACKS:
			if (!parse_u64(optarg, 1, 1ULL << 32, &o->max_stacks))
				return fail(err, size,
					    "invalid --max-stacks '%s': expected 1 to 4294967296",
					    optarg);
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(o, optarg, err, size))
				return -EINVAL;
			break;
		case OPT_ROOT_FRAME:
			if (parse_root_frame(o, optarg, err, size))
				return -EINVAL;
			break;
		case OPT_UNWIND_MEMORY:
			if (!parse_u64(optarg, 1, 4096, &v))
				return fail(err, size,
					    "invalid --unwind-memory '%s': expected 1 to 4096 MB",
					    optarg);
			o->unwind_table_bytes = v << 20;
			break;
		case OPT_MAX_FRAMES:
			if (!parse_u64(optarg, 1, PROFILE_MAX_USER_STACK, &v))
				return fail(err, size,
					    "invalid --max-frames '%s': expected 1 to %d", optarg,
					    PROFILE_MAX_USER_STACK);
			o->max_frames = v;
			break;
		case OPT_RAW_KERNEL_ADDRESSES:
			if (!o->serve)
				return fail(
					err, size,
					"--raw-kernel-addresses is an option of profiler serve");
			o->raw_kernel_addresses = 1;
			break;
		case OPT_TOKEN_FILE:
			if (!o->serve)
				return fail(err, size,
					    "--token-file is an option of profiler serve");
			o->token_file = optarg;
			break;
		case OPT_LISTEN:
			if (!o->serve)
				return fail(err, size, "--listen is an option of profiler serve");
			if (http_split_address(optarg, host, sizeof(host), port, sizeof(port)))
				return fail(
					err, size,
					"invalid --listen '%s': expected HOST:PORT, as "
					"127.0.0.1:7071, [::1]:7071 or 0.0.0.0:7071 (every address)",
					optarg);
			o->listen = optarg;
			break;
		case OPT_ALLOC:
			o->alloc_rate = DEFAULT_ALLOC_RATE;
			if (optarg && !parse_bytes(optarg, 1, 1ULL << 40, &o->alloc_rate))
				return fail(err, size,
					    "invalid --alloc '%s': expected bytes between samples, "
					    "1 (every allocation) or more, as 524288 or 512K",
					    optarg);
			break;
		case OPT_ALLOC_UPROBES:
			o->alloc_uprobes = 1;
			break;
		case OPT_ALLOC_MAX_LIVE:
			if (!parse_u64(optarg, 1, 1ULL << 26, &o->alloc_max_live))
				return fail(err, size,
					    "invalid --alloc-max-live '%s': expected 1 to 67108864 "
					    "blocks",
					    optarg);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			o->help = 1;
			return 0;
		case 'V':
			o->version = 1;
			return 0;
		case ':':
			return fail(err, size, "option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return fail(err, size, "unknown option '-%c'", optopt);
			return fail(err, size, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		/* getopt stops at "--" or at the first non-option with "+". */
		if (strcmp(argv[optind - 1], "--"))
			return fail(err, size, "unexpected argument '%s': put a command after '--'",
				    argv[optind]);
		o->command = &argv[optind];
	}
	/* Wall-clock time is all of it: no interval is too short, unless the user says so. */
	if (o->wall && !offcpu_min_given)
		o->offcpu_min_ns = 0;
	if (o->call_graph == CALL_GRAPH_DWARF && o->offcpu)
		return fail(err, size,
			    "--call-graph dwarf copies the stacks of on-CPU samples only: use the "
			    "default --call-graph cfi with %s",
			    o->wall ? "--wall" : "--off-cpu");
	if (o->alloc_max_live && !o->alloc_rate)
		return fail(err, size, "--alloc-max-live is an option of --alloc");
	if (o->alloc_uprobes && !o->alloc_rate)
		return fail(err, size, "--alloc-uprobes is an option of --alloc");
	if (o->alloc_rate && o->serve)
		return fail(err, size,
			    "profiler serve does not do --alloc: record a heap profile with "
			    "profiler --alloc -p PID");
	if (o->alloc_rate && (o->offcpu || freq_given))
		return fail(err, size,
			    "--alloc samples allocations, not time: it cannot be combined with "
			    "%s",
			    freq_given ? "-F" :
			    o->wall    ? "--wall" :
					 "--off-cpu");
	if (o->serve)
		return serve_checks(o, format, err, size);
	if (o->alloc_rate && (o->system_wide || o->tid || o->cgroup))
		return fail(err, size,
			    "--alloc probes the allocator of given processes: use -p PID or "
			    "-- COMMAND, not %s",
			    o->system_wide ? "-a" :
			    o->tid	   ? "-t" :
					     "--cgroup");
	kinds = !!o->nr_pids + !!o->command + o->system_wide + !!o->tid + !!o->cgroup;
	if (kinds > 1)
		return fail(
			err, size,
			"-p, -a, -t, --cgroup and a command cannot be combined: choose one target");
	if (!kinds)
		return fail(err, size,
			    "nothing to profile: give -p PID, -- COMMAND, -a, -t or --cgroup");

	if (output_formats(o, format, err, size))
		return -EINVAL;
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (o->outputs[i].format == EXPORT_DHAT && !o->alloc_rate)
			return fail(err, size,
				    "DHAT's format (%s) holds allocations: add --alloc, or choose "
				    "another format",
				    strcmp(o->outputs[i].path, "-") ? o->outputs[i].path :
								      "standard output");
	return 0;
}

void options__release(struct options *o)
{
	free(o->pids);
	o->pids = NULL;
	o->nr_pids = 0;
}
