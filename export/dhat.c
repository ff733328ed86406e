// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/hashtab.h"
#include "common/profile.h"
#include "export/dhat.h"
#include "export/json_string.h"

#define DHAT_FILE_VERSION 2
/* The viewer's "short-lived" threshold, in the file's unit (µs): see dhat.h. */
#define DHAT_SHORT_LIVED_US 1

/* An entry of the frame table, numbered in the order it was first met. */
struct dhat_str {
	uint32_t id;
	size_t len;
	char text[];
};

/* The frame table entries of one profile_frame, innermost first: formatted once per frame. */
struct dhat_frame {
	const struct profile_frame *frame;
	uint32_t nr;
	uint32_t ids[];
};

/* A program point: one distinct stack (its frame table ids) and what it allocated. */
struct dhat_pp {
	uint64_t tb, tbk, tl_ns, mb, mbk, gb, gbk, eb, ebk;
	uint32_t nr_fs;
	uint32_t fs[];
};

struct fs_key {
	const uint32_t *fs;
	uint32_t nr;
};

struct str_key {
	const char *text;
	size_t len;
};

/* A process, to choose the one the header names. */
struct dhat_proc {
	uint32_t pid;
	uint64_t bytes;
	const char *cmdline, *name; /* the first of its samples' that is known */
};

struct dhat {
	struct hashtab str_table; /* struct dhat_str, by text */
	struct dhat_str **strs;	  /* by id */
	size_t nr_strs, alloc_strs;
	struct hashtab frame_table; /* struct dhat_frame, by frame pointer */
	struct hashtab pp_table;    /* struct dhat_pp, by frames */
	struct dhat_pp **pps;
	size_t nr_pps, alloc_pps;
	struct hashtab proc_table; /* struct dhat_proc, by pid */
	uint32_t *fs;		   /* the stack being built */
	size_t nr_fs, alloc_fs;
	char *buf; /* the frame text being formatted */
	size_t len, alloc;
};

/* Output through stdio, keeping the first error: writers need not check every call. */
struct dhat_out {
	FILE *f;
	int err;
};

static void out_put(void *ctx, const void *data, size_t len)
{
	struct dhat_out *o = ctx;

	if (o->err || !len)
		return;
	errno = 0;
	if (fwrite(data, 1, len, o->f) != len)
		o->err = errno ? -errno : -EIO;
}

static void out_str(struct dhat_out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

static void out_u64(struct dhat_out *o, uint64_t v)
{
	char tmp[21];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);

	out_put(o, tmp, n);
}

/* @s as a JSON string, quotes included. */
static void out_json(struct dhat_out *o, const char *s)
{
	out_put(o, "\"", 1);
	json_string__escape(s, out_put, o);
	out_put(o, "\"", 1);
}

/* ns to the file's µs, to the nearest. */
static uint64_t ns_to_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

static int dhat__printf(struct dhat *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int dhat__printf(struct dhat *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (array__reserve(&d->buf, &d->alloc, d->len + n + 1, 1))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(d->buf + d->len, n + 1, fmt, ap);
	va_end(ap);
	d->len += n;
	return 0;
}

static bool str_eq(const void *entry, const void *key)
{
	const struct dhat_str *s = entry;
	const struct str_key *k = key;

	return s->len == k->len && !memcmp(s->text, k->text, k->len);
}

/* The id of the frame table entry @text[0..@len): existing, or new. Negative errno. */
static int64_t dhat__str(struct dhat *d, const char *text, size_t len)
{
	struct str_key key = { text, len };
	uint64_t hash = hash_bytes(text, len);
	struct dhat_str *s;

	s = hashtab__find(&d->str_table, hash, str_eq, &key);
	if (s)
		return s->id;
	if (d->nr_strs >= UINT32_MAX - 1)
		return -EOVERFLOW;
	if (array__reserve(&d->strs, &d->alloc_strs, d->nr_strs + 1, sizeof(*d->strs)))
		return -ENOMEM;
	s = malloc(sizeof(*s) + len + 1);
	if (!s)
		return -ENOMEM;
	s->id = d->nr_strs;
	s->len = len;
	memcpy(s->text, text, len);
	s->text[len] = '\0';
	if (hashtab__insert(&d->str_table, hash, s)) {
		free(s);
		return -ENOMEM;
	}
	d->strs[d->nr_strs++] = s;
	return s->id;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Format line @i of @f as valgrind describes an address: "0xADDR: NAME
 * (FILE:LINE)", "0xADDR: NAME (in OBJECT)", "0xADDR: ??? (in OBJECT)" or
 * "0xADDR: ???". The name of a frame nothing names (its placeholder,
 * "libfoo.so+0x1234") is valgrind's "???": the object and address say the
 * same.
 */
static int dhat__format_line(struct dhat *d, const struct profile_frame *f, uint32_t i)
{
	const struct profile_line *l = &f->lines[i];
	bool named = f->source != FRAME_NO_SYMBOL && f->source != FRAME_NO_MAPPING;
	int err;

	d->len = 0;
	err = dhat__printf(d, "0x%" PRIX64 ": %s", f->address, named ? l->name : "???");
	if (!err && l->filename && l->line)
		err = dhat__printf(d, " (%s:%" PRIu32 ")", base_name(l->filename), l->line);
	else if (!err && f->mapping && f->mapping->filename)
		err = dhat__printf(d, " (in %s)", f->mapping->filename);
	return err;
}

static bool frame_eq(const void *entry, const void *key)
{
	return ((const struct dhat_frame *)entry)->frame == key;
}

/* The frame table ids of @f's lines, innermost first; NULL on error, in *@err. */
static const struct dhat_frame *dhat__frame(struct dhat *d, const struct profile_frame *f, int *err)
{
	uint64_t hash = hash_u64((uintptr_t)f);
	struct dhat_frame *df = hashtab__find(&d->frame_table, hash, frame_eq, f);

	if (df)
		return df;
	df = malloc(sizeof(*df) + f->nr_lines * sizeof(df->ids[0]));
	if (!df) {
		*err = -ENOMEM;
		return NULL;
	}
	df->frame = f;
	df->nr = f->nr_lines;
	/* lines[0] is the innermost: DHAT's order. */
	for (uint32_t i = 0; i < f->nr_lines; i++) {
		int64_t id;

		*err = dhat__format_line(d, f, i);
		if (*err)
			goto out_free;
		id = dhat__str(d, d->buf, d->len);
		if (id < 0) {
			*err = (int)id;
			goto out_free;
		}
		df->ids[i] = (uint32_t)id;
	}
	if (hashtab__insert(&d->frame_table, hash, df)) {
		*err = -ENOMEM;
		goto out_free;
	}
	return df;

out_free:
	free(df);
	return NULL;
}

static int dhat__push(struct dhat *d, uint32_t id)
{
	if (d->nr_fs >= UINT32_MAX ||
	    array__reserve(&d->fs, &d->alloc_fs, d->nr_fs + 1, sizeof(*d->fs)))
		return -ENOMEM;
	d->fs[d->nr_fs++] = id;
	return 0;
}

static int dhat__push_special(struct dhat *d, const char *text)
{
	int64_t id = dhat__str(d, text, strlen(text));

	return id < 0 ? (int)id : dhat__push(d, (uint32_t)id);
}

/* Put @s's stack in d->fs, innermost first. */
static int dhat__build_stack(struct dhat *d, const struct profile_sample *s)
{
	int err = 0;

	d->nr_fs = 0;
	/* frames[] runs leaf first, as DHAT's fs does. */
	for (uint32_t i = 0; i < s->nr_frames; i++) {
		const struct dhat_frame *df = dhat__frame(d, s->frames[i], &err);

		if (!df)
			return err;
		for (uint32_t j = 0; j < df->nr && !err; j++)
			err = dhat__push(d, df->ids[j]);
		if (err)
			return err;
	}
	if (!s->nr_frames)
		err = dhat__push_special(d, "[unknown]");
	if (!err && s->truncated)
		err = dhat__push_special(d, "[truncated]");
	return err;
}

static bool pp_eq(const void *entry, const void *key)
{
	const struct dhat_pp *pp = entry;
	const struct fs_key *k = key;

	return pp->nr_fs == k->nr && !memcmp(pp->fs, k->fs, k->nr * sizeof(k->fs[0]));
}

/* Add @s's figures to the PP of the stack in d->fs. */
static int dhat__count(struct dhat *d, const struct profile_sample *s)
{
	struct fs_key key = { d->fs, (uint32_t)d->nr_fs };
	uint64_t hash = hash_bytes(d->fs, d->nr_fs * sizeof(d->fs[0]));
	const struct profile_alloc *a = &s->alloc;
	struct dhat_pp *pp = hashtab__find(&d->pp_table, hash, pp_eq, &key);

	if (!pp) {
		if (array__reserve(&d->pps, &d->alloc_pps, d->nr_pps + 1, sizeof(*d->pps)))
			return -ENOMEM;
		pp = calloc(1, sizeof(*pp) + d->nr_fs * sizeof(pp->fs[0]));
		if (!pp)
			return -ENOMEM;
		pp->nr_fs = d->nr_fs;
		memcpy(pp->fs, d->fs, d->nr_fs * sizeof(pp->fs[0]));
		if (hashtab__insert(&d->pp_table, hash, pp)) {
			free(pp);
			return -ENOMEM;
		}
		d->pps[d->nr_pps++] = pp;
	}
	pp->tb += a->bytes;
	pp->tbk += a->blocks;
	pp->tl_ns += a->lifetime_ns;
	/* Peaks of merged samples (threads) may not coincide: their sum bounds the PP's. */
	pp->mb += a->max_bytes;
	pp->mbk += a->max_blocks;
	pp->gb += a->gmax_bytes;
	pp->gbk += a->gmax_blocks;
	pp->eb += a->end_bytes;
	pp->ebk += a->end_blocks;
	return 0;
}

static bool proc_eq(const void *entry, const void *key)
{
	return ((const struct dhat_proc *)entry)->pid == *(const uint32_t *)key;
}

static int dhat__count_proc(struct dhat *d, const struct profile_sample *s)
{
	bool added;
	struct dhat_proc *proc = hashtab__find_or_add(&d->proc_table, hash_u64(s->pid), proc_eq,
						      &s->pid, sizeof(*proc), &added);

	if (!proc)
		return -ENOMEM;
	if (added)
		proc->pid = s->pid;
	proc->bytes += s->alloc.bytes;
	if (!proc->cmdline)
		proc->cmdline = s->cmdline;
	if (!proc->name)
		proc->name = s->process_name;
	return 0;
}

static void dhat__release(struct dhat *d)
{
	size_t i;
	void *e;

	for (i = 0; i < d->nr_strs; i++)
		free(d->strs[i]);
	free(d->strs);
	for (i = 0; i < d->nr_pps; i++)
		free(d->pps[i]);
	free(d->pps);
	hashtab__for_each_entry(&d->frame_table, i, e)
		free(e);
	hashtab__for_each_entry(&d->proc_table, i, e)
		free(e);
	hashtab__release(&d->str_table);
	hashtab__release(&d->frame_table);
	hashtab__release(&d->pp_table);
	hashtab__release(&d->proc_table);
	free(d->fs);
	free(d->buf);
}

/* PPs by their frames' text, innermost first; a stack before the longer ones it starts. */
static int cmp_pp(const void *pa, const void *pb, void *arg)
{
	const struct dhat_pp *a = *(const struct dhat_pp *const *)pa;
	const struct dhat_pp *b = *(const struct dhat_pp *const *)pb;
	struct dhat_str *const *strs = arg;

	for (uint32_t i = 0; i < a->nr_fs && i < b->nr_fs; i++) {
		const struct dhat_str *x = strs[a->fs[i]], *y = strs[b->fs[i]];
		int c;

		if (x == y)
			continue;
		c = memcmp(x->text, y->text, x->len < y->len ? x->len : y->len);
		if (c)
			return c;
		return x->len < y->len ? -1 : 1;
	}
	return a->nr_fs < b->nr_fs ? -1 : a->nr_fs > b->nr_fs;
}

/* The process the header names: the most bytes allocated, the lowest pid of equals. */
static const struct dhat_proc *dhat__main_proc(const struct dhat *d)
{
	const struct dhat_proc *best = NULL, *proc;
	size_t i;

	hashtab__for_each_entry(&d->proc_table, i, proc) {
		if (!best || proc->bytes > best->bytes ||
		    (proc->bytes == best->bytes && proc->pid < best->pid))
			best = proc;
	}
	return best;
}

static void write_header(struct dhat_out *o, const struct profile *p, const struct dhat_proc *proc)
{
	const char *cmd = proc ? (proc->cmdline ? proc->cmdline : proc->name) : NULL;

	out_str(o, "{\"dhatFileVersion\":");
	out_u64(o, DHAT_FILE_VERSION);
	out_str(o, "\n,\"mode\":\"heap\",\"verb\":\"Allocated\"\n"
		   ",\"bklt\":true,\"bkacc\":false\n"
		   ",\"tu\":\"\\u00b5s\",\"Mtu\":\"s\"\n"
		   ",\"tuth\":");
	out_u64(o, DHAT_SHORT_LIVED_US);
	out_str(o, "\n,\"cmd\":");
	out_json(o, cmd ? cmd : "");
	out_str(o, "\n,\"pid\":");
	out_u64(o, proc ? proc->pid : 0);
	out_str(o, "\n,\"te\":");
	out_u64(o, ns_to_us(p->duration));
	out_str(o, "\n,\"tg\":");
	out_u64(o, ns_to_us(p->alloc_gmax_ns));
	out_str(o, "\n");
}

/* Write the sorted PPs, their frames renumbered by @renum. */
static void write_pps(struct dhat_out *o, const struct dhat *d, const uint32_t *renum)
{
	out_str(o, ",\"pps\":\n [");
	for (size_t i = 0; i < d->nr_pps; i++) {
		const struct dhat_pp *pp = d->pps[i];
		const struct {
			const char *name;
			uint64_t v;
		} fields[] = {
			{ "{\"tb\":", pp->tb },
			{ ",\"tbk\":", pp->tbk },
			{ ",\"tl\":", ns_to_us(pp->tl_ns) },
			{ ",\"mb\":", pp->mb },
			{ ",\"mbk\":", pp->mbk },
			{ ",\"gb\":", pp->gb },
			{ ",\"gbk\":", pp->gbk },
			{ ",\"eb\":", pp->eb },
			{ ",\"ebk\":", pp->ebk },
		};

		if (i)
			out_str(o, "\n ,");
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			out_str(o, fields[f].name);
			out_u64(o, fields[f].v);
		}
		out_str(o, ",\"fs\":[");
		for (uint32_t j = 0; j < pp->nr_fs; j++) {
			if (j)
				out_put(o, ",", 1);
			out_u64(o, renum[pp->fs[j]]);
		}
		out_str(o, "]}");
	}
	out_str(o, "]\n");
}

/* Write the frame table: "[root]", then the entries in @order. */
static void write_ftbl(struct dhat_out *o, const struct dhat *d, const uint32_t *order, size_t n)
{
	out_str(o, ",\"ftbl\":\n [\"[root]\"");
	for (size_t i = 0; i < n; i++) {
		out_str(o, "\n ,");
		out_json(o, d->strs[order[i]]->text);
	}
	out_str(o, "]\n}\n");
}

int dhat__write(const struct profile *p, FILE *out)
{
	struct dhat_out o = { .f = out };
	uint32_t *renum = NULL, *order = NULL, next = 0;
	struct dhat d;
	int err = 0;

	if (p->mode != PROFILE_ALLOC)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	for (size_t i = 0; i < p->nr_samples && !err; i++) {
		const struct profile_sample *s = &p->samples[i];

		/* Anonymous mmaps are not heap blocks: DHAT has none of them. */
		if (s->alloc.kind != ALLOC_HEAP || (!s->alloc.blocks && !s->alloc.bytes))
			continue;
		err = dhat__build_stack(&d, s);
		if (!err)
			err = dhat__count(&d, s);
		if (!err)
			err = dhat__count_proc(&d, s);
	}
	if (err)
		goto out_release;

	/* Sorted, and the frame table numbered in the order the PPs use it: any sample order gives the same bytes. */
	if (d.nr_pps > 1)
		qsort_r(d.pps, d.nr_pps, sizeof(*d.pps), cmp_pp, d.strs);
	renum = calloc(d.nr_strs + 1, sizeof(*renum));
	order = calloc(d.nr_strs + 1, sizeof(*order));
	if (!renum || !order) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < d.nr_pps; i++) {
		const struct dhat_pp *pp = d.pps[i];

		for (uint32_t j = 0; j < pp->nr_fs; j++) {
			if (renum[pp->fs[j]])
				continue;
			order[next++] = pp->fs[j];
			renum[pp->fs[j]] = next; /* 0 is "[root]" */
		}
	}

	write_header(&o, p, dhat__main_proc(&d));
	write_pps(&o, &d, renum);
	write_ftbl(&o, &d, order, next);
	err = o.err;

out_free:
	free(renum);
	free(order);
out_release:
	dhat__release(&d);
	return err;
}
