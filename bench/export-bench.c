// SPDX-License-Identifier: GPL-2.0-only
/*
 * export-bench [STACKS] [SAMPLES] [DIR]: the stages after the ring buffer, on
 * synthetic data drawn from a fixed random sequence.
 *
 * Aggregation: SAMPLES (default 200,000) sample records, drawn among
 * STACKS / 4 distinct stacks of 4 threads, counted through a stack_table.
 * Export: a profile of STACKS (default 20,000) distinct stacks, 8 to 39
 * frames deep among 2,000 functions of 20 source files, each seen 1 to 100
 * times (with a timestamp each, as Firefox output wants), sorted and written
 * with pprof__write() and folded__write() to /dev/null.
 *
 * Prints "aggregate_ns N", "pprof_ns N" and "folded_ns N"; bench/callgrind
 * counts the instructions of each stage's function instead.
 *
 * With DIR, it then writes the profile into a file of DIR in each format,
 * as the profiler does once it has stopped and symbolized (export__write(),
 * from fopen() to fclose(): the file is written, the page cache may still
 * hold it), and prints "file FORMAT NS BYTES" for each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "common/stack_table.h"
#include "common/profile.h"
#include "common/strset.h"
#include "export/export.h"
#include "export/folded.h"
#include "export/pprof.h"

#define NR_FUNCS 2000
#define NR_FILES 20
#define MIN_DEPTH 8
#define MAX_DEPTH 39
#define NR_THREADS 4
#define TEXT_START 0x400000ULL

static struct profile_line lines[NR_FUNCS];
static struct profile_frame frames[NR_FUNCS];
static struct profile_mapping mapping = {
	.start = TEXT_START,
	.limit = TEXT_START + NR_FUNCS * 0x100,
	.filename = "/usr/bin/synthetic",
	.build_id = "0123456789abcdef0123456789abcdef01234567",
	.has_functions = true,
	.has_filenames = true,
	.has_line_numbers = true,
	.main_binary = true,
};

static int make_frames(struct strset *strings)
{
	for (unsigned int i = 0; i < NR_FUNCS; i++) {
		lines[i].name = strset__addf(strings, "ns::Widget<%u>::update_%u(int)", i % 37, i);
		lines[i].system_name =
			strset__addf(strings, "_ZN2ns6WidgetILi%uEE8update_%uEi", i % 37, i);
		lines[i].filename = strset__addf(strings, "src/module_%u.cc", i % NR_FILES);
		lines[i].line = 10 + i;
		if (!lines[i].name || !lines[i].system_name || !lines[i].filename)
			return -1;
		frames[i] = (struct profile_frame){
			.address = TEXT_START + i * 0x100 + 0x10,
			.mapping = &mapping,
			.lines = &lines[i],
			.nr_lines = 1,
			.source = FRAME_LINES,
		};
	}
	return 0;
}

/* Stack @i of a fixed set: the same @i always gives the same frames. */
static unsigned int draw_stack(uint64_t i, uint64_t *ips)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (i * 0x100000001b3ULL);
	unsigned int depth = MIN_DEPTH + next_random(&seed) % (MAX_DEPTH - MIN_DEPTH + 1);

	for (unsigned int d = 0; d < depth; d++)
		ips[d] = next_random(&seed) % NR_FUNCS;
	return depth;
}

static int aggregate(struct strset *strings, unsigned long nr_stacks, unsigned long nr_samples)
{
	struct stack_sample e = { .pid = 1000, .nr_intervals = 1, .count = 1 };
	const char *comm[NR_THREADS];
	uint64_t seed = 42, ids[MAX_DEPTH], user[MAX_DEPTH];
	struct stack_table t;
	int err = 0;

	for (unsigned int i = 0; i < NR_THREADS; i++)
		comm[i] = strset__addf(strings, "worker-%u", i);
	stack_table__init(&t);
	e.user = user;
	for (unsigned long i = 0; i < nr_samples && !err; i++) {
		uint64_t stack = next_random(&seed) % nr_stacks;
		unsigned int tid = stack % NR_THREADS, depth = draw_stack(stack, ids);
		bool is_new;

		e.tid = 1000 + tid;
		e.time_ns = i * 1000;
		e.nr_user = depth;
		for (unsigned int d = 0; d < depth; d++)
			user[d] = frames[ids[d]].address;
		if (!stack_table__add(&t, &e, comm[tid], comm[0], &is_new))
			err = -1;
	}
	stack_table__release(&t);
	return err;
}

static int make_profile(struct profile *p, unsigned long nr_stacks)
{
	const struct profile_frame *stack[MAX_DEPTH];
	uint64_t ids[MAX_DEPTH], seed = 7, times[100];

	p->duration = 10000000000ULL;
	for (unsigned long i = 0; i < nr_stacks; i++) {
		struct profile_sample s = {
			.pid = 1000,
			.tid = 1000 + i % NR_THREADS,
			.process_name = strset__add(p->strings, "synthetic"),
			.thread_name = strset__addf(p->strings, "worker-%lu", i % NR_THREADS),
			.nr_frames = draw_stack(i, ids),
			.frames = stack,
			.count = 1 + next_random(&seed) % 100,
			.times = times,
		};

		for (unsigned int d = 0; d < s.nr_frames; d++)
			stack[d] = &frames[ids[d]];
		for (uint64_t k = 0; k < s.count; k++)
			times[k] = next_random(&seed) % p->duration;
		if (!s.process_name || !s.thread_name || !profile__add_sample(p, &s))
			return -1;
	}
	profile__sort(p);
	return 0;
}

/* Write @p into @dir in every format; print "file FORMAT NS BYTES" for each. */
static int write_files(const struct profile *p, const char *dir)
{
	static const char *const names[] = { "profile.pb.gz", "profile.folded", "profile.json",
					     "profile.json.gz", "profile.svg" };
	char path[4096];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		enum export_format format = export_format__from_path(names[i]);
		uint64_t t0 = now_ns();
		long bytes;
		FILE *out;
		int err;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		out = fopen(path, "w");
		if (!out) {
			perror(path);
			return -1;
		}
		err = export__write(format, p, out, path, NULL);
		fflush(out);
		bytes = ftell(out);
		if (fclose(out) || err) {
			fprintf(stderr, "export-bench: cannot write '%s'\n", path);
			return -1;
		}
		printf("file %s %llu %ld\n", names[i] + strlen("profile."),
		       (unsigned long long)(now_ns() - t0), bytes);
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long nr_stacks = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	unsigned long nr_samples = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	uint64_t t0, t1, t2, t3;
	struct profile *p;
	FILE *out;

	if (nr_stacks < 4) {
		fprintf(stderr, "usage: export-bench [STACKS (at least 4)] [SAMPLES] [DIR]\n");
		return 2;
	}
	p = profile__new(99);
	out = fopen("/dev/null", "w");
	if (!p || !out || make_frames(p->strings)) {
		perror("export-bench");
		return 1;
	}
	t0 = now_ns();
	if (aggregate(p->strings, nr_stacks / 4, nr_samples)) {
		perror("export-bench: aggregate");
		return 1;
	}
	t1 = now_ns();
	if (make_profile(p, nr_stacks)) {
		perror("export-bench: profile");
		return 1;
	}
	t2 = now_ns();
	if (pprof__write(p, out)) {
		fprintf(stderr, "export-bench: pprof__write failed\n");
		return 1;
	}
	t3 = now_ns();
	if (folded__write(p, out) || fclose(out)) {
		fprintf(stderr, "export-bench: folded__write failed\n");
		return 1;
	}
	printf("aggregate_ns %llu\npprof_ns %llu\nfolded_ns %llu\n", (unsigned long long)(t1 - t0),
	       (unsigned long long)(t3 - t2), (unsigned long long)(now_ns() - t3));
	if (argc > 3 && write_files(p, argv[3]))
		return 1;
	profile__free(p);
	return 0;
}
