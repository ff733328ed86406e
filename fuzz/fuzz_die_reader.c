// SPDX-License-Identifier: GPL-2.0-only
/*
 * DWARF units through our DIE reader (die_reader.h), straight from bytes.
 * The input is cut into sections (fuzz.h): .debug_abbrev, .debug_addr,
 * .debug_ranges, .debug_rnglists, then .debug_info; flags bit 0 is
 * big-endian. Every unit is walked to its end, as dwarf_index does, and
 * every DIE's range list read.
 */
#include "fuzz.h"
#include "symbolize/die_reader.h"

/* A unit of a few KiB has far fewer; a bound keeps a slow input from timing out. */
#define DIE_FUZZ_MAX_UNITS 64

static int die_fuzz_range(void *ctx, uint64_t lo, uint64_t hi)
{
	(void)ctx;
	FUZZ_CHECK(lo < hi);
	return 0;
}

static int fuzz_die_reader(const uint8_t *data, size_t size)
{
	struct die_sections ds;
	struct fuzz_sections s;
	uint64_t offset = 0;

	if (fuzz_sections__split(&s, data, size, 5))
		return 0;
	ds = (struct die_sections){
		.abbrev = s.data[0],
		.abbrev_size = s.size[0],
		.addr = s.data[1],
		.addr_size = s.size[1],
		.ranges = s.data[2],
		.ranges_size = s.size[2],
		.rnglists = s.data[3],
		.rnglists_size = s.size[3],
		.info = s.data[4],
		.info_size = s.size[4],
		.big_endian = s.flags & 1,
	};
	for (int units = 0; units < DIE_FUZZ_MAX_UNITS && offset < ds.info_size; units++) {
		struct die_reader r;
		struct die die;
		int ret;

		if (die_reader__init(&r, &ds, offset))
			break;
		FUZZ_CHECK(r.p >= ds.info + offset && r.end <= ds.info + ds.info_size);
		while ((ret = die_reader__next(&r, &die)) > 0) {
			FUZZ_CHECK(die.offset < ds.info_size);
			if (die.has_ranges)
				die_reader__ranges(&r, &die, die_fuzz_range, NULL);
		}
		/* The unit ends where its length says: the next one starts there. */
		offset = r.end - ds.info;
		die_reader__release(&r);
	}
	fuzz_sections__release(&s);
	return 0;
}

FUZZ_TARGET(fuzz_die_reader)
