// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/proc_maps.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/strset.h"
#include "elf_symtab.h"
#include "kallsyms.h"
#include "symbolizer.h"

#define KERNEL_NAME "[kernel.kallsyms]"
#define UNKNOWN_NAME "[unknown]"
#define VDSO_NAME "[vdso]"
/* The vDSO is two to four pages; refuse to read anything much larger. */
#define VDSO_MAX_SIZE (1 << 20)
/* Frames come from blocks of this many, not one malloc() each. */
#define FRAMES_PER_BLOCK 1024

/* The symbols of one mapped file, by its (dev, ino). */
struct file_entry {
	const struct mapped_file *file;
	uint64_t dev, ino;
	const char *path;	/* file->path interned in symbolizer->strings */
	struct elf_symtab *tab; /* NULL: unreadable; owned by symbolizer->tabs */
};

/*
 * A handed-out mapping and what resolving addresses in it needs. Keyed by
 * (filename, start, limit, file_offset, tab): the same range of two files
 * with different contents (a library upgraded between two processes' starts)
 * gives two mappings, the same contents under two inodes one.
 */
struct mapping_entry {
	struct profile_mapping m;
	const struct elf_symtab *key_tab; /* the file's symbols; NULL for pseudo mappings */
	struct elf_symtab *tab;		  /* NULL: no symbols */
	const char *basename;		  /* interned; for "BASENAME+0x..." names */
};

struct mapping_key {
	const char *filename; /* interned in symbolizer->strings */
	uint64_t start, limit, file_offset;
	const struct elf_symtab *tab;
};

struct frame_block {
	struct frame_block *next;
	size_t used;
	struct profile_frame frames[FRAMES_PER_BLOCK];
};

struct symbolizer {
	struct strset *strings;
	char *kallsyms_path;	    /* NULL: /proc/kallsyms */
	struct hashtab files;	    /* of struct file_entry */
	struct hashtab by_build_id; /* of struct elf_symtab, by build-id */
	struct hashtab mappings;    /* of struct mapping_entry */
	struct hashtab frames;	    /* of struct profile_frame, by (mapping, address, kernel) */
	struct elf_symtab **tabs;   /* every elf_symtab we opened */
	size_t nr_tabs, alloc_tabs;
	struct frame_block *blocks;
	struct profile_frame oom_frame; /* handed out when memory runs out */
	bool oom_warned;

	struct kallsyms *kallsyms;
	bool kallsyms_loaded;
	struct profile_mapping kernel_mapping;

	const char *unknown; /* interned "[unknown]" */
	struct symbolizer_stats stats;
};

/* --- hashing ------------------------------------------------------------ */

static bool file_eq(const void *entry, const void *key)
{
	const struct file_entry *e = entry;
	const struct mapped_file *f = key;

	return e->file == f && e->dev == f->dev && e->ino == f->ino;
}

static uint64_t file_hash(const struct mapped_file *f)
{
	return hash_mix(hash_mix(f->dev, f->ino), (uintptr_t)f);
}

static bool build_id_eq(const void *entry, const void *key)
{
	return !strcmp(elf_symtab__build_id(entry), key);
}

static bool mapping_eq(const void *entry, const void *key)
{
	const struct mapping_entry *e = entry;
	const struct mapping_key *k = key;

	return e->m.filename == k->filename && e->m.start == k->start && e->m.limit == k->limit &&
	       e->m.file_offset == k->file_offset && e->key_tab == k->tab;
}

static uint64_t mapping_hash(const struct mapping_key *k)
{
	uint64_t w[5] = { (uintptr_t)k->filename, k->start, k->limit, k->file_offset,
			  (uintptr_t)k->tab };

	return hash_words(0, w, 5);
}

struct frame_key {
	const struct profile_mapping *mapping;
	uint64_t address;
	bool kernel;
};

static bool frame_eq(const void *entry, const void *key)
{
	const struct profile_frame *f = entry;
	const struct frame_key *k = key;

	return f->address == k->address && f->mapping == k->mapping && f->kernel == k->kernel;
}

static uint64_t frame_hash(const struct frame_key *k)
{
	uint64_t w[3] = { (uintptr_t)k->mapping, k->address, k->kernel };

	return hash_words(0, w, 3);
}

/* --- lifetime ----------------------------------------------------------- */

struct symbolizer *symbolizer__new(struct strset *strings, const struct symbolizer_opts *opts)
{
	struct symbolizer *sym;

	sym = calloc(1, sizeof(*sym));
	if (!sym)
		return NULL;
	sym->strings = strings;
	if (opts && opts->kallsyms_path) {
		sym->kallsyms_path = strdup(opts->kallsyms_path);
		if (!sym->kallsyms_path)
			goto out_free;
	}
	sym->unknown = strset__add(strings, UNKNOWN_NAME);
	if (!sym->unknown)
		goto out_free;
	sym->oom_frame.name = sym->unknown;
	return sym;

out_free:
	symbolizer__free(sym);
	errno = ENOMEM;
	return NULL;
}

void symbolizer__free(struct symbolizer *sym)
{
	struct frame_block *b, *next;
	struct mapping_entry *m;
	struct file_entry *f;
	size_t i;

	if (!sym)
		return;
	hashtab__for_each_entry(&sym->files, i, f)
		free(f);
	hashtab__for_each_entry(&sym->mappings, i, m)
		free(m);
	hashtab__release(&sym->files);
	hashtab__release(&sym->by_build_id);
	hashtab__release(&sym->mappings);
	hashtab__release(&sym->frames);
	for (i = 0; i < sym->nr_tabs; i++)
		elf_symtab__free(sym->tabs[i]);
	free(sym->tabs);
	for (b = sym->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	kallsyms__free(sym->kallsyms);
	free(sym->kallsyms_path);
	free(sym);
}

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *stats)
{
	*stats = sym->stats;
}

/* --- ELF files ---------------------------------------------------------- */

/*
 * Keep @tab (taking it over) and share it under its build-id. If another
 * file with the same build-id came first, @tab is freed and that file's
 * symbols are returned instead.
 */
static struct elf_symtab *symbolizer__add_tab(struct symbolizer *sym, struct elf_symtab *tab)
{
	const char *build_id = elf_symtab__build_id(tab);
	struct elf_symtab *known, **tmp;
	uint64_t hash = 0;

	if (build_id) {
		hash = hash_bytes(build_id, strlen(build_id));
		known = hashtab__find(&sym->by_build_id, hash, build_id_eq, build_id);
		if (known) {
			elf_symtab__free(tab);
			return known;
		}
	}
	if (sym->nr_tabs == sym->alloc_tabs) {
		size_t alloc = sym->alloc_tabs ? 2 * sym->alloc_tabs : 16;

		if (alloc > SIZE_MAX / sizeof(*tmp))
			goto out_free;
		tmp = realloc(sym->tabs, alloc * sizeof(*tmp));
		if (!tmp)
			goto out_free;
		sym->tabs = tmp;
		sym->alloc_tabs = alloc;
	}
	if (build_id && hashtab__insert(&sym->by_build_id, hash, tab))
		goto out_free;
	sym->tabs[sym->nr_tabs++] = tab;
	return tab;

out_free:
	/* Unshared symbols would be lost at the end: do without them. */
	pr_warn("symbolize: cannot keep symbols: %s", strerror(ENOMEM));
	elf_symtab__free(tab);
	return NULL;
}

/*
 * Open the symbols of @fd, unless a file with the same build-id is open
 * already: reading the build-id alone costs about 20 us, parsing the
 * symbols of a large library 10 to 100 ms.
 */
static struct elf_symtab *symbolizer__open_fd(struct symbolizer *sym, int fd, const char *path)
{
	char build_id[160];
	struct elf_symtab *tab;

	if (!elf_symtab__read_build_id(fd, build_id, sizeof(build_id))) {
		tab = hashtab__find(&sym->by_build_id, hash_bytes(build_id, strlen(build_id)),
				    build_id_eq, build_id);
		if (tab)
			return tab;
	}
	tab = elf_symtab__open_fd(fd, path);
	if (!tab) {
		pr_warn("symbolize: cannot read symbols of '%s': %s", path, strerror(errno));
		return NULL;
	}
	return symbolizer__add_tab(sym, tab);
}

/* The symbols of @file, opened through its descriptor else its path; cached per file. */
static struct file_entry *symbolizer__file(struct symbolizer *sym, const struct mapped_file *file)
{
	uint64_t hash = file_hash(file);
	struct file_entry *e;
	struct stat st;
	int fd;

	e = hashtab__find(&sym->files, hash, file_eq, file);
	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->file = file;
	e->dev = file->dev;
	e->ino = file->ino;
	e->path = strset__add(sym->strings, file->path);
	if (!e->path || hashtab__insert(&sym->files, hash, e)) {
		free(e);
		return NULL;
	}
	if (file->fd >= 0) {
		e->tab = symbolizer__open_fd(sym, file->fd, file->path);
		return e;
	}
	/*
	 * The snapshot could not open the file. Its path may name another
	 * file by now: reading that would give wrong names, none is better.
	 */
	if (file->deleted) {
		pr_warn("symbolize: cannot read symbols of '%s': file deleted", file->path);
		return e;
	}
	fd = open(file->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_warn("symbolize: cannot open '%s': %s", file->path, strerror(errno));
		return e;
	}
	if (fstat(fd, &st) || st.st_ino != file->ino) {
		pr_warn("symbolize: cannot read symbols of '%s': file replaced since it was mapped",
			file->path);
		close(fd);
		return e;
	}
	e->tab = symbolizer__open_fd(sym, fd, file->path);
	close(fd);
	return e;
}

/* Read @size bytes at @addr of @pid's memory into a new buffer; NULL on failure. */
static void *read_process_memory(pid_t pid, uint64_t addr, size_t size)
{
	char path[64];
	void *image;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	image = malloc(size);
	if (image && pread(fd, image, size, addr) != (ssize_t)size) {
		free(image);
		image = NULL;
	}
	close(fd);
	return image;
}

/*
 * Read the vDSO image from the process's memory: it is not a file, but a
 * complete ELF image with a .dynsym. A process that has exited has no
 * memory left to read, but every 64-bit process of this kernel maps the
 * same vDSO as we do: read ours then. Fails quietly (the frames stay
 * "[vdso]+0x...") when neither can be read.
 */
static struct elf_symtab *symbolizer__read_vdso(struct symbolizer *sym, pid_t pid,
						const struct proc_map *pm)
{
	size_t size = pm->end - pm->start;
	struct elf_symtab *tab = NULL;
	void *image = NULL;
	uint64_t own;

	if (size > VDSO_MAX_SIZE)
		return NULL;
	if (pid > 0)
		image = read_process_memory(pid, pm->start, size);
	if (!image) {
		own = getauxval(AT_SYSINFO_EHDR);
		if (own)
			image = read_process_memory(getpid(), own, size);
	}
	if (!image) {
		pr_debug("symbolize: cannot read the vdso of pid %d", pid);
		return NULL;
	}
	tab = elf_symtab__open_mem(image, size, VDSO_NAME);
	if (tab)
		tab = symbolizer__add_tab(sym, tab);
	free(image);
	return tab;
}

/* --- mappings ----------------------------------------------------------- */

static const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static struct mapping_entry *symbolizer__mapping(struct symbolizer *sym, pid_t pid,
						 const struct proc_map *pm)
{
	struct mapping_key key = {
		.start = pm->start,
		.limit = pm->end,
		.file_offset = pm->pgoff,
	};
	const char *build_id;
	struct mapping_entry *e;
	bool vdso = false;
	uint64_t hash;

	/* Interning the path costs a hash of it: do it once per file. */
	if (pm->file) {
		struct file_entry *f = symbolizer__file(sym, pm->file);

		if (!f)
			return NULL;
		key.tab = f->tab;
		key.filename = f->path;
	} else {
		key.filename =
			strset__add(sym->strings, pm->name && *pm->name ? pm->name : "[anon]");
		if (!key.filename)
			return NULL;
	}
	hash = mapping_hash(&key);
	e = hashtab__find(&sym->mappings, hash, mapping_eq, &key);
	if (e)
		return e;

	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->m.start = key.start;
	e->m.limit = key.limit;
	e->m.file_offset = key.file_offset;
	e->m.filename = key.filename;
	e->m.main_binary = pm->file && pm->file->exe;
	e->key_tab = key.tab;
	e->tab = (struct elf_symtab *)key.tab;
	/* The vDSO is keyed without its symbols, which need reading the process's memory. */
	if (!pm->file && !strcmp(key.filename, VDSO_NAME)) {
		vdso = true;
		e->tab = symbolizer__read_vdso(sym, pid, pm);
	}
	build_id = e->tab ? elf_symtab__build_id(e->tab) : NULL;
	if (build_id) {
		e->m.build_id = strset__add(sym->strings, build_id);
		if (!e->m.build_id)
			goto out_free;
	}
	e->basename = pm->file || vdso ? strset__add(sym->strings, path_basename(key.filename)) :
					 key.filename;
	if (!e->basename || hashtab__insert(&sym->mappings, hash, e))
		goto out_free;
	return e;

out_free:
	free(e);
	return NULL;
}

/* --- frames ------------------------------------------------------------- */

static const struct profile_frame *symbolizer__oom(struct symbolizer *sym)
{
	if (!sym->oom_warned)
		pr_warn("symbolize: cannot record frames: %s", strerror(ENOMEM));
	sym->oom_warned = true;
	return &sym->oom_frame;
}

/* Add a frame for @key named @name (interned); resolved if @system_name. */
static const struct profile_frame *symbolizer__add_frame(struct symbolizer *sym,
							 const struct frame_key *key, uint64_t hash,
							 const char *name, const char *system_name)
{
	struct frame_block *b = sym->blocks;
	struct profile_frame *f;

	if (!name)
		return symbolizer__oom(sym);
	if (!b || b->used == FRAMES_PER_BLOCK) {
		b = malloc(sizeof(*b));
		if (!b)
			return symbolizer__oom(sym);
		b->used = 0;
		b->next = sym->blocks;
		sym->blocks = b;
	}
	f = &b->frames[b->used];
	*f = (struct profile_frame){
		.address = key->address,
		.mapping = key->mapping,
		.name = name,
		.system_name = system_name,
		.kernel = key->kernel,
	};
	if (hashtab__insert(&sym->frames, hash, f))
		return symbolizer__oom(sym);
	b->used++;
	sym->stats.frames++;
	if (system_name)
		sym->stats.resolved++;
	if (!key->mapping)
		sym->stats.unmapped++;
	return f;
}

const struct profile_frame *symbolizer__user_frame(struct symbolizer *sym,
						   const struct proc_maps *maps, uint64_t addr)
{
	struct frame_key key = { .address = addr };
	const struct profile_frame *f;
	const struct elf_sym *es = NULL;
	const struct proc_map *pm;
	struct mapping_entry *m = NULL;
	uint64_t hash, offset, vaddr;

	pm = proc_maps__find(maps, addr);
	if (pm) {
		m = symbolizer__mapping(sym, maps->pid, pm);
		if (!m)
			return symbolizer__oom(sym);
		key.mapping = &m->m;
	}
	hash = frame_hash(&key);
	f = hashtab__find(&sym->frames, hash, frame_eq, &key);
	if (f)
		return f;
	if (!m)
		return symbolizer__add_frame(sym, &key, hash, sym->unknown, NULL);

	offset = addr - pm->start + pm->pgoff;
	vaddr = offset;
	if (m->tab && !elf_symtab__offset_to_vaddr(m->tab, offset, &vaddr))
		es = elf_symtab__lookup(m->tab, vaddr);
	if (es) {
		const char *name = strset__add(sym->strings, es->name);

		m->m.has_functions = true;
		return symbolizer__add_frame(sym, &key, hash, name, name);
	}
	return symbolizer__add_frame(sym, &key, hash,
				     strset__addf(sym->strings, "%s+0x%llx", m->basename,
						  (unsigned long long)vaddr),
				     NULL);
}

/* --- kernel ------------------------------------------------------------- */

/*
 * The running kernel's build-id from /sys/kernel/notes, its ELF notes as
 * they are (native byte order, 4-byte aligned), which anyone may read.
 */
static const char *kernel_build_id(struct strset *strings)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char notes[4096];
	char hex[2 * 64 + 1];
	size_t len = 0, off = 0;
	ssize_t n;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	while (len < sizeof(notes) && (n = read(fd, notes + len, sizeof(notes) - len)) > 0)
		len += n;
	close(fd);
	while (len - off >= 12) {
		uint32_t nhdr[3]; /* namesz, descsz, type */
		size_t name_off, desc_off;

		memcpy(nhdr, notes + off, sizeof(nhdr));
		name_off = off + 12;
		desc_off = name_off + ((nhdr[0] + 3ULL) & ~3ULL);
		off = desc_off + ((nhdr[1] + 3ULL) & ~3ULL);
		if (off > len)
			break;
		if (nhdr[2] != 3 /* NT_GNU_BUILD_ID */ || nhdr[0] != 4 ||
		    memcmp(notes + name_off, "GNU", 4) || !nhdr[1] || nhdr[1] > 64)
			continue;
		for (size_t i = 0; i < nhdr[1]; i++) {
			hex[2 * i] = digits[notes[desc_off + i] >> 4];
			hex[2 * i + 1] = digits[notes[desc_off + i] & 0xf];
		}
		hex[2 * nhdr[1]] = '\0';
		return strset__add(strings, hex);
	}
	return NULL;
}

/* Read kallsyms the first time a kernel address comes, and say once why it is of no help. */
static void symbolizer__load_kallsyms(struct symbolizer *sym)
{
	const char *path = sym->kallsyms_path ? sym->kallsyms_path : "/proc/kallsyms";
	struct profile_mapping *km = &sym->kernel_mapping;

	sym->kallsyms_loaded = true;
	sym->kallsyms = kallsyms__load(path);
	if (!sym->kallsyms) {
		pr_warn("symbolize: cannot read kernel symbols from '%s': %s", path,
			strerror(errno));
		return;
	}
	if (kallsyms__addresses_hidden(sym->kallsyms)) {
		pr_warn("symbolize: no kernel symbols in '%s': addresses hidden by kptr_restrict",
			path);
		return;
	}
	kallsyms__range(sym->kallsyms, &km->start, &km->limit);
	km->filename = strset__add(sym->strings, KERNEL_NAME);
	km->kernel = true;
	if (!sym->kallsyms_path)
		km->build_id = kernel_build_id(sym->strings);
}

const struct profile_frame *symbolizer__kernel_frame(struct symbolizer *sym, uint64_t addr)
{
	struct profile_mapping *km = &sym->kernel_mapping;
	struct frame_key key = { .address = addr, .kernel = true };
	const struct profile_frame *f;
	const struct kallsym *ks;
	const char *name;
	uint64_t hash;

	if (!sym->kallsyms_loaded)
		symbolizer__load_kallsyms(sym);
	/* Without usable kallsyms there is no kernel mapping (its limits are unknown). */
	if (km->filename && addr >= km->start && addr < km->limit)
		key.mapping = km;
	hash = frame_hash(&key);
	f = hashtab__find(&sym->frames, hash, frame_eq, &key);
	if (f)
		return f;
	if (!key.mapping)
		return symbolizer__add_frame(sym, &key, hash, sym->unknown, NULL);
	ks = kallsyms__lookup(sym->kallsyms, addr);
	if (ks) {
		name = strset__add(sym->strings, ks->name);
		km->has_functions = true;
		return symbolizer__add_frame(sym, &key, hash, name, name);
	}
	name = strset__addf(sym->strings, KERNEL_NAME "+0x%llx", (unsigned long long)addr);
	return symbolizer__add_frame(sym, &key, hash, name, NULL);
}
