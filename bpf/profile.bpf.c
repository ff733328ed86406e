// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampling program: attached to a CPU-clock perf event on every CPU, it
 * writes one ring-buffer record per sample of a target, holding the user and
 * kernel stacks and who was running. With off-CPU recording, sched_switch
 * keeps a target thread's stacks when it leaves a CPU and writes a record
 * with the time it was away when it comes back. Fork and exec tracepoints
 * follow a target's children and tell user space when to read maps.
 *
 * User stacks are unwound here, by default, from tables that user space
 * builds from each mapped file's call frame information (see unwind_row in
 * profile.h), so that records carry addresses only. Until a process's
 * tables are loaded its samples carry its registers and a copy of the top
 * of its stack instead, which user space unwinds.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/profile.h"

/* Set by user space between open and load; see collector.c. */
const volatile bool filter_targets = true; /* only tgids in `targets` */
const volatile __u32 target_tid;	   /* only this thread, if set */
const volatile bool filter_cgroup;	   /* only tasks under the cgroup in `cgroups` */
const volatile bool follow_children = true;
const volatile __u64 offcpu_min_ns = 100000;
/*
 * Intervals off CPU shorter than this are summed by thread and stack, each
 * sum sent once it reaches it (user space reads the rest when profiling
 * stops); 0: every interval is sent alone. --wall, where every interval
 * counts and a thread may block ten thousand times a second.
 */
const volatile __u64 offcpu_sum_ns;
/*
 * Count a thread's samples with the same stacks in `sample_sums` after the
 * first one is sent: what no output needs one by one (the times of samples)
 * costs nothing to send. User space reads the counts when profiling stops.
 */
const volatile bool sum_samples;
/* Samples of idle CPUs too (-a), as perf's `swapper`. */
const volatile bool sample_idle;
/* Keep each target thread's time on CPU in `oncpu` (--wall). */
const volatile bool track_oncpu;
/* Set by user space before attaching: when it started counting (bpf_ktime_get_ns()). */
__u64 start_ns;
/*
 * Set by user space once a process is in python_procs: until then, samples
 * skip the lookup (a hash lookup per sample, for nothing, in most profiles).
 */
volatile bool python_loaded;
const volatile bool offcpu_blocked_only = true; /* not the time waiting to run again */
/* Walk the user stack's frame pointers: not when user space unwinds it from CFI. */
const volatile bool user_fp_stack = true;
/* Unwind user stacks from the unwind tables, for processes that have them. */
const volatile bool unwind_tables;
/* The unit in which the user stack is copied: what is or is not present. */
#define PAGE_BYTES 4096
/*
 * Bytes of user stack a sample copies, after its record; 0: none. With
 * unwind tables, only samples of processes whose tables are not loaded.
 */
const volatile __u32 stack_copy_bytes = PROFILE_LEAF_STACK_BYTES;
/* Read the Python frames of processes in `python_procs`. */
const volatile bool python_stacks = true;
/* Wake the reader only once this much data waits, so it drains in batches. */
const volatile __u64 wakeup_bytes = 1 << 20;
/* --alloc: one sample per this many bytes allocated on average; 1: every call (profile.h). */
const volatile __u64 alloc_rate;
/* Bytes from one sampling point to the next, exponentially distributed: user space draws them. */
const volatile __u64 alloc_intervals[ALLOC_NR_INTERVALS];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32);  /* tgid */
	__type(value, __u8); /* TARGET_* */
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32); /* a cgroup directory's fd */
} cgroups SEC(".maps");

/* Processes sampled at least once since they were seen or exec'd. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized by user space before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Allocated as threads leave a CPU: a full table would take 2 KiB a thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_OFFCPU);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tid */
	__type(value, struct sample_record);
} offcpu SEC(".maps");

/* Short intervals off CPU being summed (offcpu_sum_ns). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_OFFCPU_SUMS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sum_key);
	__type(value, struct sample_record);
} offcpu_sums SEC(".maps");

/*
 * On-CPU samples counted by thread and stacks (sum_samples), after the first
 * one of each, which was sent. Preallocated: nothing is allocated in the
 * sampling interrupt. User space sizes it to 1 when it is not used.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_SAMPLE_SUMS);
	__type(key, struct sum_key);
	__type(value, __u64);
} sample_sums SEC(".maps");

/* Target threads' time on CPU (track_oncpu), read by user space when profiling stops. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_OFFCPU);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tid */
	__type(value, struct thread_oncpu);
} oncpu SEC(".maps");

/*
 * A sample with a copy of the stack, built whole and sent as long as it is:
 * its head, the addresses it has, then the registers and the stack copied
 * (compact), where a record reserved in the ring buffer would take room
 * for every address and the whole copy. Per CPU, by index: a per-CPU
 * array's values are at most 32 KiB. Sized by user space before load.
 */
struct copy_record {
	struct sample_record r;
	__u8 more[PROFILE_MAX_STACK_COPY - PROFILE_LEAF_STACK_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_record);
} copies SEC(".maps");

/* record_user(): the registers and stack go to the fixed fields. */
#define NOT_COMPACT (PROFILE_MAX_IPS + 1)

/* Room to build a record in: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_record);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_walk);
} walks SEC(".maps");

/* The unwind tables: see profile.h. Sized by user space before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE); /* user space writes the rows in place */
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFILE_MAX_UNWIND_RULES);
	__type(key, __u32);
	__type(value, struct unwind_rule);
} unwind_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_UNWIND_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct unwind_proc);
} unwind_procs SEC(".maps");

/* Processes running CPython, where their interpreter is and how it is laid out. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_PYTHON_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct python_proc);
} python_procs SEC(".maps");

/*
 * The thread state last found for a thread (by tid), so that a sample reads
 * three fields to check it rather than searching every interpreter's
 * threads: the main thread is the last of the list, and a server has
 * hundreds. Only while the process has one interpreter: a thread running
 * a subinterpreter has a state in each, and the search finds the newest.
 * A thread with none (a C library's worker) is searched for again
 * PY_SEARCH_AGAIN_NS after the last search failed, or as soon as a thread
 * state is added (the first interpreter's list of them starts elsewhere:
 * at start-up, its first one).
 */
struct python_thread {
	__u64 runtime;	 /* of the interpreter it was found in: another after an exec */
	__u64 interp;	 /* the first interpreter, when it was found or missed */
	__u64 tstate;	 /* 0: none found */
	__u64 threads;	 /* with no @tstate: @interp's first thread state then */
	__u64 missed_ns; /* ... and when */
};

#define PY_SEARCH_AGAIN_NS 100000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32); /* tid */
	__type(value, struct python_thread);
} python_threads SEC(".maps");

/* Steps of the search for a thread's state: one per thread, one per interpreter. */
#define PY_MAX_SEARCH 2048

/* Bytes of a frame read at once: every field python_offsets names is in them. */
#define PY_FRAME_BYTES 128

/*
 * One walk of a thread's Python frames, in a per-CPU map for the reason
 * unwind_walk is: the verifier checks one step for every value.
 */
struct python_walk {
	__u64 fsbase;	  /* the thread's pthread_self(), which thread_id holds */
	__u64 interp;	  /* the interpreter whose threads are being looked at */
	__u64 tstate;	  /* the thread state looked at, or the thread's once found */
	__u64 frame;	  /* the next frame to record */
	__u32 idx, nr;	  /* next slot of the record's addresses, and frames written */
	__u32 flags;	  /* SAMPLE_PYTHON_* */
	bool found;	  /* @tstate is the thread's */
	bool interp_done; /* @interp's threads are all looked at */
	__u8 buf[PY_FRAME_BYTES + 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct python_walk);
} python_walks SEC(".maps");

/* --alloc: sampled calls not returned yet, by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32); /* tid */
	__type(value, struct alloc_call);
} alloc_calls SEC(".maps");

/* --alloc: sampled blocks not freed yet; the value is the size. Resized by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ALLOC_LIVE_DEFAULT);
	__type(key, struct alloc_key);
	__type(value, __u64);
} alloc_live SEC(".maps");

/* --alloc: each CPU's bytes to go to its next sampling point; user space draws the first. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} alloc_left SEC(".maps");

struct python_ctx {
	const struct python_proc *py;
	struct python_walk *w;
	struct sample_record *r;
};

static __always_inline void stat_add(__u32 stat, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		*v += n;
}

static __always_inline void stat_inc(__u32 stat)
{
	stat_add(stat, 1);
}

static __always_inline bool is_active_target(__u32 tgid)
{
	__u8 *state = bpf_map_lookup_elem(&targets, &tgid);

	return state && (*state & ~TARGET_SEEN) == TARGET_ACTIVE;
}

/* Is the current task one we profile? */
static __always_inline bool is_target(__u32 tgid, __u32 tid)
{
	if (!tid)
		return false; /* the idle task */
	if (target_tid)
		return tid == target_tid;
	if (filter_cgroup) /* the cgroup or one below it */
		return bpf_current_task_under_cgroup(&cgroups, 0) == 1;
	if (filter_targets)
		return is_active_target(tgid);
	return true;
}

/*
 * is_target(), for a sample: *@state is where the target's state is kept
 * when it is in `targets` (-p, a command), else NULL.
 */
static __always_inline bool is_sample_target(__u32 tgid, __u32 tid, __u8 **state)
{
	*state = NULL;
	if (!tid || target_tid || filter_cgroup || !filter_targets)
		return is_target(tgid, tid);
	*state = bpf_map_lookup_elem(&targets, &tgid);
	return *state && (**state & ~TARGET_SEEN) == TARGET_ACTIVE;
}

/* The classic `state` field became `__state` in Linux 5.14. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/*
 * Target thread @t (@tid of @tgid) leaves its CPU at @now: add the time since
 * it came back. The first time it is seen leave, that is unknown: it has
 * been on CPU since the scheduler picked it (se.prev_sum_exec_runtime is
 * where that run started), and at most since counting started.
 */
static __always_inline void oncpu_leave(struct task_struct *t, __u32 tgid, __u32 tid, __u64 now,
					bool exiting)
{
	struct thread_oncpu *v, first = { .pid = tgid, .exited = exiting };
	__u64 ran;

	if (!track_oncpu)
		return;
	v = bpf_map_lookup_elem(&oncpu, &tid);
	if (v && v->exited)
		return;
	if (v)
		v->exited = exiting;
	if (v && v->in_ns) {
		v->oncpu_ns += now - v->in_ns;
		v->in_ns = 0;
		return;
	}
	ran = BPF_CORE_READ(t, se.sum_exec_runtime) - BPF_CORE_READ(t, se.prev_sum_exec_runtime);
	if (ran > now - start_ns)
		ran = now - start_ns;
	if (v) {
		v->oncpu_ns += ran;
		return;
	}
	first.oncpu_ns = ran;
	bpf_map_update_elem(&oncpu, &tid, &first, BPF_NOEXIST);
}

/* Target thread @tid comes back on CPU at @now. */
static __always_inline void oncpu_enter(__u32 tid, __u64 now)
{
	struct thread_oncpu *v;

	if (!track_oncpu)
		return;
	v = bpf_map_lookup_elem(&oncpu, &tid);
	if (v && !v->exited)
		v->in_ns = now;
}

static __always_inline bool is_runnable(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state) == 0;
	return BPF_CORE_READ((struct task_struct___old *)t, state) == 0;
}

/* Frames written by bpf_get_stack() at @buf, or -1 on error. */
static __always_inline long read_stack(void *ctx, __u64 *buf, __u64 flags)
{
	long n = bpf_get_stack(ctx, buf, PROFILE_MAX_STACK * sizeof(__u64), flags);

	return n < 0 ? -1 : (long)((__u64)n / sizeof(__u64));
}

/*
 * Where the ucontext a signal handler returns to (at the stack pointer, in
 * the signal trampoline) keeps the interrupted rbp, rsp and rip: the offsets
 * of uc_mcontext.gregs[REG_RBP], [REG_RSP] and [REG_RIP] in x86-64's ucontext_t.
 */
#define UCONTEXT_RBP 120
#define UCONTEXT_RSP 160
#define UCONTEXT_RIP 168

/*
 * One walk up a user stack, from the registers of its innermost frame.
 * Kept in a per-CPU map, not on the BPF stack: values read from a map are
 * unknown to the verifier, so it checks one step of the walk for all of
 * them, where values on the stack it would follow frame by frame, with
 * every path through the step, far past its limit.
 */
struct unwind_walk {
	__u64 ip, sp, bp;
	__u32 idx, nr; /* next slot of the record's addresses, and frames written */
	__u32 flags;   /* SAMPLE_USER_* found on the way */
	bool bp_known; /* @bp is the frame's rbp, not a register lost on the way */
	bool exact;    /* @ip is where the frame stopped (the leaf, or interrupted by a signal) */
};

/* What each step of a walk works on: the process's tables and the record. */
struct unwind_ctx {
	const struct unwind_proc *proc;
	struct sample_record *r;
};

/* The mapping of @proc that holds @addr, or NULL. */
static __always_inline const struct unwind_mapping *find_mapping(const struct unwind_proc *proc,
								 __u64 addr)
{
	__u32 lo = 0, hi = proc->nr;

	if (hi > PROFILE_MAX_UNWIND_MAPPINGS)
		hi = PROFILE_MAX_UNWIND_MAPPINGS;
	/* log2(PROFILE_MAX_UNWIND_MAPPINGS) + 1 halvings find anything. */
	for (int i = 0; i < 9 && lo < hi; i++) {
		__u32 mid = (lo + hi) / 2;
		const struct unwind_mapping *m =
			&proc->mappings[mid & (PROFILE_MAX_UNWIND_MAPPINGS - 1)];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/* The rule of the row of @m's table that covers file address @pc, or NULL. */
static __always_inline const struct unwind_rule *find_rule(const struct unwind_mapping *m, __u64 pc)
{
	__u32 first = m->first_row, lo = first, hi = first + m->nr_rows, key;
	const struct unwind_row *row;

	if (pc >= (1ULL << 32))
		return NULL;
	/* The last row at or below @pc: 25 halvings cover the largest table. */
	for (int i = 0; i < 25 && lo < hi; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		row = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!row)
			return NULL;
		if (row->pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == first)
		return NULL;
	key = lo - 1;
	row = bpf_map_lookup_elem(&unwind_rows, &key);
	if (!row)
		return NULL;
	key = row->rule;
	return bpf_map_lookup_elem(&unwind_rules, &key);
}

static __always_inline bool read_word(__u64 addr, __u64 *val)
{
	return !bpf_probe_read_user(val, sizeof(*val), (const void *)addr);
}

/* End @w's walk short: 1, bpf_loop()'s stop. */
static __always_inline long stop_truncated(struct unwind_walk *w, __u32 reason)
{
	w->flags |= SAMPLE_USER_TRUNCATED | (reason << SAMPLE_STOP_SHIFT);
	return 1;
}

/*
 * One frame up through the frame-pointer chain, for code without a table:
 * 0, or 1 to stop. A zero rbp does not end the stack as whole: code
 * without a table (a JIT's) need not keep a frame pointer at all, and a
 * HotSpot JVM's compiled code often runs with rbp 0. Outermost frames
 * that the psABI marks so (_start, a thread's start) have tables.
 */
static __always_inline long step_frame_pointer(struct unwind_walk *w)
{
	__u64 next_bp, ra;

	if (!w->bp_known || w->bp < w->sp || !read_word(w->bp, &next_bp) ||
	    !read_word(w->bp + 8, &ra))
		return stop_truncated(w, UNWIND_STOP_FP);
	w->sp = w->bp + 16;
	w->bp = next_bp;
	w->ip = ra;
	w->exact = false;
	return 0;
}

/* Out of a signal handler's trampoline, to the frame the signal interrupted. */
static __always_inline long step_signal(struct unwind_walk *w)
{
	__u64 sp = w->sp;

	if (!read_word(sp + UCONTEXT_RBP, &w->bp) || !read_word(sp + UCONTEXT_RSP, &w->sp) ||
	    !read_word(sp + UCONTEXT_RIP, &w->ip))
		return stop_truncated(w, UNWIND_STOP_READ);
	w->bp_known = true;
	w->exact = true;
	return 0;
}

/*
 * bpf_loop() callback: write the frame @w is at, then step to its caller.
 * 0 to go on, 1 to stop, with SAMPLE_USER_COMPLETE when the stack is whole
 * and SAMPLE_USER_TRUNCATED when it is not.
 */
static long unwind_step(__u32 i, void *ctx)
{
	struct unwind_ctx *c = ctx;
	const struct unwind_mapping *m;
	const struct unwind_rule *r;
	struct unwind_walk *w;
	__u64 pc, cfa, ra, bp = 0;
	__u32 idx, zero = 0;

	w = bpf_map_lookup_elem(&walks, &zero);
	if (!w)
		return 1;
	if (!w->ip) {
		w->flags |= SAMPLE_USER_COMPLETE;
		return 1;
	}
	idx = w->idx;
	if (idx >= PROFILE_MAX_IPS)
		return stop_truncated(w, UNWIND_STOP_MAX_FRAMES);
	c->r->ips[idx] = w->ip;
	w->idx = idx + 1;
	w->nr++;
	/* A return address is after the call, which may be the function's last instruction. */
	pc = w->exact ? w->ip : w->ip - 1;
	m = find_mapping(c->proc, pc);
	if (!m) {
		/* Code mapped since the tables were loaded: user space reads them again. */
		w->flags |= SAMPLE_USER_STALE;
		return stop_truncated(w, UNWIND_STOP_NEW_CODE);
	}
	if (m->nr_rows == UNWIND_MAPPING_FP)
		return step_frame_pointer(w);
	r = find_rule(m, pc - m->bias);
	if (!r)
		return stop_truncated(w, UNWIND_STOP_NO_INFO);
	switch (r->cfa) {
	case UNWIND_CFA_SP:
		cfa = w->sp + r->cfa_off;
		break;
	case UNWIND_CFA_BP:
		if (!w->bp_known)
			return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
		cfa = w->bp + r->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + r->cfa_off + ((w->ip & 15) >= (__u64)r->bp_off ? 8 : 0);
		break;
	case UNWIND_CFA_DEREF_BP:
		if (!w->bp_known || !read_word(w->bp + r->cfa_off, &cfa))
			return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
		break;
	case UNWIND_CFA_SIGNAL:
		return step_signal(w);
	case UNWIND_CFA_END:
		w->flags |= SAMPLE_USER_COMPLETE;
		return 1;
	case UNWIND_CFA_NONE:
		return stop_truncated(w, UNWIND_STOP_NO_INFO);
	case UNWIND_CFA_NO_ROOM:
		return stop_truncated(w, UNWIND_STOP_NO_ROOM);
	default:
		return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
	}
	/* The caller's frame is above this one's: anything else is a loop or garbage. */
	if (cfa <= w->sp)
		return stop_truncated(w, UNWIND_STOP_UNSUPPORTED);
	if (!read_word(cfa - 8, &ra))
		return stop_truncated(w, UNWIND_STOP_READ);
	switch (r->bp) {
	case UNWIND_BP_SAME:
		break;
	case UNWIND_BP_AT_CFA:
		w->bp_known = read_word(cfa + r->bp_off, &bp);
		w->bp = bp;
		break;
	case UNWIND_BP_AT_BP:
		w->bp_known = w->bp_known && read_word(w->bp + r->bp_off, &bp);
		w->bp = bp;
		break;
	default:
		w->bp_known = false;
	}
	w->sp = cfa;
	w->ip = ra;
	w->exact = false;
	return 0;
}

/*
 * Unwind the current task's user stack from @proc's tables into @r's
 * addresses from @idx on, at most PROFILE_MAX_STACK frames. Returns the
 * frames written; @r's flags get SAMPLE_USER_* bits.
 */
static __always_inline __u32 unwind_user(const struct unwind_proc *proc, struct sample_record *r,
					 __u32 idx)
{
	struct unwind_ctx c = { .proc = proc, .r = r };
	__u32 zero = 0;
	struct unwind_walk *w = bpf_map_lookup_elem(&walks, &zero);
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
#endif

	if (!w)
		return 0;
	r->h.flags |= SAMPLE_USER_UNWOUND;
#if defined(__TARGET_ARCH_x86)
	if (!task->mm) /* a kernel thread: no user state */
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	w->ip = regs->ip;
	w->sp = regs->sp;
	w->bp = regs->bp;
	w->idx = idx;
	w->nr = 0;
	w->flags = 0;
	w->bp_known = true;
	w->exact = true;
	bpf_loop(PROFILE_MAX_STACK, unwind_step, &c, 0);
	if (!(w->flags & (SAMPLE_USER_COMPLETE | SAMPLE_USER_TRUNCATED)))
		stop_truncated(w, UNWIND_STOP_MAX_FRAMES);
	r->h.flags |= w->flags;
	return w->nr;
#else
	return 0;
#endif
}

/*
 * The user registers and the top @n bytes of the user stack, into @r
 * (flagging it), for unwinding in user space: after its first @compact_at
 * addresses, or in its fixed fields with NOT_COMPACT. They come from the task's
 * saved user registers, not the program's context: a sample that hit in
 * the kernel has kernel registers there, and a thread leaving the CPU is
 * always in the kernel.
 */
static __always_inline void record_user(struct sample_record *r, __u32 n, __u32 compact_at)
{
	r->h.user_stack_size = 0;
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	/* Compact: right after the addresses used, in a buffer with room for it (copies). */
	__u64 *uregs = compact_at <= PROFILE_MAX_IPS ? &r->ips[compact_at] : r->user_regs;
	__u8 *stack = (__u8 *)(uregs + PROFILE_NR_REGS);
	struct pt_regs *regs;
	__u64 sp;

	if (!task->mm) /* a kernel thread: no user state */
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	uregs[0] = regs->ax;
	uregs[1] = regs->dx;
	uregs[2] = regs->cx;
	uregs[3] = regs->bx;
	uregs[4] = regs->si;
	uregs[5] = regs->di;
	uregs[6] = regs->bp;
	uregs[7] = regs->sp;
	uregs[8] = regs->r8;
	uregs[9] = regs->r9;
	uregs[10] = regs->r10;
	uregs[11] = regs->r11;
	uregs[12] = regs->r12;
	uregs[13] = regs->r13;
	uregs[14] = regs->r14;
	uregs[15] = regs->r15;
	uregs[16] = regs->ip;
	r->h.flags |= SAMPLE_USER_REGS;
	sp = uregs[PROFILE_REG_SP];
	/*
	 * A read that meets a page that is not present fails whole: the top of
	 * the stack, or, in the main thread, the random gap the kernel leaves
	 * below the environment strings, which nothing may have touched. Read
	 * a page's worth at a time and, when one fails, the part of it before
	 * the next page boundary: every frame below that page is kept.
	 */
	for (__u32 off = 0; off < PROFILE_MAX_STACK_COPY; off += PAGE_BYTES) {
		__u32 len = n - off < PAGE_BYTES ? n - off : PAGE_BYTES, part;

		if (off >= n)
			break;
		if (!bpf_probe_read_user(stack + off, len, (void *)(sp + off))) {
			r->h.user_stack_size = off + len;
			continue;
		}
		part = PAGE_BYTES - (sp & (PAGE_BYTES - 1));
		if (part < len && !bpf_probe_read_user(stack + off, part, (void *)(sp + off)))
			r->h.user_stack_size = off + part;
		break;
	}
#endif
}

/* The pointer at @addr + @off of the process's memory, or 0. */
static __always_inline __u64 py_read_ptr(__u64 addr, __u16 off)
{
	__u64 v;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (void *)(addr + off)))
		return 0;
	return v;
}

/*
 * One step of the search for the thread's PyThreadState: the next thread
 * state of the interpreter being looked at, or the next interpreter.
 */
static long python_find_step(__u32 i, void *ctx)
{
	struct python_ctx *c = ctx;
	const struct python_offsets *o = &c->py->off;
	struct python_walk *w = c->w;

	if (!w->tstate) {
		if (!w->interp)
			w->interp = py_read_ptr(c->py->runtime, o->runtime_interpreters_head);
		else
			w->interp = py_read_ptr(w->interp, o->interp_next);
		if (!w->interp)
			return 1;
		w->tstate = py_read_ptr(w->interp, o->interp_threads_head);
		return 0;
	}
	if (py_read_ptr(w->tstate, o->tstate_thread_id) == w->fsbase) {
		w->found = true;
		return 1;
	}
	w->tstate = py_read_ptr(w->tstate, o->tstate_next);
	return 0;
}

/* The @size-byte field at @off of the frame read into @w->buf. */
static __always_inline __u64 py_field(const struct python_walk *w, __u16 off, __u32 size)
{
	__u32 o = off & (PY_FRAME_BYTES - 1);

	if (size == 1)
		return w->buf[o];
	if (size == 4)
		return *(__u32 *)&w->buf[o];
	return *(__u64 *)&w->buf[o];
}

/*
 * One frame: its code object, instruction and whether it is the first its
 * call of the interpreter's loop ran, into the record. 3.12+'s entry
 * frames that stand for a C call into the loop are not recorded: they
 * mark the frame before them as such a first one.
 */
static long python_frame_step(__u32 i, void *ctx)
{
	struct python_ctx *c = ctx;
	const struct python_offsets *o = &c->py->off;
	struct python_walk *w = c->w;
	struct sample_record *r = c->r;
	__u64 code, instr, entry = 0;
	__u32 firstlineno = 0, idx, size;

	if (!w->frame)
		return 1;
	if (w->nr >= PROFILE_MAX_PYTHON) {
		w->flags |= SAMPLE_PYTHON_TRUNCATED;
		return 1;
	}
	/* The frame's own bytes only: a small one may end a page that the next does not follow. */
	size = o->frame_size;
	if (size > PY_FRAME_BYTES)
		size = PY_FRAME_BYTES;
	if (bpf_probe_read_user(w->buf, size, (void *)w->frame)) {
		w->flags |= SAMPLE_PYTHON_ERROR;
		return 1;
	}
	w->frame = py_field(w, o->frame_previous, 8);
	code = py_field(w, o->frame_code, 8);
	instr = py_field(w, o->frame_instr, 8);
	if (o->frame_owner != PY_NO_FIELD && py_field(w, o->frame_owner, 1) == o->cstack_owner) {
		idx = w->idx - 2;
		if (w->nr && idx < PROFILE_MAX_IPS)
			r->ips[idx] |= PY_FRAME_ENTRY;
		return 0;
	}
	if (o->frame_is_entry != PY_NO_FIELD)
		entry = py_field(w, o->frame_is_entry, 1) ? PY_FRAME_ENTRY : 0;
	else if (o->frame_owner == PY_NO_FIELD) /* 3.10: a call of the loop per frame */
		entry = PY_FRAME_ENTRY;
	if (!code || bpf_probe_read_user(&firstlineno, sizeof(firstlineno),
					 (void *)(code + o->code_firstlineno))) {
		w->flags |= SAMPLE_PYTHON_ERROR;
		return 1;
	}
	idx = w->idx;
	if (idx > PROFILE_MAX_IPS - 2)
		return 1;
	r->ips[idx] = (code & ~PY_FRAME_ENTRY) | entry;
	r->ips[idx + 1] = (instr & ((1ULL << PY_FRAME_LINE_SHIFT) - 1)) |
			  ((__u64)(firstlineno & 0xffff) << PY_FRAME_LINE_SHIFT);
	w->idx = idx + 2;
	w->nr++;
	return 0;
}

/*
 * The Python frames of the current thread of @py's process, innermost
 * first, into @r's addresses from @idx on, two words each. Returns how
 * many; @r's flags get SAMPLE_PYTHON_* bits. A thread that runs no Python
 * code (or not yet) has none.
 */
static __always_inline __u32 python_stack(const struct python_proc *py, struct sample_record *r,
					  __u32 idx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct python_ctx c = { .py = py, .r = r };
	const struct python_offsets *o = &py->off;
	struct python_thread *cached, found;
	__u64 interp;
	struct python_walk *w;
	__u32 zero = 0;
	__u64 frame;

	w = bpf_map_lookup_elem(&python_walks, &zero);
	if (!w)
		return 0;
	c.w = w;
#if defined(__TARGET_ARCH_x86)
	w->fsbase = task->thread.fsbase;
#else
	return 0;
#endif
	w->interp = 0;
	w->tstate = 0;
	w->found = false;
	w->idx = idx;
	w->nr = 0;
	w->flags = 0;
	interp = py_read_ptr(py->runtime, o->runtime_interpreters_head);
	cached = bpf_map_lookup_elem(&python_threads, &r->h.tid);
	if (cached && cached->runtime == py->runtime && !cached->tstate &&
	    bpf_ktime_get_ns() - cached->missed_ns < PY_SEARCH_AGAIN_NS &&
	    interp == cached->interp &&
	    py_read_ptr(interp, o->interp_threads_head) == cached->threads)
		return 0;
	if (cached && cached->runtime == py->runtime && cached->tstate &&
	    interp == cached->interp && !py_read_ptr(cached->interp, o->interp_next) &&
	    py_read_ptr(cached->tstate, o->tstate_thread_id) == w->fsbase) {
		w->tstate = cached->tstate;
		w->found = true;
	} else {
		/* Interpreters and their threads: a thousand threads, once each. */
		bpf_loop(PY_MAX_SEARCH, python_find_step, &c, 0);
		found.runtime = py->runtime;
		found.interp = w->found ? w->interp : interp;
		found.tstate = w->found ? w->tstate : 0;
		found.threads = w->found ? 0 : py_read_ptr(interp, o->interp_threads_head);
		/* The clock, not the record's time: stamp_sample() sets that later, if at all. */
		found.missed_ns = bpf_ktime_get_ns();
		bpf_map_update_elem(&python_threads, &r->h.tid, &found, BPF_ANY);
		if (!w->found)
			return 0;
	}
	frame = py_read_ptr(w->tstate, o->tstate_frame);
	if (o->cframe_current_frame != PY_NO_FIELD)
		frame = py_read_ptr(frame, o->cframe_current_frame);
	w->frame = frame;
	/* Room for an entry frame after each recorded one. */
	bpf_loop(2 * PROFILE_MAX_PYTHON, python_frame_step, &c, 0);
	if (w->frame && !(w->flags & SAMPLE_PYTHON_ERROR))
		w->flags |= SAMPLE_PYTHON_TRUNCATED;
	r->h.flags |= w->flags;
	return w->nr;
}

/* Did the sample of @ctx (a perf_event program's) interrupt user code? */
static __always_inline bool in_user(void *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/*
	 * The word that holds cs, read whole: the verifier refuses narrower
	 * reads of the registers, and kernels declare cs as 16 bits of it.
	 */
	__u64 cs = *(volatile __u64 *)&((struct bpf_perf_event_data *)ctx)->regs.cs;

	return (cs & 3) == 3;
#else
	return false; /* read the kernel stack, which is empty then */
#endif
}

/*
 * Fill @r with the current task's names and stacks. The user stack comes
 * from @proc's unwind tables if given; otherwise from the frame pointers if
 * @user_fp, and, when @copy_bytes, the registers and that much stack follow
 * for user space to unwind. A sample that interrupted user code
 * (@in_user) has no kernel stack: none is read, which saves the helper a
 * walk and the zeroing of its buffer. Returns the addresses written (the
 * kernel stack, then the user one).
 */
static __always_inline __u32 record_stacks(void *ctx, struct sample_record *r,
					   const struct unwind_proc *proc, bool user_fp,
					   __u32 copy_bytes, bool in_user, bool compact)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct python_proc *py;
	__u32 nk, nu, np;
	long n;

	r->h.flags = 0;
	r->h.user_stack_size = 0;
	/*
	 * The thread's name (its process's is name_process()'s), read straight
	 * from the task (a BTF pointer): two loads, where the helpers copy byte
	 * by byte (bpf_get_current_comm) or fault-check a string
	 * (bpf_probe_read_kernel_str): a tenth of a sample's cost. A name being changed meanwhile may come out torn;
	 * user space reads at most PROFILE_COMM_LEN bytes of it.
	 */
	__builtin_memcpy(r->h.comm, task->comm, PROFILE_COMM_LEN);

	n = in_user ? 0 : read_stack(ctx, r->ips, 0);
	if (n < 0) {
		r->h.flags |= SAMPLE_KERNEL_ERROR;
		n = 0;
	} else if (n >= PROFILE_MAX_STACK) {
		r->h.flags |= SAMPLE_KERNEL_TRUNCATED;
		n = PROFILE_MAX_STACK;
	}
	nk = n & PROFILE_MAX_STACK; /* PROFILE_MAX_STACK is 2^k - 1: a bound the verifier sees */
	r->h.nr_kernel = nk;

	if (proc) {
		nu = unwind_user(proc, r, nk);
	} else {
		n = user_fp ? read_stack(ctx, &r->ips[nk], BPF_F_USER_STACK) : 0;
		if (n < 0) {
			r->h.flags |= SAMPLE_USER_ERROR;
			n = 0;
		} else if (n >= PROFILE_MAX_STACK) {
			r->h.flags |= SAMPLE_USER_TRUNCATED;
			n = PROFILE_MAX_STACK;
		}
		nu = n;
	}
	nu &= PROFILE_MAX_STACK;
	r->h.nr_user = nu;
	np = 0;
	if (python_stacks && python_loaded && (py = bpf_map_lookup_elem(&python_procs, &r->h.pid)))
		np = python_stack(py, r, nk + nu) & (2 * PROFILE_MAX_PYTHON - 1); /* a bound */
	r->h.nr_python = np;
	if (!proc && copy_bytes)
		record_user(r, copy_bytes, compact ? nk + nu + 2 * np : NOT_COMPACT);
	return nk + nu + 2 * np;
}

/*
 * Count what went wrong with the stacks of a record being written: counted
 * here rather than when they are read, since an off-CPU thread's stacks are
 * read at every switch-out but written only for intervals long enough.
 */
static __always_inline void count_stack_flags(__u32 flags)
{
	if (flags & SAMPLE_KERNEL_ERROR)
		stat_inc(STAT_KERNEL_STACK_ERROR);
	if (flags & SAMPLE_USER_ERROR)
		stat_inc(STAT_USER_STACK_ERROR);
	if (flags & (SAMPLE_USER_TRUNCATED | SAMPLE_KERNEL_TRUNCATED | SAMPLE_PYTHON_TRUNCATED |
		     SAMPLE_PYTHON_ERROR))
		stat_inc(STAT_TRUNCATED);
	if (flags & SAMPLE_PYTHON_TRUNCATED)
		stat_inc(STAT_PYTHON_TRUNCATED);
	if (flags & SAMPLE_PYTHON_ERROR)
		stat_inc(STAT_PYTHON_ERROR);
}

/* Wake the reader when the buffer fills up; otherwise let it drain on its own schedule. */
static __always_inline __u64 wakeup_flags_full(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/*
 * Also wake it for a process's first sample (since it was seen or exec'd), so
 * it reads the process's maps, and loads its unwind tables, while it surely runs.
 */
static __always_inline __u64 wakeup_flags(__u32 tgid, __u8 *state)
{
	__u8 one = 1;

	/* The idle threads (tgid 0) have no maps to read. */
	if (!tgid)
		return wakeup_flags_full();
	/* A target's state says it, where there is one: no second lookup. */
	if (state) {
		if (*state & TARGET_SEEN)
			return wakeup_flags_full();
		*state |= TARGET_SEEN;
		return BPF_RB_FORCE_WAKEUP;
	}
	if (!bpf_map_lookup_elem(&seen, &tgid)) {
		bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
		return BPF_RB_FORCE_WAKEUP;
	}
	return wakeup_flags_full();
}

/*
 * Send @r, built elsewhere, with only the addresses it holds (and the
 * registers and stack after them when it has them). 0, or negative when it
 * could not be sent.
 */
static __always_inline long send_record(struct sample_record *r, __u32 nr_ips, __u64 wakeup)
{
	__u64 size;

	if (r->h.flags & SAMPLE_USER_REGS) {
		r->h.nr_ips_room = PROFILE_MAX_IPS;
		size = sizeof(*r);
	} else {
		if (nr_ips > PROFILE_MAX_IPS)
			nr_ips = PROFILE_MAX_IPS;
		r->h.nr_ips_room = nr_ips;
		size = sizeof(r->h) + nr_ips * sizeof(__u64);
	}
	/* No change, but a bound the verifier sees: the compiler knows it and drops the test. */
	barrier_var(size);
	if (size > sizeof(*r))
		return -1;
	count_stack_flags(r->h.flags);
	return bpf_ringbuf_output(&events, r, size, wakeup);
}

/* The unwind tables of process @tgid, or NULL when it has none (yet). */
static __always_inline const struct unwind_proc *find_proc(__u32 tgid)
{
	const struct unwind_proc *proc;

	if (!unwind_tables)
		return NULL;
	proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	if (!proc)
		stat_inc(STAT_NO_TABLES);
	return proc;
}

/*
 * The name of @r's process, from its thread group leader: after
 * record_stacks() named the thread. Only a record sent needs it (a sample
 * counted in the kernel goes with its first one's).
 */
static __always_inline void name_process(struct sample_record *r)
{
	struct task_struct *task = bpf_get_current_task_btf();

	/*
	 * The idle tasks' is set already ("swapper"). A main thread is its own
	 * group leader: one load more, where a test would have the compiler
	 * merge two copies from pointers the verifier tells apart.
	 */
	if (r->h.pid)
		__builtin_memcpy(r->h.pcomm, task->group_leader->comm, PROFILE_COMM_LEN);
}

/*
 * The head of sample @r as far as counting it needs: whose it is. When and
 * where it was taken, and its process's name, are stamp_sample()'s.
 */
static __always_inline void sample_head_init(struct sample_record *r, __u32 tgid, __u32 tid)
{
	r->h.type = EVENT_SAMPLE;
	r->h.weight_ns = 0;
	r->h.pid = tgid;
	r->h.tid = tid;
	r->h.nr_intervals = 1;
	r->h.nr_python = 0;
	r->h.alloc_func = 0;
	r->h.alloc_addr = 0;
}

/*
 * What a sample sent says besides whose it is and its stacks: when, on
 * which CPU, and its process's name. Not read for a sample counted in the
 * kernel: a clock read in a VM, and the group leader's name, are a tenth
 * of such a sample's cost.
 */
static __always_inline void stamp_sample(struct sample_record *r)
{
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.time_ns = bpf_ktime_get_ns();
	name_process(r);
}

/* What an EVENT_ALLOC record says besides its stacks. */
struct alloc_block {
	__u64 size, addr;
	__u32 func;  /* enum alloc_func */
	__u32 flags; /* SAMPLE_ALLOC_UNTRACKED, or 0 */
};

/* Make @r, whose head sample_head_init() wrote, the record of allocation @a. */
static __always_inline void alloc_head(struct sample_record *r, const struct alloc_block *a)
{
	r->h.type = EVENT_ALLOC;
	r->h.weight_ns = a->size;
	r->h.alloc_func = a->func;
	r->h.alloc_addr = a->addr;
}

/*
 * A sample with a copy of the stack (--call-graph dwarf, or a process whose
 * tables are not loaded yet): too big for the scratch, so it is built in
 * the ring buffer itself, with room for every address. @a: the allocation
 * it samples (NULL: the CPU clock's sample).
 */
static __always_inline void sample_with_copy(void *ctx, __u32 tgid, __u32 tid, __u8 *state,
					     const struct alloc_block *a)
{
	__u32 cpu = bpf_get_smp_processor_id(), n;
	struct sample_record *r = bpf_map_lookup_elem(&copies, &cpu);
	__u64 size;

	if (!r)
		return;
	sample_head_init(r, tgid, tid);
	/* An allocation is sampled in user code, at a uprobe: no kernel stack. */
	n = record_stacks(ctx, r, NULL, user_fp_stack, stack_copy_bytes, a || in_user(ctx), true);
	stamp_sample(r);
	if (a) {
		alloc_head(r, a);
		r->h.flags |= a->flags;
	}
	r->h.nr_ips_room = n;
	size = sizeof(r->h) + n * sizeof(__u64);
	if (r->h.flags & SAMPLE_USER_REGS)
		size += PROFILE_NR_REGS * sizeof(__u64) + r->h.user_stack_size;
	/* No change, but a bound the verifier sees. */
	barrier_var(size);
	if (size > sizeof(struct copy_record))
		return;
	count_stack_flags(r->h.flags);
	if (!bpf_ringbuf_output(&events, r, size, wakeup_flags(tgid, state)))
		return;
	stat_inc(a ? STAT_LOST_ALLOCS : STAT_LOST_SAMPLES);
	if (a) {
		struct alloc_key key = { .pid = tgid, .addr = a->addr };

		/* Its free would name a block user space never heard of. */
		bpf_map_delete_elem(&alloc_live, &key);
	}
}

/*
 * Send sample @r, its @nr_ips addresses used, stamped; a sample lost for
 * want of room is counted. Returns 0, or negative when it was lost.
 */
static __always_inline long send_sample(struct sample_record *r, __u32 nr_ips, __u8 *state)
{
	long err;

	stamp_sample(r);
	err = send_record(r, nr_ips, wakeup_flags(r->h.pid, state));
	if (err)
		stat_inc(STAT_LOST_SAMPLES);
	return err;
}

/*
 * Count sample @r in `sample_sums` when its thread's first sample with the
 * same stacks was sent already (sum_samples); otherwise send it, as the
 * first of a count when there is room for one (SAMPLE_SUMMED). A record
 * that user space completes (registers to unwind from, Python frames read
 * from the process) is always sent.
 */
static __always_inline void send_or_count(struct sample_record *r, __u32 nr_ips, __u8 *state)
{
	struct sum_key key;
	__u64 zero = 0, *count;

	if (!sum_samples || (r->h.flags & SAMPLE_USER_REGS) || r->h.nr_python) {
		send_sample(r, nr_ips, state);
		return;
	}
	key = profile_sum_key(r, bpf_get_smp_processor_id());
	count = bpf_map_lookup_elem(&sample_sums, &key);
	if (count) {
		/* A thread is sampled on one CPU at a time: no one else writes @count. */
		*count += 1;
		stat_inc(STAT_SUMMED);
		count_stack_flags(r->h.flags);
		return;
	}
	if (!bpf_map_update_elem(&sample_sums, &key, &zero, BPF_NOEXIST))
		r->h.flags |= SAMPLE_SUMMED;
	else
		stat_inc(STAT_SUMS_FULL);
	/* Lost: later samples would be counted for stacks user space never saw. */
	if (send_sample(r, nr_ips, state) && (r->h.flags & SAMPLE_SUMMED))
		bpf_map_delete_elem(&sample_sums, &key);
}

/*
 * A sample of an idle CPU: its kernel stack (the idle loop, or an interrupt
 * it was handling), with the process and thread named "swapper" on every CPU.
 */
static __always_inline void sample_idle_cpu(void *ctx)
{
	struct sample_record *r;
	__u32 zero = 0, n;

	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return;
	sample_head_init(r, 0, 0);
	n = record_stacks(ctx, r, NULL, false, 0, false, false);
	__builtin_memcpy(r->h.comm, "swapper\0\0\0\0\0\0\0\0", PROFILE_COMM_LEN);
	__builtin_memcpy(r->h.pcomm, r->h.comm, PROFILE_COMM_LEN);
	send_or_count(r, n, NULL);
}

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, n;
	const struct unwind_proc *proc;
	struct sample_record *r;
	__u8 *state;

	if (!tid && sample_idle) {
		sample_idle_cpu(ctx);
		return 0;
	}
	if (!is_sample_target(tgid, tid, &state))
		return 0;
	proc = find_proc(tgid);
	if (!proc && stack_copy_bytes) {
		sample_with_copy(ctx, tgid, tid, state, NULL);
		return 0;
	}
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	sample_head_init(r, tgid, tid);
	n = record_stacks(ctx, r, proc, user_fp_stack, 0, in_user(ctx), false);
	send_or_count(r, n, state);
	return 0;
}

/*
 * The stacks of an off-CPU record, hashed: the sums of short intervals are
 * kept by thread and this. A record whose user stack user space unwinds
 * has only the leaf's registers to tell it apart.
 */
static __always_inline __u64 offcpu_hash(const struct sample_record *r)
{
	const __u64 prime = 0x100000001b3ULL;
	__u64 h = profile_stack_hash(r);

	if (r->h.flags & SAMPLE_USER_REGS) {
		h = (h ^ r->user_regs[PROFILE_REG_IP]) * prime;
		h = (h ^ r->user_regs[PROFILE_REG_SP]) * prime;
		h = (h ^ r->user_regs[PROFILE_REG_BP]) * prime;
	}
	return h;
}

/* Send off-CPU record @r, counting what it stood for as lost if there is no room. */
static __always_inline void send_offcpu(struct sample_record *r)
{
	r->h.cpu = bpf_get_smp_processor_id();
	if (send_record(r, r->h.nr_kernel + r->h.nr_user + 2 * r->h.nr_python,
			wakeup_flags(r->h.pid, NULL)))
		stat_add(STAT_LOST_OFFCPU, r->h.nr_intervals);
}

/*
 * Add a short interval off CPU, @r of thread @tid, to its thread's sum for
 * the same stacks, sending the sum once it is long enough; the first one
 * of a stack starts a sum, or is sent alone when there is no room for it.
 */
static __always_inline void offcpu_add(struct sample_record *r, __u32 tid, __u64 ns)
{
	struct sum_key key = { .tid = tid, .stack_hash = offcpu_hash(r) };
	struct sample_record *sum = bpf_map_lookup_elem(&offcpu_sums, &key);

	if (sum) {
		/* A thread comes back on one CPU at a time: no one else writes @sum. */
		sum->h.weight_ns += ns;
		sum->h.nr_intervals++;
		if (sum->h.weight_ns >= offcpu_sum_ns) {
			send_offcpu(sum);
			bpf_map_delete_elem(&offcpu_sums, &key);
		}
		return;
	}
	r->h.weight_ns = ns;
	if (bpf_map_update_elem(&offcpu_sums, &key, r, BPF_NOEXIST)) {
		stat_inc(STAT_OFFCPU_SUMS_FULL);
		send_offcpu(r);
	}
}

/*
 * Off CPU: when a target thread is switched out, keep its stacks; when it is
 * switched back in, write them with the time it was away, if long enough.
 * Loaded only with --off-cpu or --wall.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(profile_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), ns;
	__u32 tgid = id >> 32, tid = (__u32)id, next_tid = next->pid, zero = 0;
	bool target = is_target(tgid, tid);
	struct sample_record *r;

	if (target)
		oncpu_leave(prev, tgid, tid, now, false);
	/*
	 * The current task is still @prev here; a dying one will not be back.
	 * One still runnable was preempted: waiting for a CPU is not blocking,
	 * but it is wall-clock time.
	 */
	if (target && !prev->exit_state && !(offcpu_blocked_only && is_runnable(prev))) {
		r = bpf_map_lookup_elem(&scratch, &zero);
		if (r) {
			const struct unwind_proc *proc = find_proc(tgid);

			r->h.type = EVENT_OFFCPU;
			r->h.time_ns = now;
			r->h.pid = tgid;
			r->h.tid = tid;
			r->h.nr_intervals = 1;
			r->h.nr_python = 0;
			r->h.alloc_func = 0;
			r->h.alloc_addr = 0;
			/*
			 * Without tables: with them expected, the top of the
			 * stack, which user space unwinds as far as it goes
			 * and counts as truncated (a frame-pointer walk through
			 * code without them would make callers up; a full
			 * copy per blocked thread would be a lot); else frame
			 * pointers.
			 */
			record_stacks(ctx, r, proc, !unwind_tables,
				      stack_copy_bytes ? PROFILE_LEAF_STACK_BYTES : 0, false,
				      false);
			name_process(r);
			if (bpf_map_update_elem(&offcpu, &tid, r, BPF_ANY))
				stat_inc(STAT_OFFCPU_DROPPED);
		}
	}

	oncpu_enter(next_tid, now);
	r = bpf_map_lookup_elem(&offcpu, &next_tid);
	if (!r)
		return 0;
	ns = now - r->h.time_ns;
	if (ns < offcpu_min_ns) {
		/* Too short to keep: --off-cpu's documented minimum. */
	} else if (ns < offcpu_sum_ns) {
		offcpu_add(r, next_tid, ns);
	} else {
		r->h.weight_ns = ns;
		send_offcpu(r);
	}
	bpf_map_delete_elem(&offcpu, &next_tid);
	return 0;
}

/*
 * --alloc. Does a call for @size bytes reach this CPU's next sampling
 * point? Each byte asked for brings it nearer; the one that reaches it
 * draws the next. Sampled so, a block of n bytes is sampled with
 * probability 1 - e^(-n/alloc_rate), which user space scales by.
 */
static __always_inline bool alloc_sampled(__u64 size)
{
	__u32 zero = 0;
	__s64 *left;

	if (alloc_rate == 1)
		return true;
	left = bpf_map_lookup_elem(&alloc_left, &zero);
	if (!left)
		return false;
	*left -= size;
	if (*left > 0)
		return false;
	*left = alloc_intervals[bpf_get_prandom_u32() & (ALLOC_NR_INTERVALS - 1)];
	return true;
}

/*
 * An allocation function was called, with @ctx, for @size bytes (and
 * @old, a realloc's block): keep the call until it returns if its return
 * must be seen, when it is sampled or it may free a watched block. Must it?
 * Not an mmap inside a sampled call of the allocator (glibc maps large
 * blocks itself): the block is the call's, counted as heap. The thread's
 * sampled call is the allocator's, not one whose return never came, when
 * its stack pointer is above this one.
 */
static __always_inline bool alloc_enter(void *ctx, __u32 func, __u64 size, __u64 memptr, __u64 old)
{
	__u64 id = bpf_get_current_pid_tgid(), sp = PT_REGS_SP((struct pt_regs *)ctx);
	__u32 tid = (__u32)id;
	struct alloc_key key = { .pid = id >> 32, .addr = old };
	struct alloc_call call = { .size = size, .memptr = memptr, .sp = sp, .func = func };
	struct alloc_call *outer;
	__u8 *state;

	if (!is_sample_target(id >> 32, tid, &state))
		return false;
	if (func == ALLOC_FUNC_MMAP && (outer = bpf_map_lookup_elem(&alloc_calls, &tid)) &&
	    outer->sp > sp)
		return false;
	call.sampled = alloc_sampled(size);
	if (old && bpf_map_lookup_elem(&alloc_live, &key))
		call.old = old;
	if (!call.sampled && !call.old)
		return false;
	return !bpf_map_update_elem(&alloc_calls, &tid, &call, BPF_ANY);
}

/*
 * A block is freed: if it was sampled, stop watching it and say so. Any
 * other costs this one failed delete, and with --alloc=1 is counted if
 * @heap: a free() of a block never seen allocated (an munmap of a file's
 * mapping is no news).
 */
static __always_inline void alloc_release(__u64 addr, bool heap)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct alloc_key key = { .pid = id >> 32, .addr = addr };
	struct free_event *e;
	__u8 *state;

	if (!addr)
		return;
	if (bpf_map_delete_elem(&alloc_live, &key)) {
		if (heap && alloc_rate == 1 && is_sample_target(key.pid, (__u32)id, &state))
			stat_inc(STAT_FOREIGN_FREES);
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(STAT_LOST_FREES);
		return;
	}
	e->type = EVENT_FREE;
	e->pid = key.pid;
	e->time_ns = bpf_ktime_get_ns();
	e->addr = addr;
	bpf_ringbuf_submit(e, wakeup_flags_full());
}

/*
 * A sampled call returned @ret: watch the block it handed out and send it
 * with the caller's stack (the registers are the caller's at a uretprobe).
 */
static __always_inline void alloc_return(void *ctx, __u64 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, n;
	struct alloc_call *call = bpf_map_lookup_elem(&alloc_calls, &tid);
	const struct unwind_proc *proc;
	struct alloc_block a = {};
	struct alloc_key key = { .pid = tgid };
	struct sample_record *r;
	__u8 *state;

	__u64 old;
	bool sampled;

	/* Not the kept call's return (a call inside it that was not kept returns). */
	if (!call || call->sp + 8 != PT_REGS_SP((struct pt_regs *)ctx))
		return;
	a.size = call->size;
	a.func = call->func;
	old = call->old;
	sampled = call->sampled;
	if (!call->memptr)
		a.addr = ret;
	else if (ret || bpf_probe_read_user(&a.addr, sizeof(a.addr), (void *)call->memptr))
		a.addr = 0; /* posix_memalign failed */
	bpf_map_delete_elem(&alloc_calls, &tid);
	/*
	 * A realloc frees its block when it succeeds, or when asked for 0 bytes
	 * (glibc frees it through free(), whose probe has released it then).
	 */
	if (old && (ret || !a.size))
		alloc_release(old, false);
	if (!sampled || !a.addr || (a.func == ALLOC_FUNC_MMAP && a.addr == (__u64)-1))
		return; /* failed: nothing was allocated */
	key.addr = a.addr;
	if (bpf_map_update_elem(&alloc_live, &key, &a.size, BPF_ANY)) {
		a.flags = SAMPLE_ALLOC_UNTRACKED;
		stat_inc(STAT_ALLOC_UNTRACKED);
	}
	is_sample_target(tgid, tid, &state);
	proc = find_proc(tgid);
	if (!proc && stack_copy_bytes) {
		sample_with_copy(ctx, tgid, tid, state, &a);
		return;
	}
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return;
	sample_head_init(r, tgid, tid);
	n = record_stacks(ctx, r, proc, user_fp_stack, 0, true, false);
	stamp_sample(r);
	alloc_head(r, &a);
	r->h.flags |= a.flags;
	if (send_record(r, n, wakeup_flags(tgid, state))) {
		stat_inc(STAT_LOST_ALLOCS);
		/* Its free would name a block user space never heard of. */
		bpf_map_delete_elem(&alloc_live, &key);
	}
}

/*
 * @nmemb * @size, or false when it overflows (the call fails). The
 * compiler would make the usual test a 128-bit multiply, which BPF has not.
 */
static __always_inline bool alloc_array_size(__u64 nmemb, __u64 size, __u64 *bytes)
{
	__u64 n = nmemb * size;

	barrier_var(n);
	*bytes = n;
	return !size || n / size == nmemb;
}

/* Does a memalign-family call with @align go to malloc, which counts it? */
static __always_inline bool alloc_small_align(__u64 cookie, __u64 align)
{
	return (cookie & ALLOC_COOKIE_SMALL_ALIGN_IS_MALLOC) && align <= ALLOC_SMALL_ALIGN;
}

#define ALLOC_MAP_ANONYMOUS 0x20

/*
 * A call of the allocator function that the probe's cookie names, with its
 * arguments in @ctx: must its return be seen (alloc_enter())? A free is
 * handled here whole.
 */
static __always_inline bool alloc_call(struct pt_regs *ctx, __u64 cookie)
{
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	__u32 func = cookie & ALLOC_COOKIE_FUNC;
	__u64 bytes = 0;

	switch (func) {
	case ALLOC_FUNC_MALLOC:
	case ALLOC_FUNC_VALLOC:
	case ALLOC_FUNC_PVALLOC:
		return alloc_enter(ctx, func, a1, 0, 0);
	case ALLOC_FUNC_CALLOC:
		return alloc_array_size(a1, a2, &bytes) && alloc_enter(ctx, func, bytes, 0, 0);
	case ALLOC_FUNC_REALLOC:
		return alloc_enter(ctx, func, a2, 0, a1);
	case ALLOC_FUNC_REALLOCARRAY: /* one that overflows fails, and frees nothing */
		return alloc_array_size(a2, a3, &bytes) && alloc_enter(ctx, func, bytes, 0, a1);
	case ALLOC_FUNC_POSIX_MEMALIGN:
		return !alloc_small_align(cookie, a2) && alloc_enter(ctx, func, a3, a1, 0);
	case ALLOC_FUNC_ALIGNED_ALLOC:
	case ALLOC_FUNC_MEMALIGN:
		return !alloc_small_align(cookie, a1) && alloc_enter(ctx, func, a2, 0, 0);
	case ALLOC_FUNC_MMAP:
		return (PT_REGS_PARM4(ctx) & ALLOC_MAP_ANONYMOUS) &&
		       alloc_enter(ctx, func, a2, 0, 0);
	case ALLOC_COOKIE_FREE:
		alloc_release(a1, true);
		return false;
	case ALLOC_COOKIE_MUNMAP:
		alloc_release(a1, false);
		return false;
	}
	return false;
}

/*
 * Every function of a target's allocator (alloc.c), its cookie saying
 * which: a uprobe on each, and a uretprobe on each that allocates.
 */
SEC("uprobe")
int alloc_probe(struct pt_regs *ctx)
{
	alloc_call(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(alloc_ret, __u64 ret)
{
	alloc_return(ctx, ret);
	return 0;
}

/*
 * The same as one uprobe session (Linux 6.13 on), which user space loads
 * instead where the kernel has them: the program runs at the entry and, if
 * that returned 0, at the return of the same call. A uretprobe costs as
 * much as the probe again on every call; a session only on the calls kept.
 * User space sets its expected attach type (libbpf 1.1 does not know the
 * section "uprobe.session").
 */
extern bool bpf_session_is_return(void) __ksym __weak;

SEC("uprobe")
int alloc_session(struct pt_regs *ctx)
{
	if (bpf_session_is_return()) {
		alloc_return(ctx, PT_REGS_RC(ctx));
		return 0;
	}
	return alloc_call(ctx, bpf_get_attach_cookie(ctx)) ? 0 : 1;
}

static __always_inline void emit_process_event(__u32 type, __u32 pid, __u32 ppid)
{
	struct process_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(STAT_LOST_PROCESS);
		return;
	}
	e->type = type;
	e->pid = pid;
	e->ppid = ppid;
	e->pad = 0;
	e->time_ns = bpf_ktime_get_ns();
	/*
	 * No wakeup: the process's first sample will wake the reader, which
	 * then finds this record before it. A process never sampled needs no
	 * maps, and a fork-heavy target must not wake us per fork. But with
	 * --alloc the new process's allocator is probed by user space, which
	 * must hear of it at once, or miss what it allocates meanwhile.
	 */
	bpf_ringbuf_submit(e, alloc_rate ? BPF_RB_FORCE_WAKEUP : wakeup_flags_full());
}

/* A target's new process (not thread) becomes a target too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(profile_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, pid = child->pid;
	__u8 one = 1;

	if (!follow_children || !filter_targets || target_tid || filter_cgroup ||
	    child->tgid != pid || !is_active_target(ptgid))
		return 0;
	if (bpf_map_update_elem(&targets, &pid, &one, BPF_ANY))
		return 0;
	emit_process_event(EVENT_FORK, pid, ptgid);
	return 0;
}

/* A target replaced its program: user space must read its maps again. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(profile_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	__u8 *state = bpf_map_lookup_elem(&targets, &tgid);

	bpf_map_delete_elem(&seen, &tgid);
	if (state)
		*state &= ~TARGET_SEEN;
	/* The old program's tables: until user space loads the new ones, samples copy the stack. */
	bpf_map_delete_elem(&unwind_procs, &tgid);
	/* The command we started: it is itself from now on. */
	if (state && *state == TARGET_AT_EXEC)
		*state = TARGET_ACTIVE;
	if (is_target(tgid, p->pid))
		emit_process_event(EVENT_EXEC, tgid, 0);
	return 0;
}

/*
 * An exited process leaves the targets: its pid may be reused. It has exited
 * when its last thread does (not necessarily the first one), which has
 * brought signal->live down to 0 by the time this tracepoint fires.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(profile_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	/*
	 * This thread's time on CPU ends here, but for its last steps: when it
	 * leaves its CPU for the last time, its process may have left the targets.
	 */
	if (is_target(tgid, p->pid))
		oncpu_leave(p, tgid, p->pid, bpf_ktime_get_ns(), true);
	if (BPF_CORE_READ(p, signal, live.counter))
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_delete_elem(&unwind_procs, &tgid);
	if (filter_targets && !target_tid)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
