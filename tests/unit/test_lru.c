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
	CHECK_U64(lru__bytes(lru), 0);
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
	size_t one, buckets;
	char buf[32];

	CHECK(probe);
	if (!probe)
		return;
	/* What one entry and the first buckets cost, measured, not assumed. */
	CHECK(add(probe, 100) == 0);
	buckets = lru__bytes(probe);
	CHECK(add(probe, 101) == 0);
	one = lru__bytes(probe) - buckets;
	buckets -= one;
	CHECK(one > 0 && buckets > 0);
	lru__free(probe);

	/* Room for four entries of this size, not five. */
	lru = lru__new(buckets + 4 * one + one / 2);
	CHECK(lru);
	if (!lru)
		return;
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
	CHECK(lru__bytes(lru) <= buckets + 4 * one + one / 2);
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
	/* Nearly full: within one entry of the bound. */
	CHECK(most > BOUND - 128);
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
