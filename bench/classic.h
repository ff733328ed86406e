/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * classic.h - what bench/classic.bpf.c and its loader share: the key of
 * the counts map and the maps' sizes. Fixed-size __u* types only.
 */
#ifndef PROFILER_BENCH_CLASSIC_H
#define PROFILER_BENCH_CLASSIC_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define CLASSIC_MAX_STACK 127 /* the kernel's default perf_event_max_stack, as ours */
#define CLASSIC_MAX_STACKS 16384
#define CLASSIC_MAX_TARGETS 1024
#define CLASSIC_COMM_LEN 16

struct classic_key {
	__u32 pid;
	__s32 user_stack_id;   /* in `stacks`, or a negative errno */
	__s32 kernel_stack_id; /* the same */
	char comm[CLASSIC_COMM_LEN];
};

#endif
