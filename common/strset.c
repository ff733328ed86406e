// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "strset.h"

/*
 * Strings live in large blocks, each preceded by its length, so interning
 * costs no malloc per string and lookups compare lengths first.
 */
#define BLOCK_SIZE (64 * 1024)

struct block {
	struct block *next;
	size_t used, size;
	char data[];
};

struct strset {
	struct hashtab table;
	struct block *blocks;
};

struct key {
	const char *s;
	size_t len;
};

static size_t str_len(const char *interned)
{
	size_t len;

	memcpy(&len, interned - sizeof(len), sizeof(len));
	return len;
}

static bool str_eq(const void *entry, const void *key)
{
	const struct key *k = key;

	return str_len(entry) == k->len && !memcmp(entry, k->s, k->len);
}

struct strset *strset__new(void)
{
	return calloc(1, sizeof(struct strset));
}

void strset__free(struct strset *set)
{
	struct block *b, *next;

	if (!set)
		return;
	for (b = set->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	hashtab__release(&set->table);
	free(set);
}

static char *alloc_str(struct strset *set, size_t len)
{
	size_t need = sizeof(size_t) + len + 1;
	struct block *b = set->blocks;
	char *p;

	/* Keep every length prefix aligned. */
	need = (need + sizeof(size_t) - 1) & ~(sizeof(size_t) - 1);
	if (!b || b->size - b->used < need) {
		size_t size = need > BLOCK_SIZE ? need : BLOCK_SIZE;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		b->next = set->blocks;
		set->blocks = b;
	}
	p = b->data + b->used;
	b->used += need;
	memcpy(p, &len, sizeof(len));
	return p + sizeof(len);
}

const char *strset__add_len(struct strset *set, const char *s, size_t len)
{
	struct key key = { s, len };
	uint64_t hash = hash_bytes(s, len);
	char *str = hashtab__find(&set->table, hash, str_eq, &key);

	if (str)
		return str;
	str = alloc_str(set, len);
	if (!str)
		return NULL;
	memcpy(str, s, len);
	str[len] = '\0';
	if (hashtab__insert(&set->table, hash, str)) {
		errno = ENOMEM;
		return NULL;
	}
	return str;
}

const char *strset__add(struct strset *set, const char *s)
{
	return strset__add_len(set, s, strlen(s));
}

const char *strset__addf(struct strset *set, const char *fmt, ...)
{
	char buf[512], *heap = NULL;
	const char *ret;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	if ((size_t)n >= sizeof(buf)) {
		heap = malloc(n + 1);
		if (!heap)
			return NULL;
		va_start(ap, fmt);
		vsnprintf(heap, n + 1, fmt, ap);
		va_end(ap);
	}
	ret = strset__add_len(set, heap ? heap : buf, n);
	free(heap);
	return ret;
}

size_t strset__count(const struct strset *set)
{
	return set->table.nr;
}
