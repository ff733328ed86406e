// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/symcache: answers added are found before and after a
 * save, by a cache opened again with strings of its own; a file grows with
 * what a later run adds; a file cut short, with a byte flipped, of another
 * format version or build-id, or not ours to trust (open to others, a
 * link, a directory, a FIFO, another user's) is never believed, and one not
 * ours is never replaced; even a corrupt file whose checksums agree is read
 * within its bounds; the least recently used files go first; a range the
 * cache cannot keep is refused and changes nothing; answers without a
 * single string, and at either end of the address space, are kept too.
 *
 * Every address that matters is probed (each range's bounds, either side
 * of them, their middles, the gaps), and compared with the table of what
 * was added.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cache_file.h"
#include "common/log.h"
#include "common/strset.h"
#include "symbolize/symcache.h"
#include "test.h"

#define BUILD_ID "0123456789abcdef0123456789abcdef01234567"
#define OTHER_ID "fedcba9876543210fedcba9876543210fedcba98"
#define THIRD_ID "00112233445566778899aabbccddeeff00112233"

/*
 * The file as symcache.c's struct header and layout_of() have it, for the
 * tests that patch a file and make its checksums agree again: where the
 * header keeps its fields, and the parts of the body (bucket table,
 * intervals, chains, string offsets, strings), each at an 8-byte boundary.
 * header_as_known() checks that a file written is laid out so.
 */
#define VERSION_OFFSET 8
#define HEADER_SIZE_OFFSET 12
#define NR_BUCKETS_OFFSET 252
#define NR_INTERVALS_OFFSET 256
#define CHAIN_WORDS_OFFSET 264
#define NR_STRINGS_OFFSET 272
#define STRINGS_SIZE_OFFSET 280
#define BODY_SUM_OFFSET 288
#define HEADER_SUM_OFFSET 296
#define HEADER_SIZE 304
#define NR_PARTS 5
/* What the tests say wrote their files, and of which file. */
#define PRODUCER "profiler test"
#define FILE_SUM 0x1234abcdULL

/* --- what is added ---------------------------------------------------------- */

#define LINE(n, sys, f, l, d)                                                                      \
	{                                                                                          \
		.name = n, .system_name = sys, .file = f, .line = l, .discriminator = d            \
	}
#define CHAIN(a) a, (int)(sizeof(a) / sizeof(a[0]))

static const struct symcache_line main_at_10[] = { LINE("main", "main", "main.c", 10, 0) };
static const struct symcache_line add_int_in_main[] = {
	LINE("add<int>(int, int)", "_Z3addIiEiii", "util.h", 3, 2),
	LINE("main", "main", "main.c", 12, 0),
};
/* Unnamed code inlined into a function of no known file, inlined into main. */
static const struct symcache_line unnamed_in_inner[] = {
	LINE(NULL, NULL, "gen.c", 7, 1),
	LINE("inner", "inner", NULL, 0, 0),
	LINE("main", "main", "main.c", 12, 0),
};
static const struct symcache_line unknown[] = { LINE(NULL, NULL, NULL, 0, 0) };
/* Shares its outer line with add_int_in_main. */
static const struct symcache_line add_long_in_main[] = {
	LINE("add<long>(long, long)", "_Z3addIlElll", "util.h", 3, 0),
	LINE("main", "main", "main.c", 12, 0),
};
/* An empty file name is not an unknown one. */
static const struct symcache_line empty_file[] = { LINE("gen", "gen", "", 1, 4294967295u) };
static const struct symcache_line other[] = { LINE("other", "_Z5otherv", "other.c", 100, 0) };
static const struct symcache_line before[] = { LINE("_start", "_start", "start.S", 1, 0) };
static const struct symcache_line between[] = {
	LINE("helper", "helper", "helper.c", 20, 0),
	LINE("other", "_Z5otherv", "other.c", 101, 3),
};

/* The deepest chain kept, filled in by deep_init(). */
static struct symcache_line deep[SYMCACHE_MAX_LINES];
static char deep_names[SYMCACHE_MAX_LINES][16];

static void deep_init(void)
{
	for (int i = 0; i < SYMCACHE_MAX_LINES; i++) {
		snprintf(deep_names[i], sizeof(deep_names[i]), "f%d", i);
		deep[i] = (struct symcache_line)LINE(deep_names[i], deep_names[i], "deep.c", i + 1,
						     i % 3);
	}
}

/*
 * The answers, in the order they are added. Generation 0 is the first run:
 * two runs of intervals, the higher one added first. Generations 1 and 2
 * are a later run: ranges before, between, next to and after those.
 * Generation 3 is the deepest chain kept.
 */
static const struct want {
	unsigned int gen;
	uint64_t lo, hi;
	const struct symcache_line *lines;
	int nr;
} wants[] = {
	{ 0, 0x3000, 0x3004, CHAIN(add_int_in_main) },
	{ 0, 0x3004, 0x3100, CHAIN(add_long_in_main) },
	{ 0, 0x3100, 0x3101, CHAIN(main_at_10) },
	{ 0, 0x3101, 0x3110, CHAIN(empty_file) },
	/* The same answer again: one interval. */
	{ 0, 0x3110, 0x3120, CHAIN(empty_file) },
	{ 0, 0x1000, 0x1010, CHAIN(main_at_10) },
	{ 0, 0x1010, 0x1018, CHAIN(add_int_in_main) },
	{ 0, 0x1018, 0x1020, CHAIN(unnamed_in_inner) },
	{ 0, 0x1020, 0x1030, CHAIN(main_at_10) },
	{ 0, 0x1030, 0x1040, CHAIN(unknown) },
	{ 1, 0x400, 0x410, CHAIN(before) },
	{ 1, 0x1040, 0x1044, CHAIN(other) },
	{ 1, 0x2000, 0x2008, CHAIN(between) },
	{ 1, 0x2008, 0x2010, CHAIN(main_at_10) },
	{ 1, 0x9000, 0x9010, CHAIN(unknown) },
	/* Right before the first range of generation 0. */
	{ 2, 0x2ff0, 0x3000, CHAIN(other) },
	/* Apart: its nodes would be most of the file that the corruption tests go through. */
	{ 3, 0x5000, 0x5008, deep, SYMCACHE_MAX_LINES },
};

#define NR_WANTS (sizeof(wants) / sizeof(wants[0]))
#define GEN(g) (1u << (g))
#define FIRST GEN(0)
#define DEEP GEN(3)
#define ALL (GEN(0) | GEN(1) | GEN(2) | GEN(3))

/* Add the answers of generations @gens (a mask of GEN()); 0 or the first error. */
static int add_wants(struct symcache *c, unsigned int gens)
{
	for (size_t i = 0; i < NR_WANTS; i++) {
		int err;

		if (!(gens & GEN(wants[i].gen)))
			continue;
		err = symcache__add(c, wants[i].lo, wants[i].hi, wants[i].lines, wants[i].nr);
		if (err)
			return err;
	}
	return 0;
}

/* --- what is answered ------------------------------------------------------- */

#define MAX_PROBES (8 * NR_WANTS + 8)

/* The addresses to ask: each range's bounds and either side of them, its middle, the far ends. */
static size_t probes(uint64_t *addr)
{
	static const uint64_t far[] = { 0,	1,	0x3ff,		0x2800,
					0x4000, 0x8000, UINT64_MAX - 1, UINT64_MAX };
	size_t n = 0;

	for (size_t i = 0; i < NR_WANTS; i++) {
		const struct want *w = &wants[i];

		addr[n++] = w->lo - 1;
		addr[n++] = w->lo;
		addr[n++] = w->lo + 1;
		addr[n++] = w->lo + (w->hi - w->lo) / 2;
		addr[n++] = w->hi - 2;
		addr[n++] = w->hi - 1;
		addr[n++] = w->hi;
		addr[n++] = w->hi + 1;
	}
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++)
		addr[n++] = far[i];
	return n;
}

static const struct want *want_at(uint64_t vaddr, unsigned int gens)
{
	for (size_t i = 0; i < NR_WANTS; i++)
		if ((gens & GEN(wants[i].gen)) && vaddr >= wants[i].lo && vaddr < wants[i].hi)
			return &wants[i];
	return NULL;
}

/* Equal by content; and, with @set, interned in it. */
static bool str_same(const char *got, const char *want, struct strset *set)
{
	if (!got || !want)
		return got == want;
	return !strcmp(got, want) && (!set || got == strset__add(set, want));
}

static bool answer_same(const struct symcache_line *got, int nr, const struct want *w,
			struct strset *set)
{
	if (!w)
		return nr == 0;
	if (nr != w->nr)
		return false;
	for (int i = 0; i < nr; i++) {
		const struct symcache_line *a = &got[i], *b = &w->lines[i];

		if (!str_same(a->name, b->name, set) ||
		    !str_same(a->system_name, b->system_name, set) ||
		    !str_same(a->file, b->file, set) || a->line != b->line ||
		    a->discriminator != b->discriminator)
			return false;
	}
	return true;
}

struct tally {
	size_t answered; /* covered, and the answer added */
	size_t missing;	 /* covered, and no answer */
	size_t blank;	 /* not covered, and no answer */
	size_t wrong;	 /* any other answer */
	uint64_t first_wrong;
	int first_wrong_nr;
};

/* Ask every probe of @c; compare with the answers of generations @gens (interned in @set). */
static struct tally tally(struct symcache *c, unsigned int gens, struct strset *set)
{
	struct symcache_line got[SYMCACHE_MAX_LINES];
	uint64_t addr[MAX_PROBES];
	size_t n = probes(addr);
	struct tally t = { 0 };

	for (size_t i = 0; i < n; i++) {
		const struct want *w = want_at(addr[i], gens);
		int nr;

		memset(got, 0, sizeof(got));
		nr = symcache__lookup(c, addr[i], got);
		if (nr < 0 || nr > SYMCACHE_MAX_LINES) {
			nr = -1;
		} else {
			/* Whatever it answers must be readable. */
			for (int k = 0; k < nr; k++)
				if ((got[k].name && strlen(got[k].name) > 1000) ||
				    (got[k].file && strlen(got[k].file) > 1000))
					nr = -1;
		}
		if (!nr && w) {
			t.missing++;
		} else if (nr >= 0 && answer_same(got, nr, w, set)) {
			if (w)
				t.answered++;
			else
				t.blank++;
		} else if (!t.wrong++) {
			t.first_wrong = addr[i];
			t.first_wrong_nr = nr;
		}
	}
	return t;
}

static void tally_print(const char *what, const struct tally *t)
{
	printf("#   %s: %zu answered, %zu missing, %zu blank, %zu wrong (first at 0x%llx: %d "
	       "lines)\n",
	       what, t->answered, t->missing, t->blank, t->wrong,
	       (unsigned long long)t->first_wrong, t->first_wrong_nr);
}

/* @c answers as generations @gens were added, and nowhere else. */
static bool answers_all(struct symcache *c, unsigned int gens, struct strset *set)
{
	struct tally t = tally(c, gens, set);

	if (t.missing || t.wrong || !t.answered)
		tally_print("expected every answer", &t);
	return !t.missing && !t.wrong && t.answered;
}

/* @c answers nothing where generations @gens were added (nor anywhere else). */
static bool answers_none(struct symcache *c, unsigned int gens)
{
	struct tally t = tally(c, gens, NULL);

	if (t.answered || t.wrong || !t.missing)
		tally_print("expected no answer", &t);
	return !t.answered && !t.wrong && t.missing;
}

/* --- warnings ----------------------------------------------------------------- */

/* A cache with its own strings. */
struct env {
	struct strset *set;
	struct symcache *c;
};

/* The one open, which in_dir() closes when a failed check left it so. */
static struct env live;
/* What env_open() says wrote the file, and of which file: a test may change them. */
static const char *open_producer = PRODUCER;
static uint64_t open_file_sum = FILE_SUM;

/* Open the cache of @build_id in @dir, counting the warnings from none. */
static bool env_open(struct env *e, const char *dir, const char *build_id)
{
	test__nr_warnings = 0;
	test__last_warning[0] = '\0';
	e->set = strset__new();
	e->c = e->set ? symcache__open(dir, build_id, open_producer, open_file_sum, e->set) : NULL;
	live = *e;
	return e->c;
}

static void env_close(struct env *e)
{
	symcache__free(e->c);
	strset__free(e->set);
	if (live.c == e->c && live.set == e->set)
		live = (struct env){ 0 };
	e->c = NULL;
	e->set = NULL;
}

/* --- files ---------------------------------------------------------------------- */

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/*
 * Run @body in a new directory, the warnings captured, and undo both after,
 * and close the cache it left open, even when a check of @body failed.
 */
static void in_dir(void (*body)(const char *dir))
{
	char dir[] = "/tmp/profiler-symcache-XXXXXX";
	log_print_fn old;

	if (!mkdtemp(dir)) {
		test__fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
		return;
	}
	old = test__capture_warnings();
	body(dir);
	env_close(&live);
	log_set_print(old);
	if (nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS))
		test__fail(__FILE__, __LINE__, "cannot remove '%s'", dir);
}

static const char *cache_path(char *buf, size_t size, const char *dir, const char *build_id)
{
	if (snprintf(buf, size, "%s/%s.sym", dir, build_id) >= (int)size)
		buf[0] = '\0';
	return buf;
}

static bool put_file(const char *path, const void *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool ok = fd >= 0 && write(fd, buf, size) == (ssize_t)size;

	if (fd >= 0 && close(fd))
		ok = false;
	return ok;
}

/* The names in @dir containing @part. */
static int count_entries(const char *dir, const char *part)
{
	struct dirent *d;
	int n = 0;
	DIR *dp = opendir(dir);

	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") && strstr(d->d_name, part))
			n++;
	closedir(dp);
	return n;
}

static bool same_file(const char *path, const void *buf, size_t size)
{
	size_t now_size;
	void *now = test__read_file(path, &now_size);
	bool same = now && now_size == size && !memcmp(now, buf, size);

	free(now);
	return same;
}

/* Set the mtime of @path @ago seconds in the past. */
static bool age(const char *path, time_t ago)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= ago;
	ts[1] = ts[0];
	return !utimensat(AT_FDCWD, path, ts, 0);
}

/* Write the cache file of @build_id in @dir, of generations @gens; 0 or a negative errno. */
static int write_cache(const char *dir, const char *build_id, unsigned int gens, uint64_t max)
{
	struct env e;
	int err = -ENOMEM;

	if (env_open(&e, dir, build_id)) {
		err = add_wants(e.c, gens);
		if (!err)
			err = symcache__save(e.c, max);
	}
	env_close(&e);
	return err;
}

static uint64_t get64(const char *buf, size_t offset)
{
	uint64_t v;

	memcpy(&v, buf + offset, sizeof(v));
	return v;
}

static uint32_t get32(const char *buf, size_t offset)
{
	uint32_t v;

	memcpy(&v, buf + offset, sizeof(v));
	return v;
}

struct layout {
	uint64_t offset[NR_PARTS], size[NR_PARTS];
};

static uint64_t align8(uint64_t n)
{
	return (n + 7) & ~7ull;
}

/* Where the header of @buf places the parts; false unless they end the file, as it is read. */
static bool layout_of(const char *buf, size_t size, struct layout *l)
{
	uint64_t count[NR_PARTS] = {
		get32(buf, NR_BUCKETS_OFFSET),	 get64(buf, NR_INTERVALS_OFFSET),
		get64(buf, CHAIN_WORDS_OFFSET),	 get64(buf, NR_STRINGS_OFFSET) + 1,
		get64(buf, STRINGS_SIZE_OFFSET),
	};
	static const uint64_t unit[NR_PARTS] = { 4, 8, 4, 4, 1 };
	uint64_t at = HEADER_SIZE;

	if (size < HEADER_SIZE)
		return false;
	for (int i = 0; i < NR_PARTS; i++) {
		if (count[i] > (1ull << 32))
			return false;
		l->offset[i] = align8(at);
		l->size[i] = count[i] * unit[i];
		at = l->offset[i] + l->size[i];
	}
	return at == size;
}

/* The body's checksum: of its parts' checksums, the padding between them left out. */
static uint64_t body_sum_of(const char *buf, const struct layout *l)
{
	uint64_t sums[NR_PARTS];

	for (int i = 0; i < NR_PARTS; i++)
		sums[i] = cache_file__checksum(buf + l->offset[i], l->size[i]);
	return cache_file__checksum(sums, sizeof(sums));
}

/* Byte @i of a file laid out as @l is padding between two parts. */
static bool is_padding(const struct layout *l, size_t i)
{
	for (int k = 0; k + 1 < NR_PARTS; k++)
		if (i >= l->offset[k] + l->size[k] && i < l->offset[k + 1])
			return true;
	return false;
}

/* The file @buf is laid out as the offsets above say, and its checksums hold. */
static bool header_as_known(const char *buf, size_t size)
{
	struct layout l;

	return layout_of(buf, size, &l) && get32(buf, VERSION_OFFSET) == SYMCACHE_VERSION &&
	       get32(buf, HEADER_SIZE_OFFSET) == HEADER_SIZE &&
	       get64(buf, BODY_SUM_OFFSET) == body_sum_of(buf, &l) &&
	       get64(buf, HEADER_SUM_OFFSET) == cache_file__checksum(buf, HEADER_SUM_OFFSET);
}

/* Make the checksums of @buf agree with what it now holds (the body's, if it can be found). */
static void checksum_again(char *buf, size_t size)
{
	struct layout l;
	uint64_t sum;

	if (layout_of(buf, size, &l)) {
		sum = body_sum_of(buf, &l);
		memcpy(buf + BODY_SUM_OFFSET, &sum, 8);
	}
	sum = cache_file__checksum(buf, HEADER_SUM_OFFSET);
	memcpy(buf + HEADER_SUM_OFFSET, &sum, 8);
}

/* --- the tests ------------------------------------------------------------------ */

static void round_trip(const char *dir)
{
	struct symcache_line got[SYMCACHE_MAX_LINES];
	char path[256];
	struct stat st;
	ino_t ino;
	struct env e;

	cache_path(path, sizeof(path), dir, BUILD_ID);
	/* No file: empty, silently; nothing added, nothing written. */
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK(answers_none(e.c, FIRST | DEEP));
	CHECK_STR(symcache__path(e.c), path);
	CHECK_U64(symcache__save(e.c, 0), 0);
	CHECK(access(path, F_OK) && errno == ENOENT);
	/* Answered from memory, with the caller's strings. */
	CHECK_U64(add_wants(e.c, FIRST | DEEP), 0);
	CHECK(answers_all(e.c, FIRST | DEEP, NULL));
	CHECK_U64(symcache__lookup(e.c, 0x1010, got), 2);
	CHECK(got[0].name == add_int_in_main[0].name && got[1].file == add_int_in_main[1].file);
	CHECK_U64(symcache__save(e.c, 0), 0);
	CHECK(answers_all(e.c, FIRST | DEEP, NULL));
	env_close(&e);
	/* Ours alone, whole: nothing temporary is left. */
	CHECK(!lstat(path, &st));
	CHECK(S_ISREG(st.st_mode));
	CHECK_U64(st.st_mode & 07777, 0600);
	CHECK_U64(st.st_uid, geteuid());
	CHECK_U64(count_entries(dir, ""), 1);
	CHECK_U64(count_entries(dir, ".tmp."), 0);
	/* Read back with strings of its own: the same answers, interned there. */
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK(answers_all(e.c, FIRST | DEEP, e.set));
	/* Asked again (the strings interned now): the same. */
	CHECK(answers_all(e.c, FIRST | DEEP, e.set));
	/* Only read: nothing was added, nothing is written. */
	CHECK(!lstat(path, &st));
	ino = st.st_ino;
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);
	CHECK(!lstat(path, &st));
	CHECK_U64(st.st_ino, ino);
	CHECK_U64(count_entries(dir, ""), 1);
	/* Not a build-id: nothing is opened outside the directory. */
	errno = 0;
	CHECK(!symcache__open(dir, "../x", PRODUCER, FILE_SUM, NULL) && errno == EINVAL);
	errno = 0;
	CHECK(!symcache__open(dir, "", PRODUCER, FILE_SUM, NULL) && errno == EINVAL);
	errno = 0;
	CHECK(!symcache__open(dir, "ABCDEF", PRODUCER, FILE_SUM, NULL) && errno == EINVAL);
	CHECK(env_open(&e, dir, "abcdef"));
	env_close(&e);
}

TEST(symcache_round_trip)
{
	deep_init();
	in_dir(round_trip);
}

static void growth(const char *dir)
{
	char path[256], sub[256];
	struct stat st;
	struct env e;

	CHECK_U64(write_cache(dir, BUILD_ID, FIRST | DEEP, 0), 0);
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST | DEEP, e.set));
	/* Before, between, right after, right before and beyond what the file covers. */
	CHECK_U64(add_wants(e.c, GEN(1) | GEN(2)), 0);
	CHECK(answers_all(e.c, ALL, NULL));
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);
	CHECK_U64(count_entries(dir, ""), 1);
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK(answers_all(e.c, ALL, e.set));
	env_close(&e);
	/* A directory that is not there yet is made, ours alone. */
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	CHECK_U64(write_cache(sub, BUILD_ID, FIRST, 0), 0);
	CHECK(env_open(&e, sub, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	CHECK(!stat(sub, &st) && S_ISDIR(st.st_mode));
	CHECK_U64(st.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/a", dir);
	CHECK(!stat(path, &st) && S_ISDIR(st.st_mode));
	CHECK_U64(st.st_mode & 07777, 0700);
}

TEST(symcache_growth)
{
	deep_init();
	in_dir(growth);
}

static void truncated(const char *dir)
{
	size_t size, len;
	struct env e;
	char path[256];
	char *buf;

	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	cache_path(path, sizeof(path), dir, BUILD_ID);
	buf = test__read_file(path, &size);
	CHECK(buf && size > HEADER_SIZE);
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	/* Cut short anywhere: empty, and said so once. */
	for (len = 0; len < size; len++) {
		CHECK(put_file(path, buf, len));
		CHECK(env_open(&e, dir, BUILD_ID));
		if (!answers_none(e.c, FIRST) || test__nr_warnings != 1)
			break;
		env_close(&e);
	}
	if (len < size)
		test__fail(__FILE__, __LINE__, "cut to %zu of %zu bytes: %d warnings, '%s'", len,
			   size, test__nr_warnings, test__last_warning);
	env_close(&e);
	/* Whole again: believed again. */
	CHECK(put_file(path, buf, size));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	free(buf);
}

TEST(symcache_truncated)
{
	deep_init();
	in_dir(truncated);
}

static void flipped(const char *dir)
{
	static const unsigned char masks[] = { 0x01, 0x80, 0xff };
	size_t size, refused = 0, padding = 0;
	struct layout l;
	struct env e;
	char path[256];
	char *buf;

	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	cache_path(path, sizeof(path), dir, BUILD_ID);
	buf = test__read_file(path, &size);
	CHECK(buf && header_as_known(buf, size));
	CHECK(layout_of(buf, size, &l));
	/*
	 * A byte changed anywhere, three ways: never another answer. The
	 * file is refused as a whole, said once, unless the byte is padding
	 * between two parts, which nothing reads and no checksum covers.
	 */
	for (size_t m = 0; m < sizeof(masks); m++) {
		for (size_t i = 0; i < size; i++) {
			bool pad = is_padding(&l, i);
			struct tally t;

			buf[i] ^= masks[m];
			CHECK(put_file(path, buf, size));
			buf[i] ^= masks[m];
			CHECK(env_open(&e, dir, BUILD_ID));
			t = tally(e.c, FIRST, e.set);
			env_close(&e);
			if (t.wrong || (pad ? t.missing || test__nr_warnings :
					      t.answered || test__nr_warnings != 1)) {
				tally_print("flipped", &t);
				test__fail(__FILE__, __LINE__,
					   "byte %zu ^ 0x%02x (%s): %d warnings, '%s'", i, masks[m],
					   pad ? "padding" : "not padding", test__nr_warnings,
					   test__last_warning);
				free(buf);
				return;
			}
			if (pad)
				padding++;
			else
				refused++;
		}
	}
	CHECK(refused > padding);
	CHECK_U64(refused + padding, sizeof(masks) * size);
	CHECK(put_file(path, buf, size));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	free(buf);
}

TEST(symcache_flipped)
{
	deep_init();
	in_dir(flipped);
}

/*
 * The checksums only say that the file is as written: a file changed and
 * summed again (by a bug, or by hand) is believed, and must still never be
 * read outside its bounds, nor grow into one that is (the sanitizers
 * watch). What it answers is not checked: it may be anything.
 */
static void forged(const char *dir)
{
	static const unsigned char masks[] = { 0x01, 0x80 };
	struct env e;
	char path[256];
	size_t size;
	char *buf;

	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	cache_path(path, sizeof(path), dir, BUILD_ID);
	buf = test__read_file(path, &size);
	CHECK(buf && header_as_known(buf, size));
	for (size_t m = 0; m < sizeof(masks); m++) {
		/* Past the magic, version and header size: those fail the checks first. */
		for (size_t i = 16; i < size; i++) {
			size_t now_size;
			char *now;

			if (i >= BODY_SUM_OFFSET && i < HEADER_SIZE)
				continue;
			buf[i] ^= masks[m];
			checksum_again(buf, size);
			CHECK(put_file(path, buf, size));
			buf[i] ^= masks[m];
			checksum_again(buf, size);
			CHECK(env_open(&e, dir, BUILD_ID));
			tally(e.c, ALL, e.set);
			/* Grown: written whole, or refused, either way still readable. */
			if (!add_wants(e.c, GEN(2)) && !symcache__save(e.c, 0)) {
				now = test__read_file(path, &now_size);
				CHECK(now && header_as_known(now, now_size));
				free(now);
			}
			env_close(&e);
			CHECK(env_open(&e, dir, BUILD_ID));
			tally(e.c, ALL, e.set);
			env_close(&e);
		}
	}
	free(buf);
}

TEST(symcache_forged)
{
	deep_init();
	in_dir(forged);
}

/* OTHER_ID's file in @dir, opened as the settings stand, answers nothing, with one warning saying @why. */
/* Ignored, with a warning matching @why; none when @why is NULL (outdated, as after an upgrade). */
static void ignored_as(const char *dir, const char *why)
{
	struct env e;

	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK(answers_none(e.c, GEN(1)));
	CHECK_U64(test__nr_warnings, why ? 1 : 0);
	CHECK(!why || strstr(test__last_warning, why));
	env_close(&e);
}

static void version_and_build_id(const char *dir)
{
	uint32_t version = SYMCACHE_VERSION + 1;
	char path[256], other_path[256];
	size_t size;
	struct env e;
	char *buf;

	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	cache_path(path, sizeof(path), dir, BUILD_ID);
	cache_path(other_path, sizeof(other_path), dir, OTHER_ID);
	buf = test__read_file(path, &size);
	CHECK(buf && header_as_known(buf, size));
	/* Another format version, the checksums as they were: ignored. */
	memcpy(buf + VERSION_OFFSET, &version, sizeof(version));
	CHECK(put_file(path, buf, size));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_none(e.c, FIRST));
	CHECK_U64(test__nr_warnings, 1);
	CHECK(strstr(test__last_warning, path));
	env_close(&e);
	/*
	 * ... and with the header's checksum made to agree: still ignored, for
	 * its version, without a word (as every file is after an upgrade).
	 */
	checksum_again(buf, size);
	CHECK(put_file(path, buf, size));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_none(e.c, FIRST));
	CHECK_U64(test__nr_warnings, 0);
	env_close(&e);
	/* This version again: believed. */
	version = SYMCACHE_VERSION;
	memcpy(buf + VERSION_OFFSET, &version, sizeof(version));
	checksum_again(buf, size);
	CHECK(put_file(path, buf, size));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	free(buf);
	/* Under another build-id's name: its header says whose it is. */
	CHECK(!rename(path, other_path));
	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK(answers_none(e.c, FIRST));
	CHECK_U64(test__nr_warnings, 1);
	CHECK(strstr(test__last_warning, "build-id"));
	/* Nothing to trust there, but nothing foreign either: replaced by what is added. */
	CHECK_U64(add_wants(e.c, GEN(1)), 0);
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);
	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK(answers_all(e.c, GEN(1), e.set));
	env_close(&e);
	/* And none of its own under this one's name. */
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK(answers_none(e.c, FIRST));
	env_close(&e);

	/* Written by another profiler, or of another file with this build-id: ignored. */
	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK(answers_all(e.c, GEN(1), e.set));
	env_close(&e);
	open_producer = "profiler 0.0.1";
	ignored_as(dir, NULL);
	open_producer = PRODUCER;
	open_file_sum = FILE_SUM + 1;
	ignored_as(dir, "another file");
	open_file_sum = FILE_SUM;
}

TEST(symcache_version_and_build_id)
{
	deep_init();
	in_dir(version_and_build_id);
}

/*
 * The file at @path is not to be trusted: ignored with a warning, and not
 * replaced by a save (-EPERM, said no more), which leaves it as it was
 * (@buf, @size).
 */
static bool distrusted(const char *dir, const char *path, const void *buf, size_t size)
{
	struct env e;
	bool ok;

	if (!env_open(&e, dir, BUILD_ID))
		return false;
	ok = answers_none(e.c, FIRST) && test__nr_warnings == 1 &&
	     strstr(test__last_warning, path) && add_wants(e.c, GEN(1)) == 0 &&
	     symcache__save(e.c, 0) == -EPERM && test__nr_warnings == 1 &&
	     count_entries(dir, ".tmp.") == 0;
	env_close(&e);
	if (!ok)
		printf("#   '%s': %d warnings, '%s'\n", path, test__nr_warnings,
		       test__last_warning);
	return ok && (!buf || same_file(path, buf, size));
}

static void trust(const char *dir)
{
	static const mode_t modes[] = { 0666, 0620, 0602, 0644, 0400 };
	char path[256], elsewhere[256], target[256];
	struct stat st;
	struct env e;
	size_t size;
	char *buf;

	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	cache_path(path, sizeof(path), dir, BUILD_ID);
	buf = test__read_file(path, &size);
	CHECK(buf);
	/* Writable by the group or anyone: someone else could have written it. */
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		bool trusted = !(modes[i] & 022);

		CHECK(!chmod(path, modes[i]));
		if (trusted) {
			CHECK(env_open(&e, dir, BUILD_ID));
			CHECK(answers_all(e.c, FIRST, e.set));
			env_close(&e);
		} else {
			CHECK(distrusted(dir, path, buf, size));
			CHECK(!stat(path, &st) && (st.st_mode & 07777) == modes[i]);
		}
	}
	CHECK(!chmod(path, 0600));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);

	/* A symbolic link to a good file, which is believed where it is. */
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", dir);
	CHECK(!mkdir(elsewhere, 0700));
	cache_path(target, sizeof(target), elsewhere, BUILD_ID);
	CHECK(!rename(path, target));
	CHECK(env_open(&e, elsewhere, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	CHECK(!symlink(target, path));
	CHECK(distrusted(dir, path, NULL, 0));
	CHECK(!lstat(path, &st) && S_ISLNK(st.st_mode));
	CHECK(same_file(target, buf, size));
	CHECK(!unlink(path));

	/* A directory. */
	CHECK(!mkdir(path, 0700));
	CHECK(distrusted(dir, path, NULL, 0));
	CHECK(!lstat(path, &st) && S_ISDIR(st.st_mode));
	CHECK(!rmdir(path));

	/* Another user's. */
	CHECK(!rename(target, path));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	if (geteuid() != 0) {
		free(buf);
		SKIP("a file of another owner needs root to make");
	}
	CHECK(!chown(path, 65534, 65534));
	CHECK(distrusted(dir, path, buf, size));
	CHECK(!stat(path, &st) && st.st_uid == 65534);
	/* Ours again: believed. */
	CHECK(!chown(path, geteuid(), getegid()));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	free(buf);
}

TEST(symcache_trust)
{
	deep_init();
	in_dir(trust);
}

static const char *fifo_dir;

/*
 * In a child: the cache of a FIFO, which no one writes to, is ignored as
 * any file that is not regular, and not replaced. Killed by SIGALRM if it
 * waits for a writer; errno is left as it was only when all went well.
 */
static void open_fifo(void)
{
	struct env e;
	bool ok;

	alarm(2);
	ok = env_open(&e, fifo_dir, BUILD_ID) && answers_none(e.c, FIRST) &&
	     test__nr_warnings == 1 && add_wants(e.c, GEN(1)) == 0 &&
	     symcache__save(e.c, 0) == -EPERM;
	env_close(&e);
	alarm(0);
	errno = ok ? EBADMSG : EIO;
}

static void fifo(const char *dir)
{
	const char *what;
	char path[256];
	struct stat st;

	cache_path(path, sizeof(path), dir, BUILD_ID);
	CHECK(!mkfifo(path, 0600));
	fifo_dir = dir;
	what = test__in_child(open_fifo);
	if (what)
		test__fail(__FILE__, __LINE__, "the cache of a FIFO: %s", what);
	CHECK(!lstat(path, &st) && S_ISFIFO(st.st_mode));
}

TEST(symcache_trust_fifo)
{
	in_dir(fifo);
}

static void eviction(const char *dir)
{
	char a[256], b[256], c[256], notes[256];
	static char big[8192];
	struct stat st;
	uint64_t size;
	struct env e;

	cache_path(a, sizeof(a), dir, BUILD_ID);
	cache_path(b, sizeof(b), dir, OTHER_ID);
	cache_path(c, sizeof(c), dir, THIRD_ID);
	snprintf(notes, sizeof(notes), "%s/notes", dir);
	/* Not a cache file, larger than any: never counted, never removed. */
	CHECK(put_file(notes, big, sizeof(big)));

	/* Room for one file and a half: writing the second removes the first. */
	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	CHECK(!stat(a, &st));
	size = st.st_size;
	CHECK(age(a, 100));
	CHECK_U64(write_cache(dir, OTHER_ID, FIRST, size + size / 2), 0);
	CHECK(!stat(b, &st));
	CHECK_U64(st.st_size, size);
	CHECK(access(a, F_OK) && errno == ENOENT);
	CHECK(!access(notes, F_OK));
	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);

	/*
	 * Three files, room for two and a half: the least recently used goes,
	 * a read counting as a use; not the first by name, nor the oldest
	 * written.
	 */
	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	CHECK(age(a, 300));
	CHECK(age(b, 200));
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	CHECK(!stat(a, &st) && st.st_mtime > time(NULL) - 50);
	CHECK_U64(write_cache(dir, THIRD_ID, FIRST, 2 * size + size / 2), 0);
	CHECK(!access(a, F_OK));
	CHECK(access(b, F_OK) && errno == ENOENT);
	CHECK(!access(c, F_OK));
	CHECK(!access(notes, F_OK));

	/* Less room than the file just written: that one stays, alone. */
	CHECK_U64(write_cache(dir, OTHER_ID, FIRST, 1), 0);
	CHECK(!access(b, F_OK));
	CHECK(access(a, F_OK) && errno == ENOENT);
	CHECK(access(c, F_OK) && errno == ENOENT);
	CHECK(!access(notes, F_OK));
	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	CHECK_U64(count_entries(dir, ".sym"), 1);
}

TEST(symcache_eviction)
{
	deep_init();
	in_dir(eviction);
}

static void bad_add(const char *dir)
{
	static const struct {
		uint64_t lo, hi;
	} overlaps[] = {
		{ 0x1000, 0x1010 }, /* the same range */
		{ 0x0ff8, 0x1008 }, /* over its start */
		{ 0x1004, 0x1008 }, /* inside one */
		{ 0x103f, 0x1050 }, /* over its end */
		{ 0x0f00, 0x5000 }, /* over all */
		{ 0x3119, 0x311a }, /* inside one grown by the same answer */
		{ 0x5007, 0x5008 }, /* the last byte */
	};
	struct symcache_line too_deep[SYMCACHE_MAX_LINES + 1], got[SYMCACHE_MAX_LINES];
	struct env e;

	memcpy(too_deep, deep, sizeof(deep));
	too_deep[SYMCACHE_MAX_LINES] = main_at_10[0];
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(add_wants(e.c, FIRST | DEEP), 0);
	CHECK(answers_all(e.c, FIRST | DEEP, NULL));
	/* Empty or upside down. */
	CHECK(symcache__add(e.c, 0x8000, 0x8000, CHAIN(other)) == -EINVAL);
	CHECK(symcache__add(e.c, 0x8001, 0x8000, CHAIN(other)) == -EINVAL);
	CHECK(symcache__add(e.c, 0x5008, 0x5008, CHAIN(other)) == -EINVAL);
	/* No lines, or more than are kept. */
	CHECK(symcache__add(e.c, 0x8000, 0x8010, other, 0) == -EINVAL);
	CHECK(symcache__add(e.c, 0x8000, 0x8010, other, -1) == -EINVAL);
	CHECK(symcache__add(e.c, 0x8000, 0x8010, too_deep, SYMCACHE_MAX_LINES + 1) == -EINVAL);
	/* Over what is covered. */
	for (size_t i = 0; i < sizeof(overlaps) / sizeof(overlaps[0]); i++)
		CHECK(symcache__add(e.c, overlaps[i].lo, overlaps[i].hi, CHAIN(other)) == -EINVAL);
	CHECK(answers_all(e.c, FIRST | DEEP, NULL));
	/* Nothing of it written. */
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST | DEEP, e.set));
	/* Where the ranges above were refused, one that is not is kept. */
	CHECK_U64(symcache__add(e.c, 0x8000, 0x8010, CHAIN(other)), 0);
	CHECK_U64(symcache__lookup(e.c, 0x800f, got), 1);
	CHECK_STR(got[0].name, "other");
	env_close(&e);
}

TEST(symcache_add_bad_input)
{
	deep_init();
	in_dir(bad_add);
}

/*
 * A range that goes on from the range before (one region's ranges, one
 * after another) into what was added before is refused as a new one is.
 */
static void overlap_ongoing(const char *dir)
{
	struct env e;
	int err;

	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(add_wants(e.c, FIRST), 0);
	/* Right before the range at 0x3000: kept. */
	CHECK_U64(add_wants(e.c, GEN(2)), 0);
	CHECK(answers_all(e.c, FIRST | GEN(2), NULL));
	/* Going on from it, over the range at 0x3000. */
	err = symcache__add(e.c, 0x3000, 0x3008, CHAIN(before));
	if (err != -EINVAL)
		test__fail(__FILE__, __LINE__, "add over [0x3000, 0x3004) returned %d, not -EINVAL",
			   err);
	CHECK(answers_all(e.c, FIRST | GEN(2), NULL));
	/* What was kept is written. */
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST | GEN(2), e.set));
	env_close(&e);
}

TEST(symcache_add_overlap_ongoing)
{
	deep_init();
	in_dir(overlap_ongoing);
}

/* A range over what the file covers is refused as one over what was added is. */
static void overlap_file(const char *dir)
{
	struct env e;
	int err;

	CHECK_U64(write_cache(dir, BUILD_ID, FIRST, 0), 0);
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	err = symcache__add(e.c, 0x1008, 0x1010, CHAIN(before));
	if (err != -EINVAL)
		test__fail(__FILE__, __LINE__, "add over [0x1000, 0x1010) returned %d, not -EINVAL",
			   err);
	CHECK(answers_all(e.c, FIRST, e.set));
	/* Whatever was kept, the file's answers stay. */
	err = symcache__save(e.c, 0);
	env_close(&e);
	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK(answers_all(e.c, FIRST, e.set));
	env_close(&e);
	CHECK_U64(err, 0);
}

TEST(symcache_add_overlap_file)
{
	deep_init();
	in_dir(overlap_file);
}

/* The ends of the address space, each a file of its own. */
static void address_edges(const char *dir)
{
	struct symcache_line got[SYMCACHE_MAX_LINES];
	struct env e;

	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(symcache__add(e.c, 0, 1, CHAIN(main_at_10)), 0);
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);
	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK_U64(symcache__add(e.c, UINT64_MAX - 1, UINT64_MAX, CHAIN(other)), 0);
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);

	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK_U64(symcache__lookup(e.c, 0, got), 1);
	CHECK_STR(got[0].name, "main");
	CHECK_U64(symcache__lookup(e.c, 1, got), 0);
	CHECK_U64(symcache__lookup(e.c, UINT64_MAX, got), 0);
	env_close(&e);
	CHECK(env_open(&e, dir, OTHER_ID));
	CHECK_U64(test__nr_warnings, 0);
	CHECK_U64(symcache__lookup(e.c, UINT64_MAX - 1, got), 1);
	CHECK_STR(got[0].name, "other");
	CHECK_U64(symcache__lookup(e.c, UINT64_MAX, got), 0);
	CHECK_U64(symcache__lookup(e.c, UINT64_MAX - 2, got), 0);
	CHECK_U64(symcache__lookup(e.c, 0, got), 0);
	env_close(&e);
}

TEST(symcache_address_edges)
{
	in_dir(address_edges);
}

/* Answers that name nothing, in no file: a file of no strings at all, read back as any other. */
static void no_strings(const char *dir)
{
	struct symcache_line got[SYMCACHE_MAX_LINES];
	struct env e;

	CHECK(env_open(&e, dir, BUILD_ID));
	CHECK_U64(symcache__add(e.c, 0x9000, 0x9010, CHAIN(unknown)), 0);
	CHECK_U64(symcache__lookup(e.c, 0x9008, got), 1);
	CHECK_U64(symcache__save(e.c, 0), 0);
	env_close(&e);
	CHECK(env_open(&e, dir, BUILD_ID));
	if (test__nr_warnings)
		test__fail(__FILE__, __LINE__, "warned: '%s'", test__last_warning);
	CHECK_U64(symcache__lookup(e.c, 0x9008, got), 1);
	CHECK(!got[0].name && !got[0].system_name && !got[0].file);
	CHECK_U64(got[0].line, 0);
	CHECK_U64(symcache__lookup(e.c, 0x9010, got), 0);
	env_close(&e);
}

TEST(symcache_no_strings)
{
	in_dir(no_strings);
}
