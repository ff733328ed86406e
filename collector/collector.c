// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/profile.h"
#include "common/hashtab.h"
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/proc_tree.h"
#include "common/procfs.h"
#include "common/py_frames.h"
#include "common/strset.h"
#include "alloc.h"
#include "collector.h"
#include "elf/elf_cache.h"
#include "event.h"
#include "jvm.h"
#include "profile.skel.h"
#include "python.h"
#include "stack_table.h"
#include "unwind.h"
#include "unwind_maps.h"

/* How long the reader sleeps between drains when nothing wakes it. */
#define DRAIN_INTERVAL_MS 10
/* What the ring-buffer callback returns to end a drain at the deadline or a stop. */
#define DRAIN_CUT (-ECANCELED)
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
/* A process's maps are re-read at most this often, for addresses they do not cover. */
#define MAPS_REFRESH_NS (20ULL * 1000 * 1000)
/* How long the end of a recording waits for the JVMs' last perf maps. */
#define JVM_FINISH_NS (3000ULL * 1000 * 1000)

struct target {
	pid_t pid;
	int pidfd; /* readable once the process has exited; -1 if pidfd_open() is missing */
	bool exited;
	bool child;	    /* the command we started: reap it */
	bool alloc_pending; /* exited: its blocks to be released (--alloc) */
};

/*
 * Why a user stack ends before its process's first frame: the BPF
 * unwinder's reasons (enum unwind_stop_reason), and one of user space's.
 */
#define UNWIND_STOP_COPY (UNWIND_STOP_NO_ROOM + 1) /* the end of a stack copy */
#define NR_STACK_ENDS (UNWIND_STOP_COPY + 1)

/* A file in which broken stacks end, and how many. */
struct broken_file {
	const char *name; /* interned */
	uint64_t count;
};

/*
 * The first sample of a thread's stacks that the BPF program counts the
 * later ones of (SAMPLE_SUMMED), as it was sent: the record the count goes
 * with when profiling stops.
 */
struct summed_first {
	struct sum_key key;
	size_t size;
	unsigned char record[]; /* @size bytes */
};

/* What the collector knows of one sampled process. */
struct proc_state {
	pid_t pid;
	struct proc_maps *maps; /* latest snapshot, or NULL if none could be read */
	uint64_t snapshot_time; /* CLOCK_MONOTONIC of the last attempt */
	char *cmdline;		/* shortened (procfs.h); NULL: empty or unreadable */
	char *cgroup;		/* its cgroup v2 path (procfs.h); NULL: unknown */
	uint64_t cmdline_seq;	/* both read for this window (collector_window.seq); 0: not yet */
	bool followed;		/* a live target added with its maps: -p, or a descendant */
};

struct collector {
	struct collector_opts opts;
	struct strset *strings;
	struct profile_bpf *skel;
	struct ring_buffer *rb;
	int *perf_fds;
	struct bpf_link **links;
	int nr_cpus;

	struct target *targets;
	size_t nr_targets, alloc_targets;
	int child_status;

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
	struct file_table *files;
	struct elf_cache *elves;      /* the files' ELF images, shared with the symbolizer */
	struct hashtab procs;	      /* struct proc_state by pid */
	struct proc_maps **snapshots; /* every snapshot taken, owned */
	size_t nr_stale;	      /* stacks whose snapshot misses their leaf */
	size_t nr_snapshots, alloc_snapshots;

	uint64_t start_mono, start_real, stop_mono;
	uint64_t malformed;	   /* records too short or with impossible counts */
	uint64_t unknown_allocs;   /* sampled blocks counted in no stack: the table was full */
	uint64_t allocator_mmaps;  /* anonymous mmaps the allocator made: heap blocks already */
	uint64_t alloc_unprobed;   /* processes forked or exec'd whose allocator was not probed */
	struct event event;	   /* the record being handled: too big for the stack */
	struct unwinder *unwinder; /* NULL with CALL_GRAPH_FP */
	uint64_t nr_leaf_repaired; /* samples given the caller that frame pointers skipped */
	uint64_t nr_unwound;	   /* samples unwound from a copy of the stack, here */
	uint64_t nr_unwind_truncated; /* ... whose unwinding stopped short of the outermost frame */
	uint64_t unwind_ns;	      /* CLOCK_MONOTONIC time spent unwinding them */
	uint64_t nr_offcpu;	      /* intervals off CPU received */
	uint64_t nr_offcpu_records;   /* ... in this many records (short ones are summed) */
	uint64_t nr_idle;	      /* samples of idle CPUs */
	uint64_t offcpu_ns;	      /* their total length */
	struct unwind_maps *unwind_maps; /* CALL_GRAPH_CFI's tables */
	struct python *python;		 /* NULL with no_python */
	struct alloc *alloc;		 /* NULL without alloc_rate */
	struct py_frames py_frames;	 /* what Python frames' addresses stand for */
	uint64_t nr_sample_records, sample_record_bytes; /* on-CPU records drained */
	/* User stacks whose unwinding says whether they are whole, and those that are not. */
	uint64_t nr_judged, nr_broken;
	uint64_t nr_broken_by[NR_STACK_ENDS]; /* by UNWIND_STOP_* */
	struct hashtab broken_files; /* struct broken_file by name: where broken stacks end */
	struct hashtab thread_cpu;   /* struct thread_cpu by pid and tid, with opts.thread_cpu */
	struct hashtab summed;	     /* struct summed_first by its key (sum_samples) */
	uint64_t nr_summed_counts;   /* counts read from `sample_sums` when profiling stopped */
	uint64_t summed_orphans;     /* ... samples in them whose first sample never came */
	int err;		     /* first error in the ring-buffer callback */
	volatile sig_atomic_t stopping;
	uint64_t deadline; /* CLOCK_MONOTONIC end of sampling (-d), or 0 */
	bool draining;	   /* sampling has stopped: take every record left */

	/* Asks the JVMs seen for perf maps (jvm.h); NULL if it could not start. */
	struct jvm_mapper *jvm;
};

static void proc_state__free(struct proc_state *p);

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

/* Older headers lack the capabilities split out of CAP_SYS_ADMIN in 5.8. */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Is @cap in this process's effective set? */
static bool has_capability(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

/*
 * Is this process in a user namespace other than the machine's (a
 * container's)? Its capabilities are then its namespace's only, which
 * bpf() and system-wide perf events do not take.
 */
static bool in_user_namespace(void)
{
	char *map = procfs__read_file("/proc/self/uid_map", NULL);
	unsigned long inside, outside, count;
	bool nested;

	if (!map)
		return false;
	nested = sscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3 || inside || outside ||
		 count != 4294967295UL;
	free(map);
	return nested;
}

/*
 * The kernel said no for want of privilege: say what this process lacks and
 * what to do, the sysctls that decided it as facts (lowering them is not
 * the way: they guard every program on the machine).
 */
static void warn_privilege(const char *what, int err)
{
	long paranoid = procfs__read_long("/proc/sys/kernel/perf_event_paranoid", -1);
	long bpf_off = procfs__read_long("/proc/sys/kernel/unprivileged_bpf_disabled", -1);
	/* Before Linux 5.8 both were part of CAP_SYS_ADMIN. */
	bool split = procfs__read_long("/proc/sys/kernel/cap_last_cap", CAP_BPF) >= CAP_BPF;
	bool bpf = has_capability(split ? CAP_BPF : CAP_SYS_ADMIN);
	bool perfmon = has_capability(split ? CAP_PERFMON : CAP_SYS_ADMIN);
	const char *lacks = !bpf && !perfmon ? "has neither" :
			    !bpf	     ? "lacks CAP_BPF" :
			    !perfmon	     ? "lacks CAP_PERFMON" :
					       NULL;

	if (!split && lacks)
		lacks = "lacks it";
	if (lacks)
		pr_warn("%s: %s: needs root, or %s, and this process %s "
			"(kernel.perf_event_paranoid=%ld, kernel.unprivileged_bpf_disabled=%ld "
			"here): run it as root or with sudo",
			what, strerror(err),
			split ? "CAP_BPF and CAP_PERFMON" : "CAP_SYS_ADMIN on this kernel", lacks,
			paranoid, bpf_off);
	else if (in_user_namespace())
		pr_warn("%s: %s: this process has %s in its own user namespace only (a container's), "
			"which the kernel does not take for BPF: run it outside, as root or with sudo",
			what, strerror(err), split ? "CAP_BPF and CAP_PERFMON" : "CAP_SYS_ADMIN");
	else
		pr_warn("%s: %s: refused although this process has %s "
			"(kernel.perf_event_paranoid=%ld, kernel.unprivileged_bpf_disabled=%ld "
			"here): the kernel's lockdown or a security module may forbid BPF",
			what, strerror(err), split ? "CAP_BPF and CAP_PERFMON" : "CAP_SYS_ADMIN",
			paranoid, bpf_off);
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
 * tables, perf's default, for a process's samples before its tables are
 * loaded.
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
		return CALL_GRAPH_DWARF_DEFAULT_BYTES;
	}
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
	c->child_status = -1;
	if (!opts->windows) {
		c->own.strings = strings;
		c->own.end_ns = UINT64_MAX;
		if (collector__attach(c, &c->own)) {
			err = -ENOMEM;
			pr_warn("cannot start the collector: %s", strerror(-err));
			goto out_free;
		}
	}
	c->files = file_table__new(strings);
	c->elves = elf_cache__new();
	if (py_frames__init(&c->py_frames)) {
		err = -ENOMEM;
		pr_warn("cannot start the collector: %s", strerror(-err));
		goto out_free;
	}
	c->jvm = opts->no_java ? NULL : jvm_mapper__new();
	if (!c->jvm && !opts->no_java)
		pr_debug("jvm: cannot ask JVMs for perf maps: %s", strerror(errno));
	c->perf_fds = malloc(nr_cpus * sizeof(*c->perf_fds));
	c->links = calloc(nr_cpus, sizeof(*c->links));
	if (!c->files || !c->elves || !c->perf_fds || !c->links) {
		err = -ENOMEM;
		pr_warn("cannot start the collector: %s", strerror(-err));
		goto out_free;
	}
	for (int i = 0; i < nr_cpus; i++)
		c->perf_fds[i] = -1;

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
	c->skel->rodata->python_stacks = !opts->no_python;
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
			warn_privilege("cannot load the BPF program", -err);
		else
			pr_warn("cannot load the BPF program: %s", strerror(-err));
		goto out_free;
	}
	if (opts->cgroup) {
		err = set_cgroup(c, opts->cgroup);
		if (err)
			goto out_free;
	}
	if (!opts->no_python) {
		c->python = python__new(c->elves, bpf_map__fd(c->skel->maps.python_procs),
					&c->py_frames);
		if (!c->python) {
			err = -errno;
			pr_warn("cannot start the collector: %s", strerror(-err));
			goto out_free;
		}
	}
	if (opts->alloc_rate) {
		c->alloc = alloc__new(c->skel, opts->alloc_rate);
		if (!c->alloc) {
			err = -errno;
			pr_warn("cannot start the collector: %s", strerror(-err));
			goto out_free;
		}
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
	return c;

out_free:
	collector__free(c);
	errno = -err;
	return NULL;
}

void collector__free(struct collector *c)
{
	struct proc_state *p;
	size_t i;

	if (!c)
		return;
	jvm_mapper__free(c->jvm);
	alloc__free(c->alloc);
	ring_buffer__free(c->rb);
	for (int cpu = 0; c->links && cpu < c->nr_cpus; cpu++)
		bpf_link__destroy(c->links[cpu]);
	for (int cpu = 0; c->perf_fds && cpu < c->nr_cpus; cpu++)
		if (c->perf_fds[cpu] >= 0)
			close(c->perf_fds[cpu]);
	profile_bpf__destroy(c->skel);
	unwind_maps__free(c->unwind_maps);
	unwinder__free(c->unwinder);
	python__free(c->python);
	py_frames__release(&c->py_frames);
	elf_cache__free(c->elves);
	hashtab__for_each_entry(&c->thread_cpu, i, p)
		free(p);
	hashtab__release(&c->thread_cpu);
	for (i = 0; i < c->nr_targets; i++)
		if (c->targets[i].pidfd >= 0)
			close(c->targets[i].pidfd);
	free(c->targets);
	stack_table__release(&c->own.stacks);
	free(c->windows);
	hashtab__for_each_entry(&c->procs, i, p)
		proc_state__free(p);
	hashtab__release(&c->procs);
	hashtab__for_each_entry(&c->broken_files, i, p)
		free(p);
	hashtab__release(&c->broken_files);
	hashtab__for_each_entry(&c->summed, i, p)
		free(p);
	hashtab__release(&c->summed);
	for (i = 0; i < c->nr_snapshots; i++)
		proc_maps__free(c->snapshots[i]);
	free(c->snapshots);
	file_table__free(c->files);
	free(c->links);
	free(c->perf_fds);
	free(c);
}

const struct py_frames *collector__py_frames(const struct collector *c)
{
	return &c->py_frames;
}

struct elf_cache *collector__elf_cache(struct collector *c)
{
	return c->elves;
}

static bool proc_eq(const void *entry, const void *key)
{
	return ((const struct proc_state *)entry)->pid == *(const pid_t *)key;
}

static struct proc_state *proc_state__find(struct collector *c, pid_t pid)
{
	return hashtab__find(&c->procs, hash_mix(0, pid), proc_eq, &pid);
}

static void proc_state__free(struct proc_state *p)
{
	free(p->cmdline);
	free(p->cgroup);
	free(p);
}

static struct proc_state *proc_state__get(struct collector *c, pid_t pid)
{
	bool added;
	struct proc_state *p = hashtab__find_or_add(&c->procs, hash_mix(0, pid), proc_eq, &pid,
						    sizeof(*p), &added);

	if (p && added)
		p->pid = pid;
	return p;
}

/* Take a new snapshot of @p's maps; on failure keep the previous one. */
static void proc_state__snapshot(struct collector *c, struct proc_state *p)
{
	struct proc_maps *maps;

	p->snapshot_time = clock_ns(CLOCK_MONOTONIC);
	if (array__reserve(&c->snapshots, &c->alloc_snapshots, c->nr_snapshots + 1,
			   sizeof(*c->snapshots)))
		return;
	maps = proc_maps__read(p->pid, c->files);
	if (!maps) {
		pr_debug("cannot read maps of pid %d: %s", p->pid, strerror(errno));
		return;
	}
	c->snapshots[c->nr_snapshots++] = maps;
	p->maps = maps;
	pr_debug("pid %d: snapshot of %zu executable mappings", p->pid, maps->nr);
	if (c->python) {
		python__snapshot(c->python, maps);
		/* From the first, samples look for their process's interpreter. */
		if (python__loaded(c->python))
			c->skel->bss->python_loaded = true;
	}
	jvm_mapper__see(c->jvm, maps);
	if (c->unwind_maps) {
		int err = unwind_maps__load(c->unwind_maps, maps);

		if (err)
			pr_debug("pid %d: cannot load unwind tables: %s", p->pid, strerror(-err));
	}
}

/*
 * Read @p's command line and cgroup, as they are now: when the process is
 * first seen, after it exec'd, and in each window of an agent (see
 * stack_entry__set_cmdline()). A command line that cannot be read (the
 * process exited, /proc hides it) or is empty (a kernel thread) is NULL:
 * exporters show the name.
 */
static void proc_state__read_cmdline(struct proc_state *p)
{
	char buf[PROCFS_CMDLINE_MAX + 1];
	ssize_t n = procfs__read_cmdline(p->pid, buf, sizeof(buf));

	free(p->cmdline);
	p->cmdline = n > 0 ? strdup(buf) : NULL;
	if (n < 0)
		pr_debug("cannot read the command line of pid %d: %s", p->pid, strerror(-n));
	n = procfs__read_cgroup(p->pid, buf, sizeof(buf));
	free(p->cgroup);
	p->cgroup = n > 0 ? strdup(buf) : NULL;
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
	struct proc_state *p = proc_state__get(c, s->pid);

	if (!p)
		return;
	if (p->cmdline_seq != w->seq) {
		proc_state__read_cmdline(p);
		p->cmdline_seq = w->seq;
	}
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
 * every time. A miss within MAPS_REFRESH_NS of the last snapshot (a burst
 * of new stacks as a program maps its libraries) is settled at the end.
 */
static void stack_entry__set_maps(struct collector *c, struct stack_entry *s)
{
	struct proc_state *p;

	/* Nothing to map (a kernel thread has no maps at all). */
	if (!s->nr_user)
		return;
	p = proc_state__get(c, s->pid);
	if (!p)
		return;
	if (!p->snapshot_time || (!covers_leaf(p->maps, s) &&
				  clock_ns(CLOCK_MONOTONIC) - p->snapshot_time >= MAPS_REFRESH_NS))
		proc_state__snapshot(c, p);
	s->maps = p->maps;
	s->maps_stale = !covers_leaf(p->maps, s);
	c->nr_stale += s->maps_stale;
}

/*
 * Give stacks whose leaf their snapshot missed a newer snapshot that covers
 * it, taking one if the last is older than MAPS_REFRESH_NS (or @force).
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
			struct proc_state *p;

			if (!s->maps_stale)
				continue;
			p = proc_state__get(c, s->pid);
			if (!p)
				continue;
			if (p->maps == s->maps) {
				if (!force && now - p->snapshot_time < MAPS_REFRESH_NS)
					continue;
				proc_state__snapshot(c, p);
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

/* Count @e in window @w. 0 or -ENOMEM. */
static int window_add(struct collector *c, struct collector_window *w, const struct sample_event *e)
{
	const char *thread_name, *process_name;
	struct stack_entry *s;
	bool is_new;

	thread_name = intern_comm(w->strings, e->stack.comm);
	process_name = intern_comm(w->strings, e->stack.pcomm);
	if (!thread_name || !process_name)
		return -ENOMEM;
	s = stack_table__add(&w->stacks, e, thread_name, process_name, &is_new);
	if (!s)
		return -ENOMEM;
	if (is_new) {
		stack_entry__set_maps(c, s);
		stack_entry__set_cmdline(c, w, s);
	}
	return 0;
}

/*
 * Count @e in @w: a sample when its time is in @w's span; an interval off
 * CPU for the part of it in the span, if any (@e is changed meanwhile).
 */
static int window_count(struct collector *c, struct collector_window *w, struct sample_event *e)
{
	uint64_t time = e->time_ns, weight = e->weight_ns;
	uint64_t from = time > w->begin_ns ? time : w->begin_ns;
	uint64_t to = time + weight < w->end_ns ? time + weight : w->end_ns;
	int err;

	if (e->type != EVENT_OFFCPU || !weight)
		return time >= w->begin_ns && time < w->end_ns ? window_add(c, w, e) : 0;
	if (from >= to)
		return 0;
	e->time_ns = from;
	e->weight_ns = to - from;
	err = window_add(c, w, e);
	e->time_ns = time;
	e->weight_ns = weight;
	return err;
}

static int handle_sample(struct collector *c, struct sample_event *e)
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
		err = window_count(c, c->windows[i], e);
	return err;
}

/*
 * Follow @pid until it exits, through a pidfd (which also sees a zombie as
 * exited) or, where there is none, kill(); read its maps if @snapshot.
 * 0 or -errno (-ESRCH: no such process).
 */
static int add_target(struct collector *c, pid_t pid, bool child, bool snapshot)
{
	struct target *t;
	struct proc_state *p;
	int pidfd;

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	/* Before Linux 5.3 (and under valgrind) there is no pidfd: poll with kill(). */
	if (pidfd < 0 && errno != ENOSYS)
		return -errno;
	if (pidfd < 0 && kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	if (array__reserve(&c->targets, &c->alloc_targets, c->nr_targets + 1,
			   sizeof(*c->targets))) {
		if (pidfd >= 0)
			close(pidfd);
		return -ENOMEM;
	}
	t = &c->targets[c->nr_targets++];
	t->pid = pid;
	t->pidfd = pidfd;
	t->child = child;
	t->exited = false;
	if (!snapshot)
		return 0;
	/* Snapshot first: the process may be short-lived, and its first sample is near. */
	p = proc_state__get(c, pid);
	if (!p)
		return -ENOMEM;
	proc_state__snapshot(c, p);
	proc_state__read_cmdline(p);
	p->cmdline_seq = c->windows_attached;
	p->followed = true;
	return 0;
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
	struct proc_state *p;
	int err;

	if (e->type == EVENT_FORK) {
		pr_debug("pid %u forked pid %u", e->ppid, e->pid);
		/* Found already by collector__add_descendants(), forked as it walked. */
		p = proc_state__find(c, e->pid);
		if (p && p->followed)
			return 0;
		err = add_target(c, e->pid, false, false);
		/* Probed late: what it allocates before this is missed. */
		if (!err && c->alloc && alloc__attach(c->alloc, e->pid, NULL)) {
			pr_debug("pid %u: its allocations are not sampled", e->pid);
			c->alloc_unprobed++;
		}
		/* Gone already: it left nothing to follow. */
		return err == -ESRCH ? 0 : err;
	}
	p = proc_state__find(c, e->pid);
	if (!p && !c->opts.system_wide)
		p = proc_state__get(c, e->pid);
	if (!p)
		return 0;
	pr_debug("pid %u exec'd", e->pid);
	/* The old program's blocks went with it (its records came before this one). */
	if (c->alloc)
		alloc__exit(c->alloc, e->pid, e->time_ns);
	if (c->alloc && alloc__exec(c->alloc, e->pid)) {
		pr_debug("pid %u: its allocations after the exec are not sampled", e->pid);
		c->alloc_unprobed++;
	}
	if (c->python)
		python__exec(c->python, e->pid);
	proc_state__snapshot(c, p);
	proc_state__read_cmdline(p);
	p->cmdline_seq = c->windows_attached;
	return 0;
}

/*
 * A newer snapshot of @p's maps than @maps, for a stack that has an address
 * outside them: taken now unless the last one is younger than
 * MAPS_REFRESH_NS. NULL when there is none.
 */
static const struct proc_maps *newer_maps(struct collector *c, struct proc_state *p,
					  const struct proc_maps *maps)
{
	if (p->maps == maps && clock_ns(CLOCK_MONOTONIC) - p->snapshot_time >= MAPS_REFRESH_NS)
		proc_state__snapshot(c, p);
	return p->maps != maps ? p->maps : NULL;
}

/* Is every one of the @n addresses at @ips inside a mapping of @maps? */
static bool all_mapped(const struct proc_maps *maps, const __u64 *ips, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!proc_maps__find(maps, ips[i]))
			return false;
	return true;
}

static bool broken_file_eq(const void *entry, const void *key)
{
	return ((const struct broken_file *)entry)->name == key;
}

/*
 * Count a user stack that unwinding found whole or not (@end says why not),
 * and, if not, the file its last frame is in, from @maps.
 */
static void count_stack_end(struct collector *c, const struct sample_event *e, bool whole,
			    unsigned int end, const struct proc_maps *maps)
{
	const struct thread_stacks *s = &e->stack;
	uint64_t n = event__count(e);
	const struct proc_map *map;
	struct broken_file *f;
	uint64_t hash;

	c->nr_judged += n;
	if (whole)
		return;
	c->nr_broken += n;
	c->nr_broken_by[end] += n;
	map = maps && s->nr_user ? proc_maps__find(maps, s->user[s->nr_user - 1]) : NULL;
	if (!map)
		return;
	hash = hash_mix(0, (uintptr_t)map->name);
	f = hashtab__find(&c->broken_files, hash, broken_file_eq, map->name);
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f)
			return;
		f->name = map->name;
		if (hashtab__insert(&c->broken_files, hash, f)) {
			free(f);
			return;
		}
	}
	f->count += n;
}

/* Why the user-space unwinder stopped, as the BPF unwinder would say it. */
static unsigned int user_stack_end(enum unwind_stop stop)
{
	switch (stop) {
	case UNWIND_STACK_ENDED:
		return UNWIND_STOP_COPY;
	case UNWIND_MAX_FRAMES:
		return UNWIND_STOP_MAX_FRAMES;
	default:
		return UNWIND_STOP_NO_INFO;
	}
}

/*
 * Finish the user stack of sample or interval off CPU @ev. One the BPF
 * program unwound from tables is done; one through code mapped since its
 * process's tables were loaded has them loaded again (at most every
 * MAPS_REFRESH_NS). One that carries registers and stack bytes instead is
 * unwound here: without a user stack, from its copy, with CFI, as perf's
 * --call-graph dwarf does, as far as the copy goes; a stack from frame
 * pointers (off CPU, in a process without tables) gets the
 * caller they skip put back: a leaf sampled before it set up its frame
 * pointer, or in a function built without one (a C library system call
 * wrapper, where every thread off CPU is), has its caller's frame pointer
 * still in place, so the kernel's walk goes from the leaf straight to its
 * caller's caller.
 */
static void unwind_sample(struct collector *c, struct event *ev)
{
	struct sample_event *e = &ev->sample;
	struct thread_stacks *s = &e->stack;
	struct unwind_input in = { (const uint64_t *)e->user_regs, ev->user_stack,
				   ev->user_stack_size };
	const uint64_t ip = e->user_regs[PROFILE_REG_IP];
	const struct proc_maps *maps, *newer;
	struct proc_state *p;
	enum unwind_stop stop;
	uint64_t ra;
	size_t n;
	int err;

	if (s->flags & SAMPLE_USER_UNWOUND) {
		bool whole = s->flags & SAMPLE_USER_COMPLETE;

		/* Most stacks are whole and through known code: no process to look up. */
		p = whole && !(s->flags & SAMPLE_USER_STALE) ? NULL : proc_state__get(c, e->pid);
		if (p && (s->flags & SAMPLE_USER_STALE))
			newer_maps(c, p, p->maps);
		if (s->nr_user)
			count_stack_end(c, e, whole,
					(s->flags & SAMPLE_STOP_MASK) >> SAMPLE_STOP_SHIFT,
					p ? p->maps : NULL);
		return;
	}
	if (!c->unwinder || !(s->flags & SAMPLE_USER_REGS))
		return;
	p = proc_state__get(c, e->pid);
	if (!p)
		return;
	if (!p->snapshot_time)
		proc_state__snapshot(c, p);
	maps = p->maps;
	/* No user stack yet: unwind it from the copy, as far as the copy goes. */
	if (!s->nr_user) {
		uint64_t start = clock_ns(CLOCK_MONOTONIC);

		n = unwinder__unwind(c->unwinder, maps, &in, (uint64_t *)s->user, PROFILE_MAX_STACK,
				     &stop);
		/*
		 * A stack that leaves the snapshot's mappings was unwound without
		 * the CFI of code mapped since (the snapshot at exec precedes the
		 * libraries): unwind it again with a newer one.
		 */
		if (maps && !all_mapped(maps, s->user, n) && (newer = newer_maps(c, p, maps))) {
			maps = newer;
			n = unwinder__unwind(c->unwinder, maps, &in, (uint64_t *)s->user,
					     PROFILE_MAX_STACK, &stop);
		}
		s->nr_user = n;
		c->nr_unwound++;
		c->unwind_ns += clock_ns(CLOCK_MONOTONIC) - start;
		if (stop != UNWIND_COMPLETE) {
			s->flags |= SAMPLE_USER_TRUNCATED;
			c->nr_unwind_truncated++;
		}
		count_stack_end(c, e, stop == UNWIND_COMPLETE, user_stack_end(stop), maps);
		return;
	}
	if (!maps || !s->nr_user || s->user[0] != ip)
		return;
	err = unwinder__leaf_caller(c->unwinder, maps, &in, &ra);
	if (err == -ENXIO && (newer = newer_maps(c, p, maps)))
		err = unwinder__leaf_caller(c->unwinder, newer, &in, &ra);
	if (err || (s->nr_user > 1 && s->user[1] == ra))
		return;
	/* A full stack loses its outermost frame, and was marked truncated already. */
	n = s->nr_user < PROFILE_MAX_STACK ? s->nr_user : PROFILE_MAX_STACK - 1;
	memmove(&s->user[2], &s->user[1], (n - 1) * sizeof(s->user[0]));
	s->user[1] = ra;
	s->nr_user = n + 1;
	c->nr_leaf_repaired++;
}

/* @ev's user stack, whole: unwound if it is not yet, with its Python frames in. */
static int complete_stacks(struct collector *c, struct event *ev)
{
	unwind_sample(c, ev);
	return c->python ? python__merge(c->python, &ev->sample) : 0;
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
	struct proc_state *p = proc_state__get(c, e->pid);

	if (p && (!p->snapshot_time ||
		  (p->snapshot_time < e->time_ns && !alloc__func_address(c->alloc, p->maps, e))))
		proc_state__snapshot(c, p);
}

/*
 * A sampled allocation, with its stacks whole: the allocation function
 * becomes its leaf, under which its caller shows, and its block is counted.
 */
static int handle_alloc(struct collector *c, struct sample_event *e)
{
	struct thread_stacks *st = &e->stack;
	const char *thread_name, *process_name;
	struct proc_state *p;
	struct stack_entry *s;
	uint64_t leaf;
	bool is_new;

	if (!event__stacks_valid(st)) {
		c->malformed++;
		return 0;
	}
	c->nr_records++;
	p = proc_state__get(c, e->pid);
	if (!p)
		return -ENOMEM;
	if (!p->snapshot_time)
		proc_state__snapshot(c, p);
	if (alloc__by_allocator(c->alloc, p->maps, e)) {
		c->allocator_mmaps++;
		return 0;
	}
	leaf = alloc__func_address(c->alloc, p->maps, e);
	if (leaf && st->nr_kernel == 0) {
		if (st->nr_user == PROFILE_MAX_STACK) {
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
	s = stack_table__add(&c->own.stacks, e, thread_name, process_name, &is_new);
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

static bool summed_first_eq(const void *entry, const void *key)
{
	return !memcmp(&((const struct summed_first *)entry)->key, key, sizeof(struct sum_key));
}

static uint64_t sum_key_hash(const struct sum_key *key)
{
	return hash_mix(key->tid, key->stack_hash);
}

/*
 * Keep a copy of @data, a sample the BPF program counts the thread's later
 * samples of the same stacks after (SAMPLE_SUMMED): what their count is
 * handled as when profiling stops. event__parse() has checked its size.
 */
static int remember_summed(struct collector *c, const void *data, size_t size)
{
	const struct sample_record *r = data;
	struct sum_key key = profile_sum_key(r, r->h.cpu);
	uint64_t hash = sum_key_hash(&key);
	struct summed_first *f;

	/* Two stacks of a thread whose hashes collide: the first one's stands for both. */
	if (hashtab__find(&c->summed, hash, summed_first_eq, &key))
		return 0;
	f = malloc(sizeof(*f) + size);
	if (!f)
		return -ENOMEM;
	f->key = key;
	f->size = size;
	memcpy(f->record, data, size);
	if (hashtab__insert(&c->summed, hash, f)) {
		free(f);
		return -ENOMEM;
	}
	return 0;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	struct event *ev = &c->event;
	int err;

	if (event__parse(data, size, ev)) {
		c->malformed++;
		return 0;
	}
	if (ev->type == EVENT_SAMPLE || ev->type == EVENT_OFFCPU) {
		if (ev->type == EVENT_SAMPLE) {
			c->nr_sample_records++;
			c->sample_record_bytes += size;
		}
		err = ev->type == EVENT_SAMPLE && (ev->sample.stack.flags & SAMPLE_SUMMED) ?
			      remember_summed(c, data, size) :
			      0;
		if (!err)
			err = complete_stacks(c, ev);
		if (!err)
			err = handle_sample(c, &ev->sample);
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

/* Undo add_target() of the last target, which the BPF program could not take (its map is full). */
static void forget_target(struct collector *c)
{
	struct target *t = &c->targets[--c->nr_targets];
	struct proc_state *p = proc_state__find(c, t->pid);

	if (t->pidfd >= 0)
		close(t->pidfd);
	if (p)
		p->followed = false;
}

int collector__add_target(struct collector *c, pid_t pid, bool child)
{
	__u8 state = child ? TARGET_AT_EXEC : TARGET_ACTIVE;
	struct proc_state *p = proc_state__find(c, pid);
	__u32 key = pid;
	int err;

	if (p && p->followed)
		return 0;
	/* A command about to exec: its maps are read at the exec. */
	err = add_target(c, pid, child, !child);
	if (err)
		return err;
	err = bpf_map__update_elem(c->skel->maps.targets, &key, sizeof(key), &state, sizeof(state),
				   BPF_ANY);
	if (!err && c->alloc)
		err = alloc__attach(c->alloc, pid, child ? c->opts.command_path : NULL);
	if (err)
		forget_target(c);
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
	struct proc_state *p = proc_state__find(d->c, pid);
	int err;

	if (p && p->followed)
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

/* A thread's time on CPU, from the BPF program's `oncpu` map. */
struct thread_cpu {
	uint32_t pid, tid;
	uint64_t ns;
};

static uint64_t thread_hash(uint32_t pid, uint32_t tid)
{
	return hash_mix(hash_mix(0, pid), tid);
}

static bool thread_cpu_eq(const void *entry, const void *key)
{
	const struct thread_cpu *a = entry, *b = key;

	return a->pid == b->pid && a->tid == b->tid;
}

/*
 * Take the targets' time on CPU from the BPF program, threads still on CPU
 * up to the stop. A thread missing from it (the map was full, or it never
 * left its CPU) keeps the time of its samples.
 */
static int read_thread_cpu(struct collector *c)
{
	const struct bpf_map *map = c->skel->maps.oncpu;
	struct thread_oncpu v;
	__u32 tid, next;
	bool first = true;

	while (!bpf_map__get_next_key(map, first ? NULL : &tid, &next, sizeof(next))) {
		struct thread_cpu key, *t;
		bool added;

		first = false;
		tid = next;
		if (bpf_map__lookup_elem(map, &tid, sizeof(tid), &v, sizeof(v), 0))
			continue;
		key = (struct thread_cpu){ .pid = v.pid, .tid = tid };
		t = hashtab__find_or_add(&c->thread_cpu, thread_hash(v.pid, tid), thread_cpu_eq,
					 &key, sizeof(*t), &added);
		if (!t)
			return -ENOMEM;
		*t = key;
		t->ns = v.oncpu_ns;
		if (v.in_ns && v.in_ns < c->stop_mono)
			t->ns += c->stop_mono - v.in_ns;
	}
	return 0;
}

bool collector__thread_cpu_ns(const struct collector *c, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	struct thread_cpu key = { .pid = pid, .tid = tid };
	const struct thread_cpu *t =
		hashtab__find(&c->thread_cpu, thread_hash(pid, tid), thread_cpu_eq, &key);

	if (t)
		*ns = t->ns;
	return t != NULL;
}

int collector__start(struct collector *c)
{
	int err, attached = 0;

	/* From here on (the tracepoints count time on and off CPU from their attaching). */
	c->start_mono = clock_ns(CLOCK_MONOTONIC);
	c->start_real = clock_ns(CLOCK_REALTIME);
	c->skel->bss->start_ns = c->start_mono;
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
				warn_privilege("cannot open perf events", -err);
			else
				pr_warn("cannot open a cpu-clock perf event on cpu %d: %s", cpu,
					strerror(-err));
			return err;
		}
		c->perf_fds[cpu] = fd;
		c->links[cpu] = bpf_program__attach_perf_event(c->skel->progs.profile_sample, fd);
		if (!c->links[cpu]) {
			err = -errno;
			c->links[cpu] = NULL;
			pr_warn("cannot attach the BPF program on cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		/* The link owns the event now and closes it when destroyed. */
		c->perf_fds[cpu] = -1;
		attached++;
	}
	if (!attached) {
		pr_warn("no online CPU to sample");
		return -ENODEV;
	}
	pr_debug("sampling %d cpus at %u Hz", attached, c->opts.freq_hz);
	return 0;
}

static bool target__running(const struct target *t, int *status)
{
	struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

	if (t->pidfd >= 0)
		return poll(&pfd, 1, 0) == 0;
	if (t->child)
		return waitpid(t->pid, status, WNOHANG) == 0;
	return !kill(t->pid, 0) || errno != ESRCH;
}

/* Note exited targets; true while at least one is alive. */
static bool targets_alive(struct collector *c)
{
	/* Without processes to follow (-a, --cgroup), only -d or a signal ends it. */
	bool alive = !c->nr_targets;
	struct proc_state *p;
	char path[64];
	__u32 key;

	/* With -t, the thread ends it, not its process (the one target). */
	if (c->opts.tid && c->nr_targets) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d", c->targets[0].pid, c->opts.tid);
		if (access(path, F_OK))
			return false;
	}

	for (size_t i = 0; i < c->nr_targets; i++) {
		struct target *t = &c->targets[i];

		/*
		 * --alloc: the blocks of a process seen exited in the last look
		 * are not live any more. Its records all came before its exit,
		 * and a drain since has handled them.
		 */
		if (t->exited && t->alloc_pending && c->alloc) {
			alloc__exit(c->alloc, t->pid, clock_ns(CLOCK_MONOTONIC));
			t->alloc_pending = false;
		}
		if (t->exited)
			continue;
		if (target__running(t, &c->child_status)) {
			alive = true;
			continue;
		}
		pr_debug("pid %d exited", t->pid);
		t->exited = true;
		t->alloc_pending = c->alloc != NULL;
		p = proc_state__find(c, t->pid);
		if (p)
			p->followed = false;
		/* A new process could reuse the pid: stop sampling it. */
		key = t->pid;
		bpf_map__delete_elem(c->skel->maps.targets, &key, sizeof(key), 0);
		if (t->child && t->pidfd >= 0 && waitpid(t->pid, &c->child_status, 0) < 0)
			c->child_status = -1;
		if (t->pidfd >= 0)
			close(t->pidfd);
		t->pidfd = -1;
	}
	return alive;
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
			err = w ? window_count(c, w, e) : handle_sample(c, e);
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
			err = handle_sample(c, &c->event.sample);
	}
	return err;
}

/*
 * The samples the BPF program counted rather than sent (sum_samples), each
 * count handled as its first sample's record standing for that many: as
 * the record was, with its stacks as they were then completed.
 */
static int flush_sample_sums(struct collector *c)
{
	const struct bpf_map *map = c->skel->maps.sample_sums;
	struct sample_record r;
	const struct summed_first *f;
	struct sum_key key, next;
	bool first = true;
	__u64 count;
	size_t i;
	int err = 0;

	while (!err && !bpf_map__get_next_key(map, first ? NULL : &key, &next, sizeof(next))) {
		first = false;
		key = next;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &count, sizeof(count), 0) ||
		    !count)
			continue;
		f = hashtab__find(&c->summed, sum_key_hash(&key), summed_first_eq, &key);
		/* Its first sample was lost after all (the ring buffer was full). */
		if (!f || f->size > sizeof(r) || count > UINT32_MAX) {
			c->summed_orphans += count;
			continue;
		}
		c->nr_summed_counts++;
		memcpy(&r, f->record, f->size);
		r.h.nr_intervals = count;
		/* Its first record had the maps looked at again: too late now, and done. */
		r.h.flags &= ~SAMPLE_USER_STALE;
		if (event__parse(&r, f->size, &c->event)) {
			c->malformed++;
			continue;
		}
		err = complete_stacks(c, &c->event);
		if (!err)
			err = handle_sample(c, &c->event.sample);
	}
	hashtab__for_each_entry(&c->summed, i, f)
		free((void *)f);
	hashtab__release(&c->summed);
	return err;
}

static uint64_t stat_sum(const struct collector *c, enum profile_stat stat);

static const char *const stack_end_causes[NR_STACK_ENDS] = {
	/* A stack marked truncated for no reason given: as if it had no information. */
	[UNWIND_STOP_NONE] = "code without unwind information",
	[UNWIND_STOP_NO_INFO] = "code without unwind information",
	[UNWIND_STOP_UNSUPPORTED] = "unwind rules the BPF unwinder cannot follow",
	[UNWIND_STOP_FP] = ("code without unwind tables whose frame pointers lead nowhere (a JIT, "
			    "or code built without frame pointers)"),
	[UNWIND_STOP_READ] = "stack memory that could not be read",
	[UNWIND_STOP_MAX_FRAMES] = "stacks deeper than the frame limit",
	[UNWIND_STOP_NEW_CODE] = "code mapped after its process's unwind tables were loaded",
	[UNWIND_STOP_NO_ROOM] = "unwind tables that did not fit (a larger --unwind-memory helps)",
	[UNWIND_STOP_COPY] = "the end of the stack copy (a larger --call-graph dwarf=SIZE helps)",
};

/* What ended stacks for reason @end, in this recording's terms. */
static const char *stack_end_cause(const struct collector *c, unsigned int end)
{
	/* With tables, copies are only of samples taken before their process's were loaded. */
	if (end == UNWIND_STOP_COPY && c->unwind_maps)
		return "samples taken while their process's unwind tables were being built, whose "
		       "stack copy was too short";
	return stack_end_causes[end];
}

/*
 * Say how user stacks were unwound (-v), and warn when many of them are
 * broken, with the likely cause and the file where most of them end.
 */
static void collector__report_unwinding(const struct collector *c)
{
	const struct broken_file *f, *top = NULL;
	size_t i, cause = 0;
	const char *why;

	/* Where the stacks that are not whole ended comes after, for every mode. */
	if (c->nr_unwound)
		pr_info("unwind: %llu user stacks unwound from a copy of the stack in %.1f ms",
			(unsigned long long)c->nr_unwound, c->unwind_ns / 1e6);
	if (c->unwind_maps) {
		struct unwind_maps_stats st;

		unwind_maps__stats(c->unwind_maps, &st);
		pr_info("unwind: tables of %llu files for %llu processes, %llu read from the cache in "
			"%.1f ms, the others built in %.1f ms (written to it in %.1f ms); %llu rows "
			"(%.1f MiB) loaded at the peak, of %.1f MiB (--unwind-memory); %llu evicted, "
			"%llu did not fit; %llu rows the BPF unwinder cannot follow",
			(unsigned long long)st.files, (unsigned long long)st.procs,
			(unsigned long long)st.cached, st.cache_ns / 1e6, st.build_ns / 1e6,
			st.store_ns / 1e6, (unsigned long long)st.peak_rows,
			st.peak_rows * sizeof(struct unwind_row) / 1048576.0,
			st.max_rows * sizeof(struct unwind_row) / 1048576.0,
			(unsigned long long)st.evicted, (unsigned long long)st.over_limit,
			(unsigned long long)st.unsupported);
		pr_info("unwind: %llu stacks taken before their process's tables were loaded",
			(unsigned long long)stat_sum(c, STAT_NO_TABLES));
	} else if (c->unwinder && c->opts.call_graph != CALL_GRAPH_DWARF) {
		pr_debug("unwind: %llu leaf callers restored from CFI",
			 (unsigned long long)c->nr_leaf_repaired);
	}
	if (c->nr_sample_records)
		pr_info("ring buffer: %llu on-CPU records, %.0f bytes each on average",
			(unsigned long long)c->nr_sample_records,
			(double)c->sample_record_bytes / c->nr_sample_records);
	if (!c->nr_judged)
		return;
	pr_info("unwind: %llu of %llu user stacks reach their process's first frame",
		(unsigned long long)(c->nr_judged - c->nr_broken),
		(unsigned long long)c->nr_judged);
	for (i = 0; i < NR_STACK_ENDS; i++)
		if (c->nr_broken_by[i])
			pr_info("unwind: %llu end at %s", (unsigned long long)c->nr_broken_by[i],
				stack_end_cause(c, i));
	if (c->nr_broken * 10 < c->nr_judged)
		return;
	for (i = 1; i < NR_STACK_ENDS; i++)
		if (c->nr_broken_by[i] > c->nr_broken_by[cause])
			cause = i;
	hashtab__for_each_entry(&c->broken_files, i, f)
		if (!top || f->count > top->count ||
		    (f->count == top->count && strcmp(f->name, top->name) < 0))
			top = f;
	why = stack_end_cause(c, cause);
	if (top)
		pr_warn("warning: %.0f%% of user stacks end before their process's first frame, "
			"most often (%.0f%%) in '%s'; the likely cause: %s",
			100.0 * c->nr_broken / c->nr_judged, 100.0 * top->count / c->nr_broken,
			top->name, why);
	else
		pr_warn("warning: %.0f%% of user stacks end before their process's first frame; "
			"the likely cause: %s",
			100.0 * c->nr_broken / c->nr_judged, why);
}

/* What the ring buffer could not take, besides samples and intervals (profile_stats has those). */
/* -v: what was read of Python processes' frames. */
static void collector__report_python(const struct collector *c)
{
	struct python_stats st;

	if (!c->python)
		return;
	python__stats(c->python, &st);
	if (!st.processes)
		return;
	pr_info("Python: %llu processes, %llu records with Python frames, %llu code objects read, "
		"%llu frames not named; %llu Python stacks cut short (%llu at the %d-frame limit, "
		"%llu at memory that could not be read)",
		(unsigned long long)st.processes, (unsigned long long)st.samples,
		(unsigned long long)st.code_reads, (unsigned long long)st.unnamed,
		(unsigned long long)st.truncated,
		(unsigned long long)stat_sum(c, STAT_PYTHON_TRUNCATED), PROFILE_MAX_PYTHON,
		(unsigned long long)stat_sum(c, STAT_PYTHON_ERROR));
}

static void collector__report_ring(const struct collector *c)
{
	uint64_t lost = stat_sum(c, STAT_LOST_PROCESS), alone = stat_sum(c, STAT_OFFCPU_SUMS_FULL);

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
			(unsigned long long)stat_sum(c, STAT_SUMMED),
			(unsigned long long)c->nr_summed_counts,
			(unsigned long long)c->summed_orphans,
			(unsigned long long)stat_sum(c, STAT_SUMS_FULL), PROFILE_MAX_SAMPLE_SUMS);
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
		if (c->nr_stale)
			settle_stale_maps(c, false);
		if (c->deadline && clock_ns(CLOCK_MONOTONIC) >= c->deadline)
			break;
		if (!targets_alive(c))
			break;
		if (c->opts.on_drain)
			c->opts.on_drain(c->opts.on_drain_ctx);
	}
	c->stop_mono = clock_ns(CLOCK_MONOTONIC);
	/* Stop sampling, then take what is still in the buffer. */
	for (int cpu = 0; cpu < c->nr_cpus; cpu++) {
		bpf_link__destroy(c->links[cpu]);
		c->links[cpu] = NULL;
	}
	profile_bpf__detach(c->skel);
	if (c->alloc)
		alloc__detach(c->alloc);
	c->draining = true;
	if (err >= 0) {
		err = ring_buffer__consume(c->rb);
		err = err < 0 ? err : 0;
	}
	if (!err && c->skel->rodata->sum_samples)
		err = flush_sample_sums(c);
	if (!err && c->opts.offcpu)
		err = flush_offcpu_sums(c);
	if (!err && c->opts.offcpu)
		err = offcpu_under_way(c, c->stop_mono, NULL);
	if (!err && c->opts.thread_cpu)
		err = read_thread_cpu(c);
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
	collector__report_unwinding(c);
	collector__report_python(c);
	collector__report_ring(c);
	/* The JVMs' maps as they are now, for the symbolizer that runs next. */
	jvm_mapper__finish(c->jvm, JVM_FINISH_NS);
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

/* Is @file in @used, a set of files (elf_cache_keep_fn)? */
static bool file_in_use(const struct mapped_file *file, void *used)
{
	return ptr_set__has(used, file);
}

/* A process still there, or followed until its exit is seen. */
static bool proc_state__alive(void *entry, void *arg)
{
	const struct proc_state *p = entry;

	(void)arg;
	return p->followed || !kill(p->pid, 0) || errno != ESRCH;
}

static void proc_state__drop(void *entry, void *arg)
{
	(void)arg;
	proc_state__free(entry);
}

static bool proc_known(pid_t pid, void *arg)
{
	return proc_state__find(arg, pid) != NULL;
}

void collector__forget_exited(struct collector *c)
{
	struct hashtab used = HASHTAB_INIT;
	struct proc_state *p;
	struct stack_entry *s;
	size_t i, kept = 0;

	/* Targets whose exit was seen (their descriptors closed), but the command's. */
	for (i = 0; i < c->nr_targets; i++)
		if (!c->targets[i].exited || c->targets[i].child)
			c->targets[kept++] = c->targets[i];
	c->nr_targets = kept;
	kept = 0;

	/* The processes that exited. */
	if (hashtab__retain(&c->procs, proc_state__alive, proc_state__drop, NULL))
		return;
	if (c->python)
		python__retain(c->python, proc_known, c);

	/* Then the snapshots that neither a live process nor a window's stack has. */
	hashtab__for_each_entry(&c->procs, i, p)
		if (p->maps && ptr_set__add(&used, p->maps))
			goto out_nomem;
	for (size_t w = 0; w < c->nr_windows; w++)
		stack_table__for_each_entry(&c->windows[w]->stacks, i, s)
			if (s->maps && ptr_set__add(&used, s->maps))
				goto out_nomem;
	for (i = 0; i < c->nr_snapshots; i++) {
		if (ptr_set__has(&used, c->snapshots[i]))
			c->snapshots[kept++] = c->snapshots[i];
		else
			proc_maps__free(c->snapshots[i]);
	}
	c->nr_snapshots = kept;
	hashtab__release(&used);

	/* Then the files that no snapshot left maps, and what was read of them. */
	for (i = 0; i < c->nr_snapshots; i++)
		for (size_t m = 0; m < c->snapshots[i]->nr; m++) {
			const struct mapped_file *f = c->snapshots[i]->maps[m].file;

			if (f && ptr_set__add(&used, f))
				goto out_nomem;
		}
	if (c->unwind_maps)
		unwind_maps__forget_exited(c->unwind_maps);
	elf_cache__retain(c->elves, file_in_use, &used);
	file_table__retain(c->files, file_in_use, &used);
	hashtab__release(&used);
	return;

out_nomem:
	/* Nothing is freed that could still be needed: try again next time. */
	hashtab__release(&used);
}

size_t collector__nr_processes(const struct collector *c)
{
	return c->procs.nr;
}

const struct stack_table *collector__stacks(const struct collector *c)
{
	return &c->own.stacks;
}

static uint64_t stat_sum(const struct collector *c, enum profile_stat stat)
{
	__u32 key = stat;
	uint64_t sum = 0;
	__u64 *values = calloc(c->nr_cpus, sizeof(*values));

	if (!values)
		return 0;
	if (!bpf_map__lookup_elem(c->skel->maps.stats, &key, sizeof(key), values,
				  c->nr_cpus * sizeof(*values), 0))
		for (int i = 0; i < c->nr_cpus; i++)
			sum += values[i];
	free(values);
	return sum;
}

void collector__stats(const struct collector *c, struct profile_stats *stats)
{
	/*
	 * A count of samples the BPF program kept is one record once handled
	 * (at the end); until then its samples are in STAT_SUMMED only.
	 */
	stats->samples = c->nr_records - c->nr_offcpu_records - c->nr_summed_counts +
			 stat_sum(c, STAT_SUMMED) - c->summed_orphans;
	stats->lost_samples = stat_sum(c, STAT_LOST_SAMPLES) + c->malformed + c->summed_orphans;
	stats->idle_samples = c->nr_idle;
	stats->offcpu_intervals = c->nr_offcpu;
	stats->offcpu_ns = c->offcpu_ns;
	stats->lost_offcpu = stat_sum(c, STAT_LOST_OFFCPU) + stat_sum(c, STAT_OFFCPU_DROPPED);
	stats->maps_unreadable = stack_table__unmapped_pids(&c->own.stacks);
	stats->truncated = stat_sum(c, STAT_TRUNCATED) + c->nr_unwind_truncated;
	stats->stack_errors =
		stat_sum(c, STAT_USER_STACK_ERROR) + stat_sum(c, STAT_KERNEL_STACK_ERROR);
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
	return c->child_status;
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
