// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "event.h"

bool event__stacks_valid(const struct thread_stacks *s)
{
	return s->nr_kernel <= PROFILE_MAX_STACK && s->nr_user <= PROFILE_MAX_USER_STACK;
}

/*
 * A struct sample_head, its addresses, and with SAMPLE_USER_REGS the
 * registers and stack bytes after them: every count checked against @size.
 */
static int parse_sample(const unsigned char *data, size_t size, struct event *ev)
{
	struct sample_event *e = &ev->sample;
	struct sample_head h;
	const unsigned char *ips;
	size_t ips_bytes;

	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, data, sizeof(h));
	if (h.nr_kernel > PROFILE_MAX_STACK || h.nr_user > PROFILE_MAX_USER_STACK ||
	    h.nr_python > PROFILE_MAX_PYTHON || h.nr_ips_room > PROFILE_MAX_IPS ||
	    (size_t)h.nr_kernel + h.nr_user + 2 * (size_t)h.nr_python > h.nr_ips_room)
		return -EINVAL;
	ips_bytes = (size_t)h.nr_ips_room * sizeof(__u64);
	if (size - sizeof(h) < ips_bytes)
		return -EINVAL;
	ips = data + sizeof(h);
	e->type = h.type;
	e->cpu = h.cpu;
	e->time_ns = h.time_ns;
	e->weight_ns = h.weight_ns;
	e->pid = h.pid;
	e->tid = h.tid;
	e->nr_intervals = h.nr_intervals ? h.nr_intervals : 1;
	e->stack.flags = h.flags;
	e->stack.nr_kernel = h.nr_kernel;
	e->stack.nr_user = h.nr_user;
	memcpy(e->stack.comm, h.comm, sizeof(h.comm));
	memcpy(e->stack.pcomm, h.pcomm, sizeof(h.pcomm));
	memcpy(e->stack.kernel, ips, h.nr_kernel * sizeof(__u64));
	memcpy(e->stack.user, ips + h.nr_kernel * sizeof(__u64), h.nr_user * sizeof(__u64));
	e->alloc_func = h.alloc_func;
	e->alloc_addr = h.type == EVENT_ALLOC ? h.alloc_addr : 0;
	e->alloc_points = h.type == EVENT_ALLOC ? h.alloc_points : 0;
	e->go_labels = h.type == EVENT_SAMPLE ? h.go_labels : 0;
	e->labels = NULL;
	e->code_gen = h.code_gen;
	if (h.type == EVENT_ALLOC && h.alloc_func >= NR_ALLOC_FUNCS)
		return -EINVAL;
	e->nr_python = h.nr_python;
	memcpy(e->python, ips + (h.nr_kernel + h.nr_user) * sizeof(__u64),
	       h.nr_python * sizeof(e->python[0]));
	ev->user_stack = NULL;
	ev->user_stack_size = 0;
	if (!(h.flags & SAMPLE_USER_REGS))
		return 0;
	size -= sizeof(h) + ips_bytes;
	if (size < sizeof(e->user_regs) || h.user_stack_size > size - sizeof(e->user_regs))
		return -EINVAL;
	memcpy(e->user_regs, ips + ips_bytes, sizeof(e->user_regs));
	ev->user_stack = ips + ips_bytes + sizeof(e->user_regs);
	ev->user_stack_size = h.user_stack_size;
	return 0;
}

int event__parse(const void *data, size_t size, struct event *ev)
{
	__u32 type;

	if (size < sizeof(type))
		return -EINVAL;
	memcpy(&type, data, sizeof(type));
	ev->type = type;
	switch (type) {
	case EVENT_SAMPLE:
	case EVENT_OFFCPU:
	case EVENT_ALLOC:
		return parse_sample(data, size, ev);
	case EVENT_FREE:
		if (size < sizeof(ev->free))
			return -EINVAL;
		memcpy(&ev->free, data, sizeof(ev->free));
		return 0;
	case EVENT_FORK:
	case EVENT_EXEC:
		if (size < sizeof(ev->process))
			return -EINVAL;
		memcpy(&ev->process, data, sizeof(ev->process));
		return 0;
	default:
		return -EINVAL;
	}
}

void event__stack_sample(const struct sample_event *e, struct stack_sample *out)
{
	const struct thread_stacks *st = &e->stack;

	*out = (struct stack_sample){
		.pid = e->pid,
		.tid = e->tid,
		.offcpu = e->type == EVENT_OFFCPU,
		.truncated = (st->flags & SAMPLE_USER_TRUNCATED ? STACK_USER_TRUNCATED : 0) |
			     (st->flags & SAMPLE_KERNEL_TRUNCATED ? STACK_KERNEL_TRUNCATED : 0),
		.time_ns = e->time_ns,
		.weight_ns = e->weight_ns,
		.nr_intervals = e->nr_intervals,
		.count = event__count(e),
		.nr_kernel = st->nr_kernel,
		.nr_user = st->nr_user,
		.kernel = (const uint64_t *)st->kernel,
		.user = (const uint64_t *)st->user,
		.labels = e->labels,
		.code_gen = e->code_gen,
	};
}
