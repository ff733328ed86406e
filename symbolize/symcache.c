// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/array.h"
#include "common/cache_file.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/strset.h"
#include "symcache.h"

#define MAGIC "PRFSYMC\1"
#define SUFFIX ".sym"
#define PRODUCER_MAX 64
#define NONE UINT32_MAX
/*
 * A chain is a list of nodes, innermost first, one per line: name, linker
 * name, file, line, discriminator, and the word offset of the next node
 * out (NONE after the outermost). Chains share their outer parts: the
 * lines of one function inlined into one caller are many chains, one node
 * each, and one node for the caller.
 */
#define NODE_WORDS 6

/* Fixed-size, in host byte order: a cache never leaves the machine that wrote it. */
struct header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	char build_id[CACHE_FILE_BUILD_ID_MAX]; /* NUL-padded */
	/* What wrote it (symcache__open()'s @producer), NUL-padded: another writes other answers. */
	char producer[PRODUCER_MAX];
	uint64_t file_sum; /* the fingerprint of the file it is of (symcache__open()) */
	uint64_t file_size;
	uint64_t base, span; /* the intervals tile [base, base + span) */
	uint32_t bucket_shift, nr_buckets;
	uint64_t nr_intervals, chain_words;
	uint64_t nr_strings, strings_size; /* strings: nr + 1 offsets, then the bytes */
	uint64_t body_sum;		   /* of the parts after the header (body_sum()) */
	uint64_t header_sum;		   /* of the bytes above */
};

struct interval {
	uint32_t off;	/* from the base; strictly increasing */
	uint32_t chain; /* word offset of its chain's first node, NONE: not covered */
};

/* Intervals added by this run, one run of them per range added. */
struct fresh_interval {
	uint64_t lo;
	uint32_t chain; /* index in fresh_chains */
};

struct fresh_run {
	uint64_t lo, hi;
	size_t first, nr; /* in fresh */
};

struct fresh_chain {
	uint32_t first; /* in lines */
	uint32_t nr;
};

/* Chains are compared as bytes (chain_eq()): a line has no padding to differ in. */
_Static_assert(sizeof(struct symcache_line) == 3 * sizeof(const char *) + 2 * sizeof(uint32_t),
	       "struct symcache_line has padding");

struct symcache {
	char *dir, *path, *build_id;
	char producer[PRODUCER_MAX];
	uint64_t file_sum;
	bool foreign;	 /* a file or directory we do not trust is there: leave it */
	uint64_t lo, hi; /* the span of what the file and this run cover, to keep under 4 GiB */

	struct strset *strset; /* where lookups intern strings */
	const char **interned; /* the file's strings by id, interned when first used */

	/* The file, mapped; NULL when there was none we trust. */
	void *map;
	size_t map_size;
	const struct header *h;
	const uint32_t *buckets;
	const struct interval *iv;
	const uint32_t *chains;
	const uint32_t *string_offs;
	const char *strings;

	/* What this run added. */
	struct fresh_run *runs; /* sorted by lo, disjoint */
	size_t nr_runs, alloc_runs;
	size_t open_run; /* the run added to last, whose intervals end fresh[] */
	struct fresh_interval *fresh;
	size_t nr_fresh, alloc_fresh;
	struct fresh_chain *fresh_chains;
	size_t nr_fresh_chains, alloc_fresh_chains;
	struct symcache_line *lines;
	size_t nr_lines, alloc_lines;
	struct hashtab chain_ids; /* fresh chain index + 1, by content */
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Where each part of the body starts, from a header's counts; false if they overflow. */
struct layout {
	size_t buckets, iv, chains, string_offs, strings, end;
};

static bool layout_of(const struct header *h, struct layout *l)
{
	/* Each count is bounded first, so that the sums below cannot overflow. */
	if (h->nr_buckets > (1u << 30) || h->nr_intervals > (1ull << 32) ||
	    h->chain_words > (1ull << 32) || h->strings_size > (1ull << 32) ||
	    h->nr_strings >= (1ull << 32))
		return false;
	l->buckets = sizeof(struct header);
	l->iv = align8(l->buckets + (size_t)h->nr_buckets * 4);
	l->chains = align8(l->iv + (size_t)h->nr_intervals * sizeof(struct interval));
	l->string_offs = align8(l->chains + (size_t)h->chain_words * 4);
	l->strings = align8(l->string_offs + ((size_t)h->nr_strings + 1) * 4);
	l->end = l->strings + h->strings_size;
	return true;
}

/* The parts of the body, in file order, each checksummed on its own. */
#define NR_PARTS 5

struct part {
	const void *data;
	size_t size;
	size_t offset; /* in the file */
};

/* The body's checksum: of its parts' checksums (the padding between them is not in it). */
static uint64_t body_sum(const struct part *parts)
{
	uint64_t sums[NR_PARTS];

	for (int i = 0; i < NR_PARTS; i++)
		sums[i] = cache_file__checksum(parts[i].data, parts[i].size);
	return cache_file__checksum(sums, sizeof(sums));
}

/* The parts of the file mapped at @map, as header @h and layout @l place them. */
static void file_parts(const void *map, const struct header *h, const struct layout *l,
		       struct part *parts)
{
	const char *m = map;

	parts[0] = (struct part){ m + l->buckets, (size_t)h->nr_buckets * 4, l->buckets };
	parts[1] = (struct part){ m + l->iv, h->nr_intervals * sizeof(struct interval), l->iv };
	parts[2] = (struct part){ m + l->chains, h->chain_words * 4, l->chains };
	parts[3] = (struct part){ m + l->string_offs, (h->nr_strings + 1) * 4, l->string_offs };
	parts[4] = (struct part){ m + l->strings, h->strings_size, l->strings };
}

/*
 * Map the cache file and check it all; false (with @why set, or errno) when
 * it is not to be used, *@outdated when only for being of another format or
 * profiler version, as every file is after an upgrade.
 */
static bool load(struct symcache *c, const char **why, bool *outdated)
{
	struct part parts[NR_PARTS];
	const struct header *h;
	struct layout l;
	size_t size;
	bool foreign;
	void *map;
	int fd;

	fd = cache_file__open(c->path, &size, why, &foreign);
	if (fd < 0) {
		c->foreign = foreign;
		return false;
	}
	if (size < sizeof(*h)) {
		*why = "truncated";
		close(fd);
		return false;
	}
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		*why = strerror(errno);
		return false;
	}
	h = map;
	*why = "corrupt header";
	if (memcmp(h->magic, MAGIC, sizeof(h->magic)) || h->header_size != sizeof(*h) ||
	    h->header_sum != cache_file__checksum(h, offsetof(struct header, header_sum)))
		goto out_unmap;
	if (h->version != SYMCACHE_VERSION) {
		*why = "another format version";
		*outdated = true;
		goto out_unmap;
	}
	if (strncmp(h->build_id, c->build_id, sizeof(h->build_id))) {
		*why = "another build-id";
		goto out_unmap;
	}
	if (strncmp(h->producer, c->producer, sizeof(h->producer))) {
		*why = "written by another version of the profiler";
		*outdated = true;
		goto out_unmap;
	}
	if (h->file_sum != c->file_sum) {
		*why = "of another file with this build-id";
		goto out_unmap;
	}
	*why = "truncated or corrupt";
	if (!layout_of(h, &l) || h->file_size != (uint64_t)size || l.end != h->file_size ||
	    !h->nr_intervals || !h->nr_buckets || h->bucket_shift > 63 ||
	    (h->span - 1) >> h->bucket_shift >= h->nr_buckets || h->span > (1ull << 32) || !h->span)
		goto out_unmap;
	file_parts(map, h, &l, parts);
	if (h->body_sum != body_sum(parts)) {
		*why = "corrupt (checksum)";
		goto out_unmap;
	}
	/* Nothing of the file is ours until it is all there. */
	c->interned = calloc(h->nr_strings ? h->nr_strings : 1, sizeof(*c->interned));
	if (!c->interned) {
		*why = strerror(ENOMEM);
		goto out_unmap;
	}
	c->map = map;
	c->map_size = size;
	c->h = h;
	c->buckets = (const uint32_t *)((char *)map + l.buckets);
	c->iv = (const struct interval *)((char *)map + l.iv);
	c->chains = (const uint32_t *)((char *)map + l.chains);
	c->string_offs = (const uint32_t *)((char *)map + l.string_offs);
	c->strings = (const char *)map + l.strings;
	c->lo = h->base;
	c->hi = h->base + h->span;
	pr_debug("symbolize: using cache file '%s'", c->path);
	return true;

out_unmap:
	munmap(map, size);
	return false;
}

struct symcache *symcache__open(const char *dir, const char *build_id, const char *producer,
				uint64_t file_sum, struct strset *strings)
{
	struct symcache *c;
	const char *why = NULL;
	bool outdated = false;

	if (!cache_file__build_id_ok(build_id)) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (!(c->dir = strdup(dir)) || !(c->build_id = strdup(build_id)) ||
	    asprintf(&c->path, "%s/%s" SUFFIX, dir, build_id) < 0) {
		c->path = NULL;
		symcache__free(c);
		errno = ENOMEM;
		return NULL;
	}
	hashtab__init(&c->chain_ids);
	c->strset = strings;
	strncpy(c->producer, producer ? producer : "", sizeof(c->producer) - 1);
	c->file_sum = file_sum;
	c->lo = UINT64_MAX;
	if (!cache_file__dir_ok(dir, &why)) {
		pr_warn("symbolize: not using cache directory '%s': %s", dir, why);
		c->foreign = true;
	} else if (!load(c, &why, &outdated) && why) {
		if (outdated)
			pr_debug("symbolize: replacing cache file '%s': %s", c->path, why);
		else
			pr_warn("symbolize: ignoring cache file '%s': %s", c->path, why);
	}
	return c;
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	if (c->map)
		munmap(c->map, c->map_size);
	free(c->interned);
	hashtab__release(&c->chain_ids);
	free(c->runs);
	free(c->fresh);
	free(c->fresh_chains);
	free(c->lines);
	free(c->dir);
	free(c->path);
	free(c->build_id);
	free(c);
}

const char *symcache__path(const struct symcache *c)
{
	return c->path;
}

/*
 * String @id of the file, interned the first time; NULL for NONE, and for
 * an id or offsets outside the file (checked then: only the strings used
 * are). Sets *@bad when the file cannot be believed, or memory runs out.
 */
static const char *file_string(struct symcache *c, uint32_t id, bool *bad)
{
	uint32_t lo, hi;

	if (id == NONE)
		return NULL;
	if (id >= c->h->nr_strings) {
		*bad = true;
		return NULL;
	}
	if (c->interned[id])
		return c->interned[id];
	lo = c->string_offs[id];
	hi = c->string_offs[id + 1];
	if (lo >= hi || hi > c->h->strings_size || c->strings[hi - 1]) {
		*bad = true;
		return NULL;
	}
	c->interned[id] = strset__add_len(c->strset, c->strings + lo, hi - lo - 1);
	if (!c->interned[id])
		*bad = true;
	return c->interned[id];
}

/* The chain at word @off of the file into @lines; 0 when it is not whole. */
static int file_chain(struct symcache *c, uint32_t off, struct symcache_line *lines)
{
	bool bad = false;
	int nr = 0;

	while (off != NONE) {
		const uint32_t *w = c->chains + off;

		/* Bounded: a corrupt file's nodes could point in a circle. */
		if (nr == SYMCACHE_MAX_LINES || off >= c->h->chain_words ||
		    c->h->chain_words - off < NODE_WORDS)
			return 0;
		lines[nr] = (struct symcache_line){
			.name = file_string(c, w[0], &bad),
			.system_name = file_string(c, w[1], &bad),
			.file = file_string(c, w[2], &bad),
			.line = w[3],
			.discriminator = w[4],
		};
		if (!lines[nr].name || !lines[nr].system_name)
			lines[nr].name = lines[nr].system_name = NULL;
		nr++;
		off = w[5];
	}
	return bad ? 0 : nr;
}

static int file_lookup(struct symcache *c, uint64_t vaddr, struct symcache_line *lines)
{
	const struct header *h = c->h;
	uint64_t off = vaddr - h->base;
	size_t k, lo, hi;

	if (vaddr < h->base || off >= h->span)
		return 0;
	k = off >> h->bucket_shift;
	lo = c->buckets[k];
	hi = k + 1 < h->nr_buckets ? c->buckets[k + 1] : h->nr_intervals - 1;
	if (lo > hi || hi >= h->nr_intervals)
		return 0;
	/* The last interval in [lo, hi] starting at or below @off. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (c->iv[mid].off <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (c->iv[lo].off > off || c->iv[lo].chain == NONE)
		return 0;
	return file_chain(c, c->iv[lo].chain, lines);
}

static int fresh_lookup(const struct symcache *c, uint64_t vaddr, struct symcache_line *lines)
{
	const struct fresh_run *r;
	const struct fresh_chain *ch;
	size_t lo = 0, hi = c->nr_runs;

	/* The last run starting at or below @vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->runs[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= c->runs[lo - 1].hi)
		return 0;
	r = &c->runs[lo - 1];
	lo = r->first;
	hi = r->first + r->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->fresh[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	ch = &c->fresh_chains[c->fresh[lo - 1].chain];
	memcpy(lines, c->lines + ch->first, ch->nr * sizeof(*lines));
	return ch->nr;
}

int symcache__lookup(struct symcache *c, uint64_t vaddr, struct symcache_line *lines)
{
	int nr = c->h ? file_lookup(c, vaddr, lines) : 0;

	return nr ? nr : fresh_lookup(c, vaddr, lines);
}

/* Does the file answer for any address in [@lo, @hi)? */
static bool file_covers(const struct symcache *c, uint64_t lo, uint64_t hi)
{
	const struct header *h = c->h;
	uint64_t from, to;
	size_t i, k;

	if (!h || hi <= h->base || (lo >= h->base && lo - h->base >= h->span))
		return false;
	from = lo > h->base ? lo - h->base : 0;
	to = hi - h->base < h->span ? hi - h->base : h->span;
	k = from >> h->bucket_shift;
	i = c->buckets[k] < h->nr_intervals ? c->buckets[k] : 0;
	/* The intervals from the one holding @from, up to @to. */
	while (i + 1 < h->nr_intervals && c->iv[i + 1].off <= from)
		i++;
	for (; i < h->nr_intervals && c->iv[i].off < to; i++)
		if (c->iv[i].chain != NONE)
			return true;
	return false;
}

/* --- adding -------------------------------------------------------------------- */

struct chain_key {
	const struct symcache *c;
	const struct symcache_line *lines;
	int nr;
};

static bool chain_eq(const void *entry, const void *key)
{
	const struct chain_key *k = key;
	const struct fresh_chain *ch = &k->c->fresh_chains[(uintptr_t)entry - 1];

	return ch->nr == (uint32_t)k->nr &&
	       !memcmp(k->c->lines + ch->first, k->lines, k->nr * sizeof(*k->lines));
}

/* The index of the fresh chain @lines, added if new; -ENOMEM. */
static int64_t fresh_chain(struct symcache *c, const struct symcache_line *lines, int nr)
{
	struct chain_key key = { c, lines, nr };
	uint64_t hash = 0;
	void *e;

	for (int i = 0; i < nr; i++) {
		hash = hash_mix(hash, (uintptr_t)lines[i].name);
		hash = hash_mix(hash, (uintptr_t)lines[i].file);
		hash = hash_mix(hash, (uint64_t)lines[i].line << 32 | lines[i].discriminator);
	}
	e = hashtab__find(&c->chain_ids, hash, chain_eq, &key);
	if (e)
		return (uintptr_t)e - 1;
	if (array__reserve(&c->lines, &c->alloc_lines, c->nr_lines + nr, sizeof(*c->lines)) ||
	    array__reserve(&c->fresh_chains, &c->alloc_fresh_chains, c->nr_fresh_chains + 1,
			   sizeof(*c->fresh_chains)) ||
	    hashtab__insert(&c->chain_ids, hash, (void *)(uintptr_t)(c->nr_fresh_chains + 1)))
		return -ENOMEM;
	memcpy(c->lines + c->nr_lines, lines, nr * sizeof(*lines));
	c->fresh_chains[c->nr_fresh_chains] =
		(struct fresh_chain){ .first = c->nr_lines, .nr = nr };
	c->nr_lines += nr;
	return c->nr_fresh_chains++;
}

int symcache__add(struct symcache *c, uint64_t lo, uint64_t hi, const struct symcache_line *lines,
		  int nr)
{
	struct fresh_run *r = c->open_run < c->nr_runs ? &c->runs[c->open_run] : NULL;
	bool grows = r && r->hi == lo;
	size_t at = 0, top = c->nr_runs;
	int64_t chain;

	if (lo >= hi || nr < 1 || nr > SYMCACHE_MAX_LINES)
		return -EINVAL;
	/* The file keeps addresses as 32-bit offsets from the lowest. */
	if ((hi > c->hi ? hi : c->hi) - (lo < c->lo ? lo : c->lo) > UINT32_MAX)
		return -EINVAL;
	/* Where a new run would go, among the runs sorted by start. */
	while (!grows && at < top) {
		size_t mid = at + (top - at) / 2;

		if (c->runs[mid].lo < lo)
			at = mid + 1;
		else
			top = mid;
	}
	/* Nothing it covers may be covered already, by the file or by this run. */
	if (file_covers(c, lo, hi) ||
	    (grows && c->open_run + 1 < c->nr_runs && c->runs[c->open_run + 1].lo < hi) ||
	    (!grows &&
	     ((at < c->nr_runs && c->runs[at].lo < hi) || (at && c->runs[at - 1].hi > lo))))
		return -EINVAL;
	chain = fresh_chain(c, lines, nr);
	if (chain < 0)
		return chain;
	/* The same answer as the interval before: that one grows. */
	if (grows && c->fresh[c->nr_fresh - 1].chain == chain) {
		r->hi = hi;
		return 0;
	}
	/* Room for its interval first: a run is never left empty. */
	if (array__reserve(&c->fresh, &c->alloc_fresh, c->nr_fresh + 1, sizeof(*c->fresh)) ||
	    (!grows && array__reserve(&c->runs, &c->alloc_runs, c->nr_runs + 1, sizeof(*c->runs))))
		return -ENOMEM;
	if (!grows) {
		memmove(&c->runs[at + 1], &c->runs[at], (c->nr_runs - at) * sizeof(*c->runs));
		c->runs[at] = (struct fresh_run){ .lo = lo, .first = c->nr_fresh };
		c->nr_runs++;
		c->open_run = at;
		r = &c->runs[at];
	}
	c->fresh[c->nr_fresh++] = (struct fresh_interval){ lo, chain };
	r->nr++;
	r->hi = hi;
	c->lo = lo < c->lo ? lo : c->lo;
	c->hi = hi > c->hi ? hi : c->hi;
	return 0;
}

/* --- writing -------------------------------------------------------------------- */

/* The tables of the file being written, strings and chains de-duplicated by content. */
struct writer {
	char *strings;
	size_t strings_size, alloc_strings;
	uint32_t *string_offs; /* by id, and the end */
	size_t nr_strings, alloc_string_offs;
	struct hashtab string_ids; /* id + 1, by content */
	/* A direct-mapped memo of writer_string(), by the string's address. */
	struct string_memo {
		const char *s;
		uint32_t off;
	} * memo;
	uint32_t *chains;
	size_t chain_words, alloc_chains;
	struct hashtab chain_ids; /* offset + 1, by content */
	struct interval *iv;
	size_t nr_iv, alloc_iv;
	uint64_t base, end;
};

struct bytes_key {
	const void *base; /* what the offsets are into */
	const void *data;
	size_t size;
};

static bool string_eq(const void *entry, const void *key)
{
	const struct bytes_key *k = key;
	const struct writer *w = k->base;
	const char *s = w->strings + w->string_offs[(uintptr_t)entry - 1];

	return !strncmp(s, k->data, k->size) && !s[k->size];
}

#define MEMO_SLOTS (1 << 16)

/* The id of string @s in the file, added if new; NONE for NULL; -ENOMEM. */
static int64_t writer_string(struct writer *w, const char *s)
{
	struct bytes_key key = { w, s, 0 };
	struct string_memo *m;
	uint64_t hash;
	void *e;

	if (!s)
		return NONE;
	/* The same few thousand names come back in every chain: by address first. */
	m = &w->memo[hash_u64((uintptr_t)s) & (MEMO_SLOTS - 1)];
	if (m->s == s)
		return m->off;
	key.size = strlen(s);
	hash = hash_bytes(s, key.size);
	e = hashtab__find(&w->string_ids, hash, string_eq, &key);
	if (e) {
		*m = (struct string_memo){ s, (uintptr_t)e - 1 };
		return m->off;
	}
	if (w->strings_size + key.size + 1 >= NONE || w->nr_strings + 1 >= NONE ||
	    array__reserve(&w->strings, &w->alloc_strings, w->strings_size + key.size + 1, 1) ||
	    array__reserve(&w->string_offs, &w->alloc_string_offs, w->nr_strings + 2,
			   sizeof(*w->string_offs)) ||
	    hashtab__insert(&w->string_ids, hash, (void *)(uintptr_t)(w->nr_strings + 1)))
		return -ENOMEM;
	memcpy(w->strings + w->strings_size, s, key.size + 1);
	w->string_offs[w->nr_strings] = w->strings_size;
	w->strings_size += key.size + 1;
	w->string_offs[w->nr_strings + 1] = w->strings_size;
	*m = (struct string_memo){ s, w->nr_strings++ };
	return m->off;
}

static bool node_eq(const void *entry, const void *key)
{
	const struct bytes_key *k = key;
	const uint32_t *words = (const uint32_t *)k->base + (uintptr_t)entry - 1;

	return !memcmp(words, k->data, NODE_WORDS * 4);
}

/*
 * The word offset of node @node in the file, added if new, or added
 * without a look when @shared is false; -ENOMEM.
 */
static int64_t writer_node(struct writer *w, const uint32_t *node, bool shared)
{
	struct bytes_key key = { w->chains, node, NODE_WORDS * 4 };
	uint64_t hash = hash_words(0, node, NODE_WORDS / 2);
	void *e;

	e = shared ? hashtab__find(&w->chain_ids, hash, node_eq, &key) : NULL;
	if (e)
		return (uintptr_t)e - 1;
	if (w->chain_words + NODE_WORDS >= NONE ||
	    array__reserve(&w->chains, &w->alloc_chains, w->chain_words + NODE_WORDS, 4) ||
	    (shared &&
	     hashtab__insert(&w->chain_ids, hash, (void *)(uintptr_t)(w->chain_words + 1))))
		return -ENOMEM;
	memcpy(w->chains + w->chain_words, node, NODE_WORDS * 4);
	w->chain_words += NODE_WORDS;
	return w->chain_words - NODE_WORDS;
}

/*
 * The word offset of chain @lines in the file, outermost node first, each
 * shared with the chains that have it but the innermost: the chains come
 * de-duplicated already (symcache__add()), so their innermost node, which
 * points to a shared one, is new (a chain of the file that the fresh ones
 * repeat is kept twice, which costs room, not answers). -ENOMEM.
 */
static int64_t writer_chain(struct writer *w, const struct symcache_line *lines, int nr)
{
	int64_t next = NONE;

	for (int i = nr - 1; i >= 0; i--) {
		int64_t name = writer_string(w, lines[i].name);
		int64_t sys = writer_string(w, lines[i].name ? lines[i].system_name : NULL);
		int64_t file = writer_string(w, lines[i].file);
		uint32_t node[NODE_WORDS];

		if (name < 0 || sys < 0 || file < 0)
			return -ENOMEM;
		node[0] = name;
		node[1] = sys;
		node[2] = file;
		node[3] = lines[i].line;
		node[4] = lines[i].discriminator;
		node[5] = next;
		next = writer_node(w, node, i > 0);
		if (next < 0)
			return next;
	}
	return next;
}

/* Append the answer @chain (NONE: not covered) for [@lo, @hi), after what was appended. */
static int writer_interval(struct writer *w, uint64_t lo, uint64_t hi, uint32_t chain)
{
	if (!w->nr_iv)
		w->base = w->end = lo;
	if (lo < w->end || hi - w->base > UINT32_MAX)
		return -EINVAL;
	if (lo > w->end && writer_interval(w, w->end, lo, NONE))
		return -ENOMEM;
	w->end = hi;
	if (w->nr_iv && w->iv[w->nr_iv - 1].chain == chain)
		return 0;
	if (array__reserve(&w->iv, &w->alloc_iv, w->nr_iv + 1, sizeof(*w->iv)))
		return -ENOMEM;
	w->iv[w->nr_iv++] = (struct interval){ lo - w->base, chain };
	return 0;
}

static void writer_release(struct writer *w)
{
	free(w->memo);
	free(w->strings);
	free(w->string_offs);
	free(w->chains);
	free(w->iv);
	hashtab__release(&w->string_ids);
	hashtab__release(&w->chain_ids);
}

/*
 * Fill @w with the file's intervals and the fresh ones, merged in address
 * order (they never overlap: a region is added only where the file had
 * nothing). Chains are re-encoded once each, through @file_map and
 * @fresh_map (new offset + 1 by old).
 */
static int writer_fill(struct writer *w, struct symcache *c, uint32_t *file_map,
		       uint32_t *fresh_map)
{
	struct symcache_line lines[SYMCACHE_MAX_LINES];
	size_t fi = 0, run = 0, ri = 0, nr_file = c->h ? c->h->nr_intervals : 0;

	for (;;) {
		uint64_t flo = UINT64_MAX, fhi = 0, rlo = UINT64_MAX, rhi = 0;
		uint32_t chain = NONE, old;
		int64_t mapped;
		int err;

		/* The file's next covered interval. */
		while (fi < nr_file && c->iv[fi].chain == NONE)
			fi++;
		if (fi < nr_file) {
			flo = c->h->base + c->iv[fi].off;
			fhi = c->h->base + (fi + 1 < nr_file ? c->iv[fi + 1].off : c->h->span);
		}
		if (run < c->nr_runs) {
			const struct fresh_run *r = &c->runs[run];

			rlo = c->fresh[r->first + ri].lo;
			rhi = ri + 1 < r->nr ? c->fresh[r->first + ri + 1].lo : r->hi;
		}
		if (flo == UINT64_MAX && rlo == UINT64_MAX)
			return 0;
		if (flo <= rlo) {
			old = c->iv[fi++].chain;
			if (old >= c->h->chain_words)
				return -EINVAL;
			if (!file_map[old]) {
				int nr = file_chain(c, old, lines);

				mapped = nr ? writer_chain(w, lines, nr) : -EINVAL;
				if (mapped < 0)
					return mapped;
				file_map[old] = mapped + 1;
			}
			chain = file_map[old] - 1;
			err = writer_interval(w, flo, fhi < rlo ? fhi : rlo, chain);
		} else {
			const struct fresh_run *r = &c->runs[run];

			old = c->fresh[r->first + ri].chain;
			if (!fresh_map[old]) {
				const struct fresh_chain *ch = &c->fresh_chains[old];

				mapped = writer_chain(w, c->lines + ch->first, ch->nr);
				if (mapped < 0)
					return mapped;
				fresh_map[old] = mapped + 1;
			}
			chain = fresh_map[old] - 1;
			if (++ri == r->nr)
				run++, ri = 0;
			err = writer_interval(w, rlo, rhi < flo ? rhi : flo, chain);
		}
		if (err)
			return err;
	}
}

struct write_ctx {
	const struct symcache *c;
	struct writer *w;
};

/* Write the file of a writer's tables to @fd (cache_file__write()'s callback). */
static int write_file(int fd, void *arg)
{
	const struct write_ctx *ctx = arg;
	const struct symcache *c = ctx->c;
	struct writer *w = ctx->w;
	struct header h = { .version = SYMCACHE_VERSION, .header_size = sizeof(h) };
	uint32_t *buckets;
	struct layout l;
	int err;

	memcpy(h.magic, MAGIC, sizeof(h.magic));
	strncpy(h.build_id, c->build_id, sizeof(h.build_id) - 1);
	memcpy(h.producer, c->producer, sizeof(h.producer));
	h.file_sum = c->file_sum;
	h.base = w->base;
	h.span = w->end - w->base;
	h.nr_intervals = w->nr_iv;
	h.chain_words = w->chain_words;
	/* One bucket per four intervals or so: a lookup searches a few. */
	h.bucket_shift = 4;
	while (h.bucket_shift < 32 && (h.span >> h.bucket_shift) > w->nr_iv / 4 + 1)
		h.bucket_shift++;
	h.nr_buckets = ((h.span - 1) >> h.bucket_shift) + 1;
	/* nr + 1 offsets, even for none. */
	if (!w->nr_strings && array__reserve(&w->string_offs, &w->alloc_string_offs, 1, 4))
		return -ENOMEM;
	if (!w->nr_strings)
		w->string_offs[0] = 0;
	h.nr_strings = w->nr_strings;
	h.strings_size = w->strings_size;
	if (!layout_of(&h, &l))
		return -EINVAL;
	h.file_size = l.end;
	buckets = malloc(h.nr_buckets * sizeof(*buckets));
	if (!buckets)
		return -ENOMEM;
	for (size_t k = 0, i = 0; k < h.nr_buckets; k++) {
		uint64_t start = (uint64_t)k << h.bucket_shift;

		while (i + 1 < w->nr_iv && w->iv[i + 1].off <= start)
			i++;
		buckets[k] = i;
	}
	/* Written where they go, from the tables as they are: no copy of the whole. */
	struct part parts[NR_PARTS] = {
		{ buckets, h.nr_buckets * sizeof(*buckets), l.buckets },
		{ w->iv, w->nr_iv * sizeof(*w->iv), l.iv },
		{ w->chains, w->chain_words * 4, l.chains },
		{ w->string_offs, (w->nr_strings + 1) * 4, l.string_offs },
		{ w->strings, w->strings_size, l.strings },
	};
	h.body_sum = body_sum(parts);
	h.header_sum = cache_file__checksum(&h, offsetof(struct header, header_sum));
	/* Its length, whatever the last part holds: the padding is a hole, read as zeros. */
	err = ftruncate(fd, l.end) ? -errno : 0;
	if (!err)
		err = cache_file__write_at(fd, &h, sizeof(h), 0);
	for (int i = 0; i < NR_PARTS && !err; i++)
		err = cache_file__write_at(fd, parts[i].data, parts[i].size, parts[i].offset);
	free(buckets);
	return err;
}

int symcache__save(struct symcache *c, uint64_t max_bytes)
{
	struct writer w = { 0 };
	uint32_t *file_map = NULL, *fresh_map = NULL;
	struct write_ctx ctx = { c, &w };
	const char *why = NULL;
	int err;

	if (!c->nr_fresh)
		return 0;
	/* Said when it was ignored: it stays as it is. */
	if (c->foreign)
		return -EPERM;
	hashtab__init(&w.string_ids);
	hashtab__init(&w.chain_ids);
	err = -ENOMEM;
	w.memo = calloc(MEMO_SLOTS, sizeof(*w.memo));
	file_map = calloc(c->h ? c->h->chain_words : 1, sizeof(*file_map));
	fresh_map = calloc(c->nr_fresh_chains, sizeof(*fresh_map));
	if (!file_map || !fresh_map || !w.memo)
		goto out;
	err = writer_fill(&w, c, file_map, fresh_map);
	if (err)
		goto out;
	err = cache_file__write(c->dir, c->path, write_file, &ctx, max_bytes, &why);
	if (err == -EPERM && why)
		pr_warn("symbolize: not writing cache directory '%s': %s", c->dir, why);
	if (!err)
		pr_debug("symbolize: wrote cache file '%s'", c->path);
out:
	free(file_map);
	free(fresh_map);
	writer_release(&w);
	return err;
}
