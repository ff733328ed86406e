// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/profile.h"
#include "common/py_frames.h"
#include "export/gzip_writer.h"
#include "export/pprof.h"
#include "profile.pb-c.h"

/*
 * Measured on synthetic profiles of 50,000 distinct 30-frame stacks (7.7 MB
 * encoded): level 1 compresses 2.0-2.3x at 70-90 MB/s, level 6 only 4-6%
 * smaller at 40-46 MB/s. The ids and varints that make up most of a profile
 * leave little for the slower levels to find, so take the speed.
 */
#define PPROF_GZIP_LEVEL 1

/*
 * Every message of the encoded profile is carved out of one arena and freed
 * with it: a profile with tens of thousands of stacks needs hundreds of
 * thousands of small messages, and the encoder only ever frees them all at
 * once. glibc's obstack would do, but on allocation failure it calls a global
 * handler that prints and exits, which library code must not do.
 */
#define ARENA_BLOCK (256 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	uint64_t data[]; /* 8-byte alignment suits every protobuf-c message */
};

struct arena {
	struct arena_block *head;
};

static void *arena__alloc(struct arena *a, size_t size)
{
	struct arena_block *b = a->head;
	void *ret;

	if (size > SIZE_MAX - 7)
		return NULL;
	size = (size + 7) & ~(size_t)7;
	if (!b || b->size - b->used < size) {
		size_t bsize = size > ARENA_BLOCK ? size : ARENA_BLOCK;

		if (bsize > SIZE_MAX - sizeof(*b))
			return NULL;
		b = malloc(sizeof(*b) + bsize);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = bsize;
		/* Keep the partly used block in front when a big request gets its own. */
		if (a->head && bsize > ARENA_BLOCK) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	ret = (char *)b->data + b->used;
	b->used += size;
	memset(ret, 0, size);
	return ret;
}

static void *arena__alloc_array(struct arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return arena__alloc(a, n * size);
}

static void arena__release(struct arena *a)
{
	struct arena_block *b, *next;

	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}

struct str_entry {
	const char *s;
	size_t len;
	int64_t idx;
};

struct str_key {
	const char *s;
	size_t len;
};

struct function_entry {
	int64_t key[3]; /* name, system_name, filename */
	uint64_t id;
};

/* A Location and its Lines, one per function at the address (inlined ones first). */
struct location_msg {
	Perftools__Profiles__Location msg;
	Perftools__Profiles__Line *lines[];
};

enum {
	KEY_PID,
	KEY_TID,
	KEY_THREAD,
	KEY_COMM,
	KEY_CMDLINE,
	KEY_CGROUP,
	KEY_KIND, /* PROFILE_ALLOC only: "heap" or "mmap" */
	NR_KEYS
};

/* The last string a label had: consecutive samples mostly repeat it. */
struct str_memo {
	const char *s;
	int64_t idx;
};

struct builder {
	struct arena arena;
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType sample_types[4], *sample_type_ptrs[4], period_type;
	int64_t comments[PROFILE_SUMMARY_MAX];
	int64_t label_keys[NR_KEYS];
	struct str_memo memos[NR_KEYS]; /* of the string labels */

	/* Tables: a hashtab to find an entry, a vector that keeps first-use order. */
	struct hashtab strings, mappings, functions, locations;
	size_t alloc_strings, alloc_mappings, alloc_functions, alloc_locations;
	bool kernel_offsets; /* the profile's */
};

/*
 * The pointer-keyed tables (frames, mappings) store the id itself as the
 * entry and hash the pointer with hash_u64(), so a lookup never reads an
 * entry (hash_u64_eq()). Ids start at 1, so no entry is NULL.
 */
static bool str_eq(const void *entry, const void *key)
{
	const struct str_entry *e = entry;
	const struct str_key *k = key;

	return e->len == k->len && (e->s == k->s || !memcmp(e->s, k->s, k->len));
}

/*
 * Index of @s in the string table, adding it on first use. Strings are compared
 * by content: interned and literal strings may meet here. The table points at
 * @s itself, which must outlive the builder. NULL and "" are index 0.
 */
static int64_t builder__str(struct builder *b, const char *s)
{
	struct str_key key;
	struct str_entry *e;
	uint64_t hash;

	if (!s || !*s)
		return 0;
	key.s = s;
	key.len = strlen(s);
	hash = hash_bytes(s, key.len);
	e = hashtab__find(&b->strings, hash, str_eq, &key);
	if (e)
		return e->idx;
	if (array__reserve(&b->prof.string_table, &b->alloc_strings, b->prof.n_string_table + 1,
			   sizeof(*b->prof.string_table)))
		return -ENOMEM;
	e = arena__alloc(&b->arena, sizeof(*e));
	if (!e || hashtab__insert(&b->strings, hash, e))
		return -ENOMEM;
	e->s = s;
	e->len = key.len;
	e->idx = b->prof.n_string_table;
	/* protobuf-c only reads the table, but declares it mutable. */
	b->prof.string_table[b->prof.n_string_table++] = (char *)s;
	return e->idx;
}

/* Like builder__str() for a formatted string, stored in the arena. */
static int64_t builder__strf(struct builder *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int64_t builder__strf(struct builder *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	s = arena__alloc(&b->arena, (size_t)n + 1);
	if (!s)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return builder__str(b, s);
}

/* builder__str() for the @len bytes at @s, copied into the arena with a NUL. */
static int64_t builder__str_len(struct builder *b, const char *s, size_t len)
{
	char *copy = arena__alloc(&b->arena, len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	return builder__str(b, copy);
}

/*
 * The labels a program gave @s (profile_sample's "KEY=VALUE\n" pairs) into
 * @msg's, from @labels on (room for every pair): string labels, as Go's
 * profiler writes a goroutine's. 0 or -ENOMEM.
 */
static int builder__program_labels(struct builder *b, const struct profile_sample *s,
				   Perftools__Profiles__Sample *msg,
				   Perftools__Profiles__Label *labels)
{
	for (const char *p = s->labels, *end; p && (end = strchr(p, '\n')); p = end + 1) {
		const char *eq = memchr(p, '=', end - p);
		Perftools__Profiles__Label *l = labels++;

		if (!eq)
			continue;
		perftools__profiles__label__init(l);
		l->key = builder__str_len(b, p, eq - p);
		l->str = builder__str_len(b, eq + 1, end - eq - 1);
		if (l->key < 0 || l->str < 0)
			return -ENOMEM;
		msg->label[msg->n_label++] = l;
	}
	return 0;
}

/* builder__str() for a non-NULL @s, remembering the answer in @m. */
static int64_t builder__str_memo(struct builder *b, struct str_memo *m, const char *s)
{
	if (s != m->s) {
		int64_t idx = builder__str(b, s);

		if (idx < 0)
			return idx;
		m->s = s;
		m->idx = idx;
	}
	return m->idx;
}

/* Id of the Mapping for @m, adding it on first use; 0 for NULL; negative errno. */
static int64_t builder__mapping(struct builder *b, const struct profile_mapping *m)
{
	Perftools__Profiles__Mapping *msg;
	uint64_t hash = hash_u64((uintptr_t)m);
	int64_t filename, build_id;
	uint64_t id;

	if (!m)
		return 0;
	id = (uintptr_t)hashtab__find(&b->mappings, hash, hash_u64_eq, m);
	if (id)
		return id;
	filename = builder__str(b, m->filename);
	build_id = builder__str(b, m->build_id);
	if (filename < 0 || build_id < 0)
		return -ENOMEM;
	if (array__reserve(&b->prof.mapping, &b->alloc_mappings, b->prof.n_mapping + 1,
			   sizeof(*b->prof.mapping)))
		return -ENOMEM;
	id = b->prof.n_mapping + 1;
	msg = arena__alloc(&b->arena, sizeof(*msg));
	if (!msg || hashtab__insert(&b->mappings, hash, (void *)(uintptr_t)id))
		return -ENOMEM;
	perftools__profiles__mapping__init(msg);
	msg->id = id;
	msg->memory_start = m->start;
	msg->memory_limit = m->limit;
	if (m->kernel && b->kernel_offsets) {
		msg->memory_start = 0;
		msg->memory_limit = m->limit - m->start;
	}
	msg->file_offset = m->file_offset;
	msg->filename = filename;
	msg->build_id = build_id;
	msg->has_functions = m->has_functions;
	msg->has_filenames = m->has_filenames;
	msg->has_line_numbers = m->has_line_numbers;
	msg->has_inline_frames = m->has_inline_frames;
	b->prof.mapping[b->prof.n_mapping++] = msg;
	return msg->id;
}

static bool function_eq(const void *entry, const void *key)
{
	return !memcmp(((const struct function_entry *)entry)->key, key,
		       sizeof(((const struct function_entry *)entry)->key));
}

/* Id of the Function of @f, adding it on first use; negative errno. */
static int64_t builder__function(struct builder *b, const struct profile_line *f)
{
	Perftools__Profiles__Function *msg;
	struct function_entry *e;
	int64_t key[3];
	uint64_t hash;

	key[0] = builder__str(b, f->name);
	key[1] = builder__str(b, f->system_name ? f->system_name : f->name);
	key[2] = builder__str(b, f->filename);
	if (key[0] < 0 || key[1] < 0 || key[2] < 0)
		return -ENOMEM;
	hash = hash_words(0, (const uint64_t *)key, 3);
	e = hashtab__find(&b->functions, hash, function_eq, key);
	if (e)
		return e->id;
	if (array__reserve(&b->prof.function, &b->alloc_functions, b->prof.n_function + 1,
			   sizeof(*b->prof.function)))
		return -ENOMEM;
	e = arena__alloc(&b->arena, sizeof(*e));
	msg = arena__alloc(&b->arena, sizeof(*msg));
	if (!e || !msg || hashtab__insert(&b->functions, hash, e))
		return -ENOMEM;
	memcpy(e->key, key, sizeof(key));
	e->id = b->prof.n_function + 1;
	perftools__profiles__function__init(msg);
	msg->id = e->id;
	msg->name = key[0];
	msg->system_name = key[1];
	msg->filename = key[2];
	b->prof.function[b->prof.n_function++] = msg;
	return msg->id;
}

/*
 * The mapping of JavaScript frames (read from V8: common/py_frames.h), which
 * have none of their own: "[js]", as pprof's readers tell JIT code by its
 * mapping, over the addresses the collector gives such frames.
 */
static const struct profile_mapping js_mapping = {
	.start = PY_FRAME_ADDR_TAG,
	.limit = PY_FRAME_ADDR_TAG + (1ULL << 48),
	.filename = "[js]",
	.has_functions = true,
	.has_filenames = true,
	.has_line_numbers = true,
};

/* Id of the Location for @f, adding it on first use; negative errno. */
static int64_t builder__location(struct builder *b, const struct profile_frame *f)
{
	uint64_t hash = hash_u64((uintptr_t)f);
	Perftools__Profiles__Line *lines;
	struct location_msg *loc;
	int64_t mapping_id;
	uint64_t id;

	id = (uintptr_t)hashtab__find(&b->locations, hash, hash_u64_eq, f);
	if (id)
		return id;
	mapping_id = builder__mapping(b, f->source == FRAME_JS ? &js_mapping : f->mapping);
	if (mapping_id < 0)
		return mapping_id;
	if (array__reserve(&b->prof.location, &b->alloc_locations, b->prof.n_location + 1,
			   sizeof(*b->prof.location)))
		return -ENOMEM;
	id = b->prof.n_location + 1;
	loc = arena__alloc(&b->arena, sizeof(*loc) + f->nr_lines * sizeof(loc->lines[0]));
	lines = arena__alloc_array(&b->arena, f->nr_lines, sizeof(*lines));
	if (!loc || !lines || hashtab__insert(&b->locations, hash, (void *)(uintptr_t)id))
		return -ENOMEM;
	for (uint32_t i = 0; i < f->nr_lines; i++) {
		int64_t function_id = builder__function(b, &f->lines[i]);

		if (function_id < 0)
			return function_id;
		perftools__profiles__line__init(&lines[i]);
		lines[i].function_id = function_id;
		lines[i].line = f->lines[i].line;
		loc->lines[i] = &lines[i];
	}
	perftools__profiles__location__init(&loc->msg);
	loc->msg.id = id;
	loc->msg.mapping_id = mapping_id;
	loc->msg.address = f->address;
	if (f->kernel && b->kernel_offsets)
		loc->msg.address = f->mapping ? f->address - f->mapping->start : 0;
	loc->msg.n_line = f->nr_lines;
	loc->msg.line = loc->lines;
	b->prof.location[b->prof.n_location++] = &loc->msg;
	return id;
}

/*
 * Fill @msg from @s. @prev and @prev_msg are the sample before it (or NULL):
 * sorted samples share their outer frames with their predecessor, whose
 * location ids are then copied rather than looked up.
 */
static int builder__sample(struct builder *b, const struct profile *p,
			   const struct profile_sample *s, Perftools__Profiles__Sample *msg,
			   const struct profile_sample *prev,
			   const Perftools__Profiles__Sample *prev_msg)
{
	const char *values[NR_KEYS] = {
		[KEY_THREAD] = s->thread_name,
		[KEY_COMM] = s->process_name,
		[KEY_CMDLINE] = s->cmdline,
		[KEY_CGROUP] = s->cgroup,
		/*
		 * On every sample of an allocation profile, so that
		 * -tagfocus=kind=heap keeps the heap's figures, those of the
		 * summary, and -tagroot=kind puts each kind under a root.
		 */
		[KEY_KIND] = p->mode != PROFILE_ALLOC	 ? NULL :
			     s->alloc.kind == ALLOC_MMAP ? "mmap" :
							   "heap",
	};
	Perftools__Profiles__Label *labels;
	uint32_t n = s->nr_frames;
	size_t nr_labels = NR_KEYS;
	int64_t str;

	perftools__profiles__sample__init(msg);

	for (const char *c = s->labels; c && (c = strchr(c, '\n')); c++)
		nr_labels++;
	msg->n_value = b->prof.n_sample_type;
	msg->value = arena__alloc_array(&b->arena, msg->n_value, sizeof(*msg->value));
	labels = arena__alloc_array(&b->arena, nr_labels, sizeof(*labels));
	msg->label = arena__alloc_array(&b->arena, nr_labels, sizeof(*msg->label));
	if (!msg->value || !labels || !msg->label)
		return -ENOMEM;
	/* In the order of builder__header()'s sample types. */
	msg->value[0] = profile_sample__events(s);
	switch (p->mode) {
	case PROFILE_CPU:
		msg->value[1] = profile_sample__cpu_ns(p, s);
		break;
	case PROFILE_OFFCPU:
		msg->value[1] = profile_sample__cpu_ns(p, s);
		msg->value[2] = profile_sample__offcpu_ns(s);
		break;
	case PROFILE_WALL:
		msg->value[1] = profile_sample__wall_ns(p, s);
		break;
	case PROFILE_ALLOC:
		msg->value[0] = s->alloc.blocks;
		msg->value[1] = s->alloc.bytes;
		msg->value[2] = s->alloc.end_blocks;
		msg->value[3] = s->alloc.end_bytes;
		break;
	}

	for (int i = 0; i < NR_KEYS; i++) {
		perftools__profiles__label__init(&labels[i]);
		labels[i].key = b->label_keys[i];
	}
	labels[KEY_PID].num = s->pid;
	labels[KEY_TID].num = s->tid;
	msg->label[msg->n_label++] = &labels[KEY_PID];
	msg->label[msg->n_label++] = &labels[KEY_TID];
	for (int key = KEY_THREAD; key < NR_KEYS; key++) {
		const char *value = values[key];

		if (!value)
			continue;
		str = builder__str_memo(b, &b->memos[key], value);
		if (str < 0)
			return str;
		labels[key].str = str;
		msg->label[msg->n_label++] = &labels[key];
	}
	if (builder__program_labels(b, s, msg, labels + NR_KEYS))
		return -ENOMEM;

	if (!s->nr_frames)
		return 0;
	msg->location_id = arena__alloc_array(&b->arena, s->nr_frames, sizeof(*msg->location_id));
	if (!msg->location_id)
		return -ENOMEM;
	if (prev) {
		uint32_t pn = prev->nr_frames;

		for (; n && pn && s->frames[n - 1] == prev->frames[pn - 1]; n--, pn--)
			msg->location_id[n - 1] = prev_msg->location_id[pn - 1];
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t id = builder__location(b, s->frames[i]);

		if (id < 0)
			return id;
		msg->location_id[i] = id;
	}
	msg->n_location_id = s->nr_frames;
	return 0;
}

/*
 * An allocation profile's types, Go's heap profile's, so that go tool pprof
 * reads it as one (-sample_index=alloc_space, ...; inuse_space, last, by
 * default): objects and bytes allocated, then those live at the end. The
 * period is the sampling rate in bytes.
 */
static int builder__alloc_types(struct builder *b, const struct profile *p)
{
	static const char *const names[4][2] = {
		{ "alloc_objects", "count" },
		{ "alloc_space", "bytes" },
		{ "inuse_objects", "count" },
		{ "inuse_space", "bytes" },
	};
	Perftools__Profiles__Profile *prof = &b->prof;

	for (int i = 0; i < 4; i++) {
		perftools__profiles__value_type__init(&b->sample_types[i]);
		b->sample_type_ptrs[i] = &b->sample_types[i];
		b->sample_types[i].type = builder__str(b, names[i][0]);
		b->sample_types[i].unit = builder__str(b, names[i][1]);
		if (b->sample_types[i].type < 0 || b->sample_types[i].unit < 0)
			return -ENOMEM;
	}
	prof->n_sample_type = 4;
	prof->sample_type = b->sample_type_ptrs;
	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = builder__str(b, "space");
	b->period_type.unit = builder__str(b, "bytes");
	if (b->period_type.type < 0 || b->period_type.unit < 0)
		return -ENOMEM;
	prof->period_type = &b->period_type;
	prof->period = p->alloc_rate;
	return 0;
}

/* A time profile's types: samples (or intervals) counted, then time. */
static int builder__time_types(struct builder *b, const struct profile *p)
{
	Perftools__Profiles__Profile *prof = &b->prof;
	int64_t samples = builder__str(b, "samples"), count = builder__str(b, "count");
	int64_t cpu = builder__str(b, "cpu"), nanoseconds = builder__str(b, "nanoseconds");
	int64_t second;

	if (samples < 0 || count < 0 || cpu < 0 || nanoseconds < 0)
		return -ENOMEM;
	/*
	 * Samples (or intervals) counted, then time: cpu; cpu and offcpu; or
	 * wall. The last type named is the one pprof shows by default.
	 */
	second = p->mode == PROFILE_WALL ? builder__str(b, "wall") : cpu;
	if (second < 0)
		return -ENOMEM;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__value_type__init(&b->sample_types[i]);
		b->sample_type_ptrs[i] = &b->sample_types[i];
		b->sample_types[i].unit = nanoseconds;
	}
	b->sample_types[0].type = samples;
	b->sample_types[0].unit = count;
	b->sample_types[1].type = second;
	prof->n_sample_type = 2;
	if (p->mode == PROFILE_OFFCPU) {
		b->sample_types[2].type = builder__str(b, "offcpu");
		if (b->sample_types[2].type < 0)
			return -ENOMEM;
		prof->n_sample_type = 3;
	}
	prof->sample_type = b->sample_type_ptrs;

	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = cpu;
	b->period_type.unit = nanoseconds;
	prof->period_type = &b->period_type;
	prof->period = p->period_ns;
	return 0;
}

static int builder__header(struct builder *b, const struct profile *p)
{
	static const char *const label_keys[NR_KEYS] = { "pid",	    "tid",    "thread", "comm",
							 "cmdline", "cgroup", "kind" };
	Perftools__Profiles__Profile *prof = &b->prof;
	struct profile_summary sum;

	/* pprof rejects a table without "" first, even for an empty profile. */
	if (array__reserve(&prof->string_table, &b->alloc_strings, 1, sizeof(*prof->string_table)))
		return -ENOMEM;
	prof->string_table[prof->n_string_table++] = (char *)"";

	if (p->mode == PROFILE_ALLOC ? builder__alloc_types(b, p) : builder__time_types(b, p))
		return -ENOMEM;
	prof->default_sample_type = b->sample_types[prof->n_sample_type - 1].type;
	prof->time_nanos = p->start_time;
	prof->duration_nanos = p->duration;

	/* The summary, a comment a line (go tool pprof -comments). */
	profile__summary(p, &sum);
	for (size_t i = 0; i < sum.nr; i++) {
		b->comments[i] = builder__strf(b, "%s", sum.lines[i].text);
		if (b->comments[i] < 0)
			return -ENOMEM;
	}
	prof->n_comment = sum.nr;
	prof->comment = b->comments;

	/* "kind" only where it labels samples: a time profile's table stays as it was. */
	for (int i = 0; i < (p->mode == PROFILE_ALLOC ? NR_KEYS : KEY_KIND); i++) {
		b->label_keys[i] = builder__str(b, label_keys[i]);
		if (b->label_keys[i] < 0)
			return -ENOMEM;
	}
	return 0;
}

static void builder__release(struct builder *b)
{
	hashtab__release(&b->strings);
	hashtab__release(&b->mappings);
	hashtab__release(&b->functions);
	hashtab__release(&b->locations);
	free(b->prof.string_table);
	free(b->prof.mapping);
	free(b->prof.function);
	free(b->prof.location);
	arena__release(&b->arena);
}

/* pprof takes mapping[0] for the main binary: give that id to the first one seen. */
static int builder__main_mapping(struct builder *b, const struct profile *p)
{
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		for (uint32_t k = 0; k < s->nr_frames; k++) {
			const struct profile_mapping *m = s->frames[k]->mapping;

			if (m && m->main_binary) {
				int64_t id = builder__mapping(b, m);

				return id < 0 ? id : 0;
			}
		}
	}
	return 0;
}

/* Fill b->prof from @p; builder__release() frees it whatever this returns. */
static int builder__build(struct builder *b, const struct profile *p)
{
	Perftools__Profiles__Sample *samples;
	int err;

	b->kernel_offsets = p->kernel_offsets;
	err = builder__header(b, p);
	if (!err)
		err = builder__main_mapping(b, p);
	if (err)
		return err;
	if (!p->nr_samples)
		return 0;
	samples = arena__alloc_array(&b->arena, p->nr_samples, sizeof(*samples));
	b->prof.sample = arena__alloc_array(&b->arena, p->nr_samples, sizeof(*b->prof.sample));
	if (!samples || !b->prof.sample)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_samples; i++) {
		err = builder__sample(b, p, &p->samples[i], &samples[i],
				      i ? &p->samples[i - 1] : NULL, i ? &samples[i - 1] : NULL);
		if (err)
			return err;
		b->prof.sample[i] = &samples[i];
	}
	b->prof.n_sample = p->nr_samples;
	return 0;
}

int pprof__encode(const struct profile *p, uint8_t **buf, size_t *len)
{
	struct builder b;
	uint8_t *out;
	size_t size;
	int err;

	memset(&b, 0, sizeof(b));
	perftools__profiles__profile__init(&b.prof);
	err = builder__build(&b, p);
	if (err)
		goto out_release;
	size = perftools__profiles__profile__get_packed_size(&b.prof);
	out = malloc(size ? size : 1);
	if (!out) {
		err = -ENOMEM;
		goto out_release;
	}
	if (perftools__profiles__profile__pack(&b.prof, out) != size) {
		pr_warn("pprof: protobuf-c packed a different size than it announced");
		free(out);
		err = -EINVAL;
		goto out_release;
	}
	*buf = out;
	*len = size;
out_release:
	builder__release(&b);
	return err;
}

int pprof__write(const struct profile *p, FILE *out)
{
	struct gzip_writer *gz;
	uint8_t *buf;
	size_t len;
	int err;

	err = pprof__encode(p, &buf, &len);
	if (err)
		return err;
	gz = gzip_writer__new(out, PPROF_GZIP_LEVEL);
	if (!gz) {
		err = -errno;
		goto out_free_buf;
	}
	err = gzip_writer__write(gz, buf, len);
	if (!err)
		err = gzip_writer__finish(gz);
	gzip_writer__free(gz);
out_free_buf:
	free(buf);
	return err;
}
