// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "event.h"

bool event__stacks_valid(const struct thread_stacks *s)
{
	return s->nr_kernel <= PROFILE_MAX_STACK && s->nr_user <= PROFILE_MAX_STACK;
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
		if (size < sizeof(ev->sample))
			return -EINVAL;
		memcpy(&ev->sample, data, sizeof(ev->sample));
		if (!event__stacks_valid(&ev->sample.stack) ||
		    ev->sample.user_stack_size > size - sizeof(ev->sample))
			return -EINVAL;
		ev->user_stack = (const unsigned char *)data + sizeof(ev->sample);
		ev->user_stack_size = ev->sample.user_stack_size;
		/* A stack without the registers to start from cannot be unwound. */
		if (!(ev->sample.stack.flags & SAMPLE_USER_REGS))
			ev->user_stack_size = 0;
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
