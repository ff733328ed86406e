/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * profile.h - what the BPF program and user space share: the ring-buffer
 * records and the per-CPU counters. Fixed-size __u* types only, so both sides
 * agree on the layout. Every record starts with its __u32 type.
 */
#ifndef PROFILER_BPF_PROFILE_H
#define PROFILER_BPF_PROFILE_H

#ifndef __bpf__
#include <linux/types.h> /* the BPF side has them from vmlinux.h */
#endif

/* The kernel's default perf_event_max_stack. */
#define PROFILE_MAX_STACK 127
#define PROFILE_COMM_LEN 16
#define PROFILE_MAX_TARGETS 16384
/* Threads off CPU at once whose stacks are kept until they run again. */
#define PROFILE_MAX_OFFCPU 65536

/*
 * The user registers a sample records, indexed by their DWARF numbers in the
 * x86-64 psABI (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, then the
 * return-address column, rip), so CFI rules index them directly.
 */
#define PROFILE_NR_REGS 17
#define PROFILE_REG_BP 6
#define PROFILE_REG_SP 7
#define PROFILE_REG_IP 16
/*
 * Bytes of user stack every sample copies from the stack pointer: a leaf
 * function that has not set up its frame pointer keeps its return address
 * there, above the few registers it may have pushed.
 */
#define PROFILE_LEAF_STACK_BYTES 256
/* The most --call-graph dwarf copies: perf's limit too. */
#define PROFILE_MAX_STACK_COPY 65528

/* Values in the `targets` map. */
#define TARGET_ACTIVE 1
#define TARGET_AT_EXEC 2 /* a command not started yet: active from its exec on */

enum event_type {
	EVENT_SAMPLE = 1, /* struct sample_event: an on-CPU sample */
	EVENT_OFFCPU,	  /* struct sample_event: an interval off CPU */
	EVENT_FORK,	  /* struct process_event: a target forked a process */
	EVENT_EXEC,	  /* struct process_event: a process exec'd */
};

/* sample_event.flags */
#define SAMPLE_USER_TRUNCATED (1U << 0)	  /* the user stack filled its buffer */
#define SAMPLE_KERNEL_TRUNCATED (1U << 1) /* the kernel stack filled its buffer */
#define SAMPLE_USER_ERROR (1U << 2)	  /* bpf_get_stack() failed on the user stack */
#define SAMPLE_KERNEL_ERROR (1U << 3)	  /* ... on the kernel stack */
#define SAMPLE_USER_REGS (1U << 4)	  /* sample_event.user_regs hold the user registers */

/* Indexes of the per-CPU `stats` array. */
enum profile_stat {
	STAT_RINGBUF_FULL,	 /* records lost: no room in the ring buffer */
	STAT_USER_STACK_ERROR,	 /* records written whose user stack could not be read */
	STAT_KERNEL_STACK_ERROR, /* ... whose kernel stack could not be read */
	STAT_TRUNCATED,		 /* ... with a truncated stack */
	STAT_OFFCPU_DROPPED,	 /* off-CPU intervals lost: too many threads off CPU */
	STAT__MAX,
};

/* Stacks and names of a thread, as one sample or one interval off CPU records them. */
struct thread_stacks {
	__u32 flags;		      /* SAMPLE_* */
	__u16 nr_kernel;	      /* valid entries in kernel[], leaf first */
	__u16 nr_user;		      /* valid entries in user[], leaf first */
	char comm[PROFILE_COMM_LEN];  /* the thread's name */
	char pcomm[PROFILE_COMM_LEN]; /* the thread group leader's name */
	__u64 kernel[PROFILE_MAX_STACK];
	__u64 user[PROFILE_MAX_STACK];
};

/* EVENT_SAMPLE and EVENT_OFFCPU. */
struct sample_event {
	__u32 type;
	__u32 cpu;
	__u64 time_ns;	 /* bpf_ktime_get_ns(): CLOCK_MONOTONIC; off CPU: when it left */
	__u64 weight_ns; /* off CPU: how long; 0 for samples */
	__u32 pid;	 /* thread group id */
	__u32 tid;
	struct thread_stacks stack;
	/* With SAMPLE_USER_REGS: the user registers at the sample, or when it left the CPU. */
	__u64 user_regs[PROFILE_NR_REGS];
	/*
	 * Bytes of user stack, from user_regs[PROFILE_REG_SP] up, that follow
	 * this struct in the record (which may have room for more).
	 */
	__u32 user_stack_size;
	__u32 pad;
};

/*
 * A target thread off CPU, kept by tid until it runs again: when it left and
 * its stacks then. User space reads those still off CPU when profiling stops.
 */
struct offcpu_start {
	__u64 time_ns;
	__u32 pid; /* thread group id */
	__u32 pad;
	struct thread_stacks stack;
	/* As in struct sample_event, with the top of the stack kept here. */
	__u64 user_regs[PROFILE_NR_REGS];
	__u32 user_stack_size;
	__u32 pad2;
	__u8 user_stack[PROFILE_LEAF_STACK_BYTES];
};

/* EVENT_FORK and EVENT_EXEC. */
struct process_event {
	__u32 type;
	__u32 pid;  /* the process (thread group id) */
	__u32 ppid; /* EVENT_FORK: the target that forked it */
	__u32 pad;
	__u64 time_ns;
};

#endif
