/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpf_progs.h - the BPF programs loaded in the kernel, for naming kernel
 * frames in their JIT-compiled code.
 *
 * kallsyms names such code "bpf_prog_TAG_NAME" in the [bpf] module, NAME
 * cut to 15 characters, with no source line. Each program's own
 * information (bpf_prog_info) says more: where each of its functions was
 * compiled (jited_ksyms, jited_func_lens), their names in its BTF
 * (func_info), and for each source line the address its first instruction
 * was compiled to (line_info, jited_line_info), file and line from the BTF's
 * strings. A program loaded without BTF (not built with -g) has its
 * functions named by kallsyms only.
 *
 * Read of the programs loaded at that moment, then added to with those
 * loaded since (ids only grow); one unloaded stays in the set, so that a
 * recording names the programs that ran during it. Listing the programs
 * and opening them by id needs CAP_SYS_ADMIN: without it, the set is
 * empty, unless another process (collector/bpf_lister.h) opens them for
 * us. Not thread-safe: lookups must not run with an addition.
 */
#ifndef PROFILER_BPF_PROGS_H
#define PROFILER_BPF_PROGS_H

#include <stddef.h>
#include <stdint.h>

struct bpf_progs;

/* Where an address of BPF JIT code is. */
struct bpf_code_line {
	const char *func; /* the function, as its program's BTF names it */
	/*
	 * The kernel's name for its code, bpf_prog_TAG_FUNC, with the
	 * program's tag (where kallsyms gives a subprogram a tag of its own)
	 */
	const char *ksym;
	uint64_t start;	       /* the function's first address */
	const char *file;      /* its source file, or NULL without line information */
	uint32_t line;	       /* 0 without line information */
	uint32_t prog_id;      /* the program's id (bpftool prog show id N) */
	const char *prog_name; /* the program's name, as the kernel keeps it (15 characters) */
};

/* The programs loaded now. NULL and errno on ENOMEM only. */
struct bpf_progs *bpf_progs__read(void);

/*
 * Add program @id, open as @fd, with its BTF open as @btf_fd (-1: opened
 * by its id, which needs CAP_SYS_ADMIN). Reading through the descriptors
 * needs CAP_BPF, and their opener CAP_SYSLOG for the code's addresses.
 * Then bpf_progs__sort() before any lookup. 0, or -ENOMEM.
 */
int bpf_progs__add(struct bpf_progs *progs, uint32_t id, int fd, int btf_fd);
void bpf_progs__sort(struct bpf_progs *progs);
/* The highest id of a program added, or 0: those loaded since have higher ones. */
uint32_t bpf_progs__last_id(const struct bpf_progs *progs);
void bpf_progs__free(struct bpf_progs *progs);

/*
 * What program @id, open as @fd, has run by now (bpf_prog_info's run_cnt
 * and run_time_ns, counted while kernel.bpf_stats_enabled is on): its cost
 * since it was first read, or loaded, is what bpf_progs__costliest() gives.
 */
void bpf_progs__count(struct bpf_progs *progs, uint32_t id, int fd);

/* A program's runs and run time between its first and last count. */
struct bpf_prog_cost {
	const char *name; /* its first function's, as its BTF names it */
	uint32_t id;
	uint64_t runs, run_ns;
};

/* The @max programs that ran longest, into @out, the longest first: how many. */
size_t bpf_progs__costliest(const struct bpf_progs *progs, struct bpf_prog_cost *out, size_t max);

/*
 * Begin a round of bpf_progs__count(): a program it does not count is
 * unloaded, and left out of bpf_progs__loaded().
 */
void bpf_progs__count_begin(struct bpf_progs *progs);
/* The round ended at @now_ns (CLOCK_MONOTONIC): the programs it did not count are unloaded since. */
void bpf_progs__count_end(struct bpf_progs *progs, uint64_t now_ns);

/*
 * Forget the programs found unloaded at or before @before_ns
 * (bpf_progs__count_end()): no sample since can be in their code. For the
 * agent, which runs for days: each costs its functions and lines. How
 * many programs were forgotten.
 */
size_t bpf_progs__forget(struct bpf_progs *progs, uint64_t before_ns);
/* How many programs the set holds, those unloaded but not forgotten included. */
size_t bpf_progs__nr(const struct bpf_progs *progs);

/*
 * The programs the last round counted, in the order of their ids, each with
 * its runs and run time since it was loaded (the kernel's counters, which
 * only grow): an array of *@nr that the caller frees, or NULL (none, or
 * ENOMEM).
 */
struct bpf_prog_cost *bpf_progs__loaded(const struct bpf_progs *progs, size_t *nr);

/* Where @addr is, in one of @progs' functions: 0, or -ENOENT when in none. */
int bpf_progs__lookup(const struct bpf_progs *progs, uint64_t addr, struct bpf_code_line *out);

/* -v: how many programs, and functions in them, were read, and how long it took. */
void bpf_progs__report(const struct bpf_progs *progs);

#endif
