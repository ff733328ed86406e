// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampling program: attached to a CPU-clock perf event on every CPU, it
 * writes one ring-buffer record per sample of a target, holding the user and
 * kernel stacks and who was running. With off-CPU recording, sched_switch
 * keeps a target thread's stacks when it leaves a CPU and writes a record
 * with the time it was away when it comes back. With --alloc, uprobes on a
 * target's allocator sample its calls by bytes. Fork and exec tracepoints
 * follow a target's children and tell user space when to read maps.
 *
 * This file composes the units, one per concern, into the programs: their
 * entry points are here, the work is in the units, each of whose heads
 * says what it owns and what it needs:
 *
 *   common.bpf.h         targets, the ring buffer, stats, the scratch record
 *   native_unwind.bpf.h  user stacks of native code: unwind tables, copies
 *   golang.bpf.h         Go: the labels of the goroutine a sample interrupted
 *   python.bpf.h         CPython's frames (the model of a runtime reader)
 *   stacks.bpf.h         a record's stacks: kernel, native, each runtime's
 *   sample.bpf.h         records: heads, sending, counting repeated ones
 *   offcpu.bpf.h         time off CPU and on CPU, on sched_switch
 *   alloc.bpf.h          the heap: allocator calls sampled at uprobes
 *
 * A runtime's reader is a unit of its own, included here before
 * stacks.bpf.h and called from record_stacks(); python.bpf.h's head says
 * what a reader receives and writes.
 *
 * The entry points come after every unit, in the order they had in one
 * file: the order in which clang meets functions steers its inlining and
 * register allocation, and keeping it kept every program's instructions
 * the same through the split (the same goes for the units' order).
 */
#include "bpf/common.bpf.h"
#include "bpf/native_unwind.bpf.h"
#include "bpf/golang.bpf.h"
#include "bpf/python.bpf.h"
#include "bpf/stacks.bpf.h"
#include "bpf/sample.bpf.h"
#include "bpf/offcpu.bpf.h"
#include "bpf/alloc.bpf.h"

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, n;
	const struct unwind_proc *proc;
	struct sample_record *r;
	__u8 *state;

	/* Every run but the idle task's, against the timer's firings (profile_clock_fired()). */
	if (tid)
		stat_inc(STAT_SAMPLE_RUNS);
	if (past_deadline())
		return 0;
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
	r->h.go_labels = go_labels(tgid);
	send_or_count(r, n, state);
	return 0;
}

/*
 * The samples the kernel did not hand profile_sample: at each firing of the
 * timer of a cpu-clock event it is attached to (perf_swevent_hrtimer(), on
 * the event's CPU), one sample due. The kernel drops it before our program
 * runs while the CPU runs another BPF program (a kprobe's, a perf
 * tracepoint's, a bpf() call on a map: bpf_overflow_handler() and
 * bpf_prog_active); a raw tracepoint's program as this one is kept from
 * running only by itself. Due minus runs is what was dropped (collector.c:
 * samples not taken). Periods a late timer skips are not counted: the
 * kernel takes one sample for them all, as for perf. Nor are firings in
 * the idle task: some kernels take no sample there (virtual CPUs: perf's
 * record has none either), and a sample of idle time is never a target's.
 */
extern const void perf_swevent_hrtimer __ksym __weak;
__u32 sample_prog_id; /* profile_sample's id, set once it is loaded */

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(profile_clock_fired, struct hrtimer *timer)
{
	const struct perf_event *event;

	if (!sample_prog_id || !&perf_swevent_hrtimer ||
	    (void *)timer->function != &perf_swevent_hrtimer || !bpf_get_current_pid_tgid())
		return 0;
	event = (void *)((unsigned long)timer -
			 bpf_core_field_offset(struct perf_event, hw.hrtimer));
	if (BPF_CORE_READ(event, prog, aux, id) == sample_prog_id)
		stat_inc(STAT_SAMPLE_DUE);
	return 0;
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

	/* Threads off CPU then are counted until the deadline by user space. */
	if (deadline_ns && now >= deadline_ns)
		return 0;
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
		/* Too short to keep: --off-cpu's documented minimum. Counted, to say how much. */
		stat_inc(STAT_OFFCPU_SHORT);
		stat_add(STAT_OFFCPU_SHORT_NS, ns);
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
 * The sampler preloaded into a command (preload/heap.c): a sampled call
 * returned, a sampled block is freed. One uprobe each, on the library's
 * file, for every process that loads it.
 */
SEC("uprobe")
int BPF_KPROBE(heap_sampled, __u64 addr, __u64 size, __u32 func, __u32 points)
{
	alloc_preloaded(ctx, addr, size, func, points);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(heap_freed, __u64 addr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u8 *state;

	if (!past_deadline() && is_sample_target(id >> 32, (__u32)id, &state))
		alloc_release(addr, true);
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
 * A process maps a file's code (a library loaded): once it was sampled,
 * the same addresses may now be other code, so its records carry a new
 * code generation from here on, by which user space reads its maps again
 * and tells its stacks apart. Code mapped before its first sample is in
 * the maps user space reads for that sample: not counted. Anonymous code
 * (a JIT's) is named through perf maps and runtimes, not by maps.
 *
 * The one hook every kernel here offers inside mmap() is the mmap lock's
 * tracepoint (no kprobes, fentry or syscall tracepoints are needed); the
 * call's arguments are the task's registers at the system call. It fires
 * for every taking of the lock, page faults included: the test of the
 * system call number comes first.
 */
#define NR_MMAP 9
#define PROT_EXEC 0x4
#define MAP_ANONYMOUS 0x20

SEC("tp_btf/mmap_lock_released")
int profile_mmap(__u64 *ctx)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u32 tgid, one = 1, *gen;
	__u8 *state;

	if (regs->orig_ax != NR_MMAP || !(regs->dx & PROT_EXEC) || (regs->r10 & MAP_ANONYMOUS) ||
	    (int)regs->r8 < 0)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	state = bpf_map_lookup_elem(&targets, &tgid);
	if (state ? !(*state & TARGET_SEEN) : !bpf_map_lookup_elem(&seen, &tgid))
		return 0;
	gen = bpf_map_lookup_elem(&code_gens, &tgid);
	if (gen)
		__sync_fetch_and_add(gen, 1);
	else
		bpf_map_update_elem(&code_gens, &tgid, &one, BPF_NOEXIST);
	code_remapped = true;
#endif
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
	bpf_map_delete_elem(&code_gens, &tgid);
	bpf_map_delete_elem(&unwind_procs, &tgid);
	if (filter_targets && !target_tid)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
