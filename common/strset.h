/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * strset.h - interned strings.
 *
 * Names that repeat across samples (functions, files, threads, modules) are
 * stored once. An interned string is a NUL-terminated `const char *` that
 * stays valid until strset__free(), so two interned strings are equal
 * exactly when their pointers are, and structs can hold them without owning
 * them. The exporters' string tables are built from these pointers.
 *
 * Not thread-safe.
 */
#ifndef PROFILER_STRSET_H
#define PROFILER_STRSET_H

#include <stddef.h>

struct strset;

/* Returns NULL and sets errno on failure. */
struct strset *strset__new(void);
void strset__free(struct strset *set);

/* The interned copy of @s (or of its first @len bytes); NULL on ENOMEM. */
const char *strset__add(struct strset *set, const char *s);
const char *strset__add_len(struct strset *set, const char *s, size_t len);

/* printf into an interned string; NULL on ENOMEM. */
const char *strset__addf(struct strset *set, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

size_t strset__count(const struct strset *set);

#endif
