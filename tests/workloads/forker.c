// SPDX-License-Identifier: GPL-2.0-only
/*
 * forker [CHILDREN [CHILD_MS [SPACING_MS]]]: fork CHILDREN children (default
 * 8), SPACING_MS apart (default 50), each burning CPU in child_work() for
 * CHILD_MS milliseconds (default 150) before it exits, while the parent only
 * sleeps and waits: nearly every on-CPU sample belongs to a child.
 *
 * forker --exec CHILDREN CHILD_MS SPACING_MS: each child instead executes
 * early_exit (found next to this program) for CHILD_MS milliseconds, so its
 * short_lived_work() comes from a program the profiler first sees after exec.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

static volatile unsigned long sink;

__attribute__((noinline)) void child_work(unsigned long ms)
{
	double end = now_seconds() + ms / 1000.0;

	while (now_seconds() < end)
		sink += burn(1);
}

/* early_exit's path, from the directory of /proc/self/exe. */
static int sibling_path(const char *name, char *path, size_t size)
{
	ssize_t len = readlink("/proc/self/exe", path, size - 1);
	char *slash;

	if (len < 0)
		return -errno;
	path[len] = '\0';
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash + 1 - path) + strlen(name) >= size)
		return -ENAMETOOLONG;
	strcpy(slash + 1, name);
	return 0;
}

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], seconds[32];
	unsigned long children, child_ms, spacing_ms;
	bool exec_mode = argc > 1 && !strcmp(argv[1], "--exec");
	int arg = exec_mode ? 2 : 1, status, failed = 0;
	pid_t pid;

	children = argc > arg ? strtoul(argv[arg], NULL, 10) : 8;
	child_ms = argc > arg + 1 ? strtoul(argv[arg + 1], NULL, 10) : 150;
	spacing_ms = argc > arg + 2 ? strtoul(argv[arg + 2], NULL, 10) : 50;
	if (exec_mode && sibling_path("early_exit", exe, sizeof(exe))) {
		fprintf(stderr, "forker: cannot find early_exit next to /proc/self/exe\n");
		return 1;
	}
	snprintf(seconds, sizeof(seconds), "%.3f", child_ms / 1000.0);

	for (unsigned long i = 0; i < children; i++) {
		if (i)
			sleep_ms(spacing_ms);
		pid = fork();
		if (pid < 0) {
			perror("forker: fork");
			failed = 1;
			break;
		}
		if (pid == 0) {
			if (exec_mode) {
				execl(exe, exe, seconds, (char *)NULL);
				fprintf(stderr, "forker: cannot execute '%s': %s\n", exe,
					strerror(errno));
				_exit(127);
			}
			child_work(child_ms);
			_exit(0);
		}
	}
	while ((pid = wait(&status)) > 0 || errno == EINTR)
		if (pid > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			failed = 1;
	return failed;
}
