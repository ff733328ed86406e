// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fuzz targets' inputs, replayed: the seeds committed in fuzz/corpus/
 * and every input that once made a target fail, in fuzz/regressions/, each
 * through the target's own code (fuzz/fuzz_*.c, built here without
 * libFuzzer). A target checks its own results and aborts on a wrong one; run
 * under `make asan`, these also catch what only AddressSanitizer sees.
 * Paths are relative to the top of the tree, where tests/run starts.
 *
 * Below them, what each fixed crash was, as plain unit tests.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_REPLAY
#include "fuzz/fuzz_die_reader.c"
#include "fuzz/fuzz_elf.c"
#include "fuzz/fuzz_event.c"
#include "fuzz/fuzz_line_table.c"
#include "fuzz/fuzz_perf_map.c"
#include "fuzz/fuzz_proc_maps.c"
#include "fuzz/fuzz_symbolize_addresses.c"
#include "test.h"

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

/* Run every file of @dir through @fn; how many, or -errno when @dir is unreadable. */
static int replay_dir(const char *dir, fuzz_fn fn)
{
	struct dirent *de;
	int nr = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char path[512];
		uint8_t *data;
		size_t size;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		rewind(f);
		data = malloc(size ? size : 1);
		if (data && fread(data, 1, size, f) == size) {
			fn(data, size);
			nr++;
		}
		free(data);
		fclose(f);
	}
	closedir(d);
	return nr;
}

/* Replay @target's seeds, which must exist, and its regressions, if any. */
static int replay(const char *target, fuzz_fn fn)
{
	char dir[256];
	int seeds, regressions;

	snprintf(dir, sizeof(dir), "fuzz/corpus/%s", target);
	seeds = replay_dir(dir, fn);
	snprintf(dir, sizeof(dir), "fuzz/regressions/%s", target);
	regressions = replay_dir(dir, fn);
	return seeds > 0 && (regressions >= 0 || regressions == -ENOENT) ? 0 : -1;
}

TEST(fuzz_inputs_die_reader)
{
	CHECK(!replay("fuzz_die_reader", fuzz_die_reader));
}

TEST(fuzz_inputs_elf)
{
	CHECK(!replay("fuzz_elf", fuzz_elf));
}

TEST(fuzz_inputs_event)
{
	CHECK(!replay("fuzz_event", fuzz_event));
}

TEST(fuzz_inputs_line_table)
{
	CHECK(!replay("fuzz_line_table", fuzz_line_table));
}

TEST(fuzz_inputs_perf_map)
{
	CHECK(!replay("fuzz_perf_map", fuzz_perf_map));
}

TEST(fuzz_inputs_proc_maps)
{
	CHECK(!replay("fuzz_proc_maps", fuzz_proc_maps));
}

TEST(fuzz_inputs_symbolize_addresses)
{
	CHECK(!replay("fuzz_symbolize_addresses", fuzz_symbolize_addresses));
}

/* sscanf() skipped newlines like blanks: a blank line was read as the next one. */
TEST(fuzz_fixed_proc_maps_blank_line)
{
	struct proc_maps_line l;

	CHECK(proc_maps__parse_line("\n1000-2000 r-xp 00000000 08:01 42 /a\n", &l) == -EINVAL);
	CHECK(!proc_maps__parse_line("1000-2000 r-xp 00000000 08:01 42 /a\n", &l));
	CHECK(l.path_len == 2);
}

/* ... and a line cut short took its missing fields from the next one. */
TEST(fuzz_fixed_proc_maps_short_line)
{
	struct proc_maps_line l;

	CHECK(proc_maps__parse_line("1000-2000 r-xp 00000000 08:01\n3000-4000 r-xp 0 08:01 7 /b",
				    &l) == -EINVAL);
}
