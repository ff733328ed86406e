// SPDX-License-Identifier: GPL-2.0-only
/* Files of a process's root. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/procfs.h"
#include "test.h"

/* Write @text to @name under @dir. */
static void put(int dir, const char *name, const char *text)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	if (fd >= 0)
		close(fd);
}

/* The first bytes of @fd as a string ("" if unreadable); closes @fd. */
static const char *slurp(int fd)
{
	static char buf[64];
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

/*
 * A process's root holds links to "/secret", "../../secret" and the like:
 * they must resolve inside that root, as they do for the process, and
 * never reach the file of the same name outside it.
 */
TEST(procfs_open_in_root_stays_inside)
{
	char top[] = "/tmp/profiler-root-XXXXXX";
	int topfd, root;

	CHECK(mkdtemp(top) != NULL);
	topfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(topfd >= 0 && mkdirat(topfd, "root", 0755) == 0);
	root = openat(topfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(root >= 0);
	put(topfd, "secret", "ours\n");
	put(root, "secret", "theirs\n");
	CHECK(symlinkat("/secret", root, "abs") == 0);
	CHECK(symlinkat("../../../../secret", root, "dotdot") == 0);

	CHECK_STR(slurp(procfs__open_in_root(root, "/secret", O_RDONLY)), "theirs\n");
	CHECK_STR(slurp(procfs__open_in_root(root, "abs", O_RDONLY)), "theirs\n");
	CHECK_STR(slurp(procfs__open_in_root(root, "/dotdot", O_RDONLY)), "theirs\n");
	CHECK_STR(slurp(procfs__open_in_root(root, "../secret", O_RDONLY)), "theirs\n");
	CHECK(procfs__open_in_root(root, "/missing", O_RDONLY) < 0);

	unlinkat(root, "dotdot", 0);
	unlinkat(root, "abs", 0);
	unlinkat(root, "secret", 0);
	close(root);
	unlinkat(topfd, "root", AT_REMOVEDIR);
	unlinkat(topfd, "secret", 0);
	close(topfd);
	rmdir(top);
}
