/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * common.bpf.h - what every unit of the BPF program shares: which tasks
 * are targets (the `targets` and `cgroups` maps and the tunables that
 * choose between them), the ring buffer every record goes to (`events`),
 * the per-CPU failure counts (`stats`) and the per-CPU record being built
 * (`scratch`). Needs nothing from the other units.
 *
 * The units are headers that profile.bpf.c includes, in the order of
 * their dependencies, into one object: one skeleton, and one program per
 * entry point that the verifier sees whole. Each says what it owns and
 * what it needs; a unit includes the ones it needs.
 *
 * Tunables are `const volatile` rodata, set by user space between open
 * and load (collector/collector.c).
 */
#ifndef PROFILER_BPF_COMMON_BPF_H
#define PROFILER_BPF_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/profile.h"

/* Which tasks are targets: is_target(). */
const volatile bool filter_targets = true; /* only tgids in `targets` */
const volatile __u32 target_tid;	   /* only this thread, if set */
const volatile bool filter_cgroup;	   /* only tasks under the cgroup in `cgroups` */
/* A target's new processes become targets (profile_fork). */
const volatile bool follow_children = true;

/*
 * When sampling ends (-d; bpf_ktime_get_ns()), or 0: set by user space as it
 * starts. Past it the programs take nothing, so a recording ends on time
 * even when the profiler's own thread, busy or kept from a CPU, is late to
 * stop them (at 100 kHz beside two busy loops it stopped 4-8 s late).
 */
__u64 deadline_ns;

static __always_inline bool past_deadline(void)
{
	return deadline_ns && bpf_ktime_get_ns() >= deadline_ns;
}

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

/* Room to build a record in: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_record);
} scratch SEC(".maps");

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

#endif
