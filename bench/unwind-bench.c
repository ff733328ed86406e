// SPDX-License-Identifier: GPL-2.0-only
/*
 * unwind-bench FILE [ROUNDS]: build the unwind table of FILE (what the
 * collector does for every file a profiled process maps) ROUNDS times
 * (default 3), each from a freshly opened file so that nothing libdw caches
 * carries over. Prints "fdes N", "rows N", "unsupported N", and per round
 * "build_ns N" and "rows_per_sec N".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "collector/unwind_table.h"
#include "elf/elf_file.h"

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 3;

	if (argc < 2) {
		fprintf(stderr, "usage: unwind-bench FILE [ROUNDS]\n");
		return 2;
	}
	for (unsigned long i = 0; i < rounds; i++) {
		struct elf_file *f = elf_file__open(argv[1]);
		struct unwind_table t = { 0 };
		uint64_t t0, t1;
		int err;

		if (!f) {
			fprintf(stderr, "unwind-bench: cannot open '%s': %s\n", argv[1],
				strerror(errno));
			return 1;
		}
		t0 = now_ns();
		err = unwind_table__build(&t, f);
		t1 = now_ns();
		if (err) {
			fprintf(stderr, "unwind-bench: no table for '%s': %s\n", argv[1],
				strerror(-err));
			return 1;
		}
		if (!i)
			printf("fdes %zu\nrows %zu\nunsupported %zu\n", t.nr_fdes, t.nr,
			       t.nr_unsupported);
		printf("build_ns %llu\nrows_per_sec %.0f\n", (unsigned long long)(t1 - t0),
		       t.nr * 1e9 / (double)(t1 - t0));
		unwind_table__release(&t);
		elf_file__put(f);
	}
	return 0;
}
