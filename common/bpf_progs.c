// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "common/bpf_progs.h"
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/strset.h"

/* The largest BTF read of a program: more is not a program's own (a kernel's is 5 MiB). */
#define BPF_PROGS_MAX_BTF (16U << 20)

/* One function of a program: [start, end) of JIT code. */
struct bpf_func {
	uint64_t start, end; /* @start first: after_last_at_or_before() reads it */
	const char *name;    /* interned */
	const char *ksym;    /* interned */
	const char *prog_name;
	uint32_t prog_id;
	size_t first_line, nr_lines; /* its program's lines in bpf_progs.lines */
};

/* A source line's first instruction, compiled at @addr. */
struct bpf_line {
	uint64_t addr;	  /* first: after_last_at_or_before() reads it */
	const char *file; /* interned */
	uint32_t line;
};

/* A program, in the order read (of ids, which only grow), and what it ran during the recording. */
struct bpf_prog {
	uint32_t id;
	const char *name; /* its first function's */
	/* Its counters when first read (0 if loaded since the start), and at the end. */
	uint64_t runs_first, run_ns_first, runs_last, run_ns_last;
	bool counted;	      /* bpf_progs__count() found it loaded at the end */
	uint64_t unloaded_ns; /* when a round of counts first missed it, or 0 */
};

struct bpf_progs {
	struct strset *strings;
	struct bpf_prog *progs; /* sorted by id */
	size_t progs_alloc;
	bool started; /* the programs loaded at the start are read: the others' counters start at 0 */
	struct bpf_func *funcs; /* sorted by start */
	size_t nr_funcs, funcs_alloc;
	struct bpf_line *lines; /* each program's together, sorted by addr */
	size_t nr_lines, lines_alloc;
	size_t nr_progs;
	size_t nr_lined;  /* functions with source lines */
	uint32_t last_id; /* the highest id added */
	uint64_t read_ns;
};

/* The arrays of one program's information, of the sizes the kernel said. */
struct prog_arrays {
	uint64_t *ksyms;
	uint32_t *func_lens;
	struct bpf_func_info *func_info;
	struct bpf_line_info *line_info;
	uint64_t *jited_lines;
};

static void prog_arrays__free(struct prog_arrays *a)
{
	free(a->ksyms);
	free(a->func_lens);
	free(a->func_info);
	free(a->line_info);
	free(a->jited_lines);
}

/*
 * Ask for @fd's information twice: the counts, then the arrays, each
 * record of the size this program (and this reader) uses. 0 or -errno.
 */
static int prog_info(int fd, struct bpf_prog_info *info, struct prog_arrays *a)
{
	struct bpf_prog_info counts = { 0 };
	uint32_t len = sizeof(counts);
	uint32_t nr_funcs, nr_fi, nr_li, nr_jli;

	if (bpf_obj_get_info_by_fd(fd, &counts, &len))
		return -errno;
	nr_funcs = counts.nr_jited_ksyms;
	if (counts.nr_jited_func_lens != nr_funcs || !nr_funcs)
		return -ENOENT; /* not JIT-compiled: no code of its own to name */
	/* Line and function records of another size than ours, or not one per line: left out. */
	nr_fi = counts.func_info_rec_size == sizeof(struct bpf_func_info) ? counts.nr_func_info : 0;
	nr_li = counts.line_info_rec_size == sizeof(struct bpf_line_info) ? counts.nr_line_info : 0;
	nr_jli = counts.jited_line_info_rec_size == sizeof(uint64_t) ? counts.nr_jited_line_info :
								       0;
	if (nr_li != nr_jli)
		nr_li = nr_jli = 0;
	a->ksyms = calloc(nr_funcs, sizeof(*a->ksyms));
	a->func_lens = calloc(nr_funcs, sizeof(*a->func_lens));
	a->func_info = nr_fi ? calloc(nr_fi, sizeof(*a->func_info)) : NULL;
	a->line_info = nr_li ? calloc(nr_li, sizeof(*a->line_info)) : NULL;
	a->jited_lines = nr_jli ? calloc(nr_jli, sizeof(*a->jited_lines)) : NULL;
	if (!a->ksyms || !a->func_lens || (nr_fi && !a->func_info) || (nr_li && !a->line_info) ||
	    (nr_jli && !a->jited_lines))
		return -ENOMEM;
	*info = (struct bpf_prog_info){
		.nr_jited_ksyms = nr_funcs,
		.jited_ksyms = (uintptr_t)a->ksyms,
		.nr_jited_func_lens = nr_funcs,
		.jited_func_lens = (uintptr_t)a->func_lens,
		.nr_func_info = nr_fi,
		.func_info_rec_size = sizeof(struct bpf_func_info),
		.func_info = (uintptr_t)a->func_info,
		.nr_line_info = nr_li,
		.line_info_rec_size = sizeof(struct bpf_line_info),
		.line_info = (uintptr_t)a->line_info,
		.nr_jited_line_info = nr_jli,
		.jited_line_info_rec_size = sizeof(uint64_t),
		.jited_line_info = (uintptr_t)a->jited_lines,
	};
	len = sizeof(*info);
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		return -errno;
	/*
	 * A program never changes, but the kernel writes back its own counts,
	 * of what we did not ask for too: ours are what the arrays hold.
	 */
	info->nr_func_info = nr_fi;
	info->nr_line_info = nr_li;
	info->nr_jited_line_info = nr_jli;
	return 0;
}

/* The name of BTF type @id of @btf (a FUNC), or NULL. */
static const char *btf_name(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = btf ? btf__type_by_id(btf, id) : NULL;
	const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	return name && *name ? name : NULL;
}

static int func_cmp(const void *a, const void *b)
{
	const struct bpf_func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int line_cmp(const void *a, const void *b)
{
	const struct bpf_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The BTF object open as @fd, read through it (no privilege needed), or NULL. */
static struct btf *btf_from_fd(int fd)
{
	struct bpf_btf_info info = { 0 };
	uint32_t len = sizeof(info), size;
	struct btf *btf = NULL;
	void *data;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.btf_size ||
	    info.btf_size > BPF_PROGS_MAX_BTF)
		return NULL;
	size = info.btf_size;
	/* Zeroed: valgrind does not know that the kernel fills it. */
	data = calloc(1, size);
	if (!data)
		return NULL;
	info = (struct bpf_btf_info){ .btf = (uintptr_t)data, .btf_size = size };
	len = sizeof(info);
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.btf_size == size)
		btf = btf__new(data, size);
	free(data);
	return btf;
}

int bpf_progs__add(struct bpf_progs *p, uint32_t id, int fd, int btf_fd)
{
	struct prog_arrays a = { 0 };
	struct bpf_prog_info info;
	struct btf *btf = NULL;
	const char *prog_name;
	size_t first_line;
	int err;

	if (id > p->last_id)
		p->last_id = id;
	err = prog_info(fd, &info, &a);
	if (err) {
		prog_arrays__free(&a);
		return err == -ENOMEM ? err : 0;
	}
	if (btf_fd >= 0) {
		btf = btf_from_fd(btf_fd);
	} else if (info.btf_id && (btf_fd = bpf_btf_get_fd_by_id(info.btf_id)) >= 0) {
		btf = btf_from_fd(btf_fd);
		close(btf_fd);
	}
	prog_name = strset__add(p->strings, info.name);
	err = -ENOMEM;
	if (!prog_name ||
	    array__reserve(&p->funcs, &p->funcs_alloc, p->nr_funcs + info.nr_jited_ksyms,
			   sizeof(*p->funcs)) ||
	    array__reserve(&p->lines, &p->lines_alloc, p->nr_lines + info.nr_jited_line_info,
			   sizeof(*p->lines)))
		goto out;
	first_line = p->nr_lines;
	for (uint32_t i = 0; btf && i < info.nr_jited_line_info; i++) {
		const char *file = btf__name_by_offset(btf, a.line_info[i].file_name_off);

		if (!file || !*file || !(file = strset__add(p->strings, file)))
			continue;
		p->lines[p->nr_lines++] =
			(struct bpf_line){ a.jited_lines[i], file,
					   BPF_LINE_INFO_LINE_NUM(a.line_info[i].line_col) };
	}
	if (p->nr_lines > first_line) /* none: p->lines may be NULL, which qsort() must not get */
		qsort(p->lines + first_line, p->nr_lines - first_line, sizeof(*p->lines), line_cmp);
	for (uint32_t i = 0; i < info.nr_jited_ksyms; i++) {
		/* func_info is in the functions' order, as jited_ksyms is. */
		const char *name = i < info.nr_func_info ? btf_name(btf, a.func_info[i].type_id) :
							   NULL;
		const char *ksym;

		name = strset__add(p->strings, name ? name : info.name);
		/* As the kernel names a program's code in kallsyms (bpf_get_prog_name()). */
		ksym = name ? strset__addf(p->strings,
					   "bpf_prog_%02x%02x%02x%02x%02x%02x%02x%02x_%s",
					   info.tag[0], info.tag[1], info.tag[2], info.tag[3],
					   info.tag[4], info.tag[5], info.tag[6], info.tag[7],
					   name) :
			      NULL;
		if (!ksym)
			goto out;
		p->funcs[p->nr_funcs++] = (struct bpf_func){
			.start = a.ksyms[i],
			.end = a.ksyms[i] + a.func_lens[i],
			.name = name,
			.ksym = ksym,
			.prog_name = prog_name,
			.prog_id = id,
			.first_line = first_line,
			.nr_lines = p->nr_lines - first_line,
		};
		p->nr_lined += p->nr_lines > first_line;
	}
	if (array__reserve(&p->progs, &p->progs_alloc, p->nr_progs + 1, sizeof(*p->progs)))
		goto out;
	p->progs[p->nr_progs++] = (struct bpf_prog){
		.id = id,
		.name = p->funcs[p->nr_funcs - info.nr_jited_ksyms].name,
		.runs_first = p->started ? 0 : info.run_cnt,
		.run_ns_first = p->started ? 0 : info.run_time_ns,
	};
	err = 0;
out:
	btf__free(btf);
	prog_arrays__free(&a);
	return err;
}

struct bpf_progs *bpf_progs__read(void)
{
	struct bpf_progs *p = calloc(1, sizeof(*p));
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	uint32_t id = 0;

	if (!p || !(p->strings = strset__new()))
		goto out_nomem;
	/* Without CAP_SYS_ADMIN the first call fails (EPERM): no programs. */
	while (!bpf_prog_get_next_id(id, &id)) {
		int fd = bpf_prog_get_fd_by_id(id), err;

		if (fd < 0)
			continue; /* unloaded meanwhile */
		err = bpf_progs__add(p, id, fd, -1);
		close(fd);
		if (err)
			goto out_nomem;
	}
	bpf_progs__sort(p);
	p->read_ns = clock_ns(CLOCK_MONOTONIC) - start;
	p->started = true;
	return p;

out_nomem:
	bpf_progs__free(p);
	errno = ENOMEM;
	return NULL;
}

void bpf_progs__sort(struct bpf_progs *p)
{
	if (p->nr_funcs) /* none: p->funcs is NULL, which qsort() must not get */
		qsort(p->funcs, p->nr_funcs, sizeof(*p->funcs), func_cmp);
}

uint32_t bpf_progs__last_id(const struct bpf_progs *p)
{
	return p->last_id;
}

/* The index of program @id in p->progs (sorted by id), or p->nr_progs. */
static size_t prog_index(const struct bpf_progs *p, uint32_t id)
{
	size_t lo = 0, hi = p->nr_progs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->progs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nr_progs && p->progs[lo].id == id ? lo : p->nr_progs;
}

void bpf_progs__count(struct bpf_progs *p, uint32_t id, int fd)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	size_t lo = prog_index(p, id);

	if (lo == p->nr_progs || bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	p->progs[lo].runs_last = info.run_cnt;
	p->progs[lo].run_ns_last = info.run_time_ns;
	p->progs[lo].counted = true;
}

static int cost_cmp(const void *a, const void *b)
{
	const struct bpf_prog_cost *x = a, *y = b;

	return x->run_ns > y->run_ns ? -1 : x->run_ns < y->run_ns;
}

size_t bpf_progs__costliest(const struct bpf_progs *p, struct bpf_prog_cost *out, size_t max)
{
	struct bpf_prog_cost *all = calloc(p->nr_progs ? p->nr_progs : 1, sizeof(*all));
	size_t nr = 0;

	if (!all)
		return 0;
	for (size_t i = 0; i < p->nr_progs; i++) {
		const struct bpf_prog *g = &p->progs[i];

		/* Unloaded before the end, or a counter lower at the end (the sysctl turned off and on). */
		if (!g->counted || g->runs_last <= g->runs_first ||
		    g->run_ns_last < g->run_ns_first)
			continue;
		all[nr++] = (struct bpf_prog_cost){ g->name, g->id, g->runs_last - g->runs_first,
						    g->run_ns_last - g->run_ns_first };
	}
	qsort(all, nr, sizeof(*all), cost_cmp);
	if (nr > max)
		nr = max;
	memcpy(out, all, nr * sizeof(*out));
	free(all);
	return nr;
}

void bpf_progs__count_begin(struct bpf_progs *p)
{
	for (size_t i = 0; i < p->nr_progs; i++)
		p->progs[i].counted = false;
}

void bpf_progs__count_end(struct bpf_progs *p, uint64_t now_ns)
{
	for (size_t i = 0; i < p->nr_progs; i++)
		if (!p->progs[i].counted && !p->progs[i].unloaded_ns)
			p->progs[i].unloaded_ns = now_ns;
}

/* Is @g to be forgotten: found unloaded at or before @before_ns? */
static bool unloaded_by(const struct bpf_prog *g, uint64_t before_ns)
{
	return g->unloaded_ns && g->unloaded_ns <= before_ns;
}

size_t bpf_progs__forget(struct bpf_progs *p, uint64_t before_ns)
{
	size_t nr_funcs = 0, nr_lines = 0, nr_progs = 0, forgotten, *first;
	struct bpf_line *lines;

	for (size_t i = 0; i < p->nr_progs; i++)
		nr_progs += !unloaded_by(&p->progs[i], before_ns);
	if (nr_progs == p->nr_progs)
		return 0;
	/* Each program's lines, where they go in the new array (SIZE_MAX: not yet). */
	first = malloc(p->nr_progs * sizeof(*first));
	lines = malloc((p->nr_lines ? p->nr_lines : 1) * sizeof(*lines));
	if (!first || !lines) {
		free(first);
		free(lines);
		return 0; /* kept: tried again at the next call */
	}
	for (size_t i = 0; i < p->nr_progs; i++)
		first[i] = SIZE_MAX;
	p->nr_lined = 0;
	for (size_t i = 0; i < p->nr_funcs; i++) {
		struct bpf_func f = p->funcs[i];
		size_t g = prog_index(p, f.prog_id);

		if (g == p->nr_progs || unloaded_by(&p->progs[g], before_ns))
			continue;
		/* A program's functions share its lines: they move once. */
		if (first[g] == SIZE_MAX) {
			if (f.nr_lines) /* none: p->lines may be NULL, which memcpy() must not get */
				memcpy(lines + nr_lines, p->lines + f.first_line,
				       f.nr_lines * sizeof(*lines));
			first[g] = nr_lines;
			nr_lines += f.nr_lines;
		}
		f.first_line = first[g];
		p->nr_lined += f.nr_lines > 0;
		p->funcs[nr_funcs++] = f;
	}
	free(first);
	free(p->lines);
	p->lines = lines;
	p->lines_alloc = p->nr_lines ? p->nr_lines : 1;
	p->nr_lines = nr_lines;
	p->nr_funcs = nr_funcs;
	nr_progs = 0;
	for (size_t i = 0; i < p->nr_progs; i++)
		if (!unloaded_by(&p->progs[i], before_ns))
			p->progs[nr_progs++] = p->progs[i];
	forgotten = p->nr_progs - nr_progs;
	p->nr_progs = nr_progs;
	return forgotten;
}

size_t bpf_progs__nr(const struct bpf_progs *p)
{
	return p->nr_progs;
}

struct bpf_prog_cost *bpf_progs__loaded(const struct bpf_progs *p, size_t *nr)
{
	struct bpf_prog_cost *all = calloc(p->nr_progs ? p->nr_progs : 1, sizeof(*all));

	*nr = 0;
	for (size_t i = 0; all && i < p->nr_progs; i++) {
		const struct bpf_prog *g = &p->progs[i];

		if (g->counted)
			all[(*nr)++] = (struct bpf_prog_cost){ g->name, g->id, g->runs_last,
							       g->run_ns_last };
	}
	if (!*nr) {
		free(all);
		return NULL;
	}
	return all;
}

void bpf_progs__free(struct bpf_progs *p)
{
	if (!p)
		return;
	free(p->progs);
	strset__free(p->strings);
	free(p->funcs);
	free(p->lines);
	free(p);
}

/*
 * Of the elements [@lo, @hi) of @array, @size bytes each, sorted by the
 * address they start with: one past the last at or before @addr (@lo: none).
 */
static size_t after_last_at_or_before(const void *array, size_t size, size_t lo, size_t hi,
				      uint64_t addr)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		memcpy(&start, (const char *)array + mid * size, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bpf_progs__lookup(const struct bpf_progs *p, uint64_t addr, struct bpf_code_line *out)
{
	size_t i = after_last_at_or_before(p->funcs, sizeof(*p->funcs), 0, p->nr_funcs, addr);
	const struct bpf_func *f;

	if (!i || addr >= (f = &p->funcs[i - 1])->end)
		return -ENOENT;
	*out = (struct bpf_code_line){ .func = f->name,
				       .ksym = f->ksym,
				       .start = f->start,
				       .prog_id = f->prog_id,
				       .prog_name = f->prog_name };
	/* The last line of its program starting at or before @addr, if it is in @f. */
	i = after_last_at_or_before(p->lines, sizeof(*p->lines), f->first_line,
				    f->first_line + f->nr_lines, addr);
	if (i > f->first_line && p->lines[i - 1].addr >= f->start) {
		out->file = p->lines[i - 1].file;
		out->line = p->lines[i - 1].line;
	}
	return 0;
}

void bpf_progs__report(const struct bpf_progs *p)
{
	pr_info("bpf: %zu BPF programs read to name their code, of %zu functions (%zu with source "
		"lines); those loaded at the start in %.1f ms",
		p->nr_progs, p->nr_funcs, p->nr_lined, p->read_ns / 1e6);
}
