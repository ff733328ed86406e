// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "platform.h"

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

bool platform__release_at_least(const char *release, int major, int minor)
{
	char *end;
	long maj = strtol(release, &end, 10), min;

	if (end == release || *end != '.')
		return false;
	release = end + 1;
	min = strtol(release, &end, 10);
	if (end == release)
		return false;
	return maj > major || (maj == major && min >= minor);
}

int platform__check(char *err, size_t size)
{
	struct utsname u;

	if (uname(&u) == 0 &&
	    !platform__release_at_least(u.release, PLATFORM_MIN_MAJOR, PLATFORM_MIN_MINOR)) {
		snprintf(err, size,
			 "Linux %s is too old: the BPF program needs %d.%d or later (bpf_loop)",
			 u.release, PLATFORM_MIN_MAJOR, PLATFORM_MIN_MINOR);
		return -1;
	}
	if (access(KERNEL_BTF, R_OK)) {
		snprintf(err, size,
			 "this kernel has no BTF (%s): the BPF program needs a kernel built "
			 "with CONFIG_DEBUG_INFO_BTF, as distributions' are",
			 KERNEL_BTF);
		return -1;
	}
	return 0;
}
