// SPDX-License-Identifier: GPL-2.0-only
/*
 * The targets of a recording or of the agent: checked before sampling
 * starts, then handed to the collector.
 */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "collector/alloc.h"
#include "common/log.h"
#include "common/procfs.h"
#include "targets.h"

/*
 * Is @path a cgroup v2 directory? 0, or -errno: -ENOTDIR when it is no
 * cgroup directory at all, -EMEDIUMTYPE when it is a cgroup v1 one.
 */
static int check_cgroup(const char *path)
{
	struct statfs sfs;
	struct stat st;

	if (statfs(path, &sfs) || stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (sfs.f_type == CGROUP_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	return sfs.f_type == CGROUP2_SUPER_MAGIC ? 0 : -ENOTDIR;
}

/*
 * Say why --cgroup @path cannot be profiled. Returns the exit status: 2 for
 * a path that names no cgroup (the user's mistake, as with any bad argument),
 * 1 for a real cgroup of the v1 hierarchy, or one that cannot be looked at:
 * the system's doing, not the command line's.
 */
static int cgroup_failure(const char *path, int err)
{
	char *mounts, *line, *save = NULL, where[256], type[16];

	if (err == -ENOTDIR || err == -ENOENT) {
		pr_warn("'%s' is not a cgroup v2 directory%s%s (see --help)", path,
			err == -ENOENT ? ": " : "", err == -ENOENT ? strerror(-err) : "");
		return 2;
	}
	if (err != -EMEDIUMTYPE) {
		pr_warn("cannot use cgroup '%s': %s", path, strerror(-err));
		return 1;
	}
	/* Where cgroup v2 is mounted, if it is (beside v1 on a hybrid system). */
	mounts = procfs__read_file("/proc/self/mounts", NULL);
	for (line = mounts ? strtok_r(mounts, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%*s %255s %15s", where, type) == 2 && !strcmp(type, "cgroup2"))
			break;
	free(mounts);
	if (line)
		pr_warn("'%s' is a cgroup v1 directory, and --cgroup needs cgroup v2: give the "
			"group's directory under '%s' instead",
			path, where);
	else
		pr_warn("'%s' is a cgroup v1 directory, and --cgroup needs cgroup v2, which is not "
			"mounted here",
			path);
	return 1;
}

/* The thread group of @pid (itself for a process), or -errno. */
static pid_t thread_group_of(pid_t pid)
{
	char path[64], line[128];
	pid_t tgid = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

void targets__collector_opts(const struct options *o, struct collector_opts *copts)
{
	*copts = (struct collector_opts){
		.freq_hz = o->freq_hz,
		.duration_ns = o->duration_ns,
		.ringbuf_bytes = o->ringbuf_bytes,
		.system_wide = o->system_wide || o->cgroup,
		.cgroup = o->cgroup,
		.offcpu_runnable = o->wall,
		.tid = o->tid,
		.no_inherit = o->no_inherit,
		.offcpu = o->offcpu,
		.offcpu_min_ns = o->offcpu_min_ns,
		.offcpu_sum_ns = o->wall ? WALL_SUM_US * 1000ULL : 0,
		.idle = !o->no_idle,
		.thread_cpu = o->wall,
		.call_graph = o->call_graph,
		.stack_bytes = o->stack_bytes,
		.unwind_table_bytes = o->unwind_table_bytes,
		.max_frames = o->max_frames,
		.max_stacks = o->max_stacks,
		.no_python = o->no_python,
		.no_java = o->no_java,
		.no_node = o->no_node,
		.alloc_rate = o->alloc_rate,
		.alloc_max_live = o->alloc_max_live,
	};
}

int targets__check(const struct options *o, pid_t *tid_process)
{
	int err;

	*tid_process = 0;
	for (size_t i = 0; i < o->nr_pids; i++) {
		pid_t tgid = thread_group_of(o->pids[i]);

		if ((tgid == -ENOENT || tgid == -ESRCH) && kill(o->pids[i], 0) && errno == ESRCH) {
			pr_warn("no such process %d", o->pids[i]);
			return 1;
		}
		/* It exists, but /proc hides it from us (hidepid, another user's process). */
		if (tgid < 0) {
			pr_warn("cannot read /proc/%d: %s; profiling it without its maps",
				o->pids[i], strerror(tgid == -ENOENT ? EACCES : -tgid));
			continue;
		}
		if (tgid > 0 && tgid != o->pids[i]) {
			pr_warn("%d is a thread of process %d: use -p %d", o->pids[i], tgid, tgid);
			return 1;
		}
	}
	if (o->cgroup) {
		err = check_cgroup(o->cgroup);
		if (err)
			return cgroup_failure(o->cgroup, err);
	}
	if (o->tid) {
		*tid_process = thread_group_of(o->tid);
		if (*tid_process < 0) {
			pr_warn("no such thread %d", o->tid);
			return 1;
		}
	}
	return 0;
}

int targets__add(struct collector *c, const struct options *o, pid_t tid_process)
{
	int err;

	if (tid_process > 0) {
		err = collector__add_target(c, tid_process, false);
		if (err) {
			pr_warn("cannot profile thread %d: %s", o->tid, strerror(-err));
			return 1;
		}
	}
	for (size_t i = 0; i < o->nr_pids; i++) {
		err = collector__add_target(c, o->pids[i], false);
		if (err) {
			if (err == -ESRCH)
				pr_warn("no such process %d", o->pids[i]);
			else if (err == ALLOC_NO_ALLOCATOR)
				pr_warn("cannot profile pid %d: %s", o->pids[i],
					ALLOC_NO_ALLOCATOR_MSG);
			else
				pr_warn("cannot profile pid %d: %s", o->pids[i], strerror(-err));
			return 1;
		}
	}
	return 0;
}

/*
 * Follow what the -p processes had started before the recording, as what
 * they fork from now on is followed: how many processes, or -1 when
 * descendants are not followed. Sampling is attached, so none forked
 * meanwhile is missed. One that cannot be followed costs its samples only.
 */
int targets__add_descendants(struct collector *c, const struct options *o)
{
	size_t total = 0, n;
	int err;

	if (!o->nr_pids || o->no_inherit)
		return -1;
	for (size_t i = 0; i < o->nr_pids; i++) {
		err = collector__add_descendants(c, o->pids[i], &n);
		total += n;
		if (err == -E2BIG)
			pr_warn("pid %d has more descendants than can be followed (%d processes in "
				"all): the others are left out",
				o->pids[i], PROFILE_MAX_TARGETS);
		else if (err)
			pr_warn("cannot follow every descendant of pid %d: %s", o->pids[i],
				strerror(-err));
	}
	return total < INT_MAX ? (int)total : INT_MAX;
}

void targets__raise_nofile_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
