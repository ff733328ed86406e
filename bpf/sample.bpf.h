/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sample.bpf.h - records of samples: their heads (whose, when, where, and
 * an allocation's), sending them to the ring buffer and when to wake the
 * reader, samples that carry a copy of the stack (`copies`), and samples
 * with the same stacks counted in the kernel (`sample_sums`). Owns
 * `seen` (which processes were sampled since they were seen or exec'd)
 * and the tunables `sum_samples`, `sample_idle` and `wakeup_bytes`.
 * Needs stacks.bpf.h to fill a record, and native_unwind.bpf.h's tunables
 * to copy a stack.
 */
#ifndef PROFILER_BPF_SAMPLE_BPF_H
#define PROFILER_BPF_SAMPLE_BPF_H

#include "bpf/common.bpf.h"
#include "bpf/native_unwind.bpf.h"
#include "bpf/stacks.bpf.h"

/*
 * Count a thread's samples with the same stacks in `sample_sums` after the
 * first one is sent: what no output needs one by one (the times of samples)
 * costs nothing to send. User space reads the counts when profiling stops.
 */
const volatile bool sum_samples;
/* Samples of idle CPUs too (-a), as perf's `swapper`. */
const volatile bool sample_idle;

/* Wake the reader only once this much data waits, so it drains in batches. */
const volatile __u64 wakeup_bytes = 1 << 20;

/* Processes sampled at least once since they were seen or exec'd. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} seen SEC(".maps");

/*
 * The code generation of processes sampled already (struct sample_head's
 * code_gen): how many times each mapped a file's code since, counted by
 * profile_mmap(). Set once any has: until then, no lookup per sample.
 */
volatile bool code_remapped;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32);   /* tgid */
	__type(value, __u32); /* its code generation */
} code_gens SEC(".maps");

static __always_inline __u32 code_gen(__u32 tgid)
{
	__u32 *gen;

	if (!code_remapped || !tgid || !(gen = bpf_map_lookup_elem(&code_gens, &tgid)))
		return 0;
	return *gen;
}

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
	r->h.code_gen = code_gen(tgid);
	r->h.alloc_points = 0;
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
	__u32 func;   /* enum alloc_func */
	__u32 flags;  /* SAMPLE_ALLOC_UNTRACKED, SAMPLE_ALLOC_PRELOADED, or 0 */
	__u32 points; /* SAMPLE_ALLOC_PRELOADED: sampling points reached (alloc_points) */
};

/* Make @r, whose head sample_head_init() wrote, the record of allocation @a. */
static __always_inline void alloc_head(struct sample_record *r, const struct alloc_block *a)
{
	r->h.type = EVENT_ALLOC;
	r->h.weight_ns = a->size;
	r->h.alloc_func = a->func;
	r->h.alloc_addr = a->addr;
	r->h.alloc_points = a->points;
}

/*
 * A sample with a copy of the stack (--call-graph dwarf, or a process whose
 * tables are not loaded yet): too big for the scratch, so it is built in
 * the ring buffer itself, with room for every address. @a: the allocation
 * it samples (NULL: the CPU clock's sample). Returns 0, or negative when
 * it was lost for want of room (counted).
 */
static __always_inline long sample_with_copy(void *ctx, __u32 tgid, __u32 tid, __u8 *state,
					     const struct alloc_block *a)
{
	__u32 cpu = bpf_get_smp_processor_id(), n;
	struct sample_record *r = bpf_map_lookup_elem(&copies, &cpu);
	__u64 size;
	long err;

	if (!r)
		return 0;
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
		return 0;
	count_stack_flags(r->h.flags);
	err = bpf_ringbuf_output(&events, r, size, wakeup_flags(tgid, state));
	if (err)
		stat_inc(a ? STAT_LOST_ALLOCS : STAT_LOST_SAMPLES);
	return err;
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

#endif
