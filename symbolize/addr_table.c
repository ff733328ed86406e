// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "symbolize/addr_table.h"

void addr_table__init(struct addr_table *t, size_t sym_size)
{
	memset(t, 0, sizeof(*t));
	t->sym_size = sym_size;
}

void addr_table__release(struct addr_table *t)
{
	free(t->addrs);
	free(t->syms);
	addr_table__init(t, t->sym_size);
}

int addr_table__alloc(struct addr_table *t, size_t n)
{
	uint64_t *addrs;
	void *syms;

	if (n <= t->alloc)
		return 0;
	if (n > SIZE_MAX / t->sym_size || n > SIZE_MAX / sizeof(*addrs))
		return -ENOMEM;
	addrs = realloc(t->addrs, n * sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	t->addrs = addrs;
	syms = realloc(t->syms, n * t->sym_size);
	if (!syms)
		return -ENOMEM;
	t->syms = syms;
	t->alloc = n;
	return 0;
}

void addr_table__trim(struct addr_table *t)
{
	uint64_t *addrs;
	void *syms;

	if (!t->nr || t->nr == t->alloc)
		return;
	syms = realloc(t->syms, t->nr * t->sym_size);
	addrs = realloc(t->addrs, t->nr * sizeof(*addrs));
	if (syms)
		t->syms = syms;
	if (addrs)
		t->addrs = addrs;
	/* One realloc failing leaves that array as large as it was: no harm but the room. */
	if (syms && addrs)
		t->alloc = t->nr;
}
