// SPDX-License-Identifier: GPL-2.0-only
/* Aggregation of samples into distinct stacks. */
#include <errno.h>
#include <stdlib.h>

#include "common/stack_table.h"
#include "common/strset.h"
#include "test.h"

/* A sample of @nr_user user frames (at most 8) from @leaf, under one kernel frame. */
static struct stack_sample *event(uint32_t pid, uint32_t tid, uint64_t time, int nr_user,
				  uint64_t leaf)
{
	static const uint64_t kernel[] = { 0xffffffff81000000ULL };
	static uint64_t user[8];
	static struct stack_sample e;

	memset(&e, 0, sizeof(e));
	e.nr_intervals = 1;
	e.count = 1;
	e.pid = pid;
	e.tid = tid;
	e.time_ns = time;
	e.nr_kernel = 1;
	e.kernel = kernel;
	e.nr_user = nr_user;
	e.user = user;
	for (int i = 0; i < nr_user; i++)
		user[i] = leaf + i * 0x10;
	return &e;
}

static struct stack_entry *find(struct stack_table *t, uint32_t tid, uint64_t leaf, int nr_user)
{
	struct stack_entry *s;
	size_t i;

	stack_table__for_each_entry(t, i, s)
		if (s->tid == tid && s->ips[s->nr_kernel] == leaf && s->nr_user == nr_user)
			return s;
	return NULL;
}

TEST(stack_table_aggregates_identical_stacks)
{
	struct strset *strings = strset__new();
	const char *comm = strset__add(strings, "worker");
	struct stack_table t;
	struct stack_entry *s;
	bool is_new;

	stack_table__init(&t);
	CHECK(stack_table__add(&t, event(10, 11, 100, 3, 0x1000), comm, comm, &is_new) && is_new);
	CHECK(stack_table__add(&t, event(10, 11, 200, 3, 0x1000), comm, comm, &is_new) && !is_new);
	/* Another thread, another stack, another depth: three new entries. */
	CHECK(stack_table__add(&t, event(10, 12, 300, 3, 0x1000), comm, comm, &is_new) && is_new);
	CHECK(stack_table__add(&t, event(10, 11, 400, 3, 0x2000), comm, comm, &is_new) && is_new);
	CHECK(stack_table__add(&t, event(10, 11, 500, 2, 0x1000), comm, comm, &is_new) && is_new);
	for (int i = 0; i < 1000; i++)
		CHECK(stack_table__add(&t, event(10, 11, 1000 + i, 3, 0x1000), comm, comm,
				       &is_new));
	CHECK_U64(t.entries.nr, 4);
	CHECK_U64(t.nr_samples, 1005);
	s = find(&t, 11, 0x1000, 3);
	CHECK(s != NULL);
	CHECK_U64(s->count, 1002);
	CHECK_U64(s->times[0], 100);
	CHECK_U64(s->times[1], 200);
	CHECK_U64(s->times[1001], 1999);
	CHECK_U64(s->ips[0], 0xffffffff81000000ULL);
	CHECK_U64(s->ips[3], 0x1020);
	s = find(&t, 12, 0x1000, 3);
	CHECK(s && s->count == 1);
	s = find(&t, 11, 0x1000, 2);
	CHECK(s && s->count == 1 && s->times[0] == 500);
	CHECK(!s->offcpu && s->weight_ns == 0);
	stack_table__release(&t);
	strset__free(strings);
}

/* The same addresses after the process loaded other code there are another stack. */
TEST(stack_table_keeps_code_generations_apart)
{
	struct strset *strings = strset__new();
	const char *comm = strset__add(strings, "worker");
	struct stack_sample *e;
	struct stack_table t;
	struct stack_entry *s;
	bool is_new;

	stack_table__init(&t);
	CHECK(stack_table__add(&t, event(10, 11, 100, 3, 0x1000), comm, comm, &is_new) && is_new);
	e = event(10, 11, 200, 3, 0x1000);
	e->code_gen = 1;
	s = stack_table__add(&t, e, comm, comm, &is_new);
	CHECK(s && is_new && s->code_gen == 1);
	e = event(10, 11, 300, 3, 0x1000);
	e->code_gen = 1;
	CHECK(stack_table__add(&t, e, comm, comm, &is_new) == s && !is_new);
	CHECK_U64(t.entries.nr, 2);
	CHECK_U64(s->count, 2);
	stack_table__release(&t);
	strset__free(strings);
}

TEST(stack_table_keeps_offcpu_apart)
{
	struct strset *strings = strset__new();
	const char *comm = strset__add(strings, "worker");
	struct stack_sample *e;
	struct stack_table t;
	struct stack_entry *on, *off;
	bool is_new;

	stack_table__init(&t);
	on = stack_table__add(&t, event(10, 11, 100, 3, 0x1000), comm, comm, &is_new);
	/* The same stack off CPU is another entry, whose weights add up. */
	e = event(10, 11, 200, 3, 0x1000);
	e->offcpu = true;
	e->weight_ns = 1500;
	off = stack_table__add(&t, e, comm, comm, &is_new);
	CHECK(on && off && on != off && is_new);
	e = event(10, 11, 300, 3, 0x1000);
	e->offcpu = true;
	e->weight_ns = 2500;
	CHECK(stack_table__add(&t, e, comm, comm, &is_new) == off && !is_new);
	CHECK(off->offcpu && !on->offcpu);
	CHECK_U64(off->count, 2);
	CHECK_U64(off->weight_ns, 4000);
	CHECK_U64(on->weight_ns, 0);
	stack_table__release(&t);
	strset__free(strings);
}

TEST(strset_interns)
{
	struct strset *set = strset__new();
	const char *a = strset__add(set, "hot_a");
	const char *b = strset__add_len(set, "hot_a_and_more", 5);
	char big[2000];

	CHECK(a && a == b);
	CHECK_STR(a, "hot_a");
	CHECK(strset__add(set, "hot_b") != a);
	CHECK(strset__addf(set, "%s+0x%x", "libc.so.6", 0x1234) ==
	      strset__add(set, "libc.so.6+0x1234"));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(strset__addf(set, "%s", big) == strset__add(set, big));
	for (int i = 0; i < 100000; i++)
		CHECK(strset__addf(set, "sym%d", i));
	CHECK_STR(strset__addf(set, "sym%d", 4242), "sym4242");
	CHECK_U64(strset__count(set), 100000 + 4);
	strset__free(set);
	strset__free(NULL);
}

TEST(stack_table_overflows_past_max_stacks)
{
	struct strset *strings = strset__new();
	const char *comm = strset__add(strings, "worker");
	struct stack_table t;
	struct stack_entry *s, *bucket = NULL;
	size_t i, nr_buckets = 0;
	bool is_new;

	stack_table__init(&t);
	t.max_stacks = 3;
	for (int k = 0; k < 3; k++)
		CHECK(stack_table__add(&t, event(10, 11, k, 2, 0x1000 * (k + 1)), comm, comm,
				       &is_new) &&
		      is_new);
	/* A stack already kept is still counted as itself. */
	CHECK(stack_table__add(&t, event(10, 11, 3, 2, 0x1000), comm, comm, &is_new) && !is_new);
	/* New stacks go to the thread's one bucket, with their times. */
	for (int k = 0; k < 5; k++)
		CHECK(stack_table__add(&t, event(10, 11, 100 + k, 2, 0x9000 + k), comm, comm,
				       &is_new));
	CHECK_U64(t.nr_stacks, 3);
	CHECK_U64(t.nr_buckets, 1);
	CHECK_U64(t.overflowed, 5);
	CHECK_U64(t.dropped, 0);
	stack_table__for_each_entry(&t, i, s)
		if (s->overflow)
			bucket = s, nr_buckets++;
	CHECK_U64(nr_buckets, 1);
	CHECK(bucket && bucket->count == 5 && bucket->nr_kernel == 0 && bucket->nr_user == 0);
	CHECK(bucket && bucket->tid == 11 && bucket->times[4] == 104);
	/* One bucket per thread, up to 64 of them; then samples are dropped and counted. */
	for (uint32_t tid = 100; tid < 200; tid++)
		CHECK(stack_table__add(&t, event(10, tid, 1000, 2, 0xa000), comm, comm, &is_new));
	CHECK_U64(t.nr_buckets, 64);
	CHECK_U64(t.dropped, 100 - 63);
	CHECK_U64(t.nr_samples, 3 + 1 + 5 + 100);
	CHECK_U64(t.entries.nr, 3 + 64);
	stack_table__release(&t);
	strset__free(strings);
}

TEST(stack_table_counts_without_times)
{
	struct strset *strings = strset__new();
	const char *comm = strset__add(strings, "worker");
	struct stack_table t;
	struct stack_entry *s = NULL;
	bool is_new;

	stack_table__init(&t);
	t.no_times = true;
	for (int k = 0; k < 100; k++)
		s = stack_table__add(&t, event(10, 11, k, 2, 0x1000), comm, comm, &is_new);
	CHECK(s && s->count == 100 && s->times == NULL);
	CHECK_U64(t.nr_samples, 100);
	stack_table__release(&t);
	strset__free(strings);
}

/* A record standing for samples the BPF program counted adds them all, in buckets too. */
TEST(stack_table_adds_counted_samples)
{
	struct strset *strings = strset__new();
	const char *comm = strset__add(strings, "worker");
	struct stack_table t;
	struct stack_entry *s;
	struct stack_sample *e;
	bool is_new;

	stack_table__init(&t);
	t.no_times = true;
	t.max_stacks = 1;
	CHECK(stack_table__add(&t, event(10, 11, 0, 2, 0x1000), comm, comm, &is_new));
	e = event(10, 11, 5, 2, 0x1000);
	e->nr_intervals = e->count = 250;
	s = stack_table__add(&t, e, comm, comm, &is_new);
	CHECK(s && !is_new && s->count == 251 && !s->overflow);
	/* A second stack overflows into its thread's bucket, with its count. */
	e = event(10, 11, 6, 2, 0x2000);
	e->nr_intervals = e->count = 40;
	s = stack_table__add(&t, e, comm, comm, &is_new);
	CHECK(s && s->overflow && s->count == 40);
	CHECK_U64(t.overflowed, 40);
	CHECK_U64(t.nr_samples, 291);
	stack_table__release(&t);
	strset__free(strings);
}

/*
 * Samples counted after the first of a stack was added go to that first
 * one's entry: a kept stack, an overflow bucket, or the dropped samples.
 */
TEST(stack_table_adds_a_count_to_an_entry)
{
	struct strset *strings = strset__new();
	const char *comm = strset__add(strings, "worker");
	struct stack_table t;
	struct stack_entry *kept, *bucket, *dropped = NULL;
	bool is_new;

	stack_table__init(&t);
	t.no_times = true;
	t.max_stacks = 1;
	kept = stack_table__add(&t, event(10, 11, 0, 2, 0x1000), comm, comm, &is_new);
	bucket = stack_table__add(&t, event(10, 11, 1, 2, 0x2000), comm, comm, &is_new);
	CHECK(kept && bucket && !kept->overflow && bucket->overflow);
	/* Every thread's bucket taken (64 of them): the next new stack is dropped. */
	for (uint32_t tid = 100; tid < 200 && !dropped; tid++) {
		struct stack_entry *s =
			stack_table__add(&t, event(10, tid, 2, 2, 0x3000), comm, comm, &is_new);

		if (s && s == t.drop)
			dropped = s;
	}
	CHECK(dropped != NULL);
	CHECK_U64(t.dropped, 1);
	CHECK(stack_table__add_count(&t, kept, 99) == 0);
	CHECK(stack_table__add_count(&t, bucket, 9) == 0);
	CHECK(stack_table__add_count(&t, dropped, 4) == 0);
	CHECK_U64(kept->count, 100);
	CHECK_U64(kept->nr_intervals, 100);
	CHECK_U64(bucket->count, 10);
	CHECK_U64(t.overflowed, 1 + 63 + 9);
	CHECK_U64(t.dropped, 5);
	CHECK_U64(t.nr_samples, 2 + 64 + 99 + 9 + 4);
	/* A table that keeps times has no count to add to. */
	t.no_times = false;
	CHECK(stack_table__add_count(&t, kept, 1) == -EINVAL);
	CHECK_U64(kept->count, 100);
	stack_table__release(&t);
	strset__free(strings);
}
