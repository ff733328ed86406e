/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpf_lister.h - the BPF programs loaded during a recording, opened for it
 * by a helper process (helper.h) that keeps CAP_SYS_ADMIN, which listing
 * programs and opening them by id need, and CAP_SYSLOG, which the
 * addresses of their code need, after the recording gave both up.
 *
 * The lister answers one request, the programs after an id (0: all): their ids,
 * with a descriptor of each and of its BTF, passed over the socket
 * (SCM_RIGHTS), at most BPF_LISTER_MAX_PROGS a request. The collector reads
 * what it needs through them itself (common/bpf_progs.h), and closes them.
 * A lister that cannot start, or stops answering, leaves the programs
 * loaded since to kallsyms' names, said at debug level.
 *
 * Thread-safety: one thread (the collector's) asks. bpf_lister__new()
 * forks: call it as helper__start() says.
 */
#ifndef PROFILER_BPF_LISTER_H
#define PROFILER_BPF_LISTER_H

struct bpf_lister;
struct bpf_progs;

/* The most programs one request brings. */
#define BPF_LISTER_MAX_PROGS 4096

/* A lister, or NULL and errno. */
struct bpf_lister *bpf_lister__new(void);
void bpf_lister__free(struct bpf_lister *l);

/*
 * Add to @progs the programs loaded after its last one (sorted for
 * lookups). 0, or -errno (-ENOMEM, or the lister did not answer): the
 * lister is not asked again.
 */
int bpf_lister__refresh(struct bpf_lister *l, struct bpf_progs *progs);

/*
 * Count what each program still loaded has run by now (bpf_progs__count()),
 * adding those loaded since, as bpf_lister__refresh() does, in the same
 * request. 0, or -errno as bpf_lister__refresh().
 */
int bpf_lister__count(struct bpf_lister *l, struct bpf_progs *progs);

#endif
