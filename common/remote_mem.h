/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * remote_mem.h - reading another process's memory, as the runtimes'
 * readers do (a Python code object, a goroutine's labels): through
 * process_vm_readv, or /proc/PID/mem on a kernel without it.
 */
#ifndef PROFILER_REMOTE_MEM_H
#define PROFILER_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read @len bytes at @addr of @pid: 0, -ESRCH when the process is gone,
 * -EFAULT when any of the bytes is not mapped (a short read counts: what
 * is cut short is not the object the caller wants), -EPERM when we may not.
 */
int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* The 8-byte word at @addr of @pid into *@val: as remote_read(). */
int remote_read_u64(pid_t pid, uint64_t addr, uint64_t *val);

#endif
