// SPDX-License-Identifier: GPL-2.0-only
/*
 * runstat FILE CMD [ARG...]: run CMD with this process's stdin, stdout and
 * stderr, wait for it, and append "wall_ns N maxrss_kib N user_ns N sys_ns N"
 * to FILE: its wall time, peak resident size and CPU time in user space and
 * in the kernel. Exits with CMD's status (128 + signal if a signal ended it).
 *
 * Not GNU time: its elapsed time has 10 ms steps, too coarse for runs of
 * tens of ms, and it is one more package to install. The wall time runs
 * from just before the spawn to the reaping of CMD; the peak resident size
 * and the CPU times are CMD's own, from wait4(), not those of a shell around it.
 */
#include <errno.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL + tv.tv_usec * 1000ULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	uint64_t t0, t1;
	int err, status;
	pid_t pid;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: runstat FILE CMD [ARG...]\n");
		return 2;
	}
	out = fopen(argv[1], "a");
	if (!out) {
		fprintf(stderr, "runstat: cannot open '%s': %s\n", argv[1], strerror(errno));
		return 2;
	}
	t0 = now_ns();
	err = posix_spawnp(&pid, argv[2], NULL, NULL, &argv[2], environ);
	if (err) {
		fprintf(stderr, "runstat: cannot run '%s': %s\n", argv[2], strerror(err));
		return 127;
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "runstat: cannot wait for '%s': %s\n", argv[2],
				strerror(errno));
			return 2;
		}
	}
	t1 = now_ns();
	fprintf(out, "wall_ns %llu maxrss_kib %ld user_ns %llu sys_ns %llu\n",
		(unsigned long long)(t1 - t0), ru.ru_maxrss,
		(unsigned long long)timeval_ns(ru.ru_utime),
		(unsigned long long)timeval_ns(ru.ru_stime));
	if (fclose(out)) {
		fprintf(stderr, "runstat: cannot write '%s': %s\n", argv[1], strerror(errno));
		return 2;
	}
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
