// SPDX-License-Identifier: GPL-2.0-only
/*
 * The classic design of a BPF sampling profiler, as the baseline that
 * bench/bpf-vs-classic measures ours against: stacks interned by the kernel
 * in a BPF_MAP_TYPE_STACK_TRACE map and counted in a hash map keyed by
 * (pid, user stack id, kernel stack id, comm), read by user space once at
 * the end (the design of bcc's and libbpf-tools' `profile`). Ours instead
 * copies both stacks into a ring-buffer record per sample.
 *
 * Same filter as ours: the current task's tgid in `targets`, idle task out.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bench/classic.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLASSIC_MAX_TARGETS);
	__type(key, __u32);  /* tgid */
	__type(value, __u8); /* 1 */
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, CLASSIC_MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, CLASSIC_MAX_STACK * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CLASSIC_MAX_STACKS);
	__type(key, struct classic_key);
	__type(value, __u64); /* samples */
} counts SEC(".maps");

SEC("perf_event")
int classic_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), one = 1, *count;
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct classic_key key = {};

	if (!tid || !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	key.pid = tgid;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	/* Negative ids (no stack, a full map) are counted as they are, as profile does. */
	key.user_stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	key.kernel_stack_id = bpf_get_stackid(ctx, &stacks, 0);

	count = bpf_map_lookup_elem(&counts, &key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return 0;
	}
	/* A new key: another CPU may insert it first, then add to theirs. */
	if (bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST)) {
		count = bpf_map_lookup_elem(&counts, &key);
		if (count)
			__sync_fetch_and_add(count, 1);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
