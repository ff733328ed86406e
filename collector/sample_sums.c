// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "bpf/profile.h"
#include "common/stack_table.h"
#include "sample_sums.h"
#include "user_stacks.h"

/* A first sample: where its later samples are counted, and how they are judged. */
struct summed_first {
	struct sum_key key;
	struct stack_entry *entry;
	struct stack_judgement judgement;
	bool idle;
};

void sample_sums__init(struct sample_sums *s)
{
	memset(s, 0, sizeof(*s));
}

void sample_sums__release(struct sample_sums *s)
{
	struct summed_first *f;
	size_t i;

	hashtab__for_each_entry(&s->firsts, i, f)
		free(f);
	hashtab__release(&s->firsts);
}

static bool summed_first_eq(const void *entry, const void *key)
{
	return !memcmp(&((const struct summed_first *)entry)->key, key, sizeof(struct sum_key));
}

static uint64_t sum_key_hash(const struct sum_key *key)
{
	return hash_mix(key->tid, key->stack_hash);
}

int sample_sums__remember(struct sample_sums *s, const struct sample_record *r,
			  struct stack_entry *entry, const struct stack_judgement *j)
{
	struct sum_key key = profile_sum_key(r, r->h.cpu);
	uint64_t hash = sum_key_hash(&key);
	struct summed_first *f;

	if (!entry || hashtab__find(&s->firsts, hash, summed_first_eq, &key))
		return 0;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->key = key;
	f->entry = entry;
	f->judgement = *j;
	f->idle = !r->h.tid;
	if (hashtab__insert(&s->firsts, hash, f)) {
		free(f);
		return -ENOMEM;
	}
	return 0;
}

int sample_sums__flush(struct sample_sums *s, const struct bpf_map *map, struct stack_table *table,
		       struct user_stacks *us)
{
	const struct summed_first *f;
	struct sum_key key, next;
	bool first = true;
	__u64 count;
	int err = 0;

	while (!err && !bpf_map__get_next_key(map, first ? NULL : &key, &next, sizeof(next))) {
		first = false;
		key = next;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &count, sizeof(count), 0) ||
		    !count)
			continue;
		f = hashtab__find(&s->firsts, sum_key_hash(&key), summed_first_eq, &key);
		/* Its first sample was lost after all (the ring buffer was full). */
		if (!f) {
			s->orphans += count;
			continue;
		}
		s->nr_counts++;
		err = stack_table__add_count(table, f->entry, count);
		user_stacks__count(us, &f->judgement, count);
		s->idle += f->idle ? count : 0;
	}
	return err;
}
