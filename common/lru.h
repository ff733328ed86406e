/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lru.h - a memo of byte strings by 64-bit key, bounded in bytes: when an
 * addition would pass the bound, the least recently used entries go first.
 *
 * `profiler symbolize` keeps the text of its answers here by address, so
 * that a profile's hot addresses, asked again and again, are answered
 * without formatting, while a stream of a million distinct addresses costs
 * no more memory than the bound.
 *
 * The bound counts what the memo allocates as malloc() does (each entry's
 * header and bytes, rounded to malloc's 16-byte chunks with their size
 * word, and the bucket array), so that it is close to the memory the memo
 * really holds. It owns copies of the bytes it is given. Not thread-safe.
 */
#ifndef PROFILER_LRU_H
#define PROFILER_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lru;

/*
 * A memo of at most @max_bytes (0: one that keeps nothing). Returns NULL
 * and sets errno on failure.
 */
struct lru *lru__new(size_t max_bytes);
void lru__free(struct lru *lru);

/*
 * The bytes kept for @key, their length in *@len, and @key becomes the most
 * recently used; NULL when @key is not kept. Valid until the next
 * lru__add() or lru__free().
 */
const void *lru__find(struct lru *lru, uint64_t key, size_t *len);

/*
 * Keep a copy of the @len bytes at @data for @key, which is not kept yet,
 * as the most recently used, forgetting the least recently used keys until
 * it fits. Bytes too long for the whole bound are not kept. Returns 0 or
 * -ENOMEM.
 */
int lru__add(struct lru *lru, uint64_t key, const void *data, size_t len);

/*
 * Has @key been offered since the doorkeeper last forgot (a bit per key
 * hash, in a bit set of a sixteenth of the bound, at most 1 MiB, cleared
 * when an eighth full)? Records it when not. Keeping only what comes twice
 * spares a stream of distinct keys the cost of adding and evicting each,
 * and keeps the memo for the keys that repeat; a hash collision only
 * admits a key early.
 */
bool lru__admit(struct lru *lru, uint64_t key);

/* What the memo holds now: its bytes as counted against the bound, and its keys. */
size_t lru__bytes(const struct lru *lru);
size_t lru__count(const struct lru *lru);
/* How many keys it has forgotten to make room. */
uint64_t lru__evictions(const struct lru *lru);

#endif
