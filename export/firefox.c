// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/hashtab.h"
#include "common/profile.h"
#include "export/firefox.h"
#include "export/gzip_writer.h"
#include "export/json_string.h"
#include "export/stack_walk.h"

/*
 * Measured on a synthetic profile of 50,000 distinct 30-frame stacks and 1M
 * timestamps in 8 threads (46 MB of JSON): level 1 writes it in 0.52 s to
 * 14.9 MB, level 6 in 1.9 s to 13.0 MB, level 9 in 5.2 s to 12.8 MB. A tenth
 * smaller is not worth four times as slow: take the speed.
 */
#define FIREFOX_GZIP_LEVEL 1
#define JSON_BUF_SIZE (64 * 1024)
#define NO_INDEX UINT32_MAX

/* The processed format's version we write (see firefox.h): later frontends upgrade it. */
#define FIREFOX_PROCESSED_VERSION 49

enum category {
	CAT_USER,
	CAT_KERNEL,
	CAT_JIT,
	CAT_OFFCPU,
	CAT_OTHER,
	CAT_PYTHON,
	CAT_JS,
};
#define CAT_OTHER_STR "4"

/* meta.categories, indexed by enum category. Never "transparent": it means idle. */
static const char categories_json[] =
	"[{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"JIT\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Off-CPU\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Python\",\"color\":\"purple\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"JavaScript\",\"color\":\"lightblue\",\"subcategories\":[\"Other\"]}]";

/* Frames that stand for no code: they say what is missing, or that a thread was blocked. */
enum special {
	SPECIAL_TRUNCATED,
	SPECIAL_UNKNOWN,
	SPECIAL_OFFCPU,
	NR_SPECIAL,
};

static const struct {
	const char *name;
	enum category category;
} specials[NR_SPECIAL] = {
	[SPECIAL_TRUNCATED] = { "[truncated]", CAT_OTHER },
	[SPECIAL_UNKNOWN] = { "[unknown]", CAT_OTHER },
	[SPECIAL_OFFCPU] = { "[off-CPU]", CAT_OFFCPU },
};

/*
 * The JSON goes out through one buffer, to the FILE or through the gzip writer.
 * Hand-written rather than taken from Debian's yajl: yajl refuses invalid
 * UTF-8 where we replace it, prints doubles with "%.17g" where times want
 * their exact decimal digits, and has seen no release since 2014; what is
 * needed here is a handful of small functions.
 *
 * Errors are sticky: the first one is kept in @err and later output is
 * discarded, so writers need not check every call.
 */
struct json {
	FILE *out;
	struct gzip_writer *gz; /* NULL: not gzipping */
	int err;
	size_t len;
	char buf[JSON_BUF_SIZE];
};

static int write_all(FILE *out, const void *data, size_t len)
{
	errno = 0;
	if (len && fwrite(data, 1, len, out) != len)
		return errno ? -errno : -EIO;
	return 0;
}

/* Empty the buffer into @out, compressed when gzipping; @finish ends the gzip stream. */
static void json__flush(struct json *j, bool finish)
{
	size_t len = j->len;

	j->len = 0;
	if (j->err)
		return;
	if (!j->gz) {
		j->err = write_all(j->out, j->buf, len);
		return;
	}
	j->err = gzip_writer__write(j->gz, j->buf, len);
	if (!j->err && finish)
		j->err = gzip_writer__finish(j->gz);
}

static void json__put(struct json *j, const void *data, size_t len)
{
	const char *s = data;

	while (len) {
		size_t n = sizeof(j->buf) - j->len;

		if (!n) {
			json__flush(j, false);
			n = sizeof(j->buf);
		}
		if (n > len)
			n = len;
		memcpy(j->buf + j->len, s, n);
		j->len += n;
		s += n;
		len -= n;
	}
}

/* "" s: only a string literal compiles, whose sizeof is its length + 1. */
#define json__lit(j, s) json__put(j, "" s, sizeof(s) - 1)

static void json__u64(struct json *j, uint64_t v)
{
	char tmp[20], *p = tmp + sizeof(tmp);

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	json__put(j, p, tmp + sizeof(tmp) - p);
}

/* @ns in milliseconds, exactly and without trailing zeros: 1500000 is "1.5". */
static void json__ms(struct json *j, uint64_t ns)
{
	uint32_t frac = ns % 1000000;
	char tmp[7];
	int digits = 6;

	json__u64(j, ns / 1000000);
	if (!frac)
		return;
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	tmp[0] = '.';
	for (int i = digits; i > 0; i--) {
		tmp[i] = '0' + frac % 10;
		frac /= 10;
	}
	json__put(j, tmp, digits + 1);
}

static void json__put_cb(void *ctx, const void *data, size_t len)
{
	json__put(ctx, data, len);
}

/* @s escaped for a JSON string: quotes, backslashes and control characters, bad UTF-8 U+FFFD. */
static void json__str_body(struct json *j, const char *s)
{
	json_string__escape(s, json__put_cb, j);
}

/* @s as a JSON string. */
static void json__str(struct json *j, const char *s)
{
	json__lit(j, "\"");
	json__str_body(j, s);
	json__lit(j, "\"");
}

/* A row of the resource table: a module ("library"), by its name's string index. */
struct ff_resource {
	uint32_t name;
};

/* A row of the function table: name, module and source file (NO_INDEX: none). */
struct ff_func {
	uint32_t name;
	uint32_t resource;
	uint32_t file;
};

/*
 * A row of the frame table: a function at a line (0: unknown), in a
 * category, at a depth of its frame's inline chain (0: the function that
 * holds the address; 1: what was inlined into it ...).
 */
struct ff_frame {
	uint32_t func;
	uint32_t line;
	uint32_t category;
	uint32_t inline_depth;
};

/* A row of the stack table: the stack's leaf frame and the stack it extends. */
struct ff_stack {
	uint32_t prefix; /* NO_INDEX at the root */
	uint32_t frame;
};

/* A row of the samples table. */
struct ff_row {
	uint64_t time; /* ns since the profile's start */
	/*
	 * What it stands for: ns, a period on CPU or its share off CPU; or
	 * (PROFILE_ALLOC) its share of the bytes its sample allocated.
	 */
	uint64_t weight;
	uint32_t stack;
	bool offcpu;
};

struct ff_string {
	const char *s;
	size_t len;
};

/* Where the thread's copied strings live; freed with the thread's tables. */
struct text_block {
	struct text_block *next;
	size_t used, size;
	char data[];
};

#define TEXT_BLOCK (64 * 1024)

/*
 * One thread's tables, as the format wants them. Each hashtab maps a key to
 * an index + 1 (entries must not be NULL) into the array that holds the rows
 * in index order, the order in which they are written.
 */
struct thread_tables {
	struct hashtab string_ids, resource_ids, func_ids, frame_ids, stack_ids;
	/* struct profile_frame * → offset + 1 in @lines of its frames, outermost first. */
	struct hashtab line_ids;
	struct ff_string *strings;
	size_t nr_strings, alloc_strings;
	struct ff_resource *resources;
	size_t nr_resources, alloc_resources;
	struct ff_func *funcs;
	size_t nr_funcs, alloc_funcs;
	struct ff_frame *frames;
	size_t nr_frames, alloc_frames;
	uint32_t *lines;
	size_t nr_lines, alloc_lines;
	struct ff_stack *stacks;
	size_t nr_stacks, alloc_stacks;
	struct ff_row *rows;
	size_t nr_rows, alloc_rows;
	struct ff_row *sorted_rows; /* room for tables__sort_rows() */
	size_t alloc_sorted_rows;
	/* The sample added last: walk.path[level] is its stack index at that level. */
	struct stack_walk walk;
	uint32_t special[NR_SPECIAL];	       /* frame index, NO_INDEX until used */
	uint32_t markers[PROFILE_SUMMARY_MAX]; /* marker names' string indexes */
	size_t nr_markers;
	struct text_block *text;
};

/* Empty @t for the next thread, keeping the arrays' memory. */
static void tables__reset(struct thread_tables *t)
{
	struct text_block *b, *next;

	hashtab__release(&t->string_ids);
	hashtab__release(&t->resource_ids);
	hashtab__release(&t->func_ids);
	hashtab__release(&t->frame_ids);
	hashtab__release(&t->stack_ids);
	hashtab__release(&t->line_ids);
	t->nr_strings = t->nr_resources = t->nr_funcs = t->nr_frames = 0;
	t->nr_lines = t->nr_stacks = t->nr_rows = 0;
	t->nr_markers = 0;
	stack_walk__reset(&t->walk);
	for (int i = 0; i < NR_SPECIAL; i++)
		t->special[i] = NO_INDEX;
	for (b = t->text; b; b = next) {
		next = b->next;
		free(b);
	}
	t->text = NULL;
}

static void tables__release(struct thread_tables *t)
{
	tables__reset(t);
	free(t->strings);
	free(t->resources);
	free(t->funcs);
	free(t->frames);
	free(t->lines);
	free(t->stacks);
	free(t->rows);
	free(t->sorted_rows);
	stack_walk__release(&t->walk);
}

/* A copy of @s (@len bytes, NUL added) that lives as long as the thread's tables. */
static const char *tables__copy(struct thread_tables *t, const char *s, size_t len)
{
	struct text_block *b = t->text;
	char *dst;

	if (len >= SIZE_MAX - sizeof(*b) - TEXT_BLOCK)
		return NULL;
	if (!b || b->size - b->used < len + 1) {
		size_t size = len + 1 > TEXT_BLOCK ? len + 1 : TEXT_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		b->next = t->text;
		t->text = b;
	}
	dst = b->data + b->used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	b->used += len + 1;
	return dst;
}

struct string_key {
	const char *s;
	size_t len;
	const struct ff_string *strings;
};

static bool string_eq(const void *entry, const void *key)
{
	const struct string_key *k = key;
	const struct ff_string *e = &k->strings[(uintptr_t)entry - 1];

	return e->len == k->len && !memcmp(e->s, k->s, k->len);
}

/*
 * Index of @s (@len bytes) in the thread's string array, adding it on first
 * use: @s itself when @stable (it outlives the tables), else a copy.
 */
static int64_t tables__string(struct thread_tables *t, const char *s, size_t len, bool stable)
{
	struct string_key key = { s, len, t->strings };
	uint64_t hash = hash_bytes(s, len);
	uintptr_t id = (uintptr_t)hashtab__find(&t->string_ids, hash, string_eq, &key);

	if (id)
		return id - 1;
	if (t->nr_strings >= NO_INDEX)
		return -EOVERFLOW;
	if (array__reserve(&t->strings, &t->alloc_strings, t->nr_strings + 1, sizeof(*t->strings)))
		return -ENOMEM;
	if (!stable) {
		s = tables__copy(t, s, len);
		if (!s)
			return -ENOMEM;
	}
	if (hashtab__insert(&t->string_ids, hash, (void *)(uintptr_t)(t->nr_strings + 1)))
		return -ENOMEM;
	t->strings[t->nr_strings].s = s;
	t->strings[t->nr_strings].len = len;
	return t->nr_strings++;
}

/* tables__string() of a NUL-terminated string that outlives the tables. */
static int64_t tables__cstring(struct thread_tables *t, const char *s)
{
	return tables__string(t, s, strlen(s), true);
}

/* Index of the resource table's row for the module named @name (a string index). */
static int64_t tables__resource(struct thread_tables *t, uint32_t name)
{
	uint64_t hash = hash_u64(name);
	uintptr_t id = (uintptr_t)hashtab__find(&t->resource_ids, hash, hash_u64_eq, NULL);

	if (id)
		return id - 1;
	if (t->nr_resources >= NO_INDEX)
		return -EOVERFLOW;
	if (array__reserve(&t->resources, &t->alloc_resources, t->nr_resources + 1,
			   sizeof(*t->resources)) ||
	    hashtab__insert(&t->resource_ids, hash, (void *)(uintptr_t)(t->nr_resources + 1)))
		return -ENOMEM;
	t->resources[t->nr_resources].name = name;
	return t->nr_resources++;
}

struct func_key {
	struct ff_func func;
	const struct ff_func *funcs;
};

static bool func_eq(const void *entry, const void *key)
{
	const struct func_key *k = key;
	const struct ff_func *f = &k->funcs[(uintptr_t)entry - 1];

	return f->name == k->func.name && f->resource == k->func.resource &&
	       f->file == k->func.file;
}

/*
 * Index of the function table's row for @name in @module, from source file
 * @file; @module and @file may be NULL.
 */
static int64_t tables__func(struct thread_tables *t, const char *name, const char *module,
			    const char *file)
{
	struct func_key key = { { 0, NO_INDEX, NO_INDEX }, t->funcs };
	int64_t str, resource;
	uint64_t hash;
	uintptr_t id;

	str = tables__cstring(t, name);
	if (str < 0)
		return str;
	key.func.name = str;
	if (module) {
		str = tables__cstring(t, module);
		resource = str < 0 ? str : tables__resource(t, str);
		if (resource < 0)
			return resource;
		key.func.resource = resource;
	}
	if (file) {
		str = tables__cstring(t, file);
		if (str < 0)
			return str;
		key.func.file = str;
	}
	hash = hash_mix(hash_u64(((uint64_t)key.func.resource << 32) | key.func.name),
			key.func.file);
	id = (uintptr_t)hashtab__find(&t->func_ids, hash, func_eq, &key);
	if (id)
		return id - 1;
	if (t->nr_funcs >= NO_INDEX)
		return -EOVERFLOW;
	if (array__reserve(&t->funcs, &t->alloc_funcs, t->nr_funcs + 1, sizeof(*t->funcs)) ||
	    hashtab__insert(&t->func_ids, hash, (void *)(uintptr_t)(t->nr_funcs + 1)))
		return -ENOMEM;
	t->funcs[t->nr_funcs] = key.func;
	return t->nr_funcs++;
}

struct frame_key {
	struct ff_frame frame;
	const struct ff_frame *frames;
};

static bool frame_eq(const void *entry, const void *key)
{
	const struct frame_key *k = key;
	const struct ff_frame *f = &k->frames[(uintptr_t)entry - 1];

	return f->func == k->frame.func && f->line == k->frame.line &&
	       f->category == k->frame.category && f->inline_depth == k->frame.inline_depth;
}

/* Index of the frame table's row for @func at @line in @category and @inline_depth. */
static int64_t tables__frame(struct thread_tables *t, uint32_t func, uint32_t line,
			     enum category category, uint32_t inline_depth)
{
	struct frame_key key = { { func, line, category, inline_depth }, t->frames };
	uint64_t hash =
		hash_mix(hash_mix(hash_u64(((uint64_t)category << 32) | func), line), inline_depth);
	uintptr_t id = (uintptr_t)hashtab__find(&t->frame_ids, hash, frame_eq, &key);

	if (id)
		return id - 1;
	if (t->nr_frames >= NO_INDEX)
		return -EOVERFLOW;
	if (array__reserve(&t->frames, &t->alloc_frames, t->nr_frames + 1, sizeof(*t->frames)) ||
	    hashtab__insert(&t->frame_ids, hash, (void *)(uintptr_t)(t->nr_frames + 1)))
		return -ENOMEM;
	t->frames[t->nr_frames] = key.frame;
	return t->nr_frames++;
}

/* The frame index of special frame @which. */
static int64_t tables__special(struct thread_tables *t, enum special which)
{
	int64_t func, frame;

	if (t->special[which] != NO_INDEX)
		return t->special[which];
	func = tables__func(t, specials[which].name, NULL, NULL);
	if (func < 0)
		return func;
	frame = tables__frame(t, func, 0, specials[which].category, 0);
	if (frame >= 0)
		t->special[which] = frame;
	return frame;
}

/* The module a frame is in, as the profiler shows it ("lib!func"), or NULL. */
static const char *frame_module(const struct profile_frame *f)
{
	const char *path = f->mapping ? f->mapping->filename : NULL;
	const char *slash;

	if (!path || !*path)
		return f->kernel ? "[kernel.kallsyms]" : NULL;
	slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/*
 * The offset in t->lines of the frame indexes of @f's lines, outermost
 * first (@f->nr_lines of them), adding the frames on first use.
 */
static int64_t tables__profile_frame(struct thread_tables *t, const struct profile_frame *f)
{
	uint64_t hash = hash_u64((uintptr_t)f);
	uintptr_t id = (uintptr_t)hashtab__find(&t->line_ids, hash, hash_u64_eq, NULL);
	enum category category = f->kernel		   ? CAT_KERNEL :
				 f->source == FRAME_JIT	   ? CAT_JIT :
				 f->source == FRAME_PYTHON ? CAT_PYTHON :
				 f->source == FRAME_JS	   ? CAT_JS :
							     CAT_USER;
	const char *module;
	size_t off;

	if (id)
		return id - 1;
	module = frame_module(f);
	if (array__reserve(&t->lines, &t->alloc_lines, t->nr_lines + f->nr_lines,
			   sizeof(*t->lines)))
		return -ENOMEM;
	off = t->nr_lines;
	/* lines[] runs innermost first. */
	for (uint32_t i = f->nr_lines; i-- > 0;) {
		const struct profile_line *l = &f->lines[i];
		const char *name = i == f->nr_lines - 1 ? profile_frame__label(f) : l->name;
		int64_t func = tables__func(t, name ? name : "[unknown]", module, l->filename);
		int64_t frame;

		if (func < 0)
			return func;
		frame = tables__frame(t, func, l->line, category, f->nr_lines - 1 - i);
		if (frame < 0)
			return frame;
		t->lines[t->nr_lines++] = frame;
	}
	if (hashtab__insert(&t->line_ids, hash, (void *)(uintptr_t)(off + 1)))
		return -ENOMEM;
	return off;
}

/* The index of the stack @frame on top of @prefix, adding it on first use. */
static int64_t tables__stack(struct thread_tables *t, uint32_t prefix, uint32_t frame)
{
	/* prefix + 1: NO_INDEX wraps to 0, which no real prefix gives. */
	uint64_t hash = hash_u64(((uint64_t)(uint32_t)(prefix + 1) << 32) | frame);
	uintptr_t id = (uintptr_t)hashtab__find(&t->stack_ids, hash, hash_u64_eq, NULL);

	if (id)
		return id - 1;
	if (t->nr_stacks >= NO_INDEX)
		return -EOVERFLOW;
	if (array__reserve(&t->stacks, &t->alloc_stacks, t->nr_stacks + 1, sizeof(*t->stacks)) ||
	    hashtab__insert(&t->stack_ids, hash, (void *)(uintptr_t)(t->nr_stacks + 1)))
		return -ENOMEM;
	t->stacks[t->nr_stacks].prefix = prefix;
	t->stacks[t->nr_stacks].frame = frame;
	return t->nr_stacks++;
}

/* Append a row. 0 or -ENOMEM. */
static int tables__add_row(struct thread_tables *t, uint64_t time, uint64_t weight, uint32_t stack,
			   bool offcpu)
{
	if (array__reserve(&t->rows, &t->alloc_rows, t->nr_rows + 1, sizeof(*t->rows)))
		return -ENOMEM;
	t->rows[t->nr_rows++] =
		(struct ff_row){ .time = time, .weight = weight, .stack = stack, .offcpu = offcpu };
	return 0;
}

/*
 * Add @s's stack, root first, and one row per timestamp. 0 or -errno.
 * Sorted samples share their outer frames with the one before: the stacks
 * that far are taken from the walk's path, which holds the previous
 * sample's stack index at each level, rather than looked up again. The root
 * is the "[truncated]" frame's stack for a truncated sample, else none.
 * An on-CPU row stands for one sampling period; the rows of intervals off
 * CPU share their total length, the remainder going to the later rows so
 * that they add up to it exactly; so do the rows of an allocation
 * profile's sampled calls share the bytes of their stack. Allocations
 * without times are one row at the first one's time, all their bytes.
 */
static int tables__add_sample(struct thread_tables *t, const struct profile *p,
			      const struct profile_sample *s)
{
	bool alloc = p->mode == PROFILE_ALLOC;
	uint32_t n = s->nr_frames, level;
	int64_t stack, frame;
	uint64_t total;
	int err;

	err = stack_walk__begin(&t->walk, s, s->truncated, &level);
	if (err)
		return err;
	if (!level) {
		stack = NO_INDEX;
		if (s->truncated) {
			frame = tables__special(t, SPECIAL_TRUNCATED);
			stack = frame < 0 ? frame : tables__stack(t, NO_INDEX, frame);
			if (stack < 0)
				return stack;
		}
		t->walk.path[0] = stack;
		level = 1;
	}
	stack = t->walk.path[level - 1];
	for (; level <= n; level++) {
		const struct profile_frame *f = stack_walk__frame(s, level);
		int64_t off = tables__profile_frame(t, f);

		if (off < 0)
			return off;
		for (uint32_t k = 0; k < f->nr_lines && stack >= 0; k++)
			stack = tables__stack(t, stack, t->lines[off + k]);
		if (stack < 0)
			return stack;
		t->walk.path[level] = stack;
	}
	if (s->offcpu || !n) {
		frame = tables__special(t, s->offcpu ? SPECIAL_OFFCPU : SPECIAL_UNKNOWN);
		stack = frame < 0 ? frame : tables__stack(t, stack, frame);
		if (stack < 0)
			return stack;
	}
	stack_walk__end(&t->walk, s);

	if (alloc && !(s->times && s->count))
		return tables__add_row(t, s->alloc.first_ns, s->alloc.bytes, stack, false);
	if (s->count > SIZE_MAX - t->nr_rows ||
	    array__reserve(&t->rows, &t->alloc_rows, t->nr_rows + s->count, sizeof(*t->rows)))
		return -ENOMEM;
	total = alloc ? s->alloc.bytes : s->offcpu ? s->offcpu_ns : 0;
	for (uint64_t k = 0; k < s->count; k++) {
		struct ff_row *r = &t->rows[t->nr_rows++];

		r->time = s->times ? s->times[k] : 0;
		r->offcpu = s->offcpu;
		r->stack = stack;
		r->weight = alloc || s->offcpu ?
				    (uint64_t)((unsigned __int128)total * (k + 1) / s->count -
					       (unsigned __int128)total * k / s->count) :
				    p->period_ns;
	}
	return 0;
}

/* The markers' names, the profile's summary lines, in the thread's string array. 0 or -errno. */
static int tables__add_markers(struct thread_tables *t, const struct profile *p)
{
	struct profile_summary sum;

	profile__summary(p, &sum);
	for (size_t i = 0; i < sum.nr; i++) {
		int64_t str =
			tables__string(t, sum.lines[i].text, strlen(sum.lines[i].text), false);

		if (str < 0)
			return str;
		t->markers[t->nr_markers++] = str;
	}
	return 0;
}

#define RADIX_BITS 11

/*
 * Sort the rows by time, stably: rows of one time keep the samples' order.
 * An LSD radix sort, over only as many bits as the latest time has: on 1M
 * rows, qsort() took 150 ms, a third of the whole write. 0 or -ENOMEM.
 */
static int tables__sort_rows(struct thread_tables *t)
{
	struct ff_row *src = t->rows, *dst, *swap;
	uint64_t latest = 0;
	bool sorted = true;
	size_t alloc;

	for (size_t i = 0; i < t->nr_rows; i++) {
		sorted = sorted && (!i || src[i - 1].time <= src[i].time);
		latest = src[i].time > latest ? src[i].time : latest;
	}
	if (sorted)
		return 0;
	if (array__reserve(&t->sorted_rows, &t->alloc_sorted_rows, t->nr_rows, sizeof(*dst)))
		return -ENOMEM;
	dst = t->sorted_rows;
	for (unsigned int shift = 0; shift < 64 && latest >> shift; shift += RADIX_BITS) {
		size_t next[1 << RADIX_BITS] = { 0 }, at = 0;

		for (size_t i = 0; i < t->nr_rows; i++)
			next[src[i].time >> shift & ((1 << RADIX_BITS) - 1)]++;
		for (size_t d = 0; d < 1 << RADIX_BITS; d++) {
			size_t n = next[d];

			next[d] = at;
			at += n;
		}
		for (size_t i = 0; i < t->nr_rows; i++)
			dst[next[src[i].time >> shift & ((1 << RADIX_BITS) - 1)]++] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != t->rows) {
		t->sorted_rows = t->rows;
		t->rows = src;
		alloc = t->alloc_rows;
		t->alloc_rows = t->alloc_sorted_rows;
		t->alloc_sorted_rows = alloc;
	}
	return 0;
}

struct thread_info {
	uint32_t pid, tid;
	const char *name;
	const char *process_name; /* the command line, else the process name */
};

/* "@name":[@n copies of @value] */
static void json__repeat(struct json *j, const char *name, const char *value, size_t n)
{
	json__lit(j, "\"");
	json__put(j, name, strlen(name));
	json__lit(j, "\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			json__lit(j, ",");
		json__put(j, value, strlen(value));
	}
	json__lit(j, "]");
}

/* A column's separator: none before the first value. */
static void json__sep(struct json *j, size_t i)
{
	if (i)
		json__lit(j, ",");
}

/* An index, or null for NO_INDEX. */
static void json__index(struct json *j, uint32_t v)
{
	if (v == NO_INDEX)
		json__lit(j, "null");
	else
		json__u64(j, v);
}

/*
 * The samples table. Weighted by time (weightType "tracing-ms": each row
 * weighs the milliseconds it stands for) in off-CPU and wall-clock
 * profiles, so that the call tree's shares are shares of time; by bytes
 * (weightType "bytes") in allocation profiles, whose rows have no CPU time
 * (no threadCPUDelta); in CPU profiles every row weighs one sample (weight
 * null).
 */
static void json__samples(struct json *j, const struct thread_tables *t, const struct profile *p)
{
	bool alloc = p->mode == PROFILE_ALLOC;

	json__lit(j, "\"samples\":{\"weightType\":");
	if (alloc) {
		json__lit(j, "\"bytes\",\n\"weight\":[");
		for (size_t i = 0; i < t->nr_rows; i++) {
			json__sep(j, i);
			json__u64(j, t->rows[i].weight);
		}
		json__lit(j, "],\n");
	} else if (p->mode != PROFILE_CPU) {
		json__lit(j, "\"tracing-ms\",\n\"weight\":[");
		for (size_t i = 0; i < t->nr_rows; i++) {
			json__sep(j, i);
			json__ms(j, t->rows[i].weight);
		}
		json__lit(j, "],\n");
	} else {
		json__lit(j, "\"samples\",\"weight\":null,\n");
	}
	json__lit(j, "\"stack\":[");
	for (size_t i = 0; i < t->nr_rows; i++) {
		json__sep(j, i);
		json__u64(j, t->rows[i].stack);
	}
	json__lit(j, "],\n\"time\":[");
	for (size_t i = 0; i < t->nr_rows; i++) {
		json__sep(j, i);
		json__ms(j, t->rows[i].time);
	}
	json__lit(j, "]");
	if (!alloc) {
		json__lit(j, ",\n\"threadCPUDelta\":[");
		for (size_t i = 0; i < t->nr_rows; i++) {
			json__sep(j, i);
			json__u64(j, t->rows[i].offcpu ? 0 : p->period_ns);
		}
		json__lit(j, "]");
	}
	json__lit(j, ",\"length\":");
	json__u64(j, t->nr_rows);
	json__lit(j, "},\n");
}

/* The markers: intervals spanning the profile (phase 1), in the Other category. */
static void json__markers(struct json *j, const struct thread_tables *t, const struct profile *p)
{
	size_t n = t->nr_markers;

	json__lit(j, "\"markers\":{");
	json__repeat(j, "data", "null", n);
	json__lit(j, ",\"name\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->markers[i]);
	}
	json__lit(j, "],");
	json__repeat(j, "startTime", "0", n);
	json__lit(j, ",\"endTime\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__ms(j, p->duration);
	}
	json__lit(j, "],");
	json__repeat(j, "phase", "1", n);
	json__lit(j, ",");
	json__repeat(j, "category", CAT_OTHER_STR, n);
	json__lit(j, ",\"length\":");
	json__u64(j, n);
	json__lit(j, "},\n");
}

/* The stack table; a stack's category is its leaf frame's (every frame has one). */
static void json__stacks(struct json *j, const struct thread_tables *t)
{
	size_t n = t->nr_stacks;

	json__lit(j, "\"stackTable\":{\"frame\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->stacks[i].frame);
	}
	json__lit(j, "],\n\"category\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->frames[t->stacks[i].frame].category);
	}
	json__lit(j, "],\n");
	json__repeat(j, "subcategory", "0", n);
	json__lit(j, ",\n\"prefix\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__index(j, t->stacks[i].prefix);
	}
	json__lit(j, "],\"length\":");
	json__u64(j, n);
	json__lit(j, "},\n");
}

/* The frame table: no addresses (the profile is symbolicated), a line where known. */
static void json__frames(struct json *j, const struct thread_tables *t)
{
	size_t n = t->nr_frames;

	json__lit(j, "\"frameTable\":{");
	json__repeat(j, "address", "-1", n);
	json__lit(j, ",\n\"inlineDepth\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->frames[i].inline_depth);
	}
	json__lit(j, "],\n\"category\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->frames[i].category);
	}
	json__lit(j, "],\n");
	json__repeat(j, "subcategory", "0", n);
	json__lit(j, ",\n\"func\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->frames[i].func);
	}
	json__lit(j, "],\n");
	json__repeat(j, "nativeSymbol", "null", n);
	json__lit(j, ",");
	json__repeat(j, "innerWindowID", "0", n);
	json__lit(j, ",");
	json__repeat(j, "implementation", "null", n);
	json__lit(j, ",\n\"line\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		if (t->frames[i].line)
			json__u64(j, t->frames[i].line);
		else
			json__lit(j, "null");
	}
	json__lit(j, "],\n");
	json__repeat(j, "column", "null", n);
	json__lit(j, ",\"length\":");
	json__u64(j, n);
	json__lit(j, "},\n");
}

/* The function table (C functions: not JS, their source file where known) and the modules. */
static void json__funcs(struct json *j, const struct thread_tables *t)
{
	size_t n = t->nr_funcs;

	json__lit(j, "\"funcTable\":{\"name\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->funcs[i].name);
	}
	json__lit(j, "],\n");
	json__repeat(j, "isJS", "false", n);
	json__lit(j, ",");
	json__repeat(j, "relevantForJS", "false", n);
	json__lit(j, ",\n\"resource\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		if (t->funcs[i].resource == NO_INDEX)
			json__lit(j, "-1");
		else
			json__u64(j, t->funcs[i].resource);
	}
	json__lit(j, "],\n\"fileName\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__index(j, t->funcs[i].file);
	}
	json__lit(j, "],\n");
	json__repeat(j, "lineNumber", "null", n);
	json__lit(j, ",");
	json__repeat(j, "columnNumber", "null", n);
	json__lit(j, ",\"length\":");
	json__u64(j, n);
	json__lit(j, "},\n");

	/* Modules are libraries (resource type 1) without an entry in "libs". */
	n = t->nr_resources;
	json__lit(j, "\"resourceTable\":{");
	json__repeat(j, "lib", "null", n);
	json__lit(j, ",\"name\":[");
	for (size_t i = 0; i < n; i++) {
		json__sep(j, i);
		json__u64(j, t->resources[i].name);
	}
	json__lit(j, "],");
	json__repeat(j, "host", "null", n);
	json__lit(j, ",");
	json__repeat(j, "type", "1", n);
	json__lit(j, ",\"length\":");
	json__u64(j, n);
	json__lit(j, "},\n\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],"
		     "\"functionSize\":[],\"length\":0},\n");
}

static void json__thread(struct json *j, const struct thread_tables *t,
			 const struct thread_info *ti, const struct profile *p)
{
	json__lit(j, "{\"processType\":\"default\",\"processStartupTime\":0,"
		     "\"processShutdownTime\":null,\"registerTime\":0,\"unregisterTime\":null,"
		     "\"pausedRanges\":[],\"name\":");
	json__str(j, ti->name ? ti->name : "[unknown]");
	json__lit(j, ",\"isMainThread\":");
	if (ti->pid == ti->tid)
		json__lit(j, "true");
	else
		json__lit(j, "false");
	json__lit(j, ",\"processName\":");
	json__str(j, ti->process_name ? ti->process_name : "[unknown]");
	/* The format's pids are strings. */
	json__lit(j, ",\"pid\":\"");
	json__u64(j, ti->pid);
	json__lit(j, "\",\"tid\":");
	json__u64(j, ti->tid);
	json__lit(j, ",\n");
	json__samples(j, t, p);
	json__markers(j, t, p);
	json__stacks(j, t);
	json__frames(j, t);
	json__funcs(j, t);
	json__lit(j, "\"stringArray\":[");
	for (size_t i = 0; i < t->nr_strings; i++) {
		json__lit(j, "\n");
		json__str(j, t->strings[i].s);
		if (i + 1 < t->nr_strings)
			json__lit(j, ",");
	}
	json__lit(j, "]}");
}

/*
 * The machine the profile was recorded on, as the profiler shows it
 * (meta.oscpu, "Platform:" in profiler-cli): "Linux 6.1.0-9-amd64 x86_64",
 * as `uname -srm` prints it.
 */
static void json__host(struct json *j, const struct profile *p)
{
	const struct utsname *u = &p->host;

	if (!*u->sysname)
		return;
	json__lit(j, ",\"platform\":");
	json__str(j, u->sysname);
	json__lit(j, ",\"oscpu\":\"");
	/* Within a JSON string: escaped one by one, the quotes around them written here. */
	json__str_body(j, u->sysname);
	if (*u->release) {
		json__lit(j, " ");
		json__str_body(j, u->release);
	}
	if (*u->machine) {
		json__lit(j, " ");
		json__str_body(j, u->machine);
	}
	json__lit(j, "\"");
}

static void json__meta(struct json *j, const struct profile *p)
{
	json__lit(j, "{\"meta\":{\"version\":24,\"preprocessedProfileVersion\":");
	json__u64(j, FIREFOX_PROCESSED_VERSION);
	json__lit(j, ",\"interval\":");
	/* A frequency of 0 (no sampling: an off-CPU-only profile) has no period. */
	json__ms(j, p->period_ns ? p->period_ns : 1000000);
	json__lit(j, ",\"startTime\":");
	json__ms(j, p->start_time);
	json__lit(j, ",\"profilingStartTime\":0,\"profilingEndTime\":");
	json__ms(j, p->duration);
	json__lit(j, ",\"processType\":0,\"product\":\"profiler\",\"stackwalk\":1,\"debug\":false,"
		     "\"symbolicated\":true");
	json__host(j, p);
	json__lit(j, ",\n\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\","
		     "\"threadCPUDelta\":\"ns\"},\n\"categories\":");
	json__put(j, categories_json, sizeof(categories_json) - 1);
	json__lit(j, ",\"markerSchema\":[]},\n\"libs\":[],\"pages\":[],\n\"threads\":[");
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_name(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

/* Threads, then their names, then the samples' places in the profile: a total order. */
static int cmp_sample(const void *pa, const void *pb)
{
	const struct profile_sample *a = *(const struct profile_sample *const *)pa;
	const struct profile_sample *b = *(const struct profile_sample *const *)pb;
	int c = cmp_u32(a->pid, b->pid);

	if (!c)
		c = cmp_u32(a->tid, b->tid);
	if (!c)
		c = cmp_name(a->thread_name, b->thread_name);
	if (!c)
		c = cmp_name(a->process_name, b->process_name);
	if (!c)
		c = cmp_name(a->cmdline, b->cmdline);
	if (!c)
		c = a < b ? -1 : a > b;
	return c;
}

/* The names of a sample, in the order samples are sorted by. */
enum sample_name {
	NAME_THREAD,
	NAME_PROCESS,
	NAME_CMDLINE,
};

static const char *sample_name(const struct profile_sample *s, enum sample_name which)
{
	switch (which) {
	case NAME_THREAD:
		return s->thread_name;
	case NAME_PROCESS:
		return s->process_name;
	case NAME_CMDLINE:
		return s->cmdline;
	}
	return NULL;
}

/*
 * In @s[*@start..*@end), sorted by the name @which, narrow the range to
 * the run of the name that has the most samples; the first (bytewise
 * least, NULL first) on a tie.
 */
static void most_sampled_name(const struct profile_sample *const *s, size_t *start, size_t *end,
			      enum sample_name which)
{
	size_t best_start = *start, best_end = *start;
	uint64_t best = 0;

	for (size_t i = *start, k; i < *end; i = k) {
		uint64_t count = 0;

		for (k = i;
		     k < *end && !cmp_name(sample_name(s[k], which), sample_name(s[i], which)); k++)
			count += s[k]->count;
		if (best_end == *start || count > best) {
			best = count;
			best_start = i;
			best_end = k;
		}
	}
	*start = best_start;
	*end = best_end;
}

static void thread_info(struct thread_info *ti, const struct profile_sample *const *s, size_t n)
{
	size_t start = 0, end = n;

	ti->pid = s[0]->pid;
	ti->tid = s[0]->tid;
	most_sampled_name(s, &start, &end, NAME_THREAD);
	ti->name = s[start]->thread_name;
	/* Within the thread name's samples, which are sorted by process name next. */
	most_sampled_name(s, &start, &end, NAME_PROCESS);
	ti->process_name = s[start]->process_name;
	/*
	 * The UI shows the process name where processes are told apart (a
	 * track's tooltip, the process track of a pid): the command line, as
	 * ps shows it, keeps processes of one program apart.
	 */
	most_sampled_name(s, &start, &end, NAME_CMDLINE);
	if (s[start]->cmdline)
		ti->process_name = s[start]->cmdline;
}

/* Write the threads of @p, the first with the markers. 0 or -errno (a build error). */
static int write_threads(struct json *j, const struct profile *p, struct thread_tables *t)
{
	const struct profile_sample **order;
	struct thread_info ti;
	int err = 0;

	if (!p->nr_samples) {
		tables__reset(t);
		ti = (struct thread_info){ 0, 0, "[no samples]", "[no samples]" };
		err = tables__add_markers(t, p);
		if (!err)
			json__thread(j, t, &ti, p);
		return err;
	}
	order = malloc(p->nr_samples * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_samples; i++)
		order[i] = &p->samples[i];
	qsort(order, p->nr_samples, sizeof(*order), cmp_sample);

	for (size_t i = 0, k; i < p->nr_samples && !j->err; i = k) {
		for (k = i + 1; k < p->nr_samples && order[k]->pid == order[i]->pid &&
				order[k]->tid == order[i]->tid;
		     k++)
			;
		tables__reset(t);
		thread_info(&ti, order + i, k - i);
		for (size_t s = i; s < k && !err; s++)
			err = tables__add_sample(t, p, order[s]);
		if (!err && i == 0)
			err = tables__add_markers(t, p);
		if (!err)
			err = tables__sort_rows(t);
		if (err)
			break;
		if (i)
			json__lit(j, ",\n");
		json__thread(j, t, &ti, p);
	}
	free(order);
	return err;
}

int firefox__write(const struct profile *p, FILE *out, bool gzip)
{
	struct thread_tables t;
	struct json *j;
	int err;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->out = out;
	memset(&t, 0, sizeof(t));
	if (gzip) {
		j->gz = gzip_writer__new(out, FIREFOX_GZIP_LEVEL);
		if (!j->gz) {
			err = -errno;
			goto out_free;
		}
	}

	json__meta(j, p);
	err = write_threads(j, p, &t);
	if (err)
		goto out_release;
	json__lit(j, "]}\n");
	json__flush(j, true);
	err = j->err;

out_release:
	tables__release(&t);
	gzip_writer__free(j->gz);
out_free:
	free(j);
	return err;
}
