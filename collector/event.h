/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event.h - one ring-buffer record, checked and decoded.
 *
 * The BPF program writes the records of bpf/profile.h; this is the one place
 * user space decides whether a record is well formed. It trusts nothing in
 * the record: the type, the size of the record for that type and every
 * count in it are checked against the bytes actually there, so a fuzzer can
 * throw arbitrary bytes at event__parse(). It keeps no state and allocates
 * nothing: thread-safe.
 */
#ifndef PROFILER_EVENT_H
#define PROFILER_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/profile.h"
#include "common/stack_table.h"

/* Stacks and names of a thread, as one sample or one interval off CPU records them. */
struct thread_stacks {
	__u32 flags;		      /* SAMPLE_* */
	__u16 nr_kernel;	      /* valid entries in kernel[], leaf first */
	__u16 nr_user;		      /* valid entries in user[], leaf first */
	char comm[PROFILE_COMM_LEN];  /* the thread's name */
	char pcomm[PROFILE_COMM_LEN]; /* the thread group leader's name */
	__u64 kernel[PROFILE_MAX_STACK];
	__u64 user[PROFILE_MAX_USER_STACK];
};

/*
 * A sample or an interval off CPU, decoded: the record's head with its
 * stacks unpacked into arrays of their own.
 */
struct sample_event {
	__u32 type;
	__u32 cpu;
	__u64 time_ns;
	__u64 weight_ns; /* off CPU: how long; EVENT_ALLOC: the bytes asked for */
	__u32 pid;
	__u32 tid;
	/*
	 * Off CPU: intervals in @weight_ns; on CPU, the samples the record
	 * stands for (more than one for those the BPF program counted). At
	 * least 1.
	 */
	__u32 nr_intervals;
	struct thread_stacks stack;
	__u16 alloc_func;   /* EVENT_ALLOC: enum alloc_func */
	__u64 alloc_addr;   /* EVENT_ALLOC: the block */
	__u32 alloc_points; /* EVENT_ALLOC from the preloaded sampler: struct sample_head's */
	__u64 go_labels; /* EVENT_SAMPLE of a Go program: its goroutine's labels (golang.bpf.h) */
	__u32 code_gen;	 /* the process's code generation (struct sample_head's) */
	/*
	 * The sample's labels (common/profile.h's format), set by a runtime
	 * (collector/golang.c): owned by it, NULL when none.
	 */
	const char *labels;
	/* With SAMPLE_USER_REGS: the user registers at the sample, or when it left the CPU. */
	__u64 user_regs[PROFILE_NR_REGS];
	/* The thread's Python frames, innermost first, as the BPF program read them. */
	__u16 nr_python;
	struct python_frame python[PROFILE_MAX_PYTHON];
};

/*
 * A decoded record. The fixed part is copied out, so it is aligned however
 * the record was; variable-length data stays in the record and is pointed to.
 */
struct event {
	__u32 type; /* EVENT_* */
	union {
		struct sample_event sample;   /* EVENT_SAMPLE, EVENT_OFFCPU, EVENT_ALLOC */
		struct process_event process; /* EVENT_FORK, EVENT_EXEC */
		struct free_event free;	      /* EVENT_FREE */
	};
	/* The user stack copied from the stack pointer up, in the record. */
	const unsigned char *user_stack;
	size_t user_stack_size; /* 0: none */
};

/*
 * Decode the record of @size bytes at @data (any alignment) into @ev.
 * Returns 0, or -EINVAL when the type is unknown, the record is shorter than
 * its type needs or a count in it exceeds what the record can hold; @ev is
 * then unspecified.
 */
int event__parse(const void *data, size_t size, struct event *ev);

/* Are @s's stack lengths within its arrays? */
bool event__stacks_valid(const struct thread_stacks *s);

/*
 * The samples or intervals @e counts as: a sample record stands for as
 * many samples as the BPF program counted with it, an off-CPU or
 * allocation record counts once (its intervals are in its weight).
 */
static inline uint64_t event__count(const struct sample_event *e)
{
	return e->type == EVENT_SAMPLE ? e->nr_intervals : 1;
}

/* @e as the stack table counts it (common/stack_table.h): its stacks are pointed to. */
void event__stack_sample(const struct sample_event *e, struct stack_sample *out);

#endif
