// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/profile.h"
#include "stack_table.h"

struct stack_key {
	const struct sample_event *e;
	const char *thread_name;
};

static bool entry_eq(const void *entry, const void *key)
{
	const struct stack_entry *s = entry;
	const struct stack_key *k = key;
	const struct sample_event *e = k->e;

	const struct thread_stacks *st = &e->stack;

	return s->tid == e->tid && s->pid == e->pid && s->thread_name == k->thread_name &&
	       s->offcpu == (e->type == EVENT_OFFCPU) && s->nr_kernel == st->nr_kernel &&
	       s->nr_user == st->nr_user &&
	       !memcmp(s->ips, st->kernel, st->nr_kernel * sizeof(uint64_t)) &&
	       !memcmp(s->ips + st->nr_kernel, st->user, st->nr_user * sizeof(uint64_t));
}

static uint64_t event_hash(const struct sample_event *e, const char *thread_name)
{
	uint64_t h = hash_mix(((uint64_t)e->pid << 32) | e->tid, (uintptr_t)thread_name + e->type);

	h = hash_words(h, e->stack.kernel, e->stack.nr_kernel);
	return hash_words(h ^ 0x5bd1e995, e->stack.user, e->stack.nr_user);
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
	t->nr_samples = 0;
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

struct stack_entry *stack_table__add(struct stack_table *t, const struct sample_event *e,
				     const char *thread_name, const char *process_name,
				     bool *is_new)
{
	struct stack_key key = { e, thread_name };
	uint64_t hash = event_hash(e, thread_name);
	struct stack_entry *s;
	const struct thread_stacks *st = &e->stack;
	size_t nr = (size_t)st->nr_kernel + st->nr_user;

	*is_new = false;
	s = hashtab__find(&t->entries, hash, entry_eq, &key);
	if (!s) {
		s = calloc(1, sizeof(*s) + nr * sizeof(s->ips[0]));
		if (!s)
			goto out_nomem;
		s->pid = e->pid;
		s->tid = e->tid;
		s->thread_name = thread_name;
		s->process_name = process_name;
		s->flags = st->flags;
		s->offcpu = e->type == EVENT_OFFCPU;
		s->nr_kernel = st->nr_kernel;
		s->nr_user = st->nr_user;
		memcpy(s->ips, st->kernel, st->nr_kernel * sizeof(uint64_t));
		memcpy(s->ips + st->nr_kernel, st->user, st->nr_user * sizeof(uint64_t));
		if (hashtab__insert(&t->entries, hash, s)) {
			free(s);
			goto out_nomem;
		}
		*is_new = true;
	}
	if (push_time(s, e->time_ns))
		goto out_nomem;
	s->weight_ns += e->weight_ns;
	t->nr_samples++;
	return s;

out_nomem:
	errno = ENOMEM;
	return NULL;
}
