// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/array.h"
#include "common/log.h"
#include "common/sort.h"
#include "debuginfo.h"
#include "dwarf_index.h"
#include "elf_symtab.h"
#include "elf/elf_file.h"
#include "elf/fde_table.h"
#include "elf/gopclntab.h"
#include "module.h"

struct module {
	struct elf_symtab *tab;
	/* The debug file's (or MiniDebugInfo's) symbols, where its DWARF is too. */
	struct elf_symtab *debug_tab;
	struct dwarf_index *dwarf;
	/* A Go binary's function table (gopclntab.h): Go code's names, lines and inlines. */
	struct gopclntab *go;
	char *path, *root, *debug_dir;
	bool debug_loaded, go_read;
};

struct module *module__new(struct elf_symtab *tab, const char *path, const struct module_opts *opts)
{
	struct module *mod;

	mod = calloc(1, sizeof(*mod));
	if (!mod)
		goto out_free;
	mod->tab = tab;
	if ((path && !(mod->path = strdup(path))) ||
	    (opts && opts->root && !(mod->root = strdup(opts->root))) ||
	    (opts && opts->debug_dir && !(mod->debug_dir = strdup(opts->debug_dir))))
		goto out_free;
	return mod;

out_free:
	if (mod)
		mod->tab = NULL; /* the caller's still */
	module__free(mod);
	errno = ENOMEM;
	return NULL;
}

void module__free(struct module *mod)
{
	if (!mod)
		return;
	/* The index reads the debug file's sections: it goes first. */
	dwarf_index__free(mod->dwarf);
	free(mod->go);
	elf_symtab__free(mod->debug_tab);
	elf_symtab__free(mod->tab);
	free(mod->path);
	free(mod->root);
	free(mod->debug_dir);
	free(mod);
}

const struct elf_symtab *module__symtab(const struct module *mod)
{
	return mod->tab;
}

static const char *module_name(const struct module *mod)
{
	return mod->path ? mod->path : "(unnamed)";
}

/* The separate debug file, for DWARF and, when the file has only .dynsym, its .symtab. */
static void module__open_debug_file(struct module *mod)
{
	struct debuginfo_opts opts = { .root = mod->root, .debug_dir = mod->debug_dir };
	char *found = NULL;
	int fd;

	fd = debuginfo__find(elf_symtab__elf(mod->tab), mod->path, elf_symtab__build_id(mod->tab),
			     &opts, &found);
	if (fd < 0)
		return;
	mod->debug_tab = elf_symtab__open_fd(fd, found);
	if (!mod->debug_tab)
		pr_warn("symbolize: cannot read debug file '%s' of '%s': %s", found,
			module_name(mod), strerror(errno));
	else
		pr_debug("symbolize: debug file of '%s': '%s'", module_name(mod), found);
	close(fd);
	free(found);
}

/* MiniDebugInfo: the static functions a stripped file's .dynsym lacks. */
static void module__open_minidebuginfo(struct module *mod)
{
	struct elf_file *elf;
	size_t size;
	void *image;

	image = debuginfo__minidebuginfo(elf_symtab__elf(mod->tab), &size);
	if (!image) {
		if (errno != ENOENT)
			pr_warn("symbolize: cannot read MiniDebugInfo of '%s': %s",
				module_name(mod), strerror(errno));
		return;
	}
	elf = elf_file__from_image(image, size, module_name(mod));
	if (!elf)
		return;
	mod->debug_tab = elf_symtab__new(elf);
	elf_file__put(elf);
}

static void module__load_debug(struct module *mod)
{
	Elf *elf = elf_symtab__elf(mod->tab);
	size_t nr_syms;
	bool need_symbols;

	mod->debug_loaded = true;
	elf_symtab__syms(mod->tab, &nr_syms);
	need_symbols = !nr_syms || elf_symtab__from_dynsym(mod->tab);
	if (debuginfo__has_dwarf(elf))
		mod->dwarf = dwarf_index__new(elf_symtab__file(mod->tab), module_name(mod));
	if (!mod->dwarf || need_symbols)
		module__open_debug_file(mod);
	if (!mod->debug_tab && need_symbols)
		module__open_minidebuginfo(mod);
	if (!mod->dwarf && mod->debug_tab && debuginfo__has_dwarf(elf_symtab__elf(mod->debug_tab)))
		mod->dwarf = dwarf_index__new(elf_symtab__file(mod->debug_tab), module_name(mod));
}

/* The symbol covering @vaddr in the file's symbols or its debug file's, the closer of two. */
static const struct elf_sym *module__symbol(const struct module *mod, uint64_t vaddr)
{
	const struct elf_sym *own, *debug = NULL;

	own = elf_symtab__lookup(mod->tab, vaddr);
	if (mod->debug_tab)
		debug = elf_symtab__lookup(mod->debug_tab, vaddr);
	if (!own || !debug)
		return own ? own : debug;
	return debug->addr >= own->addr ? debug : own;
}

_Static_assert(GOPCLNTAB_MAX_DEPTH <= MODULE_MAX_LOCS, "a Go inline chain fits a lookup's");

/* The file's Go function table, read the first time; NULL when it is not Go's. */
static const struct gopclntab *module__go(struct module *mod)
{
	int err;

	if (mod->go_read)
		return mod->go;
	mod->go_read = true;
	mod->go = malloc(sizeof(*mod->go));
	if (!mod->go)
		return NULL;
	err = gopclntab__open(mod->go, elf_symtab__elf(mod->tab));
	if (err) {
		if (err != -ENOENT)
			pr_warn("symbolize: cannot read the Go function table of '%s': %s",
				module_name(mod),
				err == -ENOTSUP ? "a layout older than Go 1.16" : "corrupt");
		free(mod->go);
		mod->go = NULL;
	}
	return mod->go;
}

/*
 * Go code, from its function table: the names Go's own tracebacks print,
 * stripped or not. 0 for code the table does not cover (cgo's C).
 */
static int module__go_lookup(struct module *mod, uint64_t vaddr, struct module_loc *locs)
{
	struct gopclntab_loc gl[GOPCLNTAB_MAX_DEPTH];
	const struct gopclntab *go = module__go(mod);
	int nr;

	if (!go)
		return 0;
	nr = gopclntab__lookup(go, vaddr, gl);
	for (int i = 0; i < nr; i++)
		locs[i] = (struct module_loc){ .name = gl[i].name,
					       .file = gl[i].file,
					       .line = gl[i].line };
	return nr;
}

int module__lookup(struct module *mod, uint64_t vaddr, struct module_loc *locs)
{
	struct dwarf_loc dl[MODULE_MAX_LOCS];
	const struct elf_sym *sym;
	int nr;

	nr = module__go_lookup(mod, vaddr, locs);
	if (nr)
		return nr;
	if (!mod->debug_loaded)
		module__load_debug(mod);
	sym = module__symbol(mod, vaddr);
	if (mod->dwarf)
		nr = dwarf_index__lookup(mod->dwarf, vaddr, dl, MODULE_MAX_LOCS);
	if (!nr) {
		locs[0] = (struct module_loc){ .name = sym ? sym->name : NULL };
		return 1;
	}
	for (int i = 0; i < nr; i++) {
		locs[i] = (struct module_loc){
			.name = dl[i].function,
			.file = dl[i].file,
			.line = dl[i].line,
			.discriminator = dl[i].discriminator,
		};
	}
	if (sym)
		locs[nr - 1].name = sym->name;
	return nr;
}

bool module__self_contained(struct module *mod)
{
	Elf *elf = elf_symtab__elf(mod->tab);
	size_t nr;

	/* Go's table is read from the file at once: nothing to keep. */
	if (debuginfo__has_altlink(elf) || module__go(mod))
		return false;
	/* Once read: the DWARF was indexed, and no other file was opened. */
	if (mod->debug_loaded)
		return mod->dwarf && !mod->debug_tab;
	elf_symtab__syms(mod->tab, &nr);
	return nr && !elf_symtab__from_dynsym(mod->tab) && debuginfo__has_dwarf(elf);
}

/* Add to @b the addresses in [@lo, @hi) where the symbol of @tab covering an address changes. */
static int symbol_breaks(const struct elf_symtab *tab, uint64_t lo, uint64_t hi, uint64_t **b,
			 size_t *nr, size_t *alloc)
{
	const struct elf_sym *syms;
	size_t n, first = 0, end;

	if (!tab)
		return 0;
	syms = elf_symtab__syms(tab, &n);
	/* The last symbol at or below @lo: the one elf_symtab__lookup(lo) would weigh. */
	end = n;
	while (first < end) {
		size_t mid = first + (end - first) / 2;

		if (syms[mid].addr <= lo)
			first = mid + 1;
		else
			end = mid;
	}
	first = first ? first - 1 : 0;
	for (size_t i = first; i < n && syms[i].addr < hi; i++) {
		uint64_t start = syms[i].addr, stop = start + syms[i].size;

		if (array__reserve(b, alloc, *nr + 2, sizeof(**b)))
			return -ENOMEM;
		if (start > lo)
			(*b)[(*nr)++] = start;
		if (stop > lo && stop < hi)
			(*b)[(*nr)++] = stop;
	}
	return 0;
}

void module_region__release(struct module_region *r)
{
	free(r->ranges);
	free(r->breaks);
	*r = (struct module_region){ 0 };
}

int module__region(struct module *mod, uint64_t vaddr, struct module_region *r)
{
	size_t alloc, nr = 0;
	int in_unit = 0;

	*r = (struct module_region){ 0 };
	if (!mod->debug_loaded)
		module__load_debug(mod);
	if (mod->dwarf) {
		in_unit = dwarf_index__breaks(mod->dwarf, vaddr, &r->ranges, &r->nr_ranges,
					      &r->breaks, &r->nr_breaks);
		if (in_unit < 0)
			return -ENOMEM;
	} else {
		r->ranges = malloc(sizeof(*r->ranges));
		if (!r->ranges)
			return -ENOMEM;
		r->ranges[0] = (struct dwarf_span){ 0, UINT64_MAX };
		r->nr_ranges = 1;
	}
	/* Between units, the symbol alone answers: its extent is the region. */
	if (!in_unit) {
		const struct elf_sym *sym = module__symbol(mod, vaddr);
		struct dwarf_span *gap = &r->ranges[0];

		if (!sym) {
			module_region__release(r);
			return -ENOENT;
		}
		gap->lo = sym->addr > gap->lo ? sym->addr : gap->lo;
		gap->hi = sym->addr + sym->size < gap->hi ? sym->addr + sym->size : gap->hi;
	}
	alloc = r->nr_breaks;
	for (size_t i = 0; i < r->nr_ranges; i++) {
		if (symbol_breaks(mod->tab, r->ranges[i].lo, r->ranges[i].hi, &r->breaks,
				  &r->nr_breaks, &alloc) ||
		    symbol_breaks(mod->debug_tab, r->ranges[i].lo, r->ranges[i].hi, &r->breaks,
				  &r->nr_breaks, &alloc)) {
			module_region__release(r);
			return -ENOMEM;
		}
	}
	/* Sorted, unique, and strictly inside a range. */
	sort__u64(r->breaks, r->nr_breaks);
	for (size_t i = 0, k = 0; i < r->nr_breaks; i++) {
		uint64_t b = r->breaks[i];

		while (k < r->nr_ranges && r->ranges[k].hi <= b)
			k++;
		if (k == r->nr_ranges)
			break;
		if (b <= r->ranges[k].lo || (nr && r->breaks[nr - 1] == b))
			continue;
		r->breaks[nr++] = b;
	}
	r->nr_breaks = nr;
	return 0;
}

int module__function_start(struct module *mod, uint64_t vaddr, uint64_t *start)
{
	/*
	 * The elf_file reads its FDEs the first time an address needs them
	 * (here or in the unwinder): most modules have every sampled address
	 * named by a symbol and never pay for it.
	 */
	const struct fde_table *fdes = elf_file__fdes(elf_symtab__file(mod->tab));

	if (!fdes)
		return -ENOENT;
	return fde_table__lookup(fdes, vaddr, start);
}

void module__add_dwarf_stats(const struct module *mod, struct dwarf_index_stats *stats)
{
	if (mod->dwarf)
		dwarf_index__add_stats(mod->dwarf, stats);
}
