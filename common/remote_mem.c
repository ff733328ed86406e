// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/remote_mem.h"

/*
 * Read @len bytes at @addr of @pid through /proc/PID/mem: for kernels
 * without process_vm_readv (ENOSYS). 0 or -errno, as remote_read().
 */
static int read_proc_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	/* Address 0 and an end past 2^64 are never mapped. */
	if (!addr || addr + len < addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == ENOSYS)
		return read_proc_mem(pid, addr, buf, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int remote_read_u64(pid_t pid, uint64_t addr, uint64_t *val)
{
	return remote_read(pid, addr, val, sizeof(*val));
}
