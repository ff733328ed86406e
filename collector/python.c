// SPDX-License-Identifier: GPL-2.0-only
#include "python.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "collector/bpf_stats.h"
#include "collector/collector.h"
#include "collector/event.h"
#include "collector/python_code.h"
#include "collector/python_offsets.h"
#include "collector/runtime.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/py_frames.h"
#include "elf/elf_cache.h"
#include "elf/elf_file.h"
#include "elf/fde_table.h"
#include "profile.skel.h"

/* What a Python frame is named when its code object cannot be read. */
#define UNNAMED_FRAME "[unknown Python code]"

/* The evaluation loop and the cold parts of it that GCC moves out of line. */
#define EVAL_PARTS 4
/* Jumps from the loop into code outside it that make that code one of its parts. */
#define EVAL_PART_MIN_JUMPS 8

/* A code object of a process, as read. */
struct code_entry {
	uint64_t addr;
	uint16_t tag; /* the low bits of its first line, as the BPF program reads them */
	bool ok;      /* @code was read */
	struct py_code code;
};

/* A process, once its maps were looked at. */
struct py_proc {
	pid_t pid;
	/*
	 * The interpreter's file by device and inode (0: none found), not by
	 * pointer: the file table frees files no snapshot maps any more, and
	 * another may take the address.
	 */
	uint64_t file_dev, file_ino;
	uint64_t map_start; /* where it is mapped: another place after an exec */
	const struct python_offsets *off;
	/* _PyEval_EvalFrameDefault in the process: the function, then its cold parts. */
	uint64_t eval_start[EVAL_PARTS], eval_end[EVAL_PARTS];
	unsigned int nr_eval;
	struct hashtab codes; /* struct code_entry by address */
};

struct python {
	struct elf_cache *elves;
	int procs_fd;
	struct py_frames *frames;
	struct hashtab procs;	      /* struct py_proc by pid */
	bool unsupported_said[4][16]; /* releases said to be unsupported, by major, minor */
	bool loaded;		      /* a process is in the BPF program's map */
	struct python_stats stats;
};

struct python *python__new(struct elf_cache *elves, int procs_fd, struct py_frames *frames)
{
	struct python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	py->elves = elves;
	py->procs_fd = procs_fd;
	py->frames = frames;
	hashtab__init(&py->procs);
	return py;
}

static void code_entry__free(struct code_entry *c)
{
	py_code__release(&c->code);
	free(c);
}

static void py_proc__forget_code(struct py_proc *p);

static void py_proc__free(struct py_proc *p)
{
	py_proc__forget_code(p);
	free(p);
}

void python__free(struct python *py)
{
	size_t i;
	struct py_proc *p;

	if (!py)
		return;
	hashtab__for_each_entry(&py->procs, i, p)
		py_proc__free(p);
	hashtab__release(&py->procs);
	free(py);
}

static bool proc_eq(const void *entry, const void *key)
{
	return ((const struct py_proc *)entry)->pid == *(const pid_t *)key;
}

/*
 * The cold parts of the function at [@start, @start + @size) of @elf: GCC
 * moves its unlikely paths (errors, deallocations) out of line, into code
 * of their own with an FDE of their own and, in a stripped file, no name.
 * A frame there is the loop's all the same. They are what many of the
 * function's jumps (jcc rel32, jmp rel32) lead to outside it: a byte
 * pattern that is no jump leads somewhere at random, one FDE at most a few
 * times. Up to @max into @starts and @ends (ELF addresses); returns how many.
 */
static unsigned int cold_parts(struct elf_file *elf, uint64_t start, uint64_t size,
			       uint64_t *starts, uint64_t *ends, unsigned int max)
{
	const unsigned char *b = elf__code_bytes(elf_file__elf(elf), start, size);
	const struct fde_table *fdes = elf_file__fdes(elf);
	struct {
		uint64_t fde;
		unsigned int jumps;
	} hits[32];
	unsigned int nr_hits = 0, n = 0;

	if (!b || !fdes)
		return 0;
	for (uint64_t i = 0; i + 5 <= size; i++) {
		uint64_t len = b[i] == 0xe9 ? 5 : b[i] == 0x0f && (b[i + 1] & 0xf0) == 0x80 ? 6 : 0;
		uint64_t to, fde;
		int32_t rel;

		if (!len || i + len > size)
			continue;
		memcpy(&rel, b + i + len - 4, sizeof(rel));
		to = start + i + len + (int64_t)rel;
		if ((to >= start && to < start + size) || fde_table__lookup(fdes, to, &fde))
			continue;
		for (unsigned int h = 0; h <= nr_hits; h++) {
			if (h == nr_hits) {
				if (nr_hits < sizeof(hits) / sizeof(hits[0]))
					hits[nr_hits++] = (typeof(hits[0])){ fde, 1 };
				break;
			}
			if (hits[h].fde == fde) {
				hits[h].jumps++;
				break;
			}
		}
	}
	for (unsigned int h = 0; h < nr_hits && n < max; h++) {
		if (hits[h].jumps < EVAL_PART_MIN_JUMPS)
			continue;
		for (size_t f = 0; f < fde_table__nr(fdes); f++) {
			uint64_t s, e;

			fde_table__range(fdes, f, &s, &e);
			if (s == hits[h].fde) {
				starts[n] = s;
				ends[n++] = e;
				break;
			}
		}
	}
	return n;
}

/*
 * @p's interpreter, if @m maps one that is supported: its runtime and
 * evaluation loop located, and the BPF program told. True when @m's file
 * is an interpreter, supported or not (no other file is looked at).
 */
static bool try_interpreter(struct python *py, struct py_proc *p, const struct proc_map *m)
{
	const struct python_offsets *off;
	struct python_proc value = { 0 };
	uint64_t runtime, eval, eval_size, cold, size, bias;
	const struct elf_segment *seg;
	unsigned int major, minor;
	struct elf_file *elf;
	Elf *e;

	if (!m->file || !python_version_from_path(m->file->path, &major, &minor))
		return false;
	elf = elf_cache__file(py->elves, m->file);
	e = elf ? elf_file__elf(elf) : NULL;
	off = python_offsets__find(major, minor);
	/*
	 * The file with the evaluation loop (before 3.6 PyEval_EvalFrameEx):
	 * not python3.11 linked to libpython3.11.so, which comes next.
	 */
	if (!e || (elf__find_symbol(e, "_PyEval_EvalFrameDefault", &eval, &eval_size) &&
		   (off || elf__find_symbol(e, "PyEval_EvalFrameEx", &eval, &eval_size))))
		return false;
	if (!off) {
		bool *said = major < 4 && minor < 16 ? &py->unsupported_said[major][minor] : NULL;

		if (said && !*said)
			pr_warn("process %d runs Python %u.%u, whose frames this profiler cannot read "
				"(3.10 to 3.13): its stacks show the interpreter's C functions",
				p->pid, major, minor);
		if (said)
			*said = true;
		py->stats.unsupported++;
		p->file_dev = m->file->dev;
		p->file_ino = m->file->ino;
		p->map_start = m->start;
		return true;
	}
	/* Every segment of a loaded object moves by the same bias. */
	seg = elf_file__segment(elf, m->pgoff);
	if (!seg || elf__find_symbol(e, "_PyRuntime", &runtime, &size))
		return false;
	bias = m->start - m->pgoff + seg->offset - seg->vaddr;
	value.runtime = runtime + bias;
	value.off = *off;
	if (bpf_map_update_elem(py->procs_fd, &p->pid, &value, BPF_ANY)) {
		pr_debug("pid %d: cannot load its Python runtime: %s", p->pid, strerror(errno));
		return false;
	}
	py->loaded = true;
	p->file_dev = m->file->dev;
	p->file_ino = m->file->ino;
	p->map_start = m->start;
	p->off = off;
	p->eval_start[0] = eval;
	p->eval_end[0] = eval + (eval_size ? eval_size : 1);
	/* A file with its static symbols names its cold part. */
	if (!elf__find_symbol(e, "_PyEval_EvalFrameDefault.cold", &cold, &size) && size) {
		p->eval_start[1] = cold;
		p->eval_end[1] = cold + size;
		p->nr_eval = 2;
	} else {
		p->nr_eval = 1 + cold_parts(elf, eval, eval_size, p->eval_start + 1,
					    p->eval_end + 1, EVAL_PARTS - 1);
	}
	for (unsigned int i = 0; i < p->nr_eval; i++) {
		p->eval_start[i] += bias;
		p->eval_end[i] += bias;
	}
	py->stats.processes++;
	pr_debug("pid %d: Python %u.%u in %s, runtime at %#llx, evaluation loop at %#llx, %u "
		 "cold parts (the first at %#llx)",
		 p->pid, major, minor, m->file->path, (unsigned long long)value.runtime,
		 (unsigned long long)p->eval_start[0], p->nr_eval - 1,
		 (unsigned long long)(p->nr_eval > 1 ? p->eval_start[1] : 0));
	return true;
}

/* Forget what @p's code objects were named: they are not its code any more. */
static void py_proc__forget_code(struct py_proc *p)
{
	size_t i;
	struct code_entry *c;

	hashtab__for_each_entry(&p->codes, i, c)
		code_entry__free(c);
	hashtab__release(&p->codes);
}

/* Forget @p's interpreter and what its code objects were named. */
static void py_proc__reset(struct python *py, struct py_proc *p)
{
	if (p->off)
		bpf_map_delete_elem(py->procs_fd, &p->pid);
	py_proc__forget_code(p);
	p->file_dev = p->file_ino = 0;
	p->off = NULL;
}

bool python__loaded(const struct python *py)
{
	return py->loaded;
}

void python__exec(struct python *py, pid_t pid)
{
	struct py_proc *p = hashtab__find(&py->procs, hash_mix(0, pid), proc_eq, &pid);

	if (p)
		py_proc__reset(py, p);
}

void python__snapshot(struct python *py, const struct proc_maps *maps)
{
	struct py_proc *p;
	bool added;

	p = hashtab__find_or_add(&py->procs, hash_mix(0, maps->pid), proc_eq, &maps->pid,
				 sizeof(*p), &added);
	if (!p)
		return;
	if (added) {
		p->pid = maps->pid;
		hashtab__init(&p->codes);
	}
	/* The same interpreter where it was: a new snapshot of the same program. */
	for (size_t i = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];

		if (p->file_ino && m->file && m->file->dev == p->file_dev &&
		    m->file->ino == p->file_ino && m->start == p->map_start)
			return;
	}
	py_proc__reset(py, p);
	for (size_t i = 0; i < maps->nr; i++)
		if (try_interpreter(py, p, &maps->maps[i]))
			return;
}

static bool code_eq(const void *entry, const void *key)
{
	return ((const struct code_entry *)entry)->addr == *(const uint64_t *)key;
}

/* The code object at @addr of @p, read unless it was with the same @tag; NULL on ENOMEM. */
static struct code_entry *code_of(struct python *py, struct py_proc *p, uint64_t addr, uint16_t tag)
{
	struct code_entry *c;
	bool added;
	int err;

	c = hashtab__find_or_add(&p->codes, hash_u64(addr), code_eq, &addr, sizeof(*c), &added);
	if (!c)
		return NULL;
	if (!added && c->tag == tag)
		return c;
	if (!added)
		py_code__release(&c->code);
	c->addr = addr;
	c->tag = tag;
	py->stats.code_reads++;
	err = py_code__read(p->pid, p->off, addr, &c->code);
	c->ok = !err && ((uint32_t)c->code.firstlineno & 0xffff) == tag;
	if (err)
		pr_debug("pid %d: cannot read the code object at %#llx: %s", p->pid,
			 (unsigned long long)addr, strerror(-err));
	if (err == -ENOMEM)
		return NULL;
	return c;
}

/* The address of Python frame @f of @p in py->frames: 0 or -ENOMEM. */
static int frame_addr(struct python *py, struct py_proc *p, const struct python_frame *f,
		      uint64_t *addr)
{
	uint64_t code = f->code & ~PY_FRAME_ENTRY;
	struct code_entry *c = code_of(py, p, code, f->instr >> PY_FRAME_LINE_SHIFT);
	int64_t offset;

	if (!c)
		return -ENOMEM;
	if (!c->ok) {
		py->stats.unnamed++;
		return py_frames__add(py->frames, &(struct py_frame_name){ .name = UNNAMED_FRAME },
				      addr);
	}
	offset = py_code__offset(p->off, code, f->instr);
	return py_frames__add(py->frames,
			      &(struct py_frame_name){
				      .name = c->code.qualname,
				      .filename = c->code.filename,
				      .line = py_code__line(p->off, &c->code, offset),
				      .start_line = c->code.firstlineno > 0 ? c->code.firstlineno :
									      0,
			      },
			      addr);
}

/* Is user address @ip, at depth @depth of its stack (0: the leaf), in @p's evaluation loop? */
static bool in_eval(const struct py_proc *p, uint64_t ip, size_t depth)
{
	for (unsigned int i = 0; i < p->nr_eval; i++) {
		/* A return address is one past its call, which may end the function. */
		if (depth ? ip > p->eval_start[i] && ip <= p->eval_end[i] :
			    ip >= p->eval_start[i] && ip < p->eval_end[i])
			return true;
	}
	return false;
}

int python__merge(struct python *py, struct sample_event *e)
{
	struct thread_stacks *s = &e->stack;
	uint64_t addrs[PROFILE_MAX_PYTHON], out[PROFILE_MAX_USER_STACK];
	size_t n = 0, j = 0,
	       np = e->nr_python < PROFILE_MAX_PYTHON ? e->nr_python : PROFILE_MAX_PYTHON;
	struct py_proc *p;
	bool full = false;
	int err;

	/* A Python stack cut short is the user stack cut short: its outer frames are missing. */
	if (s->flags & (SAMPLE_PYTHON_TRUNCATED | SAMPLE_PYTHON_ERROR)) {
		py->stats.truncated += event__count(e);
		s->flags |= SAMPLE_USER_TRUNCATED;
	}
	if (!np)
		return 0;
	p = hashtab__find(&py->procs, hash_mix(0, e->pid), proc_eq, &e->pid);
	if (!p || !p->off)
		return 0;
	py->stats.samples++;
	for (size_t i = 0; i < np; i++) {
		err = frame_addr(py, p, &e->python[i], &addrs[i]);
		if (err)
			return err;
	}
	for (size_t u = 0; u < s->nr_user && !full; u++) {
		if (!in_eval(p, s->user[u], u) || j == np) {
			full = n == PROFILE_MAX_USER_STACK;
			if (!full)
				out[n++] = s->user[u];
			continue;
		}
		/* The frames this call of the loop ran, innermost first, to its first. */
		do {
			full = n == PROFILE_MAX_USER_STACK;
			if (!full)
				out[n++] = addrs[j];
		} while (!full && !(e->python[j++].code & PY_FRAME_ENTRY) && j < np);
	}
	/* Frames whose loop the native stack did not reach: outermost, where they belong. */
	for (; j < np && !full; j++) {
		full = n == PROFILE_MAX_USER_STACK;
		if (!full)
			out[n++] = addrs[j];
	}
	if (full)
		s->flags |= SAMPLE_USER_TRUNCATED;
	memcpy(s->user, out, n * sizeof(out[0]));
	s->nr_user = n;
	e->nr_python = 0;
	return 0;
}

struct retain_arg {
	struct python *py;
	bool (*alive)(pid_t pid, void *arg);
	void *arg;
};

static bool py_proc__alive(void *entry, void *arg)
{
	struct retain_arg *r = arg;

	return r->alive(((struct py_proc *)entry)->pid, r->arg);
}

static void py_proc__drop(void *entry, void *arg)
{
	struct retain_arg *r = arg;
	struct py_proc *p = entry;

	if (p->off)
		bpf_map_delete_elem(r->py->procs_fd, &p->pid);
	py_proc__free(p);
}

void python__retain(struct python *py, bool (*alive)(pid_t pid, void *arg), void *arg)
{
	struct retain_arg r = { py, alive, arg };

	hashtab__retain(&py->procs, py_proc__alive, py_proc__drop, &r);
}

void python__stats(const struct python *py, struct python_stats *stats)
{
	*stats = py->stats;
}

/*
 * The Python plug-in (runtime.h). The BPF program reads a process's frames
 * once python__snapshot() put it in python_procs, and looks for that
 * map's entry only once a process has been put there (python_loaded).
 */
struct python_runtime {
	struct python *py;
	struct profile_bpf *skel;
};

static bool python_runtime__wanted(const struct collector_opts *opts)
{
	return !opts->no_python;
}

static void python_runtime__configure(struct profile_bpf *skel, bool on)
{
	skel->rodata->python_stacks = on;
}

static void *python_runtime__new(const struct runtime_env *env)
{
	struct python_runtime *rt = calloc(1, sizeof(*rt));

	if (!rt)
		return NULL;
	rt->skel = env->skel;
	rt->py = python__new(env->elves, bpf_map__fd(env->skel->maps.python_procs), env->frames);
	if (!rt->py) {
		free(rt);
		return NULL;
	}
	return rt;
}

static void python_runtime__free(void *ctx)
{
	struct python_runtime *rt = ctx;

	python__free(rt->py);
	free(rt);
}

static void python_runtime__snapshot(void *ctx, const struct proc_maps *maps)
{
	struct python_runtime *rt = ctx;

	python__snapshot(rt->py, maps);
	if (python__loaded(rt->py))
		rt->skel->bss->python_loaded = true;
}

static void python_runtime__exec(void *ctx, pid_t pid, uint64_t time_ns)
{
	struct python_runtime *rt = ctx;

	(void)time_ns;
	python__exec(rt->py, pid);
}

static void python_runtime__forget(void *ctx, bool (*known)(pid_t pid, void *arg), void *arg)
{
	struct python_runtime *rt = ctx;

	python__retain(rt->py, known, arg);
}

static int python_runtime__merge(void *ctx, struct sample_event *e)
{
	struct python_runtime *rt = ctx;

	return python__merge(rt->py, e);
}

static void python_runtime__report(void *ctx, const struct runtime_env *env)
{
	struct python_runtime *rt = ctx;
	struct python_stats st;

	python__stats(rt->py, &st);
	if (!st.processes)
		return;
	pr_info("Python: %llu processes, %llu records with Python frames, %llu code objects read, "
		"%llu frames not named; %llu Python stacks cut short (%llu at the %d-frame limit, "
		"%llu at memory that could not be read)",
		(unsigned long long)st.processes, (unsigned long long)st.samples,
		(unsigned long long)st.code_reads, (unsigned long long)st.unnamed,
		(unsigned long long)st.truncated,
		(unsigned long long)bpf_stats__sum(env->skel, STAT_PYTHON_TRUNCATED),
		PROFILE_MAX_PYTHON,
		(unsigned long long)bpf_stats__sum(env->skel, STAT_PYTHON_ERROR));
}

const struct runtime_ops python_runtime = {
	.name = "python",
	.wanted = python_runtime__wanted,
	.configure = python_runtime__configure,
	.new = python_runtime__new,
	.free = python_runtime__free,
	.snapshot = python_runtime__snapshot,
	.exec = python_runtime__exec,
	.forget = python_runtime__forget,
	.merge = python_runtime__merge,
	.report = python_runtime__report,
};
