// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpf_hot SECONDS [syscalls|uprobe|maps [wait]]: loads bpf_hot.bpf.c's
 * program on the system call entry tracepoint, for this process only, then
 * for SECONDS makes system calls (getppid) between turns of work of its
 * own, so that most of its time is spent in the BPF program
 * (tests/e2e/bpf_code.sh). With uprobe, it calls probed() instead, on
 * which the program's uprobe twin is attached; with maps, it updates a BPF
 * map (bpf()) instead, during which the kernel runs no perf_event BPF
 * program. With wait, the work starts at SIGUSR1 and the process then
 * waits to be killed: two profilers started before see all of it. Needs
 * root. Exits 2 on bad arguments, 1 when the program cannot be loaded.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

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

/* The function the uprobe is on: nothing of its own. */
__attribute__((noinline)) void probed(void)
{
	__asm__ volatile("" ::: "memory");
}

enum mode {
	SYSCALLS,
	UPROBE,
	MAPS
};

/*
 * A system call that does nothing but enter the kernel, and the BPF
 * program with it; a call of probed(); or an update of the map @map_fd.
 */
static __attribute__((noinline)) void make_calls(unsigned int n, enum mode mode, int map_fd)
{
	for (unsigned int i = 0; i < n; i++) {
		__u32 key = (sink + i) & 4095;
		__u64 value = i;

		if (mode == UPROBE)
			probed();
		else if (mode == MAPS)
			sink += bpf_map_update_elem(map_fd, &key, &value, BPF_ANY);
		else
			sink += getppid();
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, probe, .func_name = "probed");
	static const char *const modes[] = { "syscalls", "uprobe", "maps" };
	bool wait = argc == 4 && !strcmp(argv[3], "wait");
	struct bpf_hot_bpf *skel;
	double seconds, end;
	enum mode mode = SYSCALLS;
	sigset_t usr1;
	int sig;

	for (int i = 0; argc >= 3 && i < 3; i++)
		if (!strcmp(argv[2], modes[i]))
			mode = (enum mode)i;
	if (argc < 2 || argc > 4 || (seconds = atof(argv[1])) <= 0 ||
	    (argc >= 3 && strcmp(argv[2], modes[mode])) || (argc == 4 && !wait)) {
		fprintf(stderr, "usage: bpf_hot SECONDS [syscalls|uprobe|maps [wait]]\n");
		return 2;
	}
	/* Blocked before "ready": a SIGUSR1 sent then waits for sigwait(). */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	skel = bpf_hot_bpf__open();
	if (!skel) {
		perror("bpf_hot: cannot open the BPF program");
		return 1;
	}
	/* Only its system calls cost: not the bpf() ones of the other modes. */
	skel->rodata->target_tgid = mode == SYSCALLS ? getpid() : 0;
	if (bpf_hot_bpf__load(skel) || bpf_hot_bpf__attach(skel) ||
	    (mode == UPROBE &&
	     !(skel->links.hot_uprobe = bpf_program__attach_uprobe_opts(
		       skel->progs.hot_uprobe, getpid(), "/proc/self/exe", 0, &probe)))) {
		perror("bpf_hot: cannot load the BPF program");
		bpf_hot_bpf__destroy(skel);
		return 1;
	}
	/* Ready: the caller may start profiling now. */
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (wait)
		sigwait(&usr1, &sig);
	end = now() + seconds;
	while (now() < end) {
		user_work(200000);
		make_calls(mode == MAPS ? 2000 : 20, mode, bpf_map__fd(skel->maps.counts));
	}
	printf("done\n");
	fflush(stdout);
	while (wait)
		pause();
	bpf_hot_bpf__destroy(skel);
	return 0;
}
