// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of common/lru: what was added is found with its bytes; past the
 * bound the least recently used keys go first, a find counting as a use;
 * the bytes counted stay within the bound and come back to nothing as
 * entries go; a key forgotten and added again is found with its new bytes.
 */
#include <stdio.h>
#include <string.h>

#include "common/lru.h"
#include "test.h"

/* The text kept for @key, as a string, or NULL. */
static const char *find(struct lru *lru, uint64_t key, char *buf, size_t size)
{
	const void *data;
	size_t len;

	data = lru__find(lru, key, &len);
	if (!data || len >= size)
		return NULL;
	memcpy(buf, data, len);
	buf[len] = '\0';
	return buf;
}

static int add(struct lru *lru, uint64_t key)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "answer %llu", (unsigned long long)key);

	return lru__add(lru, key, text, n);
}

TEST(lru_find_what_was_added)
{
	struct lru *lru = lru__new(1 << 20);
	char buf[32];

	CHECK(lru);
	if (!lru)
		return;
	CHECK(!find(lru, 7, buf, sizeof(buf)));
	CHECK_U64(lru__count(lru), 0);
	for (uint64_t k = 0; k < 1000; k++)
		CHECK(add(lru, k * 4096) == 0);
	CHECK_U64(lru__count(lru), 1000);
	CHECK_U64(lru__evictions(lru), 0);
	CHECK_STR(find(lru, 0, buf, sizeof(buf)), "answer 0");
	CHECK_STR(find(lru, 999 * 4096, buf, sizeof(buf)), "answer 4091904");
	CHECK(!find(lru, 1, buf, sizeof(buf)));
	/* An empty answer is an answer. */
	CHECK(lru__add(lru, 1, "", 0) == 0);
	CHECK_STR(find(lru, 1, buf, sizeof(buf)), "");
	lru__free(lru);
	lru__free(NULL);
}

/*
 * A bound that holds a few entries: adding more forgets the oldest, and a
 * key found again is the newest, so it outlives keys added after it.
 */
TEST(lru_eviction_order)
{
	struct lru *probe = lru__new(1 << 20);
	struct lru *lru = NULL;
	size_t one, buckets, fixed, bound;
	char buf[32];

	CHECK(probe);
	if (!probe)
		return;
	/*
	 * What one entry and the first slots cost, measured, not assumed; and
	 * the doorkeeper's bits, which depend on the bound: sized again until
	 * they stay the same.
	 */
	fixed = lru__bytes(probe);
	CHECK(add(probe, 100) == 0);
	buckets = lru__bytes(probe) - fixed;
	CHECK(add(probe, 101) == 0);
	one = lru__bytes(probe) - fixed - buckets;
	buckets -= one;
	CHECK(one > 0 && buckets > 0);
	lru__free(probe);

	/* Room for four entries of this size, not five. */
	fixed = 0;
	for (int i = 0; i < 5; i++) {
		lru__free(lru);
		bound = fixed + buckets + 4 * one + one / 2;
		lru = lru__new(bound);
		CHECK(lru);
		if (!lru)
			return;
		if (lru__bytes(lru) == fixed)
			break;
		fixed = lru__bytes(lru);
	}
	for (uint64_t k = 100; k < 104; k++)
		CHECK(add(lru, k) == 0);
	CHECK_U64(lru__count(lru), 4);
	CHECK_U64(lru__evictions(lru), 0);
	/* 100 is used again: 101 is now the oldest. */
	CHECK_STR(find(lru, 100, buf, sizeof(buf)), "answer 100");
	CHECK(add(lru, 104) == 0);
	CHECK_U64(lru__count(lru), 4);
	CHECK_U64(lru__evictions(lru), 1);
	CHECK(!find(lru, 101, buf, sizeof(buf)));
	CHECK_STR(find(lru, 100, buf, sizeof(buf)), "answer 100");
	CHECK_STR(find(lru, 102, buf, sizeof(buf)), "answer 102");
	CHECK_STR(find(lru, 103, buf, sizeof(buf)), "answer 103");
	CHECK_STR(find(lru, 104, buf, sizeof(buf)), "answer 104");
	/* Oldest now 100 (found first above): two more forget 100 and 102. */
	CHECK(add(lru, 105) == 0);
	CHECK(add(lru, 106) == 0);
	CHECK(!find(lru, 100, buf, sizeof(buf)));
	CHECK(!find(lru, 102, buf, sizeof(buf)));
	CHECK_STR(find(lru, 103, buf, sizeof(buf)), "answer 103");
	CHECK_STR(find(lru, 106, buf, sizeof(buf)), "answer 106");
	/* A forgotten key added again, with other bytes, is found with them. */
	CHECK(lru__add(lru, 101, "again", 5) == 0);
	CHECK_STR(find(lru, 101, buf, sizeof(buf)), "again");
	CHECK(lru__bytes(lru) <= bound);
	lru__free(lru);
}

/* Many keys through a small bound: the count stays within it, and the newest are kept. */
TEST(lru_size_accounting)
{
	enum {
		BOUND = 16 << 10,
		N = 100000
	};
	struct lru *lru = lru__new(BOUND);
	size_t most = 0;
	char buf[32];

	CHECK(lru);
	if (!lru)
		return;
	for (uint64_t k = 0; k < N; k++) {
		CHECK(add(lru, k) == 0);
		if (lru__bytes(lru) > most)
			most = lru__bytes(lru);
	}
	CHECK(most <= BOUND);
	/*
	 * Used, if not to the last byte: the slots stay half empty, and their
	 * next doubling may not fit beside the entries.
	 */
	CHECK(most > BOUND / 2);
	CHECK(lru__count(lru) > 100);
	CHECK_U64(lru__evictions(lru) + lru__count(lru), N);
	CHECK_STR(find(lru, N - 1, buf, sizeof(buf)), "answer 99999");
	CHECK(!find(lru, 0, buf, sizeof(buf)));
	/* Bytes longer than the whole bound are not kept, and forget nothing. */
	{
		static char big[BOUND];
		size_t count = lru__count(lru);

		CHECK(lru__add(lru, N, big, sizeof(big)) == 0);
		CHECK(!lru__find(lru, N, &(size_t){ 0 }));
		CHECK_U64(lru__count(lru), count);
	}
	lru__free(lru);

	/* A bound of 0 keeps nothing and costs nothing. */
	lru = lru__new(0);
	CHECK(lru);
	if (!lru)
		return;
	CHECK(add(lru, 1) == 0);
	CHECK(!find(lru, 1, buf, sizeof(buf)));
	CHECK_U64(lru__bytes(lru), 0);
	lru__free(lru);
}

/*
 * Against a model: a bound that holds K answers of one size (K measured by
 * filling it) behaves as a list of the K most recently used keys, over
 * thousands of finds and adds of keys that collide, leave and come back.
 */
TEST(lru_matches_model)
{
	enum {
		MAX_K = 512,
		OPS = 50000
	};
	struct lru *lru = lru__new(8 << 10);
	uint64_t model[MAX_K], seed = 19;
	size_t k = 0, nr = 0;
	char buf[32], want[32];

	CHECK(lru);
	if (!lru)
		return;
	/* Keys 1000 apart, so their slots collide often, with answers of one length. */
	while (lru__evictions(lru) == 0 && k < MAX_K)
		CHECK(add(lru, 1000 * (1000 + k++)) == 0);
	k = lru__count(lru);
	CHECK(k > 8 && k < MAX_K);
	lru__free(lru);
	lru = lru__new(8 << 10);
	CHECK(lru);
	if (!lru)
		return;
	for (int op = 0; op < OPS; op++) {
		uint64_t key, found = 0;
		size_t i;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		key = 1000 * (1000 + (seed >> 33) % (3 * k));
		/* The model: most recent last. */
		for (i = 0; i < nr; i++)
			if (model[i] == key)
				break;
		found = i < nr;
		if (found)
			memmove(&model[i], &model[i + 1], (nr - i - 1) * sizeof(model[0]));
		else if (nr == k)
			memmove(&model[0], &model[1], (--nr) * sizeof(model[0]));
		if (!found)
			nr++;
		model[nr - 1] = key;

		snprintf(want, sizeof(want), "answer %llu", (unsigned long long)key);
		if (find(lru, key, buf, sizeof(buf))) {
			if (!found || strcmp(buf, want)) {
				CHECK(!"found a key the model forgot, or with other bytes");
				break;
			}
		} else {
			if (found) {
				CHECK(!"forgot a key the model keeps");
				break;
			}
			CHECK(add(lru, key) == 0);
		}
		if (lru__count(lru) != nr) {
			CHECK_U64(lru__count(lru), nr);
			break;
		}
	}
	CHECK(lru__evictions(lru) > OPS / 4);
	lru__free(lru);
}

/*
 * The doorkeeper: a key is admitted the second time it is offered, not the
 * first; a bound too small for it admits nothing.
 */
TEST(lru_admit_second_time)
{
	struct lru *lru = lru__new(1 << 20);
	size_t first = 0, second = 0;

	CHECK(lru);
	if (!lru)
		return;
	for (uint64_t k = 0; k < 1000; k++)
		first += lru__admit(lru, k * 4096);
	for (uint64_t k = 0; k < 1000; k++)
		second += lru__admit(lru, k * 4096);
	/* Hash collisions may admit a few early. */
	CHECK(first < 50);
	CHECK_U64(second, 1000);
	lru__free(lru);

	lru = lru__new(0);
	CHECK(lru);
	if (!lru)
		return;
	CHECK(!lru__admit(lru, 1) && !lru__admit(lru, 1));
	lru__free(lru);
}
