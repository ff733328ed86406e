// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "profile.h"
#include "strset.h"

struct profile *profile__new(uint32_t freq_hz)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->strings = strset__new();
	if (!p->strings) {
		free(p);
		return NULL;
	}
	p->freq_hz = freq_hz;
	p->period_ns = freq_hz ? 1000000000ULL / freq_hz : 0;
	if (uname(&p->host))
		memset(&p->host, 0, sizeof(p->host));
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_samples; i++) {
		free(p->samples[i].frames);
		free(p->samples[i].times);
	}
	free(p->samples);
	strset__free(p->strings);
	free(p);
}

static void *dup_array(const void *src, size_t n, size_t size)
{
	void *dst;

	if (!n)
		return NULL;
	dst = malloc(n * size);
	if (dst)
		memcpy(dst, src, n * size);
	return dst;
}

struct profile_sample *profile__add_sample(struct profile *p, const struct profile_sample *s)
{
	struct profile_sample *d;

	if (array__reserve(&p->samples, &p->alloc_samples, p->nr_samples + 1, sizeof(*p->samples)))
		goto out_nomem;
	d = &p->samples[p->nr_samples];
	*d = *s;
	d->frames = dup_array(s->frames, s->nr_frames, sizeof(*s->frames));
	d->times = s->times ? dup_array(s->times, s->count, sizeof(*s->times)) : NULL;
	if ((s->nr_frames && !d->frames) || (s->times && s->count && !d->times)) {
		free(d->frames);
		free(d->times);
		goto out_nomem;
	}
	p->nr_samples++;
	return d;

out_nomem:
	errno = ENOMEM;
	return NULL;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

static int cmp_frame(const struct profile_frame *a, const struct profile_frame *b)
{
	int c;

	if (a == b)
		return 0;
	c = cmp_str(profile_frame__func(a)->name, profile_frame__func(b)->name);
	if (c)
		return c;
	c = cmp_str(a->mapping ? a->mapping->filename : NULL,
		    b->mapping ? b->mapping->filename : NULL);
	if (c)
		return c;
	c = cmp_u64(a->address, b->address);
	if (c)
		return c;
	return cmp_u64(a->mapping ? a->mapping->start : 0, b->mapping ? b->mapping->start : 0);
}

static int cmp_sample(const void *pa, const void *pb)
{
	const struct profile_sample *a = pa, *b = pb;
	uint32_t i;
	int c;

	c = cmp_u64(a->pid, b->pid);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	if (!c)
		c = cmp_str(a->thread_name, b->thread_name);
	if (!c)
		c = cmp_str(a->process_name, b->process_name);
	if (!c)
		c = cmp_str(a->cmdline, b->cmdline);
	if (c)
		return c;
	/* Root first, as a flame graph reads a stack. */
	for (i = 0; i < a->nr_frames && i < b->nr_frames; i++) {
		c = cmp_frame(a->frames[a->nr_frames - 1 - i], b->frames[b->nr_frames - 1 - i]);
		if (c)
			return c;
	}
	c = cmp_u64(a->nr_frames, b->nr_frames);
	if (!c)
		c = cmp_u64(a->offcpu, b->offcpu);
	if (!c)
		c = cmp_u64(a->truncated, b->truncated);
	if (!c)
		c = cmp_u64(a->count, b->count);
	return c;
}

void profile__sort(struct profile *p)
{
	if (p->nr_samples > 1)
		qsort(p->samples, p->nr_samples, sizeof(*p->samples), cmp_sample);
}

uint64_t profile__total(const struct profile *p)
{
	uint64_t total = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		total += p->samples[i].count;
	return total;
}

uint64_t profile_sample__cpu_ns(const struct profile *p, const struct profile_sample *s)
{
	if (s->offcpu)
		return 0;
	return s->cpu_measured ? s->cpu_ns : s->count * p->period_ns;
}

uint64_t profile_sample__events(const struct profile_sample *s)
{
	if (s->unsampled)
		return 0;
	return s->offcpu && s->intervals ? s->intervals : s->count;
}

uint64_t profile_sample__offcpu_ns(const struct profile_sample *s)
{
	return s->offcpu ? s->offcpu_ns : 0;
}

uint64_t profile_sample__wall_ns(const struct profile *p, const struct profile_sample *s)
{
	return profile_sample__cpu_ns(p, s) + profile_sample__offcpu_ns(s);
}

uint64_t profile_sample__folded_count(const struct profile *p, const struct profile_sample *s)
{
	switch (p->mode) {
	case PROFILE_OFFCPU:
		return (profile_sample__offcpu_ns(s) + 500) / 1000;
	case PROFILE_WALL:
		return (profile_sample__wall_ns(p, s) + 500) / 1000;
	case PROFILE_ALLOC:
		return s->alloc.bytes;
	case PROFILE_CPU:
		break;
	}
	return s->count;
}

/* @ns in seconds, rounded to @decimals (0 to 9) digits after the point: no locale, no float. */
static const char *seconds(char buf[32], uint64_t ns, int decimals)
{
	uint64_t unit = 1000000000, scale = 1, v;

	for (int i = 0; i < decimals; i++) {
		unit /= 10;
		scale *= 10;
	}
	v = ns / unit + (ns % unit >= (unit + 1) / 2);
	if (decimals)
		snprintf(buf, 32, "%" PRIu64 ".%0*" PRIu64, v / scale, decimals, v % scale);
	else
		snprintf(buf, 32, "%" PRIu64, v);
	return buf;
}

static void summary__add(struct profile_summary *sum, enum profile_summary_group group,
			 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void summary__add(struct profile_summary *sum, enum profile_summary_group group,
			 const char *fmt, ...)
{
	struct profile_summary_line *l;
	va_list ap;

	if (sum->nr >= PROFILE_SUMMARY_MAX)
		return;
	l = &sum->lines[sum->nr++];
	l->group = group;
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	va_end(ap);
}

/* " (estimated)" after the figures of a sampled allocation profile, which are scaled samples. */
static const char *alloc_estimated(const struct profile *p)
{
	return p->alloc_rate > 1 ? " (estimated)" : "";
}

/*
 * An allocation profile's own lines, DHAT's figures: what was allocated;
 * what was live, at the peak and at the end; how it was sampled, and what
 * was lost or could not be watched. Three groups, so that each fits a line
 * of the SVG's 1180 px.
 */
static void summary__alloc(const struct profile *p, struct profile_summary *sum)
{
	const struct profile_stats *st = &p->stats;
	const char *est = alloc_estimated(p);
	uint64_t mmap_bytes = 0, mmap_blocks = 0;
	char s1[32], s2[32];
	bool mmap = false;

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		if (s->alloc.kind != ALLOC_MMAP)
			continue;
		mmap = true;
		mmap_bytes += s->alloc.bytes;
		mmap_blocks += s->alloc.blocks;
	}
	summary__add(sum, SUMMARY_SAMPLES,
		     "allocated: %" PRIu64 " bytes in %" PRIu64 " blocks over %s s%s",
		     st->alloc_bytes, st->alloc_blocks, seconds(s1, p->duration, 1), est);
	if (mmap)
		summary__add(sum, SUMMARY_SAMPLES,
			     "anonymous mmap: %" PRIu64 " bytes in %" PRIu64 " mappings%s",
			     mmap_bytes, mmap_blocks, est);

	if (st->alloc_gmax_bytes)
		summary__add(sum, SUMMARY_LIVE,
			     "peak live: %" PRIu64 " bytes in %" PRIu64 " blocks at %s s%s",
			     st->alloc_gmax_bytes, st->alloc_gmax_blocks,
			     seconds(s2, p->alloc_gmax_ns, 3), est);
	else
		summary__add(sum, SUMMARY_LIVE, "peak live: 0 bytes in 0 blocks");
	summary__add(sum, SUMMARY_LIVE,
		     "live at the end: %" PRIu64 " bytes in %" PRIu64 " blocks%s",
		     st->alloc_end_bytes, st->alloc_end_blocks, est);

	if (p->alloc_rate > 1)
		summary__add(sum, SUMMARY_SAMPLING,
			     "sampling: one sample per %" PRIu64 " bytes on average",
			     p->alloc_rate);
	else
		summary__add(sum, SUMMARY_SAMPLING, "sampling: every allocation");
	summary__add(sum, SUMMARY_SAMPLING, "sampled allocations lost: %" PRIu64, st->alloc_lost);
	if (st->alloc_untracked)
		summary__add(sum, SUMMARY_SAMPLING,
			     "frees not watched: %" PRIu64
			     " blocks, live to the end (live map full, or a free lost)",
			     st->alloc_untracked);
	if (st->alloc_foreign_frees)
		summary__add(sum, SUMMARY_SAMPLING, "frees of blocks not seen allocated: %" PRIu64,
			     st->alloc_foreign_frees);
}

/* A time profile's own lines: the samples on CPU, the intervals off CPU, what was lost. */
static void summary__time(const struct profile *p, struct profile_summary *sum)
{
	const struct profile_stats *st = &p->stats;
	char s1[32], s2[32], hz[32] = "";

	if (p->freq_hz)
		snprintf(hz, sizeof(hz), " at %" PRIu32 " Hz", p->freq_hz);
	summary__add(sum, SUMMARY_SAMPLES, "on-CPU samples: %" PRIu64 " in %s s%s", st->samples,
		     seconds(s1, p->duration, 1), hz);
	if (st->idle_samples)
		summary__add(sum, SUMMARY_SAMPLES, "of which idle CPUs: %" PRIu64,
			     st->idle_samples);
	summary__add(sum, SUMMARY_SAMPLES, "samples lost: %" PRIu64, st->lost_samples);
	/*
	 * Said when they matter to the profile: the profiler's own bpf() calls
	 * cost a few (its map updates hold the kernel's BPF programs off).
	 */
	if (st->not_taken >= 20 && st->not_taken * 100 >= st->samples + st->not_taken)
		summary__add(sum, SUMMARY_SAMPLES,
			     "samples not taken: %" PRIu64
			     " (the CPU was running another BPF program)",
			     st->not_taken);
	if (p->mode != PROFILE_CPU) {
		summary__add(sum, SUMMARY_SAMPLES, "intervals off CPU: %" PRIu64 " (%s s)",
			     st->offcpu_intervals, seconds(s2, st->offcpu_ns, 3));
		summary__add(sum, SUMMARY_SAMPLES, "intervals off CPU lost: %" PRIu64,
			     st->lost_offcpu);
		if (st->offcpu_short)
			summary__add(sum, SUMMARY_SAMPLES,
				     "intervals off CPU under --off-cpu-min: %" PRIu64 " (%s s)",
				     st->offcpu_short, seconds(s2, st->offcpu_short_ns, 3));
	}
}

void profile__summary(const struct profile *p, struct profile_summary *sum)
{
	const struct profile_stats *st = &p->stats;

	sum->nr = 0;
	if (p->mode == PROFILE_ALLOC)
		summary__alloc(p, sum);
	else
		summary__time(p, sum);
	summary__add(sum, SUMMARY_STACKS, "truncated stacks: %" PRIu64, st->truncated);
	summary__add(sum, SUMMARY_STACKS, "stack read errors: %" PRIu64, st->stack_errors);
	summary__add(sum, SUMMARY_STACKS, "processes with unreadable maps: %" PRIu64,
		     st->maps_unreadable);
	summary__add(sum, SUMMARY_FRAMES,
		     "frames: %" PRIu64 " with source lines, %" PRIu64 " function only, %" PRIu64
		     " unnamed, %" PRIu64 " unmapped, %" PRIu64 " JIT, %" PRIu64 " Python, %" PRIu64
		     " JavaScript",
		     st->frames[FRAME_LINES], st->frames[FRAME_SYMBOL], st->frames[FRAME_NO_SYMBOL],
		     st->frames[FRAME_NO_MAPPING], st->frames[FRAME_JIT], st->frames[FRAME_PYTHON],
		     st->frames[FRAME_JS]);
	summary__add(sum, SUMMARY_FRAMES, "DWARF units unreadable: %" PRIu64, st->dwarf_units_lost);
	for (size_t i = 0; i < p->nr_bpf_progs; i++) {
		const struct profile_bpf_prog *b = &p->bpf_progs[i];

		summary__add(sum, SUMMARY_BPF,
			     "BPF program %.40s (id %" PRIu32 "): %" PRIu64
			     " runs, %.2f us a run, %.1f%% of a CPU",
			     b->name, b->id, b->runs, b->run_ns / 1e3 / b->runs,
			     p->duration ? 100.0 * b->run_ns / p->duration : 0.0);
	}
}
