// SPDX-License-Identifier: GPL-2.0-only
/* Ring-buffer records: what event__parse() accepts and what it refuses. */
#include <errno.h>
#include <stdlib.h>

#include "collector/event.h"
#include "test.h"

/* A record as the BPF program sends it: the head, then @room addresses. */
static unsigned char *sample_record(const struct sample_head *h, const __u64 *ips, size_t room,
				    size_t extra, size_t *size)
{
	unsigned char *buf;

	*size = sizeof(*h) + room * sizeof(__u64) + extra;
	/* One byte more than the record, so it can be handed over misaligned. */
	buf = calloc(1, *size + 1);
	if (!buf)
		return NULL;
	memcpy(buf + 1, h, sizeof(*h));
	memcpy(buf + 1 + sizeof(*h), ips, (h->nr_kernel + h->nr_user) * sizeof(__u64));
	return buf;
}

/* A user stack as deep as a record holds is taken whole; one frame more is refused. */
TEST(event_parse_deepest_user_stack)
{
	struct sample_head h = { .type = EVENT_SAMPLE, .pid = 7, .tid = 7 };
	static __u64 ips[PROFILE_MAX_USER_STACK + 1];
	unsigned char *buf;
	struct event ev;
	size_t size;

	for (size_t i = 0; i < PROFILE_MAX_USER_STACK + 1; i++)
		ips[i] = 0x401000 + i;
	h.nr_user = PROFILE_MAX_USER_STACK;
	h.nr_ips_room = PROFILE_MAX_USER_STACK;
	buf = sample_record(&h, ips, h.nr_ips_room, 0, &size);
	CHECK(buf);
	CHECK(event__parse(buf + 1, size, &ev) == 0);
	CHECK_U64(ev.sample.stack.nr_user, PROFILE_MAX_USER_STACK);
	CHECK_U64(ev.sample.stack.user[PROFILE_MAX_USER_STACK - 1],
		  0x401000 + PROFILE_MAX_USER_STACK - 1);
	free(buf);

	/* Room enough in the record, but not in the decoded stack. */
	h.nr_user = PROFILE_MAX_USER_STACK + 1;
	h.nr_ips_room = PROFILE_MAX_USER_STACK + 1;
	buf = sample_record(&h, ips, h.nr_ips_room, 0, &size);
	CHECK(buf);
	CHECK(event__parse(buf + 1, size, &ev) == -EINVAL);
	free(buf);
}

TEST(event_parse_sample)
{
	struct sample_head h = { .type = EVENT_SAMPLE,
				 .pid = 7,
				 .tid = 8,
				 .nr_kernel = 1,
				 .nr_user = 2,
				 .nr_ips_room = 3 };
	const __u64 ips[] = { 0xffffffff81000000, 0x401000, 0x402000 };
	unsigned char *buf;
	struct event ev;
	size_t size;

	buf = sample_record(&h, ips, 3, 0, &size);
	CHECK(buf);
	CHECK(event__parse(buf + 1, size, &ev) == 0);
	CHECK_U64(ev.type, EVENT_SAMPLE);
	CHECK_U64(ev.sample.tid, 8);
	CHECK_U64(ev.sample.stack.nr_kernel, 1);
	CHECK_U64(ev.sample.stack.kernel[0], 0xffffffff81000000);
	CHECK_U64(ev.sample.stack.nr_user, 2);
	CHECK_U64(ev.sample.stack.user[0], 0x401000);
	CHECK_U64(ev.sample.stack.user[1], 0x402000);
	CHECK_U64(ev.user_stack_size, 0);

	/* Shorter than its room, or more addresses than its room or the arrays. */
	CHECK(event__parse(buf + 1, size - 1, &ev) == -EINVAL);
	h.nr_user = 3;
	memcpy(buf + 1, &h, sizeof(h));
	CHECK(event__parse(buf + 1, size, &ev) == -EINVAL);
	h.nr_user = 0;
	h.nr_ips_room = 0xffffffff;
	memcpy(buf + 1, &h, sizeof(h));
	CHECK(event__parse(buf + 1, size, &ev) == -EINVAL);
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

/* The registers and user stack after the addresses: within the record, and only when flagged. */
TEST(event_parse_user_stack)
{
	struct sample_head h = { .type = EVENT_SAMPLE,
				 .flags = SAMPLE_USER_REGS,
				 .nr_user = 1,
				 .nr_ips_room = 4,
				 .user_stack_size = 64 };
	const __u64 ips[] = { 0x401000 };
	__u64 regs[PROFILE_NR_REGS] = { [PROFILE_REG_IP] = 0x401000 };
	unsigned char *buf;
	struct event ev;
	size_t size;

	buf = sample_record(&h, ips, 4, sizeof(regs) + 64, &size);
	CHECK(buf);
	memcpy(buf + 1 + sizeof(h) + 4 * sizeof(__u64), regs, sizeof(regs));
	CHECK(event__parse(buf + 1, size, &ev) == 0);
	CHECK_U64(ev.user_stack_size, 64);
	CHECK_U64(ev.sample.user_regs[PROFILE_REG_IP], 0x401000);
	CHECK(ev.user_stack == buf + 1 + sizeof(h) + 4 * sizeof(__u64) + sizeof(regs));

	h.user_stack_size = 65;
	memcpy(buf + 1, &h, sizeof(h));
	CHECK(event__parse(buf + 1, size, &ev) == -EINVAL);
	h.user_stack_size = UINT32_MAX;
	memcpy(buf + 1, &h, sizeof(h));
	CHECK(event__parse(buf + 1, size, &ev) == -EINVAL);
	/* Without the flag the registers are not there: nothing to unwind from. */
	h.user_stack_size = 64;
	h.flags = 0;
	memcpy(buf + 1, &h, sizeof(h));
	CHECK(event__parse(buf + 1, size, &ev) == 0);
	CHECK_U64(ev.user_stack_size, 0);
	free(buf);
}

TEST(event_parse_python_frames)
{
	struct sample_head h = {
		.type = EVENT_SAMPLE, .nr_kernel = 1, .nr_user = 1, .nr_python = 2, .nr_ips_room = 6
	};
	const __u64 ips[] = { 0xffffffff81000000, 0x401000,	  0x7f0000001000 | PY_FRAME_ENTRY,
			      0x7f0000002000,	  0x7f0000003000, 42 };
	unsigned char *buf;
	struct event ev;
	size_t size;

	buf = sample_record(&h, ips, 6, 0, &size);
	CHECK(buf);
	/* sample_record() copies the stacks only: the Python frames follow them. */
	memcpy(buf + 1 + sizeof(h) + 2 * sizeof(__u64), &ips[2], 4 * sizeof(__u64));
	CHECK(event__parse(buf + 1, size, &ev) == 0);
	CHECK_U64(ev.sample.stack.nr_user, 1);
	CHECK_U64(ev.sample.nr_python, 2);
	CHECK_U64(ev.sample.python[0].code, 0x7f0000001000 | PY_FRAME_ENTRY);
	CHECK_U64(ev.sample.python[0].instr, 0x7f0000002000);
	CHECK_U64(ev.sample.python[1].code, 0x7f0000003000);
	CHECK_U64(ev.sample.python[1].instr, 42);

	/* More frames than the room after the stacks, or than a record holds. */
	h.nr_python = 3;
	memcpy(buf + 1, &h, sizeof(h));
	CHECK(event__parse(buf + 1, size, &ev) == -EINVAL);
	h.nr_python = PROFILE_MAX_PYTHON + 1;
	h.nr_ips_room = PROFILE_MAX_IPS;
	memcpy(buf + 1, &h, sizeof(h));
	CHECK(event__parse(buf + 1, size, &ev) == -EINVAL);
	free(buf);
}
