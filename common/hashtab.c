// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"

void hashtab__init(struct hashtab *ht)
{
	memset(ht, 0, sizeof(*ht));
}

void hashtab__release(struct hashtab *ht)
{
	free(ht->slots);
	hashtab__init(ht);
}

void *hashtab__find(const struct hashtab *ht, uint64_t hash, hashtab_eq_fn eq, const void *key)
{
	size_t mask = ht->cap - 1;

	if (!ht->cap)
		return NULL;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		const struct hashtab_slot *s = &ht->slots[i];

		if (!s->entry)
			return NULL;
		if (s->hash == hash && eq(s->entry, key))
			return s->entry;
	}
}

static void place(struct hashtab_slot *slots, size_t cap, uint64_t hash, void *entry)
{
	size_t i = hash & (cap - 1);

	while (slots[i].entry)
		i = (i + 1) & (cap - 1);
	slots[i].hash = hash;
	slots[i].entry = entry;
}

static int grow(struct hashtab *ht)
{
	size_t cap = ht->cap ? ht->cap * 2 : 64;
	struct hashtab_slot *slots;

	if (cap < ht->cap || cap > SIZE_MAX / sizeof(*slots))
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < ht->cap; i++)
		if (ht->slots[i].entry)
			place(slots, cap, ht->slots[i].hash, ht->slots[i].entry);
	free(ht->slots);
	ht->slots = slots;
	ht->cap = cap;
	return 0;
}

int hashtab__insert(struct hashtab *ht, uint64_t hash, void *entry)
{
	/* Keep the load factor under 3/4 so linear probes stay short. */
	if ((ht->nr + 1) * 4 > ht->cap * 3) {
		int err = grow(ht);

		if (err)
			return err;
	}
	place(ht->slots, ht->cap, hash, entry);
	ht->nr++;
	return 0;
}

void *hashtab__find_or_add(struct hashtab *ht, uint64_t hash, hashtab_eq_fn eq, const void *key,
			   size_t size, bool *added)
{
	void *entry = hashtab__find(ht, hash, eq, key);

	*added = false;
	if (entry)
		return entry;
	entry = calloc(1, size);
	if (!entry)
		return NULL;
	if (hashtab__insert(ht, hash, entry)) {
		free(entry);
		return NULL;
	}
	*added = true;
	return entry;
}

uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = len;
	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = hash_mix(h, w);
	}
	w = 0;
	memcpy(&w, p, len);
	return hash_mix(h, w);
}

static bool same_entry(const void *entry, const void *key)
{
	return entry == key;
}

bool ptr_set__has(const struct hashtab *set, const void *p)
{
	return hashtab__find(set, hash_mix(0, (uintptr_t)p), same_entry, p) != NULL;
}

int ptr_set__add(struct hashtab *set, const void *p)
{
	return ptr_set__has(set, p) ? 0 :
				      hashtab__insert(set, hash_mix(0, (uintptr_t)p), (void *)p);
}

int hashtab__retain(struct hashtab *ht, bool (*keep)(void *entry, void *arg),
		    void (*drop)(void *entry, void *arg), void *arg)
{
	struct hashtab kept = HASHTAB_INIT;
	struct hashtab_slot *s;

	for (s = ht->slots; s < ht->slots + ht->cap; s++)
		if (s->entry && keep(s->entry, arg) && hashtab__insert(&kept, s->hash, s->entry)) {
			hashtab__release(&kept);
			return -ENOMEM;
		}
	for (s = ht->slots; drop && s < ht->slots + ht->cap; s++)
		if (s->entry && !hashtab__find(&kept, s->hash, same_entry, s->entry))
			drop(s->entry, arg);
	hashtab__release(ht);
	*ht = kept;
	return 0;
}
