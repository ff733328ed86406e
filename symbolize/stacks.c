// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/profile.h"
#include "collector/stack_table.h"
#include "common/strset.h"
#include "stacks.h"
#include "symbolizer.h"

int overflow_frame__init(struct overflow_frame *f, struct strset *strings)
{
	memset(f, 0, sizeof(*f));
	f->line.name = strset__add(strings, "[stack table full]");
	f->frame.lines = &f->line;
	f->frame.nr_lines = 1;
	f->frame.source = FRAME_NO_MAPPING;
	return f->line.name ? 0 : -ENOMEM;
}

/* A frame of a BPF program or of the kernel code that runs one from a tracepoint. */
static bool is_bpf_frame(const struct profile_frame *f)
{
	const char *name = profile_frame__func(f)->name;

	return !strncmp(name, "bpf_", 4) || !strncmp(name, "__bpf_", 6) ||
	       !strncmp(name, "__traceiter_", 12);
}

/*
 * The frames of @s into @frames (room for 2 * PROFILE_MAX_STACK + 1, the
 * overflow frame included), by the rules of stacks.h. Returns how many.
 */
static uint32_t stack_frames(struct symbolizer *sym, const struct stack_entry *s,
			     const struct profile_frame *overflow,
			     const struct profile_frame **frames)
{
	uint32_t n = 0;

	if (s->overflow)
		frames[n++] = overflow;
	for (uint16_t k = 0; k < s->nr_kernel; k++) {
		frames[n] = symbolizer__kernel_frame(sym, s->ips[k] - (k > 0));
		if (s->offcpu && n == 0 && is_bpf_frame(frames[0]))
			continue;
		n++;
	}
	for (uint16_t u = 0; u < s->nr_user; u++)
		frames[n++] =
			symbolizer__user_frame(sym, s->maps, s->ips[s->nr_kernel + u] - (u > 0));
	return n;
}

int stacks__symbolize(struct profile *p, struct symbolizer *sym, const struct stack_table *stacks,
		      const struct stacks_opts *opts)
{
	const struct profile_frame *overflow = opts->overflow ? &opts->overflow->frame : NULL;
	uint64_t start = opts->start_mono;
	const struct profile_frame **frames;
	struct stack_entry *s;
	uint64_t *times = NULL;
	size_t i, alloc_times = 0;
	int err = 0;

	frames = malloc((2 * PROFILE_MAX_STACK + 1) * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	stack_table__for_each_entry(stacks, i, s) {
		struct profile_sample sample = {
			.pid = s->pid,
			.tid = s->tid,
			.process_name = s->process_name,
			.thread_name = s->thread_name,
			.cmdline = s->cmdline,
			.count = s->count,
			.truncated = s->flags & (SAMPLE_USER_TRUNCATED | SAMPLE_KERNEL_TRUNCATED),
			.offcpu = s->offcpu,
			.offcpu_ns = s->weight_ns,
		};

		if (opts->stop && *opts->stop) {
			err = -EINTR;
			goto out;
		}
		if (s->overflow && !overflow) {
			err = -EINVAL;
			goto out;
		}
		sample.frames = frames;
		sample.nr_frames = stack_frames(sym, s, overflow, frames);
		if (s->times && s->count > alloc_times) {
			free(times);
			alloc_times = s->count;
			times = malloc(alloc_times * sizeof(*times));
			if (!times)
				goto out_nomem;
		}
		for (uint64_t t = 0; s->times && t < s->count; t++)
			times[t] = s->times[t] > start ? s->times[t] - start : 0;
		sample.times = s->times ? times : NULL;
		if (!profile__add_sample(p, &sample))
			goto out_nomem;
	}
	profile__sort(p);
out:
	free(frames);
	free(times);
	return err;
out_nomem:
	err = -ENOMEM;
	goto out;
}
