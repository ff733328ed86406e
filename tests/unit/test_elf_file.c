// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of elf/elf_file's budget for compressed sections, on the symbolizer's
 * fixture with its debug sections compressed (symbols-zlib: SHF_COMPRESSED;
 * symbols-zlib-gnu: .zdebug_*), made into bombs in memory by rewriting the
 * size .debug_info claims to inflate to.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "elf/elf_file.h"
#include "test.h"

/* The header of the section called @name (or GNU's .z@name), false when there is none. */
static bool find_shdr(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, shdr))
			continue;
		sname = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (sname && (!strcmp(sname, name) ||
			      (!strncmp(sname, ".z", 2) && !strcmp(sname + 2, name + 1))))
			return true;
	}
	return false;
}

/* @name read whole into memory, its .debug_info claiming @claim bytes once inflated. */
static void *make_bomb(const char *name, uint64_t claim, size_t *size)
{
	unsigned char *image = test__read_file(test__fixture(name), size);
	GElf_Shdr shdr;
	Elf *elf;

	if (!image)
		return NULL;
	elf = elf_memory((char *)image, *size);
	if (!elf || !find_shdr(elf, ".debug_info", &shdr) || shdr.sh_offset + 24 > *size) {
		elf_end(elf);
		free(image);
		return NULL;
	}
	elf_end(elf);
	if (shdr.sh_flags & SHF_COMPRESSED) {
		/* Elf64_Chdr: ch_type, ch_reserved, then ch_size (little-endian here). */
		memcpy(image + shdr.sh_offset + 8, &claim, sizeof(claim));
	} else {
		/* "ZLIB", then the size in big-endian. */
		for (int i = 0; i < 8; i++)
			image[shdr.sh_offset + 4 + i] = claim >> (56 - 8 * i);
	}
	return image;
}

static void check_within_budget(const char *name)
{
	log_print_fn old = test__capture_warnings();
	struct elf_file *f;
	GElf_Shdr shdr;

	test__nr_warnings = 0;
	f = elf_file__open(test__fixture(name));
	log_set_print(old);
	CHECK(f);
	if (!f)
		return;
	CHECK(test__nr_warnings == 0);
	CHECK(find_shdr(elf_file__elf(f), ".debug_info", &shdr));
	CHECK(shdr.sh_type == SHT_PROGBITS);
	/* libdw inflates it and reads it. */
	CHECK(elf_file__dwarf(f));
	elf_file__put(f);
}

TEST(elf_file_compressed_within_budget)
{
	check_within_budget("symbols-zlib");
	check_within_budget("symbols-zlib-gnu");
}

static void check_bomb(const char *name)
{
	Dwarf_Off next;
	size_t hsize;
	Dwarf *dwarf;
	log_print_fn old;
	struct elf_file *f;
	GElf_Shdr shdr;
	size_t size;
	void *image;

	image = make_bomb(name, 1ULL << 40, &size);
	CHECK(image);
	if (!image)
		return;
	old = test__capture_warnings();
	test__nr_warnings = 0;
	f = elf_file__from_image(image, size, "bomb.so");
	log_set_print(old);
	CHECK(f);
	if (!f)
		return;
	/* One line naming the file and the section. */
	CHECK(test__nr_warnings == 1);
	CHECK(strstr(test__last_warning, "'bomb.so'"));
	CHECK(strstr(test__last_warning, "debug_info"));
	/* Dropped: it reads as having no contents, and libdw finds no unit in it. */
	CHECK(find_shdr(elf_file__elf(f), ".debug_info", &shdr));
	CHECK(shdr.sh_type == SHT_NOBITS);
	dwarf = elf_file__dwarf(f);
	CHECK(!dwarf || dwarf_nextcu(dwarf, 0, &next, &hsize, NULL, NULL, NULL) != 0);
	/* The sections within the budget are kept. */
	CHECK(find_shdr(elf_file__elf(f), ".debug_line", &shdr));
	CHECK(shdr.sh_type == SHT_PROGBITS);
	CHECK(elf_file__build_id(f));
	elf_file__put(f);
}

TEST(elf_file_compressed_bomb_dropped)
{
	check_bomb("symbols-zlib");
	check_bomb("symbols-zlib-gnu");
}

/* The same from a file, which libelf maps: the header is rewritten in a private copy. */
TEST(elf_file_compressed_bomb_file)
{
	char path[] = "/tmp/profiler-test-bomb-XXXXXX";
	log_print_fn old;
	struct elf_file *f;
	GElf_Shdr shdr;
	size_t size;
	void *image;
	int fd;

	image = make_bomb("symbols-zlib", 1ULL << 40, &size);
	CHECK(image);
	if (!image)
		return;
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, image, size) == (ssize_t)size);
	close(fd);
	free(image);
	old = test__capture_warnings();
	test__nr_warnings = 0;
	f = elf_file__open(path);
	log_set_print(old);
	CHECK(f);
	CHECK(test__nr_warnings == 1);
	if (f) {
		CHECK(find_shdr(elf_file__elf(f), ".debug_info", &shdr));
		CHECK(shdr.sh_type == SHT_NOBITS);
		elf_file__put(f);
	}
	/* The file itself is as it was. */
	f = NULL;
	image = test__read_file(path, &size);
	CHECK(image);
	if (image) {
		Elf *elf = elf_memory(image, size);

		CHECK(elf && find_shdr(elf, ".debug_info", &shdr) && shdr.sh_type == SHT_PROGBITS);
		elf_end(elf);
		free(image);
	}
	unlink(path);
}

/* 32 times the compressed size passes; past the floor and the ratio it does not. */
TEST(elf_file_compressed_budget_edges)
{
	log_print_fn old;
	struct elf_file *f;
	size_t size;
	void *image;

	/* Under the floor: kept whatever its ratio (it then fails to inflate, harmlessly). */
	image = make_bomb("symbols-zlib", ELF_INFLATE_FLOOR, &size);
	CHECK(image);
	old = test__capture_warnings();
	test__nr_warnings = 0;
	f = elf_file__from_image(image, size, "floor.so");
	CHECK(f);
	CHECK(test__nr_warnings == 0);
	elf_file__put(f);
	image = make_bomb("symbols-zlib", ELF_INFLATE_FLOOR + 1, &size);
	CHECK(image);
	test__nr_warnings = 0;
	f = elf_file__from_image(image, size, "over.so");
	log_set_print(old);
	CHECK(f);
	CHECK(test__nr_warnings == 1);
	elf_file__put(f);
}
