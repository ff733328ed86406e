// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include <bpf/libbpf.h>

#include "bpf/profile.h"
#include "common/hashtab.h"
#include "thread_cpu.h"

/* A thread's time on CPU. */
struct thread_time {
	uint32_t pid, tid;
	uint64_t ns;
};

struct thread_cpu {
	struct hashtab threads; /* struct thread_time by pid and tid */
};

static uint64_t thread_hash(uint32_t pid, uint32_t tid)
{
	return hash_mix(hash_mix(0, pid), tid);
}

static bool thread_time_eq(const void *entry, const void *key)
{
	const struct thread_time *a = entry, *b = key;

	return a->pid == b->pid && a->tid == b->tid;
}

struct thread_cpu *thread_cpu__read(const struct bpf_map *oncpu, uint64_t stop_ns)
{
	struct thread_cpu *t = calloc(1, sizeof(*t));
	struct thread_oncpu v;
	__u32 tid, next;
	bool first = true;

	if (!t)
		return NULL;
	while (!bpf_map__get_next_key(oncpu, first ? NULL : &tid, &next, sizeof(next))) {
		struct thread_time key, *tt;
		bool added;

		first = false;
		tid = next;
		if (bpf_map__lookup_elem(oncpu, &tid, sizeof(tid), &v, sizeof(v), 0))
			continue;
		key = (struct thread_time){ .pid = v.pid, .tid = tid };
		tt = hashtab__find_or_add(&t->threads, thread_hash(v.pid, tid), thread_time_eq,
					  &key, sizeof(*tt), &added);
		if (!tt) {
			thread_cpu__free(t);
			errno = ENOMEM;
			return NULL;
		}
		*tt = key;
		tt->ns = v.oncpu_ns;
		if (v.in_ns && v.in_ns < stop_ns)
			tt->ns += stop_ns - v.in_ns;
	}
	return t;
}

void thread_cpu__free(struct thread_cpu *t)
{
	struct thread_time *tt;
	size_t i;

	if (!t)
		return;
	hashtab__for_each_entry(&t->threads, i, tt)
		free(tt);
	hashtab__release(&t->threads);
	free(t);
}

bool thread_cpu__get(const struct thread_cpu *t, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	struct thread_time key = { .pid = pid, .tid = tid };
	const struct thread_time *tt =
		t ? hashtab__find(&t->threads, thread_hash(pid, tid), thread_time_eq, &key) : NULL;

	if (tt)
		*ns = tt->ns;
	return tt != NULL;
}
