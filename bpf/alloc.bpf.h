/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * alloc.bpf.h - the heap (--alloc): allocator calls sampled by bytes at
 * uprobes on a target's allocator (collector/alloc.c attaches them), the
 * calls in flight (`alloc_calls`), the sampled blocks not freed yet
 * (`alloc_live`) and each CPU's bytes to its next sampling point
 * (`alloc_left`); the tunables `alloc_rate` and `alloc_intervals`. A
 * sampled block goes out as an EVENT_ALLOC record with the caller's
 * stacks, its free as an EVENT_FREE. Needs sample.bpf.h to build and send
 * records, native_unwind.bpf.h for the process's tables.
 */
#ifndef PROFILER_BPF_ALLOC_BPF_H
#define PROFILER_BPF_ALLOC_BPF_H

#include "bpf/common.bpf.h"
#include "bpf/native_unwind.bpf.h"
#include "bpf/stacks.bpf.h"
#include "bpf/sample.bpf.h"

/* --alloc: one sample per this many bytes allocated on average; 1: every call (profile.h). */
const volatile __u64 alloc_rate;
/* Bytes from one sampling point to the next, exponentially distributed: user space draws them. */
const volatile __u64 alloc_intervals[ALLOC_NR_INTERVALS];

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
 * Sampled block @a was handed out: watch it and send it with the stack of
 * @ctx's registers.
 */
static __always_inline void alloc_send(void *ctx, struct alloc_block *a)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, n;
	struct alloc_key key = { .pid = tgid, .addr = a->addr };
	const struct unwind_proc *proc;
	struct sample_record *r;
	__u8 *state;

	if (bpf_map_update_elem(&alloc_live, &key, &a->size, BPF_ANY)) {
		a->flags |= SAMPLE_ALLOC_UNTRACKED;
		stat_inc(STAT_ALLOC_UNTRACKED);
	}
	is_sample_target(tgid, tid, &state);
	proc = find_proc(tgid);
	if (proc || !stack_copy_bytes) {
		r = bpf_map_lookup_elem(&scratch, &zero);
		if (!r)
			return;
		sample_head_init(r, tgid, tid);
		n = record_stacks(ctx, r, proc, user_fp_stack, 0, true, false);
		/*
		 * Not a block the preloaded sampler took before its process's
		 * tables had the sampler's library (mapped after the exec they
		 * were loaded at): that stack stops at the sampler, and is
		 * unwound from a copy in user space instead, with maps read then.
		 */
		if (!proc || !stack_copy_bytes || !(a->flags & SAMPLE_ALLOC_PRELOADED) ||
		    (r->h.flags & SAMPLE_STOP_MASK) != UNWIND_STOP_NEW_CODE << SAMPLE_STOP_SHIFT) {
			stamp_sample(r);
			alloc_head(r, a);
			r->h.flags |= a->flags;
			if (send_record(r, n, wakeup_flags(tgid, state))) {
				stat_inc(STAT_LOST_ALLOCS);
				/* Its free would name a block user space never heard of. */
				bpf_map_delete_elem(&alloc_live, &key);
			}
			return;
		}
	}
	/* Lost: its free would name a block user space never heard of. */
	if (sample_with_copy(ctx, tgid, tid, state, a))
		bpf_map_delete_elem(&alloc_live, &key);
}

/*
 * A sampled call returned @ret: watch the block it handed out and send it
 * with the caller's stack (the registers are the caller's at a uretprobe).
 */
static __always_inline void alloc_return(void *ctx, __u64 ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct alloc_call *call = bpf_map_lookup_elem(&alloc_calls, &tid);
	struct alloc_block a = {};
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
	alloc_send(ctx, &a);
}

/*
 * The sampler preloaded into a command (preload/heap.c) sampled a call of
 * @func for @size bytes that returned @addr, whose bytes reached @points of
 * its sampling points: its uprobe, at the entry of
 * profiler_heap_sampled(), whose caller is the allocation function. Every
 * process that loaded the sampler runs it: only targets count.
 */
static __always_inline void alloc_preloaded(void *ctx, __u64 addr, __u64 size, __u32 func,
					    __u32 points)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct alloc_block a = {
		.addr = addr,
		.size = size,
		.func = func,
		.flags = SAMPLE_ALLOC_PRELOADED,
		.points = points,
	};
	__u8 *state;

	if (!addr || func >= NR_ALLOC_FUNCS || past_deadline() ||
	    !is_sample_target(id >> 32, (__u32)id, &state))
		return;
	alloc_send(ctx, &a);
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

	if (past_deadline())
		return false;
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

#endif
