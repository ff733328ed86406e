// SPDX-License-Identifier: GPL-2.0-only
/*
 * A compressed debug section, as a target's file may hold any: the input is
 * a flags byte (bit 0: GNU's .zdebug_info, whose "ZLIB" header and size are
 * in the input; else .debug_info with SHF_COMPRESSED, whose Elf64_Chdr is),
 * then the section's bytes, put in a minimal ELF image read by
 * elf_file__from_image(). The budget (elf_file.h) must hold: a section the
 * image keeps inflates, if it does at all, to no more than the budget lets
 * it; then libdw opens the image, inflating what it finds.
 */
#include <gelf.h>
#include <stdbool.h>

#include "elf/elf_file.h"
#include "fuzz.h"

static const char compressed_fuzz_strtab[] = "\0.shstrtab\0.debug_info\0.zdebug_info";

/* An ELF64 image: no program headers, sections null, the input's, .shstrtab. */
static void *compressed_fuzz_image(const uint8_t *data, size_t size, bool gnu, size_t *len)
{
	size_t data_off = sizeof(Elf64_Ehdr), str_off = data_off + size;
	size_t sh_off = (str_off + sizeof(compressed_fuzz_strtab) + 7) & ~(size_t)7;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;
	uint8_t *image;

	*len = sh_off + 3 * sizeof(Elf64_Shdr);
	image = calloc(1, *len);
	if (!image)
		return NULL;
	eh = (Elf64_Ehdr *)image;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(image + data_off, data, size);
	memcpy(image + str_off, compressed_fuzz_strtab, sizeof(compressed_fuzz_strtab));
	sh = (Elf64_Shdr *)(image + sh_off);
	sh[1] = (Elf64_Shdr){
		.sh_name = gnu ? 23 : 11,
		.sh_type = SHT_PROGBITS,
		.sh_flags = gnu ? 0 : SHF_COMPRESSED,
		.sh_offset = data_off,
		.sh_size = size,
		.sh_addralign = 1,
	};
	sh[2] = (Elf64_Shdr){
		.sh_name = 1,
		.sh_type = SHT_STRTAB,
		.sh_offset = str_off,
		.sh_size = sizeof(compressed_fuzz_strtab),
		.sh_addralign = 1,
	};
	return image;
}

static int fuzz_compressed(const uint8_t *data, size_t size)
{
	uint64_t budget;
	struct elf_file *f;
	GElf_Shdr shdr;
	Elf_Data *out;
	Elf_Scn *scn;
	bool gnu;
	void *image;
	size_t len;

	fuzz_log_init();
	if (!size)
		return 0;
	gnu = data[0] & 1;
	image = compressed_fuzz_image(data + 1, size - 1, gnu, &len);
	if (!image)
		return 0;
	f = elf_file__from_image(image, len, "fuzz.so");
	if (!f)
		return 0;
	scn = elf_getscn(elf_file__elf(f), 1);
	FUZZ_CHECK(scn && gelf_getshdr(scn, &shdr));
	budget = shdr.sh_size * ELF_INFLATE_RATIO;
	if (budget < ELF_INFLATE_FLOOR)
		budget = ELF_INFLATE_FLOOR;
	if (shdr.sh_type != SHT_NOBITS &&
	    ((gnu ? elf_compress_gnu(scn, 0, 0) : elf_compress(scn, 0, 0)) == 1) &&
	    (out = elf_getdata(scn, NULL)))
		FUZZ_CHECK(out->d_size <= budget && out->d_size <= ELF_INFLATE_MAX);
	elf_file__dwarf(f);
	elf_file__put(f);
	return 0;
}

FUZZ_TARGET(fuzz_compressed)
