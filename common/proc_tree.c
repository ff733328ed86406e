// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "hashtab.h"
#include "proc_tree.h"
#include "procfs.h"

/* A process and its parent, from one scan of /proc. */
struct parent_of {
	pid_t pid, ppid;
	bool taken; /* queued by this scan's walk: a reused pid cannot loop it */
};

/* A set of pids: the entries are the pids themselves. */
struct pid_set {
	struct hashtab ht;
};

static bool pid_set__has(const struct pid_set *s, pid_t pid)
{
	return hashtab__find(&s->ht, hash_u64(pid), hash_u64_eq, NULL) != NULL;
}

static int pid_set__add(struct pid_set *s, pid_t pid)
{
	return hashtab__insert(&s->ht, hash_u64(pid), (void *)(uintptr_t)pid);
}

/* A whole positive decimal number, as /proc names processes; 0 otherwise. */
static pid_t parse_pid(const char *s, const char **end)
{
	long v = 0;

	if (*s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > 0x3fffffff)
			return 0;
	}
	if (end)
		*end = s;
	return v;
}

int proc_tree__parse_stat(const char *text, pid_t *ppid)
{
	/* The command name may hold spaces and ')': it ends at the last ')'. */
	const char *p = strrchr(text, ')');
	char state;
	int v;

	if (!p || sscanf(p + 1, " %c %d", &state, &v) != 2 || v < 0)
		return -EINVAL;
	*ppid = v;
	return 0;
}

bool proc_tree__has_children_files(void)
{
	return !access("/proc/thread-self/children", R_OK);
}

/*
 * Scans of /proc after the first find what the processes found by the one
 * before forked meanwhile, most of them reported by the fork tracepoint as
 * well: a tree that forks without pause would always have some. A few
 * scans close the gap.
 */
#define MAX_SCANS 4

/* A walk: the pids met, @root included, and those whose children are to be listed. */
struct walk {
	struct pid_set seen;
	pid_t *queue;
	size_t nr_queue, alloc_queue;
	proc_tree_visit_fn visit;
	void *ctx;
	int taken;
};

/* Meet @pid, a child of a queued process: visit it and queue it if it is new. 0 or -errno. */
static int walk__meet(struct walk *w, pid_t pid)
{
	int err;

	if (pid_set__has(&w->seen, pid))
		return 0;
	if (pid_set__add(&w->seen, pid) ||
	    array__reserve(&w->queue, &w->alloc_queue, w->nr_queue + 1, sizeof(*w->queue)))
		return -ENOMEM;
	err = w->visit(pid, w->ctx);
	if (err == -ESRCH)
		return 0;
	if (err)
		return err;
	w->taken++;
	w->queue[w->nr_queue++] = pid;
	return 0;
}

/* The children of every thread of @pid; a process or thread that is gone has none. */
static int walk__children_of(struct walk *w, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!err && (de = readdir(dir))) {
		pid_t tid = parse_pid(de->d_name, NULL), child;
		const char *s;
		char *text;

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, tid);
		text = procfs__read_file(path, NULL);
		if (!text)
			continue;
		for (s = text; !err && *s;) {
			if (*s == ' ' || *s == '\n') {
				s++;
				continue;
			}
			child = parse_pid(s, &s);
			if (!child)
				break;
			err = walk__meet(w, child);
		}
		free(text);
	}
	closedir(dir);
	return err;
}

static int cmp_ppid(const void *pa, const void *pb)
{
	const struct parent_of *a = pa, *b = pb;

	return a->ppid < b->ppid ? -1 : a->ppid > b->ppid;
}

/* Every process's parent, sorted by parent; processes that exit meanwhile are left out. */
static int scan_parents(struct parent_of **out, size_t *nr)
{
	struct parent_of *procs = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t pid = parse_pid(de->d_name, NULL), ppid;
		char path[64], *text;

		if (!pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		text = procfs__read_file(path, NULL);
		if (!text)
			continue;
		if (!proc_tree__parse_stat(text, &ppid) && ppid) {
			if (array__reserve(&procs, &alloc, n + 1, sizeof(*procs))) {
				free(text);
				closedir(dir);
				free(procs);
				return -ENOMEM;
			}
			procs[n++] = (struct parent_of){ pid, ppid, false };
		}
		free(text);
	}
	closedir(dir);
	if (n > 1)
		qsort(procs, n, sizeof(*procs), cmp_ppid);
	*out = procs;
	*nr = n;
	return 0;
}

/*
 * One scan: meet the descendants of @root in it, from the root down. How
 * many were new (not met by an earlier scan), or a negative errno.
 */
static int walk__scan(struct walk *w, pid_t root)
{
	struct parent_of *procs = NULL, key;
	size_t nr = 0, head = 0, lo, hi, mid;
	int before = w->taken, err;

	err = scan_parents(&procs, &nr);
	if (err)
		return err;
	/* The queue is this scan's: processes met before are walked through again. */
	w->nr_queue = 0;
	if (array__reserve(&w->queue, &w->alloc_queue, 1, sizeof(*w->queue))) {
		free(procs);
		return -ENOMEM;
	}
	w->queue[w->nr_queue++] = root;
	while (!err && head < w->nr_queue) {
		key.ppid = w->queue[head++];
		for (lo = 0, hi = nr; lo < hi;) {
			mid = lo + (hi - lo) / 2;
			if (cmp_ppid(&procs[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; !err && lo < nr && procs[lo].ppid == key.ppid; lo++) {
			struct parent_of *p = &procs[lo];

			if (p->taken)
				continue;
			p->taken = true;
			if (pid_set__has(&w->seen, p->pid)) {
				/* Met by an earlier scan: walk below it again. */
				if (array__reserve(&w->queue, &w->alloc_queue, w->nr_queue + 1,
						   sizeof(*w->queue)))
					err = -ENOMEM;
				else
					w->queue[w->nr_queue++] = p->pid;
				continue;
			}
			err = walk__meet(w, p->pid);
		}
	}
	free(procs);
	return err ? err : w->taken - before;
}

int proc_tree__walk(pid_t root, enum proc_tree_source *source, proc_tree_visit_fn visit, void *ctx)
{
	struct walk w = { .visit = visit, .ctx = ctx };
	int err;

	hashtab__init(&w.seen.ht);
	if (*source == PROC_TREE_CHILDREN && !proc_tree__has_children_files())
		*source = PROC_TREE_SCAN;
	err = pid_set__add(&w.seen, root);
	if (err)
		goto out;
	if (*source == PROC_TREE_SCAN) {
		/* Until a scan finds none new: those found may have forked meanwhile. */
		for (int i = 0; i < MAX_SCANS && (err = walk__scan(&w, root)) > 0; i++)
			;
		goto out;
	}
	err = array__reserve(&w.queue, &w.alloc_queue, 1, sizeof(*w.queue));
	if (err)
		goto out;
	w.queue[w.nr_queue++] = root;
	for (size_t head = 0; !err && head < w.nr_queue; head++)
		err = walk__children_of(&w, w.queue[head]);
out:
	hashtab__release(&w.seen.ht);
	free(w.queue);
	return err < 0 ? err : w.taken;
}
