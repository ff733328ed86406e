// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/profile.h"
#include "common/hashtab.h"
#include "common/array.h"
#include "common/bpf_progs.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/proc_tree.h"
#include "common/procfs.h"
#include "common/py_frames.h"
#include "common/stack_table.h"
#include "common/strset.h"
#include "alloc.h"
#include "bpf_lister.h"
#include "bpf_stats.h"
#include "collector.h"
#include "elf/elf_cache.h"
#include "event.h"
#include "privilege.h"
#include "procs.h"
#include "profile.skel.h"
#include "runtime.h"
#include "sample_sums.h"
#include "thread_cpu.h"
#include "unwind.h"
#include "unwind_maps.h"
#include "user_stacks.h"

/* How long the reader sleeps between drains when nothing wakes it. */
#define DRAIN_INTERVAL_MS 10
/* What the ring-buffer callback returns to end a drain at the deadline or a stop. */
#define DRAIN_CUT (-ECANCELED)
/* How often snapshots superseded are looked for (forget_snapshots()). */
#define FORGET_SNAPSHOTS_NS (1000ULL * 1000 * 1000)
/* How often the BPF programs loaded since are asked for (refresh_bpf_progs()). */
#define BPF_PROGS_REFRESH_NS (1000ULL * 1000 * 1000)
/*
 * The ring buffer holds, by default, half a second of the most records the
 * chosen modes produce, a margin for slow drains (see ringbuf_bytes()).
 */
#define RINGBUF_SECONDS_NUM 1
#define RINGBUF_SECONDS_DEN 2
#define RINGBUF_MIN_BYTES (1ULL << 20)
/*
 * What the ring may take by default, whatever -F: at the highest rates the
 * reader drains in time or the surplus is counted as lost. It is mapped
 * twice (for records that wrap around), so it counts twice in our RSS.
 * --ringbuf-size goes past it.
 */
#define RINGBUF_MAX_AUTO_BYTES (16ULL << 20)
/*
 * Off-CPU records a CPU may send a second, budgeted: one per interval of at
 * least --off-cpu-min (one thread switched in after another), at most
 * RINGBUF_OFFCPU_MAX_RATE, or with sums, one per sum or longer interval.
 */
#define RINGBUF_OFFCPU_MAX_RATE 10000
/*
 * A record's bytes, budgeted: its head and 64 addresses. Each is sent with
 * the addresses it has; a deeper one takes the room of shallower ones.
 */
#define RINGBUF_RECORD_BYTES (sizeof(struct sample_head) + 64 * sizeof(__u64))

struct collector {
	struct collector_opts opts;
	struct strset *strings;
	struct profile_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nr_cpus;

	struct procs *procs;	  /* the processes sampled and followed */
	struct runtimes runtimes; /* the language runtimes it reads the frames of */

	/*
	 * Where samples are counted: @own for a recording, or the windows
	 * `profiler serve` attaches (opts.windows). Each handled record is
	 * counted in @nr_records, whether a window takes it or not.
	 */
	struct collector_window own;
	struct collector_window **windows;
	size_t nr_windows, alloc_windows;
	uint64_t windows_attached; /* the last window's seq */
	uint64_t nr_records;
	struct elf_cache *elves; /* the files' ELF images, shared with the symbolizer */
	size_t nr_stale;	 /* stacks whose snapshot misses their leaf */
	uint64_t next_forget_ns; /* forget_snapshots() looks again from then on */
	uint64_t not_taken; /* samples the kernel did not hand the BPF program (samples_not_taken()) */
	struct bpf_progs *bpf_progs;   /* a recording's: the BPF programs that could run in it */
	struct bpf_lister *bpf_lister; /* ... which opens those loaded since its start */
	uint64_t next_bpf_progs_ns;    /* refresh_bpf_progs() asks it again from then on */

	uint64_t start_mono, start_real, stop_mono;
	uint64_t malformed;	   /* records too short or with impossible counts */
	uint64_t unknown_allocs;   /* sampled blocks counted in no stack: the table was full */
	uint64_t allocator_mmaps;  /* anonymous mmaps the allocator made: heap blocks already */
	uint64_t alloc_unprobed;   /* processes forked or exec'd whose allocator was not probed */
	struct event event;	   /* the record being handled: too big for the stack */
	struct unwinder *unwinder; /* NULL with CALL_GRAPH_FP */
	struct user_stacks *user_stacks; /* each record's user stack finished and judged */
	uint64_t nr_offcpu;		 /* intervals off CPU received */
	uint64_t nr_offcpu_records;	 /* ... in this many records (short ones are summed) */
	uint64_t nr_idle;		 /* samples of idle CPUs sent (those counted: @sums) */
	uint64_t offcpu_ns;		 /* their total length */
	struct unwind_maps *unwind_maps; /* CALL_GRAPH_CFI's tables */
	struct alloc *alloc;		 /* NULL without alloc_rate */
	struct py_frames py_frames;	 /* what Python frames' addresses stand for */
	uint64_t nr_sample_records, sample_record_bytes; /* on-CPU records drained */
	struct thread_cpu *thread_cpu; /* with opts.thread_cpu, once sampling stopped */
	struct sample_sums sums;       /* with sum_samples */
	int err;		       /* first error in the ring-buffer callback */
	volatile sig_atomic_t stopping;
	uint64_t deadline; /* CLOCK_MONOTONIC end of sampling (-d), or 0 */
	bool draining;	   /* sampling has stopped: take every record left */
};

static uint64_t round_up_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

int collector__check_offcpu(const char *btf_path)
{
	struct btf *btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	int err = 0;

	if (!btf) {
		pr_warn("off-CPU recording needs the kernel's BTF: %s", strerror(errno));
		return -ENOTSUP;
	}
	if (btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) < 0) {
		pr_warn("off-CPU recording needs the sched_switch tracepoint, which this kernel "
			"does not have");
		err = -ENOTSUP;
	}
	btf__free(btf);
	return err;
}

/*
 * Libraries loaded where others were unloaded are told apart by the mmap
 * lock's tracepoint (profile_mmap()): a kernel without it (no tracing of
 * mm) is profiled without, and such a library named after the first.
 */
static void check_mmap_tracepoint(struct profile_bpf *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t = NULL;
	int id = btf ? btf__find_by_name_kind(btf, "btf_trace_mmap_lock_released",
					      BTF_KIND_TYPEDEF) :
		       -1;

	/* typedef void (*)(void *, struct mm_struct *, bool): its prototype. */
	if (id > 0)
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
		/*
	 * Older kernels pass its events the memory cgroup's path (a fourth
	 * argument), which they then format at every release of any
	 * process's lock (page faults included) once a program is attached:
	 * not paid for this. Nor anywhere but on x86-64, where the call's
	 * registers are read.
	 */
#if defined(__x86_64__)
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) != 3) {
#else
	if (true) {
#endif
		pr_info("libraries loaded where others were unloaded are not told apart here "
			"(no cheap mmap_lock_released tracepoint): each is named after the first");
		bpf_program__set_autoload(skel->progs.profile_mmap, false);
	}
	btf__free(btf);
}

/* Hand the BPF program the cgroup directory @path: it samples the tasks under it. */
static int set_cgroup(struct collector *c, const char *path)
{
	__u32 key = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot open cgroup '%s': %s", path, strerror(-err));
		return err;
	}
	err = bpf_map__update_elem(c->skel->maps.cgroups, &key, sizeof(key), &fd, sizeof(fd),
				   BPF_ANY);
	if (err)
		pr_warn("cannot use cgroup '%s': %s", path, strerror(-err));
	close(fd);
	return err;
}

/*
 * Bytes of user stack a sample copies: none with frame pointers; for CFI
 * unwinding in user space, what was asked for, in whole words; with unwind
 * tables, CALL_GRAPH_CFI_COPY_BYTES, for a process's samples before its
 * tables are loaded.
 */
static uint32_t call_graph_stack_bytes(const struct collector_opts *opts)
{
	uint32_t bytes = opts->stack_bytes ? opts->stack_bytes : CALL_GRAPH_DWARF_DEFAULT_BYTES;

	switch (opts->call_graph) {
	case CALL_GRAPH_FP:
		return 0;
	case CALL_GRAPH_DWARF:
		bytes = (bytes + 7) & ~7U;
		return bytes < PROFILE_MAX_STACK_COPY ? bytes : PROFILE_MAX_STACK_COPY;
	default:
		return CALL_GRAPH_CFI_COPY_BYTES;
	}
}

/* The most user frames unwound, from tables or from a copy. */
static uint32_t max_frames(const struct collector_opts *opts)
{
	if (!opts->max_frames || opts->max_frames > PROFILE_MAX_USER_STACK)
		return PROFILE_MAX_USER_STACK;
	return opts->max_frames;
}

/* Can the BPF program unwind from tables here? x86-64 only: its rules are x86-64's. */
static bool unwind_tables_supported(void)
{
#if defined(__x86_64__)
	return true;
#else
	return false;
#endif
}

/*
 * The ring buffer's default size: RINGBUF_SECONDS of on-CPU records from
 * every CPU at -F, each of RINGBUF_RECORD_BYTES and the @copy_bytes of
 * registers and stack it copies (--call-graph dwarf), plus as long of
 * off-CPU records at their budgeted rate; then bounded (the caller rounds
 * it up to a power of two, as the kernel wants it).
 */
static uint64_t ringbuf_bytes(const struct collector_opts *opts, int nr_cpus, uint64_t copy_bytes)
{
	uint64_t per_second =
		(uint64_t)opts->freq_hz * nr_cpus * (RINGBUF_RECORD_BYTES + copy_bytes);

	if (opts->offcpu) {
		uint64_t every_ns = opts->offcpu_sum_ns > opts->offcpu_min_ns ?
					    opts->offcpu_sum_ns :
					    opts->offcpu_min_ns;
		uint64_t rate = every_ns ? 1000000000ULL / every_ns : RINGBUF_OFFCPU_MAX_RATE;

		if (rate > RINGBUF_OFFCPU_MAX_RATE)
			rate = RINGBUF_OFFCPU_MAX_RATE;
		per_second += rate * nr_cpus * RINGBUF_RECORD_BYTES;
	}
	per_second = per_second * RINGBUF_SECONDS_NUM / RINGBUF_SECONDS_DEN;
	if (per_second < RINGBUF_MIN_BYTES)
		per_second = RINGBUF_MIN_BYTES;
	if (per_second > RINGBUF_MAX_AUTO_BYTES)
		per_second = RINGBUF_MAX_AUTO_BYTES;
	return per_second;
}

/* A new snapshot: load the unwind tables of its files for the BPF program. */
static void unwind_tables_see(void *um, const struct proc_maps *maps)
{
	int err = unwind_maps__load(um, maps);

	if (err)
		pr_debug("pid %d: cannot load unwind tables: %s", maps->pid, strerror(-err));
}

static void unwind_tables_forget(void *um, bool (*known)(pid_t pid, void *arg), void *arg)
{
	(void)known;
	(void)arg;
	unwind_maps__forget_exited(um);
}

/* A target is gone: a new process could reuse the pid, so stop sampling it. */
static void target_gone(void *ctx, pid_t pid)
{
	struct collector *c = ctx;
	__u32 key = pid;

	bpf_map__delete_elem(c->skel->maps.targets, &key, sizeof(key), 0);
}

/* --alloc: the old program's blocks went with it (its records came before this). */
static void alloc_exec(void *ctx, pid_t pid, uint64_t time_ns)
{
	struct collector *c = ctx;

	alloc__exit(c->alloc, pid, time_ns);
	if (alloc__exec(c->alloc, pid)) {
		pr_debug("pid %u: its allocations after the exec are not sampled", pid);
		c->alloc_unprobed++;
	}
}

/* --alloc: the blocks of a process that exited are not live any more. */
static void alloc_exit(void *ctx, pid_t pid, uint64_t time_ns)
{
	struct collector *c = ctx;

	alloc__exit(c->alloc, pid, time_ns);
}

/*
 * What hears of processes (procs.h), in this order: the heap profiler,
 * the BPF program's targets, the runtimes, the unwind tables.
 */
static int watch_procs(struct collector *c)
{
	struct proc_watcher targets = { .gone = target_gone, .ctx = c };
	int err = 0;

	if (c->alloc) {
		struct proc_watcher w = { .exec = alloc_exec, .exit = alloc_exit, .ctx = c };

		err = procs__watch(c->procs, &w);
	}
	if (!err)
		err = procs__watch(c->procs, &targets);
	if (!err)
		err = runtimes__watch(&c->runtimes, c->procs);
	if (!err && c->unwind_maps) {
		struct proc_watcher w = { .snapshot = unwind_tables_see,
					  .forget = unwind_tables_forget,
					  .ctx = c->unwind_maps };

		err = procs__watch(c->procs, &w);
	}
	return err;
}

struct collector *collector__new(const struct collector_opts *opts, struct strset *strings)
{
	struct collector *c;
	uint64_t rb_bytes, copy_bytes, max_rows = 0;
	uint32_t stack_bytes;
	int err, nr_cpus;

	c = calloc(1, sizeof(*c));
	if (!c) {
		pr_warn("cannot start the collector: %s", strerror(errno));
		return NULL;
	}

	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus < 0) {
		err = nr_cpus;
		pr_warn("cannot count CPUs: %s", strerror(-err));
		goto out_free;
	}
	c->opts = *opts;
	c->strings = strings;
	c->nr_cpus = nr_cpus;
	if (!opts->windows) {
		c->own.strings = strings;
		c->own.end_ns = UINT64_MAX;
		if (collector__attach(c, &c->own)) {
			err = -ENOMEM;
			pr_warn("cannot start the collector: %s", strerror(-err));
			goto out_free;
		}
	}
	sample_sums__init(&c->sums);
	c->elves = elf_cache__new();
	c->procs = c->elves ? procs__new(strings, c->elves) : NULL;
	if (py_frames__init(&c->py_frames)) {
		err = -ENOMEM;
		pr_warn("cannot start the collector: %s", strerror(-err));
		goto out_free;
	}
	c->links = calloc(nr_cpus, sizeof(*c->links));
	if (!c->procs || !c->elves || !c->links) {
		err = -ENOMEM;
		pr_warn("cannot start the collector: %s", strerror(-err));
		goto out_free;
	}

	c->skel = profile_bpf__open();
	if (!c->skel) {
		err = -errno;
		pr_warn("cannot open the BPF program: %s", strerror(-err));
		goto out_free;
	}
	if (opts->call_graph == CALL_GRAPH_CFI && !unwind_tables_supported()) {
		pr_info("unwind tables are x86-64 only: using frame pointers");
		c->opts.call_graph = CALL_GRAPH_FP;
		opts = &c->opts;
	}
	stack_bytes = call_graph_stack_bytes(opts);
	/*
	 * Every sample copies the stack with dwarf; with cfi those of every
	 * process whose tables are not loaded yet, which with -a is all of
	 * them at first, while the reader is busy building tables.
	 */
	copy_bytes = stack_bytes ? PROFILE_NR_REGS * sizeof(__u64) + stack_bytes : 0;
	rb_bytes = opts->ringbuf_bytes ? opts->ringbuf_bytes :
		   opts->alloc_rate    ? RINGBUF_MAX_AUTO_BYTES :
					 ringbuf_bytes(opts, nr_cpus, copy_bytes);
	rb_bytes = round_up_pow2(rb_bytes);
	c->skel->rodata->wakeup_bytes = rb_bytes / 4;
	c->skel->rodata->filter_targets = !opts->system_wide;
	c->skel->rodata->target_tid = opts->tid;
	c->skel->rodata->filter_cgroup = opts->cgroup != NULL;
	c->skel->rodata->offcpu_blocked_only = !opts->offcpu_runnable;
	c->skel->rodata->follow_children = !opts->no_inherit;
	c->skel->rodata->offcpu_min_ns = opts->offcpu_min_ns;
	c->skel->rodata->offcpu_sum_ns = opts->offcpu_sum_ns;
	c->skel->rodata->sample_idle = opts->idle && opts->system_wide && !opts->cgroup;
	c->skel->rodata->track_oncpu = opts->thread_cpu;
	c->skel->rodata->stack_copy_bytes = stack_bytes;
	c->skel->rodata->max_user_frames = max_frames(opts);
	runtimes__configure(c->skel, opts);
	/*
	 * Where no output needs samples one by one, the BPF program counts a
	 * thread's samples of the same stacks rather than send each: an agent's
	 * windows need them as they come; --alloc takes no clock samples.
	 */
	c->skel->rodata->sum_samples = opts->no_times && !opts->windows && !opts->alloc_rate;
	err = bpf_map__set_max_entries(c->skel->maps.sample_sums,
				       c->skel->rodata->sum_samples ? PROFILE_MAX_SAMPLE_SUMS : 1);
	if (err) {
		pr_warn("cannot size the BPF program's sample counts: %s", strerror(-err));
		goto out_free;
	}
	/* Where samples with a stack copy are built: one per CPU, by index. */
	err = bpf_map__set_max_entries(c->skel->maps.copies, nr_cpus);
	if (err) {
		pr_warn("cannot size the BPF program's copy buffers: %s", strerror(-err));
		goto out_free;
	}
	c->skel->rodata->user_fp_stack = opts->call_graph == CALL_GRAPH_FP;
	c->skel->rodata->unwind_tables = opts->call_graph == CALL_GRAPH_CFI;
	if (opts->call_graph == CALL_GRAPH_CFI) {
		max_rows = (opts->unwind_table_bytes ? opts->unwind_table_bytes :
						       UNWIND_TABLE_DEFAULT_BYTES) /
			   sizeof(struct unwind_row);
		err = bpf_map__set_max_entries(c->skel->maps.unwind_rows, max_rows);
		if (err) {
			pr_warn("cannot size the unwind tables to %llu rows: %s",
				(unsigned long long)max_rows, strerror(-err));
			goto out_free;
		}
	}
	if (opts->call_graph != CALL_GRAPH_FP) {
		c->unwinder = unwinder__new(c->elves);
		if (!c->unwinder) {
			err = -errno;
			pr_warn("cannot start the unwinder: %s", strerror(-err));
			goto out_free;
		}
	}
	if (opts->offcpu) {
		err = collector__check_offcpu(NULL);
		if (err)
			goto out_free;
	} else {
		bpf_program__set_autoload(c->skel->progs.profile_switch, false);
	}
	check_mmap_tracepoint(c->skel);
	err = alloc__configure(c->skel, opts->alloc_rate, opts->alloc_max_live);
	if (err) {
		pr_warn("cannot set up allocation sampling: %s", strerror(-err));
		goto out_free;
	}
	err = rb_bytes > UINT32_MAX ? -E2BIG :
				      bpf_map__set_max_entries(c->skel->maps.events, rb_bytes);
	if (err) {
		pr_warn("cannot size the ring buffer to %llu bytes: %s",
			(unsigned long long)rb_bytes, strerror(-err));
		goto out_free;
	}
	pr_info("ring buffer: %llu bytes", (unsigned long long)rb_bytes);

	err = profile_bpf__load(c->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			privilege__warn("cannot load the BPF program", -err);
		else
			pr_warn("cannot load the BPF program: %s", strerror(-err));
		goto out_free;
	}
	if (opts->cgroup) {
		err = set_cgroup(c, opts->cgroup);
		if (err)
			goto out_free;
	}
	err = runtimes__start(&c->runtimes,
			      &(struct runtime_env){ c->skel, c->elves, &c->py_frames }, opts);
	if (err)
		goto out_free;
	if (opts->alloc_rate) {
		c->alloc = alloc__new(c->skel, opts->alloc_rate, opts->alloc_preload);
		if (!c->alloc) {
			err = -errno;
			pr_warn("cannot start the collector: %s", strerror(-err));
			goto out_free;
		}
		if (opts->alloc_cost && (err = alloc__measure_trap(c->alloc)))
			pr_info("alloc: cannot time a probe's trap: %s", strerror(-err));
		err = 0;
	}
	/*
	 * A recording's kernel stacks may run through BPF programs: read those
	 * loaded now, while we may (CAP_SYS_ADMIN is dropped once sampling
	 * starts: cli/privileges.c), and those loaded since through the
	 * lister, forked now, before the unwind tables' thread. The agent
	 * also counts their runs through it (collector__count_bpf_progs()).
	 */
	if (!opts->alloc_rate) {
		c->bpf_progs = bpf_progs__read();
		if (!c->bpf_progs) {
			err = -errno;
			pr_warn("cannot start the collector: %s", strerror(-err));
			goto out_free;
		}
		c->bpf_lister = bpf_lister__new();
		if (!c->bpf_lister)
			pr_debug(
				"bpf: cannot start the lister: %s; BPF programs loaded from now on "
				"are named by kallsyms",
				strerror(errno));
	}
	if (max_rows) {
		c->unwind_maps =
			unwind_maps__new(c->unwinder, bpf_map__fd(c->skel->maps.unwind_rows),
					 max_rows, bpf_map__fd(c->skel->maps.unwind_rules),
					 bpf_map__fd(c->skel->maps.unwind_procs), opts->cache_dir);
		if (!c->unwind_maps) {
			err = -errno;
			pr_warn("cannot map the unwind tables: %s", strerror(-err));
			goto out_free;
		}
	}
	c->user_stacks = user_stacks__new(c->unwinder, c->procs, &c->runtimes,
					  c->unwind_maps != NULL, max_frames(&c->opts));
	err = c->user_stacks ? watch_procs(c) : -ENOMEM;
	if (err) {
		pr_warn("cannot start the collector: %s", strerror(-err));
		goto out_free;
	}
	return c;

out_free:
	collector__free(c);
	errno = -err;
	return NULL;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	runtimes__stop(&c->runtimes);
	alloc__free(c->alloc);
	ring_buffer__free(c->rb);
	for (int cpu = 0; c->links && cpu < c->nr_cpus; cpu++)
		bpf_link__destroy(c->links[cpu]);
	profile_bpf__destroy(c->skel);
	unwind_maps__free(c->unwind_maps);
	user_stacks__free(c->user_stacks);
	unwinder__free(c->unwinder);
	py_frames__release(&c->py_frames);
	bpf_lister__free(c->bpf_lister);
	bpf_progs__free(c->bpf_progs);
	elf_cache__free(c->elves);
	thread_cpu__free(c->thread_cpu);
	stack_table__release(&c->own.stacks);
	free(c->windows);
	sample_sums__release(&c->sums);
	procs__free(c->procs);
	free(c->links);
	free(c);
}

const struct py_frames *collector__py_frames(const struct collector *c)
{
	return &c->py_frames;
}

const struct bpf_progs *collector__bpf_progs(const struct collector *c)
{
	return c->bpf_progs;
}

struct elf_cache *collector__elf_cache(struct collector *c)
{
	return c->elves;
}

/*
 * Give a new stack of window @w its process's command line and cgroup, read
 * at the process's first stack in the window: a recording's one window has
 * them as they were when it first saw the process (and after an exec), an
 * agent's windows as they are in each (PostgreSQL's backends retitle
 * themselves as they work).
 */
static void stack_entry__set_cmdline(struct collector *c, struct collector_window *w,
				     struct stack_entry *s)
{
	struct proc *p = procs__get(c->procs, s->pid);

	if (!p)
		return;
	if (p->cmdline_seq != w->seq)
		procs__read_cmdline(p, w->seq);
	s->cmdline = p->cmdline ? strset__add(w->strings, p->cmdline) : NULL;
	s->cgroup = p->cgroup ? strset__add(w->strings, p->cgroup) : NULL;
}

static bool covers_leaf(const struct proc_maps *maps, const struct stack_entry *s)
{
	uint64_t leaf = s->nr_user ? s->ips[s->nr_kernel] : 0;

	/* A Python frame is no code of a mapping: the interpreter's snapshot is the one. */
	return !s->nr_user || py_frames__is_addr(leaf) || proc_maps__find(maps, leaf);
}

/*
 * Give a new stack the snapshot to symbolize it with, refreshed when the
 * stack's leaf is outside it. Only the leaf is tested: it is the sampled
 * program counter, always inside some mapping, while outer frames unwound
 * through code without frame pointers are often garbage that would miss
 * every time. A miss within PROCS_REFRESH_NS of the last snapshot (a burst
 * of new stacks as a program maps its libraries) is settled at the end.
 * A stack of another code generation (the process mapped code since, or
 * it is another process by that pid) gets a new snapshot whether the old
 * one covers it or not: a library loaded where another was unloaded has
 * the same addresses.
 */
static void stack_entry__set_maps(struct collector *c, struct stack_entry *s)
{
	struct proc *p;

	/* Nothing to map (a kernel thread has no maps at all). */
	if (!s->nr_user)
		return;
	p = procs__get(c->procs, s->pid);
	if (!p)
		return;
	if (!p->snapshot_time || s->code_gen != p->code_gen ||
	    (!covers_leaf(p->maps, s) &&
	     clock_ns(CLOCK_MONOTONIC) - p->snapshot_time >= PROCS_REFRESH_NS)) {
		procs__snapshot(c->procs, p);
		p->code_gen = s->code_gen;
	}
	s->maps = p->maps;
	s->maps_stale = !covers_leaf(p->maps, s);
	c->nr_stale += s->maps_stale;
}

/* Add to @used the snapshots the windows' stacks point to. 0 or -ENOMEM. */
static int snapshots_in_use(const struct collector *c, struct hashtab *used)
{
	struct stack_entry *s;
	size_t i;

	for (size_t w = 0; w < c->nr_windows; w++)
		stack_table__for_each_entry(&c->windows[w]->stacks, i, s)
			if (s->maps && ptr_set__add(used, s->maps))
				return -ENOMEM;
	return 0;
}

/* The mappings the stacks of one superseded snapshot use (trim_snapshots()). */
struct snapshot_use {
	const struct proc_maps *maps;
	const struct proc_maps *trimmed; /* what the stacks point to instead, or NULL */
	uint64_t used[];		 /* a bit per mapping of @maps */
};

static bool snapshot_use_eq(const void *entry, const void *key)
{
	return ((const struct snapshot_use *)entry)->maps == key;
}

/* Set in @u the bit of the mapping of @addr, if any. */
static void snapshot_use_addr(struct snapshot_use *u, uint64_t addr)
{
	const struct proc_map *m = proc_maps__find(u->maps, addr);

	if (m) {
		size_t i = m - u->maps->maps;

		u->used[i / 64] |= 1ULL << (i % 64);
	}
}

/*
 * Have the stacks of snapshots superseded (no process has them as its
 * latest) point to copies with only the mappings they use: a process that
 * maps and unmaps code all along takes a snapshot at each stack its last
 * one misses, and each is as large as its maps (2,000 mappings: 80 KB) for
 * the few its stacks hit. Each snapshot is trimmed once. -ENOMEM leaves
 * what was not done for the next time.
 */
static int trim_snapshots(struct collector *c)
{
	struct hashtab uses = HASHTAB_INIT;
	struct snapshot_use *u;
	struct stack_entry *s;
	size_t i;
	int err = 0;

	for (size_t w = 0; w < c->nr_windows; w++)
		stack_table__for_each_entry(&c->windows[w]->stacks, i, s) {
			const struct proc *p;
			bool added;

			if (!s->maps || s->maps->trimmed ||
			    ((p = procs__find(c->procs, s->pid)) && p->maps == s->maps))
				continue;
			u = hashtab__find_or_add(
				&uses, hash_u64((uintptr_t)s->maps), snapshot_use_eq, s->maps,
				sizeof(*u) + (s->maps->nr + 63) / 64 * sizeof(u->used[0]), &added);
			if (!u) {
				err = -ENOMEM;
				goto out;
			}
			u->maps = s->maps;
			/* The symbolizer looks up a caller's address less one. */
			for (size_t k = s->nr_kernel; k < s->nr_kernel + s->nr_user; k++) {
				snapshot_use_addr(u, s->ips[k]);
				snapshot_use_addr(u, s->ips[k] - 1);
			}
		}
	hashtab__for_each_entry(&uses, i, u)
		u->trimmed = procs__trim_snapshot(c->procs, u->maps, u->used);
	for (size_t w = 0; w < c->nr_windows; w++)
		stack_table__for_each_entry(&c->windows[w]->stacks, i, s) {
			if (!s->maps || s->maps->trimmed)
				continue;
			u = hashtab__find(&uses, hash_u64((uintptr_t)s->maps), snapshot_use_eq,
					  s->maps);
			if (u && u->trimmed)
				s->maps = u->trimmed;
		}
out:
	hashtab__for_each_entry(&uses, i, u)
		free(u);
	hashtab__release(&uses);
	return err;
}

/*
 * Every FORGET_SNAPSHOTS_NS, once there are more snapshots than processes,
 * trim the superseded ones and forget those no stack points to any more.
 */
static void forget_snapshots(struct collector *c)
{
	struct hashtab used = HASHTAB_INIT;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (now < c->next_forget_ns || procs__nr_snapshots(c->procs) <= procs__nr(c->procs))
		return;
	c->next_forget_ns = now + FORGET_SNAPSHOTS_NS;
	if (!trim_snapshots(c) && !snapshots_in_use(c, &used))
		procs__forget_snapshots(c->procs, &used);
	hashtab__release(&used);
}

/*
 * Add the BPF programs loaded since the last look, so that those unloaded
 * before the recording ends still name their code: once a second, and at
 * the end (@force). A program loaded and unloaded in between is named by
 * kallsyms, if at all.
 */
static void refresh_bpf_progs(struct collector *c, bool force)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!c->bpf_lister || (!force && now < c->next_bpf_progs_ns))
		return;
	c->next_bpf_progs_ns = now + BPF_PROGS_REFRESH_NS;
	if (bpf_lister__refresh(c->bpf_lister, c->bpf_progs)) {
		bpf_lister__free(c->bpf_lister);
		c->bpf_lister = NULL;
	}
}

/* The id of @prog, loaded; 0 when it cannot be read. */
static uint32_t prog_id(const struct bpf_program *prog)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	return bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) ? 0 : info.id;
}

/*
 * The samples each CPU's clock took so far (STAT_SAMPLE_DUE: the firings
 * of its timer) that the BPF program did not run for (STAT_SAMPLE_RUNS):
 * the kernel does not run it while the CPU runs a kprobe, uprobe or perf
 * tracepoint BPF program, or a bpf() call on a map (bpf_overflow_handler(),
 * bpf_prog_active), and drops that sample uncounted. While sampling, one a
 * CPU is within the margin: a firing counted whose run has not come yet.
 * Each CPU's, with what was due, into @per_cpu (@size bytes, may be 0)
 * where missed.
 */
static uint64_t count_not_taken(struct collector *c, char *per_cpu, size_t size)
{
	uint64_t *runs, *due, total = 0;
	size_t len = 0;

	runs = calloc(c->nr_cpus, sizeof(*runs));
	due = calloc(c->nr_cpus, sizeof(*due));
	if (!runs || !due) {
		free(runs);
		free(due);
		return 0;
	}
	bpf_stats__per_cpu(c->skel, STAT_SAMPLE_RUNS, runs, c->nr_cpus);
	bpf_stats__per_cpu(c->skel, STAT_SAMPLE_DUE, due, c->nr_cpus);
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		uint64_t missed = due[cpu] > runs[cpu] + 1 ? due[cpu] - runs[cpu] - 1 : 0;

		total += missed;
		if (missed && len < size)
			len += snprintf(per_cpu + len, size - len, "%scpu %d: %llu of %llu",
					len ? ", " : "", cpu, (unsigned long long)missed,
					(unsigned long long)due[cpu]);
	}
	free(runs);
	free(due);
	return total;
}

/* Sampling stopped (each CPU's event closed with its link): the samples not taken, said. */
static void samples_not_taken(struct collector *c)
{
	char per_cpu[256] = "";
	uint64_t n = count_not_taken(c, per_cpu, sizeof(per_cpu));

	if (n > c->not_taken)
		c->not_taken = n;
	if (c->not_taken)
		pr_info("samples not taken: %s", per_cpu);
}

void collector__forget_bpf_progs(struct collector *c, uint64_t before_ns)
{
	size_t n = c->bpf_progs ? bpf_progs__forget(c->bpf_progs, before_ns) : 0;

	if (n)
		pr_debug("bpf: %zu BPF programs unloaded forgotten", n);
}

uint64_t collector__samples_not_taken(struct collector *c)
{
	uint64_t n = count_not_taken(c, NULL, 0);

	/* A counter: the margin of one a CPU may make a later count lower. */
	if (n > c->not_taken)
		c->not_taken = n;
	return c->not_taken;
}

int collector__count_bpf_progs(struct collector *c)
{
	if (!c->bpf_lister)
		return -ENOENT;
	if (bpf_lister__count(c->bpf_lister, c->bpf_progs)) {
		bpf_lister__free(c->bpf_lister);
		c->bpf_lister = NULL;
	}
	return c->bpf_lister ? 0 : -EPIPE;
}

/*
 * At the end: what each BPF program ran during the recording, counted by
 * the kernel while kernel.bpf_stats_enabled is on (bpf_progs__costliest()).
 */
static void count_bpf_progs(struct collector *c)
{
	if (!c->bpf_progs)
		return;
	bpf_progs__report(c->bpf_progs);
	if (procfs__read_long("/proc/sys/kernel/bpf_stats_enabled", 0) <= 0)
		pr_info("bpf: the programs' run time is not counted: sysctl "
			"kernel.bpf_stats_enabled=1 counts it");
	else
		collector__count_bpf_progs(c);
}

/*
 * Give stacks whose leaf their snapshot missed a newer snapshot that covers
 * it, taking one if the last is older than PROCS_REFRESH_NS (or @force).
 * Called from the drain loop, so a process that exits soon after mapping a
 * library is looked at again while it still runs, and once at the end.
 */
static void settle_stale_maps(struct collector *c, bool force)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	struct stack_entry *s;
	size_t i;

	for (size_t w = 0; w < c->nr_windows; w++)
		stack_table__for_each_entry(&c->windows[w]->stacks, i, s) {
			struct proc *p;

			if (!s->maps_stale)
				continue;
			p = procs__get(c->procs, s->pid);
			if (!p)
				continue;
			if (p->maps == s->maps) {
				if (!force && now - p->snapshot_time < PROCS_REFRESH_NS)
					continue;
				procs__snapshot(c->procs, p);
			}
			/* One snapshot newer than the stack settles it, whether it covers it or not. */
			if (p->maps && covers_leaf(p->maps, s))
				s->maps = p->maps;
			s->maps_stale = false;
			c->nr_stale--;
		}
}

static const char *intern_comm(struct strset *strings, const char *comm)
{
	return strset__add_len(strings, comm, strnlen(comm, PROFILE_COMM_LEN));
}

/* Count @e in window @w, into the entry *@entry (if not NULL). 0 or -ENOMEM. */
static int window_add(struct collector *c, struct collector_window *w, const struct sample_event *e,
		      struct stack_entry **entry)
{
	const char *thread_name, *process_name;
	struct stack_sample sample;
	struct stack_entry *s;
	bool is_new;

	thread_name = intern_comm(w->strings, e->stack.comm);
	process_name = intern_comm(w->strings, e->stack.pcomm);
	if (!thread_name || !process_name)
		return -ENOMEM;
	event__stack_sample(e, &sample);
	if (sample.labels && !(sample.labels = strset__add(w->strings, sample.labels)))
		return -ENOMEM;
	s = stack_table__add(&w->stacks, &sample, thread_name, process_name, &is_new);
	if (!s)
		return -ENOMEM;
	if (is_new) {
		stack_entry__set_maps(c, s);
		stack_entry__set_cmdline(c, w, s);
	}
	if (entry)
		*entry = s;
	return 0;
}

/*
 * Count @e in @w: a sample when its time is in @w's span; an interval off
 * CPU for the part of it in the span, if any (@e is changed meanwhile).
 * The entry it was counted in goes into *@entry, if it was and @entry is
 * not NULL.
 */
static int window_count(struct collector *c, struct collector_window *w, struct sample_event *e,
			struct stack_entry **entry)
{
	uint64_t time = e->time_ns, weight = e->weight_ns;
	uint64_t from = time > w->begin_ns ? time : w->begin_ns;
	uint64_t to = time + weight < w->end_ns ? time + weight : w->end_ns;
	int err;

	if (e->type != EVENT_OFFCPU || !weight)
		return time >= w->begin_ns && time < w->end_ns ? window_add(c, w, e, entry) : 0;
	if (from >= to)
		return 0;
	e->time_ns = from;
	e->weight_ns = to - from;
	err = window_add(c, w, e, entry);
	e->time_ns = time;
	e->weight_ns = weight;
	return err;
}

/*
 * Count @e in every window; the entry it was counted in last goes into
 * *@entry, if not NULL (a recording has one window).
 */
static int handle_sample(struct collector *c, struct sample_event *e, struct stack_entry **entry)
{
	int err = 0;

	if (!event__stacks_valid(&e->stack)) {
		c->malformed++;
		return 0;
	}
	c->nr_records++;
	if (e->type == EVENT_SAMPLE && !e->tid)
		c->nr_idle += event__count(e);
	if (e->type == EVENT_OFFCPU) {
		c->nr_offcpu += e->nr_intervals;
		c->nr_offcpu_records++;
		c->offcpu_ns += e->weight_ns;
	}
	for (size_t i = 0; i < c->nr_windows && !err; i++)
		err = window_count(c, c->windows[i], e, entry);
	return err;
}

/*
 * A target forked a process, which the BPF program now samples too: follow
 * it until it exits. Its maps are read when it is first sampled (that sample
 * wakes the reader) or when it execs. A process that exec'd gets its maps
 * read again, unless it was never sampled (with -a every exec in the machine
 * is reported; its first sample reads them).
 */
static int handle_process_event(struct collector *c, const struct process_event *e)
{
	int err;

	if (e->type == EVENT_FORK) {
		pr_debug("pid %u forked pid %u", e->ppid, e->pid);
		/* Found already by collector__add_descendants(), forked as it walked. */
		if (procs__followed(c->procs, e->pid))
			return 0;
		err = procs__follow(c->procs, e->pid, false, false, 0);
		/* Probed late: what it allocates before this is missed. */
		if (!err && c->alloc && alloc__attach(c->alloc, e->pid, NULL)) {
			pr_debug("pid %u: its allocations are not sampled", e->pid);
			c->alloc_unprobed++;
		}
		/* Gone already: it left nothing to follow. */
		return err == -ESRCH ? 0 : err;
	}
	/* Not in the table (-a: never sampled), or no memory for it: nothing to read. */
	procs__exec(c->procs, e->pid, e->time_ns, c->windows_attached, !c->opts.system_wide);
	return 0;
}

/* @ev's user stack, whole: unwound if it is not yet, with its Python frames in. */
static int complete_stacks(struct collector *c, struct event *ev)
{
	user_stacks__complete(c->user_stacks, ev);
	return runtimes__merge(&c->runtimes, &ev->sample);
}

/*
 * Before an allocation's stack is unwound and named: maps of its process
 * that hold the allocator. A program's first allocations come right after
 * its exec, whose snapshot the dynamic linker had not yet added the C
 * library to, and a short program exits before any later look; a snapshot
 * taken after the record was is the newest there can be.
 */
static void alloc_fresh_maps(struct collector *c, const struct sample_event *e)
{
	struct proc *p = procs__get(c->procs, e->pid);

	if (p && (!p->snapshot_time ||
		  (p->snapshot_time < e->time_ns && !alloc__maps_hold(c->alloc, p->maps, e))))
		procs__snapshot(c->procs, p);
}

/*
 * A sampled allocation, with its stacks whole: the allocation function
 * becomes its leaf, under which its caller shows, and its block is counted.
 */
static int handle_alloc(struct collector *c, struct sample_event *e)
{
	struct thread_stacks *st = &e->stack;
	const char *thread_name, *process_name;
	struct stack_sample sample;
	struct proc *p;
	struct stack_entry *s;
	uint64_t leaf;
	bool is_new;

	if (!event__stacks_valid(st)) {
		c->malformed++;
		return 0;
	}
	c->nr_records++;
	p = procs__get(c->procs, e->pid);
	if (!p)
		return -ENOMEM;
	if (!p->snapshot_time)
		procs__snapshot(c->procs, p);
	if (alloc__by_allocator(c->alloc, p->maps, e)) {
		c->allocator_mmaps++;
		return 0;
	}
	leaf = alloc__func_address(c->alloc, p->maps, e);
	if ((st->flags & SAMPLE_ALLOC_PRELOADED) && st->nr_user) {
		/* The sampler's probe: the allocation function it wraps is the leaf. */
		memmove(&st->user[0], &st->user[1], --st->nr_user * sizeof(st->user[0]));
	} else if (leaf && st->nr_kernel == 0) {
		if (st->nr_user == PROFILE_MAX_USER_STACK) {
			st->nr_user--;
			st->flags |= SAMPLE_USER_TRUNCATED;
		}
		memmove(&st->user[1], &st->user[0], st->nr_user * sizeof(st->user[0]));
		st->user[0] = leaf;
		st->nr_user++;
	}
	thread_name = intern_comm(c->own.strings, st->comm);
	process_name = intern_comm(c->own.strings, st->pcomm);
	if (!thread_name || !process_name)
		return -ENOMEM;
	event__stack_sample(e, &sample);
	s = stack_table__add(&c->own.stacks, &sample, thread_name, process_name, &is_new);
	if (!s)
		return -ENOMEM;
	if (is_new) {
		stack_entry__set_maps(c, s);
		stack_entry__set_cmdline(c, &c->own, s);
	}
	/* An overflow bucket or a dropped sample: its block is not counted by stack. */
	if (s->overflow || s == c->own.stacks.drop) {
		c->unknown_allocs++;
		return 0;
	}
	return alloc__add(c->alloc, s, e);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	struct event *ev = &c->event;
	int err;

	/*
	 * Tables the worker finished, before the record: a flood of records
	 * (an allocation burst under --alloc) keeps the drain from returning
	 * to its loop, and every one of them would carry a stack copy meanwhile.
	 */
	if (c->unwind_maps)
		unwind_maps__poll(c->unwind_maps);
	if (event__parse(data, size, ev)) {
		c->malformed++;
		return 0;
	}
	if (ev->type == EVENT_SAMPLE || ev->type == EVENT_OFFCPU) {
		bool summed = ev->type == EVENT_SAMPLE && (ev->sample.stack.flags & SAMPLE_SUMMED);
		struct stack_entry *entry = NULL;

		if (ev->type == EVENT_SAMPLE) {
			c->nr_sample_records++;
			c->sample_record_bytes += size;
		}
		err = complete_stacks(c, ev);
		if (!err)
			err = handle_sample(c, &ev->sample, summed ? &entry : NULL);
		if (!err && summed)
			err = sample_sums__remember(&c->sums, data, entry,
						    user_stacks__judgement(c->user_stacks));
	} else if (ev->type == EVENT_ALLOC) {
		if (c->alloc)
			alloc_fresh_maps(c, &ev->sample);
		err = c->alloc ? complete_stacks(c, ev) : 0;
		if (!err && c->alloc)
			err = handle_alloc(c, &ev->sample);
	} else if (ev->type == EVENT_FREE) {
		if (c->alloc)
			alloc__release(c->alloc, &ev->free);
		err = 0;
	} else {
		err = handle_process_event(c, &ev->process);
	}
	if (err) {
		c->err = err;
		return err;
	}
	/*
	 * While sampling, a drain ends at the deadline or at a stop, however
	 * much is left: at a high rate, records can come in as fast as they
	 * are handled, and libbpf would go on consuming them. This one is
	 * handled; the rest waits for the drain after sampling stopped.
	 */
	if (!c->draining &&
	    (c->stopping || (c->deadline && clock_ns(CLOCK_MONOTONIC) >= c->deadline)))
		return DRAIN_CUT;
	return 0;
}

int collector__add_target(struct collector *c, pid_t pid, bool child)
{
	__u8 state = child ? TARGET_AT_EXEC : TARGET_ACTIVE;
	__u32 key = pid;
	int err;

	if (procs__followed(c->procs, pid))
		return 0;
	/* A command about to exec: its maps are read at the exec. */
	err = procs__follow(c->procs, pid, child, !child, c->windows_attached);
	if (err)
		return err;
	err = bpf_map__update_elem(c->skel->maps.targets, &key, sizeof(key), &state, sizeof(state),
				   BPF_ANY);
	if (!err && c->alloc)
		err = alloc__attach(c->alloc, pid, child ? c->opts.command_path : NULL);
	if (!err && c->alloc && child && c->opts.alloc_not_preloaded)
		pr_warn("--alloc: %s: its allocator is probed instead, a trap at every call",
			c->opts.alloc_not_preloaded);
	if (err)
		procs__unfollow_last(c->procs);
	return err;
}

struct descendants {
	struct collector *c;
	size_t added;
};

/* proc_tree_visit_fn: follow a descendant as a -p target is, unless it is one already. */
static int add_descendant(pid_t pid, void *arg)
{
	struct descendants *d = arg;
	int err;

	if (procs__followed(d->c->procs, pid))
		return 0;
	err = collector__add_target(d->c, pid, false);
	if (!err)
		d->added++;
	return err;
}

int collector__add_descendants(struct collector *c, pid_t pid, size_t *added)
{
	enum proc_tree_source source = PROC_TREE_CHILDREN;
	struct descendants d = { c, 0 };
	int err;

	err = proc_tree__walk(pid, &source, add_descendant, &d);
	*added = d.added;
	pr_debug("pid %d: %zu descendants followed, found %s", pid, d.added,
		 source == PROC_TREE_SCAN ? "by the parents in /proc/*/stat" :
					    "in /proc/PID/task/*/children");
	return err < 0 ? err : 0;
}

int collector__open_cpu_clock(uint32_t freq_hz, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = freq_hz,
	};

	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int collector__start(struct collector *c)
{
	int err, attached = 0;

	/* From here on (the tracepoints count time on and off CPU from their attaching). */
	c->start_mono = clock_ns(CLOCK_MONOTONIC);
	c->start_real = clock_ns(CLOCK_REALTIME);
	c->skel->bss->start_ns = c->start_mono;
	c->skel->bss->deadline_ns = c->opts.duration_ns ? c->start_mono + c->opts.duration_ns : 0;
	c->skel->bss->sample_prog_id = prog_id(c->skel->progs.profile_sample);
	/* Tracepoints first, so no fork of a target is missed once sampling runs. */
	err = profile_bpf__attach(c->skel);
	if (err) {
		pr_warn("cannot attach the BPF tracepoints: %s", strerror(-err));
		return err;
	}

	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), handle_event, c, NULL);
	if (!c->rb) {
		err = -errno;
		pr_warn("cannot open the ring buffer: %s", strerror(-err));
		return err;
	}
	/* The -p targets' tables, so that their stacks are unwound in the kernel from the start. */
	if (c->unwind_maps)
		unwind_maps__wait(c->unwind_maps);
	/* Allocations are sampled by the uprobes on the targets' allocators, not by a clock. */
	if (c->alloc)
		return 0;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		int fd = collector__open_cpu_clock(c->opts.freq_hz, cpu);

		if (fd < 0) {
			err = fd;
			/* A possible CPU that is offline has no events. */
			if (err == -ENODEV)
				continue;
			if (err == -EACCES || err == -EPERM)
				privilege__warn("cannot open perf events", -err);
			else
				pr_warn("cannot open a cpu-clock perf event on cpu %d: %s", cpu,
					strerror(-err));
			return err;
		}
		c->links[cpu] = bpf_program__attach_perf_event(c->skel->progs.profile_sample, fd);
		if (!c->links[cpu]) {
			err = -errno;
			c->links[cpu] = NULL;
			pr_warn("cannot attach the BPF program on cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		attached++;
	}
	if (!attached) {
		pr_warn("no online CPU to sample");
		return -ENODEV;
	}
	pr_debug("sampling %d cpus at %u Hz", attached, c->opts.freq_hz);
	return 0;
}

/* Note exited targets; true while at least one is alive. */
static bool targets_alive(struct collector *c)
{
	char path[64];

	/* With -t, the thread ends it, not its process (the one target). */
	if (c->opts.tid && procs__nr_targets(c->procs)) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d", procs__first_target(c->procs),
			 c->opts.tid);
		if (access(path, F_OK))
			return false;
	}
	return procs__reap(c->procs);
}

/*
 * Threads off CPU at @until have been away since they left, and the program
 * sends their intervals only when they come back: count those intervals
 * too, up to @until, in window @w, or as received when @w is NULL (at the
 * end of a recording, so --wall adds up).
 */
static int offcpu_under_way(struct collector *c, uint64_t until, struct collector_window *w)
{
	const struct bpf_map *map = c->skel->maps.offcpu;
	struct sample_event *e = &c->event.sample;
	struct sample_record start;
	__u32 tid, next;
	bool first = true;
	int err = 0;

	while (!err && !bpf_map__get_next_key(map, first ? NULL : &tid, &next, sizeof(next))) {
		first = false;
		tid = next;
		if (bpf_map__lookup_elem(map, &tid, sizeof(tid), &start, sizeof(start), 0) ||
		    start.h.time_ns >= until || until - start.h.time_ns < c->opts.offcpu_min_ns)
			continue;
		/* The record as the program would have sent it, with all its room. */
		start.h.nr_ips_room = PROFILE_MAX_IPS;
		if (event__parse(&start, sizeof(start), &c->event)) {
			c->malformed++;
			continue;
		}
		e->type = EVENT_OFFCPU;
		e->weight_ns = until - start.h.time_ns;
		e->nr_intervals = 1;
		e->tid = tid;
		err = complete_stacks(c, &c->event);
		if (!err)
			err = w ? window_count(c, w, e, NULL) : handle_sample(c, e, NULL);
	}
	return err;
}

/* Sums of short intervals off CPU not sent yet: every interval counts with --wall. */
static int flush_offcpu_sums(struct collector *c)
{
	const struct bpf_map *map = c->skel->maps.offcpu_sums;
	struct sum_key key, next;
	struct sample_record sum;
	bool first = true;
	int err = 0;

	while (!err && !bpf_map__get_next_key(map, first ? NULL : &key, &next, sizeof(next))) {
		first = false;
		key = next;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &sum, sizeof(sum), 0))
			continue;
		sum.h.nr_ips_room = PROFILE_MAX_IPS;
		if (event__parse(&sum, sizeof(sum), &c->event) || c->event.type != EVENT_OFFCPU) {
			c->malformed++;
			continue;
		}
		err = complete_stacks(c, &c->event);
		if (!err)
			err = handle_sample(c, &c->event.sample, NULL);
	}
	return err;
}

/* -v: the unwind tables loaded, the records drained, and what snapshots cost the drain. */
static void collector__report_tables(const struct collector *c)
{
	struct procs_stats ps;

	if (c->unwind_maps) {
		struct unwind_maps_stats st;

		unwind_maps__stats(c->unwind_maps, &st);
		pr_info("unwind: tables of %llu files for %llu processes, %llu read from the cache in "
			"%.1f ms, the others built in %.1f ms (written to it in %.1f ms) by the "
			"worker thread, from what the drain read of their files in %.1f ms; %llu rows "
			"(%.1f MiB) loaded at the peak, of %.1f MiB (--unwind-memory); %llu evicted, "
			"%llu did not fit; %llu rows the BPF unwinder cannot follow",
			(unsigned long long)st.files, (unsigned long long)st.procs,
			(unsigned long long)st.cached, st.cache_ns / 1e6, st.build_ns / 1e6,
			st.store_ns / 1e6, st.source_ns / 1e6, (unsigned long long)st.peak_rows,
			st.peak_rows * sizeof(struct unwind_row) / 1048576.0,
			st.max_rows * sizeof(struct unwind_row) / 1048576.0,
			(unsigned long long)st.evicted, (unsigned long long)st.over_limit,
			(unsigned long long)st.unsupported);
		pr_info("unwind: %llu stacks taken before their process's tables were loaded",
			(unsigned long long)bpf_stats__sum(c->skel, STAT_NO_TABLES));
	}
	if (c->nr_sample_records)
		pr_info("ring buffer: %llu on-CPU records, %.0f bytes each on average",
			(unsigned long long)c->nr_sample_records,
			(double)c->sample_record_bytes / c->nr_sample_records);
	procs__stats(c->procs, &ps);
	if (ps.snapshots)
		pr_info("maps: %llu snapshots taken in %.1f ms, tables and runtimes included, "
			"during which nothing was drained; the longest %.1f ms (pid %d); %zu "
			"distinct kept",
			(unsigned long long)ps.snapshots, ps.ns / 1e6, ps.max_ns / 1e6,
			(int)ps.max_pid, procs__nr_snapshots(c->procs));
}

/* What the ring buffer could not take, besides samples and intervals (profile_stats has those). */
static void collector__report_ring(const struct collector *c)
{
	uint64_t lost = bpf_stats__sum(c->skel, STAT_LOST_PROCESS),
		 alone = bpf_stats__sum(c->skel, STAT_OFFCPU_SUMS_FULL),
		 samples = bpf_stats__sum(c->skel, STAT_LOST_SAMPLES),
		 intervals = bpf_stats__sum(c->skel, STAT_LOST_OFFCPU);

	if (samples || intervals)
		pr_warn("%llu samples and %llu intervals off CPU lost (the ring buffer of %llu KiB "
			"was full): try a larger --ringbuf-size, or a lower -F",
			(unsigned long long)samples, (unsigned long long)intervals,
			(unsigned long long)bpf_map__max_entries(c->skel->maps.events) / 1024);
	if (lost)
		pr_warn("%llu fork and exec events lost (ring buffer full): processes started then "
			"may be missing or show [unknown] frames; try a larger --ringbuf-size",
			(unsigned long long)lost);
	if (alone)
		pr_info("off-CPU: %llu short intervals sent alone: more than %d threads and stacks "
			"at once",
			(unsigned long long)alone, PROFILE_MAX_OFFCPU_SUMS);
	if (c->skel->rodata->sum_samples)
		pr_info("sums: %llu samples counted in the kernel, not sent, in %llu counts; %llu "
			"lost with their stacks' first sample; %llu sent with no room to count "
			"more than %d threads and stacks",
			(unsigned long long)bpf_stats__sum(c->skel, STAT_SUMMED),
			(unsigned long long)c->sums.nr_counts, (unsigned long long)c->sums.orphans,
			(unsigned long long)bpf_stats__sum(c->skel, STAT_SUMS_FULL),
			PROFILE_MAX_SAMPLE_SUMS);
}

int collector__run(struct collector *c)
{
	int err = 0;

	c->deadline = c->opts.duration_ns ? c->start_mono + c->opts.duration_ns : 0;
	while (!c->stopping) {
		/* A signal cuts the wait short: drain all the same, then look at why. */
		err = ring_buffer__poll(c->rb, DRAIN_INTERVAL_MS);
		/* Records submitted without a wakeup are only seen by consuming. */
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(c->rb);
		if (err == DRAIN_CUT)
			err = 0;
		if (err < 0 && err != -EINTR)
			break;
		err = 0;
		/* Past the deadline: stop sampling first, the rest is done at the end. */
		if (c->deadline && clock_ns(CLOCK_MONOTONIC) >= c->deadline)
			break;
		if (c->nr_stale)
			settle_stale_maps(c, false);
		forget_snapshots(c);
		refresh_bpf_progs(c, false);
		if (c->unwind_maps)
			unwind_maps__poll(c->unwind_maps);
		if (!targets_alive(c))
			break;
		if (c->opts.on_drain)
			c->opts.on_drain(c->opts.on_drain_ctx);
	}
	/* Stop sampling, then take what is still in the buffer. */
	c->stop_mono = clock_ns(CLOCK_MONOTONIC);
	/* The programs took nothing past the deadline, however late this is. */
	if (c->deadline && c->stop_mono > c->deadline)
		c->stop_mono = c->deadline;
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		bpf_link__destroy(c->links[cpu]);
		c->links[cpu] = NULL;
	}
	samples_not_taken(c);
	refresh_bpf_progs(c, true);
	count_bpf_progs(c);
	profile_bpf__detach(c->skel);
	if (c->alloc)
		alloc__detach(c->alloc);
	c->draining = true;
	if (err >= 0) {
		err = ring_buffer__consume(c->rb);
		err = err < 0 ? err : 0;
	}
	/* Drained for good: its pages (mapped twice) need not stay for the symbolizer's peak. */
	ring_buffer__free(c->rb);
	c->rb = NULL;
	if (!err && c->skel->rodata->sum_samples)
		err = sample_sums__flush(&c->sums, c->skel->maps.sample_sums, &c->own.stacks,
					 c->user_stacks);
	if (!err && c->opts.offcpu)
		err = flush_offcpu_sums(c);
	if (!err && c->opts.offcpu)
		err = offcpu_under_way(c, c->stop_mono, NULL);
	if (!err && c->opts.thread_cpu) {
		c->thread_cpu = thread_cpu__read(c->skel->maps.oncpu, c->stop_mono);
		err = c->thread_cpu ? 0 : -errno;
	}
	if (c->alloc) {
		alloc__finish(c->alloc, c->stop_mono);
		if (c->allocator_mmaps)
			pr_info("alloc: %llu anonymous mmaps made by the allocator, for heap blocks "
				"counted as such",
				(unsigned long long)c->allocator_mmaps);
		if (c->alloc_unprobed)
			pr_warn("%llu processes the targets started or exec'd were gone, or had no "
				"malloc, before their allocator could be probed: their allocations "
				"are not in the profile",
				(unsigned long long)c->alloc_unprobed);
	}
	if (c->err)
		err = c->err;
	if (err)
		pr_warn("cannot drain the ring buffer: %s", strerror(-err));
	if (c->nr_stale)
		settle_stale_maps(c, true);
	targets_alive(c);
	user_stacks__report_unwound(c->user_stacks);
	collector__report_tables(c);
	user_stacks__report_ends(c->user_stacks);
	runtimes__report(&c->runtimes);
	collector__report_ring(c);
	runtimes__finish(&c->runtimes);
	return err;
}

void collector__stop(struct collector *c)
{
	c->stopping = 1;
}

int collector__attach(struct collector *c, struct collector_window *w)
{
	if (array__reserve(&c->windows, &c->alloc_windows, c->nr_windows + 1, sizeof(*c->windows)))
		return -ENOMEM;
	stack_table__init(&w->stacks);
	w->seq = ++c->windows_attached;
	w->stacks.max_stacks = c->opts.max_stacks;
	w->stacks.no_times = c->opts.no_times;
	c->windows[c->nr_windows++] = w;
	return 0;
}

void collector__detach(struct collector *c, struct collector_window *w)
{
	struct stack_entry *s;
	size_t i;

	for (i = 0; i < c->nr_windows && c->windows[i] != w; i++)
		;
	if (i == c->nr_windows)
		return;
	memmove(&c->windows[i], &c->windows[i + 1], (c->nr_windows - i - 1) * sizeof(*c->windows));
	c->nr_windows--;
	/* Threads still off CPU at its end were so up to it. */
	if (c->opts.offcpu && offcpu_under_way(c, w->end_ns, w))
		pr_debug("cannot count the intervals off CPU under way: out of memory");
	/* Its stacks wait for no newer snapshot any more. */
	stack_table__for_each_entry(&w->stacks, i, s)
		c->nr_stale -= s->maps_stale;
}

void collector__forget_exited(struct collector *c)
{
	struct hashtab used = HASHTAB_INIT;

	/* Nothing is freed that could still be needed: what is left goes next time. */
	if (!snapshots_in_use(c, &used))
		procs__forget_exited(c->procs, &used);
	hashtab__release(&used);
}

size_t collector__nr_processes(const struct collector *c)
{
	return procs__nr(c->procs);
}

bool collector__thread_cpu_ns(const struct collector *c, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	return thread_cpu__get(c->thread_cpu, pid, tid, ns);
}

const struct stack_table *collector__stacks(const struct collector *c)
{
	return &c->own.stacks;
}

void collector__stats(const struct collector *c, struct profile_stats *stats)
{
	/*
	 * The samples the BPF program counted rather than sent are in
	 * STAT_SUMMED, but those whose first sample was lost (known at the end).
	 */
	stats->samples = c->nr_records - c->nr_offcpu_records +
			 bpf_stats__sum(c->skel, STAT_SUMMED) - c->sums.orphans;
	stats->lost_samples =
		bpf_stats__sum(c->skel, STAT_LOST_SAMPLES) + c->malformed + c->sums.orphans;
	stats->idle_samples = c->nr_idle + c->sums.idle;
	stats->not_taken = c->not_taken;
	stats->offcpu_intervals = c->nr_offcpu;
	stats->offcpu_ns = c->offcpu_ns;
	stats->lost_offcpu = bpf_stats__sum(c->skel, STAT_LOST_OFFCPU) +
			     bpf_stats__sum(c->skel, STAT_OFFCPU_DROPPED);
	stats->offcpu_short = bpf_stats__sum(c->skel, STAT_OFFCPU_SHORT);
	stats->offcpu_short_ns = bpf_stats__sum(c->skel, STAT_OFFCPU_SHORT_NS);
	stats->maps_unreadable = stack_table__unmapped_pids(&c->own.stacks);
	stats->truncated =
		bpf_stats__sum(c->skel, STAT_TRUNCATED) + user_stacks__truncated(c->user_stacks);
	stats->stack_errors = bpf_stats__sum(c->skel, STAT_USER_STACK_ERROR) +
			      bpf_stats__sum(c->skel, STAT_KERNEL_STACK_ERROR);
	if (c->alloc) {
		uint64_t peak;

		alloc__stats(c->alloc, stats, &peak);
		stats->alloc_lost += c->unknown_allocs;
	}
}

uint64_t collector__alloc_peak(const struct collector *c)
{
	uint64_t peak = 0;
	struct profile_stats stats;

	if (c->alloc)
		alloc__stats(c->alloc, &stats, &peak);
	return peak;
}

uint64_t collector__start_mono(const struct collector *c)
{
	return c->start_mono;
}

uint64_t collector__start_real(const struct collector *c)
{
	return c->start_real;
}

uint64_t collector__duration(const struct collector *c)
{
	return c->stop_mono > c->start_mono ? c->stop_mono - c->start_mono : 0;
}

int collector__child_status(const struct collector *c)
{
	return procs__child_status(c->procs);
}

int collector__alloc_cost(const struct collector *c, struct alloc_cost *cost)
{
	if (!c->alloc)
		return -ENOENT;
	alloc__cost(c->alloc, cost);
	return 0;
}

int collector__bpf_stats(const struct collector *c, bool offcpu, uint64_t *run_time_ns,
			 uint64_t *run_cnt)
{
	const struct bpf_program *prog = offcpu ? c->skel->progs.profile_switch :
						  c->skel->progs.profile_sample;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int err;

	if (bpf_program__fd(prog) < 0)
		return -ENOENT;
	err = bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len);
	if (err)
		return err;
	*run_time_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}
