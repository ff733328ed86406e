/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * offcpu.bpf.h - time off CPU (--off-cpu, --wall): a target thread's
 * stacks kept as it leaves its CPU (`offcpu`) and sent with the time it
 * was away when it comes back, short intervals summed by thread and
 * stacks (`offcpu_sums`); and each target thread's time on CPU (`oncpu`,
 * --wall). Owns those maps and the tunables `offcpu_*`, `track_oncpu` and
 * `start_ns`; profile.bpf.c's profile_switch (sched_switch) and
 * profile_exit use them. Needs sample.bpf.h to send its records.
 */
#ifndef PROFILER_BPF_OFFCPU_BPF_H
#define PROFILER_BPF_OFFCPU_BPF_H

#include "bpf/common.bpf.h"
#include "bpf/sample.bpf.h"

const volatile __u64 offcpu_min_ns = 100000;
/*
 * Intervals off CPU shorter than this are summed by thread and stack, each
 * sum sent once it reaches it (user space reads the rest when profiling
 * stops); 0: every interval is sent alone. --wall, where every interval
 * counts and a thread may block ten thousand times a second.
 */
const volatile __u64 offcpu_sum_ns;

/* Keep each target thread's time on CPU in `oncpu` (--wall). */
const volatile bool track_oncpu;
/* Set by user space before attaching: when it started counting (bpf_ktime_get_ns()). */
__u64 start_ns;

const volatile bool offcpu_blocked_only = true; /* not the time waiting to run again */

/*
 * Allocated as threads leave a CPU, each the size of a whole record (10,720
 * bytes, room for 1,024 user frames, for each thread off CPU): a full
 * table would take that for each possible thread.
 */
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

/* Target threads' time on CPU (track_oncpu), read by user space when profiling stops. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_OFFCPU);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tid */
	__type(value, struct thread_oncpu);
} oncpu SEC(".maps");

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

#endif
