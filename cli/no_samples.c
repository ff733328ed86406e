// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/log.h"
#include "common/procfs.h"
#include "common/profile.h"
#include "no_samples.h"
#include "options.h"

/* Processes named one by one in the warning; the rest are counted. */
#define MAX_NAMED 4

/* A line being written: appends past its end are cut, never overflow. */
struct line {
	char buf[1024];
	size_t len;
};

static void __attribute__((format(printf, 2, 3))) add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof(l->buf) - l->len ? (size_t)n :
								sizeof(l->buf) - 1 - l->len;
}

/* "1234 (nginx)"; the name is "?" once the process is gone. */
static void add_process(struct line *l, pid_t pid)
{
	char path[64], *comm;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm = procfs__read_file(path, NULL);
	if (comm)
		comm[strcspn(comm, "\n")] = '\0';
	add(l, "%d (%s)", pid, comm && *comm ? comm : "?");
	free(comm);
}

/*
 * Append the live children of @pid, from every thread's
 * /proc/PID/task/TID/children (Linux 3.5 and CONFIG_PROC_CHILDREN), to
 * @kids. Returns how many there are now; none when /proc cannot tell.
 */
static size_t children_of(pid_t pid, pid_t **kids, size_t nr)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return nr;
	while ((d = readdir(dir))) {
		char file[300], *text, *s, *end;

		if (d->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "/proc/%d/task/%s/children", pid, d->d_name);
		text = procfs__read_file(file, NULL);
		if (!text)
			continue;
		for (s = text;; s = end) {
			long child = strtol(s, &end, 10);
			pid_t *grown;

			if (end == s || child <= 0)
				break;
			grown = realloc(*kids, (nr + 1) * sizeof(**kids));
			if (!grown)
				break;
			*kids = grown;
			(*kids)[nr++] = child;
		}
		free(text);
	}
	closedir(dir);
	return nr;
}

/* Children named, and given as one -p; past that many, no -p to copy. */
#define MAX_SUGGESTED 32

/* "; the work may be in its child processes 1240 (split), 1241 (sh): -p 1240,1241 ..." */
static void add_children(struct line *l, const struct options *o)
{
	pid_t *kids = NULL;
	size_t nr = 0, i;

	for (i = 0; i < o->nr_pids; i++)
		nr = children_of(o->pids[i], &kids, nr);
	if (!nr)
		return;
	add(l, "; the work may be in %s child process%s ", o->nr_pids > 1 ? "their" : "its",
	    nr > 1 ? "es" : "");
	for (i = 0; i < nr && i < MAX_NAMED; i++) {
		add(l, "%s", i ? ", " : "");
		add_process(l, kids[i]);
	}
	if (nr > MAX_NAMED)
		add(l, " and %zu more", nr - MAX_NAMED);
	if (nr <= MAX_SUGGESTED) {
		add(l, ": -p ");
		for (i = 0; i < nr; i++)
			add(l, "%s%d", i ? "," : "", kids[i]);
		add(l, " profiles %s", nr > 1 ? "them" : "it");
	}
	free(kids);
}

/* Does the cgroup v2 directory @path, or one below it, hold a process? */
static bool cgroup_populated(const char *path)
{
	char file[4096], *text;
	bool populated;

	/* cgroup.events says "populated 1" for a cgroup with processes in or below it. */
	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	text = procfs__read_file(file, NULL);
	if (!text)
		return true; /* cannot tell: do not claim it is empty */
	populated = !strstr(text, "populated 0");
	free(text);
	return populated;
}

void no_samples__warn(const struct options *o, const struct profile *p, bool command_exited)
{
	uint64_t lost = p->stats.lost_samples + p->stats.lost_offcpu;
	/*
	 * A thread asleep from before the recording to its end leaves no
	 * interval off CPU either: only the ones that end (or begin) in it count.
	 */
	const char *idle = o->offcpu ? "neither ran on a CPU nor woke up during the recording" :
				       "did not run on a CPU during the recording (idle, or "
				       "blocked: --off-cpu shows where)";
	struct line l = { .len = 0 };

	if (p->stats.samples || p->stats.offcpu_intervals)
		return;
	add(&l, "warning: no samples: ");
	if (lost) {
		add(&l, "all %llu were lost", (unsigned long long)lost);
	} else if (o->alloc_rate) {
		/* Allocations are sampled by bytes, not by a clock. */
		add(&l, "%s%s%s made ", o->command ? "'" : "",
		    o->command ? o->command[0] : "the targets", o->command ? "'" : "");
		if (o->alloc_rate == 1)
			add(&l, "no allocation through the allocator probed");
		else
			add(&l,
			    "too few allocations to be sampled at one sample per %llu bytes on "
			    "average: --alloc=1 records every one",
			    (unsigned long long)o->alloc_rate);
	} else if (p->duration < p->period_ns) {
		add(&l,
		    "the recording lasted %.3f s, less than one sample period (%.1f ms at %u Hz)",
		    p->duration / 1e9, p->period_ns / 1e6, p->freq_hz);
	} else if (o->command && command_exited) {
		add(&l,
		    "'%s' exited after %.3f s, having run on a CPU too briefly to be sampled at "
		    "%u Hz (once every %.1f ms of CPU time)",
		    o->command[0], p->duration / 1e9, p->freq_hz, p->period_ns / 1e6);
	} else if (o->command) {
		add(&l, "'%s' %s", o->command[0], idle);
	} else if (o->nr_pids) {
		add(&l, "pid%s ", o->nr_pids > 1 ? "s" : "");
		for (size_t i = 0; i < o->nr_pids && i < MAX_NAMED; i++) {
			add(&l, "%s", i ? ", " : "");
			add_process(&l, o->pids[i]);
		}
		if (o->nr_pids > MAX_NAMED)
			add(&l, " and %zu more", o->nr_pids - MAX_NAMED);
		add(&l, " %s", idle);
		add_children(&l, o);
	} else if (o->tid) {
		add(&l, "thread %d %s", o->tid, idle);
	} else if (o->cgroup && !cgroup_populated(o->cgroup)) {
		add(&l, "cgroup '%s' holds no process, nor do the cgroups below it", o->cgroup);
	} else if (o->cgroup) {
		add(&l, "the processes of cgroup '%s' %s", o->cgroup, idle);
	} else {
		add(&l, "nothing ran on a CPU during the recording");
	}
	pr_warn("%s", l.buf);
}
