// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack_table.h"

/* Overflow buckets allowed: a share of max_stacks, and enough for a few threads. */
#define MIN_BUCKETS 64
#define BUCKETS_SHARE 16

struct stack_key {
	const struct stack_sample *e;
	const char *thread_name;
	bool overflow; /* the thread's overflow bucket, not @e's stack */
};

/* memcmp() and memcpy() of @n words, where a stack with none may have no array at all. */
static bool same_words(const uint64_t *a, const uint64_t *b, size_t n)
{
	return !n || !memcmp(a, b, n * sizeof(*a));
}

static void copy_words(uint64_t *to, const uint64_t *from, size_t n)
{
	if (n)
		memcpy(to, from, n * sizeof(*to));
}

static bool entry_eq(const void *entry, const void *key)
{
	const struct stack_entry *s = entry;
	const struct stack_key *k = key;
	const struct stack_sample *e = k->e;

	if (s->tid != e->tid || s->pid != e->pid || s->thread_name != k->thread_name ||
	    s->offcpu != e->offcpu || s->overflow != k->overflow)
		return false;
	if (k->overflow)
		return true;
	if (s->labels != e->labels || s->code_gen != e->code_gen)
		return false;
	return s->nr_kernel == e->nr_kernel && s->nr_user == e->nr_user &&
	       same_words(s->ips, e->kernel, e->nr_kernel) &&
	       same_words(s->ips + e->nr_kernel, e->user, e->nr_user);
}

static uint64_t key_hash(const struct stack_key *k)
{
	const struct stack_sample *e = k->e;
	uint64_t h = hash_mix(((uint64_t)e->pid << 32) | e->tid,
			      (uintptr_t)k->thread_name + e->offcpu + k->overflow);

	if (k->overflow)
		return h;
	h = hash_mix(h, (uintptr_t)e->labels + e->code_gen);
	h = hash_words(h, e->kernel, e->nr_kernel);
	return hash_words(h ^ 0x5bd1e995, e->user, e->nr_user);
}

void stack_table__init(struct stack_table *t)
{
	memset(t, 0, sizeof(*t));
}

void stack_table__release(struct stack_table *t)
{
	struct stack_entry *s;
	size_t i;

	stack_table__for_each_entry(t, i, s) {
		free(s->times);
		free(s);
	}
	hashtab__release(&t->entries);
	free(t->drop);
	stack_table__init(t);
}

static int push_time(struct stack_entry *s, uint64_t time)
{
	if (s->count == s->alloc_times) {
		size_t alloc = s->alloc_times ? s->alloc_times * 2 : 4;
		uint64_t *times;

		if (alloc > SIZE_MAX / sizeof(*times))
			return -ENOMEM;
		times = realloc(s->times, alloc * sizeof(*times));
		if (!times)
			return -ENOMEM;
		s->times = times;
		s->alloc_times = alloc;
	}
	s->times[s->count++] = time;
	return 0;
}

/* A new entry for @k: @e's stack, or no frames for an overflow bucket. NULL on ENOMEM. */
static struct stack_entry *stack_entry__new(const struct stack_key *k, const char *process_name)
{
	const struct stack_sample *e = k->e;
	size_t nr = k->overflow ? 0 : (size_t)e->nr_kernel + e->nr_user;
	struct stack_entry *s = calloc(1, sizeof(*s) + nr * sizeof(s->ips[0]));

	if (!s)
		return NULL;
	s->pid = e->pid;
	s->tid = e->tid;
	s->thread_name = k->thread_name;
	s->process_name = process_name;
	s->offcpu = e->offcpu;
	s->overflow = k->overflow;
	if (k->overflow)
		return s;
	s->truncated = e->truncated;
	s->labels = e->labels;
	s->code_gen = e->code_gen;
	s->nr_kernel = e->nr_kernel;
	s->nr_user = e->nr_user;
	copy_words(s->ips, e->kernel, e->nr_kernel);
	copy_words(s->ips + e->nr_kernel, e->user, e->nr_user);
	return s;
}

static bool table_full(const struct stack_table *t)
{
	return t->max_stacks && t->nr_stacks >= t->max_stacks;
}

static bool buckets_full(const struct stack_table *t)
{
	size_t max = t->max_stacks / BUCKETS_SHARE;

	return t->nr_buckets >= (max > MIN_BUCKETS ? max : MIN_BUCKETS);
}

/* Count a sample that has no room anywhere: in @t->drop, never exported. */
static struct stack_entry *drop_sample(struct stack_table *t, uint64_t n)
{
	if (!t->drop) {
		t->drop = calloc(1, sizeof(*t->drop));
		if (!t->drop) {
			errno = ENOMEM;
			return NULL;
		}
	}
	t->drop->count += n;
	t->dropped += n;
	t->nr_samples += n;
	return t->drop;
}

struct stack_entry *stack_table__add(struct stack_table *t, const struct stack_sample *e,
				     const char *thread_name, const char *process_name,
				     bool *is_new)
{
	struct stack_key key = { e, thread_name, false };
	uint64_t hash = key_hash(&key);
	/* Samples the BPF program counted come as one, with their count (only without times). */
	uint64_t n = t->no_times ? e->count : 1;
	struct stack_entry *s;

	*is_new = false;
	s = hashtab__find(&t->entries, hash, entry_eq, &key);
	if (!s && table_full(t)) {
		key.overflow = true;
		hash = key_hash(&key);
		s = hashtab__find(&t->entries, hash, entry_eq, &key);
		if (!s && buckets_full(t))
			return drop_sample(t, n);
	}
	if (!s) {
		s = stack_entry__new(&key, process_name);
		if (!s)
			goto out_nomem;
		if (hashtab__insert(&t->entries, hash, s)) {
			free(s);
			goto out_nomem;
		}
		if (key.overflow)
			t->nr_buckets++;
		else
			t->nr_stacks++;
		*is_new = true;
	}
	if (t->no_times)
		s->count += n;
	else if (push_time(s, e->time_ns))
		goto out_nomem;
	s->weight_ns += e->weight_ns;
	s->nr_intervals += e->nr_intervals;
	t->overflowed += s->overflow ? n : 0;
	t->nr_samples += n;
	return s;

out_nomem:
	errno = ENOMEM;
	return NULL;
}

int stack_table__add_count(struct stack_table *t, struct stack_entry *s, uint64_t n)
{
	if (!t->no_times)
		return -EINVAL;
	if (s == t->drop) {
		drop_sample(t, n);
		return 0;
	}
	/* As stack_table__add() counts a sample record of @n samples. */
	s->count += n;
	s->nr_intervals += n;
	t->overflowed += s->overflow ? n : 0;
	t->nr_samples += n;
	return 0;
}

static bool same_pid(const void *entry, const void *key)
{
	return entry == key;
}

uint64_t stack_table__unmapped_pids(const struct stack_table *t)
{
	struct hashtab pids = HASHTAB_INIT;
	struct stack_entry *s;
	uint64_t n = 0;
	size_t i;

	stack_table__for_each_entry(t, i, s) {
		uint64_t pid = s->pid;

		if (!s->nr_user || s->maps ||
		    hashtab__find(&pids, hash_mix(0, pid), same_pid, (void *)(uintptr_t)pid))
			continue;
		/* The pid itself is the entry: it is never 0 here. */
		if (hashtab__insert(&pids, hash_mix(0, pid), (void *)(uintptr_t)pid))
			break;
		n++;
	}
	hashtab__release(&pids);
	return n;
}
