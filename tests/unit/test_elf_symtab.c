// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/elf_symtab: the fixtures' symbols, looked up at the
 * addresses the dynamic loader gives (the fixture programs print theirs,
 * libsymbols.so is dlopen()ed here), never at addresses our own ELF code read.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbolize/elf_symtab.h"
#include "test.h"
#include "tests/loaded_object.h"

extern char **environ;

struct fixture_sym {
	char name[64];
	uint64_t addr, vaddr;
};

struct fixture_out {
	char build_id[2 * 64 + 1];
	size_t nr;
	struct fixture_sym syms[16];
};

/* Run fixture program @name and parse what it prints; 0 or -1. */
static int fixture_run(const char *name, struct fixture_out *out)
{
	char cmd[4200], line[256];
	bool ready = false;
	FILE *f;

	memset(out, 0, sizeof(*out));
	snprintf(cmd, sizeof(cmd), "'%s'", test__fixture(name));
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct fixture_sym *s = &out->syms[out->nr];
		unsigned long long addr, vaddr;

		if (sscanf(line, "build-id %128s", out->build_id) == 1)
			continue;
		if (!strcmp(line, "ready\n"))
			ready = true;
		if (out->nr == 16)
			continue;
		if (sscanf(line, "sym %63s %llx %llx", s->name, &addr, &vaddr) == 3) {
			s->addr = addr;
			s->vaddr = vaddr;
			out->nr++;
		}
	}
	return pclose(f) == 0 && ready ? 0 : -1;
}

static const struct fixture_sym *fixture_sym(const struct fixture_out *out, const char *name)
{
	for (size_t i = 0; i < out->nr; i++)
		if (!strcmp(out->syms[i].name, name))
			return &out->syms[i];
	return NULL;
}

static const struct elf_sym *find_name(const struct elf_symtab *tab, const char *name)
{
	size_t nr;
	const struct elf_sym *syms = elf_symtab__syms(tab, &nr);

	for (size_t i = 0; i < nr; i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	return NULL;
}

/* Every compiled function is found at its address, at +1 and at its last byte. */
static void check_function(const struct elf_symtab *tab, const char *name, uint64_t vaddr)
{
	const struct elf_sym *s = elf_symtab__lookup(tab, vaddr);

	CHECK(s);
	CHECK_STR(s->name, name);
	CHECK_U64(s->addr, vaddr);
	CHECK(s->size > 1 && s->size < 4096);
	CHECK(elf_symtab__lookup(tab, vaddr + 1) == s);
	CHECK(elf_symtab__lookup(tab, vaddr + s->size - 1) == s);
	CHECK(elf_symtab__lookup(tab, vaddr + s->size) != s);
	CHECK(elf_symtab__lookup(tab, vaddr - 1) != s);
}

/* The asm-made symbols of symbols.c, whose extents are known exactly. */
static void check_extents(const struct elf_symtab *tab, const struct fixture_out *out)
{
	uint64_t sized = fixture_sym(out, "fixture_sized")->vaddr;
	uint64_t unsized = fixture_sym(out, "fixture_unsized")->vaddr;
	uint64_t after = fixture_sym(out, "fixture_after")->vaddr;
	uint64_t dup = fixture_sym(out, "fixture_dup_a")->vaddr;
	uint64_t weak = fixture_sym(out, "fixture_weak")->vaddr;
	const struct elf_sym *s;

	s = elf_symtab__lookup(tab, sized);
	CHECK(s);
	CHECK_STR(s->name, "fixture_sized");
	CHECK_U64(s->size, 1);
	/* Past the end of a sized function, before the next symbol: no symbol. */
	CHECK(!elf_symtab__lookup(tab, sized + 1));
	CHECK(!elf_symtab__lookup(tab, sized + 15));

	/* A size-0 symbol reaches the next one. */
	CHECK_U64(after, unsized + 16);
	s = elf_symtab__lookup(tab, unsized + 15);
	CHECK(s);
	CHECK_STR(s->name, "fixture_unsized");
	CHECK_U64(s->size, 16);
	s = elf_symtab__lookup(tab, after);
	CHECK(s);
	CHECK_STR(s->name, "fixture_after");

	/* One symbol per address: the shortest name, then the first by strcmp. */
	s = elf_symtab__lookup(tab, dup + 8);
	CHECK(s);
	CHECK_STR(s->name, "fixture_dup_a");
	CHECK(!find_name(tab, "fixture_dup_b"));
	CHECK(!find_name(tab, "fixture_dup_long"));
	/* WEAK beats a shorter LOCAL. */
	s = elf_symtab__lookup(tab, weak);
	CHECK(s);
	CHECK_STR(s->name, "fixture_weak");
	CHECK(!find_name(tab, "fl"));
	/* GLOBAL fixture_alpha beats its shorter WEAK and LOCAL aliases. */
	CHECK(!find_name(tab, "fx_w"));
	CHECK(!find_name(tab, "fx_l"));
}

static void check_sorted(const struct elf_symtab *tab)
{
	size_t nr;
	const struct elf_sym *syms = elf_symtab__syms(tab, &nr);

	for (size_t i = 1; i < nr; i++)
		CHECK(syms[i - 1].addr < syms[i].addr);
}

static void check_executable(const char *fixture)
{
	struct fixture_out out;
	struct elf_symtab *tab;

	CHECK(fixture_run(fixture, &out) == 0);
	tab = elf_symtab__open(test__fixture(fixture));
	CHECK(tab);
	CHECK(!elf_symtab__from_dynsym(tab));
	CHECK_STR(elf_symtab__build_id(tab), out.build_id);
	check_sorted(tab);
	check_function(tab, "fixture_alpha", fixture_sym(&out, "fixture_alpha")->vaddr);
	check_function(tab, "fixture_beta", fixture_sym(&out, "fixture_beta")->vaddr);
	check_function(tab, "fixture_local", fixture_sym(&out, "fixture_local")->vaddr);
	check_function(tab, "main", fixture_sym(&out, "main")->vaddr);
	check_extents(tab, &out);
	elf_symtab__free(tab);
}

TEST(elf_symtab_pie)
{
	check_executable("symbols-pie");
}

TEST(elf_symtab_nopie)
{
	check_executable("symbols-nopie");
}

TEST(elf_symtab_stripped_misses_cleanly)
{
	struct fixture_out out;
	struct elf_symtab *tab;
	size_t nr;
	const struct elf_sym *syms;

	CHECK(fixture_run("symbols-stripped", &out) == 0);
	tab = elf_symtab__open(test__fixture("symbols-stripped"));
	CHECK(tab);
	/* No .symtab; a PIE's .dynsym defines no function of its own. */
	CHECK(elf_symtab__from_dynsym(tab));
	CHECK_STR(elf_symtab__build_id(tab), out.build_id);
	for (size_t i = 0; i < out.nr; i++)
		CHECK(!elf_symtab__lookup(tab, out.syms[i].vaddr));
	syms = elf_symtab__syms(tab, &nr);
	for (size_t i = 0; i < nr; i++)
		CHECK(strncmp(syms[i].name, "fixture_", 8));
	elf_symtab__free(tab);
}

/* --- the shared library, dlopen()ed into this process ------------------- */

/* dlopen libsymbols.so; its load bias, program headers and build-id as the loader has them. */
static void *open_lib(struct loaded_object *lib)
{
	struct link_map *lm;
	void *h;

	memset(lib, 0, sizeof(*lib));
	h = dlopen(test__fixture("libsymbols.so"), RTLD_NOW | RTLD_LOCAL);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm)) {
		if (h)
			dlclose(h);
		return NULL;
	}
	lib->bias = lm->l_addr;
	loaded_object__find(lib, false);
	return h;
}

static uint64_t lib_vaddr(const struct loaded_object *lib, void *h, const char *name)
{
	void *addr = dlsym(h, name);

	return addr ? (uintptr_t)addr - lib->bias : 0;
}

static void check_lib(struct elf_symtab *tab, const struct loaded_object *lib, void *h)
{
	void *(*local_addr)(void) = (void *(*)(void))dlsym(h, "fixture_lib_local_addr");
	uint64_t sized = lib_vaddr(lib, h, "fixture_lib_sized");

	CHECK(local_addr && sized);
	CHECK(!elf_symtab__from_dynsym(tab));
	CHECK(lib->build_id[0]);
	CHECK_STR(elf_symtab__build_id(tab), lib->build_id);
	check_sorted(tab);
	check_function(tab, "fixture_lib_alpha", lib_vaddr(lib, h, "fixture_lib_alpha"));
	check_function(tab, "fixture_lib_beta", lib_vaddr(lib, h, "fixture_lib_beta"));
	check_function(tab, "fixture_lib_local", (uintptr_t)local_addr() - lib->bias);
	CHECK(elf_symtab__lookup(tab, sized));
	CHECK(!elf_symtab__lookup(tab, sized + 1));
}

TEST(elf_symtab_shared_library)
{
	struct elf_symtab *tab;
	struct loaded_object lib;
	void *h = open_lib(&lib);

	CHECK(h);
	tab = elf_symtab__open(test__fixture("libsymbols.so"));
	if (tab)
		check_lib(tab, &lib, h);
	else
		CHECK(tab);
	elf_symtab__free(tab);
	dlclose(h);
}

/* The file offsets of each PT_LOAD, as the loader mapped them, give its addresses. */
static void check_offsets(const struct elf_symtab *tab, const struct loaded_object *lib)
{
	uint64_t vaddr, max_end = 0;
	int nr_load = 0;

	for (int i = 0; i < lib->phnum; i++) {
		const ElfW(Phdr) *p = &lib->phdr[i];

		if (p->p_type != PT_LOAD || !p->p_filesz)
			continue;
		nr_load++;
		CHECK(elf_symtab__offset_to_vaddr(tab, p->p_offset, &vaddr) == 0);
		CHECK_U64(vaddr, p->p_vaddr);
		CHECK(elf_symtab__offset_to_vaddr(tab, p->p_offset + p->p_filesz - 1, &vaddr) == 0);
		CHECK_U64(vaddr, p->p_vaddr + p->p_filesz - 1);
		if (p->p_offset + p->p_filesz > max_end)
			max_end = p->p_offset + p->p_filesz;
	}
	CHECK(nr_load >= 2);
	CHECK(elf_symtab__offset_to_vaddr(tab, max_end + (1 << 20), &vaddr) == -ENOENT);
}

TEST(elf_symtab_offset_to_vaddr)
{
	struct elf_symtab *tab;
	struct loaded_object lib;
	void *h = open_lib(&lib);

	CHECK(h);
	tab = elf_symtab__open(test__fixture("libsymbols.so"));
	if (tab && lib.phdr)
		check_offsets(tab, &lib);
	else
		CHECK(tab && lib.phdr);
	elf_symtab__free(tab);
	dlclose(h);
}

/* --- .dynsym fallback: a copy of the library stripped here -------------- */

static int run_strip(const char *in, const char *out)
{
	char *argv[] = { "strip", "-s", (char *)in, "-o", (char *)out, NULL };
	int status;
	pid_t pid;

	if (posix_spawnp(&pid, "strip", NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static void check_dynsym(const char *path)
{
	struct elf_symtab *tab;
	const struct elf_sym *s;
	struct loaded_object lib;
	void *h = open_lib(&lib);
	void *(*local_addr)(void);

	CHECK(h);
	local_addr = (void *(*)(void))dlsym(h, "fixture_lib_local_addr");
	tab = elf_symtab__open(path);
	CHECK(tab);
	CHECK(elf_symtab__from_dynsym(tab));
	CHECK_STR(elf_symtab__build_id(tab), lib.build_id);
	s = elf_symtab__lookup(tab, lib_vaddr(&lib, h, "fixture_lib_beta") + 1);
	CHECK(s);
	CHECK_STR(s->name, "fixture_lib_beta");
	/* A static function is not exported: its address falls in no symbol. */
	CHECK(!find_name(tab, "fixture_lib_local"));
	s = elf_symtab__lookup(tab, (uintptr_t)local_addr() - lib.bias);
	CHECK(!s || strcmp(s->name, "fixture_lib_local"));
	elf_symtab__free(tab);
	dlclose(h);
}

TEST(elf_symtab_dynsym_fallback)
{
	char dir[] = "/tmp/profiler-test-XXXXXX", path[64];

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libsymbols-stripped.so", dir);
	if (run_strip(test__fixture("libsymbols.so"), path) == 0)
		check_dynsym(path);
	else
		test__fail(__FILE__, __LINE__, "cannot run strip");
	unlink(path);
	rmdir(dir);
}

/* --- symbol versions ---------------------------------------------------- */

TEST(elf_symtab_unversioned_len)
{
	static const struct {
		const char *name;
		size_t len;
	} cases[] = {
		{ "__libc_start_main@@GLIBC_2.34", 17 },
		{ "__libc_start_main@GLIBC_2.2.5", 17 },
		{ "_ZNSt6chrono3_V212system_clock3nowEv@@GLIBCXX_3.4.19", 36 },
		{ "memcpy@GLIBC_PRIVATE", 6 },
		{ "fixture_ver@VER_1", 11 },
		{ "memcpy", 6 },
		/* No version after the '@', or something else: kept whole. */
		{ "f@", 2 },
		{ "f@@", 3 },
		{ "f@@@V", 5 },
		{ "f@1.0", 5 },
		{ "f@V 1", 5 },
		{ "f@V@W", 5 },
		{ "@@V", 3 },
		/* A PLT entry's name (elf_symtab's own), not a version. */
		{ "puts@plt", 8 },
		{ "", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_U64(elf_sym__unversioned_len(cases[i].name), cases[i].len);
}

/*
 * Every PLT entry objdump names "NAME@plt" (binutils' own reading of the
 * relocations), @fixture's .plt and .plt.got: the same name at the same
 * address, covering the entry's 16 bytes. How many, into @nr.
 */
static void check_plt(const char *fixture, size_t *nr)
{
	struct elf_symtab *tab = elf_symtab__open(test__fixture(fixture));
	char cmd[4200], line[512], name[256];
	unsigned long long addr;
	FILE *f;

	*nr = 0;
	CHECK(tab);
	snprintf(cmd, sizeof(cmd), "objdump -d '%s'", test__fixture(fixture));
	f = tab ? popen(cmd, "r") : NULL;
	CHECK(f);
	while (f && fgets(line, sizeof(line), f)) {
		const struct elf_sym *s;

		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) != 2 || !strstr(name, "@plt") ||
		    strcmp(strstr(name, "@plt"), "@plt"))
			continue;
		s = elf_symtab__lookup(tab, addr);
		CHECK(s && !strcmp(s->name, name));
		CHECK(s && s->addr == addr && s->size >= 8);
		CHECK(elf_symtab__lookup(tab, addr + 7) == s);
		if (s && strcmp(s->name, name))
			fprintf(stderr, "# %s at %#llx: ours %s\n", name, addr, s->name);
		(*nr)++;
	}
	if (f)
		CHECK(pclose(f) == 0);
	elf_symtab__free(tab);
}

TEST(elf_symtab_plt_entries_named_as_objdump)
{
	size_t pie, nopie, lib;

	check_plt("symbols-pie", &pie);
	check_plt("symbols-nopie", &nopie);
	check_plt("libsymbols.so", &lib);
	/* The programs call printf, puts and more through their PLT. */
	CHECK(pie >= 5);
	CHECK(nopie >= 5);
	(void)lib;
}

/* --- opening ------------------------------------------------------------ */

TEST(elf_symtab_open_fd_does_not_keep_fd)
{
	struct fixture_out out;
	struct elf_symtab *tab;
	const struct elf_sym *s;
	char build_id[160];
	int fd;

	CHECK(fixture_run("symbols-pie", &out) == 0);
	fd = open(test__fixture("symbols-pie"), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(elf_file__read_build_id(fd, build_id, sizeof(build_id)) == 0);
	CHECK_STR(build_id, out.build_id);
	CHECK(elf_file__read_build_id(fd, build_id, 8) == -ENOSPC);
	tab = elf_symtab__open_fd(fd, "symbols-pie");
	close(fd);
	CHECK(tab);
	/* Names stay readable after the caller closed its descriptor. */
	s = elf_symtab__lookup(tab, fixture_sym(&out, "fixture_beta")->vaddr);
	CHECK(s);
	CHECK_STR(s->name, "fixture_beta");
	CHECK_STR(elf_symtab__build_id(tab), out.build_id);
	elf_symtab__free(tab);
}

TEST(elf_symtab_open_mem)
{
	struct fixture_out out;
	struct elf_symtab *tab;
	const struct elf_sym *s;
	size_t size;
	void *image;

	CHECK(fixture_run("symbols-nopie", &out) == 0);
	image = test__read_file(test__fixture("symbols-nopie"), &size);
	CHECK(image);
	tab = elf_symtab__open_mem(image, size, "symbols-nopie");
	/* The image is copied. */
	memset(image, 0, size);
	free(image);
	CHECK(tab);
	s = elf_symtab__lookup(tab, fixture_sym(&out, "fixture_alpha")->vaddr + 2);
	CHECK(s);
	CHECK_STR(s->name, "fixture_alpha");
	CHECK_STR(elf_symtab__build_id(tab), out.build_id);
	elf_symtab__free(tab);
}

TEST(elf_symtab_open_errors)
{
	char path[] = "/tmp/profiler-test-XXXXXX";
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	struct elf_symtab *tab;
	char build_id[160];
	int fd;

	errno = 0;
	CHECK(!elf_symtab__open("/nonexistent/profiler-test"));
	CHECK(errno == ENOENT);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, text, sizeof(text) - 1) == sizeof(text) - 1);
	errno = 0;
	tab = elf_symtab__open(path);
	CHECK(elf_file__read_build_id(fd, build_id, sizeof(build_id)) == -ENOEXEC);
	close(fd);
	unlink(path);
	CHECK(!tab);
	CHECK(errno == ENOEXEC);
	errno = 0;
	CHECK(!elf_symtab__open_mem(text, sizeof(text), "text"));
	CHECK(errno == ENOEXEC);
	elf_symtab__free(NULL);
}
