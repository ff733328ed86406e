// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind tables as the BPF program gets them, in real BPF maps (root
 * only): built on the worker thread, a process's entry written once every
 * table it maps is in the row array and not before (its stacks are copied
 * meanwhile), the rows those of unwind_table__build(), and a table built
 * once serving the next process at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/profile.h"
#include "collector/unwind.h"
#include "collector/unwind_maps.h"
#include "collector/unwind_table.h"
#include "common/proc_maps.h"
#include "common/procfs.h"
#include "common/strset.h"
#include "elf/elf_file.h"
#include "test.h"

#define MAX_ROWS (4UL << 20)

struct maps_fixture {
	int rows_fd, rules_fd, procs_fd;
	struct strset *strings;
	struct file_table *files;
	struct unwinder *u;
	struct unwind_maps *um;
};

/* The BPF program's three maps, as profile.bpf.c declares them: 0, or -errno. */
static int fixture_setup(struct maps_fixture *f)
{
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, no_prealloc, .map_flags = BPF_F_NO_PREALLOC);

	memset(f, 0, sizeof(*f));
	f->rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_rows", sizeof(__u32),
				    sizeof(struct unwind_row), MAX_ROWS, &mmapable);
	if (f->rows_fd < 0)
		return -errno;
	f->rules_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_rules", sizeof(__u32),
				     sizeof(struct unwind_rule), PROFILE_MAX_UNWIND_RULES, NULL);
	f->procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_procs", sizeof(__u32),
				     sizeof(struct unwind_proc), 16, &no_prealloc);
	f->strings = strset__new();
	f->files = f->strings ? file_table__new(f->strings) : NULL;
	f->u = unwinder__new(NULL);
	if (f->rules_fd < 0 || f->procs_fd < 0 || !f->files || !f->u)
		return -ENOMEM;
	f->um = unwind_maps__new(f->u, f->rows_fd, MAX_ROWS, f->rules_fd, f->procs_fd, NULL);
	return f->um ? 0 : -errno;
}

static void fixture_teardown(struct maps_fixture *f)
{
	unwind_maps__free(f->um);
	unwinder__free(f->u);
	file_table__free(f->files);
	strset__free(f->strings);
	for (int *fd = &f->rows_fd; fd <= &f->procs_fd; fd++)
		if (*fd > 0)
			close(*fd);
}

/* The mapping of @v that holds @addr, or NULL. */
static const struct unwind_mapping *find_mapping(const struct unwind_proc *v, uint64_t addr)
{
	for (uint32_t i = 0; i < v->nr && i < PROFILE_MAX_UNWIND_MAPPINGS; i++)
		if (addr >= v->mappings[i].start && addr < v->mappings[i].end)
			return &v->mappings[i];
	return NULL;
}

/* The first mapping of a file whose path has @name in it, or NULL (executable ones only are kept). */
static const struct proc_map *map_named(const struct proc_maps *maps, const char *name)
{
	for (size_t i = 0; i < maps->nr; i++) {
		const char *path = maps->maps[i].file ? maps->maps[i].file->path : NULL;

		if (path && strstr(path, name))
			return &maps->maps[i];
	}
	return NULL;
}

/* Whether @m's rows in the array are @path's table, rule for rule. */
static bool rows_match(const struct maps_fixture *f, const struct unwind_mapping *m,
		       const char *path)
{
	struct elf_file *file = elf_file__open(path);
	struct unwind_table t = { 0 };
	bool same;

	if (!file || unwind_table__build(&t, file)) {
		elf_file__put(file);
		return false;
	}
	same = t.nr == m->nr_rows;
	for (size_t i = 0; same && i < t.nr; i++) {
		__u32 key = m->first_row + i;
		struct unwind_row row;
		struct unwind_rule rule;

		same = !bpf_map_lookup_elem(f->rows_fd, &key, &row) && row.pc == t.rows[i].pc &&
		       !bpf_map_lookup_elem(f->rules_fd, &row.rule, &rule) &&
		       !memcmp(&rule, &t.rows[i].rule, sizeof(rule));
	}
	unwind_table__release(&t);
	elf_file__put(file);
	return same;
}

TEST(unwind_maps_entry_written_once_its_tables_are_built)
{
	struct maps_fixture f;
	struct proc_maps *maps = NULL;
	const struct unwind_mapping *m;
	const struct proc_map *libc;
	struct unwind_maps_stats st;
	struct unwind_proc *v = calloc(1, sizeof(*v));
	__u32 key = getpid();
	int err = fixture_setup(&f);

	if (err == -EPERM || err == -EACCES) {
		fixture_teardown(&f);
		free(v);
		SKIP("creating BPF maps needs root");
	}
	CHECK(!err && v);
	maps = proc_maps__read(getpid(), f.files);
	libc = maps ? map_named(maps, "/libc.so") : NULL;
	CHECK(libc);

	/* Its tables are being built: no entry yet, so its stacks would be copied. */
	CHECK(!unwind_maps__load(f.um, maps));
	CHECK(bpf_map_lookup_elem(f.procs_fd, &key, v) && errno == ENOENT);
	unwind_maps__wait(f.um);
	CHECK(!bpf_map_lookup_elem(f.procs_fd, &key, v));
	m = find_mapping(v, libc->start);
	CHECK(m && m->nr_rows > 1000 && m->first_row >= 2);
	CHECK(rows_match(&f, m, libc->file->path));
	unwind_maps__stats(f.um, &st);
	CHECK(st.files >= 1 && st.procs == 1 && st.build_ns > 0);

	/* The same files again: built already, so the entry is written at once. */
	CHECK(!bpf_map_delete_elem(f.procs_fd, &key));
	CHECK(!unwind_maps__load(f.um, maps));
	CHECK(!bpf_map_lookup_elem(f.procs_fd, &key, v));
	CHECK(find_mapping(v, libc->start)->first_row == m->first_row);
	unwind_maps__stats(f.um, &st);
	CHECK(st.procs == 2);

	proc_maps__free(maps);
	free(v);
	fixture_teardown(&f);
}

TEST(unwind_maps_new_code_takes_the_entry_back_until_built)
{
	char real[PATH_MAX], *text = NULL, *self;
	struct proc_maps *maps = NULL, *more = NULL;
	struct unwind_proc *v = calloc(1, sizeof(*v));
	const struct unwind_mapping *m;
	struct maps_fixture f;
	__u32 key = getpid();
	struct stat st;
	size_t size;
	int err = fixture_setup(&f);

	if (err == -EPERM || err == -EACCES) {
		fixture_teardown(&f);
		free(v);
		SKIP("creating BPF maps needs root");
	}
	CHECK(!err && v);
	maps = proc_maps__read(getpid(), f.files);
	CHECK(maps);
	CHECK(!unwind_maps__load(f.um, maps));
	unwind_maps__wait(f.um);
	CHECK(!bpf_map_lookup_elem(f.procs_fd, &key, v));

	/* A library mapped since (below everything else, so the maps stay sorted). */
	CHECK(realpath(test__fixture("symbols-pie"), real) && !stat(real, &st));
	self = procfs__read_file("/proc/self/maps", &size);
	CHECK(self);
	CHECK(asprintf(&text, "10001000-10002000 r-xp 00001000 00:00 %llu %s\n%s",
		       (unsigned long long)st.st_ino, real, self) > 0);
	free(self);
	more = proc_maps__parse(text, getpid(), f.files);
	free(text);
	CHECK(more && more->nr == maps->nr + 1);
	CHECK(!unwind_maps__load(f.um, more));
	CHECK(bpf_map_lookup_elem(f.procs_fd, &key, v) && errno == ENOENT);
	unwind_maps__wait(f.um);
	CHECK(!bpf_map_lookup_elem(f.procs_fd, &key, v));
	m = find_mapping(v, 0x10001000);
	CHECK(m && m->nr_rows > 1 && m->bias == 0x10000000);
	CHECK(rows_match(&f, m, real));

	proc_maps__free(more);
	proc_maps__free(maps);
	free(v);
	fixture_teardown(&f);
}
