// SPDX-License-Identifier: GPL-2.0-only
/*
 * dwarf-bench FILE [ADDRESSES]: the symbolizer's engine on FILE (a module:
 * symbols, DWARF lines and inline chains), without the command line's
 * memo and formatting. Draws ADDRESSES (default 100,000) pseudo-random
 * addresses inside FILE's function symbols, then looks them all up three
 * times: once to build the tables of the units they fall in, once with the
 * tables built, and 200 of them over and over (a profile's hot frames).
 * Prints "index_ns N" (the first pass), "lookups_per_sec N" (the second),
 * "repeated_per_sec N" and "with_lines F" (the share answered with a line).
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "symbolize/elf_symtab.h"
#include "symbolize/module.h"

#define HOT_ADDRESSES 200
#define HOT_LOOKUPS 2000000

/* Look up @n addresses; returns how many had a source line. */
static unsigned long lookup_all(struct module *mod, const uint64_t *addrs, unsigned long n)
{
	struct module_loc locs[MODULE_MAX_LOCS];
	unsigned long lines = 0;

	for (unsigned long i = 0; i < n; i++)
		lines += module__lookup(mod, addrs[i], locs) > 0 && locs[0].line;
	return lines;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000, lines;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, t0, t1, t2, t3, *addrs, *hot;
	const struct elf_sym *syms;
	struct elf_symtab *tab;
	struct module *mod;
	size_t nr;

	if (argc < 2 || !n) {
		fprintf(stderr, "usage: dwarf-bench FILE [ADDRESSES]\n");
		return 2;
	}
	tab = elf_symtab__open(argv[1]);
	if (!tab) {
		perror(argv[1]);
		return 1;
	}
	syms = elf_symtab__syms(tab, &nr);
	mod = module__new(tab, argv[1], NULL);
	addrs = malloc(n * sizeof(*addrs));
	hot = malloc(HOT_LOOKUPS * sizeof(*hot));
	if (!nr || !mod || !addrs || !hot) {
		fprintf(stderr, "dwarf-bench: '%s': no function symbols, or out of memory\n",
			argv[1]);
		return 1;
	}
	/* Uniform over the symbols, then within one: enough for a benchmark. */
	for (unsigned long i = 0; i < n; i++) {
		const struct elf_sym *s = &syms[next_random(&seed) % nr];

		addrs[i] = s->addr + (s->size ? next_random(&seed) % s->size : 0);
	}
	for (unsigned long i = 0; i < HOT_LOOKUPS; i++)
		hot[i] = addrs[i % (n < HOT_ADDRESSES ? n : HOT_ADDRESSES)];

	t0 = now_ns();
	lookup_all(mod, addrs, n);
	t1 = now_ns();
	lines = lookup_all(mod, addrs, n);
	t2 = now_ns();
	lookup_all(mod, hot, HOT_LOOKUPS);
	t3 = now_ns();

	printf("index_ns %llu\n", (unsigned long long)(t1 - t0));
	printf("lookups_per_sec %.0f\n", n * 1e9 / (t2 - t1));
	printf("repeated_per_sec %.0f\n", HOT_LOOKUPS * 1e9 / (t3 - t2));
	printf("with_lines %.3f\n", (double)lines / n);
	free(hot);
	free(addrs);
	module__free(mod);
	return 0;
}
