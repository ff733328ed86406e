// SPDX-License-Identifier: GPL-2.0-only
/*
 * profiler serve: one sampling session for as long as the agent runs, and
 * a window of it for each scrape.
 *
 * A scrape (scrape.h) reaches this thread, the one that drains the ring
 * buffer, after the drain that follows it: a profile scrape then gets a
 * window of its own, a stack table the collector counts the samples of
 * the next N seconds in (collector__attach()), so scrapes that overlap
 * each see every sample of their span and nothing of another's. Once a
 * window's span is over and drained, it is symbolized and exported, into
 * memory, by this thread too (the collector, its ELF files and the
 * symbolizer are not thread-safe), and every trace of it is freed.
 *
 * Memory follows the windows open and the processes alive, not the time
 * the agent has run: each window has its own profile, strings and
 * symbolizer, freed with it; what is worth keeping from one window to the
 * next, the kernel's symbols and each file's symbols and DWARF indexes
 * (module_set), is lent to every window's symbolizer; and every
 * FORGET_INTERVAL_NS the collector forgets the processes that exited, and
 * the files, modules and tables that only they used.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cache_dir.h"
#include "collector/collector.h"
#include "common/bpf_progs.h"
#include "common/clock.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/procfs.h"
#include "common/profile.h"
#include "common/strset.h"
#include "elf/elf_cache.h"
#include "export/export.h"
#include "options.h"
#include "privileges.h"
#include "serve.h"
#include "serve/http.h"
#include "serve/metrics.h"
#include "serve/scrape.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perf_map.h"
#include "symbolize/stacks.h"
#include "symbolize/symbolizer.h"
#include "targets.h"

/* Scrapes waiting, being recorded or symbolized at once; more are answered 503. */
#define MAX_OPEN_SCRAPES 8
/*
 * A window is symbolized at the first drain this long after its end: its
 * last samples were sent by then (the reader polls every 10 ms).
 */
#define WINDOW_GRACE_NS (50ULL * 1000 * 1000)
/* How often the processes that exited are forgotten. */
#define FORGET_INTERVAL_NS (10ULL * 1000 * 1000 * 1000)
/* How often the metrics are kept for a /metrics that cannot wait (scrape.h). */
#define KEEP_METRICS_INTERVAL_NS (1000ULL * 1000 * 1000)

/* A profile scrape being recorded. */
struct window {
	struct collector_window w; /* w.strings are @p's */
	struct profile *p;
	struct scrape *scrape;
	uint64_t begin_real;	   /* CLOCK_REALTIME at w.begin_ns */
	struct profile_stats base; /* the collector's counters when it began */
	struct window *next;
};

struct agent {
	const struct options *o;
	struct collector *c;
	struct strset *strings; /* the collector's own: file names */
	struct scrape_queue queue;
	struct http_server *http;
	struct window *windows; /* being recorded, oldest first */
	uint64_t next_forget_ns;
	uint64_t next_keep_metrics_ns;
	uint64_t start_real;
	/* Over every window symbolized: addresses looked up, and distinct frames that took. */
	uint64_t lookups, frames;
	/* The kernel's symbols, for every window's symbolizer; read again when a module comes or goes. */
	struct kallsyms *kallsyms;
	uint64_t modules_hash;
	/*
	 * The files' symbols and DWARF indexes, for every window's symbolizer:
	 * each read once while a live process maps the file (reading them
	 * again for each window took half the agent's CPU).
	 */
	struct module_set *modules;
	/* The perf maps of JITs, read again only when their file changes (a 255 MB one took 11 s). */
	struct perf_map_cache *perf_maps;
	char *cache_dir; /* where unwind tables are kept between runs; NULL: nowhere */
};

static struct collector *volatile sampling;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	struct collector *c = sampling;

	stop_signal = sig;
	if (c)
		collector__stop(c);
}

/* Start recording profile scrape @s from @now: 0, or -ENOMEM. */
static int window_begin(struct agent *a, struct scrape *s, uint64_t now)
{
	struct window *win = calloc(1, sizeof(*win)), **tail;

	if (!win)
		return -ENOMEM;
	win->p = profile__new(a->o->freq_hz);
	if (!win->p) {
		free(win);
		return -ENOMEM;
	}
	win->scrape = s;
	win->w.strings = win->p->strings;
	win->w.begin_ns = now;
	win->w.end_ns = now + s->seconds * 1000000000ULL;
	win->begin_real = clock_ns(CLOCK_REALTIME);
	collector__stats(a->c, &win->base);
	if (collector__attach(a->c, &win->w)) {
		profile__free(win->p);
		free(win);
		return -ENOMEM;
	}
	for (tail = &a->windows; *tail; tail = &(*tail)->next)
		;
	*tail = win;
	return 0;
}

/*
 * The window's counts into its profile's stats: what its stacks hold, and
 * what the collector lost or truncated meanwhile.
 */
static void window_stats(struct agent *a, struct window *win)
{
	const struct stack_table *t = &win->w.stacks;
	struct profile_stats *st = &win->p->stats, now;
	const struct stack_entry *e;
	size_t i;

	collector__stats(a->c, &now);
	stack_table__for_each_entry(t, i, e) {
		if (e->offcpu) {
			st->offcpu_intervals += e->nr_intervals;
			st->offcpu_ns += e->weight_ns;
			continue;
		}
		st->samples += e->count;
		if (!e->tid)
			st->idle_samples += e->count;
	}
	st->lost_samples = now.lost_samples - win->base.lost_samples + t->dropped;
	st->lost_offcpu = now.lost_offcpu - win->base.lost_offcpu;
	st->offcpu_short = now.offcpu_short - win->base.offcpu_short;
	st->offcpu_short_ns = now.offcpu_short_ns - win->base.offcpu_short_ns;
	st->truncated = now.truncated - win->base.truncated;
	st->stack_errors = now.stack_errors - win->base.stack_errors;
	st->maps_unreadable = stack_table__unmapped_pids(t);
}

static const char *content_type(enum export_format format)
{
	switch (format) {
	case EXPORT_FOLDED:
		return "text/plain; charset=utf-8";
	case EXPORT_SVG:
		return "image/svg+xml";
	case EXPORT_FIREFOX:
		return "application/json";
	default:
		return "application/octet-stream";
	}
}

/*
 * The kernel's symbols, as of now: read once and again only when
 * /proc/modules changed, where a window's own symbolizer would read all of
 * /proc/kallsyms (some 200,000 lines: 29% of the agent's CPU time under
 * bench/serve-soak, measured). When they cannot be read, an empty table:
 * kernel frames are [unknown], said once.
 */
static const struct kallsyms *agent_kallsyms(struct agent *a)
{
	size_t len = 0;
	char *modules = procfs__read_file("/proc/modules", &len);
	uint64_t hash = modules ? hash_bytes(modules, len) : 0;
	struct kallsyms *ks;

	free(modules);
	if (a->kallsyms && hash == a->modules_hash)
		return a->kallsyms;
	ks = kallsyms__load(NULL);
	if (!ks && a->kallsyms)
		return a->kallsyms; /* the last that could be read, then */
	if (!ks) {
		pr_warn("cannot read kernel symbols from /proc/kallsyms: %s; kernel frames are "
			"[unknown]",
			strerror(errno));
		ks = kallsyms__parse("");
	} else if (kallsyms__addresses_hidden(ks) && !a->kallsyms) {
		pr_warn("no kernel symbols: /proc/kallsyms hides their addresses "
			"(kernel.kptr_restrict); kernel frames are [unknown]");
	}
	kallsyms__free(a->kallsyms);
	a->kallsyms = ks;
	a->modules_hash = hash;
	return ks;
}

/* Symbolize @win's stacks into its profile and write it, in its scrape's format, into @s. */
static int window_export(struct agent *a, struct window *win, struct scrape *s)
{
	/* The name only decides what export__write() compresses: pprof only, as its readers expect. */
	static const char *const names[] = {
		[EXPORT_PPROF] = "profile.pb.gz",
		[EXPORT_FOLDED] = "profile.folded",
		[EXPORT_FIREFOX] = "profile.json",
		[EXPORT_SVG] = "profile.svg",
		/* Refused by export__write(): an agent's profiles are not of allocations. */
		[EXPORT_DHAT] = "profile.dhat.json",
	};
	struct symbolizer_opts symopts = { .elf_cache = collector__elf_cache(a->c) };
	struct stacks_opts stack_opts = { .start_mono = win->w.begin_ns };
	struct profile *p = win->p;
	struct pseudo_frame overflow;
	struct symbolizer_stats st;
	struct symbolizer *sym;
	const struct stack_entry *e;
	FILE *out;
	size_t i;
	int err;

	p->mode = a->o->offcpu ? PROFILE_OFFCPU : PROFILE_CPU;
	/* Any local client may scrape: where the kernel is stays unsaid (KASLR, kptr_restrict). */
	p->kernel_offsets = !a->o->raw_kernel_addresses;
	p->start_time = win->begin_real;
	p->duration = win->w.end_ns - win->w.begin_ns;
	window_stats(a, win);
	err = pseudo_frame__init(&overflow, p->strings, OVERFLOW_FRAME_NAME);
	if (err)
		return err;
	stack_opts.overflow = &overflow;
	/* The agent acts for nobody else: perf maps are trusted from root and its own user. */
	symopts.trusted_uid = getuid();
	symopts.kallsyms = agent_kallsyms(a);
	symopts.modules = a->modules;
	symopts.perf_maps = a->perf_maps;
	symopts.py_frames = collector__py_frames(a->c);
	symopts.bpf_progs = collector__bpf_progs(a->c);
	sym = symbolizer__new(p->strings, &symopts);
	if (!sym)
		return -ENOMEM;
	err = stacks__symbolize(p, sym, &win->w.stacks, &stack_opts);
	if (!err) {
		symbolizer__stats(sym, &st);
		memcpy(p->stats.frames, st.sources, sizeof(p->stats.frames));
		p->stats.dwarf_units_lost = st.dwarf.lost;
		a->frames += st.frames;
		stack_table__for_each_entry(&win->w.stacks, i, e)
			a->lookups += e->nr_kernel + e->nr_user;
		out = open_memstream(&s->body, &s->len);
		if (!out)
			err = -errno;
	}
	if (!err) {
		err = export__write(s->format, p, out, names[s->format], &a->o->export);
		if (fclose(out) && !err)
			err = -errno;
		if (err) {
			free(s->body);
			s->body = NULL;
		}
	}
	symbolizer__free(sym);
	/* Its maps are no longer borrowed: those no window asked for go. */
	perf_map_cache__sweep(a->perf_maps);
	return err;
}

/* Stop recording @win, answer its scrape with its profile, and free it. */
static void window_finish(struct agent *a, struct window *win)
{
	struct scrape *s = win->scrape;
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	int err;

	collector__detach(a->c, &win->w);
	err = window_export(a, win, s);
	pr_info("scrape of %u s: %zu stacks, %llu samples, symbolized and written in %llu ms",
		s->seconds, win->w.stacks.nr_stacks, (unsigned long long)win->p->stats.samples,
		(unsigned long long)((clock_ns(CLOCK_MONOTONIC) - start) / 1000000));
	if (err) {
		pr_warn("cannot answer a scrape: %s", strerror(-err));
		scrape__answer_text(s, 500, "cannot write the profile: %s", strerror(-err));
	} else {
		s->status = 200;
		s->content_type = content_type(s->format);
	}
	scrape_queue__answer(&a->queue, s);
	stack_table__release(&win->w.stacks);
	profile__free(win->p);
	free(win);
}

/* Stop recording @win and free it unexported: answer its scrape with @status and @why. */
static void window_drop(struct agent *a, struct window *win, unsigned int status, const char *why)
{
	collector__detach(a->c, &win->w);
	scrape__answer_text(win->scrape, status, "%s", why);
	scrape_queue__answer(&a->queue, win->scrape);
	stack_table__release(&win->w.stacks);
	profile__free(win->p);
	free(win);
}

/*
 * Every BPF program loaded, ours included: its runs and run time since it
 * was loaded, by its id and its name (its first function's), counted while
 * kernel.bpf_stats_enabled is 1.
 */
static void write_bpf_program_metrics(struct agent *a, FILE *out)
{
	static const char *const family[2] = { "profiler_bpf_program_runs_total",
					       "profiler_bpf_program_run_seconds_total" };
	static const char *const help[2] = {
		"Runs of each BPF program loaded, since it was loaded (with "
		"kernel.bpf_stats_enabled).",
		"Time in each BPF program loaded, since it was loaded (with "
		"kernel.bpf_stats_enabled)."
	};
	struct bpf_prog_cost *progs = NULL;
	size_t nr = 0;

	if (!collector__count_bpf_progs(a->c))
		progs = bpf_progs__loaded(collector__bpf_progs(a->c), &nr);
	for (int f = 0; f < 2; f++) {
		metrics__family(out, family[f], "counter", help[f]);
		for (size_t i = 0; i < nr; i++) {
			char id[16];

			snprintf(id, sizeof(id), "%u", progs[i].id);
			metrics__sample2(out, family[f], "id", id, "name", progs[i].name,
					 f ? progs[i].run_ns / 1e9 : (double)progs[i].runs);
		}
	}
	free(progs);
}

/* The BPF programs' runs and run time, counted while kernel.bpf_stats_enabled is 1. */
static void write_bpf_metrics(struct agent *a, FILE *out)
{
	static const char *const program[2] = { "sample", "sched_switch" };
	uint64_t run_ns[2] = { 0 }, runs[2] = { 0 };
	bool loaded[2];

	for (int i = 0; i < 2; i++)
		loaded[i] = !collector__bpf_stats(a->c, i, &run_ns[i], &runs[i]);
	metrics__family(out, "profiler_bpf_runs_total", "counter",
			"Runs of the agent's BPF programs (with kernel.bpf_stats_enabled).");
	for (int i = 0; i < 2; i++)
		if (loaded[i])
			metrics__sample(out, "profiler_bpf_runs_total", "program", program[i],
					runs[i]);
	metrics__family(out, "profiler_bpf_run_seconds_total", "counter",
			"Time in the agent's BPF programs (with kernel.bpf_stats_enabled).");
	for (int i = 0; i < 2; i++)
		if (loaded[i])
			metrics__sample(out, "profiler_bpf_run_seconds_total", "program",
					program[i], run_ns[i] / 1e9);
	metrics__family(out, "profiler_bpf_seconds_per_run", "gauge",
			"Mean time of a run of each BPF program, since the agent started.");
	for (int i = 0; i < 2; i++)
		if (loaded[i] && runs[i])
			metrics__sample(out, "profiler_bpf_seconds_per_run", "program", program[i],
					run_ns[i] / 1e9 / runs[i]);
	write_bpf_program_metrics(a, out);
	metrics__one(out, "profiler_bpf_programs", "gauge",
		     "BPF programs whose code the agent names: those loaded, and those unloaded "
		     "that a profile under way may hold.",
		     collector__bpf_progs(a->c) ? bpf_progs__nr(collector__bpf_progs(a->c)) : 0);
	metrics__one(out, "profiler_samples_not_taken_total", "counter",
		     "Samples the kernel did not hand the agent's BPF program: the CPU was "
		     "running another BPF program.",
		     collector__samples_not_taken(a->c));
}

static void write_metrics(struct agent *a, FILE *out)
{
	uint64_t responses[NR_HTTP_STATUSES], stacks = 0, windows = 0;
	struct elf_cache_stats es;
	struct profile_stats st;
	struct rusage ru;
	char *statm;
	long resident;

	collector__stats(a->c, &st);
	for (struct window *w = a->windows; w; w = w->next, windows++)
		stacks += w->w.stacks.nr_stacks;
	metrics__one(out, "profiler_samples_total", "counter",
		     "On-CPU samples received since the agent started.", st.samples);
	metrics__one(out, "profiler_offcpu_intervals_total", "counter",
		     "Intervals off CPU received (--off-cpu).", st.offcpu_intervals);
	metrics__one(out, "profiler_lost_samples_total", "counter",
		     "On-CPU samples lost: the ring buffer was full.", st.lost_samples);
	metrics__one(out, "profiler_lost_offcpu_intervals_total", "counter",
		     "Intervals off CPU lost: no room to keep or send them.", st.lost_offcpu);
	metrics__one(out, "profiler_truncated_stacks_total", "counter",
		     "Samples whose stack was cut short.", st.truncated);
	metrics__one(out, "profiler_distinct_stacks", "gauge",
		     "Distinct stacks in the windows being recorded.", stacks);
	metrics__one(out, "profiler_windows_active", "gauge", "Profile scrapes being recorded.",
		     windows);
	metrics__one(out, "profiler_targets", "gauge",
		     "Processes the agent keeps state for: sampled or followed, and alive.",
		     collector__nr_processes(a->c));
	elf_cache__stats(collector__elf_cache(a->c), &es);
	metrics__one(out, "profiler_symbolizer_files", "gauge",
		     "ELF files read and kept for unwinding and symbolization.", es.held);
	metrics__one(out, "profiler_symbolizer_modules", "gauge",
		     "Files whose symbols and DWARF indexes are kept between profiles.",
		     module_set__count(a->modules));
	metrics__one(out, "profiler_symbolizer_lookups_total", "counter",
		     "Addresses symbolized, over every profile served.", a->lookups);
	metrics__one(
		out, "profiler_symbolizer_hits_total", "counter",
		"Addresses symbolized that were a frame resolved already for the same profile.",
		a->lookups - a->frames);
	metrics__one(out, "profiler_bpf_stats_enabled", "gauge",
		     "1 when kernel.bpf_stats_enabled is set: the BPF run counters count.",
		     procfs__read_long("/proc/sys/kernel/bpf_stats_enabled", 0) > 0);
	write_bpf_metrics(a, out);
	getrusage(RUSAGE_SELF, &ru);
	metrics__one(out, "process_cpu_seconds_total", "counter",
		     "User and system CPU time of the agent, in seconds.",
		     ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	statm = procfs__read_file("/proc/self/statm", NULL);
	if (!statm || sscanf(statm, "%*d %ld", &resident) != 1)
		resident = 0;
	free(statm);
	metrics__one(out, "process_resident_memory_bytes", "gauge",
		     "Resident memory of the agent, in bytes.",
		     (double)resident * sysconf(_SC_PAGESIZE));
	metrics__one(out, "process_start_time_seconds", "gauge",
		     "When the agent started, in seconds since the epoch.", a->start_real / 1e9);
	metrics__one(out, "profiler_http_connections_closed_total", "counter",
		     "Connections the agent closed: slow to send a request, or the one waiting "
		     "longest when a limit was reached.",
		     http_server__closed(a->http));
	http_server__responses(a->http, responses);
	metrics__family(out, "profiler_http_requests_total", "counter",
			"HTTP requests answered, by status code.");
	for (int i = 0; i < NR_HTTP_STATUSES; i++)
		metrics__sample(out, "profiler_http_requests_total", "code", http_status_names[i],
				responses[i]);
}

static void answer_metrics(struct agent *a, struct scrape *s)
{
	FILE *out = open_memstream(&s->body, &s->len);

	if (!out) {
		scrape__answer_text(s, 500, "cannot write the metrics: %s", strerror(errno));
		return;
	}
	write_metrics(a, out);
	if (fclose(out)) {
		free(s->body);
		s->body = NULL;
		scrape__answer_text(s, 500, "cannot write the metrics: %s", strerror(errno));
		return;
	}
	s->status = 200;
	s->content_type = METRICS_CONTENT_TYPE;
	scrape_queue__keep_metrics(&a->queue, s);
}

/* module_keep_fn: a module stays while the ELF cache holds its file, mapped by a live process. */
static bool module_in_use(const struct elf_file *elf, void *elves)
{
	return elf_cache__holds(elves, elf);
}

/* After each drain: take new scrapes, answer those whose window is over, forget the exited. */
static void agent_tick(void *ctx)
{
	struct agent *a = ctx;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	struct window **pw = &a->windows;
	struct scrape *s, *next;
	bool finished = false;

	for (s = scrape_queue__take(&a->queue); s; s = next) {
		next = s->next;
		if (s->kind == SCRAPE_METRICS) {
			answer_metrics(a, s);
		} else if (!window_begin(a, s, now)) {
			continue;
		} else {
			pr_warn("cannot record a profile: out of memory");
			scrape__answer_text(s, 500, "cannot record a profile: out of memory");
		}
		scrape_queue__answer(&a->queue, s);
	}
	while (*pw) {
		struct window *win = *pw;

		/* Its client left: its slot is free for another. */
		if (scrape_queue__abandoned(&a->queue, win->scrape)) {
			*pw = win->next;
			pr_debug("scrape of %u s: its client left, dropped", win->scrape->seconds);
			window_drop(a, win, 499, "the client left");
			continue;
		}
		if (now < win->w.end_ns + WINDOW_GRACE_NS) {
			pw = &win->next;
			continue;
		}
		*pw = win->next;
		window_finish(a, win);
		finished = true;
	}
	/* What a /metrics gets while this thread is busy symbolizing. */
	if (now >= a->next_keep_metrics_ns) {
		struct scrape kept = { .kind = SCRAPE_METRICS };

		answer_metrics(a, &kept);
		free(kept.body);
		a->next_keep_metrics_ns = now + KEEP_METRICS_INTERVAL_NS;
	}
	if (now >= a->next_forget_ns) {
		uint64_t oldest = now;

		/* A program unloaded before every window began holds none of their samples. */
		for (struct window *w = a->windows; w; w = w->next)
			if (w->w.begin_ns < oldest)
				oldest = w->w.begin_ns;
		collector__forget_bpf_progs(a->c, oldest);
		collector__forget_exited(a->c);
		module_set__retain(a->modules, module_in_use, collector__elf_cache(a->c));
		a->next_forget_ns = now + FORGET_INTERVAL_NS;
		finished = true;
	}
	/*
	 * A window's symbolization allocates tens of MB and frees all of it
	 * (3.2 million allocations for six 5 s windows under valgrind), and
	 * malloc keeps what it freed: over 150 s of scrapes its heap grew to 61
	 * MB of which 8-12 were in use (mallinfo2). Give the free pages back.
	 */
	if (finished)
		malloc_trim(0);
}

/* Sampling ended: scrapes not answered yet get a 503. */
static void agent_stop(struct agent *a)
{
	struct scrape *s, *next;

	scrape_queue__stop(&a->queue);
	for (s = scrape_queue__take(&a->queue); s; s = next) {
		next = s->next;
		scrape__answer_text(s, 503, "the profiler is stopping");
		scrape_queue__answer(&a->queue, s);
	}
	while (a->windows) {
		struct window *win = a->windows;

		a->windows = win->next;
		window_drop(a, win, 503, "the profiler is stopping");
	}
}

static void install_signals(void)
{
	static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaction(stop_signals[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int serve(const struct options *o)
{
	struct agent a = { .o = o, .start_real = clock_ns(CLOCK_REALTIME) };
	struct privilege_needs needs = { 0 };
	struct collector_opts copts;
	bool queue_ready = false;
	char why[256], *token = NULL;
	pid_t tid_process;
	int err, ret;

	ret = targets__check(o, &tid_process);
	if (ret)
		return ret;
	/* A token that cannot be read is a bad argument, said before anything starts. */
	if (o->token_file && http_read_token(o->token_file, &token, why, sizeof(why))) {
		pr_warn("%s", why);
		return 2;
	}
	ret = 1;
	targets__collector_opts(o, &copts);
	copts.windows = true;
	copts.on_drain = agent_tick;
	copts.on_drain_ctx = &a;
	targets__raise_nofile_limit();
	install_signals();

	err = scrape_queue__init(&a.queue, MAX_OPEN_SCRAPES);
	if (err) {
		pr_warn("cannot start: %s", strerror(-err));
		free(token);
		return 1;
	}
	queue_ready = true;
	a.strings = strset__new();
	a.modules = module_set__new();
	a.perf_maps = perf_map_cache__new();
	if (!a.strings || !a.modules || !a.perf_maps) {
		pr_warn("cannot start: %s", strerror(errno));
		goto out;
	}
	/* The unwind tables only: answers are kept in memory (module_set). */
	if (!o->no_cache)
		copts.cache_dir = a.cache_dir = cache_dir__default();
	a.c = collector__new(&copts, a.strings);
	if (!a.c || targets__add(a.c, o, tid_process))
		goto out;
	/* Listen before sampling starts: a port in use is said before anything is attached. */
	a.http = http_server__start(o->listen, token, &a.queue, why, sizeof(why));
	if (!a.http) {
		pr_warn("%s", why);
		goto out;
	}
	sampling = a.c;
	err = collector__start(a.c);
	if (err)
		goto out;
	targets__add_descendants(a.c, o);
	fprintf(stderr,
		"profiler: serving on http://%s/debug/pprof/ (%s at %u Hz), SIGTERM to stop\n",
		http_server__address(a.http),
		o->system_wide ? "every process" :
		o->cgroup      ? "a cgroup" :
				 "the -p processes",
		o->freq_hz);
	err = privileges__drop(&needs);
	if (err)
		pr_warn("cannot drop the capabilities sampling no longer needs: %s",
			strerror(-err));
	err = collector__run(a.c);
	sampling = NULL;
	if (err)
		goto out;
	if (stop_signal)
		fprintf(stderr, "profiler: stopped by SIG%s\n", sigabbrev_np(stop_signal));
	else
		fprintf(stderr, "profiler: stopped: every -p process has exited\n");
	ret = 0;
out:
	sampling = NULL;
	agent_stop(&a);
	http_server__stop(a.http);
	module_set__free(a.modules);
	perf_map_cache__free(a.perf_maps);
	collector__free(a.c);
	free(a.cache_dir);
	kallsyms__free(a.kallsyms);
	strset__free(a.strings);
	if (queue_ready)
		scrape_queue__release(&a.queue);
	free(token);
	return ret;
}
