// SPDX-License-Identifier: GPL-2.0-only
/*
 * An open-addressing table of (key, entry) slots with linear probing, kept
 * at most half full, and a doubly linked list in recency order, one
 * malloc() per entry holding its bytes. A lookup that misses, the common
 * case on a stream of distinct addresses, reads slots only and never a
 * cold entry; an eviction removes its slot by shifting the probe run back
 * (no tombstones). Our hashtab cannot remove entries, and a removal is
 * what an eviction is.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "lru.h"

/* A place in the recency list: an entry's first member, or the list's sentinel. */
struct lru_link {
	struct lru_link *newer, *older;
};

struct lru_entry {
	struct lru_link link; /* first: an entry is its link */
	uint64_t key;
	size_t len;
	unsigned char data[];
};

struct lru_slot {
	uint64_t key;
	struct lru_entry *entry; /* NULL: empty */
};

struct lru {
	struct lru_slot *slots;
	size_t cap;	      /* 0 or a power of two */
	struct lru_link list; /* sentinel: list.older is the newest, list.newer the oldest */
	size_t max_bytes, bytes, count;
	uint64_t evictions;
	uint64_t *seen;		    /* the doorkeeper's bits; NULL: none */
	size_t seen_bits, seen_set; /* a power of two; bits set */
};

/*
 * The doorkeeper's most bits, 1 MiB, cleared when an eighth are set: it
 * remembers the last million keys of a stream, and admits at most one key
 * in eight the first time by a collision.
 */
#define MAX_SEEN_BITS (1 << 23)
#define SEEN_FILL 8

/* What malloc() takes for an entry of @len bytes: a size word, rounded to 16 bytes. */
static size_t entry_cost(size_t len)
{
	return (sizeof(size_t) + offsetof(struct lru_entry, data) + len + 15) & ~(size_t)15;
}

static size_t slot_index(size_t cap, uint64_t key)
{
	return hash_u64(key) & (cap - 1);
}

struct lru *lru__new(size_t max_bytes)
{
	struct lru *lru = calloc(1, sizeof(*lru));

	if (!lru)
		return NULL;
	lru->max_bytes = max_bytes;
	lru->list.newer = lru->list.older = &lru->list;
	/* A sixteenth of the bound, in bits: 8 bits a byte, 64 a word. */
	for (size_t bits = 64; bits <= MAX_SEEN_BITS && bits / 8 <= max_bytes / 16; bits *= 2)
		lru->seen_bits = bits;
	if (lru->seen_bits) {
		lru->seen = calloc(lru->seen_bits / 64, sizeof(*lru->seen));
		if (!lru->seen) {
			free(lru);
			return NULL;
		}
		lru->bytes = lru->seen_bits / 8;
	}
	return lru;
}

void lru__free(struct lru *lru)
{
	struct lru_link *l, *next;

	if (!lru)
		return;
	for (l = lru->list.newer; l != &lru->list; l = next) {
		next = l->newer;
		free(l); /* the entry it begins */
	}
	free(lru->slots);
	free(lru->seen);
	free(lru);
}

bool lru__admit(struct lru *lru, uint64_t key)
{
	/* The high bits: the slots' index takes the low ones. */
	size_t bit = (hash_u64(key) >> 32) & (lru->seen_bits - 1);
	uint64_t mask = 1ULL << (bit % 64);

	if (!lru->seen)
		return false;
	if (lru->seen[bit / 64] & mask)
		return true;
	if (++lru->seen_set > lru->seen_bits / SEEN_FILL) {
		memset(lru->seen, 0, lru->seen_bits / 8);
		lru->seen_set = 1;
	}
	lru->seen[bit / 64] |= mask;
	return false;
}

static void list_unlink(struct lru_entry *e)
{
	e->link.newer->older = e->link.older;
	e->link.older->newer = e->link.newer;
}

/* Make @e the newest. */
static void list_push(struct lru *lru, struct lru_entry *e)
{
	e->link.older = lru->list.older;
	e->link.newer = &lru->list;
	lru->list.older->newer = &e->link;
	lru->list.older = &e->link;
}

/* The slot holding @key, or the empty slot where it would go. */
static struct lru_slot *lru__slot(const struct lru *lru, uint64_t key)
{
	size_t mask = lru->cap - 1, i = slot_index(lru->cap, key);

	while (lru->slots[i].entry && lru->slots[i].key != key)
		i = (i + 1) & mask;
	return &lru->slots[i];
}

const void *lru__find(struct lru *lru, uint64_t key, size_t *len)
{
	struct lru_entry *e;

	if (!lru->cap)
		return NULL;
	e = lru__slot(lru, key)->entry;
	if (!e)
		return NULL;
	if (lru->list.older != &e->link) {
		list_unlink(e);
		list_push(lru, e);
	}
	*len = e->len;
	return e->data;
}

/*
 * Empty slot @hole, moving back the later slots of its probe run that
 * could not be found past an empty slot (Knuth's algorithm R).
 */
static void lru__remove_slot(struct lru *lru, size_t hole)
{
	size_t mask = lru->cap - 1, i = hole;

	for (;;) {
		size_t home;

		i = (i + 1) & mask;
		if (!lru->slots[i].entry)
			break;
		home = slot_index(lru->cap, lru->slots[i].key);
		/* Stays if its home lies cyclically in (hole, i]. */
		if (hole <= i ? hole < home && home <= i : hole < home || home <= i)
			continue;
		lru->slots[hole] = lru->slots[i];
		hole = i;
	}
	lru->slots[hole].entry = NULL;
}

/* Forget the oldest entry; false when there is none. */
static bool lru__evict(struct lru *lru)
{
	struct lru_entry *e = (struct lru_entry *)lru->list.newer;

	if (&e->link == &lru->list)
		return false;
	lru__remove_slot(lru, lru__slot(lru, e->key) - lru->slots);
	list_unlink(e);
	lru->bytes -= entry_cost(e->len);
	lru->count--;
	lru->evictions++;
	free(e);
	return true;
}

/* Double the slots (at least 16), if that fits the bound; 0 or -ENOMEM. */
static int lru__grow(struct lru *lru)
{
	size_t cap = lru->cap ? 2 * lru->cap : 16;
	struct lru_slot *slots;
	struct lru_link *l;

	/* Past the bound, forgetting entries keeps the table half empty. */
	if (lru->bytes - lru->cap * sizeof(*slots) + cap * sizeof(*slots) > lru->max_bytes)
		return 0;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (l = lru->list.newer; l != &lru->list; l = l->newer) {
		struct lru_entry *e = (struct lru_entry *)l;
		size_t i = slot_index(cap, e->key);

		while (slots[i].entry)
			i = (i + 1) & (cap - 1);
		slots[i] = (struct lru_slot){ .key = e->key, .entry = e };
	}
	free(lru->slots);
	lru->bytes += (cap - lru->cap) * sizeof(*slots);
	lru->slots = slots;
	lru->cap = cap;
	return 0;
}

int lru__add(struct lru *lru, uint64_t key, const void *data, size_t len)
{
	size_t cost = entry_cost(len);
	struct lru_slot *slot;
	struct lru_entry *e;

	if (cost > lru->max_bytes)
		return 0;
	if (2 * (lru->count + 1) > lru->cap) {
		int err = lru__grow(lru);

		if (err)
			return err;
	}
	if (!lru->cap)
		return 0;
	while (lru->bytes + cost > lru->max_bytes || 2 * (lru->count + 1) > lru->cap)
		if (!lru__evict(lru))
			return 0; /* the slots leave no room */
	e = malloc(offsetof(struct lru_entry, data) + len);
	if (!e)
		return -ENOMEM;
	e->key = key;
	e->len = len;
	memcpy(e->data, data, len);
	slot = lru__slot(lru, key);
	*slot = (struct lru_slot){ .key = key, .entry = e };
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
