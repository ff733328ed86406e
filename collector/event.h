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

#include "bpf/profile.h"

/*
 * A decoded record. The fixed part is copied out, so it is aligned however
 * the record was; variable-length data stays in the record and is pointed to.
 */
struct event {
	__u32 type; /* EVENT_* */
	union {
		struct sample_event sample;   /* EVENT_SAMPLE, EVENT_OFFCPU */
		struct process_event process; /* EVENT_FORK, EVENT_EXEC */
	};
	/* EVENT_SAMPLE: the user stack copied from the stack pointer up, in the record. */
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

#endif
