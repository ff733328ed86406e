// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpf_hot SECONDS: loads bpf_hot.bpf.c's program on the system call entry
 * tracepoint, for this process only, then for SECONDS makes system calls
 * (getppid) between turns of work of its own, so that about half of its
 * time is spent in the BPF program (tests/e2e/bpf_code.sh). Needs root.
 * Exits 2 on bad arguments, 1 when the program cannot be loaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bpf_hot.skel.h"

static volatile unsigned long sink;

/* Work of the process's own, in user space. */
static __attribute__((noinline)) void user_work(unsigned int n)
{
	unsigned long x = n;

	for (unsigned int i = 0; i < n; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink += x;
}

/* A system call that does nothing but enter the kernel, and the BPF program with it. */
static __attribute__((noinline)) void make_calls(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		sink += getppid();
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct bpf_hot_bpf *skel;
	double seconds, end;

	if (argc != 2 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: bpf_hot SECONDS\n");
		return 2;
	}
	skel = bpf_hot_bpf__open();
	if (!skel) {
		perror("bpf_hot: cannot open the BPF program");
		return 1;
	}
	skel->rodata->target_tgid = getpid();
	if (bpf_hot_bpf__load(skel) || bpf_hot_bpf__attach(skel)) {
		perror("bpf_hot: cannot load the BPF program");
		bpf_hot_bpf__destroy(skel);
		return 1;
	}
	/* Ready: the caller may start profiling now. */
	printf("ready %d\n", getpid());
	fflush(stdout);
	end = now() + seconds;
	while (now() < end) {
		user_work(200000);
		make_calls(20);
	}
	bpf_hot_bpf__destroy(skel);
	return 0;
}
