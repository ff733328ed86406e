// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "privileges.h"

/* Is @file an executable we could exec, searching $PATH like execvp()? 0 or -errno. */
int child__find_command(const char *file, char *found, size_t size)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	int err = -ENOENT;

	if (strchr(file, '/')) {
		if (access(file, X_OK))
			return -errno;
		snprintf(found, size, "%s", file);
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", file);
		if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
			if (!access(buf, X_OK)) {
				snprintf(found, size, "%s", buf);
				return 0;
			}
			err = -EACCES;
		}
		path += len + (path[len] == ':');
	}
	return err;
}

int child__fork(struct child *child, char **argv, char **env, const struct invoker *user,
		void (*in_child)(void))
{
	int go[2], status[2];
	char c;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(status, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	child->pid = fork();
	if (child->pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(status[0]);
		close(status[1]);
		return err;
	}
	if (!child->pid) {
		int err = 0;

		close(go[1]);
		close(status[0]);
		if (in_child)
			in_child();
		if (user)
			err = -invoker__become(user);
		/* EOF without a byte means the profiler gave up: do not run. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		if (!err) {
			if (env)
				execvpe(argv[0], argv, env);
			else
				execvp(argv[0], argv);
			err = errno;
		}
		if (write(status[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	child->go_fd = go[1];
	child->err_fd = status[0];
	return 0;
}

int child__release(struct child *child)
{
	int err = 0;
	ssize_t n;

	/* EPIPE (SIGPIPE is ignored): the child died before it could start. */
	if (write(child->go_fd, "g", 1) != 1)
		err = errno == EPIPE ? ECHILD : errno;
	close(child->go_fd);
	child->go_fd = -1;
	if (!err) {
		do
			n = read(child->err_fd, &err, sizeof(err));
		while (n < 0 && errno == EINTR);
		if (n != sizeof(err))
			err = 0;
	}
	close(child->err_fd);
	child->err_fd = -1;
	child->started = !err;
	if (err)
		waitpid(child->pid, NULL, 0);
	return -err;
}

/*
 * End a child that is still running when profiling stops, as perf record
 * does: SIGTERM, then SIGKILL if it has not exited within two seconds.
 * Returns its wait status.
 */
static int child__stop(struct child *child)
{
	int status = -1;

	kill(child->pid, SIGTERM);
	for (int i = 0; i < 200; i++) {
		if (waitpid(child->pid, &status, WNOHANG) == child->pid)
			return status;
		usleep(10000);
	}
	kill(child->pid, SIGKILL);
	waitpid(child->pid, &status, 0);
	return status;
}

int child__end(struct child *child, int status)
{
	if (status == -1)
		status = child__stop(child);
	child->pid = -1;
	return status;
}

void child__abort(struct child *child)
{
	if (child->pid < 0)
		return;
	if (child->go_fd >= 0)
		close(child->go_fd);
	if (child->err_fd >= 0)
		close(child->err_fd);
	if (child->started)
		child__stop(child);
	else
		waitpid(child->pid, NULL, 0);
	child->pid = -1;
}

void child__report(const char *name, int status, bool stopped)
{
	if (stopped)
		fprintf(stderr, "profiler: stopped '%s' when profiling ended\n", name);
	else if (WIFSIGNALED(status))
		fprintf(stderr, "profiler: '%s' was killed by signal %d\n", name, WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "profiler: '%s' exited with status %d\n", name,
			WEXITSTATUS(status));
}
