// SPDX-License-Identifier: GPL-2.0-only
#include "py_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/strset.h"

/* Index bits: from bit 4 up to the tag's. */
#define INDEX_LIMIT (1ULL << 44)

/* An entry of the index: a name and where it is in names[]. */
struct indexed_name {
	struct py_frame_name name;
	size_t index;
};

int py_frames__init(struct py_frames *t)
{
	memset(t, 0, sizeof(*t));
	hashtab__init(&t->index);
	t->strings = strset__new();
	return t->strings ? 0 : -ENOMEM;
}

void py_frames__release(struct py_frames *t)
{
	/* Each names[i] is the first member of an indexed_name. */
	for (size_t i = 0; i < t->nr; i++)
		free(t->names[i]);
	free(t->names);
	hashtab__release(&t->index);
	strset__free(t->strings);
	memset(t, 0, sizeof(*t));
}

static bool name_eq(const void *entry, const void *key)
{
	const struct py_frame_name *a = entry, *b = key;

	/* Interned: equal strings are the same pointers. */
	return a->name == b->name && a->filename == b->filename && a->line == b->line &&
	       a->start_line == b->start_line && a->js == b->js;
}

int py_frames__add(struct py_frames *t, const struct py_frame_name *f, uint64_t *addr)
{
	struct py_frame_name key = *f;
	struct indexed_name *e;
	uint64_t hash;
	bool added;

	key.name = strset__add(t->strings, f->name);
	key.filename = f->filename ? strset__add(t->strings, f->filename) : NULL;
	if (!key.name || (f->filename && !key.filename))
		return -ENOMEM;
	if (t->nr >= INDEX_LIMIT)
		return -E2BIG;
	if (array__reserve(&t->names, &t->alloc, t->nr + 1, sizeof(*t->names)))
		return -ENOMEM;
	hash = hash_mix(hash_mix(hash_u64((uintptr_t)key.name), (uintptr_t)key.filename),
			key.line | (uint64_t)key.start_line << 32);
	hash ^= key.js;
	e = hashtab__find_or_add(&t->index, hash, name_eq, &key, sizeof(*e), &added);
	if (!e)
		return -ENOMEM;
	if (added) {
		e->name = key;
		e->index = t->nr;
		t->names[t->nr++] = &e->name;
	}
	*addr = PY_FRAME_ADDR_TAG | (uint64_t)e->index << 4 | 8;
	return 0;
}

const struct py_frame_name *py_frames__get(const struct py_frames *t, uint64_t addr)
{
	uint64_t i = (addr & ~0xffff000000000000ULL) >> 4;

	if (!py_frames__is_addr(addr) || i >= t->nr)
		return NULL;
	return t->names[i];
}
