// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <linux/capability.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "helper.h"

/* How often helper__stop() looks whether the helper exited. */
#define HELPER_EXIT_POLL_NS (10ULL * 1000 * 1000)

/* Keep only the @nr capabilities @caps, the bounding set too. */
static void restrict_caps(const char *name, const int *caps, size_t nr)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t mask = 0, had, permitted;

	for (size_t i = 0; i < nr; i++)
		mask |= 1ULL << caps[i];
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_capget, &hdr, data)) {
		pr_debug("%s: cannot drop capabilities: %s", name, strerror(errno));
		return;
	}
	had = data[0].permitted | (uint64_t)data[1].permitted << 32;
	permitted = had & mask;
	/* The bounding set too, as the collector's process does (EINVAL: a capability the kernel lacks). */
	if (had & (1ULL << CAP_SETPCAP))
		for (int cap = 0; cap < 64; cap++)
			if (!(mask & (1ULL << cap)))
				prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	data[0].effective = data[0].permitted = (uint32_t)permitted;
	data[1].effective = data[1].permitted = (uint32_t)(permitted >> 32);
	data[0].inheritable = data[1].inheritable = 0;
	if (syscall(SYS_capset, &hdr, data))
		pr_debug("%s: cannot drop capabilities: %s", name, strerror(errno));
}

/* Close every descriptor but the standard three and @keep. */
static void close_others(int keep)
{
	struct rlimit rl;

	if (keep > 3 && !close_range(3, keep - 1, 0) && !close_range(keep + 1, ~0U, 0))
		return;
	if (keep == 3 && !close_range(4, ~0U, 0))
		return;
	/* No close_range() (before Linux 5.9): one by one. */
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > INT_MAX)
		rl.rlim_cur = 65536;
	for (int fd = 3; fd < (int)rl.rlim_cur; fd++)
		if (fd != keep)
			close(fd);
}

/* The helper, just forked, with @sock its end of the socket pair; @parent is the collector's. */
static int helper_main(int sock, pid_t parent, const char *name, const int *caps, size_t nr_caps,
		       int (*run)(int sock, void *arg), void *arg)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, ign = { .sa_handler = SIG_IGN };
	char comm[16];
	sigset_t none;
	int null;

	/*
	 * Never outlive the collector's process (it may have died already).
	 * PR_SET_PDEATHSIG acts when the thread that forked exits: the one
	 * that runs the recording to its end.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		return 1;
	/* Not the collector's signal handlers. */
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (!sigaction(sig, NULL, &sa) && sa.sa_handler != SIG_DFL &&
		    sa.sa_handler != SIG_IGN)
			sigaction(sig, &dfl, NULL);
	}
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Nothing of the collector's: its perf events, BPF objects, files. stderr is for the log. */
	close_others(sock);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	snprintf(comm, sizeof(comm), "profiler-%s", name);
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	restrict_caps(name, caps, nr_caps);
	return run(sock, arg);
}

int helper__start(struct helper *h, const char *name, const int *caps, size_t nr_caps,
		  int (*run)(int sock, void *arg), void *arg)
{
	pid_t parent = getpid();
	int sv[2], err;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* Now, while the process still has the capabilities the helper keeps. */
	h->pid = fork();
	if (h->pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (!h->pid) {
		int status;

		close(sv[0]);
		status = helper_main(sv[1], parent, name, caps, nr_caps, run, arg);
		close(sv[1]);
		/* Not exit(): the collector's atexit handlers and stdio buffers are not ours. */
		_exit(status);
	}
	close(sv[1]);
	h->sock = sv[0];
	return 0;
}

void helper__stop(struct helper *h, uint64_t wait_ns)
{
	uint64_t deadline;
	pid_t pid;

	/* The helper sees its socket hang up, gives up what it was doing, and exits. */
	close(h->sock);
	deadline = clock_ns(CLOCK_MONOTONIC) + wait_ns;
	while ((pid = waitpid(h->pid, NULL, WNOHANG)) == 0 || (pid < 0 && errno == EINTR)) {
		if (clock_ns(CLOCK_MONOTONIC) >= deadline) {
			pr_debug("the helper process %d has not exited: killing it", h->pid);
			kill(h->pid, SIGKILL);
			while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
				;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = HELPER_EXIT_POLL_NS }, NULL);
	}
}
