/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * proc_tree.h - the descendants of a running process, as /proc shows them.
 *
 * A process's children are listed in /proc/PID/task/TID/children, one file
 * per thread (each thread is the parent of what it forked), on kernels
 * built with CONFIG_PROC_CHILDREN. Where those files are missing, the
 * parent of every process is read from /proc/PID/stat instead, a scan of
 * the whole of /proc.
 *
 * Processes fork and exit while they are listed. The walk is meant for a
 * caller that follows each process it is given from then on (the BPF fork
 * tracepoint reports what a followed process forks): a process's children
 * are listed only after the caller has taken the process, so a child is
 * either listed or forked after, and reported; a scan is repeated until it
 * finds nothing new (at most a few times), for the same reason. A process that exits during the
 * walk is skipped; its children, adopted by a subreaper or init, are no
 * longer descendants and may be missed.
 */
#ifndef PROFILER_PROC_TREE_H
#define PROFILER_PROC_TREE_H

#include <stdbool.h>
#include <sys/types.h>

/* Where a walk finds children. */
enum proc_tree_source {
	PROC_TREE_CHILDREN, /* /proc/PID/task/TID/children */
	PROC_TREE_SCAN,	    /* the parent in every /proc/PID/stat */
};

/* The parent pid (a thread group id) in the text of a /proc/PID/stat; 0 or -EINVAL. */
int proc_tree__parse_stat(const char *text, pid_t *ppid);

/* Does this kernel have /proc/PID/task/TID/children files? */
bool proc_tree__has_children_files(void);

/*
 * Take descendant @pid: 0 to have its children listed too, -ESRCH when it
 * is gone (its children are not looked for), another negative errno to
 * stop the walk with that error.
 */
typedef int (*proc_tree_visit_fn)(pid_t pid, void *ctx);

/*
 * Call @visit once for each descendant of @root (not @root itself): its
 * children, then theirs, each before its own children are listed. *@source
 * says where to look; PROC_TREE_CHILDREN becomes PROC_TREE_SCAN when the
 * kernel has no children files. Returns how many descendants @visit took
 * (returned 0 for), or a negative errno: @visit's, or -ENOMEM.
 */
int proc_tree__walk(pid_t root, enum proc_tree_source *source, proc_tree_visit_fn visit, void *ctx);

#endif
