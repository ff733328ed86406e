/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * stacks.bpf.h - the stacks of a record: the kernel's (bpf_get_stack()),
 * the native user stack (native_unwind.bpf.h, or frame pointers), then
 * each runtime's frames (python.bpf.h; v8.bpf.h's are in the native
 * stack, found on its walk), in that order in its addresses;
 * and the counting of what went wrong with them. A new runtime reader is
 * one call in record_stacks(). Owns no map.
 */
#ifndef PROFILER_BPF_STACKS_BPF_H
#define PROFILER_BPF_STACKS_BPF_H

#include "bpf/common.bpf.h"
#include "bpf/native_unwind.bpf.h"
#include "bpf/python.bpf.h"
#include "bpf/v8.bpf.h"

/* Frames written by bpf_get_stack() at @buf, or -1 on error. */
static __always_inline long read_stack(void *ctx, __u64 *buf, __u64 flags)
{
	long n = bpf_get_stack(ctx, buf, PROFILE_MAX_STACK * sizeof(__u64), flags);

	return n < 0 ? -1 : (long)((__u64)n / sizeof(__u64));
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
	if (nu > PROFILE_MAX_USER_STACK) /* a bound the verifier sees */
		nu = PROFILE_MAX_USER_STACK;
	r->h.nr_user = nu;
	/* A runtime's frames follow the native ones: see python.bpf.h for a reader's shape. */
	np = 0;
	if ((py = python_proc(r)))
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

#endif
