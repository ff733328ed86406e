// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampling program: attached to a CPU-clock perf event on every CPU, it
 * writes one ring-buffer record per sample of a target, holding the user and
 * kernel stacks and who was running. With off-CPU recording, sched_switch
 * keeps a target thread's stacks when it leaves a CPU and writes a record
 * with the time it was away when it comes back. Fork and exec tracepoints
 * follow a target's children and tell user space when to read maps.
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
const volatile bool offcpu_blocked_only = true; /* not the time waiting to run again */
/* Walk the user stack's frame pointers: not when user space unwinds it from CFI. */
const volatile bool user_fp_stack = true;
/* The unit in which the user stack is copied: what is or is not present. */
#define PAGE_BYTES 4096
/* Bytes of user stack a sample copies, after its record; 0: none. */
const volatile __u32 stack_copy_bytes = PROFILE_LEAF_STACK_BYTES;
/* Wake the reader only once this much data waits, so it drains in batches. */
const volatile __u64 wakeup_bytes = 1 << 20;

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
	__type(value, struct offcpu_start);
} offcpu SEC(".maps");

/* Room to fill an offcpu value in: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} offcpu_scratch SEC(".maps");

static __always_inline void stat_inc(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		(*v)++;
}

static __always_inline bool is_active_target(__u32 tgid)
{
	__u8 *state = bpf_map_lookup_elem(&targets, &tgid);

	return state && *state == TARGET_ACTIVE;
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

/* The classic `state` field became `__state` in Linux 5.14. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

static __always_inline bool is_runnable(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state) == 0;
	return BPF_CORE_READ((struct task_struct___old *)t, state) == 0;
}

/* Frames written by bpf_get_stack(), or -1 on error. */
static __always_inline long read_stack(void *ctx, __u64 *buf, __u64 flags)
{
	long n = bpf_get_stack(ctx, buf, PROFILE_MAX_STACK * sizeof(__u64), flags);

	return n < 0 ? -1 : (long)((__u64)n / sizeof(__u64));
}

/* Fill @s with the current task's stacks (the user one if @user_fp) and names. */
static __always_inline void record_stack(void *ctx, struct thread_stacks *s, bool user_fp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	long n;

	s->flags = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	if (BPF_CORE_READ_STR_INTO(&s->pcomm, task, group_leader, comm) < 0)
		__builtin_memcpy(s->pcomm, s->comm, sizeof(s->pcomm));

	n = read_stack(ctx, s->kernel, 0);
	if (n < 0) {
		s->flags |= SAMPLE_KERNEL_ERROR;
		n = 0;
	} else if (n == PROFILE_MAX_STACK) {
		s->flags |= SAMPLE_KERNEL_TRUNCATED;
	}
	s->nr_kernel = n;

	n = user_fp ? read_stack(ctx, s->user, BPF_F_USER_STACK) : 0;
	if (n < 0) {
		s->flags |= SAMPLE_USER_ERROR;
		n = 0;
	} else if (n == PROFILE_MAX_STACK) {
		s->flags |= SAMPLE_USER_TRUNCATED;
	}
	s->nr_user = n;
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
	if (flags & (SAMPLE_USER_TRUNCATED | SAMPLE_KERNEL_TRUNCATED))
		stat_inc(STAT_TRUNCATED);
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
 * it reads the process's maps while it surely runs.
 */
static __always_inline __u64 wakeup_flags(__u32 tgid)
{
	__u8 one = 1;

	if (!bpf_map_lookup_elem(&seen, &tgid)) {
		bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
		return BPF_RB_FORCE_WAKEUP;
	}
	return wakeup_flags_full();
}

/*
 * The user registers (into @uregs, flagging @s) and the top @n bytes of the
 * user stack (into @stack, their number into *@size), for unwinding in user
 * space. They come from the task's saved user registers, not the
 * program's context: a sample that hit in the kernel has kernel registers
 * there, and a thread leaving the CPU is always in the kernel.
 */
static __always_inline void record_user(struct thread_stacks *s, __u64 *uregs, __u32 *size,
					__u8 *stack, __u32 n)
{
	*size = 0;
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
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
	s->flags |= SAMPLE_USER_REGS;
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
			*size = off + len;
			continue;
		}
		part = PAGE_BYTES - (sp & (PAGE_BYTES - 1));
		if (part < len && !bpf_probe_read_user(stack + off, part, (void *)(sp + off)))
			*size = off + part;
		break;
	}
#endif
}

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct sample_event *e;

	if (!is_target(tgid, tid))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e) + stack_copy_bytes, 0);
	if (!e) {
		stat_inc(STAT_RINGBUF_FULL);
		return 0;
	}
	e->type = EVENT_SAMPLE;
	e->cpu = bpf_get_smp_processor_id();
	e->time_ns = bpf_ktime_get_ns();
	e->weight_ns = 0;
	e->pid = tgid;
	e->tid = tid;
	record_stack(ctx, &e->stack, user_fp_stack);
	record_user(&e->stack, e->user_regs, &e->user_stack_size, (__u8 *)(e + 1),
		    stack_copy_bytes);
	count_stack_flags(e->stack.flags);
	bpf_ringbuf_submit(e, wakeup_flags(tgid));
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
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tgid = id >> 32, tid = (__u32)id, next_tid = next->pid, zero = 0;
	struct offcpu_start *start;
	struct sample_event *e;

	/*
	 * The current task is still @prev here; a dying one will not be back.
	 * One still runnable was preempted: waiting for a CPU is not blocking,
	 * but it is wall-clock time.
	 */
	if (is_target(tgid, tid) && !prev->exit_state &&
	    !(offcpu_blocked_only && is_runnable(prev))) {
		start = bpf_map_lookup_elem(&offcpu_scratch, &zero);
		if (start) {
			start->time_ns = now;
			start->pid = tgid;
			record_stack(ctx, &start->stack, true);
			/* Enough for the leaf's caller: a CFI copy per blocked thread would be a lot. */
			record_user(&start->stack, start->user_regs, &start->user_stack_size,
				    start->user_stack,
				    stack_copy_bytes ? PROFILE_LEAF_STACK_BYTES : 0);
			if (bpf_map_update_elem(&offcpu, &tid, start, BPF_ANY))
				stat_inc(STAT_OFFCPU_DROPPED);
		}
	}

	start = bpf_map_lookup_elem(&offcpu, &next_tid);
	if (!start)
		return 0;
	if (now - start->time_ns >= offcpu_min_ns) {
		e = bpf_ringbuf_reserve(&events, sizeof(*e) + PROFILE_LEAF_STACK_BYTES, 0);
		if (e) {
			e->type = EVENT_OFFCPU;
			e->cpu = bpf_get_smp_processor_id();
			e->time_ns = start->time_ns;
			e->weight_ns = now - start->time_ns;
			e->pid = next->tgid;
			e->tid = next_tid;
			bpf_probe_read_kernel(&e->stack, sizeof(e->stack), &start->stack);
			bpf_probe_read_kernel(e->user_regs, sizeof(e->user_regs), start->user_regs);
			e->user_stack_size = start->user_stack_size;
			bpf_probe_read_kernel(e + 1, PROFILE_LEAF_STACK_BYTES, start->user_stack);
			count_stack_flags(e->stack.flags);
			bpf_ringbuf_submit(e, wakeup_flags(e->pid));
		} else {
			stat_inc(STAT_RINGBUF_FULL);
		}
	}
	bpf_map_delete_elem(&offcpu, &next_tid);
	return 0;
}

static __always_inline void emit_process_event(__u32 type, __u32 pid, __u32 ppid)
{
	struct process_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(STAT_RINGBUF_FULL);
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
	 * maps, and a fork-heavy target must not wake us per fork.
	 */
	bpf_ringbuf_submit(e, wakeup_flags_full());
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

	if (BPF_CORE_READ(p, signal, live.counter))
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	if (filter_targets && !target_tid)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
