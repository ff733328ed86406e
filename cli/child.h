/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * child.h - the command the profiler starts (`profiler -- COMMAND`).
 *
 * The child is forked before sampling starts, so it inherits none of the
 * profiler's later settings, and waits: it execs only once child__release()
 * lets it, after sampling is attached, so its first instruction is sampled
 * and nothing of the profiler's own code before the exec is. When profiling
 * ends first, it is stopped as perf record stops it.
 *
 * A struct child is embedded (CHILD_INIT); it owns two pipe descriptors
 * until child__release() and the process until it is reaped. Not
 * thread-safe.
 */
#ifndef PROFILER_CHILD_H
#define PROFILER_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

struct invoker;

struct child {
	pid_t pid;  /* -1: none */
	int go_fd;  /* write a byte to let the child exec */
	int err_fd; /* the child writes errno here if exec fails; EOF on success */
	bool started;
};

#define CHILD_INIT                                                                                 \
	{                                                                                          \
		.pid = -1, .go_fd = -1, .err_fd = -1                                               \
	}

/*
 * Is @file an executable we could exec, searching $PATH like execvp()? 0,
 * with its path in @found (@size bytes), or -errno.
 */
int child__find_command(const char *file, char *found, size_t size);

/*
 * Fork a child that waits for the go-ahead, then execs @argv, with the
 * environment @env (NULL: ours), as @user if not NULL. In the child,
 * @in_child (if not NULL) runs first, to undo the parent's signal
 * handlers: only async-signal-safe calls. 0 or -errno.
 */
int child__fork(struct child *child, char **argv, char **env, const struct invoker *user,
		void (*in_child)(void));

/*
 * Let the child exec. 0 once it did; -ECHILD if it died before it could
 * start, or the -errno of its failed exec (it is then reaped).
 */
int child__release(struct child *child);

/*
 * The wait status of a released child: @status if the caller already reaped
 * it (collector__child_status()), else it is still running and is ended as
 * perf record does, SIGTERM, then SIGKILL if it has not exited within two
 * seconds. The child is forgotten: child__abort() no longer touches it.
 */
int child__end(struct child *child, int status);

/*
 * Report on stderr how the command @name ended, unless it simply succeeded:
 * @stopped when child__end() had to stop it.
 */
void child__report(const char *name, int status, bool stopped);

/* Undo child__fork() on an error path, whether or not the child was released. */
void child__abort(struct child *child);

#endif
