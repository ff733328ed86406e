// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of elf/fde_table: the FDEs of the stripped fixture program,
 * held against the function addresses the program prints itself (never
 * against what our own ELF code read), and the same file with its
 * .eh_frame cut short or damaged byte by byte.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/fde_table.h"
#include "test.h"

/* The fixture is built for this machine: its headers are this machine's. */
typedef ElfW(Ehdr) ehdr_t;
typedef ElfW(Shdr) shdr_t;

/* The functions of symbols.c that the compiler wrote, with CFI. */
static const char *const compiled[] = { "fixture_alpha", "fixture_beta", "fixture_local", "main" };
#define NR_COMPILED (sizeof(compiled) / sizeof(compiled[0]))

struct fixture_addrs {
	uint64_t compiled[NR_COMPILED];
	uint64_t sized, after; /* asm of symbols.c, without CFI */
};

/* Run the stripped fixture program and take the link-time addresses it prints; 0 or -1. */
static int fixture_addrs(struct fixture_addrs *a)
{
	char cmd[4200], line[256], name[64];
	unsigned long long addr, vaddr;
	int found = 0;
	FILE *f;

	memset(a, 0, sizeof(*a));
	snprintf(cmd, sizeof(cmd), "'%s'", test__fixture("symbols-stripped"));
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "sym %63s %llx %llx", name, &addr, &vaddr) != 3)
			continue;
		for (size_t i = 0; i < NR_COMPILED; i++) {
			if (!strcmp(name, compiled[i])) {
				a->compiled[i] = vaddr;
				found++;
			}
		}
		if (!strcmp(name, "fixture_sized")) {
			a->sized = vaddr;
			found++;
		} else if (!strcmp(name, "fixture_after")) {
			a->after = vaddr;
			found++;
		}
	}
	return pclose(f) == 0 && found == NR_COMPILED + 2 ? 0 : -1;
}

static struct fde_table *table_of(const void *image, size_t size)
{
	struct fde_table *tab;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, size);
	if (!elf)
		return NULL;
	tab = fde_table__new(elf);
	elf_end(elf);
	return tab;
}

TEST(fde_table_functions)
{
	struct fixture_addrs a;
	struct fde_table *tab;
	uint64_t start;
	Elf *elf;
	int fd;

	CHECK(fixture_addrs(&a) == 0);
	fd = open(test__fixture("symbols-stripped"), O_RDONLY);
	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	tab = elf ? fde_table__new(elf) : NULL;
	elf_end(elf);
	close(fd);
	CHECK(tab);
	CHECK(fde_table__nr(tab) >= NR_COMPILED);
	for (size_t i = 0; i < NR_COMPILED; i++) {
		/* Its first byte and one inside: the function's start both times. */
		start = 0;
		if (fde_table__lookup(tab, a.compiled[i], &start) || start != a.compiled[i] ||
		    fde_table__lookup(tab, a.compiled[i] + 4, &start) || start != a.compiled[i]) {
			test__fail(__FILE__, __LINE__, "%s at 0x%llx: 0x%llx", compiled[i],
				   (unsigned long long)a.compiled[i], (unsigned long long)start);
			break;
		}
	}
	/* Code the assembler wrote with no CFI, and no code at all. */
	CHECK(fde_table__lookup(tab, a.sized + 4, &start) == -ENOENT);
	CHECK(fde_table__lookup(tab, a.after, &start) == -ENOENT);
	CHECK(fde_table__lookup(tab, 0, &start) == -ENOENT);
	CHECK(fde_table__lookup(tab, UINT64_MAX, &start) == -ENOENT);
	fde_table__free(tab);
	fde_table__free(NULL);
}

/* The section header of .eh_frame in @image (a file of this machine's class); NULL if none. */
static shdr_t *eh_frame_shdr(void *image, size_t size)
{
	ehdr_t *ehdr = image;
	shdr_t *shdrs, *strtab;

	if (size < sizeof(*ehdr) || ehdr->e_shoff + ehdr->e_shnum * sizeof(*shdrs) > size ||
	    ehdr->e_shstrndx >= ehdr->e_shnum)
		return NULL;
	shdrs = (shdr_t *)((char *)image + ehdr->e_shoff);
	strtab = &shdrs[ehdr->e_shstrndx];
	for (int i = 0; i < ehdr->e_shnum; i++) {
		size_t name = strtab->sh_offset + shdrs[i].sh_name;

		if (name + sizeof(".eh_frame") <= size &&
		    !strcmp((char *)image + name, ".eh_frame") &&
		    shdrs[i].sh_offset + shdrs[i].sh_size <= size)
			return &shdrs[i];
	}
	return NULL;
}

/*
 * .eh_frame cut short at every length: the FDEs before the cut are found as
 * in the whole file, the others not at all, never with another start.
 */
static void check_cut_short(void *image, size_t size, const struct fixture_addrs *a)
{
	shdr_t *eh = eh_frame_shdr(image, size);
	uint64_t whole, start;
	size_t eh_size;

	CHECK(eh);
	eh_size = eh->sh_size;
	for (size_t cut = 0; cut <= eh_size; cut++) {
		struct fde_table *tab;

		eh->sh_size = cut;
		tab = table_of(image, size);
		CHECK(tab);
		for (size_t i = 0; i < NR_COMPILED; i++) {
			whole = a->compiled[i];
			if (!fde_table__lookup(tab, whole + 4, &start) && start != whole) {
				test__fail(__FILE__, __LINE__, "cut at %zu: %s at 0x%llx", cut,
					   compiled[i], (unsigned long long)start);
				break;
			}
			/* The whole section: every function is found. */
			if (cut == eh_size && fde_table__lookup(tab, whole + 4, &start)) {
				test__fail(__FILE__, __LINE__, "%s not found", compiled[i]);
				break;
			}
		}
		fde_table__free(tab);
		if (test__failed())
			break;
	}
	eh->sh_size = eh_size;
}

/* Each byte of .eh_frame inverted in turn: a table all the same, whatever it holds. */
static void check_damaged(void *image, size_t size)
{
	shdr_t *eh = eh_frame_shdr(image, size);
	unsigned char *bytes = image;

	CHECK(eh);
	for (size_t off = eh->sh_offset; off < eh->sh_offset + eh->sh_size; off++) {
		struct fde_table *tab;
		uint64_t start;

		bytes[off] ^= 0xff;
		tab = table_of(image, size);
		bytes[off] ^= 0xff;
		CHECK(tab);
		for (size_t i = 0; i < fde_table__nr(tab); i++)
			fde_table__lookup(tab, i * 16, &start);
		fde_table__free(tab);
	}
}

TEST(fde_table_bad_cfi)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	struct fixture_addrs a;
	struct fde_table *tab;
	uint64_t start;
	size_t size;
	void *image;

	/* Not ELF: no CFI, no error. */
	tab = table_of(text, sizeof(text));
	CHECK(tab);
	CHECK_U64(fde_table__nr(tab), 0);
	CHECK(fde_table__lookup(tab, 0x1000, &start) == -ENOENT);
	fde_table__free(tab);

	CHECK(fixture_addrs(&a) == 0);
	image = test__read_file(test__fixture("symbols-stripped"), &size);
	CHECK(image);
	check_cut_short(image, size, &a);
	if (!test__failed())
		check_damaged(image, size);
	free(image);
}
