/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * helper.h - a process of the collector's that keeps a few of the
 * capabilities a recording gives up once sampling is attached
 * (cli/privileges.c), to do one thing with them, asked over a socket: the
 * JVMs' perf maps (jvm.c), the BPF programs loaded since the recording
 * started (bpf_lister.c).
 *
 * helper__start() forks it while the process still has them. It keeps only
 * the capabilities it is given (the bounding set too), none of the
 * collector's descriptors but stderr (for the log) and its end of a
 * SOCK_SEQPACKET socket pair, none of its signal handlers; Ctrl-C and a
 * hangup, which go to the terminal's whole process group, are ignored (the
 * recording still asks at its end). It dies with the thread that forked it
 * (PR_SET_PDEATHSIG) and exits when the collector hangs up. Neither side
 * trusts what the other sends.
 *
 * Call helper__start() before the process starts threads, from the thread
 * that runs the recording to its end.
 */
#ifndef PROFILER_HELPER_H
#define PROFILER_HELPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct helper {
	pid_t pid;
	int sock; /* our end of the socket pair */
};

/*
 * Fork the helper: a process named @name that keeps only the @nr_caps
 * capabilities @caps and runs @run(its end of the socket, @arg), exiting
 * with what it returns. 0 or -errno.
 */
int helper__start(struct helper *h, const char *name, const int *caps, size_t nr_caps,
		  int (*run)(int sock, void *arg), void *arg);

/* Hang up, and wait @wait_ns at most for the helper to exit before killing it. */
void helper__stop(struct helper *h, uint64_t wait_ns);

#endif
