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
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_REPLAY
#include "fuzz/fuzz_cmdline.c"
#include "fuzz/fuzz_compressed.c"
#include "fuzz/fuzz_serve_request.c"
#include "fuzz/fuzz_die_reader.c"
#include "fuzz/fuzz_elf.c"
#include "fuzz/fuzz_event.c"
#include "fuzz/fuzz_gopclntab.c"
#include "fuzz/fuzz_kallsyms.c"
#include "fuzz/fuzz_line_table.c"
#include "fuzz/fuzz_perf_map.c"
#include "fuzz/fuzz_proc_maps.c"
#include "fuzz/fuzz_python_lines.c"
#include "fuzz/fuzz_symbolize_addresses.c"
#include "fuzz/fuzz_unwind_cache.c"
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

TEST(fuzz_inputs_cmdline)
{
	CHECK(!replay("fuzz_cmdline", fuzz_cmdline));
}

TEST(fuzz_inputs_compressed)
{
	CHECK(!replay("fuzz_compressed", fuzz_compressed));
}

TEST(fuzz_inputs_serve_request)
{
	CHECK(!replay("fuzz_serve_request", fuzz_serve_request));
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

TEST(fuzz_inputs_kallsyms)
{
	CHECK(!replay("fuzz_kallsyms", fuzz_kallsyms));
}

TEST(fuzz_inputs_unwind_cache)
{
	CHECK(!replay("fuzz_unwind_cache", fuzz_unwind_cache));
}

TEST(fuzz_inputs_gopclntab)
{
	CHECK(!replay("fuzz_gopclntab", fuzz_gopclntab));
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

TEST(fuzz_inputs_python_lines)
{
	CHECK(!replay("fuzz_python_lines", fuzz_python_lines));
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

/*
 * A line program whose address went back within a sequence gave rows out
 * of order, which the lookups' binary search cannot use: now the program
 * ends there, keeping the sequences before.
 */
TEST(fuzz_fixed_line_table_address_goes_back)
{
	/* clang-format off */
	static const uint8_t prog[] = {
		0x4f, 0, 0, 0,			/* unit_length */
		4, 0,				/* version */
		27, 0, 0, 0,			/* header_length */
		1, 1, 1, 0xfb, 14, 13,		/* min_inst_length ... opcode_base */
		0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, /* standard_opcode_lengths */
		0,				/* no include directories */
		'a', '.', 'c', 0, 0, 0, 0, 0,	/* file 1, then the end of files */
		/* 0x1000: a.c:1, to 0x1010. */
		0, 9, DW_LNE_set_address, 0x00, 0x10, 0, 0, 0, 0, 0, 0, DW_LNS_copy,
		DW_LNS_advance_pc, 0x10, 0, 1, DW_LNE_end_sequence,
		/* 0x3000, then back to 0x2000. */
		0, 9, DW_LNE_set_address, 0x00, 0x30, 0, 0, 0, 0, 0, 0, DW_LNS_copy,
		0, 9, DW_LNE_set_address, 0x00, 0x20, 0, 0, 0, 0, 0, 0, DW_LNS_copy,
		DW_LNS_advance_pc, 0x10, 0, 1, DW_LNE_end_sequence,
	};
	/* clang-format on */
	struct line_sections s = { .line = prog, .line_size = sizeof(prog) };
	struct line_table t;

	CHECK(!line_table__read(&t, &s, 0, NULL));
	CHECK_U64(t.nr_rows, 2);
	CHECK_U64(t.rows[0].addr, 0x1000);
	CHECK_STR(t.rows[0].file, "a.c");
	CHECK_U64(t.rows[1].addr, 0x1010);
	CHECK(!t.rows[1].file);
	line_table__release(&t);
}
