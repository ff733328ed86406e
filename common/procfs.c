// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procfs.h"
#include "utf8.h"

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

/* Bytes of /proc/PID/cmdline read: more than any shortened line needs. */
#define CMDLINE_READ_BYTES 4096
#define ELLIPSIS "..."

/*
 * The display form of the character at @s (@len > 0 bytes left) into @seq
 * (room for 4 bytes): its length, and in *@in how many bytes of @s it took.
 */
static size_t cmdline_char(const unsigned char *s, size_t len, char *seq, size_t *in)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = utf8__char_len(s, len);

	*in = n ? n : 1;
	if (!s[0]) {
		seq[0] = ' ';
		return 1;
	}
	if (n > 1 || (n == 1 && s[0] >= 0x20 && s[0] != 0x7f)) {
		memcpy(seq, s, n);
		return n;
	}
	seq[0] = '\\';
	seq[1] = 'x';
	seq[2] = hex[s[0] >> 4];
	seq[3] = hex[s[0] & 15];
	return 4;
}

size_t procfs__format_cmdline(const char *raw, size_t len, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)raw;
	size_t max = size - 1 < PROCFS_CMDLINE_MAX ? size - 1 : PROCFS_CMDLINE_MAX;
	size_t n = 0, i = 0, cut = 0, dots = strlen(ELLIPSIS);

	/* A rewritten title is padded with NULs, sometimes after a space (PostgreSQL's). */
	while (len && (!s[len - 1] || s[len - 1] == ' '))
		len--;
	/* Whole characters while they fit; @cut is the last end that leaves room for "...". */
	while (i < len) {
		char seq[4];
		size_t in, w = cmdline_char(s + i, len - i, seq, &in);

		if (n + w > max)
			break;
		memcpy(out + n, seq, w);
		n += w;
		i += in;
		if (n + dots <= max)
			cut = n;
	}
	if (i < len) {
		n = cut;
		if (dots > max - n)
			dots = max - n;
		memcpy(out + n, ELLIPSIS, dots);
		n += dots;
	}
	out[n] = '\0';
	return n;
}

ssize_t procfs__read_cmdline(pid_t pid, char *out, size_t size)
{
	char path[64], *raw;
	size_t len = 0;
	ssize_t n = 0;
	int fd, err = 0;

	raw = malloc(CMDLINE_READ_BYTES);
	if (!raw)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	while (len < CMDLINE_READ_BYTES) {
		n = read(fd, raw + len, CMDLINE_READ_BYTES - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* An exited process's file reads as ESRCH. */
			err = -errno;
			break;
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	if (!err)
		n = procfs__format_cmdline(raw, len, out, size);
out_free:
	free(raw);
	return err ? err : n;
}

size_t procfs__parse_cgroup(const char *text, char *out, size_t size)
{
	const char *end;
	size_t len;

	*out = '\0';
	for (const char *line = text; *line; line = end + (*end == '\n')) {
		end = strchrnul(line, '\n');
		if (strncmp(line, "0::", 3))
			continue;
		len = (size_t)(end - line) - 3;
		if (len > size - 1)
			len = size - 1;
		memcpy(out, line + 3, len);
		out[len] = '\0';
		return len;
	}
	return 0;
}

ssize_t procfs__read_cgroup(pid_t pid, char *out, size_t size)
{
	char path[64], *text;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	text = procfs__read_file(path, NULL);
	if (!text)
		return -errno;
	len = procfs__parse_cgroup(text, out, size);
	free(text);
	return len;
}
