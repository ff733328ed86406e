// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cache_file.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "elf/elf_file.h"
#include "elf/map_guard.h"
#include "elf/fde_table.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct elf_file {
	unsigned int refs;
	Elf *elf;
	void *image;	     /* the in-memory image @elf reads, or NULL for a mapped file */
	const void *guarded; /* the mapping map_guard.h guards, or NULL */
	char *name;
	char *build_id; /* hex; NULL when none */
	uid_t owner;	/* of the file opened; (uid_t)-1 for an image in memory */
	struct elf_segment *segs;
	size_t nr_segs;

	/* Read the first time they are asked for. */
	Dwarf *dwarf;
	Dwarf_CFI *eh_cfi; /* ours to dwarf_cfi_end() */
	struct fde_table *fdes;
	bool dwarf_read, eh_cfi_read, fdes_read;
	bool is_v8, is_v8_read;
};

static void hex_encode(char *out, const unsigned char *in, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * len] = '\0';
}

/* Look for an NT_GNU_BUILD_ID note in @data (of type ELF_T_NHDR or ELF_T_NHDR8). */
static int notes_build_id(Elf_Data *data, char *buf, size_t size)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nhdr;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		off = next;
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != sizeof("GNU") ||
		    memcmp(name, "GNU", sizeof("GNU")) || !nhdr.n_descsz ||
		    nhdr.n_descsz > ELF_BUILD_ID_MAX)
			continue;
		if (size < 2 * nhdr.n_descsz + 1)
			return -ENOSPC;
		hex_encode(buf, (const unsigned char *)data->d_buf + desc_off, nhdr.n_descsz);
		return 0;
	}
	return -ENOENT;
}

/*
 * The build-id from the PT_NOTE segments, which a loaded file always has;
 * else from SHT_NOTE sections (files without program headers, such as
 * separate debug files of old toolchains).
 */
static int find_build_id(Elf *elf, char *buf, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t nr_phdrs;
	int err;

	if (elf_getphdrnum(elf, &nr_phdrs))
		nr_phdrs = 0;
	for (size_t i = 0; i < nr_phdrs; i++) {
		GElf_Phdr phdr;
		Elf_Data *data;

		if (!gelf_getphdr(elf, i, &phdr) || phdr.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, phdr.p_offset, phdr.p_filesz,
					    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!data)
			continue;
		err = notes_build_id(data, buf, size);
		if (err != -ENOENT)
			return err;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		err = notes_build_id(data, buf, size);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

/*
 * Do the program and section header tables lie inside the file? libelf
 * opens a file cut short after its ELF header, and finds nothing in it.
 */
static bool headers_fit(Elf *elf)
{
	GElf_Ehdr ehdr;
	size_t size;

	if (!gelf_getehdr(elf, &ehdr) || !elf_rawfile(elf, &size))
		return false;
	if (ehdr.e_phoff && (ehdr.e_phoff > size ||
			     (uint64_t)ehdr.e_phnum * ehdr.e_phentsize > size - ehdr.e_phoff))
		return false;
	/* e_shnum 0 with e_shoff set: the count is in section 0, which must fit too. */
	if (ehdr.e_shoff &&
	    (ehdr.e_shoff > size ||
	     (uint64_t)(ehdr.e_shnum ? ehdr.e_shnum : 1) * ehdr.e_shentsize > size - ehdr.e_shoff))
		return false;
	return true;
}

static int read_segments(struct elf_file *f)
{
	size_t nr_phdrs;

	if (elf_getphdrnum(f->elf, &nr_phdrs) || !nr_phdrs)
		return 0; /* no program headers: no offsets to translate */
	f->segs = calloc(nr_phdrs, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (size_t i = 0; i < nr_phdrs; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(f->elf, i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		f->segs[f->nr_segs++] = (struct elf_segment){
			.offset = phdr.p_offset,
			.filesz = phdr.p_filesz,
			.vaddr = phdr.p_vaddr,
			.exec = phdr.p_flags & PF_X,
		};
	}
	return 0;
}

/*
 * The size compressed section @scn says it inflates to: its Chdr's for
 * SHF_COMPRESSED, the big-endian size after GNU's "ZLIB" magic for
 * .zdebug_*; 0 when it is not compressed or says nothing readable. libelf
 * allocates this size and inflates into it, never more.
 */
static uint64_t inflated_size(Elf_Scn *scn, const GElf_Shdr *shdr, const char *sname)
{
	const unsigned char *p;
	uint64_t size = 0;
	Elf_Data *data;
	GElf_Chdr chdr;

	if (shdr->sh_flags & SHF_COMPRESSED)
		return gelf_getchdr(scn, &chdr) ? chdr.ch_size : 0;
	if (!sname || strncmp(sname, ".zdebug", 7))
		return 0;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 12 || memcmp(data->d_buf, "ZLIB", 4))
		return 0;
	p = data->d_buf;
	for (int i = 4; i < 12; i++)
		size = size << 8 | p[i];
	return size;
}

/*
 * Make the compressed sections of @elf that would inflate past the budget
 * (elf_file.h) read as SHT_NOBITS, before libdw or anyone decompresses
 * them: libdw inflates every debug section it knows when it opens a file,
 * and a file is its owner's to make a zlib bomb of. One warning a file.
 * -EFBIG when a section cannot be dropped: the file is not read then.
 */
static int drop_inflating_sections(Elf *elf, const char *name)
{
	uint64_t total = 0, first_size = 0, first_packed = 0;
	const char *first = NULL;
	size_t shstrndx, dropped = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		uint64_t size, budget;
		const char *sname;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
			continue;
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		size = inflated_size(scn, &shdr, sname);
		if (!size)
			continue;
		budget = shdr.sh_size > ELF_INFLATE_MAX / ELF_INFLATE_RATIO ?
				 ELF_INFLATE_MAX :
				 ELF_INFLATE_RATIO * shdr.sh_size;
		if (budget < ELF_INFLATE_FLOOR)
			budget = ELF_INFLATE_FLOOR;
		if (size <= budget && size <= ELF_INFLATE_MAX - total) {
			total += size;
			continue;
		}
		if (!dropped++) {
			first = sname ? sname : "?";
			first_size = size;
			first_packed = shdr.sh_size;
		}
		shdr.sh_type = SHT_NOBITS;
		if (!gelf_update_shdr(scn, &shdr)) {
			pr_warn("elf: ignoring '%s': cannot drop its compressed section '%s': %s",
				name, sname ? sname : "?", elf_errmsg(-1));
			return -EFBIG;
		}
	}
	if (dropped)
		pr_warn("elf: ignoring %zu compressed sections of '%s' ('%s': %llu bytes inflating to %llu): over the budget of %d times their size, %llu MiB a file",
			dropped, name, first, (unsigned long long)first_packed,
			(unsigned long long)first_size, ELF_INFLATE_RATIO, ELF_INFLATE_MAX >> 20);
	return 0;
}

/* Take over @elf (and @image, when not NULL) and read its headers. NULL with errno. */
static struct elf_file *elf_file__from_elf(Elf *elf, void *image, const char *name)
{
	char build_id[2 * ELF_BUILD_ID_MAX + 1];
	struct elf_file *f;
	int err;

	if (elf_kind(elf) != ELF_K_ELF || !headers_fit(elf)) {
		pr_debug("elf: '%s' is not an ELF file, or a truncated one", name);
		err = -ENOEXEC;
		goto out_end;
	}
	err = drop_inflating_sections(elf, name);
	if (err)
		goto out_end;
	f = calloc(1, sizeof(*f));
	if (!f) {
		err = -ENOMEM;
		goto out_end;
	}
	f->refs = 1;
	f->elf = elf;
	f->image = image;
	f->owner = (uid_t)-1;
	err = -ENOMEM;
	f->name = strdup(name);
	if (!f->name || read_segments(f))
		goto out_put;
	if (!find_build_id(elf, build_id, sizeof(build_id)) && !(f->build_id = strdup(build_id)))
		goto out_put;
	return f;

out_put:
	elf_file__put(f);
	errno = -err;
	return NULL;
out_end:
	elf_end(elf);
	free(image);
	errno = -err;
	return NULL;
}

static bool libelf_ready(void)
{
	if (elf_version(EV_CURRENT) != EV_NONE)
		return true;
	pr_debug("elf: cannot initialize libelf: %s", elf_errmsg(-1));
	errno = EINVAL;
	return false;
}

/* Guard the mapping of the file @elf reads (map_guard.h): its base, or NULL. */
static const void *guard(Elf *elf, const char *name)
{
	size_t size;
	const char *raw = elf_rawfile(elf, &size);
	int err;

	if (!raw || !size)
		return NULL;
	err = map_guard__add(raw, size);
	if (err) {
		pr_debug("elf: '%s' read unguarded: %s", name, strerror(-err));
		return NULL;
	}
	return raw;
}

static void unguard(const void *base)
{
	if (base)
		map_guard__remove(base);
}

struct elf_file *elf_file__open_fd(int fd, const char *name)
{
	const void *guarded;
	struct elf_file *f;
	struct stat st;
	Elf *elf;
	int err;

	if (!name)
		name = "(fd)";
	if (!libelf_ready())
		return NULL;
	/*
	 * Mapped private and writable, read copy-on-write: the budget of
	 * compressed sections rewrites the header of one it drops
	 * (drop_inflating_sections()), a page copied, never the file.
	 */
	elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (!elf) {
		pr_debug("elf: cannot read '%s': %s", name, elf_errmsg(-1));
		errno = ENOEXEC;
		return NULL;
	}
	/* Its owner may cut it short while we read it (map_guard.h). */
	guarded = guard(elf, name);
	/* Reads what is not mapped yet, then lets go of @fd (ELF_C_FDDONE). */
	if (elf_cntl(elf, ELF_C_FDREAD)) {
		pr_debug("elf: cannot read '%s': %s", name, elf_errmsg(-1));
		unguard(guarded);
		elf_end(elf);
		errno = EIO;
		return NULL;
	}
	f = elf_file__from_elf(elf, NULL, name);
	if (!f) {
		err = errno;
		unguard(guarded);
		errno = err;
		return NULL;
	}
	f->guarded = guarded;
	if (!fstat(fd, &st))
		f->owner = st.st_uid;
	return f;
}

struct elf_file *elf_file__open(const char *path)
{
	struct elf_file *f;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_debug("elf: cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	f = elf_file__open_fd(fd, path);
	err = errno;
	close(fd);
	errno = err;
	return f;
}

struct elf_file *elf_file__from_image(void *image, size_t size, const char *name)
{
	Elf *elf;

	if (!name)
		name = "(memory)";
	if (!libelf_ready()) {
		free(image);
		return NULL;
	}
	elf = elf_memory(image, size);
	if (!elf) {
		pr_debug("elf: cannot read '%s': %s", name, elf_errmsg(-1));
		free(image);
		errno = ENOEXEC;
		return NULL;
	}
	return elf_file__from_elf(elf, image, name);
}

struct elf_file *elf_file__get(struct elf_file *f)
{
	f->refs++;
	return f;
}

void elf_file__put(struct elf_file *f)
{
	if (!f || --f->refs)
		return;
	/* The FDE table and the CFI point into the image: they go first. */
	fde_table__free(f->fdes);
	if (f->eh_cfi)
		dwarf_cfi_end(f->eh_cfi);
	dwarf_end(f->dwarf);
	if (f->guarded)
		map_guard__remove(f->guarded);
	elf_end(f->elf);
	free(f->image);
	free(f->segs);
	free(f->build_id);
	free(f->name);
	free(f);
}

Elf *elf_file__elf(const struct elf_file *f)
{
	return f->elf;
}

const char *elf_file__name(const struct elf_file *f)
{
	return f->name;
}

uid_t elf_file__owner(const struct elf_file *f)
{
	return f->owner;
}

bool elf_file__cacheable(const struct elf_file *f)
{
	return f->owner == 0 || f->owner == geteuid();
}

const char *elf_file__build_id(const struct elf_file *f)
{
	return f->build_id;
}

const struct elf_segment *elf_file__segments(const struct elf_file *f, size_t *nr)
{
	*nr = f->nr_segs;
	return f->segs;
}

const struct elf_segment *elf_file__segment(const struct elf_file *f, uint64_t offset)
{
	const struct elf_segment *found = NULL;

	for (size_t i = 0; i < f->nr_segs; i++) {
		const struct elf_segment *s = &f->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz &&
		    (!found || (s->exec && !found->exec)))
			found = s;
	}
	return found;
}

int elf_file__offset_to_vaddr(const struct elf_file *f, uint64_t offset, uint64_t *vaddr)
{
	const struct elf_segment *s = elf_file__segment(f, offset);

	if (!s)
		return -ENOENT;
	*vaddr = offset - s->offset + s->vaddr;
	return 0;
}

Dwarf *elf_file__dwarf(struct elf_file *f)
{
	if (!f->dwarf_read) {
		f->dwarf_read = true;
		f->dwarf = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	}
	return f->dwarf;
}

Dwarf_CFI *elf_file__eh_cfi(struct elf_file *f)
{
	if (!f->eh_cfi_read) {
		f->eh_cfi_read = true;
		f->eh_cfi = dwarf_getcfi_elf(f->elf);
	}
	return f->eh_cfi;
}

Dwarf_CFI *elf_file__debug_cfi(struct elf_file *f)
{
	Dwarf *dwarf = elf_file__dwarf(f);

	/* libdw keeps it with the Dwarf handle, and reads it once. */
	return dwarf ? dwarf_getcfi(dwarf) : NULL;
}

const struct fde_table *elf_file__fdes_built(const struct elf_file *f)
{
	return f->fdes_read ? f->fdes : NULL;
}

void elf_file__set_fdes(struct elf_file *f, struct fde_table *fdes)
{
	if (f->fdes_read) {
		fde_table__free(fdes);
		return;
	}
	f->fdes_read = true;
	f->fdes = fdes;
}

const struct fde_table *elf_file__fdes(struct elf_file *f)
{
	if (!f->fdes_read) {
		f->fdes_read = true;
		f->fdes = fde_table__new(f->elf);
	}
	return f->fdes;
}

int elf_file__read_build_id(int fd, char *buf, size_t size)
{
	const void *guarded;
	Elf *elf;
	int err;

	if (!libelf_ready())
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	guarded = guard(elf, "(fd)");
	err = elf_kind(elf) == ELF_K_ELF ? find_build_id(elf, buf, size) : -ENOEXEC;
	unguard(guarded);
	elf_end(elf);
	return err;
}

Elf_Data *elf__section_data(Elf *elf, const char *name, uint64_t *addr)
{
	Elf_Data *data;
	GElf_Shdr shdr;
	Elf_Scn *scn;

	scn = elf__find_section(elf, name, &shdr);
	if (!scn || ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0))
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return NULL;
	*addr = shdr.sh_addr;
	return data;
}

/* The section called @name that has contents, or NULL. */
Elf_Scn *elf__find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, shdr) || shdr->sh_type == SHT_NOBITS)
			continue;
		sname = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (sname && !strcmp(sname, name))
			return scn;
	}
	return NULL;
}

/* elf__find_symbol() in the symbol tables of types @types[0 .. @nr_types - 1], in order. */
static int find_symbol_in(Elf *elf, const Elf64_Word *types, size_t nr_types, const char *name,
			  uint64_t *value, uint64_t *size)
{
	for (size_t t = 0; t < nr_types; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr shdr;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != types[t] ||
			    !shdr.sh_entsize || !(data = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
				GElf_Sym sym;
				const char *s;

				if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				s = elf_strptr(elf, shdr.sh_link, sym.st_name);
				if (s && !strcmp(s, name)) {
					*value = sym.st_value;
					*size = sym.st_size;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

int elf__find_symbol(Elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
	static const Elf64_Word types[] = { SHT_DYNSYM, SHT_SYMTAB };

	return find_symbol_in(elf, types, 2, name, value, size);
}

bool elf_file__is_v8(struct elf_file *f)
{
	static const Elf64_Word dynsym = SHT_DYNSYM;
	uint64_t value, size;

	/* A linear search of .dynsym, asked by the unwinder and by each process's check. */
	if (!f->is_v8_read) {
		f->is_v8_read = true;
		f->is_v8 =
			!find_symbol_in(f->elf, &dynsym, 1, "v8dbg_off_fp_function", &value, &size);
	}
	return f->is_v8;
}

const unsigned char *elf__code_bytes(Elf *elf, uint64_t vaddr, uint64_t size)
{
	return elf__bytes_at(elf, vaddr, size, true);
}

const unsigned char *elf__bytes_at(Elf *elf, uint64_t vaddr, uint64_t size, bool code)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    (code && !(shdr.sh_flags & SHF_EXECINSTR)) || vaddr < shdr.sh_addr ||
		    vaddr - shdr.sh_addr > shdr.sh_size ||
		    size > shdr.sh_size - (vaddr - shdr.sh_addr))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < shdr.sh_size)
			return NULL;
		return (const unsigned char *)data->d_buf + (vaddr - shdr.sh_addr);
	}
	return NULL;
}

uint64_t elf__fingerprint(Elf *elf)
{
	const char *raw;
	GElf_Ehdr eh;
	uint64_t sum;
	size_t size;

	raw = elf_rawfile(elf, &size);
	if (!raw || !gelf_getehdr(elf, &eh))
		return 0;
	sum = hash_mix(size, cache_file__checksum(raw, eh.e_ehsize < size ? eh.e_ehsize : size));
	if (eh.e_shoff && eh.e_shoff < size &&
	    (uint64_t)eh.e_shnum * eh.e_shentsize <= size - eh.e_shoff)
		sum = hash_mix(sum, cache_file__checksum(raw + eh.e_shoff,
							 (size_t)eh.e_shnum * eh.e_shentsize));
	return sum;
}
