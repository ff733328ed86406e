// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/symbolizer end to end: this process with libsymbols.so
 * dlopen()ed, and the fixture programs running as children, symbolized
 * through proc_maps snapshots as the profiler does; kernel frames through
 * synthetic kallsyms files.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc_maps.h"
#include "common/log.h"
#include "common/strset.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolizer.h"
#include "fixture_child.h"
#include "test.h"
#include "tests/loaded_object.h"

/* A function of the test program itself, kept whole under its own name. */
#ifdef __clang__
__attribute__((noinline, used))
#else
__attribute__((noipa, used))
#endif
int test_symbolizer_target(int n)
{
	static volatile int sink;

	for (int i = 0; i < n; i++)
		sink += i;
	return sink;
}

struct env {
	struct strset *strings;
	struct file_table *files;
	struct proc_maps *maps;
	struct symbolizer *sym;
};

static int env_init(struct env *e, pid_t pid, const char *kallsyms)
{
	struct symbolizer_opts opts = { .kallsyms_path = kallsyms };

	memset(e, 0, sizeof(*e));
	e->strings = strset__new();
	if (!e->strings)
		return -1;
	e->files = file_table__new(e->strings);
	if (pid)
		e->maps = proc_maps__read(pid, e->files);
	e->sym = symbolizer__new(e->strings, &opts);
	return e->files && (!pid || e->maps) && e->sym ? 0 : -1;
}

static void env_release(struct env *e)
{
	symbolizer__free(e->sym);
	proc_maps__free(e->maps);
	file_table__free(e->files);
	strset__free(e->strings);
}

/* --- log capture -------------------------------------------------------- */

static char last_warning[512];

static void capture_print(enum log_level level, const char *fmt, va_list args)
{
	if (level == LOG_WARN)
		vsnprintf(last_warning, sizeof(last_warning), fmt, args);
}

/* --- this process ------------------------------------------------------- */

static void check_resolved(const struct profile_frame *f, uint64_t addr, const char *name)
{
	CHECK(f);
	CHECK_U64(f->address, addr);
	CHECK_STR(profile_frame__func(f)->name, name);
	CHECK(profile_frame__func(f)->system_name == profile_frame__func(f)->name);
	CHECK(profile_frame__resolved(f));
	CHECK(!f->kernel);
	CHECK(f->mapping);
	CHECK(f->mapping->has_functions);
	CHECK(!f->mapping->kernel);
	CHECK(addr >= f->mapping->start && addr < f->mapping->limit);
}

static void check_self(struct env *e, void *h, const struct loaded_object *lib, const char *path)
{
	void *(*local_addr)(void) = (void *(*)(void))dlsym(h, "fixture_lib_local_addr");
	uintptr_t alpha = (uintptr_t)dlsym(h, "fixture_lib_alpha");
	uintptr_t beta = (uintptr_t)dlsym(h, "fixture_lib_beta");
	uintptr_t sized = (uintptr_t)dlsym(h, "fixture_lib_sized");
	const struct profile_frame *f, *g;
	struct symbolizer_stats st;
	char name[64];

	CHECK(local_addr && alpha && beta && sized);
	f = symbolizer__user_frame(e->sym, e->maps, alpha);
	check_resolved(f, alpha, "fixture_lib_alpha");
	CHECK_STR(f->mapping->filename, path);
	CHECK_STR(f->mapping->build_id, lib->build_id);
	/* The fixture has DWARF: the line comes with the function. */
	CHECK(profile_frame__func(f)->filename);
	CHECK(strstr(profile_frame__func(f)->filename, "tests/fixtures/libsymbols.c"));
	CHECK(profile_frame__func(f)->line > 0);
	/* Memoized: the same address gives the same frame. */
	CHECK(symbolizer__user_frame(e->sym, e->maps, alpha) == f);
	g = symbolizer__user_frame(e->sym, e->maps, alpha + 3);
	check_resolved(g, alpha + 3, "fixture_lib_alpha");
	CHECK(g != f);
	CHECK(profile_frame__func(g)->name == profile_frame__func(f)->name);
	CHECK(g->mapping == f->mapping);
	check_resolved(symbolizer__user_frame(e->sym, e->maps, beta + 1), beta + 1,
		       "fixture_lib_beta");
	check_resolved(symbolizer__user_frame(e->sym, e->maps, (uintptr_t)local_addr()),
		       (uintptr_t)local_addr(), "fixture_lib_local");

	/* In the library's code, in no function: named after the file and the ELF address. */
	f = symbolizer__user_frame(e->sym, e->maps, sized + 1);
	CHECK(f);
	snprintf(name, sizeof(name), "libsymbols.so+0x%llx",
		 (unsigned long long)(sized + 1 - lib->bias));
	CHECK_STR(profile_frame__func(f)->name, name);
	CHECK(!profile_frame__func(f)->system_name);
	CHECK(f->mapping == g->mapping);

	/* This test program's own functions. */
	check_resolved(symbolizer__user_frame(e->sym, e->maps,
					      (uintptr_t)test_symbolizer_target + 2),
		       (uintptr_t)test_symbolizer_target + 2, "test_symbolizer_target");

	symbolizer__stats(e->sym, &st);
	CHECK_U64(st.frames, 6);
	CHECK_U64(st.resolved, 5);
	CHECK_U64(st.unmapped, 0);
}

TEST(symbolizer_self_shared_library)
{
	char path[PATH_MAX];
	struct link_map *lm;
	struct loaded_object lib = { 0 };
	struct env e = { 0 };
	void *h;

	CHECK(realpath(test__fixture("libsymbols.so"), path));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h);
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0) {
		lib.bias = lm->l_addr;
		loaded_object__find(&lib, false);
	}
	if (lib.build_id[0] && env_init(&e, getpid(), NULL) == 0)
		check_self(&e, h, &lib, path);
	else
		test__fail(__FILE__, __LINE__, "cannot set up: %s", strerror(errno));
	env_release(&e);
	dlclose(h);
}

TEST(symbolizer_unknown)
{
	const struct profile_frame *f;
	struct symbolizer_stats st;
	struct env e;

	if (env_init(&e, getpid(), NULL)) {
		env_release(&e);
		CHECK(!"env_init");
	}
	/* Below mmap_min_addr: never mapped. */
	f = symbolizer__user_frame(e.sym, e.maps, 0x1000);
	CHECK(f);
	CHECK_STR(profile_frame__func(f)->name, "[unknown]");
	CHECK(!f->mapping);
	CHECK(!profile_frame__func(f)->system_name);
	CHECK(!f->kernel);
	CHECK_U64(f->address, 0x1000);
	CHECK(symbolizer__user_frame(e.sym, e.maps, 0x1000) == f);
	/* No snapshot at all. */
	CHECK(symbolizer__user_frame(e.sym, NULL, 0x1000) == f);
	f = symbolizer__user_frame(e.sym, NULL, (uintptr_t)test_symbolizer_target);
	CHECK_STR(profile_frame__func(f)->name, "[unknown]");
	symbolizer__stats(e.sym, &st);
	CHECK_U64(st.frames, 2);
	CHECK_U64(st.unmapped, 2);
	CHECK_U64(st.resolved, 0);
	env_release(&e);
}

/*
 * A snapshot that could not open the file (here: of a process that does not
 * exist) leaves the symbolizer its path, which it uses only if the inode
 * there is still the mapped one.
 */
static void check_path_fallback(const struct proc_map *real, uintptr_t alpha, uint64_t ino,
				const char *suffix, const char *expect, const char *warning)
{
	char text[PATH_MAX + 128];
	const struct profile_frame *f;
	log_print_fn old;
	struct env e;

	snprintf(text, sizeof(text), "%llx-%llx r-xp %08llx 00:00 %llu %s%s\n",
		 (unsigned long long)real->start, (unsigned long long)real->end,
		 (unsigned long long)real->pgoff, (unsigned long long)ino, real->name, suffix);
	if (env_init(&e, 0, NULL)) {
		env_release(&e);
		CHECK(!"env_init");
	}
	e.maps = proc_maps__parse(text, INT_MAX, e.files);
	if (!e.maps || e.maps->nr != 1 || !e.maps->maps[0].file || e.maps->maps[0].file->fd >= 0) {
		env_release(&e);
		CHECK(!"proc_maps__parse");
	}
	last_warning[0] = '\0';
	old = log_set_print(capture_print);
	f = symbolizer__user_frame(e.sym, e.maps, alpha);
	log_set_print(old);
	if (!f || strcmp(profile_frame__func(f)->name, expect) ||
	    (warning && !strstr(last_warning, warning)) || (!warning && last_warning[0]))
		test__fail(__FILE__, __LINE__, "'%s' != '%s', warning '%s'",
			   f ? profile_frame__func(f)->name : "", expect, last_warning);
	env_release(&e);
}

TEST(symbolizer_path_fallback)
{
	char path[PATH_MAX], unresolved[64];
	const struct proc_map *real;
	struct stat st;
	uintptr_t alpha;
	struct env e;
	void *h;

	CHECK(realpath(test__fixture("libsymbols.so"), path));
	CHECK(stat(path, &st) == 0);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h);
	alpha = (uintptr_t)dlsym(h, "fixture_lib_alpha");
	if (env_init(&e, getpid(), NULL) == 0 && (real = proc_maps__find(e.maps, alpha))) {
		snprintf(unresolved, sizeof(unresolved), "libsymbols.so+0x%llx",
			 (unsigned long long)(alpha - real->start + real->pgoff));
		check_path_fallback(real, alpha, st.st_ino, "", "fixture_lib_alpha", NULL);
		check_path_fallback(real, alpha, st.st_ino + 1, "", unresolved, "replaced");
		check_path_fallback(real, alpha, st.st_ino, " (deleted)", unresolved, "deleted");
	} else {
		test__fail(__FILE__, __LINE__, "cannot set up: %s", strerror(errno));
	}
	env_release(&e);
	dlclose(h);
}

static void check_vdso(struct env *e, uintptr_t base)
{
	const struct profile_frame *f, *g;
	uintptr_t fn;
	void *h;

	/* The ELF header starts the mapping and is in no function. */
	f = symbolizer__user_frame(e->sym, e->maps, base);
	CHECK(f);
	CHECK_STR(profile_frame__func(f)->name, "[vdso]+0x0");
	CHECK(f->mapping);
	CHECK_STR(f->mapping->filename, "[vdso]");
	CHECK_U64(f->mapping->start, base);
	/*
	 * The loader knows the vDSO by this name and can look up its symbols
	 * (glibc on x86-64; other loaders or architectures name them otherwise).
	 */
	h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		SKIP("the loader does not know the vDSO as linux-vdso.so.1: %s", dlerror());
	fn = (uintptr_t)dlsym(h, "__vdso_clock_gettime");
	dlclose(h);
	if (!fn)
		SKIP("the vDSO has no __vdso_clock_gettime to look up");
	g = symbolizer__user_frame(e->sym, e->maps, fn + 1);
	check_resolved(g, fn + 1, "__vdso_clock_gettime");
	if (test__failed())
		return;
	CHECK(g->mapping == f->mapping);
	CHECK(symbolizer__user_frame(e->sym, e->maps, fn + 1) == g);
	CHECK(f->mapping->build_id);
}

TEST(symbolizer_vdso)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	struct env e;

	if (!base)
		SKIP("no vDSO in this process (AT_SYSINFO_EHDR is 0)");
	if (env_init(&e, getpid(), NULL) == 0)
		check_vdso(&e, base);
	else
		CHECK(!"env_init");
	env_release(&e);
}

/* --- symbol versions ---------------------------------------------------- */

/*
 * libversioned.so's .symtab names its functions "fixture_ver@VER_1",
 * "fixture_ver@@VER_2" and "_ZN7fixture3cxxEi@@VER_2": frames are named
 * without the versions, demangled, in profiles (user frames) and in
 * `profiler symbolize` (ELF frames) alike.
 */
/*
 * `profiler symbolize`'s lookup without the memo: the same lines as the
 * memoized frame @f, in the caller's answer, the function's name the same
 * interned string.
 */
static void check_elf_lookup(struct symbolizer *sym, const struct profile_mapping *elf,
			     const struct profile_frame *f)
{
	struct symbolizer_answer answer;
	const struct profile_frame *g;

	g = symbolizer__elf_lookup(sym, elf, f->address, &answer);
	CHECK(g == &answer.frame);
	if (!g)
		return;
	CHECK(g->mapping == elf && g->address == f->address);
	CHECK_U64(g->nr_lines, f->nr_lines);
	CHECK(g->source == f->source);
	for (uint32_t i = 0; i < f->nr_lines && i < g->nr_lines; i++) {
		CHECK(g->lines[i].name == f->lines[i].name);
		CHECK(g->lines[i].system_name == f->lines[i].system_name);
		CHECK(g->lines[i].filename == f->lines[i].filename);
		CHECK_U64(g->lines[i].line, f->lines[i].line);
	}
	CHECK(profile_frame__func(g)->filename);
}

static void check_versions(struct env *e, void *h, uintptr_t bias, const char *path)
{
	uintptr_t v1 = (uintptr_t)dlvsym(h, "fixture_ver", "VER_1");
	uintptr_t v2 = (uintptr_t)dlvsym(h, "fixture_ver", "VER_2");
	uintptr_t cxx = (uintptr_t)dlsym(h, "_ZN7fixture3cxxEi");
	const struct profile_mapping *elf;
	const struct profile_frame *f, *g;

	CHECK(v1 && v2 && cxx && v1 != v2);
	CHECK((uintptr_t)dlsym(h, "fixture_ver") == v2);
	f = symbolizer__user_frame(e->sym, e->maps, v1 + 1);
	check_resolved(f, v1 + 1, "fixture_ver");
	g = symbolizer__user_frame(e->sym, e->maps, v2 + 1);
	check_resolved(g, v2 + 1, "fixture_ver");
	/* Two functions, one name. */
	CHECK(profile_frame__func(f)->name == profile_frame__func(g)->name);
	f = symbolizer__user_frame(e->sym, e->maps, cxx + 1);
	CHECK_STR(profile_frame__func(f)->name, "fixture::cxx(int)");
	CHECK_STR(profile_frame__func(f)->system_name, "_ZN7fixture3cxxEi");

	CHECK(symbolizer__open_elf(e->sym, path, &elf) == 0);
	f = symbolizer__elf_frame(e->sym, elf, v1 - bias);
	CHECK_STR(profile_frame__func(f)->name, "fixture_ver");
	CHECK_STR(profile_frame__func(f)->system_name, "fixture_ver");
	f = symbolizer__elf_frame(e->sym, elf, cxx - bias);
	CHECK_STR(profile_frame__func(f)->name, "fixture::cxx(int)");
	CHECK_STR(profile_frame__func(f)->system_name, "_ZN7fixture3cxxEi");
	check_elf_lookup(e->sym, elf, f);
	check_elf_lookup(e->sym, elf, symbolizer__elf_frame(e->sym, elf, v2 - bias + 1));
}

static bool keep_all(const struct elf_file *elf, void *arg)
{
	(void)elf;
	return *(bool *)arg;
}

/*
 * Symbolizers one after another lent one set of modules, as profiler
 * serve's windows are: the second finds the file's module read already,
 * and answers as the first did; retaining none frees it.
 */
TEST(symbolizer_modules_shared)
{
	struct module_set *set = module_set__new();
	char path[PATH_MAX];
	struct link_map *lm;
	uintptr_t cxx;
	bool keep;
	void *h;

	CHECK(set);
	CHECK(realpath(test__fixture("libversioned.so"), path));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h);
	if (!set || !h || dlinfo(h, RTLD_DI_LINKMAP, &lm)) {
		module_set__free(set);
		return;
	}
	cxx = (uintptr_t)dlsym(h, "_ZN7fixture3cxxEi") - lm->l_addr;
	for (int i = 0; i < 2; i++) {
		struct strset *strings = strset__new();
		struct symbolizer_opts opts = { .modules = set };
		struct symbolizer *sym = strings ? symbolizer__new(strings, &opts) : NULL;
		const struct profile_mapping *elf;
		const struct profile_frame *f;

		CHECK(sym);
		if (sym && symbolizer__open_elf(sym, path, &elf) == 0) {
			f = symbolizer__elf_frame(sym, elf, cxx);
			CHECK_STR(profile_frame__func(f)->name, "fixture::cxx(int)");
		} else {
			test__fail(__FILE__, __LINE__, "cannot open '%s'", path);
		}
		symbolizer__free(sym);
		strset__free(strings);
		CHECK_U64(module_set__count(set), 1);
	}
	keep = true;
	module_set__retain(set, keep_all, &keep);
	CHECK_U64(module_set__count(set), 1);
	keep = false;
	module_set__retain(set, keep_all, &keep);
	CHECK_U64(module_set__count(set), 0);
	module_set__free(set);
	dlclose(h);
}

TEST(symbolizer_symbol_versions)
{
	char path[PATH_MAX];
	struct link_map *lm;
	struct env e = { 0 };
	void *h;

	CHECK(realpath(test__fixture("libversioned.so"), path));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h);
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && env_init(&e, getpid(), NULL) == 0)
		check_versions(&e, h, lm->l_addr, path);
	else
		test__fail(__FILE__, __LINE__, "cannot set up: %s", strerror(errno));
	env_release(&e);
	dlclose(h);
}

/* --- fixture programs, running ------------------------------------------ */

/*
 * Symbolize the child's functions. @stripped: they have no symbols, so
 * the names are BASENAME+0xVADDR, where VADDR is the function's start for
 * those the compiler wrote (their .eh_frame FDE's start), so that two
 * addresses in one function share a name, and the address itself in the
 * asm that has no CFI (fixture_after).
 */
static void check_child(struct env *e, const struct fixture_child *c, const char *path,
			bool stripped)
{
	static const char *const names[] = { "fixture_alpha", "fixture_beta", "fixture_local",
					     "fixture_after", "main" };
	const struct profile_frame *f, *g;
	const char *base = strrchr(path, '/') + 1;
	char name[PATH_MAX + 32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct fixture_sym *s = fixture_child__sym(c, names[i]);
		bool cfi = strcmp(names[i], "fixture_after"), same;

		CHECK(s);
		f = symbolizer__user_frame(e->sym, e->maps, s->addr + 1);
		CHECK(f);
		CHECK(f->mapping);
		CHECK_STR(f->mapping->filename, path);
		CHECK_STR(f->mapping->build_id, c->build_id);
		if (stripped) {
			snprintf(name, sizeof(name), "%s+0x%llx", base,
				 (unsigned long long)s->vaddr + !cfi);
			CHECK_STR(profile_frame__func(f)->name, name);
			CHECK(!profile_frame__func(f)->system_name);
			CHECK(!f->mapping->has_functions);
			g = symbolizer__user_frame(e->sym, e->maps, s->addr + 4);
			CHECK(g != f);
			CHECK_U64(g->address, s->addr + 4);
			same = profile_frame__func(g)->name == profile_frame__func(f)->name;
			CHECK(same == cfi);
		} else {
			check_resolved(f, s->addr + 1, names[i]);
		}
		CHECK(symbolizer__user_frame(e->sym, e->maps, s->addr + 1) == f);
	}
	/* The 15 bytes after fixture_sized are in no function. */
	f = symbolizer__user_frame(e->sym, e->maps,
				   fixture_child__sym(c, "fixture_sized")->addr + 4);
	snprintf(name, sizeof(name), "%s+0x%llx", base,
		 (unsigned long long)fixture_child__sym(c, "fixture_sized")->vaddr + 4);
	CHECK_STR(profile_frame__func(f)->name, name);
}

static void check_fixture_process(const char *fixture, bool stripped)
{
	char path[PATH_MAX];
	struct fixture_child c;
	struct env e;

	CHECK(realpath(test__fixture(fixture), path));
	if (fixture_child__start(path, &c)) {
		fixture_child__stop(&c);
		CHECK(!"child_start");
	}
	if (env_init(&e, c.pid, NULL) == 0)
		check_child(&e, &c, path, stripped);
	else
		test__fail(__FILE__, __LINE__, "env_init: %s", strerror(errno));
	env_release(&e);
	fixture_child__stop(&c);
}

TEST(symbolizer_process_pie)
{
	check_fixture_process("symbols-pie", false);
}

TEST(symbolizer_process_nopie)
{
	check_fixture_process("symbols-nopie", false);
}

TEST(symbolizer_process_stripped)
{
	check_fixture_process("symbols-stripped", true);
}

/* Two processes of two copies of one file: two mappings, one build-id, all resolved. */
static void check_copies(struct env *e, struct fixture_child *c, const char *path)
{
	const struct profile_frame *f[2];

	for (int i = 0; i < 2; i++) {
		proc_maps__free(e->maps);
		e->maps = proc_maps__read(c[i].pid, e->files);
		CHECK(e->maps);
		f[i] = symbolizer__user_frame(e->sym, e->maps,
					      fixture_child__sym(&c[i], "fixture_beta")->addr);
		check_resolved(f[i], fixture_child__sym(&c[i], "fixture_beta")->addr,
			       "fixture_beta");
	}
	CHECK(f[0]->mapping != f[1]->mapping);
	CHECK_STR(f[1]->mapping->filename, path);
	CHECK(f[0]->mapping->build_id == f[1]->mapping->build_id);
	CHECK(profile_frame__func(f[0])->name == profile_frame__func(f[1])->name);
}

TEST(symbolizer_same_build_id)
{
	char dir[] = "/tmp/profiler-test-XXXXXX", path[64], orig[PATH_MAX];
	struct fixture_child c[2] = { { .in_fd = -1 }, { .in_fd = -1 } };
	struct env e = { 0 };

	CHECK(realpath(test__fixture("symbols-pie"), orig));
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/symbols-copy", dir);
	if (test__copy_file(orig, path, 0755) || fixture_child__start(orig, &c[0]) ||
	    fixture_child__start(path, &c[1]))
		test__fail(__FILE__, __LINE__, "cannot start the copies");
	else if (env_init(&e, 0, NULL) == 0)
		check_copies(&e, c, path);
	else
		test__fail(__FILE__, __LINE__, "env_init: %s", strerror(errno));
	env_release(&e);
	fixture_child__stop(&c[0]);
	fixture_child__stop(&c[1]);
	unlink(path);
	rmdir(dir);
}

/* --- kernel ------------------------------------------------------------- */

static const char kallsyms_text[] = "ffffffff81000000 T _stext\n"
				    "ffffffff81001000 T do_syscall_64\n"
				    "ffffffff81002000 t local_fn\n"
				    "ffffffff81003000 T _etext\n"
				    "ffffffffc0a00000 t mod_fn\t[mymod]\n";

static int write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);
	ssize_t len = strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static void check_kernel(struct symbolizer *sym)
{
	const struct profile_frame *f, *g;
	const struct profile_mapping *km;

	f = symbolizer__kernel_frame(sym, 0xffffffff81001010);
	CHECK(f);
	CHECK_STR(profile_frame__func(f)->name, "do_syscall_64");
	CHECK(profile_frame__func(f)->system_name == profile_frame__func(f)->name);
	CHECK(f->kernel);
	CHECK_U64(f->address, 0xffffffff81001010);
	km = f->mapping;
	CHECK(km);
	CHECK_STR(km->filename, "[kernel.kallsyms]");
	CHECK(km->kernel);
	CHECK(km->has_functions);
	CHECK_U64(km->start, 0xffffffff81000000);
	CHECK_U64(km->limit, 0xffffffffc0a01000);
	CHECK(symbolizer__kernel_frame(sym, 0xffffffff81001010) == f);

	f = symbolizer__kernel_frame(sym, 0xffffffff81002fff);
	CHECK_STR(profile_frame__func(f)->name, "local_fn");
	/* A module symbol is named without its module. */
	f = symbolizer__kernel_frame(sym, 0xffffffffc0a00042);
	CHECK_STR(profile_frame__func(f)->name, "mod_fn");
	CHECK(f->mapping == km);

	/* Outside every symbol: no mapping. */
	f = symbolizer__kernel_frame(sym, 0xffffffff80000000);
	CHECK_STR(profile_frame__func(f)->name, "[unknown]");
	CHECK(!f->mapping);
	CHECK(f->kernel);
	CHECK(!profile_frame__func(f)->system_name);
	/* Not the user frame of the same address. */
	g = symbolizer__user_frame(sym, NULL, 0xffffffff80000000);
	CHECK(g != f);
	CHECK(!g->kernel);
	CHECK(profile_frame__func(g)->name == profile_frame__func(f)->name);
}

TEST(symbolizer_kernel)
{
	char path[] = "/tmp/profiler-test-XXXXXX";
	struct strset *strings = strset__new();
	struct symbolizer_opts opts = { .kallsyms_path = path };
	struct symbolizer *sym = NULL;

	CHECK(strings);
	if (write_temp(path, kallsyms_text) == 0 && (sym = symbolizer__new(strings, &opts)))
		check_kernel(sym);
	else
		test__fail(__FILE__, __LINE__, "cannot set up: %s", strerror(errno));
	symbolizer__free(sym);
	strset__free(strings);
	unlink(path);
}

/*
 * Kernel symbols read once and lent to symbolizers one after another, as
 * profiler serve lends them to each window's: each resolves as with its
 * own, and none frees them.
 */
TEST(symbolizer_kernel_lent)
{
	struct kallsyms *ks = kallsyms__parse(kallsyms_text);

	CHECK(ks);
	for (int i = 0; ks && i < 2; i++) {
		struct strset *strings = strset__new();
		struct symbolizer_opts opts = { .kallsyms = ks, .kallsyms_path = "/nonexistent" };
		struct symbolizer *sym = strings ? symbolizer__new(strings, &opts) : NULL;

		CHECK(sym);
		if (sym)
			check_kernel(sym);
		symbolizer__free(sym);
		strset__free(strings);
	}
	kallsyms__free(ks);
}

static void check_kernel_unresolved(struct symbolizer *sym, const char *why)
{
	const struct profile_frame *f;
	log_print_fn old = log_set_print(capture_print);

	last_warning[0] = '\0';
	f = symbolizer__kernel_frame(sym, 0xffffffff81001010);
	log_set_print(old);
	CHECK(f);
	CHECK_STR(profile_frame__func(f)->name, "[unknown]");
	CHECK(f->kernel);
	CHECK(!f->mapping);
	/* Said once, with the reason. */
	CHECK(strstr(last_warning, why));
	last_warning[0] = '\0';
	old = log_set_print(capture_print);
	f = symbolizer__kernel_frame(sym, 0xffffffff81001020);
	log_set_print(old);
	CHECK_STR(profile_frame__func(f)->name, "[unknown]");
	CHECK(!last_warning[0]);
}

TEST(symbolizer_kernel_hidden)
{
	char path[] = "/tmp/profiler-test-XXXXXX";
	struct strset *strings = strset__new();
	struct symbolizer_opts opts = { .kallsyms_path = path };
	struct symbolizer *sym = NULL;

	CHECK(strings);
	if (write_temp(path, "0000000000000000 T _stext\n0000000000000000 t foo\t[m]\n") == 0 &&
	    (sym = symbolizer__new(strings, &opts)))
		check_kernel_unresolved(sym, "hidden");
	else
		test__fail(__FILE__, __LINE__, "cannot set up: %s", strerror(errno));
	symbolizer__free(sym);
	strset__free(strings);
	unlink(path);
}

TEST(symbolizer_kernel_no_kallsyms)
{
	struct strset *strings = strset__new();
	struct symbolizer_opts opts = { .kallsyms_path = "/nonexistent/kallsyms" };
	struct symbolizer *sym;

	CHECK(strings);
	sym = symbolizer__new(strings, &opts);
	if (sym)
		check_kernel_unresolved(sym, "No such file or directory");
	else
		CHECK(sym);
	symbolizer__free(sym);
	strset__free(strings);
}

static void free_null(void)
{
	symbolizer__free(NULL);
}

/* __free(NULL) is a no-op (STYLE.md): it neither crashes nor touches errno. */
TEST(symbolizer_free_null)
{
	const char *what = test__in_child(free_null);

	if (what)
		test__fail(__FILE__, __LINE__, "symbolizer__free(NULL): %s", what);
}
