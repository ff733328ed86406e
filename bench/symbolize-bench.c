// SPDX-License-Identifier: GPL-2.0-only
/*
 * symbolize-bench FILE [LOOKUPS]: load FILE's symbol table and look up
 * LOOKUPS (default 2,000,000) pseudo-random addresses inside its symbols'
 * range, the way the symbolizer does per distinct frame. Prints
 * "symbols N", "load_ns N", "lookups_per_sec N" and "hit_ratio F".
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "symbolize/elf_symtab.h"

int main(int argc, char **argv)
{
	unsigned long lookups = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, lo, hi, t0, t1, *addrs;
	const struct elf_sym *syms;
	struct elf_symtab *tab;
	unsigned long hits = 0;
	size_t nr;

	if (argc < 2) {
		fprintf(stderr, "usage: symbolize-bench FILE [LOOKUPS]\n");
		return 2;
	}
	t0 = now_ns();
	tab = elf_symtab__open(argv[1]);
	t1 = now_ns();
	if (!tab) {
		perror(argv[1]);
		return 1;
	}
	syms = elf_symtab__syms(tab, &nr);
	if (!nr || !lookups) {
		fprintf(stderr, "symbolize-bench: '%s' has no function symbols\n", argv[1]);
		return 1;
	}
	printf("symbols %zu\nload_ns %llu\n", nr, (unsigned long long)(t1 - t0));

	lo = syms[0].addr;
	hi = syms[nr - 1].addr + syms[nr - 1].size;
	addrs = malloc(lookups * sizeof(*addrs));
	if (!addrs)
		return 1;
	for (unsigned long i = 0; i < lookups; i++)
		addrs[i] = lo + next_random(&seed) % (hi - lo);

	t0 = now_ns();
	for (unsigned long i = 0; i < lookups; i++)
		hits += elf_symtab__lookup(tab, addrs[i]) != NULL;
	t1 = now_ns();
	printf("lookups_per_sec %.0f\nhit_ratio %.3f\n", lookups * 1e9 / (double)(t1 - t0),
	       (double)hits / lookups);
	free(addrs);
	elf_symtab__free(tab);
	return 0;
}
