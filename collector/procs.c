// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/procfs.h"
#include "elf/elf_cache.h"
#include "procs.h"

/* A process followed until it exits. */
struct target {
	pid_t pid;
	int pidfd; /* readable once the process has exited; -1 if pidfd_open() is missing */
	bool exited;
	bool child;	   /* the command we started: reap it */
	bool exit_pending; /* exited: its exit to be told at the next look */
};

struct procs {
	struct file_table *files;
	struct elf_cache *elves;      /* not owned */
	struct hashtab procs;	      /* struct proc by pid */
	struct proc_maps **snapshots; /* every snapshot taken, owned */
	struct hashtab by_content;    /* the same, by what they hold (snapshot_eq()) */
	size_t nr_snapshots, alloc_snapshots;
	struct target *targets;
	size_t nr_targets, alloc_targets;
	int child_status;
	struct proc_watcher *watchers;
	size_t nr_watchers, alloc_watchers;
	struct procs_stats stats;
};

struct procs *procs__new(struct strset *strings, struct elf_cache *elves)
{
	struct procs *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->elves = elves;
	t->child_status = -1;
	t->files = file_table__new(strings);
	if (!t->files) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

static void proc__free(struct proc *p)
{
	free(p->cmdline);
	free(p->cgroup);
	free(p);
}

void procs__free(struct procs *t)
{
	struct proc *p;
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr_targets; i++)
		if (t->targets[i].pidfd >= 0)
			close(t->targets[i].pidfd);
	free(t->targets);
	hashtab__for_each_entry(&t->procs, i, p)
		proc__free(p);
	hashtab__release(&t->procs);
	for (i = 0; i < t->nr_snapshots; i++)
		proc_maps__free(t->snapshots[i]);
	free(t->snapshots);
	hashtab__release(&t->by_content);
	file_table__free(t->files);
	free(t->watchers);
	free(t);
}

int procs__watch(struct procs *t, const struct proc_watcher *w)
{
	if (array__reserve(&t->watchers, &t->alloc_watchers, t->nr_watchers + 1,
			   sizeof(*t->watchers)))
		return -ENOMEM;
	t->watchers[t->nr_watchers++] = *w;
	return 0;
}

static bool proc_eq(const void *entry, const void *key)
{
	return ((const struct proc *)entry)->pid == *(const pid_t *)key;
}

struct proc *procs__find(struct procs *t, pid_t pid)
{
	return hashtab__find(&t->procs, hash_mix(0, pid), proc_eq, &pid);
}

struct proc *procs__get(struct procs *t, pid_t pid)
{
	bool added;
	struct proc *p = hashtab__find_or_add(&t->procs, hash_mix(0, pid), proc_eq, &pid,
					      sizeof(*p), &added);

	if (p && added)
		p->pid = pid;
	return p;
}

static uint64_t snapshot_hash(const struct proc_maps *maps)
{
	uint64_t h = hash_mix(maps->pid, maps->nr);

	for (size_t i = 0; i < maps->nr; i++) {
		const struct proc_map *m = &maps->maps[i];

		h = hash_mix(h, m->start);
		h = hash_mix(h, m->end ^ m->pgoff);
		h = hash_mix(h, (uintptr_t)m->name ^ (uintptr_t)m->file);
	}
	return h;
}

/* Do two snapshots of one process hold the same mappings (names and files interned)? */
static bool snapshot_eq(const void *entry, const void *key)
{
	const struct proc_maps *a = entry, *b = key;

	if (a->pid != b->pid || a->nr != b->nr)
		return false;
	for (size_t i = 0; i < a->nr; i++) {
		const struct proc_map *x = &a->maps[i], *y = &b->maps[i];

		if (x->start != y->start || x->end != y->end || x->pgoff != y->pgoff ||
		    x->name != y->name || x->file != y->file)
			return false;
	}
	return true;
}

const struct proc_maps *procs__trim_snapshot(struct procs *t, const struct proc_maps *maps,
					     const uint64_t *used)
{
	struct proc_maps *sub, *same;
	size_t n = 0;
	uint64_t hash;

	for (size_t i = 0; i < maps->nr; i++)
		n += !!(used[i / 64] & (1ULL << (i % 64)));
	if (n == maps->nr) {
		/* The table owns every snapshot, which it allocated writable. */
		((struct proc_maps *)maps)->trimmed = true;
		return NULL;
	}
	if (array__reserve(&t->snapshots, &t->alloc_snapshots, t->nr_snapshots + 1,
			   sizeof(*t->snapshots)))
		return NULL;
	sub = proc_maps__subset(maps, used);
	if (!sub)
		return NULL;
	hash = snapshot_hash(sub);
	same = hashtab__find(&t->by_content, hash, snapshot_eq, sub);
	if (same) {
		proc_maps__free(sub);
		return same;
	}
	if (hashtab__insert(&t->by_content, hash, sub)) {
		proc_maps__free(sub);
		return NULL;
	}
	t->snapshots[t->nr_snapshots++] = sub;
	return sub;
}

/*
 * Read @p's maps into a snapshot, told to no one yet: NULL when they cannot
 * be read. One that holds what a kept one of @p holds is that one, so a
 * process that loads and unloads the same libraries all along (each new
 * stack after a load takes a snapshot) has as many as it has layouts.
 */
static struct proc_maps *read_snapshot(struct procs *t, struct proc *p)
{
	struct proc_maps *maps, *same;
	uint64_t hash;

	p->snapshot_time = clock_ns(CLOCK_MONOTONIC);
	if (array__reserve(&t->snapshots, &t->alloc_snapshots, t->nr_snapshots + 1,
			   sizeof(*t->snapshots)))
		return NULL;
	maps = proc_maps__read(p->pid, t->files);
	if (!maps) {
		pr_debug("cannot read maps of pid %d: %s", p->pid, strerror(errno));
		return NULL;
	}
	hash = snapshot_hash(maps);
	same = hashtab__find(&t->by_content, hash, snapshot_eq, maps);
	if (same) {
		proc_maps__free(maps);
		p->maps = same;
		return same;
	}
	if (hashtab__insert(&t->by_content, hash, maps)) {
		proc_maps__free(maps);
		return NULL;
	}
	t->snapshots[t->nr_snapshots++] = maps;
	p->maps = maps;
	pr_debug("pid %d: snapshot of %zu executable mappings", p->pid, maps->nr);
	return maps;
}

static void tell_snapshot(struct procs *t, const struct proc_maps *maps)
{
	for (size_t i = 0; i < t->nr_watchers; i++)
		if (t->watchers[i].snapshot)
			t->watchers[i].snapshot(t->watchers[i].ctx, maps);
}

/* Count a snapshot of @pid that took from @start (CLOCK_MONOTONIC) to now. */
static void count_snapshot(struct procs *t, pid_t pid, uint64_t start)
{
	uint64_t ns = clock_ns(CLOCK_MONOTONIC) - start;

	t->stats.snapshots++;
	t->stats.ns += ns;
	if (ns > t->stats.max_ns) {
		t->stats.max_ns = ns;
		t->stats.max_pid = pid;
	}
}

void procs__snapshot(struct procs *t, struct proc *p)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	const struct proc_maps *maps = read_snapshot(t, p);

	if (maps)
		tell_snapshot(t, maps);
	count_snapshot(t, p->pid, start);
}

const struct proc_maps *procs__newer_maps(struct procs *t, struct proc *p,
					  const struct proc_maps *maps)
{
	if (p->maps == maps && clock_ns(CLOCK_MONOTONIC) - p->snapshot_time >= PROCS_REFRESH_NS)
		procs__snapshot(t, p);
	return p->maps != maps ? p->maps : NULL;
}

void procs__read_cmdline(struct proc *p, uint64_t seq)
{
	char buf[PROCFS_CMDLINE_MAX + 1];
	ssize_t n = procfs__read_cmdline(p->pid, buf, sizeof(buf));

	free(p->cmdline);
	p->cmdline = n > 0 ? strdup(buf) : NULL;
	if (n < 0)
		pr_debug("cannot read the command line of pid %d: %s", p->pid, strerror(-n));
	n = procfs__read_cgroup(p->pid, buf, sizeof(buf));
	free(p->cgroup);
	p->cgroup = n > 0 ? strdup(buf) : NULL;
	p->cmdline_seq = seq;
}

int procs__follow(struct procs *t, pid_t pid, bool child, bool snapshot, uint64_t seq)
{
	struct target *tg;
	struct proc *p;
	int pidfd;

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	/* Before Linux 5.3 (and under valgrind) there is no pidfd: poll with kill(). */
	if (pidfd < 0 && errno != ENOSYS)
		return -errno;
	if (pidfd < 0 && kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	if (array__reserve(&t->targets, &t->alloc_targets, t->nr_targets + 1,
			   sizeof(*t->targets))) {
		if (pidfd >= 0)
			close(pidfd);
		return -ENOMEM;
	}
	tg = &t->targets[t->nr_targets++];
	*tg = (struct target){ .pid = pid, .pidfd = pidfd, .child = child };
	if (!snapshot)
		return 0;
	p = procs__get(t, pid);
	if (!p)
		return -ENOMEM;
	procs__snapshot(t, p);
	procs__read_cmdline(p, seq);
	p->followed = true;
	return 0;
}

void procs__unfollow_last(struct procs *t)
{
	struct target *tg = &t->targets[--t->nr_targets];
	struct proc *p = procs__find(t, tg->pid);

	if (tg->pidfd >= 0)
		close(tg->pidfd);
	if (p)
		p->followed = false;
}

bool procs__followed(struct procs *t, pid_t pid)
{
	struct proc *p = procs__find(t, pid);

	return p && p->followed;
}

int procs__exec(struct procs *t, pid_t pid, uint64_t time_ns, uint64_t seq, bool add)
{
	struct proc *p = add ? procs__get(t, pid) : procs__find(t, pid);
	const struct proc_maps *maps;
	uint64_t start = clock_ns(CLOCK_MONOTONIC);

	if (!p)
		return add ? -ENOMEM : -ENOENT;
	pr_debug("pid %d exec'd", pid);
	/*
	 * Its maps first: a short program may be gone by the time the
	 * watchers are done (re-probing an allocator takes milliseconds), and
	 * the snapshot at its exec is then all there is. They hear of it
	 * after the exec all the same.
	 */
	maps = read_snapshot(t, p);
	for (size_t i = 0; i < t->nr_watchers; i++)
		if (t->watchers[i].exec)
			t->watchers[i].exec(t->watchers[i].ctx, pid, time_ns);
	if (maps)
		tell_snapshot(t, maps);
	count_snapshot(t, pid, start);
	procs__read_cmdline(p, seq);
	return 0;
}

static bool target__running(const struct target *tg, int *status)
{
	struct pollfd pfd = { .fd = tg->pidfd, .events = POLLIN };

	if (tg->pidfd >= 0)
		return poll(&pfd, 1, 0) == 0;
	if (tg->child)
		return waitpid(tg->pid, status, WNOHANG) == 0;
	return !kill(tg->pid, 0) || errno != ESRCH;
}

bool procs__reap(struct procs *t)
{
	/* Without processes to follow (-a, --cgroup), only -d or a signal ends it. */
	bool alive = !t->nr_targets;

	for (size_t i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		struct proc *p;

		/*
		 * Seen exited at the last look: its records all came before
		 * its exit, and a drain since has handled them.
		 */
		if (tg->exit_pending) {
			uint64_t now = clock_ns(CLOCK_MONOTONIC);

			for (size_t w = 0; w < t->nr_watchers; w++)
				if (t->watchers[w].exit)
					t->watchers[w].exit(t->watchers[w].ctx, tg->pid, now);
			tg->exit_pending = false;
		}
		if (tg->exited)
			continue;
		if (target__running(tg, &t->child_status)) {
			alive = true;
			continue;
		}
		pr_debug("pid %d exited", tg->pid);
		tg->exited = true;
		tg->exit_pending = true;
		p = procs__find(t, tg->pid);
		if (p)
			p->followed = false;
		for (size_t w = 0; w < t->nr_watchers; w++)
			if (t->watchers[w].gone)
				t->watchers[w].gone(t->watchers[w].ctx, tg->pid);
		if (tg->child && tg->pidfd >= 0 && waitpid(tg->pid, &t->child_status, 0) < 0)
			t->child_status = -1;
		if (tg->pidfd >= 0)
			close(tg->pidfd);
		tg->pidfd = -1;
	}
	return alive;
}

size_t procs__nr_targets(const struct procs *t)
{
	return t->nr_targets;
}

pid_t procs__first_target(const struct procs *t)
{
	return t->nr_targets ? t->targets[0].pid : 0;
}

int procs__child_status(const struct procs *t)
{
	return t->child_status;
}

/* A process still there, or followed until its exit is seen. */
static bool proc__alive(void *entry, void *arg)
{
	const struct proc *p = entry;

	(void)arg;
	return p->followed || !kill(p->pid, 0) || errno != ESRCH;
}

static void proc__drop(void *entry, void *arg)
{
	(void)arg;
	proc__free(entry);
}

static bool proc_known(pid_t pid, void *arg)
{
	return procs__find(arg, pid) != NULL;
}

/* Is @file in @used, a set of files (elf_cache_keep_fn)? */
static bool file_in_use(const struct mapped_file *file, void *used)
{
	return ptr_set__has(used, file);
}

int procs__forget_exited(struct procs *t, const struct hashtab *used_maps)
{
	size_t i, kept = 0;

	/* Targets whose exit was seen and told (their descriptors closed), but the command's. */
	for (i = 0; i < t->nr_targets; i++) {
		const struct target *tg = &t->targets[i];

		if (!tg->exited || tg->exit_pending || tg->child)
			t->targets[kept++] = *tg;
	}
	t->nr_targets = kept;

	/* The processes that exited, and what the watchers kept of them. */
	if (hashtab__retain(&t->procs, proc__alive, proc__drop, NULL))
		return -ENOMEM;
	for (i = 0; i < t->nr_watchers; i++)
		if (t->watchers[i].forget)
			t->watchers[i].forget(t->watchers[i].ctx, proc_known, t);

	return procs__forget_snapshots(t, used_maps);
}

/* Is @entry in @set, a pointer set? */
static bool in_set(void *entry, void *set)
{
	return ptr_set__has(set, entry);
}

int procs__forget_snapshots(struct procs *t, const struct hashtab *used_maps)
{
	struct hashtab keep = HASHTAB_INIT, used_files = HASHTAB_INIT;
	const struct proc *p;
	size_t i, kept = 0;
	int err = 0;

	/* The snapshots that neither a process nor the caller has. */
	hashtab__for_each_entry(&t->procs, i, p)
		if (p->maps && ptr_set__add(&keep, p->maps))
			goto out_nomem;
	for (i = 0; i < t->nr_snapshots; i++)
		if (ptr_set__has(used_maps, t->snapshots[i]) &&
		    ptr_set__add(&keep, t->snapshots[i]))
			goto out_nomem;
	if (hashtab__retain(&t->by_content, in_set, NULL, &keep))
		goto out_nomem;
	for (i = 0; i < t->nr_snapshots; i++) {
		if (ptr_set__has(&keep, t->snapshots[i]))
			t->snapshots[kept++] = t->snapshots[i];
		else
			proc_maps__free(t->snapshots[i]);
	}
	t->nr_snapshots = kept;

	/* Then the files that no snapshot left maps. */
	for (i = 0; i < t->nr_snapshots; i++)
		for (size_t m = 0; m < t->snapshots[i]->nr; m++) {
			const struct mapped_file *f = t->snapshots[i]->maps[m].file;

			if (f && ptr_set__add(&used_files, f))
				goto out_nomem;
		}
	elf_cache__retain(t->elves, file_in_use, &used_files);
	file_table__retain(t->files, file_in_use, &used_files);
out:
	hashtab__release(&keep);
	hashtab__release(&used_files);
	return err;

out_nomem:
	/* Nothing is freed that could still be needed: try again next time. */
	err = -ENOMEM;
	goto out;
}

size_t procs__nr_snapshots(const struct procs *t)
{
	return t->nr_snapshots;
}

size_t procs__nr(const struct procs *t)
{
	return t->procs.nr;
}

void procs__stats(const struct procs *t, struct procs_stats *stats)
{
	*stats = t->stats;
}
