// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "common/log.h"
#include "golang.h"
#include "jvm.h"
#include "procs.h"
#include "python.h"
#include "runtime.h"
#include "v8.h"

/* A new runtime is one line here (runtime.h). */
const struct runtime_ops *const runtime_registry[] = {
	&python_runtime, /* CPython's frames */
	&jvm_runtime,	 /* HotSpot's perf maps */
	&go_runtime,	 /* goroutines' labels */
	&v8_runtime,	 /* node's JavaScript functions */
	NULL,
};

void runtimes__configure(struct profile_bpf *skel, const struct collector_opts *opts)
{
	for (size_t i = 0; runtime_registry[i]; i++)
		if (runtime_registry[i]->configure)
			runtime_registry[i]->configure(skel, runtime_registry[i]->wanted(opts));
}

int runtimes__start(struct runtimes *rts, const struct runtime_env *env,
		    const struct collector_opts *opts)
{
	size_t n = 0;

	while (runtime_registry[n])
		n++;
	memset(rts, 0, sizeof(*rts));
	rts->env = *env;
	rts->list = calloc(n ? n : 1, sizeof(*rts->list));
	if (!rts->list)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct runtime_ops *ops = runtime_registry[i];
		void *state;

		if (!ops->wanted(opts))
			continue;
		state = ops->new (&rts->env);
		if (!state && ops->optional) {
			pr_debug("%s: cannot start: %s", ops->name, strerror(errno));
			continue;
		}
		if (!state) {
			int err = -errno;

			pr_warn("cannot start the collector's %s support: %s", ops->name,
				strerror(-err));
			return err;
		}
		rts->list[rts->nr++] = (struct runtime){ ops, state };
	}
	return 0;
}

void runtimes__stop(struct runtimes *rts)
{
	for (size_t i = 0; i < rts->nr; i++)
		rts->list[i].ops->free(rts->list[i].state);
	free(rts->list);
	memset(rts, 0, sizeof(*rts));
}

int runtimes__watch(struct runtimes *rts, struct procs *procs)
{
	int err = 0;

	for (size_t i = 0; i < rts->nr && !err; i++) {
		const struct runtime_ops *ops = rts->list[i].ops;
		struct proc_watcher w = {
			.snapshot = ops->snapshot,
			.exec = ops->exec,
			.forget = ops->forget,
			.ctx = rts->list[i].state,
		};

		err = procs__watch(procs, &w);
	}
	return err;
}

uint64_t runtimes__frame(struct runtimes *rts, pid_t pid, const struct unwind_input *in,
			 uint64_t bp, uint64_t ip, uint32_t *flags)
{
	for (size_t i = 0; i < rts->nr; i++) {
		const struct runtime *rt = &rts->list[i];
		uint64_t frame =
			rt->ops->frame ? rt->ops->frame(rt->state, pid, in, bp, ip, flags) : ip;

		if (frame != ip)
			return frame;
	}
	return ip;
}

const char *runtimes__fix(const struct runtimes *rts, const struct proc_maps *maps)
{
	const char *fix = NULL;

	for (size_t i = 0; i < rts->nr && !fix; i++)
		if (rts->list[i].ops->fix)
			fix = rts->list[i].ops->fix(maps);
	return fix;
}

int runtimes__merge(struct runtimes *rts, struct sample_event *e)
{
	for (size_t i = 0; i < rts->nr; i++) {
		const struct runtime *rt = &rts->list[i];
		int err = rt->ops->merge ? rt->ops->merge(rt->state, e) : 0;

		if (err)
			return err;
	}
	return 0;
}

void runtimes__finish(struct runtimes *rts)
{
	for (size_t i = 0; i < rts->nr; i++)
		if (rts->list[i].ops->finish)
			rts->list[i].ops->finish(rts->list[i].state);
}

void runtimes__report(struct runtimes *rts)
{
	for (size_t i = 0; i < rts->nr; i++)
		if (rts->list[i].ops->report)
			rts->list[i].ops->report(rts->list[i].state, &rts->env);
}

static bool runtime_proc_eq(const void *entry, const void *key)
{
	return ((const struct runtime_proc *)entry)->pid == *(const pid_t *)key;
}

struct runtime_proc *runtime_procs__get(struct runtime_procs *t, pid_t pid, bool add)
{
	struct runtime_proc *p;
	bool added;

	if (!add)
		return hashtab__find(&t->table, hash_mix(0, pid), runtime_proc_eq, &pid);
	p = hashtab__find_or_add(&t->table, hash_mix(0, pid), runtime_proc_eq, &pid, t->entry_size,
				 &added);
	if (p && added)
		p->pid = pid;
	return p;
}

/* Out of the BPF map, and what the runtime keeps released. */
static void runtime_procs__clear(struct runtime_procs *t, struct runtime_proc *p)
{
	if (p->loaded)
		bpf_map_delete_elem(t->map_fd, &p->pid);
	if (t->clear)
		t->clear(p, t->arg);
	p->checked = p->loaded = false;
}

void runtime_procs__exec(struct runtime_procs *t, pid_t pid)
{
	struct runtime_proc *p = runtime_procs__get(t, pid, false);

	if (p)
		runtime_procs__clear(t, p);
}

/* What hashtab__retain() hands to both of its callbacks. */
struct runtime_known {
	struct runtime_procs *t;
	bool (*known)(pid_t pid, void *arg);
	void *arg;
};

static bool runtime_proc__known(void *entry, void *arg)
{
	const struct runtime_known *k = arg;

	return k->known(((struct runtime_proc *)entry)->pid, k->arg);
}

static void runtime_proc__drop(void *entry, void *arg)
{
	const struct runtime_known *k = arg;

	runtime_procs__clear(k->t, entry);
	free(entry);
}

void runtime_procs__forget(struct runtime_procs *t, bool (*known)(pid_t pid, void *arg), void *arg)
{
	struct runtime_known k = { t, known, arg };

	hashtab__retain(&t->table, runtime_proc__known, runtime_proc__drop, &k);
}

void runtime_procs__release(struct runtime_procs *t)
{
	struct runtime_proc *p;
	size_t i;

	hashtab__for_each_entry(&t->table, i, p) {
		if (t->clear)
			t->clear(p, t->arg);
		free(p);
	}
	hashtab__release(&t->table);
}
