// SPDX-License-Identifier: GPL-2.0-only
/*
 * One profiling run: check everything a user could have got wrong, start
 * the command if there is one, sample until told to stop, symbolize every
 * distinct stack, and write the profile atomically.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "bpf/profile.h"
#include "cache_dir.h"
#include "child.h"
#include "collector/alloc.h"
#include "collector/alloc_preload.h"
#include "preload/heap.h"
#include "collector/collector.h"
#include "common/bpf_progs.h"
#include "common/stack_table.h"
#include "common/strset.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/output.h"
#include "common/procfs.h"
#include "common/profile.h"
#include "elf/map_guard.h"
#include "export/export.h"
#include "no_samples.h"
#include "options.h"
#include "privileges.h"
#include "record.h"
#include "status_line.h"
#include "targets.h"
#include "symbolize/stacks.h"
#include "symbolize/symbolizer.h"
#include "version.h"

/*
 * SIGINT, SIGTERM and SIGHUP while sampling end the sampling, and the
 * profile is written as if the duration had run out. Any other time,
 * before sampling starts or while the profile is symbolized and written,
 * they abort the run: temporary files are removed, nothing is written,
 * and the profiler ends by that signal (exit status 128 + its number in a
 * shell), so a second Ctrl-C stops a long symbolization. Once the outputs
 * are being renamed into place the profile is as good as written, and a
 * signal no longer changes the outcome.
 */
static struct collector *volatile sampling;
static volatile sig_atomic_t abort_signal;
static volatile sig_atomic_t committed;
/* What the run was doing, for the message if a signal aborts it. */
static const char *phase = "starting";

static void on_signal(int sig)
{
	struct collector *c = sampling;

	if (c)
		collector__stop(c);
	else if (!committed && !abort_signal)
		abort_signal = sig;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NR_STOP_SIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))
/* As we found them, for the command: a script's background job ignores SIGINT. */
static struct sigaction saved_actions[NR_STOP_SIGNALS];

/* In the child: not the profiler's signal handlers, Ctrl-C must stop the command. */
static void restore_signals(void)
{
	for (size_t i = 0; i < NR_STOP_SIGNALS; i++)
		sigaction(stop_signals[i], &saved_actions[i], NULL);
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NR_STOP_SIGNALS; i++)
		sigaction(stop_signals[i], &sa, &saved_actions[i]);
}

/* Say what the signal interrupted, then end by it, as an interrupted program should. */
static void die_of_signal(int sig)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t set;

	fprintf(stderr, "profiler: stopped by SIG%s while %s: no profile written\n",
		sigabbrev_np(sig), phase);
	fflush(stderr);
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* How the start line says samples are taken: "at 99 Hz", "for allocations, every one". */
static const char *how_sampled(const struct options *o, char *buf, size_t size)
{
	if (o->alloc_rate == 1)
		snprintf(buf, size, "for allocations, every one");
	else if (o->alloc_rate)
		snprintf(buf, size, "for allocations, one sample per %llu bytes",
			 (unsigned long long)o->alloc_rate);
	else
		snprintf(buf, size, "at %u Hz", o->freq_hz);
	return buf;
}

/*
 * "profiler: profiling pid 1234 (nginx) and its 4 descendants at 99 Hz,
 * Ctrl-C to stop". @descendants < 0: they are not followed.
 */
static void print_targets(const struct options *o, int descendants)
{
	char buf[96];

	fputs("profiler: profiling", stderr);
	if (o->system_wide)
		fputs(" every process", stderr);
	else if (o->cgroup)
		fprintf(stderr, " cgroup %s", o->cgroup);
	else if (o->tid)
		fprintf(stderr, " thread %d", o->tid);
	for (size_t i = 0; i < o->nr_pids; i++) {
		char path[64], comm[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", o->pids[i]);
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		/* The process names itself (prctl(PR_SET_NAME)): any bytes, shown escaped. */
		fprintf(stderr, "%s pid %d (", i ? "," : "", o->pids[i]);
		log_write_escaped(stderr, *comm ? comm : "?");
		fputc(')', stderr);
	}
	if (descendants >= 0)
		fprintf(stderr, " and %s %d descendant%s", o->nr_pids > 1 ? "their" : "its",
			descendants, descendants == 1 ? "" : "s");
	fprintf(stderr, " %s%s\n", how_sampled(o, buf, sizeof(buf)),
		o->duration_ns ? "" : ", Ctrl-C to stop");
}

/* -v: what the recording cost the profiler itself, its commands not included. */
static void print_own_cost(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return;
	pr_info("own cost: %.2f s of CPU (%.2f s user, %.2f s system), %.1f MiB peak resident",
		ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss / 1024.0);
}

/* The profile's summary (profile__summary()), a line per group, then what was written. */
static void print_summary(const struct profile *p, const struct options *o)
{
	struct profile_summary sum;
	size_t n = 0;

	profile__summary(p, &sum);
	while (n < sum.nr) {
		enum profile_summary_group group = sum.lines[n].group;

		fprintf(stderr, "profiler: %s", sum.lines[n++].text);
		for (; n < sum.nr && sum.lines[n].group == group; n++)
			fprintf(stderr, "; %s", sum.lines[n].text);
		fputc('\n', stderr);
	}
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (strcmp(o->outputs[i].path, "-"))
			fprintf(stderr, "profiler: wrote %s (%s)\n", o->outputs[i].path,
				export_format__name(o->outputs[i].format));
}

/* Why @path cannot be written (@err, from output.h), in one line. */
/* The BPF programs that ran longest during the recording, for the summary. 0 or -ENOMEM. */
static int bpf_costs(struct profile *p, const struct bpf_progs *progs)
{
	struct bpf_prog_cost cost[PROFILE_MAX_BPF_PROGS];
	size_t n = progs ? bpf_progs__costliest(progs, cost, PROFILE_MAX_BPF_PROGS) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *name = strset__add(p->strings, cost[i].name);

		if (!name)
			return -ENOMEM;
		p->bpf_progs[i] =
			(struct profile_bpf_prog){ name, cost[i].id, cost[i].runs, cost[i].run_ns };
	}
	p->nr_bpf_progs = n;
	return 0;
}

static void warn_output(const char *path, int err)
{
	if (err == -ELOOP)
		pr_warn("cannot write '%s': a symbolic link another user owns in a shared "
			"directory (not followed)",
			path);
	else if (err == -EINVAL)
		pr_warn("cannot write '%s': not a regular file (a FIFO, a device or a socket): "
			"write a file, or '-' for stdout",
			path);
	else if (err == -ENXIO)
		pr_warn("cannot write '%s': a FIFO that nobody reads", path);
	else
		pr_warn("cannot write '%s': %s", path, strerror(-err));
}

/*
 * Write every output from the one profile: each to its temporary file
 * first, all of them flushed and closed (where a full disk shows), and
 * only then renamed into place, so a failure leaves every destination as
 * it was. Only a rename itself failing midway leaves some renamed.
 */
static int write_outputs(const struct profile *p, const struct options *o, unsigned int flags)
{
	struct output_file out[MAX_OUTPUTS];
	size_t opened = 0, i;
	sigset_t stop, old;
	int err = 0;

	for (; opened < o->nr_outputs && !err && !abort_signal; opened++) {
		const struct output_spec *spec = &o->outputs[opened];

		err = output_file__open(&out[opened], spec->path, flags);
		if (err) {
			warn_output(spec->path, err);
			break;
		}
		err = export__write(spec->format, p, out[opened].fp, spec->path, &o->export);
		if (!err)
			err = output_file__close(&out[opened]);
		if (err == -EPIPE && !strcmp(spec->path, "-"))
			pr_warn("cannot write the profile to stdout: its reader exited");
		else if (err)
			pr_warn("cannot write '%s': %s", spec->path, strerror(-err));
	}
	/* The last moment a signal aborts the run: from here on it is ignored. */
	sigemptyset(&stop);
	for (i = 0; i < NR_STOP_SIGNALS; i++)
		sigaddset(&stop, stop_signals[i]);
	sigprocmask(SIG_BLOCK, &stop, &old);
	if (!err && abort_signal)
		err = -EINTR;
	committed = !err;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (err) {
		for (i = 0; i < opened; i++)
			output_file__abort(&out[i]);
		return err;
	}
	err = output_file__commit_all(out, opened, &i);
	if (err)
		pr_warn("cannot write '%s': %s", o->outputs[i].path, strerror(-err));
	return err;
}

/* What the outputs' checks and writing run with under sudo, in a child that is the user. */
struct output_job {
	const struct profile *p; /* NULL: check the paths only */
	const struct options *o;
};

static int check_outputs(const struct options *o, unsigned int flags)
{
	for (size_t i = 0; i < o->nr_outputs; i++) {
		int err = output_file__check(o->outputs[i].path, flags);

		if (err) {
			warn_output(o->outputs[i].path, err);
			return err;
		}
	}
	return 0;
}

/* invoker__run(): the outputs of a `sudo profiler`, as the user who ran it. */
static int output_job__run(void *arg)
{
	struct output_job *job = arg;

	if (!job->p)
		return check_outputs(job->o, OUTPUT_REGULAR_ONLY);
	return write_outputs(job->p, job->o, OUTPUT_REGULAR_ONLY);
}

/*
 * Check the outputs (@p NULL) or write them. Under sudo (@owner) the user
 * who ran it does that, in a child: a file is created as she would create
 * it and replaces only what she could replace, so -o gives her nothing
 * root's; a FIFO or a device at the path is refused. 0 or -errno, said.
 */
static int outputs(const struct profile *p, const struct options *o, const struct invoker *owner)
{
	struct output_job job = { .p = p, .o = o };
	int err;

	if (!owner)
		return p ? write_outputs(p, o, 0) : check_outputs(o, 0);
	err = invoker__run(owner, output_job__run, &job);
	if (!err && p)
		committed = 1;
	if (err == -EINTR && !abort_signal)
		pr_warn("cannot write the profile: the process writing it as uid %u was killed",
			owner->uid);
	return err;
}

/* The status line is redrawn at most this often while sampling. */
#define STATUS_INTERVAL_NS (250ULL * 1000 * 1000)

struct progress_line {
	struct collector *c;
	uint64_t duration_ns; /* -d, or 0 */
	bool offcpu;
	uint64_t next_ns; /* CLOCK_MONOTONIC of the next redraw; 0 before the first */
};

/*
 * "profiler: 2.3 s of 10, 229 samples, 0 lost, 41 intervals off CPU", in
 * place (status_line.h). The first one comes a whole interval after sampling
 * started, so a short run shows none.
 */
static void show_status(void *ctx)
{
	struct progress_line *s = ctx;
	uint64_t start = collector__start_mono(s->c), now, lost;
	struct profile_stats st = { 0 };
	char of[32] = "";

	now = clock_ns(CLOCK_MONOTONIC);
	if (!s->next_ns)
		s->next_ns = start + STATUS_INTERVAL_NS;
	if (now < s->next_ns)
		return;
	s->next_ns = now + STATUS_INTERVAL_NS;
	/*
	 * The summary's own counts. They take a walk over the stacks (1 ms for
	 * 30,000 of them, measured here): four times a second, on a terminal only.
	 */
	collector__stats(s->c, &st);
	lost = st.lost_samples + st.lost_offcpu + collector__stacks(s->c)->dropped;
	if (s->duration_ns)
		snprintf(of, sizeof(of), " of %g", s->duration_ns / 1e9);
	if (s->offcpu)
		status_line__show(
			"profiler: %.1f s%s, %llu samples, %llu lost, %llu intervals off CPU",
			(now - start) / 1e9, of, (unsigned long long)st.samples,
			(unsigned long long)lost, (unsigned long long)st.offcpu_intervals);
	else
		status_line__show("profiler: %.1f s%s, %llu samples, %llu lost",
				  (now - start) / 1e9, of, (unsigned long long)st.samples,
				  (unsigned long long)lost);
}

/* stacks_opts.thread_cpu: what the collector measured. */
static bool thread_cpu(void *arg, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	return collector__thread_cpu_ns(arg, pid, tid, ns);
}

/*
 * --alloc -- COMMAND: the command's environment with the sampler preloaded
 * (alloc_preload.h) into *@env, its library in @lib (@size bytes); or NULL,
 * with why not in @why (@why_size bytes), which the collector says once it
 * has probed the command's allocator instead. 0 or -ENOMEM.
 */
static int preload_env(const struct options *o, const char *command, char *lib, size_t size,
		       char ***env, char *why, size_t why_size)
{
	const char *refused;
	int err;

	*env = NULL;
	if (o->alloc_uprobes)
		return 0;
	err = alloc_preload__library(lib, size);
	if (err) {
		snprintf(why, why_size,
			 "no %s beside the profiler that only its owner can change (%s)",
			 HEAP_LIBRARY, strerror(-err));
		return 0;
	}
	refused = alloc_preload__refused(command);
	if (refused) {
		snprintf(why, why_size, "'%s' is %s", command, refused);
		return 0;
	}
	*env = alloc_preload__env(lib, o->alloc_rate, !o->no_inherit);
	if (!*env)
		return -ENOMEM;
	pr_info("alloc: the command runs with %s preloaded", lib);
	return 0;
}

/*
 * -v with --alloc, where an allocator was probed: what a call cost the
 * target. A hit is a trap (timed on a function of ours at the start) and a
 * run of the BPF program; a malloc and its free are two hits, and a sampled
 * malloc's return a third.
 */
static void report_alloc_cost(const struct collector *c)
{
	struct alloc_cost cost;
	double hit_us;

	if (collector__alloc_cost(c, &cost) || !cost.probed || !cost.trap_ns)
		return;
	if (!cost.hits) {
		pr_info("alloc: a hit of a probe on an allocator costs %.1f us here (its trap, "
			"timed at the start), a malloc and its free about %.1f us; sysctl "
			"kernel.bpf_stats_enabled=1 counts the hits and the BPF program's time",
			cost.trap_ns / 1e3, 2 * cost.trap_ns / 1e3);
		return;
	}
	hit_us = (cost.trap_ns + (double)cost.run_ns / cost.hits) / 1e3;
	pr_info("alloc: %llu hits of the probes on the allocators, %.1f us each: the trap %.1f us "
		"(timed at the start), the BPF program %llu ns; a malloc and its free about "
		"%.1f us, %.2f s of the targets' time in all",
		(unsigned long long)cost.hits, hit_us, cost.trap_ns / 1e3,
		(unsigned long long)(cost.run_ns / cost.hits), 2 * hit_us,
		hit_us * cost.hits / 1e6);
}

int record(const struct options *o)
{
	struct collector_opts copts;
	pid_t tid_process = 0;
	struct child child = CHILD_INIT;
	struct symbolizer *sym = NULL;
	struct symbolizer_opts symopts = { 0 };
	char *cache_dir = NULL;
	struct symbolizer_stats st;
	struct collector *c = NULL;
	struct profile *p = NULL;
	struct invoker user, *invoker = NULL;
	struct privilege_needs needs;
	char command_path[PATH_MAX], how[96], preload[PATH_MAX], not_preloaded[PATH_MAX + 128] = "";
	char **env = NULL;
	bool preloaded = false;
	const struct stack_table *stacks;
	struct pseudo_frame overflow, unsampled;
	struct stacks_opts stack_opts = { 0 };
	struct progress_line progress = { .duration_ns = o->duration_ns, .offcpu = o->offcpu };
	uint64_t stop_ns, written_ns, symbolized_ns;
	int err, ret = 1, status;

	targets__collector_opts(o, &copts);
	install_signals();
	err = invoker__from_sudo(&user);
	if (err == -EINVAL) {
		pr_warn("SUDO_UID or SUDO_GID is not a number: will not guess whose profile it is");
		return 1;
	}
	if (!err)
		invoker = &user;
	/* Everything a user could have got wrong is checked before sampling starts. */
	if (outputs(NULL, o, invoker))
		return 1;
	ret = targets__check(o, &tid_process);
	if (ret)
		return ret;
	ret = 1;
	if (o->command) {
		err = child__find_command(o->command[0], command_path, sizeof(command_path));
		if (err) {
			pr_warn("cannot execute '%s': %s", o->command[0], strerror(-err));
			return 1;
		}
		if (o->alloc_rate && preload_env(o, command_path, preload, sizeof(preload), &env,
						 not_preloaded, sizeof(not_preloaded))) {
			pr_warn("cannot start '%s': %s", o->command[0], strerror(ENOMEM));
			return 1;
		}
		/* Fork first, so the command inherits none of the profiler's settings. */
		err = child__fork(&child, o->command, env, invoker, restore_signals);
		preloaded = env != NULL;
		alloc_preload__free_env(env);
		if (err) {
			pr_warn("cannot start '%s': %s", o->command[0], strerror(-err));
			return 1;
		}
	}
	targets__raise_nofile_limit();
	signal(SIGPIPE, SIG_IGN);
	if (o->command)
		copts.command_path = command_path;
	if (preloaded)
		copts.alloc_preload = preload;
	if (*not_preloaded)
		copts.alloc_not_preloaded = not_preloaded;
	copts.alloc_cost = o->verbose > 0;

	p = profile__new(o->freq_hz);
	if (!p) {
		pr_warn("cannot start: %s", strerror(errno));
		goto out;
	}
	/* Timestamps cost 8 bytes a sample: keep them only for a timeline to draw. */
	copts.no_times = true;
	for (size_t i = 0; i < o->nr_outputs; i++)
		copts.no_times &= o->outputs[i].format != EXPORT_FIREFOX;
	/*
	 * A status line while sampling, on a terminal; not beside a command,
	 * whose own output goes to the same terminal and would run into it.
	 */
	if (!o->command && status_line__enable()) {
		copts.on_drain = show_status;
		copts.on_drain_ctx = &progress;
	}
	/* One directory for the unwind tables and the symbolizer's answers. */
	if (!o->no_cache)
		copts.cache_dir = cache_dir = cache_dir__default();
	c = collector__new(&copts, p->strings);
	if (!c)
		goto out;
	progress.c = c;
	if (targets__add(c, o, tid_process))
		goto out;

	/*
	 * The command is a target from its exec on (not before: until then it is
	 * our own code), so nothing it forks right away is missed.
	 */
	if (o->command) {
		err = collector__add_target(c, child.pid, true);
		if (err) {
			pr_warn("cannot profile '%s': %s", o->command[0],
				err == ALLOC_NO_ALLOCATOR ? ALLOC_NO_ALLOCATOR_MSG :
							    strerror(-err));
			goto out;
		}
	}

	/* From here until sampling ends, a signal stops sampling instead of aborting. */
	sampling = c;
	if (abort_signal)
		goto out;
	phase = "attaching";
	err = collector__start(c);
	if (err)
		goto out;
	if (o->command) {
		/* Sampling is attached: let the command exec. */
		err = child__release(&child);
		if (err) {
			if (err == -ECHILD)
				pr_warn("'%s' exited before it could start", o->command[0]);
			else
				pr_warn("cannot execute '%s': %s", o->command[0], strerror(-err));
			goto out;
		}
		fprintf(stderr, "profiler: profiling '%s' (pid %d) %s\n", o->command[0], child.pid,
			how_sampled(o, how, sizeof(how)));
	} else {
		print_targets(o, targets__add_descendants(c, o));
	}
	needs.setid = invoker != NULL;
	needs.kill = o->command && invoker;
	/* The allocators of processes the targets fork and exec are probed as they come. */
	needs.attach = o->alloc_rate && !o->no_inherit;
	err = privileges__drop(&needs);
	if (err)
		pr_warn("cannot drop the capabilities sampling no longer needs: %s",
			strerror(-err));

	err = collector__run(c);
	stop_ns = clock_ns(CLOCK_MONOTONIC);
	status_line__clear();
	sampling = NULL;
	phase = "symbolizing";
	if (err)
		goto out;
	if (o->command) {
		bool stopped = collector__child_status(c) == -1;

		status = child__end(&child, collector__child_status(c));
		child__report(o->command[0], status, stopped);
	}

	collector__stats(c, &p->stats);
	stacks = collector__stacks(c);
	if (stacks->overflowed || stacks->dropped)
		pr_warn("more than %zu distinct stacks (--max-stacks): %llu samples of newer stacks "
			"counted as [stack table full], %llu dropped",
			stacks->max_stacks, (unsigned long long)stacks->overflowed,
			(unsigned long long)stacks->dropped);
	/* Dropped samples are in no stack of the profile: count them as lost ones. */
	p->stats.lost_samples += stacks->dropped;
	if (p->stats.maps_unreadable)
		pr_warn("%llu processes with unreadable maps (they exited first, or /proc hides "
			"them): their user frames are [unknown]",
			(unsigned long long)p->stats.maps_unreadable);
	/* Most of the time off CPU too short to keep is a profile of the rest: say how to keep it. */
	if (o->offcpu && p->stats.offcpu_short_ns > p->stats.offcpu_ns)
		pr_warn("%.0f%% of the time off CPU was in %llu intervals shorter than --off-cpu-min "
			"(%llu us), left out: a lower --off-cpu-min (0 keeps them all) or --wall "
			"keeps them",
			100.0 * p->stats.offcpu_short_ns /
				(p->stats.offcpu_short_ns + p->stats.offcpu_ns),
			(unsigned long long)p->stats.offcpu_short,
			(unsigned long long)(o->offcpu_min_ns / 1000));
	p->mode = o->alloc_rate ? PROFILE_ALLOC :
		  o->wall	? PROFILE_WALL :
		  o->offcpu	? PROFILE_OFFCPU :
				  PROFILE_CPU;
	p->alloc_rate = o->alloc_rate;
	if (collector__alloc_peak(c) > collector__start_mono(c))
		p->alloc_gmax_ns = collector__alloc_peak(c) - collector__start_mono(c);
	p->start_time = collector__start_real(c);
	p->duration = collector__duration(c);
	no_samples__warn(o, p, o->command && collector__child_status(c) != -1);
	pr_info("symbolizing %zu stacks", stacks->entries.nr);
	err = pseudo_frame__init(&overflow, p->strings, OVERFLOW_FRAME_NAME);
	if (!err)
		err = pseudo_frame__init(&unsampled, p->strings, UNSAMPLED_FRAME_NAME);
	if (!err)
		err = bpf_costs(p, collector__bpf_progs(c));
	/* Under sudo, perf maps are trusted from the user who ran it, as the profiles are theirs. */
	symopts.trusted_uid = invoker ? invoker->uid : getuid();
	symopts.elf_cache = collector__elf_cache(c);
	symopts.py_frames = collector__py_frames(c);
	symopts.bpf_progs = collector__bpf_progs(c);
	symopts.cache_dir = cache_dir;
	symopts.cache_producer = "profiler " PROFILER_VERSION;
	sym = symbolizer__new(p->strings, &symopts);
	if (!err && !sym)
		err = -ENOMEM;
	stack_opts.start_mono = collector__start_mono(c);
	stack_opts.overflow = &overflow;
	if (o->wall) {
		stack_opts.thread_cpu = thread_cpu;
		stack_opts.thread_cpu_arg = c;
		stack_opts.unsampled = &unsampled;
	}
	stack_opts.stop = &abort_signal;
	if (!err)
		err = stacks__symbolize(p, sym, stacks, &stack_opts);
	if (err == -ENOMEM)
		pr_warn("cannot symbolize: out of memory");
	if (err)
		goto out;
	symbolizer__stats(sym, &st);
	memcpy(p->stats.frames, st.sources, sizeof(p->stats.frames));
	p->stats.dwarf_units_lost = st.dwarf.lost;
	if (o->verbose) {
		const struct dwarf_index_stats *ds = &st.dwarf;
		uint64_t run_ns, runs;

		pr_info("dwarf: %llu units read, %llu not by our reader (split %llu, unknown forms "
			"%llu, corrupt %llu): %llu by libdw instead, %llu unreadable",
			(unsigned long long)ds->units,
			(unsigned long long)(ds->by_libdw + ds->lost),
			(unsigned long long)ds->unread[DWARF_UNIT_SPLIT],
			(unsigned long long)ds->unread[DWARF_UNIT_UNKNOWN],
			(unsigned long long)ds->unread[DWARF_UNIT_CORRUPT],
			(unsigned long long)ds->by_libdw, (unsigned long long)ds->lost);
		if (!collector__bpf_stats(c, false, &run_ns, &runs) && runs)
			pr_info("bpf: %llu runs, %llu ns per run", (unsigned long long)runs,
				(unsigned long long)(run_ns / runs));
		if (!collector__bpf_stats(c, true, &run_ns, &runs) && runs)
			pr_info("bpf: sched_switch: %llu runs, %llu ns per run",
				(unsigned long long)runs, (unsigned long long)(run_ns / runs));
		report_alloc_cost(c);
	}
	phase = "writing the profile";
	symbolized_ns = clock_ns(CLOCK_MONOTONIC);
	if (outputs(p, o, invoker))
		goto out;
	written_ns = clock_ns(CLOCK_MONOTONIC);
	pr_info("stop to file: %llu ms (symbolize %llu ms, write %llu ms)",
		(unsigned long long)((written_ns - stop_ns) / 1000000),
		(unsigned long long)((symbolized_ns - stop_ns) / 1000000),
		(unsigned long long)((written_ns - symbolized_ns) / 1000000));
	print_summary(p, o);
	if (map_guard__faults())
		pr_warn("files were cut short while they were read (%llu pages), by the users of "
			"the processes that map them: their frames may be misnamed",
			(unsigned long long)map_guard__faults());
	/* After the profile is out: the cache is for the next run, not this one's wait. */
	symbolizer__save_cache(sym);
	print_own_cost();
	ret = 0;
out:
	sampling = NULL;
	child__abort(&child);
	profile__free(p);
	symbolizer__free(sym);
	free(cache_dir);
	collector__free(c);
	if (ret && abort_signal)
		die_of_signal(abort_signal);
	return ret;
}
