// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sampling program: attached to a CPU-clock perf event on every CPU, it
 * writes one ring-buffer record per sample of a target process, holding the
 * user and kernel stacks and who was running.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/profile.h"

/* Set by user space between open and load. */
const volatile bool filter_targets = true;
/* Wake the reader only once this much data waits, so it drains in batches. */
const volatile __u64 wakeup_bytes = 1 << 20;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROFILE_MAX_TARGETS);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

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

static __always_inline void stat_inc(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		(*v)++;
}

/* Frames written by bpf_get_stack(), or -1 on error. */
static __always_inline long read_stack(void *ctx, __u64 *buf, __u64 flags)
{
	long n = bpf_get_stack(ctx, buf, PROFILE_MAX_STACK * sizeof(__u64), flags);

	return n < 0 ? -1 : (long)((__u64)n / sizeof(__u64));
}

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	struct sample_event *e;
	long n;

	/* The idle task (tid 0) is not a process. */
	if (!tid)
		return 0;
	if (filter_targets && !bpf_map_lookup_elem(&targets, &tgid))
		return 0;

	stat_inc(STAT_SAMPLES);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(STAT_RINGBUF_FULL);
		return 0;
	}

	e->time_ns = bpf_ktime_get_ns();
	e->pid = tgid;
	e->tid = tid;
	e->cpu = bpf_get_smp_processor_id();
	e->flags = 0;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	task = (struct task_struct *)bpf_get_current_task();
	if (BPF_CORE_READ_STR_INTO(&e->pcomm, task, group_leader, comm) < 0)
		__builtin_memcpy(e->pcomm, e->comm, sizeof(e->pcomm));

	n = read_stack(ctx, e->kernel, 0);
	if (n < 0) {
		stat_inc(STAT_KERNEL_STACK_ERROR);
		e->flags |= SAMPLE_KERNEL_ERROR;
		n = 0;
	} else if (n == PROFILE_MAX_STACK) {
		e->flags |= SAMPLE_KERNEL_TRUNCATED;
	}
	e->nr_kernel = n;

	n = read_stack(ctx, e->user, BPF_F_USER_STACK);
	if (n < 0) {
		stat_inc(STAT_USER_STACK_ERROR);
		e->flags |= SAMPLE_USER_ERROR;
		n = 0;
	} else if (n == PROFILE_MAX_STACK) {
		e->flags |= SAMPLE_USER_TRUNCATED;
	}
	e->nr_user = n;
	if (e->flags & (SAMPLE_USER_TRUNCATED | SAMPLE_KERNEL_TRUNCATED))
		stat_inc(STAT_TRUNCATED);

	bpf_ringbuf_submit(e, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
				      BPF_RB_FORCE_WAKEUP :
				      BPF_RB_NO_WAKEUP);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
