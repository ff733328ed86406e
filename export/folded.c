// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/hashtab.h"
#include "common/profile.h"
#include "export/folded.h"
#include "export/stack_walk.h"

#define COUNT_MAX_CHARS 21 /* " " and the 20 digits of UINT64_MAX */

/* One output line: the stack ("key") and, once counting is over, " COUNT". */
struct folded_line {
	uint64_t count;
	size_t key_len, len;
	char text[];
};

struct line_key {
	const char *s;
	size_t len;
};

struct folded {
	struct hashtab table;
	struct folded_line **lines; /* first-use order until sorted */
	size_t nr_lines, alloc_lines;
	char *buf; /* the stack being built */
	size_t len, alloc;
	/* The sample whose stack buf holds: walk.path[level] is where that level ends in buf. */
	struct stack_walk walk;
	enum profile_root root;
};

static int folded__append(struct folded *f, const char *s, size_t len)
{
	if (len > SIZE_MAX - f->len || array__reserve(&f->buf, &f->alloc, f->len + len, 1))
		return -ENOMEM;
	memcpy(f->buf + f->len, s, len);
	f->len += len;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Where the number flamegraph.pl's /\s+?(\d+(?:\.\d*)?)$/ would take from the
 * end of @s[0..@len) starts, or @len when @s does not end in such a number.
 */
static size_t trailing_number(const char *s, size_t len)
{
	size_t i = len, digits;

	while (i && is_digit(s[i - 1]))
		i--;
	if (i && s[i - 1] == '.') {
		/* "12." or "12.34": digits must precede the dot. */
		digits = i - 1;
		while (digits && is_digit(s[digits - 1]))
			digits--;
		return digits < i - 1 ? digits : len;
	}
	return i < len ? i : len;
}

/*
 * Append @name made safe for one frame of a folded line: ';' separates frames,
 * a control character could end the line, and whitespace before a trailing
 * number would make the number read as a count. A process name (@process)
 * has its spaces replaced as well, as stackcollapse-perf.pl does.
 */
static int folded__append_name(struct folded *f, const char *name, bool process)
{
	size_t start = f->len, len, num;
	int err;

	if (!name || !*name)
		name = "[unknown]";
	len = strlen(name);
	err = folded__append(f, name, len);
	if (err)
		return err;
	for (char *c = f->buf + start; c < f->buf + f->len; c++) {
		unsigned char u = *c;

		if (u == ';')
			*c = ':';
		else if (u < 0x20 || u == 0x7f)
			*c = process ? '_' : ' ';
		else if (u == ' ' && process)
			*c = '_';
	}
	num = trailing_number(f->buf + start, len);
	if (num < len && num > 0 && f->buf[start + num - 1] == ' ')
		f->buf[start + num - 1] = '_';
	return 0;
}

/*
 * Append @frame: its function, after the functions inlined into it, outer
 * first, each its own frame as perf script shows them. The suffixes are
 * flamegraph.pl's annotations, which it colors: _[k] kernel, _[j] JIT
 * code, _[i] inlined.
 */
static int folded__append_frame(struct folded *f, const struct profile_frame *frame)
{
	const char *suffix = frame->kernel ? "_[k]" : frame->source == FRAME_JIT ? "_[j]" : "";
	int err = 0;

	/* lines[] runs innermost first. */
	for (uint32_t i = frame->nr_lines; i-- > 0 && !err;) {
		err = folded__append(f, ";", 1);
		if (!err)
			err = folded__append_name(f,
						  i == frame->nr_lines - 1 ?
							  profile_frame__label(frame) :
							  frame->lines[i].name,
						  false);
		if (!err && i < frame->nr_lines - 1)
			err = folded__append(f, "_[i]", strlen("_[i]"));
		else if (!err && *suffix)
			err = folded__append(f, suffix, strlen(suffix));
	}
	return err;
}

/*
 * Put the stack of @s in f->buf: its root (profile_sample__root()), then the
 * frames from the root, each after a ';' (so without a root, buf starts with
 * one). Sorted samples share their outer frames with their predecessor, so
 * the part of the previous stack that matches is kept rather than formatted
 * again.
 */
static int folded__build_stack(struct folded *f, const struct profile_sample *s)
{
	const char *root = profile_sample__root(s, f->root);
	uint32_t n = s->nr_frames, level;
	int err;

	err = stack_walk__begin(&f->walk, s, (uintptr_t)root, &level);
	if (err)
		return err;
	if (!level) {
		f->len = 0;
		/*
		 * A process name has its spaces replaced, as stackcollapse-perf.pl
		 * does; a command line keeps them (and so does a name in its place).
		 */
		if (f->root != PROFILE_ROOT_NONE)
			err = folded__append_name(f, root, f->root == PROFILE_ROOT_COMM);
		if (err)
			return err;
		f->walk.path[0] = f->len;
		level = 1;
	}
	f->len = f->walk.path[level - 1];
	for (; level <= n; level++) {
		err = folded__append_frame(f, stack_walk__frame(s, level));
		if (err)
			return err;
		f->walk.path[level] = f->len;
	}
	if (!n) {
		err = folded__append(f, ";[unknown]", strlen(";[unknown]"));
		if (err)
			return err;
	}
	stack_walk__end(&f->walk, s);
	return 0;
}

static bool line_eq(const void *entry, const void *key)
{
	const struct folded_line *l = entry;
	const struct line_key *k = key;

	return l->key_len == k->len && !memcmp(l->text, k->s, k->len);
}

/* Add @count to the line of the stack in f->buf (after its first ';' when stacks have no root). */
static int folded__count(struct folded *f, uint64_t count)
{
	size_t skip = f->root == PROFILE_ROOT_NONE;
	struct line_key key = { f->buf + skip, f->len - skip };
	uint64_t hash = hash_bytes(key.s, key.len);
	struct folded_line *l;

	l = hashtab__find(&f->table, hash, line_eq, &key);
	if (l) {
		l->count += count;
		return 0;
	}
	if (array__reserve(&f->lines, &f->alloc_lines, f->nr_lines + 1, sizeof(*f->lines)))
		return -ENOMEM;
	if (f->len > SIZE_MAX - sizeof(*l) - COUNT_MAX_CHARS - 1)
		return -ENOMEM;
	l = malloc(sizeof(*l) + key.len + COUNT_MAX_CHARS + 1);
	if (!l)
		return -ENOMEM;
	l->count = count;
	l->key_len = key.len;
	memcpy(l->text, key.s, key.len);
	if (hashtab__insert(&f->table, hash, l)) {
		free(l);
		return -ENOMEM;
	}
	f->lines[f->nr_lines++] = l;
	return 0;
}

/* Whole lines, count included, in memcmp order: what `LC_ALL=C sort` gives. */
static int cmp_line(const void *pa, const void *pb)
{
	const struct folded_line *a = *(const struct folded_line *const *)pa;
	const struct folded_line *b = *(const struct folded_line *const *)pb;
	int c = memcmp(a->text, b->text, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int folded__print(struct folded *f, FILE *out)
{
	for (size_t i = 0; i < f->nr_lines; i++) {
		struct folded_line *l = f->lines[i];

		l->len = l->key_len +
			 snprintf(l->text + l->key_len, COUNT_MAX_CHARS + 1, " %" PRIu64, l->count);
	}
	if (f->nr_lines > 1)
		qsort(f->lines, f->nr_lines, sizeof(*f->lines), cmp_line);
	errno = 0;
	for (size_t i = 0; i < f->nr_lines; i++) {
		struct folded_line *l = f->lines[i];

		if (fwrite(l->text, 1, l->len, out) != l->len || putc('\n', out) == EOF)
			return errno ? -errno : -EIO;
	}
	return 0;
}

int folded__write(const struct profile *p, FILE *out)
{
	return folded__write_root(p, out, PROFILE_ROOT_COMM);
}

int folded__write_root(const struct profile *p, FILE *out, enum profile_root root)
{
	struct folded f;
	int err = 0;

	memset(&f, 0, sizeof(f));
	f.root = root;
	stack_walk__init(&f.walk);
	for (size_t i = 0; i < p->nr_samples; i++) {
		uint64_t count = profile_sample__folded_count(p, &p->samples[i]);

		if (!count)
			continue;
		err = folded__build_stack(&f, &p->samples[i]);
		if (!err)
			err = folded__count(&f, count);
		if (err)
			goto out_free;
	}
	err = folded__print(&f, out);

out_free:
	for (size_t i = 0; i < f.nr_lines; i++)
		free(f.lines[i]);
	free(f.lines);
	free(f.buf);
	stack_walk__release(&f.walk);
	hashtab__release(&f.table);
	return err;
}
