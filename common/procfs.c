// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procfs.h"

char *procfs__read_file(const char *path, size_t *lenp)
{
	size_t len = 0, alloc = 16384;
	char *buf = NULL, *tmp;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (alloc - len < 4096 || !buf) {
			if (buf)
				alloc = alloc > SIZE_MAX / 2 ? SIZE_MAX : alloc * 2;
			tmp = realloc(buf, alloc);
			if (!tmp) {
				errno = ENOMEM;
				goto out_free;
			}
			buf = tmp;
		}
		n = read(fd, buf + len, alloc - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out_free;
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;

out_free:
	err = errno;
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

long procfs__read_long(const char *path, long def)
{
	FILE *f = fopen(path, "re");
	long v;

	if (!f)
		return def;
	if (fscanf(f, "%ld", &v) != 1)
		v = def;
	fclose(f);
	return v;
}

int procfs__open_in_root(int root, const char *path, int flags)
{
	struct open_how how = {
		.flags = flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = syscall(SYS_openat2, root, path, &how, sizeof(how));

	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		fd = openat(root, path, flags | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}
