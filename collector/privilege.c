// SPDX-License-Identifier: GPL-2.0-only
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/procfs.h"
#include "privilege.h"

/* Older headers lack the capabilities split out of CAP_SYS_ADMIN in 5.8. */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Is @cap in this process's effective set? */
static bool has_capability(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

/*
 * Is this process in a user namespace other than the machine's (a
 * container's)? Its capabilities are then its namespace's only, which
 * bpf() and system-wide perf events do not take.
 */
static bool in_user_namespace(void)
{
	char *map = procfs__read_file("/proc/self/uid_map", NULL);
	unsigned long inside, outside, count;
	bool nested;

	if (!map)
		return false;
	nested = sscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3 || inside || outside ||
		 count != 4294967295UL;
	free(map);
	return nested;
}

void privilege__warn(const char *what, int err)
{
	long paranoid = procfs__read_long("/proc/sys/kernel/perf_event_paranoid", -1);
	long bpf_off = procfs__read_long("/proc/sys/kernel/unprivileged_bpf_disabled", -1);
	/* Before Linux 5.8 both were part of CAP_SYS_ADMIN. */
	bool split = procfs__read_long("/proc/sys/kernel/cap_last_cap", CAP_BPF) >= CAP_BPF;
	bool bpf = has_capability(split ? CAP_BPF : CAP_SYS_ADMIN);
	bool perfmon = has_capability(split ? CAP_PERFMON : CAP_SYS_ADMIN);
	const char *lacks = !bpf && !perfmon ? "has neither" :
			    !bpf	     ? "lacks CAP_BPF" :
			    !perfmon	     ? "lacks CAP_PERFMON" :
					       NULL;

	if (!split && lacks)
		lacks = "lacks it";
	if (lacks)
		pr_warn("%s: %s: needs root, or %s, and this process %s "
			"(kernel.perf_event_paranoid=%ld, kernel.unprivileged_bpf_disabled=%ld "
			"here): run it as root or with sudo",
			what, strerror(err),
			split ? "CAP_BPF and CAP_PERFMON" : "CAP_SYS_ADMIN on this kernel", lacks,
			paranoid, bpf_off);
	else if (in_user_namespace())
		pr_warn("%s: %s: this process has %s in its own user namespace only (a container's), "
			"which the kernel does not take for BPF: run it outside, as root or with sudo",
			what, strerror(err), split ? "CAP_BPF and CAP_PERFMON" : "CAP_SYS_ADMIN");
	else
		pr_warn("%s: %s: refused although this process has %s "
			"(kernel.perf_event_paranoid=%ld, kernel.unprivileged_bpf_disabled=%ld "
			"here): the kernel's lockdown or a security module may forbid BPF",
			what, strerror(err), split ? "CAP_BPF and CAP_PERFMON" : "CAP_SYS_ADMIN",
			paranoid, bpf_off);
}
