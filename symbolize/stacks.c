// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/stack_table.h"
#include "common/strset.h"
#include "stacks.h"
#include "symbolizer.h"

int pseudo_frame__init(struct pseudo_frame *f, struct strset *strings, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->line.name = strset__add(strings, name);
	f->frame.lines = &f->line;
	f->frame.nr_lines = 1;
	f->frame.source = FRAME_NO_MAPPING;
	return f->line.name ? 0 : -ENOMEM;
}

/*
 * A frame of a BPF program or of the kernel code that runs one from a
 * tracepoint. By the kernel's name: a BPF program's code read with its
 * lines is named "NAME [bpf]", its system name bpf_prog_TAG_NAME.
 */
static bool is_bpf_frame(const struct profile_frame *f)
{
	const struct profile_line *func = profile_frame__func(f);
	const char *name = func->system_name ? func->system_name : func->name;

	return !strncmp(name, "bpf_", 4) || !strncmp(name, "__bpf_", 6) ||
	       !strncmp(name, "__traceiter_", 12);
}

/*
 * The frames of @s into @frames (room for its addresses and the overflow
 * frame), by the rules of stacks.h. Returns how many.
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

/* @n * @part / @whole, without overflow: @part <= @whole. */
static uint64_t share(uint64_t n, uint64_t part, uint64_t whole)
{
	return (uint64_t)((unsigned __int128)n * part / whole);
}

/*
 * Give the on-CPU samples of each thread of sorted @p (contiguous by pid
 * and tid) their share of the thread's measured CPU time, the last one
 * what is left so the shares add up; then a sample of @opts->unsampled to
 * each thread with CPU time and none. 0 or -ENOMEM.
 */
static int share_thread_cpu(struct profile *p, const struct stacks_opts *opts)
{
	size_t nr = p->nr_samples;

	for (size_t i = 0, j; i < nr; i = j) {
		uint32_t pid = p->samples[i].pid, tid = p->samples[i].tid;
		uint64_t count = 0, given = 0, cpu_ns, first_time = UINT64_MAX;
		size_t last = i;

		for (j = i; j < nr && p->samples[j].pid == pid && p->samples[j].tid == tid; j++) {
			const struct profile_sample *s = &p->samples[j];

			if (!s->offcpu) {
				count += s->count;
				last = j;
			}
			if (s->times && s->count && s->times[0] < first_time)
				first_time = s->times[0];
		}
		if (!opts->thread_cpu(opts->thread_cpu_arg, pid, tid, &cpu_ns))
			continue;
		for (size_t k = i; count && k < j; k++) {
			struct profile_sample *s = &p->samples[k];

			if (s->offcpu)
				continue;
			s->cpu_measured = true;
			s->cpu_ns = k == last ? cpu_ns - given : share(cpu_ns, s->count, count);
			given += s->cpu_ns;
		}
		if (!count && cpu_ns) {
			const struct profile_frame *frame = &opts->unsampled->frame;
			struct profile_sample unsampled = {
				.pid = pid,
				.tid = tid,
				.process_name = p->samples[i].process_name,
				.thread_name = p->samples[i].thread_name,
				.cmdline = p->samples[i].cmdline,
				.cgroup = p->samples[i].cgroup,
				.nr_frames = 1,
				.frames = &frame,
				.count = 1,
				.times = first_time != UINT64_MAX ? &first_time : NULL,
				.cpu_measured = true,
				.cpu_ns = cpu_ns,
				.unsampled = true,
			};

			/* Appended past @nr: the loop does not look at it. */
			if (!profile__add_sample(p, &unsampled))
				return -ENOMEM;
		}
	}
	return 0;
}

/* @v, an estimate, as a whole number. */
static uint64_t whole(double v)
{
	return v > 0 ? (uint64_t)(v + 0.5) : 0;
}

/* The allocations of a stack (stack_table.h), as the profile counts them. */
static void alloc_figures(struct profile_alloc *out, const struct stack_alloc *a, uint64_t start)
{
	*out = (struct profile_alloc){
		.kind = a->mmap ? ALLOC_MMAP : ALLOC_HEAP,
		.bytes = whole(a->bytes),
		.blocks = whole(a->blocks),
		.max_bytes = whole(a->max_bytes),
		.max_blocks = whole(a->max_blocks),
		.gmax_bytes = whole(a->gmax_bytes),
		.gmax_blocks = whole(a->gmax_blocks),
		.end_bytes = whole(a->cur_bytes + a->gone_bytes),
		.end_blocks = whole(a->cur_blocks + a->gone_blocks),
		.lifetime_ns = whole(a->lifetime_ns),
		.first_ns = a->first_ns > start ? a->first_ns - start : 0,
		.last_ns = a->last_ns > start ? a->last_ns - start : 0,
	};
}

/*
 * Labels @labels ("KEY=VALUE\n" pairs) as one frame, the pairs apart by
 * spaces, interned in @strings; NULL when none (or out of memory: the
 * process name roots the stack then).
 */
static const char *labels_root(struct strset *strings, const char *labels)
{
	size_t len = labels ? strlen(labels) : 0;
	char *s;
	const char *root;

	if (!len || !(s = strdup(labels)))
		return NULL;
	for (char *c = s; (c = strchr(c, '\n')); c++)
		*c = ' ';
	root = strset__add_len(strings, s, len - 1); /* without the last newline's space */
	free(s);
	return root;
}

int stacks__symbolize(struct profile *p, struct symbolizer *sym, const struct stack_table *stacks,
		      const struct stacks_opts *opts)
{
	const struct profile_frame *overflow = opts->overflow ? &opts->overflow->frame : NULL;
	uint64_t start = opts->start_mono;
	const struct profile_frame **frames;
	struct stack_entry *s;
	uint64_t *times = NULL;
	size_t i, alloc_times = 0, most = 0;
	int err = 0;

	/* Room for the deepest stack, and an overflow frame. */
	stack_table__for_each_entry(stacks, i, s)
		if ((size_t)s->nr_kernel + s->nr_user > most)
			most = (size_t)s->nr_kernel + s->nr_user;
	frames = malloc((most + 1) * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	stack_table__for_each_entry(stacks, i, s) {
		struct profile_sample sample = {
			.pid = s->pid,
			.tid = s->tid,
			.process_name = s->process_name,
			.thread_name = s->thread_name,
			.cmdline = s->cmdline,
			.cgroup = s->cgroup,
			.labels = s->labels,
			.labels_root = labels_root(p->strings, s->labels),
			.count = s->count,
			.truncated = s->truncated != 0,
			.offcpu = s->offcpu,
			.offcpu_ns = s->weight_ns,
			.intervals = s->offcpu ? s->nr_intervals : 0,
		};

		if (opts->stop && *opts->stop) {
			err = -EINTR;
			goto out;
		}
		if (s->overflow && !overflow) {
			err = -EINVAL;
			goto out;
		}
		if (s->alloc.blocks)
			alloc_figures(&sample.alloc, &s->alloc, start);
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
	if (opts->thread_cpu) {
		if (!opts->unsampled) {
			err = -EINVAL;
			goto out;
		}
		err = share_thread_cpu(p, opts);
		if (err)
			goto out;
		profile__sort(p);
	}
out:
	free(frames);
	free(times);
	return err;
out_nomem:
	err = -ENOMEM;
	goto out;
}
