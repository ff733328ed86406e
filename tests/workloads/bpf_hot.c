// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpf_hot SECONDS [syscalls|uprobe|maps [wait]]
 * bpf_hot SECONDS xdp DEVICE ADDRESS NETNS [wait]
 *
 * Loads bpf_hot.bpf.c's program on the system call entry tracepoint, for
 * this process only, then for SECONDS makes system calls (getppid) between
 * turns of work of its own, so that most of its time is spent in the BPF
 * program (tests/e2e/bpf_code.sh). With uprobe, it calls probed() instead,
 * on which the program's uprobe twin is attached; with maps, it updates a
 * BPF map (bpf()) instead, during which the kernel runs no perf_event BPF
 * program. With xdp, it attaches the XDP program to DEVICE (of the network
 * namespace it was started in), then joins the network namespace NETNS (a
 * path: /run/netns/NAME) and sends UDP packets to ADDRESS (an IPv4
 * address of DEVICE's, whose peer is in NETNS) as fast as it can. With
 * wait, the work starts at SIGUSR1 and the process then waits to be
 * killed: two profilers started before see all of it. Needs root. Exits 2
 * on bad arguments, 1 when the program cannot be loaded or the device
 * reached.
 */
#define _GNU_SOURCE /* setns() */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
	MAPS,
	XDP
};

/* Where xdp sends its packets. */
struct flood {
	int sock;
	struct sockaddr_in to;
};

/*
 * A system call that does nothing but enter the kernel, and the BPF
 * program with it; a call of probed(); an update of the map @map_fd; or a
 * packet sent through @flood.
 */
static __attribute__((noinline)) void make_calls(unsigned int n, enum mode mode, int map_fd,
						 const struct flood *flood)
{
	for (unsigned int i = 0; i < n; i++) {
		__u32 key = (sink + i) & 4095;
		__u64 value = i;

		if (mode == UPROBE)
			probed();
		else if (mode == MAPS)
			sink += bpf_map_update_elem(map_fd, &key, &value, BPF_ANY);
		else if (mode == XDP)
			sink += sendto(flood->sock, &value, sizeof(value), 0,
				       (const struct sockaddr *)&flood->to, sizeof(flood->to));
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

/*
 * Attach @skel's XDP program to @device, then join @netns and open @flood
 * towards @address, UDP port 9 (discard). 0, or -1 said on stderr.
 */
static int xdp_flood(struct bpf_hot_bpf *skel, const char *device, const char *address,
		     const char *netns, struct flood *flood)
{
	unsigned int ifindex = if_nametoindex(device);
	int fd;

	if (!ifindex) {
		fprintf(stderr, "bpf_hot: no device %s: %s\n", device, strerror(errno));
		return -1;
	}
	skel->links.hot_xdp = bpf_program__attach_xdp(skel->progs.hot_xdp, ifindex);
	if (!skel->links.hot_xdp) {
		fprintf(stderr, "bpf_hot: cannot attach to %s: %s\n", device, strerror(errno));
		return -1;
	}
	fd = open(netns, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "bpf_hot: cannot join %s: %s\n", netns, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	flood->to = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(9) };
	flood->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (flood->sock < 0 || inet_pton(AF_INET, address, &flood->to.sin_addr) != 1) {
		fprintf(stderr, "bpf_hot: cannot send to %s: %s\n", address,
			flood->sock < 0 ? strerror(errno) : "not an IPv4 address");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, probe, .func_name = "probed");
	static const char *const modes[] = { "syscalls", "uprobe", "maps", "xdp" };
	struct flood flood = { .sock = -1 };
	struct bpf_hot_bpf *skel;
	int nr_args = 3; /* SECONDS MODE, and xdp's three */
	bool wait;
	double seconds, end;
	enum mode mode = SYSCALLS;
	sigset_t usr1;
	int sig;

	for (int i = 0; argc >= 3 && i < 4; i++)
		if (!strcmp(argv[2], modes[i]))
			mode = (enum mode)i;
	if (mode == XDP)
		nr_args += 3;
	wait = argc == nr_args + 1 && !strcmp(argv[nr_args], "wait");
	if (argc < 2 || argc > nr_args + 1 || (seconds = atof(argv[1])) <= 0 ||
	    (argc >= 3 && strcmp(argv[2], modes[mode])) || (mode == XDP && argc < nr_args) ||
	    (argc == nr_args + 1 && !wait)) {
		fprintf(stderr, "usage: bpf_hot SECONDS [syscalls|uprobe|maps [wait]]\n"
				"       bpf_hot SECONDS xdp DEVICE ADDRESS NETNS [wait]\n");
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
	if (mode == XDP && xdp_flood(skel, argv[3], argv[4], argv[5], &flood)) {
		bpf_hot_bpf__destroy(skel);
		return 1;
	}
	/* Ready: the caller may start profiling now. */
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (wait)
		sigwait(&usr1, &sig);
	end = now() + seconds;
	/*
	 * Turns of random lengths (the same on average): a fixed cycle would
	 * alias with a profiler's fixed sampling period, and two profilers
	 * of different phases would then see different shares.
	 */
	srandom(getpid());
	while (now() < end) {
		unsigned int calls = mode == MAPS ? 2000 : 20;

		user_work(100000 + random() % 200001);
		make_calls(calls / 2 + random() % (calls + 1), mode, bpf_map__fd(skel->maps.counts),
			   &flood);
	}
	printf("done\n");
	fflush(stdout);
	while (wait)
		pause();
	if (flood.sock >= 0)
		close(flood.sock);
	bpf_hot_bpf__destroy(skel);
	return 0;
}
