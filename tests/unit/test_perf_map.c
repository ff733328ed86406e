// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "symbolize/perf_map.h"
#include "test.h"

/* A perf map file in a fresh temporary directory. */
struct tmp_map {
	char dir[32], path[64];
};

static int tmp_map__init(struct tmp_map *t)
{
	strcpy(t->dir, "/tmp/profiler-test-XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	snprintf(t->path, sizeof(t->path), "%s/perf-1.map", t->dir);
	return 0;
}

/*
 * Make the file hold @len bytes of @text: a new file, as truncating one makes
 * ext4 flush it on close (auto_da_alloc), which made the test 16 times slower.
 */
static int tmp_map__write(struct tmp_map *t, const char *text, size_t len)
{
	int fd;

	unlink(t->path);
	fd = open(t->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static void tmp_map__remove(struct tmp_map *t)
{
	unlink(t->path);
	rmdir(t->dir);
}

/* Load @text (NUL-terminated) as a perf map. */
static struct perf_map *load_text(const char *text)
{
	struct tmp_map t;
	struct perf_map *map = NULL;

	if (tmp_map__init(&t))
		return NULL;
	if (!tmp_map__write(&t, text, strlen(text)))
		map = perf_map__load(t.path);
	tmp_map__remove(&t);
	return map;
}

/* The name covering @addr, or NULL; checks that the symbol does cover it. */
static const char *name_at(const struct perf_map *map, uint64_t addr)
{
	const struct perf_map_sym *s = perf_map__lookup(map, addr);

	if (!s)
		return NULL;
	if (addr < s->addr || addr - s->addr >= s->size)
		return "(symbol does not cover the address)";
	return s->name;
}

#define CHECK_NAME(map, addr, name) CHECK_STR(name_at(map, addr), name)
#define CHECK_NONE(map, addr) CHECK(!perf_map__lookup(map, addr))

/* Symbols sorted and disjoint, and every one found at its first and last address. */
static bool well_formed(const struct perf_map *map)
{
	size_t nr;
	const struct perf_map_sym *syms = perf_map__syms(map, &nr);

	for (size_t i = 0; i < nr; i++) {
		if (!syms[i].size || syms[i].addr + syms[i].size < syms[i].addr)
			return false;
		if (i && syms[i - 1].addr + syms[i - 1].size > syms[i].addr)
			return false;
		if (perf_map__lookup(map, syms[i].addr) != &syms[i] ||
		    perf_map__lookup(map, syms[i].addr + syms[i].size - 1) != &syms[i])
			return false;
	}
	return true;
}

TEST(perf_map_formats)
{
	struct perf_map *map = load_text("7f0000001000 40 LazyCompile:*hotLoop /tmp/hot.js:3\n"
					 "0x7f0000002000 0x20 py::compute:/tmp/hot.py\n"
					 "0X7F0000003000 0X10 UPPER\n"
					 "7f0000004000\t8\tTabs\tin name\n"
					 "7f0000005000  8   trailing spaces  \n"
					 "7f0000006000 8 crlf\r\n");
	const struct perf_map_sym *s;
	size_t nr;

	CHECK(map);
	CHECK(well_formed(map));
	perf_map__syms(map, &nr);
	CHECK_U64(nr, 6);
	CHECK_U64(perf_map__nr_skipped(map), 0);
	s = perf_map__lookup(map, 0x7f0000001000);
	CHECK(s);
	CHECK_U64(s->addr, 0x7f0000001000);
	CHECK_U64(s->size, 0x40);
	CHECK_STR(s->name, "LazyCompile:*hotLoop /tmp/hot.js:3");
	CHECK_NAME(map, 0x7f000000103f, "LazyCompile:*hotLoop /tmp/hot.js:3");
	CHECK_NONE(map, 0x7f0000001040);
	CHECK_NONE(map, 0x7f0000000fff);
	CHECK_NAME(map, 0x7f0000002010, "py::compute:/tmp/hot.py");
	CHECK_NAME(map, 0x7f000000300f, "UPPER");
	CHECK_NAME(map, 0x7f0000004000, "Tabs\tin name");
	CHECK_NAME(map, 0x7f0000005007, "trailing spaces  ");
	CHECK_NAME(map, 0x7f0000006000, "crlf");
	CHECK_NONE(map, 0);
	CHECK_NONE(map, UINT64_MAX);
	perf_map__free(map);
}

TEST(perf_map_no_trailing_newline)
{
	struct perf_map *map = load_text("1000 10 first\n2000 10 last one");

	CHECK(map);
	CHECK_NAME(map, 0x1000, "first");
	CHECK_NAME(map, 0x200f, "last one");
	CHECK_U64(perf_map__nr_skipped(map), 0);
	perf_map__free(map);
}

TEST(perf_map_empty)
{
	struct perf_map *map = load_text("");
	size_t nr;

	CHECK(map);
	perf_map__syms(map, &nr);
	CHECK_U64(nr, 0);
	CHECK_NONE(map, 0);
	CHECK_NONE(map, 0x1000);
	CHECK_U64(perf_map__nr_skipped(map), 0);
	perf_map__free(map);

	/* Blank lines are no symbols, and not errors either. */
	map = load_text("\n\n\r\n");
	CHECK(map);
	perf_map__syms(map, &nr);
	CHECK_U64(nr, 0);
	CHECK_U64(perf_map__nr_skipped(map), 0);
	perf_map__free(map);
}

TEST(perf_map_garbage)
{
	static const char text[] = "hello world\n"
				   "1000\n"
				   "1000 10\n"
				   "1000 10 \n"
				   "zz 10 bad start\n"
				   "1000 zz bad size\n"
				   "0x 10 no digits\n"
				   "1000 0 empty\n"
				   "ffffffffffffffff 2 wraps\n"
				   "10000000000000000 10 seventeen digits\n"
				   " 1000 10 leading blank\n"
				   "1000-10 dash\n"
				   "3000 10 good\n"
				   "4000 10 has\0nul\n"
				   "\xff\xfe\n";
	struct tmp_map t;
	struct perf_map *map = NULL;
	size_t nr;

	CHECK(!tmp_map__init(&t));
	if (!tmp_map__write(&t, text, sizeof(text) - 1))
		map = perf_map__load(t.path);
	tmp_map__remove(&t);
	CHECK(map);
	perf_map__syms(map, &nr);
	CHECK_U64(nr, 1);
	CHECK_NAME(map, 0x3000, "good");
	CHECK_NONE(map, 0x1000);
	CHECK_NONE(map, 0x4000);
	CHECK_U64(perf_map__nr_skipped(map), 14);
	perf_map__free(map);
}

/* A line longer than 64 KiB is skipped; the lines around it are not. */
TEST(perf_map_long_line)
{
	size_t name_len = 70 << 10;
	char *text = malloc(name_len + 64);
	struct perf_map *map;
	int n;

	CHECK(text);
	n = sprintf(text, "1000 10 before\n2000 10 ");
	memset(text + n, 'x', name_len);
	strcpy(text + n + name_len, "\n3000 10 after\n");
	map = load_text(text);
	free(text);
	CHECK(map);
	CHECK_NAME(map, 0x1000, "before");
	CHECK_NONE(map, 0x2000);
	CHECK_NAME(map, 0x3000, "after");
	CHECK_U64(perf_map__nr_skipped(map), 1);
	perf_map__free(map);
}

/* A line longer than the read buffer (1 MiB) is skipped to its newline, and counted once. */
TEST(perf_map_line_longer_than_buffer)
{
	size_t name_len = 3 << 20;
	char *text = malloc(name_len + 64);
	struct perf_map *map;
	int n;

	CHECK(text);
	n = sprintf(text, "1000 10 before\n2000 10 ");
	memset(text + n, 'x', name_len);
	/* And a last line without its newline. */
	strcpy(text + n + name_len, "\n3000 10 after\n4000 10 last");
	map = load_text(text);
	free(text);
	CHECK(map);
	CHECK_NAME(map, 0x1000, "before");
	CHECK_NONE(map, 0x2000);
	CHECK_NAME(map, 0x3000, "after");
	CHECK_NAME(map, 0x4000, "last");
	CHECK_U64(perf_map__nr_skipped(map), 1);
	perf_map__free(map);
}

/*
 * Past the budget of symbols (2^20), the rest of the file is not read: one
 * warning naming the file, and the symbols read so far kept.
 */
TEST(perf_map_budget)
{
	size_t nr = (1 << 20) + 10, len = 0, alloc = nr * 24 + 1;
	char *text = malloc(alloc);
	struct perf_map *map;
	log_print_fn old;
	size_t nr_syms;

	CHECK(text);
	if (!text)
		return;
	for (size_t i = 0; i < nr; i++)
		len += snprintf(text + len, alloc - len, "%zx 10 f%zu\n", 0x10000 + 16 * i, i);
	old = test__capture_warnings();
	test__nr_warnings = 0;
	map = load_text(text);
	log_set_print(old);
	free(text);
	CHECK(map);
	if (!map)
		return;
	CHECK(test__nr_warnings == 1);
	CHECK(strstr(test__last_warning, "perf-"));
	CHECK(strstr(test__last_warning, "budget"));
	perf_map__syms(map, &nr_syms);
	CHECK_U64(nr_syms, 1 << 20);
	CHECK_NAME(map, 0x10000, "f0");
	CHECK_NAME(map, 0x10000 + 16 * ((1 << 20) - 1), "f1048575");
	CHECK_NONE(map, 0x10000 + 16 * (1 << 20));
	perf_map__free(map);
}

TEST(perf_map_redefined_range)
{
	struct perf_map *map = load_text("1000 100 old\n"
					 "2000 10 other\n"
					 "1000 100 new\n");
	const struct perf_map_sym *s;
	size_t nr;

	CHECK(map);
	CHECK(well_formed(map));
	perf_map__syms(map, &nr);
	CHECK_U64(nr, 2);
	s = perf_map__lookup(map, 0x1080);
	CHECK(s);
	CHECK_STR(s->name, "new");
	CHECK_U64(s->addr, 0x1000);
	CHECK_U64(s->size, 0x100);
	CHECK_NAME(map, 0x2000, "other");
	perf_map__free(map);
}

TEST(perf_map_overlaps)
{
	/*
	 * 0x1000-0x1100 "outer", then "inner" over its middle; "tail" over the
	 * end of "left"; "under" starts in "wide" but is older; "hidden" is
	 * covered whole by the later "cover".
	 */
	struct perf_map *map = load_text("1000 100 outer\n"
					 "1040 20 inner\n"
					 "2000 100 left\n"
					 "20c0 80 tail\n"
					 "3020 10 under\n"
					 "4010 10 hidden\n"
					 "3000 100 wide\n"
					 "4000 100 cover\n");
	const struct perf_map_sym *s;
	size_t nr, hidden = 0;
	const struct perf_map_sym *syms;

	CHECK(map);
	CHECK(well_formed(map));
	CHECK_NAME(map, 0x1000, "outer");
	CHECK_NAME(map, 0x103f, "outer");
	CHECK_NAME(map, 0x1040, "inner");
	CHECK_NAME(map, 0x105f, "inner");
	CHECK_NAME(map, 0x1060, "outer");
	CHECK_NAME(map, 0x10ff, "outer");
	/* The part of "outer" after "inner" is a symbol of its own. */
	s = perf_map__lookup(map, 0x1060);
	CHECK_U64(s->addr, 0x1060);
	CHECK_U64(s->size, 0xa0);
	CHECK_NAME(map, 0x20bf, "left");
	CHECK_NAME(map, 0x20c0, "tail");
	CHECK_NAME(map, 0x213f, "tail");
	CHECK_NONE(map, 0x2140);
	/* An older line starting inside a later one does not split it. */
	s = perf_map__lookup(map, 0x3025);
	CHECK(s);
	CHECK_STR(s->name, "wide");
	CHECK_U64(s->addr, 0x3000);
	CHECK_U64(s->size, 0x100);
	CHECK_NAME(map, 0x4015, "cover");
	syms = perf_map__syms(map, &nr);
	for (size_t i = 0; i < nr; i++)
		hidden += !strcmp(syms[i].name, "hidden") || !strcmp(syms[i].name, "under");
	CHECK_U64(hidden, 0);
	CHECK_U64(nr, 7);
	perf_map__free(map);
}

static uint64_t xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#define RANDOM_SPACE 256
#define RANDOM_LINES 40

/* Is the symbol at each address of @map that of the last of the lines covering it? */
static bool follows_rule(const struct perf_map *map, const uint64_t *start, const uint64_t *size,
			 int round)
{
	char want[16];

	for (uint64_t addr = 0xf0; addr < 0x100 + RANDOM_SPACE + 80; addr++) {
		const char *got = name_at(map, addr);
		int last = -1;

		for (int i = 0; i < RANDOM_LINES; i++)
			if (addr >= start[i] && addr - start[i] < size[i])
				last = i;
		snprintf(want, sizeof(want), "f%d", last);
		if (last < 0 ? got != NULL : !got || strcmp(got, want)) {
			test__fail(__FILE__, __LINE__, "round %d, 0x%" PRIx64 ": '%s' != '%s'",
				   round, addr, got ? got : "(null)", last < 0 ? "(null)" : want);
			return false;
		}
	}
	return true;
}

/*
 * Random overlapping lines over a small range, compared address by address
 * with the rule itself: the name is that of the last line covering it.
 */
TEST(perf_map_overlaps_random)
{
	uint64_t state = 0x2545f4914f6cdd1dULL;
	bool ok = true;
	struct tmp_map t;

	CHECK(!tmp_map__init(&t));
	for (int round = 0; ok && round < 500; round++) {
		uint64_t start[RANDOM_LINES], size[RANDOM_LINES];
		char text[RANDOM_LINES * 32], *p = text;
		struct perf_map *map;

		for (int i = 0; i < RANDOM_LINES; i++) {
			start[i] = 0x100 + xorshift(&state) % RANDOM_SPACE;
			size[i] = 1 + xorshift(&state) % (round % 2 ? 16 : 64);
			p += sprintf(p, "%" PRIx64 " %" PRIx64 " f%d\n", start[i], size[i], i);
		}
		map = tmp_map__write(&t, text, p - text) ? NULL : perf_map__load(t.path);
		if (!map || !well_formed(map)) {
			test__fail(__FILE__, __LINE__, "round %d: %s", round,
				   map ? "overlapping symbols" : strerror(errno));
			ok = false;
		} else {
			ok = follows_rule(map, start, size, round);
		}
		perf_map__free(map);
	}
	tmp_map__remove(&t);
}

TEST(perf_map_errors)
{
	char dir[] = "/tmp/profiler-test-XXXXXX", path[64];
	int fd;

	errno = 0;
	CHECK(!perf_map__load("/nonexistent/perf-1.map"));
	CHECK(errno == ENOENT);
	CHECK(mkdtemp(dir));
	errno = 0;
	CHECK(!perf_map__load(dir));
	CHECK(errno == EINVAL);

	/* A FIFO is refused, not waited on. */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(!mkfifo(path, 0600));
	errno = 0;
	CHECK(!perf_map__load(path));
	CHECK(errno == EINVAL);
	unlink(path);

	/* A sparse file past the size limit: refused without reading it. */
	snprintf(path, sizeof(path), "%s/perf-2.map", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK(!ftruncate(fd, (256 << 20) + 1));
	close(fd);
	errno = 0;
	CHECK(!perf_map__load(path));
	CHECK(errno == EFBIG);
	unlink(path);
	rmdir(dir);
	perf_map__free(NULL);
}

/* The map of this process, found through /proc as for any other. */
TEST(perf_map_load_pid)
{
	uintptr_t addr = (uintptr_t)&perf_map__load_pid;
	bool found, refused = true;
	const char *name;
	char path[64];
	struct perf_map *map;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	errno = 0;
	CHECK(!perf_map__load_pid(getpid()));
	CHECK(errno == ENOENT);

	f = fopen(path, "we");
	CHECK(f);
	fprintf(f, "%" PRIxPTR " 40 own map\n", addr);
	fclose(f);
	map = perf_map__load_pid(getpid());
	name = map ? name_at(map, addr + 1) : NULL;
	found = name && !strcmp(name, "own map");
	perf_map__free(map);
	/* Another user's file in the process's /tmp is not trusted (only root can chown). */
	if (!geteuid() && !chown(path, 12345, 12345)) {
		errno = 0;
		map = perf_map__load_pid(getpid());
		refused = !map && errno == EPERM;
		perf_map__free(map);
	}
	unlink(path);
	CHECK(found);
	CHECK(refused);

	/* No such process (above the largest pid_max). */
	errno = 0;
	CHECK(!perf_map__load_pid((1 << 22) + 1));
	CHECK(errno == ESRCH);
}

/*
 * A cached map is read again only when its file changes: the same map while
 * it does not, a new one once a line is appended; swept when unused.
 */
TEST(perf_map_cache)
{
	uintptr_t addr = (uintptr_t)&perf_map_cache__load_pid;
	struct perf_map_cache *c = perf_map_cache__new();
	const struct perf_map *a, *b, *grown;
	const char *name;
	char path[64];
	FILE *f;

	CHECK(c);
	if (!c)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	errno = 0;
	CHECK(!perf_map_cache__load_pid(c, getpid()));
	CHECK(errno == ENOENT);
	f = fopen(path, "we");
	CHECK(f);
	fprintf(f, "%" PRIxPTR " 40 first\n", addr);
	fclose(f);
	a = perf_map_cache__load_pid(c, getpid());
	b = perf_map_cache__load_pid(c, getpid());
	CHECK(a);
	CHECK(a == b);
	perf_map_cache__sweep(c);
	/* Kept by the sweep: it was used since the last one. */
	b = perf_map_cache__load_pid(c, getpid());
	CHECK(a == b);
	f = fopen(path, "ae");
	CHECK(f);
	fprintf(f, "%" PRIxPTR " 40 second\n", addr + 0x40);
	fclose(f);
	grown = perf_map_cache__load_pid(c, getpid());
	CHECK(grown);
	name = grown ? name_at(grown, addr + 0x41) : NULL;
	CHECK(name && !strcmp(name, "second"));
	name = grown ? name_at(grown, addr + 1) : NULL;
	CHECK(name && !strcmp(name, "first"));
	unlink(path);
	/* Two sweeps without a use forget it: the file is gone, and so is the map. */
	perf_map_cache__sweep(c);
	perf_map_cache__sweep(c);
	errno = 0;
	CHECK(!perf_map_cache__load_pid(c, getpid()));
	CHECK(errno == ENOENT);
	perf_map_cache__free(c);
	perf_map_cache__free(NULL);
}
