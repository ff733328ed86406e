// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/bpf_progs.h"
#include "common/cache_file.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/py_frames.h"
#include "common/strset.h"
#include "demangle.h"
#include "elf/elf_cache.h"
#include "elf/elf_file.h"
#include "elf_symtab.h"
#include "kallsyms.h"
#include "module.h"
#include "perf_map.h"
#include "symcache.h"
#include "symbolizer.h"

#define KERNEL_NAME "[kernel.kallsyms]"
#define UNKNOWN_NAME "[unknown]"
#define VDSO_NAME "[vdso]"
/* Frames and their lines come from blocks of this many, not one malloc() each. */
#define FRAMES_PER_BLOCK 1024
#define LINES_PER_BLOCK 2048

/* The module of one mapped file, by its (dev, ino). */
struct file_entry {
	const struct mapped_file *file;
	uint64_t dev, ino;
	const char *path;   /* file->path interned in symbolizer->strings */
	struct module *mod; /* NULL: unreadable; owned by symbolizer->mods */
};

/* The module of an ELF file that has no build-id, by the file. */
struct elf_module {
	const struct elf_file *elf;
	struct module *mod;
};

/* Modules, one per build-id (else per ELF file), shared by the symbolizers that use the set. */
struct module_set {
	struct hashtab by_build_id; /* of struct module, by build-id */
	struct hashtab by_elf;	    /* of struct elf_module: files without a build-id */
	struct module **mods;	    /* every module opened */
	size_t nr_mods, alloc_mods;
};

/*
 * A handed-out mapping and what resolving addresses in it needs. Keyed by
 * (filename, start, limit, file_offset, module): the same range of two
 * files with different contents (a library upgraded between two processes'
 * starts) gives two mappings, the same contents under two inodes one.
 */
struct mapping_entry {
	struct profile_mapping m;
	const struct module *key_mod; /* the file's module; NULL for pseudo mappings */
	struct module *mod;	      /* NULL: no symbols */
	const char *basename;	      /* interned; for "BASENAME+0x..." names */
	pid_t pid;		      /* anonymous mappings: whose perf map names their code */
};

struct mapping_key {
	const char *filename; /* interned in symbolizer->strings */
	uint64_t start, limit, file_offset;
	const struct module *mod;
	pid_t pid;
};

/* A name as a module holds it, interned, and demangled (interned too). */
struct demangled {
	const char *raw; /* the module's string: the key */
	const char *mangled, *name;
};

/* The answers kept of a module between runs; @cache is NULL when they are not kept. */
struct module_cache {
	struct module *mod;
	struct symcache *cache;
	/* Addresses the cache had no answer for: their regions are learned when it is saved. */
	uint64_t *learn;
	size_t nr_learn, alloc_learn;
};

/* The perf map of a process, NULL when it has none. */
struct perf_map_entry {
	pid_t pid;
	struct perf_map *map;
	bool borrowed; /* from symbolizer_opts' perf_maps, not ours to free */
};

struct frame_block {
	struct frame_block *next;
	size_t used;
	struct profile_frame frames[FRAMES_PER_BLOCK];
};

struct line_block {
	struct line_block *next;
	size_t used;
	struct profile_line lines[LINES_PER_BLOCK];
};

struct symbolizer {
	struct strset *strings;
	char *kallsyms_path;		   /* NULL: /proc/kallsyms */
	char *debug_dir;		   /* NULL: /usr/lib/debug */
	uid_t trusted_uid;		   /* see symbolizer_opts */
	const struct py_frames *py_frames; /* see symbolizer_opts */
	struct hashtab files;		   /* of struct file_entry */
	struct module_set *modules;	   /* the files' modules (ours to free if @own_modules) */
	bool own_modules;
	struct elf_cache *elves; /* the files, read once (ours to free if @own_elves) */
	bool own_elves;
	struct hashtab mappings;   /* of struct mapping_entry */
	struct hashtab frames;	   /* of struct profile_frame, by (mapping, address, kernel) */
	struct hashtab demangled;  /* of struct demangled, by the module's pointer */
	struct hashtab file_names; /* of struct demangled (not demangled), likewise */
	struct hashtab perf_maps;  /* of struct perf_map_entry, by pid */
	struct perf_map_cache *perf_map_cache; /* see symbolizer_opts; NULL: none */
	char *cache_dir;		       /* see symbolizer_opts; NULL: no cache */
	char *cache_producer;
	uint64_t cache_max_bytes;
	struct hashtab caches; /* of struct module_cache, by module */
	struct frame_block *blocks;
	struct line_block *line_blocks;
	struct profile_line oom_line;
	struct profile_frame oom_frame; /* handed out when memory runs out */
	bool oom_warned;

	const struct kallsyms *kallsyms; /* read here (@own_kallsyms), or lent by symbolizer_opts */
	struct kallsyms *own_kallsyms;
	bool kallsyms_loaded;
	const struct bpf_progs *bpf_progs; /* see symbolizer_opts */
	struct profile_mapping kernel_mapping;

	const char *unknown; /* interned "[unknown]" */
	const char *unnamed; /* interned "??": an unnamed inlined function */
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
	return !strcmp(elf_symtab__build_id(module__symtab(entry)), key);
}

static bool mapping_eq(const void *entry, const void *key)
{
	const struct mapping_entry *e = entry;
	const struct mapping_key *k = key;

	return e->m.filename == k->filename && e->m.start == k->start && e->m.limit == k->limit &&
	       e->m.file_offset == k->file_offset && e->key_mod == k->mod && e->pid == k->pid;
}

static uint64_t mapping_hash(const struct mapping_key *k)
{
	uint64_t w[6] = { (uintptr_t)k->filename, k->start,	     k->limit,
			  k->file_offset,	  (uintptr_t)k->mod, k->pid };

	return hash_words(0, w, 6);
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

static bool demangled_eq(const void *entry, const void *key)
{
	return ((const struct demangled *)entry)->raw == key;
}

static bool perf_map_eq(const void *entry, const void *key)
{
	return ((const struct perf_map_entry *)entry)->pid == *(const pid_t *)key;
}

/* --- lifetime ----------------------------------------------------------- */

static void symbolizer__kernel_mapping(struct symbolizer *sym);

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
	if (opts && opts->kallsyms) {
		sym->kallsyms = opts->kallsyms;
		sym->kallsyms_loaded = true;
		symbolizer__kernel_mapping(sym);
	}
	if (opts)
		sym->bpf_progs = opts->bpf_progs;
	if (opts && opts->debug_dir) {
		sym->debug_dir = strdup(opts->debug_dir);
		if (!sym->debug_dir)
			goto out_free;
	}
	if (opts && opts->elf_cache) {
		sym->elves = opts->elf_cache;
	} else {
		sym->elves = elf_cache__new();
		sym->own_elves = true;
		if (!sym->elves)
			goto out_free;
	}
	if (opts && opts->modules) {
		sym->modules = opts->modules;
	} else {
		sym->modules = module_set__new();
		sym->own_modules = true;
		if (!sym->modules)
			goto out_free;
	}
	if (opts && opts->cache_dir) {
		sym->cache_dir = strdup(opts->cache_dir);
		sym->cache_producer = strdup(opts->cache_producer ? opts->cache_producer : "");
		if (!sym->cache_dir || !sym->cache_producer)
			goto out_free;
		sym->cache_max_bytes = opts->cache_max_bytes ? opts->cache_max_bytes :
							       CACHE_FILE_DEFAULT_MAX_BYTES;
	}
	sym->trusted_uid = opts && opts->trusted_uid ? opts->trusted_uid : getuid();
	sym->perf_map_cache = opts ? opts->perf_maps : NULL;
	sym->py_frames = opts ? opts->py_frames : NULL;
	sym->unknown = strset__add(strings, UNKNOWN_NAME);
	sym->unnamed = strset__add(strings, "??");
	if (!sym->unknown || !sym->unnamed)
		goto out_free;
	sym->oom_line.name = sym->unknown;
	sym->oom_frame.lines = &sym->oom_line;
	sym->oom_frame.nr_lines = 1;
	sym->oom_frame.source = FRAME_NO_MAPPING;
	return sym;

out_free:
	symbolizer__free(sym);
	errno = ENOMEM;
	return NULL;
}

void symbolizer__free(struct symbolizer *sym)
{
	struct frame_block *b, *next;
	struct line_block *lb, *lnext;
	struct perf_map_entry *pm;
	struct mapping_entry *m;
	struct module_cache *mc;
	struct demangled *d;
	struct file_entry *f;
	size_t i;

	if (!sym)
		return;
	hashtab__for_each_entry(&sym->caches, i, mc) {
		symcache__free(mc->cache);
		free(mc->learn);
		free(mc);
	}
	hashtab__release(&sym->caches);
	free(sym->cache_dir);
	free(sym->cache_producer);
	hashtab__for_each_entry(&sym->files, i, f)
		free(f);
	hashtab__for_each_entry(&sym->mappings, i, m)
		free(m);
	hashtab__for_each_entry(&sym->demangled, i, d)
		free(d);
	hashtab__for_each_entry(&sym->file_names, i, d)
		free(d);
	hashtab__for_each_entry(&sym->perf_maps, i, pm) {
		if (!pm->borrowed)
			perf_map__free(pm->map);
		free(pm);
	}
	hashtab__release(&sym->files);
	hashtab__release(&sym->mappings);
	hashtab__release(&sym->frames);
	hashtab__release(&sym->demangled);
	hashtab__release(&sym->file_names);
	hashtab__release(&sym->perf_maps);
	if (sym->own_modules)
		module_set__free(sym->modules);
	for (b = sym->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	for (lb = sym->line_blocks; lb; lb = lnext) {
		lnext = lb->next;
		free(lb);
	}
	if (sym->own_elves)
		elf_cache__free(sym->elves);
	kallsyms__free(sym->own_kallsyms);
	free(sym->kallsyms_path);
	free(sym->debug_dir);
	free(sym);
}

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *stats)
{
	*stats = sym->stats;
	for (size_t i = 0; i < sym->modules->nr_mods; i++)
		module__add_dwarf_stats(sym->modules->mods[i], &stats->dwarf);
}

/* --- modules ------------------------------------------------------------ */

struct module_set *module_set__new(void)
{
	struct module_set *set = calloc(1, sizeof(*set));

	if (set) {
		hashtab__init(&set->by_build_id);
		hashtab__init(&set->by_elf);
	}
	return set;
}

void module_set__free(struct module_set *set)
{
	struct elf_module *em;
	size_t i;

	if (!set)
		return;
	hashtab__for_each_entry(&set->by_elf, i, em)
		free(em);
	hashtab__release(&set->by_build_id);
	hashtab__release(&set->by_elf);
	for (i = 0; i < set->nr_mods; i++)
		module__free(set->mods[i]);
	free(set->mods);
	free(set);
}

size_t module_set__count(const struct module_set *set)
{
	return set->nr_mods;
}

struct module_keep {
	module_keep_fn keep;
	void *arg;
};

static bool module_kept(void *entry, void *arg)
{
	const struct module_keep *k = arg;

	return k->keep(elf_symtab__file(module__symtab(entry)), k->arg);
}

static bool elf_module_kept(void *entry, void *arg)
{
	const struct module_keep *k = arg;

	return k->keep(((struct elf_module *)entry)->elf, k->arg);
}

static void elf_module_drop(void *entry, void *arg)
{
	(void)arg;
	free(entry);
}

void module_set__retain(struct module_set *set, module_keep_fn keep, void *arg)
{
	struct module_keep k = { keep, arg };
	size_t kept = 0;

	/* Out of memory, a module not found any more is freed next time. */
	if (hashtab__retain(&set->by_build_id, module_kept, NULL, &k) ||
	    hashtab__retain(&set->by_elf, elf_module_kept, elf_module_drop, &k))
		return;
	for (size_t i = 0; i < set->nr_mods; i++) {
		struct module *mod = set->mods[i];

		if (keep(elf_symtab__file(module__symtab(mod)), arg))
			set->mods[kept++] = mod;
		else
			module__free(mod);
	}
	set->nr_mods = kept;
}

static bool elf_module_eq(const void *entry, const void *key)
{
	return ((const struct elf_module *)entry)->elf == key;
}

/*
 * The module of @elf: one per build-id (the elf_cache shares one elf_file
 * among the paths and inodes of a build-id, but a file opened by path for
 * `profiler symbolize` is not in it), else one per elf_file. Opened the
 * first time: reading the symbols of a large library takes 10 to 100 ms.
 * @pid is the process whose root the module's debug files are looked for
 * in (0: ours). NULL when the symbols cannot be read or memory runs out.
 */
static struct module *symbolizer__module(struct symbolizer *sym, struct elf_file *elf,
					 const char *path, pid_t pid)
{
	const char *build_id = elf_file__build_id(elf);
	struct module_opts opts = { .debug_dir = sym->debug_dir };
	struct elf_module *em = NULL;
	struct elf_symtab *tab;
	struct module *mod;
	char root[64];
	uint64_t hash;

	if (build_id) {
		hash = hash_bytes(build_id, strlen(build_id));
		mod = hashtab__find(&sym->modules->by_build_id, hash, build_id_eq, build_id);
	} else {
		hash = hash_mix(0, (uintptr_t)elf);
		em = hashtab__find(&sym->modules->by_elf, hash, elf_module_eq, elf);
		mod = em ? em->mod : NULL;
	}
	if (mod || em)
		return mod;
	tab = elf_symtab__new(elf);
	if (!tab) {
		pr_warn("symbolize: cannot read symbols of '%s': %s", elf_file__name(elf),
			strerror(errno));
		return NULL;
	}
	/*
	 * Debug files are looked for in the process's root, where its own
	 * /usr/lib/debug is; once it has exited, in ours (a wrong file would
	 * fail the build-id or CRC checks).
	 */
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	if (pid > 0 && pid != getpid() && !access(root, X_OK))
		opts.root = root;
	if (array__reserve(&sym->modules->mods, &sym->modules->alloc_mods,
			   sym->modules->nr_mods + 1, sizeof(*sym->modules->mods)))
		goto out_free_tab;
	mod = module__new(tab, path, &opts);
	if (!mod)
		goto out_free_tab;
	if (build_id) {
		if (hashtab__insert(&sym->modules->by_build_id, hash, mod))
			goto out_free_mod;
	} else {
		em = calloc(1, sizeof(*em));
		if (!em)
			goto out_free_mod;
		em->elf = elf;
		em->mod = mod;
		if (hashtab__insert(&sym->modules->by_elf, hash, em)) {
			free(em);
			goto out_free_mod;
		}
	}
	sym->modules->mods[sym->modules->nr_mods++] = mod;
	return mod;

out_free_mod:
	module__free(mod);
	goto out_warn;
out_free_tab:
	elf_symtab__free(tab);
out_warn:
	/* Unshared symbols would be lost at the end: do without them. */
	pr_warn("symbolize: cannot keep symbols: %s", strerror(ENOMEM));
	return NULL;
}

/* The module of @file, read through the ELF cache; cached per file. */
static struct file_entry *symbolizer__file(struct symbolizer *sym, const struct mapped_file *file,
					   pid_t pid)
{
	uint64_t hash = file_hash(file);
	struct file_entry *e;
	struct elf_file *elf;

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
	elf = elf_cache__file(sym->elves, file);
	if (elf)
		e->mod = symbolizer__module(sym, elf, file->path, pid);
	return e;
}

/*
 * The vDSO's module: not a file, but a complete ELF image with a .dynsym,
 * read from the process's memory (or ours: see elf_cache.h). Fails quietly
 * (the frames stay "[vdso]+0x...") when it cannot be read.
 */
static struct module *symbolizer__read_vdso(struct symbolizer *sym, pid_t pid,
					    const struct proc_map *pm)
{
	struct elf_file *elf = elf_cache__vdso(sym->elves, pid, pm->start, pm->end - pm->start);

	return elf ? symbolizer__module(sym, elf, NULL, 0) : NULL;
}

/* --- mappings ----------------------------------------------------------- */

static const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Fill in and keep the new mapping @e for @key (its module, if any, set). NULL on ENOMEM. */
static struct mapping_entry *symbolizer__keep_mapping(struct symbolizer *sym,
						      struct mapping_entry *e,
						      const struct mapping_key *key, uint64_t hash,
						      const char *basename)
{
	const char *build_id = e->mod ? elf_symtab__build_id(module__symtab(e->mod)) : NULL;

	e->m.start = key->start;
	e->m.limit = key->limit;
	e->m.file_offset = key->file_offset;
	e->m.filename = key->filename;
	e->key_mod = key->mod;
	e->pid = key->pid;
	if (build_id) {
		e->m.build_id = strset__add(sym->strings, build_id);
		if (!e->m.build_id)
			goto out_free;
	}
	e->basename = strset__add(sym->strings, basename);
	if (!e->basename || hashtab__insert(&sym->mappings, hash, e))
		goto out_free;
	return e;

out_free:
	free(e);
	return NULL;
}

static struct mapping_entry *symbolizer__mapping(struct symbolizer *sym, pid_t pid,
						 const struct proc_map *pm)
{
	struct mapping_key key = {
		.start = pm->start,
		.limit = pm->end,
		.file_offset = pm->pgoff,
	};
	struct mapping_entry *e;
	bool vdso = false;
	uint64_t hash;

	/* Interning the path costs a hash of it: do it once per file. */
	if (pm->file) {
		struct file_entry *f = symbolizer__file(sym, pm->file, pid);

		if (!f)
			return NULL;
		key.mod = f->mod;
		key.filename = f->path;
	} else {
		key.filename =
			strset__add(sym->strings, pm->name && *pm->name ? pm->name : "[anon]");
		if (!key.filename)
			return NULL;
		vdso = !strcmp(key.filename, VDSO_NAME);
		/* Anonymous code is JIT code, named by its own process's perf map. */
		if (!vdso)
			key.pid = pid;
	}
	hash = mapping_hash(&key);
	e = hashtab__find(&sym->mappings, hash, mapping_eq, &key);
	if (e)
		return e;

	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->m.main_binary = pm->file && pm->file->exe;
	e->mod = (struct module *)key.mod;
	/* The vDSO is keyed without its symbols, which need reading the process's memory. */
	if (vdso)
		e->mod = symbolizer__read_vdso(sym, pid, pm);
	return symbolizer__keep_mapping(
		sym, e, &key, hash, pm->file || vdso ? path_basename(key.filename) : key.filename);
}

/* --- names -------------------------------------------------------------- */

/*
 * The interned demangled name of linker name @raw, and @raw interned in
 * @mangled. Memoized by @raw's address, which stays the same for all the
 * addresses of one function (it points into the module's string tables):
 * one function has many addresses, and demangling costs microseconds,
 * hashing a long C++ name a good part of one. NULL on ENOMEM.
 *
 * A name from an ELF file (@elf) loses its symbol version first, in both:
 * "__libc_start_main@@GLIBC_2.34" is __libc_start_main to whoever reads a
 * profile, to llvm-addr2line, and to the demangler, which refuses a C++
 * name with a version appended. JIT compilers' names are theirs to keep.
 */
static const char *symbolizer__name(struct symbolizer *sym, const char *raw, bool elf,
				    const char **mangled)
{
	uint64_t hash = hash_mix(0, (uintptr_t)raw);
	struct demangled *d;
	char *name;
	size_t plt;

	d = hashtab__find(&sym->demangled, hash, demangled_eq, raw);
	if (d) {
		*mangled = d->mangled;
		return d->name;
	}
	d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	d->raw = raw;
	d->mangled = strset__add_len(sym->strings, raw,
				     elf ? elf_sym__unversioned_len(raw) : strlen(raw));
	plt = elf ? strlen(raw) : 0;
	/* A PLT entry, "NAME@plt" (elf_symtab.h): NAME demangled, as perf shows it. */
	if (plt > 4 && !strcmp(raw + plt - 4, "@plt")) {
		char *bare = strndup(raw, plt - 4), *demangled = bare ? demangle(bare) : NULL;

		name = NULL;
		if (demangled && asprintf(&name, "%s@plt", demangled) < 0)
			name = NULL;
		free(demangled);
		free(bare);
	} else {
		name = d->mangled ? demangle(d->mangled) : NULL;
	}
	d->name = name ? strset__add(sym->strings, name) : d->mangled;
	free(name);
	if (!d->name || hashtab__insert(&sym->demangled, hash, d)) {
		free(d);
		return NULL;
	}
	*mangled = d->mangled;
	return d->name;
}

/* @raw, a source file name from a module, interned; memoized by its address. NULL on ENOMEM. */
static const char *symbolizer__file_name(struct symbolizer *sym, const char *raw)
{
	uint64_t hash = hash_mix(0, (uintptr_t)raw);
	struct demangled *d;

	d = hashtab__find(&sym->file_names, hash, demangled_eq, raw);
	if (d)
		return d->name;
	d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	d->raw = raw;
	d->name = d->mangled = strset__add(sym->strings, raw);
	if (!d->name || hashtab__insert(&sym->file_names, hash, d)) {
		free(d);
		return NULL;
	}
	return d->name;
}

/* --- frames ------------------------------------------------------------- */

static const struct profile_frame *symbolizer__oom(struct symbolizer *sym)
{
	if (!sym->oom_warned)
		pr_warn("symbolize: cannot record frames: %s", strerror(ENOMEM));
	sym->oom_warned = true;
	return &sym->oom_frame;
}

/* Room for @nr lines, which a frame keeps until the end; NULL on ENOMEM. */
static struct profile_line *symbolizer__lines(struct symbolizer *sym, uint32_t nr)
{
	struct line_block *b = sym->line_blocks;

	if (!b || b->used + nr > LINES_PER_BLOCK) {
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		b->used = 0;
		b->next = sym->line_blocks;
		sym->line_blocks = b;
	}
	b->used += nr;
	return &b->lines[b->used - nr];
}

/* Add a frame for @key with @nr_lines lines (copied), symbolized as @source. */
static const struct profile_frame *symbolizer__add_frame(struct symbolizer *sym,
							 const struct frame_key *key, uint64_t hash,
							 const struct profile_line *lines,
							 uint32_t nr_lines,
							 enum profile_frame_source source)
{
	struct frame_block *b = sym->blocks;
	struct profile_line *copy;
	struct profile_frame *f;

	for (uint32_t i = 0; i < nr_lines; i++)
		if (!lines[i].name)
			return symbolizer__oom(sym);
	copy = symbolizer__lines(sym, nr_lines);
	if (!copy)
		return symbolizer__oom(sym);
	memcpy(copy, lines, nr_lines * sizeof(*copy));
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
		.lines = copy,
		.nr_lines = nr_lines,
		.source = source,
		.kernel = key->kernel,
	};
	if (hashtab__insert(&sym->frames, hash, f))
		return symbolizer__oom(sym);
	b->used++;
	sym->stats.frames++;
	sym->stats.sources[source]++;
	if (profile_frame__resolved(f))
		sym->stats.resolved++;
	if (!key->mapping && source != FRAME_PYTHON && source != FRAME_JS)
		sym->stats.unmapped++;
	return f;
}

/* A frame of one line named @name (interned), resolved if @system_name. */
static const struct profile_frame *symbolizer__add_named(struct symbolizer *sym,
							 const struct frame_key *key, uint64_t hash,
							 const char *name, const char *system_name,
							 enum profile_frame_source source)
{
	struct profile_line line = { .name = name, .system_name = system_name };

	return symbolizer__add_frame(sym, key, hash, &line, 1, source);
}

/*
 * The name of the code at ELF address @vaddr of @m when nothing names it:
 * "BASENAME+0xSTART", with the start of the function that the file's CFI
 * says holds @vaddr, so that the addresses sampled in one function of a
 * stripped library are one function in every format, not one each; else
 * "BASENAME+0xVADDR". Either is an ELF address, which addr2line takes.
 * NULL on ENOMEM.
 */
static const char *symbolizer__unnamed(struct symbolizer *sym, struct mapping_entry *m,
				       uint64_t vaddr)
{
	uint64_t start;

	if (m->mod && !module__function_start(m->mod, vaddr, &start))
		vaddr = start;
	return strset__addf(sym->strings, "%s+0x%llx", m->basename, (unsigned long long)vaddr);
}

/* What symbolizer__unnamed() would intern, written into @buf of @size bytes instead. */
static const char *symbolizer__placeholder(struct mapping_entry *m, uint64_t vaddr, char *buf,
					   size_t size)
{
	uint64_t start;

	if (m->mod && !module__function_start(m->mod, vaddr, &start))
		vaddr = start;
	snprintf(buf, size, "%s+0x%llx", m->basename, (unsigned long long)vaddr);
	return buf;
}

/*
 * The name of a line of the frame at ELF address @vaddr of @m that nothing
 * names: for the function holding the address (@outermost), its
 * placeholder, written into @placeholder (@size bytes) or else interned;
 * for a function inlined there, "??". NULL on ENOMEM.
 */
static const char *symbolizer__unnamed_line(struct symbolizer *sym, struct mapping_entry *m,
					    uint64_t vaddr, bool outermost, char *placeholder,
					    size_t size)
{
	if (!outermost)
		return sym->unnamed;
	if (placeholder)
		return symbolizer__placeholder(m, vaddr, placeholder, size);
	return symbolizer__unnamed(sym, m, vaddr);
}

/* How the @nr @lines of a frame of @m were found, into @source; what @m has, into its flags. */
static void symbolizer__line_flags(struct mapping_entry *m, const struct profile_line *lines,
				   int nr, enum profile_frame_source *source)
{
	/* A line without a function still goes with the frame, as addr2line prints it. */
	if (lines[0].filename && lines[0].line)
		m->m.has_filenames = m->m.has_line_numbers = true;
	if (!lines[nr - 1].system_name) {
		*source = FRAME_NO_SYMBOL;
	} else {
		m->m.has_functions = true;
		*source = lines[0].filename && lines[0].line ? FRAME_LINES : FRAME_SYMBOL;
	}
	if (nr > 1)
		m->m.has_inline_frames = true;
}

/* --- answers kept between runs ------------------------------------------- */

static bool module_cache_eq(const void *entry, const void *key)
{
	return ((const struct module_cache *)entry)->mod == key;
}

/* The cache of module @mod, opened the first time; NULL on ENOMEM. */
static struct module_cache *symbolizer__cache(struct symbolizer *sym, struct module *mod)
{
	uint64_t hash = hash_u64((uintptr_t)mod);
	const char *build_id;
	struct module_cache *mc;
	bool added;

	mc = hashtab__find_or_add(&sym->caches, hash, module_cache_eq, mod, sizeof(*mc), &added);
	if (!mc || !added)
		return mc;
	mc->mod = mod;
	build_id = elf_symtab__build_id(module__symtab(mod));
	if (build_id && elf_file__cacheable(elf_symtab__file(module__symtab(mod))) &&
	    module__self_contained(mod))
		mc->cache = symcache__open(sym->cache_dir, build_id, sym->cache_producer,
					   elf__fingerprint(elf_symtab__elf(module__symtab(mod))),
					   sym->strings);
	return mc;
}

/* The line @loc of a module as a cache keeps it, its strings interned, its name demangled: 0 or -ENOMEM. */
static int symbolizer__cache_line(struct symbolizer *sym, const struct module_loc *loc,
				  struct symcache_line *line)
{
	*line = (struct symcache_line){ .line = loc->line, .discriminator = loc->discriminator };
	if (loc->name && !(line->name = symbolizer__name(sym, loc->name, true, &line->system_name)))
		return -ENOMEM;
	if (loc->file && !(line->file = symbolizer__file_name(sym, loc->file)))
		return -ENOMEM;
	return 0;
}

/*
 * Add to @c the answers of the region of @mod around @vaddr (module__region()):
 * one lookup per stretch between two breaks. 0, or a negative errno when
 * the region cannot be kept (then lookups there go to the module).
 */
static int symbolizer__cache_region(struct symbolizer *sym, struct module *mod, struct symcache *c,
				    uint64_t vaddr)
{
	struct symcache_line lines[SYMCACHE_MAX_LINES];
	struct module_loc locs[2][MODULE_MAX_LOCS];
	struct module_region r;
	size_t b = 0;
	int err;

	err = module__region(mod, vaddr, &r);
	if (err)
		return err;
	/* The DWARF may have proved unreadable, and the answers then another file's. */
	if (!module__self_contained(mod)) {
		module_region__release(&r);
		return -ENOTSUP;
	}
	for (size_t i = 0; i < r.nr_ranges && !err; i++) {
		uint64_t lo = r.ranges[i].lo, start = lo;
		int nr = 0, cur = 0;

		/*
		 * Stretches in a row with one answer are one interval: the
		 * answer is converted once, when it changes.
		 */
		while (lo < r.ranges[i].hi && !err) {
			uint64_t hi = b < r.nr_breaks && r.breaks[b] < r.ranges[i].hi ?
					      r.breaks[b++] :
					      r.ranges[i].hi;
			int next = module__lookup(mod, lo, locs[!cur]);

			if (lo > start &&
			    (next != nr || memcmp(locs[cur], locs[!cur], nr * sizeof(**locs)))) {
				for (int k = 0; k < nr && !err; k++)
					err = symbolizer__cache_line(sym, &locs[cur][k], &lines[k]);
				if (!err)
					err = symcache__add(c, start, lo, lines, nr);
				start = lo;
			}
			cur = !cur;
			nr = next;
			lo = hi;
		}
		for (int k = 0; k < nr && !err; k++)
			err = symbolizer__cache_line(sym, &locs[cur][k], &lines[k]);
		if (!err && nr)
			err = symcache__add(c, start, lo, lines, nr);
	}
	module_region__release(&r);
	return err;
}

/*
 * The lines of @vaddr of @m from the cache of its module; as
 * symbolizer__module_lines(). 0 when the cache cannot answer: the address
 * is then noted, for its region to be learned when the cache is saved
 * (symbolizer__save_cache()), after the answers are out.
 */
static int symbolizer__cached_lines(struct symbolizer *sym, struct mapping_entry *m, uint64_t vaddr,
				    struct profile_line *lines, char *placeholder, size_t size,
				    enum profile_frame_source *source)
{
	struct symcache_line cl[SYMCACHE_MAX_LINES];
	struct module_cache *mc = symbolizer__cache(sym, m->mod);
	int nr;

	if (!mc)
		return -ENOMEM;
	if (!mc->cache)
		return 0;
	nr = symcache__lookup(mc->cache, vaddr, cl);
	if (!nr) {
		/* When memory runs out, a region goes unlearned: nothing else. */
		if (!array__reserve(&mc->learn, &mc->alloc_learn, mc->nr_learn + 1,
				    sizeof(*mc->learn)))
			mc->learn[mc->nr_learn++] = vaddr;
		return 0;
	}
	for (int i = 0; i < nr; i++) {
		struct profile_line *l = &lines[i];

		*l = (struct profile_line){ .line = cl[i].line,
					    .discriminator = cl[i].discriminator };
		/* Interned already, the names demangled. */
		l->filename = cl[i].file;
		l->system_name = cl[i].system_name;
		l->name = cl[i].name ? cl[i].name :
				       symbolizer__unnamed_line(sym, m, vaddr, i == nr - 1,
								placeholder, size);
		if (!l->name)
			return -ENOMEM;
	}
	symbolizer__line_flags(m, lines, nr, source);
	return nr;
}

void symbolizer__save_cache(struct symbolizer *sym)
{
	struct module_cache *mc;
	size_t i;
	int err;

	hashtab__for_each_entry(&sym->caches, i, mc) {
		if (!mc->cache)
			continue;
		/* The regions of the addresses it had no answer for, each once. */
		err = 0;
		for (size_t k = 0; k < mc->nr_learn && err != -ENOMEM; k++) {
			struct symcache_line cl[SYMCACHE_MAX_LINES];

			if (!symcache__lookup(mc->cache, mc->learn[k], cl))
				err = symbolizer__cache_region(sym, mc->mod, mc->cache,
							       mc->learn[k]);
		}
		mc->nr_learn = 0;
		err = symcache__save(mc->cache, sym->cache_max_bytes);
		if (err && err != -EPERM)
			pr_warn("symbolize: cannot write cache file '%s': %s",
				symcache__path(mc->cache), strerror(-err));
	}
}

/*
 * The lines of ELF address @vaddr of mapping @m, from its module, into
 * @lines (room for MODULE_MAX_LOCS), and how they were found into @source.
 * Code that nothing names gets its placeholder name interned, or written
 * into @placeholder (@size bytes) when that is not NULL. Returns the number
 * of lines, or -ENOMEM.
 */
static int symbolizer__module_lines(struct symbolizer *sym, struct mapping_entry *m, uint64_t vaddr,
				    struct profile_line *lines, char *placeholder, size_t size,
				    enum profile_frame_source *source)
{
	struct module_loc locs[MODULE_MAX_LOCS];
	int nr = 0;

	if (m->mod && sym->cache_dir) {
		nr = symbolizer__cached_lines(sym, m, vaddr, lines, placeholder, size, source);
		if (nr)
			return nr;
	}
	if (m->mod)
		nr = module__lookup(m->mod, vaddr, locs);
	if (!nr) {
		nr = 1;
		locs[0] = (struct module_loc){ 0 };
	}
	for (int i = 0; i < nr; i++) {
		struct profile_line *l = &lines[i];

		*l = (struct profile_line){
			.line = locs[i].line,
			.discriminator = locs[i].discriminator,
		};
		if (locs[i].name)
			l->name = symbolizer__name(sym, locs[i].name, true, &l->system_name);
		else
			l->name = symbolizer__unnamed_line(sym, m, vaddr, i == nr - 1, placeholder,
							   size);
		if (!l->name)
			return -ENOMEM;
		if (locs[i].file) {
			l->filename = symbolizer__file_name(sym, locs[i].file);
			if (!l->filename)
				return -ENOMEM;
		}
	}
	symbolizer__line_flags(m, lines, nr, source);
	return nr;
}

/* The frame for ELF address @vaddr of mapping @m, from its module, memoized. */
static const struct profile_frame *symbolizer__module_frame(struct symbolizer *sym,
							    struct mapping_entry *m,
							    const struct frame_key *key,
							    uint64_t hash, uint64_t vaddr)
{
	struct profile_line lines[MODULE_MAX_LOCS];
	enum profile_frame_source source;
	int nr;

	nr = symbolizer__module_lines(sym, m, vaddr, lines, NULL, 0, &source);
	if (nr < 0)
		return symbolizer__oom(sym);
	return symbolizer__add_frame(sym, key, hash, lines, nr, source);
}

/*
 * The perf map of @pid, read the first time one of its addresses needs it:
 * through its root as it sees it, or in our /tmp once it has exited.
 */
static const struct perf_map *symbolizer__perf_map(struct symbolizer *sym, pid_t pid)
{
	uint64_t hash = hash_mix(0, pid);
	struct perf_map_entry *e;
	bool added;
	char path[64];

	e = hashtab__find_or_add(&sym->perf_maps, hash, perf_map_eq, &pid, sizeof(*e), &added);
	if (!e || !added)
		return e ? e->map : NULL;
	e->pid = pid;
	if (sym->perf_map_cache) {
		e->map = (struct perf_map *)perf_map_cache__load_pid(sym->perf_map_cache, pid);
		e->borrowed = e->map != NULL;
	} else {
		e->map = perf_map__load_pid(pid);
	}
	/*
	 * Only a process that is gone: other failures are the file's checks
	 * refusing it. Its owner is unknown by now: take the file only from
	 * root or from the trusted user (symbolizer_opts), never a file
	 * another user could have planted in /tmp.
	 */
	if (!e->map && errno == ESRCH) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
		e->map = perf_map__load_owned(path, sym->trusted_uid);
	}
	if (e->map && perf_map__nr_skipped(e->map))
		pr_warn("symbolize: perf map of pid %d: %zu malformed lines skipped", pid,
			perf_map__nr_skipped(e->map));
	return e->map;
}

/* The frame of a Python frame's address @addr (py_frames.h), or NULL when it is none. */
static const struct profile_frame *symbolizer__python_frame(struct symbolizer *sym, uint64_t addr)
{
	/* The frame's own address, whichever of its bytes is asked for. */
	struct frame_key key = { .address = (addr & ~0xfULL) | 8 };
	const struct py_frame_name *pf = py_frames__get(sym->py_frames, addr);
	struct profile_line line = { 0 };
	struct profile_frame *f;
	const char *base;
	uint64_t hash;

	if (!pf)
		return NULL;
	hash = frame_hash(&key);
	f = hashtab__find(&sym->frames, hash, frame_eq, &key);
	if (f)
		return f;
	line.name = strset__add(sym->strings, pf->name);
	line.system_name = line.name;
	line.filename = pf->filename ? strset__add(sym->strings, pf->filename) : NULL;
	line.line = pf->line;
	base = pf->filename ? strrchr(pf->filename, '/') : NULL;
	base = base ? base + 1 : pf->filename;
	if (!line.name || (pf->filename && !line.filename))
		return symbolizer__oom(sym);
	f = (struct profile_frame *)symbolizer__add_frame(sym, &key, hash, &line, 1,
							  pf->js ? FRAME_JS : FRAME_PYTHON);
	if (f != &sym->oom_frame && base) {
		/* The function, not the line (py_frames.h). */
		f->label =
			strset__addf(sym->strings, "%s (%s:%u)", line.name, base, pf->start_line);
		if (!f->label)
			return symbolizer__oom(sym);
	}
	return f;
}

const struct profile_frame *symbolizer__user_frame(struct symbolizer *sym,
						   const struct proc_maps *maps, uint64_t addr)
{
	struct frame_key key = { .address = addr };
	const struct perf_map_sym *jit = NULL;
	const struct profile_frame *f;
	const struct perf_map *pmap;
	const struct proc_map *pm;
	struct mapping_entry *m = NULL;
	uint64_t hash, offset, vaddr;

	if (sym->py_frames && py_frames__is_addr(addr) && (f = symbolizer__python_frame(sym, addr)))
		return f;
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
	/* JIT code: in an anonymous mapping, or one the snapshot did not keep. */
	if ((!m || m->pid) && maps && (pmap = symbolizer__perf_map(sym, maps->pid)))
		jit = perf_map__lookup(pmap, addr);
	if (jit) {
		const char *system_name;
		const char *name = symbolizer__name(sym, jit->name, false, &system_name);

		if (m)
			m->m.has_functions = true;
		return symbolizer__add_named(sym, &key, hash, name, system_name, FRAME_JIT);
	}
	if (!m)
		return symbolizer__add_named(sym, &key, hash, sym->unknown, NULL, FRAME_NO_MAPPING);
	offset = addr - pm->start + pm->pgoff;
	vaddr = offset;
	if (m->mod && elf_symtab__offset_to_vaddr(module__symtab(m->mod), offset, &vaddr))
		return symbolizer__add_named(sym, &key, hash,
					     strset__addf(sym->strings, "%s+0x%llx", m->basename,
							  (unsigned long long)vaddr),
					     NULL, FRAME_NO_SYMBOL);
	return symbolizer__module_frame(sym, m, &key, hash, vaddr);
}

/* --- ELF files, for `profiler symbolize` ---------------------------------- */

int symbolizer__open_elf(struct symbolizer *sym, const char *path,
			 const struct profile_mapping **mapping)
{
	struct mapping_key key = { .limit = UINT64_MAX };
	struct mapping_entry *e;
	struct elf_file *elf;
	uint64_t hash;

	key.filename = strset__add(sym->strings, path);
	if (!key.filename)
		return -ENOMEM;
	hash = mapping_hash(&key);
	e = hashtab__find(&sym->mappings, hash, mapping_eq, &key);
	if (e) {
		*mapping = &e->m;
		return 0;
	}
	elf = elf_file__open(path);
	if (!elf)
		return -errno;
	e = calloc(1, sizeof(*e));
	if (!e) {
		elf_file__put(elf);
		return -ENOMEM;
	}
	e->mod = symbolizer__module(sym, elf, path, 0);
	elf_file__put(elf);
	if (!e->mod) {
		free(e);
		return -ENOMEM;
	}
	/* On failure it has freed @e. */
	if (!symbolizer__keep_mapping(sym, e, &key, hash, path_basename(path)))
		return -ENOMEM;
	*mapping = &e->m;
	return 0;
}

const struct profile_frame *
symbolizer__elf_frame(struct symbolizer *sym, const struct profile_mapping *mapping, uint64_t vaddr)
{
	/* The mapping is the first member of its entry. */
	struct mapping_entry *m = (struct mapping_entry *)mapping;
	struct frame_key key = { .address = vaddr, .mapping = mapping };
	const struct profile_frame *f;
	uint64_t hash = frame_hash(&key);

	f = hashtab__find(&sym->frames, hash, frame_eq, &key);
	if (f)
		return f;
	return symbolizer__module_frame(sym, m, &key, hash, vaddr);
}

const struct profile_frame *symbolizer__elf_lookup(struct symbolizer *sym,
						   const struct profile_mapping *mapping,
						   uint64_t vaddr, struct symbolizer_answer *answer)
{
	/* The mapping is the first member of its entry. */
	struct mapping_entry *m = (struct mapping_entry *)mapping;
	enum profile_frame_source source;
	int nr;

	nr = symbolizer__module_lines(sym, m, vaddr, answer->lines, answer->placeholder,
				      sizeof(answer->placeholder), &source);
	if (nr < 0)
		return NULL;
	answer->frame = (struct profile_frame){
		.address = vaddr,
		.mapping = mapping,
		.lines = answer->lines,
		.nr_lines = nr,
		.source = source,
	};
	return &answer->frame;
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

/* The kernel's mapping, from kallsyms that are usable (addresses not hidden). */
static void symbolizer__kernel_mapping(struct symbolizer *sym)
{
	struct profile_mapping *km = &sym->kernel_mapping;

	if (!sym->kallsyms || kallsyms__addresses_hidden(sym->kallsyms))
		return;
	kallsyms__range(sym->kallsyms, &km->start, &km->limit);
	km->filename = strset__add(sym->strings, KERNEL_NAME);
	km->kernel = true;
	if (!sym->kallsyms_path)
		km->build_id = kernel_build_id(sym->strings);
}

/* Read kallsyms the first time a kernel address comes, and say once why it is of no help. */
static void symbolizer__load_kallsyms(struct symbolizer *sym)
{
	const char *path = sym->kallsyms_path ? sym->kallsyms_path : "/proc/kallsyms";

	sym->kallsyms_loaded = true;
	sym->kallsyms = sym->own_kallsyms = kallsyms__load(path);
	if (!sym->kallsyms)
		pr_warn("symbolize: cannot read kernel symbols from '%s': %s", path,
			strerror(errno));
	else if (kallsyms__addresses_hidden(sym->kallsyms))
		pr_warn("symbolize: no kernel symbols in '%s': addresses hidden by kptr_restrict",
			path);
	symbolizer__kernel_mapping(sym);
}

/*
 * A frame in the JIT-compiled code of a BPF program the collector read
 * (symbolizer_opts.bpf_progs), named by its function as the program's BTF
 * names it, "hot_syscall_enter [bpf]", with its source line; kallsyms'
 * name (@ks), "bpf_prog_TAG_NAME", is the system name. NULL when no
 * program read holds @key's address.
 */
static const struct profile_frame *symbolizer__bpf_frame(struct symbolizer *sym,
							 const struct frame_key *key, uint64_t hash,
							 const struct kallsym *ks)
{
	struct profile_mapping *km = &sym->kernel_mapping;
	struct bpf_code_line where;
	struct profile_line line;

	if (!sym->bpf_progs)
		return NULL;
	/*
	 * An address past the length the program's information gives its
	 * function, that kallsyms still puts in it (an interrupted instruction
	 * of the JIT's, seen rarely): the function's name, with no line.
	 */
	if (bpf_progs__lookup(sym->bpf_progs, key->address, &where)) {
		if (!ks || !ks->module || strcmp(ks->module, "bpf") ||
		    bpf_progs__lookup(sym->bpf_progs, ks->addr, &where))
			return NULL;
		where.file = NULL;
		where.line = 0;
	}
	line = (struct profile_line){
		.name = strset__addf(sym->strings, "%s [bpf]", where.func),
		.system_name = strset__add(sym->strings,
					   ks && ks->addr == where.start ? ks->name : where.ksym),
		.filename = where.file ? strset__add(sym->strings, where.file) : NULL,
		.line = where.line,
	};
	if (!line.system_name || (where.file && !line.filename))
		return symbolizer__oom(sym);
	if (key->mapping) {
		km->has_functions = true;
		if (where.file)
			km->has_filenames = km->has_line_numbers = true;
	}
	return symbolizer__add_frame(sym, key, hash, &line, 1,
				     where.file ? FRAME_LINES : FRAME_SYMBOL);
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
	ks = key.mapping ? kallsyms__lookup(sym->kallsyms, addr) : NULL;
	/* A BPF program unloaded before kallsyms was read has its code under another symbol. */
	f = symbolizer__bpf_frame(sym, &key, hash, ks);
	if (f)
		return f;
	if (!key.mapping)
		return symbolizer__add_named(sym, &key, hash, sym->unknown, NULL, FRAME_NO_MAPPING);
	if (ks) {
		name = strset__add(sym->strings, ks->name);
		km->has_functions = true;
		return symbolizer__add_named(sym, &key, hash, name, name, FRAME_SYMBOL);
	}
	name = strset__addf(sym->strings, KERNEL_NAME "+0x%llx", (unsigned long long)addr);
	return symbolizer__add_named(sym, &key, hash, name, NULL, FRAME_NO_SYMBOL);
}
