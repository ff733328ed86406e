// SPDX-License-Identifier: GPL-2.0-only
/*
 * Chained buckets and a doubly linked list in recency order, one malloc()
 * per entry holding its bytes. Our hashtab cannot remove entries, and a
 * removal is what an eviction is; chaining makes it an unlink.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "lru.h"

struct lru_entry {
	struct lru_entry *chain;	 /* next in its bucket */
	struct lru_entry *newer, *older; /* the recency list, through lru->list */
	uint64_t key;
	size_t len;
	unsigned char data[];
};

struct lru {
	struct lru_entry **buckets;
	size_t nr_buckets;     /* 0 or a power of two */
	struct lru_entry list; /* sentinel: list.older is the newest, list.newer the oldest */
	size_t max_bytes, bytes, count;
	uint64_t evictions;
};

/* What malloc() takes for an entry of @len bytes: a size word, rounded to 16 bytes. */
static size_t entry_cost(size_t len)
{
	return (sizeof(size_t) + offsetof(struct lru_entry, data) + len + 15) & ~(size_t)15;
}

static size_t bucket_index(const struct lru *lru, uint64_t key)
{
	return hash_u64(key) & (lru->nr_buckets - 1);
}

struct lru *lru__new(size_t max_bytes)
{
	struct lru *lru = calloc(1, sizeof(*lru));

	if (!lru)
		return NULL;
	lru->max_bytes = max_bytes;
	lru->list.newer = lru->list.older = &lru->list;
	return lru;
}

void lru__free(struct lru *lru)
{
	struct lru_entry *e, *next;

	if (!lru)
		return;
	for (e = lru->list.newer; e != &lru->list; e = next) {
		next = e->newer;
		free(e);
	}
	free(lru->buckets);
	free(lru);
}

static void list_unlink(struct lru_entry *e)
{
	e->newer->older = e->older;
	e->older->newer = e->newer;
}

/* Make @e the newest. */
static void list_push(struct lru *lru, struct lru_entry *e)
{
	e->older = lru->list.older;
	e->newer = &lru->list;
	lru->list.older->newer = e;
	lru->list.older = e;
}

const void *lru__find(struct lru *lru, uint64_t key, size_t *len)
{
	struct lru_entry *e;

	if (!lru->nr_buckets)
		return NULL;
	for (e = lru->buckets[bucket_index(lru, key)]; e; e = e->chain) {
		if (e->key != key)
			continue;
		if (lru->list.older != e) {
			list_unlink(e);
			list_push(lru, e);
		}
		*len = e->len;
		return e->data;
	}
	return NULL;
}

/* Forget the oldest entry; false when there is none. */
static bool lru__evict(struct lru *lru)
{
	struct lru_entry *e = lru->list.newer, **p;

	if (e == &lru->list)
		return false;
	for (p = &lru->buckets[bucket_index(lru, e->key)]; *p != e; p = &(*p)->chain)
		;
	*p = e->chain;
	list_unlink(e);
	lru->bytes -= entry_cost(e->len);
	lru->count--;
	lru->evictions++;
	free(e);
	return true;
}

/* Double the buckets (at least 16), if that fits the bound; 0 or -ENOMEM. */
static int lru__grow(struct lru *lru)
{
	size_t nr = lru->nr_buckets ? 2 * lru->nr_buckets : 16;
	struct lru_entry **buckets, *e;

	/* Past the bound, longer chains cost less than forgetting entries. */
	if (lru->bytes - lru->nr_buckets * sizeof(*buckets) + nr * sizeof(*buckets) >
	    lru->max_bytes)
		return 0;
	buckets = calloc(nr, sizeof(*buckets));
	if (!buckets)
		return -ENOMEM;
	for (e = lru->list.newer; e != &lru->list; e = e->newer) {
		size_t i = hash_u64(e->key) & (nr - 1);

		e->chain = buckets[i];
		buckets[i] = e;
	}
	free(lru->buckets);
	lru->bytes += (nr - lru->nr_buckets) * sizeof(*buckets);
	lru->buckets = buckets;
	lru->nr_buckets = nr;
	return 0;
}

int lru__add(struct lru *lru, uint64_t key, const void *data, size_t len)
{
	size_t cost = entry_cost(len);
	struct lru_entry *e;
	size_t i;

	if (cost > lru->max_bytes)
		return 0;
	if (lru->count >= lru->nr_buckets) {
		int err = lru__grow(lru);

		if (err)
			return err;
	}
	if (!lru->nr_buckets)
		return 0;
	while (lru->bytes + cost > lru->max_bytes)
		if (!lru__evict(lru))
			return 0; /* the buckets leave no room */
	e = malloc(offsetof(struct lru_entry, data) + len);
	if (!e)
		return -ENOMEM;
	e->key = key;
	e->len = len;
	memcpy(e->data, data, len);
	i = bucket_index(lru, key);
	e->chain = lru->buckets[i];
	lru->buckets[i] = e;
	list_push(lru, e);
	lru->bytes += cost;
	lru->count++;
	return 0;
}

size_t lru__bytes(const struct lru *lru)
{
	return lru->bytes;
}

size_t lru__count(const struct lru *lru)
{
	return lru->count;
}

uint64_t lru__evictions(const struct lru *lru)
{
	return lru->evictions;
}
