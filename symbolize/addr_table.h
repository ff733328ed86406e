/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * addr_table.h - symbols sorted by start address, found by binary search:
 * what kallsyms and perf maps become once loaded.
 *
 * The symbols are the caller's struct, @sym_size bytes each; their start
 * addresses are kept in an array of their own, so that the search walks
 * dense keys rather than whole symbols. The table owns both arrays, not what
 * the symbols point to. It is filled once, in address order, to a size known
 * beforehand (addr_table__alloc(), then addr_table__push()), and immutable
 * after: lookups may then run concurrently.
 */
#ifndef PROFILER_ADDR_TABLE_H
#define PROFILER_ADDR_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/search.h"

struct addr_table {
	uint64_t *addrs; /* the search keys: sorted, addrs[i] is syms[i]'s start */
	void *syms;	 /* @nr symbols of @sym_size bytes */
	size_t nr, alloc;
	size_t sym_size;
};

/* An empty table of symbols of @sym_size bytes; release it with addr_table__release(). */
void addr_table__init(struct addr_table *t, size_t sym_size);
void addr_table__release(struct addr_table *t);

/* Make room for @n symbols in all. 0 or -ENOMEM (the table is then unchanged). */
int addr_table__alloc(struct addr_table *t, size_t n);

/* Give back the room that addr_table__alloc() made and no symbol took (kept if realloc fails). */
void addr_table__trim(struct addr_table *t);

/* Symbol @i. */
static inline void *addr_table__sym(const struct addr_table *t, size_t i)
{
	return (char *)t->syms + i * t->sym_size;
}

/*
 * Append a copy of @sym starting at @addr, which is not below the last
 * symbol's start, into the room addr_table__alloc() made. Returns the copy.
 */
static inline void *addr_table__push(struct addr_table *t, uint64_t addr, const void *sym)
{
	void *dst = addr_table__sym(t, t->nr);

	memcpy(dst, sym, t->sym_size);
	t->addrs[t->nr++] = addr;
	return dst;
}

/*
 * The last symbol that starts at or below @addr, or NULL when there is none.
 * Where a symbol ends is the caller's to check.
 */
static inline void *addr_table__find(const struct addr_table *t, uint64_t addr)
{
	if (!t->nr || addr < t->addrs[0])
		return NULL;
	return addr_table__sym(t, search__last_le(t->addrs, t->nr, addr));
}

#endif
