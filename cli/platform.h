/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * platform.h - whether this machine can run the BPF program, said before
 * trying: a kernel without BTF or older than Linux 5.17 (bpf_loop(), which
 * the unwinders walk stacks with) would fail late, deep in libbpf, with a
 * verifier log for a reason.
 */
#ifndef PROFILER_PLATFORM_H
#define PROFILER_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>

/* The oldest kernel the BPF program loads on. */
#define PLATFORM_MIN_MAJOR 5
#define PLATFORM_MIN_MINOR 17

/* Whether kernel release @release (uname -r: "6.1.0-13-amd64") is @major.@minor or later. */
bool platform__release_at_least(const char *release, int major, int minor);

/*
 * 0 when this kernel can run the BPF program; else -1 with what is missing
 * and what to do in @err (@size bytes, one line).
 */
int platform__check(char *err, size_t size);

#endif
