// SPDX-License-Identifier: GPL-2.0-only
/*
 * Perf map files (/tmp/perf-PID.map), loaded by perf_map__load() from a
 * memfd as from any file. The symbols must be sorted, disjoint and found by
 * perf_map__lookup(); and, for inputs of up to PERF_MAP_ORACLE_LINES lines,
 * every lookup must name what a brute-force reading of perf_map.h's rules
 * says: the last line that covers the address.
 */
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "symbolize/perf_map.h"

#define PERF_MAP_ORACLE_LINES 256
#define PERF_MAP_MAX_LINE (64 << 10)

struct perf_map_ref_line {
	uint64_t start, size;
	const char *name; /* into the input; not terminated */
	size_t name_len;
};

static bool perf_map_ref_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* [0x]HEX{1,16} then at least one blank, from *@i in [@s, @s + @len). */
static bool perf_map_ref_hex(const char *s, size_t len, size_t *i, uint64_t *out)
{
	size_t j = *i, digits = 0;
	uint64_t v = 0;

	if (len - j > 2 && s[j] == '0' && (s[j + 1] == 'x' || s[j + 1] == 'X'))
		j += 2;
	for (; j < len; j++, digits++) {
		char c = s[j];
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 :
					       -1;

		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || digits > 16 || j == len || !perf_map_ref_blank(s[j]))
		return false;
	while (j < len && perf_map_ref_blank(s[j]))
		j++;
	*i = j;
	*out = v;
	return true;
}

/* The line [@s, @s + @len) as perf_map.h describes it: true if it is a symbol. */
static bool perf_map_ref_parse(const char *s, size_t len, struct perf_map_ref_line *out)
{
	size_t i = 0;

	if (len > PERF_MAP_MAX_LINE)
		return false;
	if (len && s[len - 1] == '\r')
		len--;
	if (!perf_map_ref_hex(s, len, &i, &out->start) ||
	    !perf_map_ref_hex(s, len, &i, &out->size) || i == len || memchr(s + i, 0, len - i))
		return false;
	/* The end, one past the last address, must fit in 64 bits. */
	if (!out->size || out->size > UINT64_MAX - out->start)
		return false;
	out->name = s + i;
	out->name_len = len - i;
	return true;
}

/* Does the map name at @addr what the last line covering it names (or nothing)? */
static void perf_map_check_addr(const struct perf_map *map, const struct perf_map_ref_line *lines,
				size_t nr, uint64_t addr)
{
	const struct perf_map_sym *sym = perf_map__lookup(map, addr);
	size_t i = nr;

	while (i-- > 0)
		if (addr - lines[i].start < lines[i].size)
			break;
	if (i == (size_t)-1) {
		FUZZ_CHECK(!sym);
		return;
	}
	FUZZ_CHECK(sym);
	FUZZ_CHECK(strlen(sym->name) == lines[i].name_len &&
		   !memcmp(sym->name, lines[i].name, lines[i].name_len));
}

static void perf_map_oracle(const struct perf_map *map, const char *text, size_t size)
{
	struct perf_map_ref_line lines[PERF_MAP_ORACLE_LINES];
	size_t nr = 0, skipped = 0;
	const char *p = text, *end = text + size;

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		size_t len = (eol ? eol : end) - p;

		if (nr == PERF_MAP_ORACLE_LINES)
			return;
		if (perf_map_ref_parse(p, len, &lines[nr]))
			nr++;
		else if (len && !(len == 1 && p[0] == '\r'))
			skipped++;
		p += len + 1;
	}
	FUZZ_CHECK(perf_map__nr_skipped(map) == skipped);
	for (size_t i = 0; i < nr; i++) {
		uint64_t start = lines[i].start, last = start + lines[i].size - 1;

		perf_map_check_addr(map, lines, nr, start);
		perf_map_check_addr(map, lines, nr, last);
		perf_map_check_addr(map, lines, nr, start - 1);
		perf_map_check_addr(map, lines, nr, last + 1);
		perf_map_check_addr(map, lines, nr, start + lines[i].size / 2);
	}
}

static int fuzz_perf_map(const uint8_t *data, size_t size)
{
	static int fd = -1;
	const struct perf_map_sym *syms;
	struct perf_map *map;
	char path[64];
	size_t nr;

	fuzz_log_init();
	if (fd < 0) {
		fd = memfd_create("perf-map", MFD_CLOEXEC);
		FUZZ_CHECK(fd >= 0);
	}
	FUZZ_CHECK(!ftruncate(fd, 0));
	FUZZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	map = perf_map__load(path);
	FUZZ_CHECK(map);
	syms = perf_map__syms(map, &nr);
	for (size_t i = 0; i < nr; i++) {
		FUZZ_CHECK(syms[i].size && syms[i].addr + (syms[i].size - 1) >= syms[i].addr);
		FUZZ_CHECK(!i || syms[i - 1].addr + syms[i - 1].size <= syms[i].addr);
		FUZZ_CHECK(!strchr(syms[i].name, '\n'));
		FUZZ_CHECK(perf_map__lookup(map, syms[i].addr) == &syms[i]);
		FUZZ_CHECK(perf_map__lookup(map, syms[i].addr + (syms[i].size - 1)) == &syms[i]);
	}
	perf_map_oracle(map, (const char *)data, size);
	perf_map__free(map);
	return 0;
}

FUZZ_TARGET(fuzz_perf_map)
