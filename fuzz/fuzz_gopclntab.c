// SPDX-License-Identifier: GPL-2.0-only
/*
 * A Go function table (elf/gopclntab.c) from bytes. The input is cut into
 * sections (fuzz.h): function names, cutab, filetab, pctab, the function
 * table with the functions' records, and the data inline trees are read
 * from. The target writes the header before them, as Go's linker lays the
 * parts out, so that mutations reach the parts rather than the offsets:
 * flags bits 0-1 choose the layout (Go 1.16, 1.18, 1.20), bits 2-7 the
 * number of functions (at most what the function table holds; their
 * records follow the entries). Every address of the first
 * KiB of code is looked up, every function's stack depths and the runtime's
 * names read: each name and file returned must be a string inside the table.
 */
#include <errno.h>

#include "elf/gopclntab.h"
#include "fuzz.h"

#define GOPCLNTAB_FUZZ_TEXT 0x401000
#define GOPCLNTAB_FUZZ_TABLE 0x500000
#define GOPCLNTAB_FUZZ_RODATA 0x600000

static const unsigned int gopclntab_fuzz_magic[] = { 0xfffffffa, 0xfffffff0, 0xfffffff1,
						     0xfffffff1 };

/* Is @s a string inside @t's table? */
static bool gopclntab_fuzz_in_table(const struct gopclntab *t, const char *s)
{
	const uint8_t *p = (const uint8_t *)s;

	return p >= t->table.data && p < t->table.data + t->table.size &&
	       memchr(p, '\0', t->table.data + t->table.size - p);
}

static int gopclntab_fuzz_depth(uint64_t pc, int32_t depth, void *arg)
{
	(void)depth;
	FUZZ_CHECK(pc >= *(uint64_t *)arg);
	*(uint64_t *)arg = pc;
	return 0;
}

static int fuzz_gopclntab(const uint8_t *data, size_t size)
{
	struct gopclntab_loc locs[GOPCLNTAB_MAX_DEPTH];
	struct gopclntab_region table, rodata;
	struct fuzz_sections s;
	unsigned int version;
	struct gopclntab t;
	uint64_t hdr[8], off, lo, hi;
	size_t header, entry, total, k = 2;
	uint8_t *buf;

	if (fuzz_sections__split(&s, data, size, 6))
		return 0;
	version = s.flags & 3;
	header = version ? 8 + 8 * 8 : 8 + 7 * 8;
	entry = version ? 8 : 16;
	total = header;
	for (int i = 0; i < 5; i++)
		total += s.size[i];
	buf = calloc(1, total);
	if (!buf)
		goto out;
	memcpy(buf, &gopclntab_fuzz_magic[version], 4);
	buf[6] = 1;
	buf[7] = 8;
	/* nfunc, nfiles, [textStart,] then each part's offset. */
	memset(hdr, 0, sizeof(hdr));
	hdr[0] = s.flags >> 2;
	if (s.size[4] < entry * (hdr[0] + 1))
		hdr[0] = s.size[4] >= entry ? s.size[4] / entry - 1 : 0;
	if (version)
		hdr[k++] = GOPCLNTAB_FUZZ_TEXT;
	off = header;
	for (int i = 0; i < 5; i++) {
		hdr[k++] = off;
		if (s.size[i])
			memcpy(buf + off, s.data[i], s.size[i]);
		off += s.size[i];
	}
	memcpy(buf + 8, hdr, 8 * k);
	table = (struct gopclntab_region){ GOPCLNTAB_FUZZ_TABLE, buf, total };
	rodata = (struct gopclntab_region){ GOPCLNTAB_FUZZ_RODATA, s.data[5], s.size[5] };
	if (gopclntab__open_regions(&t, &table, &rodata, GOPCLNTAB_FUZZ_RODATA))
		goto out;
	for (uint64_t pc = GOPCLNTAB_FUZZ_TEXT; pc < GOPCLNTAB_FUZZ_TEXT + 1024; pc++) {
		int n = gopclntab__lookup(&t, pc, locs);

		FUZZ_CHECK(n >= 0 && n <= GOPCLNTAB_MAX_DEPTH);
		for (int i = 0; i < n; i++) {
			FUZZ_CHECK(gopclntab_fuzz_in_table(&t, locs[i].name));
			FUZZ_CHECK(!locs[i].file || gopclntab_fuzz_in_table(&t, locs[i].file));
		}
	}
	for (uint32_t i = 0; i < t.nr_funcs && i < 64; i++) {
		struct gopclntab_func f;
		const char *name = gopclntab__name(&t, i);
		uint64_t last = 0;

		FUZZ_CHECK(!name || gopclntab_fuzz_in_table(&t, name));
		if (!gopclntab__func(&t, i, &f)) {
			FUZZ_CHECK(f.lo < f.hi);
			last = f.lo;
			gopclntab__sp_depths(&t, i, gopclntab_fuzz_depth, &last);
			FUZZ_CHECK(last < f.hi);
		}
	}
	if (!gopclntab__find_name(&t, "runtime.goexit", &lo, &hi))
		FUZZ_CHECK(lo < hi);
	if (!gopclntab__text(&t, &lo, &hi))
		FUZZ_CHECK(lo < hi);
out:
	free(buf);
	fuzz_sections__release(&s);
	return 0;
}

FUZZ_TARGET(fuzz_gopclntab)
