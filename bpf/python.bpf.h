/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * python.bpf.h - CPython's frames: a runtime reader, the model for the
 * next ones (Go, Java, Node, Ruby, PHP), each a unit of its own with the
 * same two functions, called from one place, record_stacks():
 *
 *   const struct python_proc *python_proc(const struct sample_record *r)
 *	Does @r's process run the runtime? Its state there (where the
 *	interpreter is, the layout of its structures for this release),
 *	or NULL: most processes, at the cost of a hash lookup, or none
 *	while no process does (`python_loaded`).
 *   __u32 python_stack(const struct python_proc *py, struct sample_record *r, __u32 idx)
 *	The frames of the current thread.
 *
 * What a reader receives: the record being built, whose head names the
 * process and thread (r->h.pid, r->h.tid) and whose addresses hold the
 * kernel and native user stacks; and @idx, the first free word of r->ips
 * after them. It runs in the sampled thread's context (a perf event, an
 * allocator's uprobe, or sched_switch as the thread leaves its CPU), so
 * bpf_get_current_task_btf() is that thread.
 *
 * What it writes: its frames into r->ips from @idx on, innermost first,
 * never at or past PROFILE_MAX_IPS (two words a frame here: the code
 * object and the instruction, see python_frame in profile.h); its own
 * SAMPLE_PYTHON_* flags into r->h.flags, counted by count_stack_flags().
 * It returns the frames written; the caller masks the count (a bound the
 * verifier sees) and keeps it in the head (r->h.nr_python), which tells
 * user space where the frames are and how many. Nothing else of the
 * record is the reader's.
 *
 * What it owns: the processes that run the runtime and its layout there
 * (`python_procs`, filled by collector/python.c), a per-thread cache
 * (`python_threads`), its walk's state (`python_walks`, per CPU: the
 * verifier checks one bpf_loop() step for every value), and the tunables
 * `python_stacks` and `python_loaded`. Needs common.bpf.h only.
 */
#ifndef PROFILER_BPF_PYTHON_BPF_H
#define PROFILER_BPF_PYTHON_BPF_H

#include "bpf/common.bpf.h"

/*
 * Set by user space once a process is in python_procs: until then, samples
 * skip the lookup (a hash lookup per sample, for nothing, in most profiles).
 */
volatile bool python_loaded;

/* Read the Python frames of processes in `python_procs`. */
const volatile bool python_stacks = true;

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

struct python_ctx {
	const struct python_proc *py;
	struct python_walk *w;
	struct sample_record *r;
};

/* The interpreter of @r's process, or NULL when it runs none (we know of). */
static __always_inline const struct python_proc *python_proc(const struct sample_record *r)
{
	if (!python_stacks || !python_loaded)
		return NULL;
	return bpf_map_lookup_elem(&python_procs, &r->h.pid);
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

#endif
