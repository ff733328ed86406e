/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hashtab.h - an open-addressing hash table of caller-owned entries.
 *
 * Every cache and de-duplication table in the profiler is one of these: the
 * stack aggregator (one lookup per sample), the string interner, the
 * symbolizer's per-address memo and the exporters' id tables. It stores a
 * pointer and the entry's 64-bit hash per slot, so a probe compares hashes
 * before it calls the equality function and never touches a cold entry on
 * a miss. Debian ships no small C hash table worth a dependency here (glib
 * would be the whole of glib for one container), hence our own.
 *
 * The table never owns or frees entries. It is not thread-safe. Entries
 * cannot be removed: every user only grows its table until it is released.
 */
#ifndef PROFILER_HASHTAB_H
#define PROFILER_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct hashtab_slot {
	uint64_t hash;
	void *entry; /* NULL: empty slot */
};

struct hashtab {
	struct hashtab_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t nr;
};

/* Does @entry hold @key? */
typedef bool (*hashtab_eq_fn)(const void *entry, const void *key);

#define HASHTAB_INIT                                                                               \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

void hashtab__init(struct hashtab *ht);
/* Free the slots (not the entries) and leave @ht empty and reusable. */
void hashtab__release(struct hashtab *ht);

/* The entry with hash @hash for which @eq(entry, @key) holds, or NULL. */
void *hashtab__find(const struct hashtab *ht, uint64_t hash, hashtab_eq_fn eq, const void *key);

/*
 * Add @entry (non-NULL) under @hash. The caller has checked that no equal
 * entry is present. Returns 0 or -ENOMEM.
 */
int hashtab__insert(struct hashtab *ht, uint64_t hash, void *entry);

/*
 * The entry equal to @key, else a new one of @size zeroed bytes (from
 * calloc(): the owner frees it with free()) added under @hash, for the
 * caller to fill in: *@added says which. The caller sets the fields @eq
 * compares before the next lookup. NULL on ENOMEM.
 */
void *hashtab__find_or_add(struct hashtab *ht, uint64_t hash, hashtab_eq_fn eq, const void *key,
			   size_t size, bool *added);

/*
 * Keep the entries for which @keep(entry, @arg) holds (asked once each),
 * then hand each of the others to @drop(entry, @arg), if not NULL, to free
 * it: the one way out of a table, for one that lives long (entries cannot
 * be removed one by one). 0, or -ENOMEM with @ht as it was and nothing
 * dropped.
 */
int hashtab__retain(struct hashtab *ht, bool (*keep)(void *entry, void *arg),
		    void (*drop)(void *entry, void *arg), void *arg);

/*
 * A table used as a set of pointers: the entries are the pointers
 * themselves. Is @p in @set? Add @p to @set unless it is in it: 0 or
 * -ENOMEM.
 */
bool ptr_set__has(const struct hashtab *set, const void *p);
int ptr_set__add(struct hashtab *set, const void *p);

/* Iterate over the entries in slot order (not a stable order: sort before output). */
#define hashtab__for_each_entry(ht, i, e)                                                          \
	for ((i) = 0; (i) < (ht)->cap; (i)++)                                                      \
		if (((e) = (ht)->slots[(i)].entry) != NULL)

/* Hashing helpers: a 64-bit multiply-xorshift mix, fast on word-sized keys. */
static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

/* Hash @n 64-bit words at @words (any 64-bit integer type). */
static inline uint64_t hash_words(uint64_t seed, const void *words, size_t n)
{
	const unsigned char *p = words;
	uint64_t h = seed, w;

	for (size_t i = 0; i < n; i++) {
		memcpy(&w, p + i * sizeof(w), sizeof(w));
		h = hash_mix(h, w);
	}
	return h;
}

uint64_t hash_bytes(const void *data, size_t len);

/*
 * Hash a key packed into 64 bits (a pointer, or two 32-bit indexes) with a
 * bijection: an odd multiplier, then an xorshift by half the width. Equal
 * hashes then mean equal keys, so a table keyed this way can store the value
 * itself as the entry and look up with hash_u64_eq(), which never reads an
 * entry: that saves a cache miss on lookups made for every frame.
 */
static inline uint64_t hash_u64(uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 32);
}

/* The equality function of a table keyed by hash_u64(): the hashes matched, so do the keys. */
static inline bool hash_u64_eq(const void *entry, const void *key)
{
	(void)entry;
	(void)key;
	return true;
}

#endif
