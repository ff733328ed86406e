// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ring-buffer records through event__parse(), the one check between the
 * BPF program's bytes and the collector. A record it accepts must be as
 * long as its head and the addresses it counts, and its stack lengths
 * within their arrays:
 * the collector then reads every address they count, as this does. The
 * record is copied to a buffer of its exact size, at an odd address (the
 * ring buffer promises 8-byte alignment; the parser promises any).
 */
#include "collector/event.h"
#include "fuzz.h"

/* Where the stacks' sum goes, so that reading them is not optimized away. */
volatile uint64_t event_fuzz_sink;

static uint64_t event_fuzz_sum(const struct thread_stacks *s)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < s->nr_kernel; i++)
		sum += s->kernel[i];
	for (unsigned int i = 0; i < s->nr_user; i++)
		sum += s->user[i];
	return sum;
}

static int fuzz_event(const uint8_t *data, size_t size)
{
	struct event ev;
	uint8_t *copy;

	copy = malloc(size + 1);
	FUZZ_CHECK(copy);
	memcpy(copy + 1, data, size);
	if (!event__parse(copy + 1, size, &ev)) {
		switch (ev.type) {
		case EVENT_SAMPLE:
		case EVENT_OFFCPU:
		case EVENT_ALLOC:
			/* The head and every address it counts, at least. */
			FUZZ_CHECK(size >= sizeof(struct sample_head) + (ev.sample.stack.nr_kernel +
									 ev.sample.stack.nr_user) *
										sizeof(__u64));
			FUZZ_CHECK(event__stacks_valid(&ev.sample.stack));
			event_fuzz_sink = event_fuzz_sum(&ev.sample.stack);
			break;
		case EVENT_FORK:
		case EVENT_EXEC:
			FUZZ_CHECK(size >= sizeof(ev.process));
			break;
		case EVENT_FREE:
			FUZZ_CHECK(size >= sizeof(ev.free));
			break;
		default:
			FUZZ_CHECK(!"an unknown type was accepted");
		}
	}
	free(copy);
	return 0;
}

FUZZ_TARGET(fuzz_event)
