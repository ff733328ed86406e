// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of common/hashtab: finding what was inserted, through growth, equal
 * hashes and probes that wrap around the end of the slots; iteration; the
 * hashing helpers.
 */
#include <stdlib.h>

#include "common/hashtab.h"
#include "test.h"

struct item {
	uint64_t key;
	unsigned int seen; /* times hashtab__for_each_entry() visited it */
};

static bool item_eq(const void *entry, const void *key)
{
	return ((const struct item *)entry)->key == *(const uint64_t *)key;
}

static struct item *find(const struct hashtab *ht, uint64_t hash, uint64_t key)
{
	return hashtab__find(ht, hash, item_eq, &key);
}

TEST(hashtab_empty)
{
	struct hashtab ht = HASHTAB_INIT;
	struct item a = { .key = 1 };

	CHECK(!find(&ht, 1, 1));
	hashtab__init(&ht);
	CHECK(!find(&ht, 1, 1));
	CHECK_U64(ht.nr, 0);
	/* Released empty, then used again. */
	hashtab__release(&ht);
	CHECK(hashtab__insert(&ht, 1, &a) == 0);
	CHECK(find(&ht, 1, 1) == &a);
	hashtab__release(&ht);
	CHECK(!ht.slots && !ht.cap && !ht.nr);
	CHECK(!find(&ht, 1, 1));
}

/* Ten thousand entries: every one found after the table has grown many times. */
TEST(hashtab_insert_find_grow)
{
	enum {
		N = 10000
	};
	struct hashtab ht = HASHTAB_INIT;
	struct item *items = calloc(N, sizeof(*items));
	size_t caps = 0, last_cap = 0, i;
	struct item *e;

	CHECK(items);
	for (i = 0; i < N; i++) {
		items[i].key = i * 7919 + 3;
		if (find(&ht, hash_words(0, &items[i].key, 1), items[i].key))
			break;
		if (hashtab__insert(&ht, hash_words(0, &items[i].key, 1), &items[i]))
			break;
		if (ht.cap != last_cap) {
			last_cap = ht.cap;
			caps++;
		}
		/* A power of two, at most 3/4 full. */
		if ((ht.cap & (ht.cap - 1)) || ht.nr * 4 > ht.cap * 3)
			break;
	}
	if (i < N)
		test__fail(__FILE__, __LINE__, "insert %zu: nr %zu cap %zu", i, ht.nr, ht.cap);
	CHECK_U64(ht.nr, N);
	CHECK(caps > 5);
	for (i = 0; i < N; i++)
		if (find(&ht, hash_words(0, &items[i].key, 1), items[i].key) != &items[i])
			break;
	if (i < N)
		test__fail(__FILE__, __LINE__, "entry %zu (key %" PRIu64 ") not found", i,
			   items[i].key);
	/* Keys never inserted, and a present key under another hash, are not found. */
	CHECK(!find(&ht, hash_words(0, &(uint64_t){ 2 }, 1), 2));
	CHECK(!find(&ht, hash_words(0, &items[5].key, 1) + 1, items[5].key));
	/* Iteration visits every entry once. */
	hashtab__for_each_entry(&ht, i, e)
		e->seen++;
	for (i = 0; i < N; i++)
		if (items[i].seen != 1)
			break;
	if (i < N)
		test__fail(__FILE__, __LINE__, "entry %zu visited %u times", i, items[i].seen);
	hashtab__release(&ht);
	free(items);
}

/* Entries under one hash: told apart by the equality function alone. */
TEST(hashtab_equal_hashes)
{
	enum {
		N = 200
	};
	struct hashtab ht = HASHTAB_INIT;
	struct item items[N];
	size_t i;

	for (i = 0; i < N; i++) {
		items[i].key = 1000 + i;
		CHECK(hashtab__insert(&ht, 42, &items[i]) == 0);
	}
	for (i = 0; i < N; i++)
		if (find(&ht, 42, 1000 + i) != &items[i])
			break;
	if (i < N)
		test__fail(__FILE__, __LINE__, "key %zu not found among equal hashes", 1000 + i);
	CHECK(!find(&ht, 42, 999));
	CHECK(!find(&ht, 43, 1000));
	hashtab__release(&ht);
}

/*
 * Hashes that all land on the last slot of the first table (64 slots): the
 * probe wraps around to slot 0, before and after the table grows.
 */
TEST(hashtab_probe_wraps)
{
	enum {
		N = 60,
		FIRST = 40
	};
	struct hashtab ht = HASHTAB_INIT;
	struct item items[N];
	size_t i;

	for (i = 0; i < N; i++) {
		items[i].key = i;
		CHECK(hashtab__insert(&ht, 63 + 64 * i, &items[i]) == 0);
		if (i == FIRST - 1) {
			CHECK_U64(ht.cap, 64);
			CHECK(ht.slots[0].entry && ht.slots[63].entry);
			for (size_t j = 0; j < FIRST; j++)
				CHECK(find(&ht, 63 + 64 * j, j) == &items[j]);
		}
	}
	/* Grown, the same hashes land on slots 63 and 127, and wrap from 127. */
	CHECK_U64(ht.cap, 128);
	CHECK(ht.slots[0].entry && ht.slots[127].entry);
	for (i = 0; i < N; i++)
		CHECK(find(&ht, 63 + 64 * i, i) == &items[i]);
	hashtab__release(&ht);
}

TEST(hashtab_hashes)
{
	uint64_t words[3] = { 1, 2, 3 };

	/* hash_words is hash_mix over the words, in order. */
	CHECK_U64(hash_words(5, words, 3), hash_mix(hash_mix(hash_mix(5, 1), 2), 3));
	CHECK(hash_words(5, words, 3) != hash_words(5, words, 2));
	CHECK(hash_words(5, words, 1) != hash_words(6, words, 1));
	/* hash_bytes: deterministic, and every byte and the length count. */
	CHECK_U64(hash_bytes("profiler", 8), hash_bytes("profiler", 8));
	CHECK(hash_bytes("profiler", 8) != hash_bytes("profilex", 8));
	CHECK(hash_bytes("profiler!", 9) != hash_bytes("profiler?", 9));
	CHECK(hash_bytes("a", 1) != hash_bytes("a\0", 2));
	CHECK(hash_bytes("", 0) != hash_bytes("\0", 1));
}

static bool keep_even(void *entry, void *arg)
{
	(void)arg;
	return *(int *)entry % 2 == 0;
}

static void count_drop(void *entry, void *arg)
{
	(*(int *)arg)++;
	*(int *)entry = -1;
}

static bool int_eq(const void *entry, const void *key)
{
	return *(const int *)entry == *(const int *)key;
}

/* The entries kept are found as before; each other one is dropped once, and found no more. */
TEST(hashtab_retain)
{
	struct hashtab ht = HASHTAB_INIT;
	int values[100], dropped = 0;

	for (int i = 0; i < 100; i++) {
		values[i] = i;
		CHECK(!hashtab__insert(&ht, hash_mix(0, i), &values[i]));
	}
	CHECK(!hashtab__retain(&ht, keep_even, count_drop, &dropped));
	CHECK_U64(ht.nr, 50);
	CHECK_U64(dropped, 50);
	for (int i = 0; i < 100; i++) {
		int key = i;
		int *found = hashtab__find(&ht, hash_mix(0, i), int_eq, &key);

		CHECK(i % 2 ? !found && values[i] == -1 : found == &values[i]);
	}
	/* Keeping all drops nothing; keeping none empties it, and it is usable again. */
	dropped = 0;
	CHECK(!hashtab__retain(&ht, keep_even, count_drop, &dropped));
	CHECK_U64(dropped, 0);
	CHECK_U64(ht.nr, 50);
	for (int i = 0; i < 100; i += 2)
		values[i] = 1;
	CHECK(!hashtab__retain(&ht, keep_even, NULL, NULL));
	CHECK_U64(ht.nr, 0);
	CHECK(!hashtab__insert(&ht, hash_mix(0, 7), &values[7]));
	CHECK_U64(ht.nr, 1);
	hashtab__release(&ht);
}
