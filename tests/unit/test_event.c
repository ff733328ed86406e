// SPDX-License-Identifier: GPL-2.0-only
/* Ring-buffer records: what event__parse() accepts and what it refuses. */
#include <errno.h>
#include <stdlib.h>

#include "collector/event.h"
#include "test.h"

TEST(event_parse_sample)
{
	/* One byte more than the record, so it can be handed over misaligned. */
	unsigned char *buf = calloc(1, sizeof(struct sample_event) + 1);
	struct sample_event e = { .type = EVENT_SAMPLE, .pid = 7, .tid = 8 };
	struct event ev;

	CHECK(buf);
	e.stack.nr_user = 2;
	e.stack.user[1] = 0x401000;
	memcpy(buf + 1, &e, sizeof(e));
	CHECK(event__parse(buf + 1, sizeof(e), &ev) == 0);
	CHECK_U64(ev.type, EVENT_SAMPLE);
	CHECK_U64(ev.sample.tid, 8);
	CHECK_U64(ev.sample.stack.user[1], 0x401000);

	CHECK(event__parse(buf + 1, sizeof(e) - 1, &ev) == -EINVAL);
	e.stack.nr_user = PROFILE_MAX_STACK + 1;
	memcpy(buf + 1, &e, sizeof(e));
	CHECK(event__parse(buf + 1, sizeof(e), &ev) == -EINVAL);
	e.stack.nr_user = 0;
	e.stack.nr_kernel = 0xffff;
	memcpy(buf + 1, &e, sizeof(e));
	CHECK(event__parse(buf + 1, sizeof(e), &ev) == -EINVAL);
	free(buf);
}

TEST(event_parse_process_and_garbage)
{
	struct process_event p = { .type = EVENT_FORK, .pid = 10, .ppid = 9 };
	__u32 junk = 99;
	struct event ev;

	CHECK(event__parse(&p, sizeof(p), &ev) == 0);
	CHECK_U64(ev.process.ppid, 9);
	CHECK(event__parse(&p, sizeof(p) - 1, &ev) == -EINVAL);
	CHECK(event__parse(&junk, sizeof(junk), &ev) == -EINVAL);
	CHECK(event__parse(&junk, 2, &ev) == -EINVAL);
	CHECK(event__parse(&junk, 0, &ev) == -EINVAL);
}

/* The user stack after a sample: within the record, and only with the registers to start from. */
TEST(event_parse_user_stack)
{
	size_t size = sizeof(struct sample_event) + 64;
	struct sample_event *e = calloc(1, size);
	struct event ev;

	CHECK(e);
	e->type = EVENT_SAMPLE;
	e->stack.flags = SAMPLE_USER_REGS;
	e->user_stack_size = 64;
	CHECK(event__parse(e, size, &ev) == 0);
	CHECK_U64(ev.user_stack_size, 64);
	CHECK(ev.user_stack == (const unsigned char *)(e + 1));

	e->user_stack_size = 65;
	CHECK(event__parse(e, size, &ev) == -EINVAL);
	e->user_stack_size = UINT32_MAX;
	CHECK(event__parse(e, size, &ev) == -EINVAL);

	e->user_stack_size = 64;
	e->stack.flags = 0;
	CHECK(event__parse(e, size, &ev) == 0);
	CHECK_U64(ev.user_stack_size, 0);
	free(e);
}
