// SPDX-License-Identifier: GPL-2.0-only
/* Files of a process's root, and its command line. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* procfs__format_cmdline() of the @len bytes at @raw, with room for @size bytes. */
static const char *cmdline_of(const char *raw, size_t len, size_t size)
{
	static char out[PROCFS_CMDLINE_MAX + 1];

	procfs__format_cmdline(raw, len, out, size);
	return out;
}

#define CMDLINE(lit) cmdline_of(lit, sizeof(lit) - 1, PROCFS_CMDLINE_MAX + 1)

/*
 * Arguments are joined by spaces, as ps shows them; a title a program
 * wrote over its arguments and padded with NULs (PostgreSQL's backends,
 * some after a space) ends where its text does; an empty argument in the
 * middle stays visible.
 */
TEST(procfs_cmdline_joins_arguments)
{
	char out[PROCFS_CMDLINE_MAX + 1];

	CHECK_STR(CMDLINE("sleep\0"
			  "100\0"),
		  "sleep 100");
	CHECK_STR(CMDLINE("postgres: alice sales [local] SELECT\0\0\0\0\0\0\0\0"),
		  "postgres: alice sales [local] SELECT");
	CHECK_STR(CMDLINE("nginx: worker process"), "nginx: worker process");
	CHECK_STR(CMDLINE("postgres: checkpointer \0\0\0\0"), "postgres: checkpointer");
	CHECK_STR(CMDLINE("a\0\0b\0"), "a  b");
	/* Nothing to show: a kernel thread's, a zombie's. */
	CHECK_U64(procfs__format_cmdline("", 0, out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_U64(procfs__format_cmdline("\0\0", 2, out, sizeof(out)), 0);
}

/*
 * Whatever the bytes, the line is printable UTF-8 on one line: control
 * bytes and bytes that are not UTF-8 are written as \xNN, UTF-8 is kept.
 */
TEST(procfs_cmdline_escapes_bytes)
{
	CHECK_STR(CMDLINE("a\tb\nc\x7f\x01"), "a\\x09b\\x0ac\\x7f\\x01");
	CHECK_STR(CMDLINE("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
	CHECK_STR(CMDLINE("caf\xe9\0x\xc3"), "caf\\xe9 x\\xc3");
	/* An overlong '/' and a UTF-16 surrogate are not UTF-8. */
	CHECK_STR(CMDLINE("\xc0\xaf\xed\xa0\x80"), "\\xc0\\xaf\\xed\\xa0\\x80");
}

/*
 * A long line is cut to PROCFS_CMDLINE_MAX bytes ending in "...", between
 * characters: never inside a UTF-8 sequence or an escape.
 */
TEST(procfs_cmdline_is_shortened)
{
	char raw[400], want[PROCFS_CMDLINE_MAX + 1], out[16];
	const char *got;

	memset(raw, 'a', sizeof(raw));
	CHECK_U64(strlen(cmdline_of(raw, PROCFS_CMDLINE_MAX, sizeof(want))), PROCFS_CMDLINE_MAX);
	got = cmdline_of(raw, PROCFS_CMDLINE_MAX + 1, sizeof(want));
	memset(want, 'a', PROCFS_CMDLINE_MAX - 3);
	strcpy(want + PROCFS_CMDLINE_MAX - 3, "...");
	CHECK_STR(got, want);

	/* 2-byte characters: 98 of them and "..." make 199 bytes. */
	for (size_t i = 0; i < 300; i += 2)
		memcpy(raw + i, "\xc3\xa9", 2);
	got = cmdline_of(raw, 300, sizeof(want));
	CHECK_U64(strlen(got), 199);
	CHECK(!memcmp(got, raw, 196) && !strcmp(got + 196, "..."));

	/* Escapes of 4 bytes: 49 of them and "...". */
	memset(raw, 1, 60);
	got = cmdline_of(raw, 60, sizeof(want));
	CHECK_U64(strlen(got), 199);
	CHECK(!strncmp(got + 192, "\\x01...", 8));

	/* The caller's room counts too. */
	CHECK_U64(procfs__format_cmdline("abcdefghijkl", 12, out, 10), 9);
	CHECK_STR(out, "abcdef...");
	CHECK_U64(procfs__format_cmdline("abcdefghi", 9, out, 10), 9);
	CHECK_STR(out, "abcdefghi");
}

/*
 * A process started with its own argv[0] (as `exec -a` does) shows it,
 * and its arguments; one that is gone has none.
 */
TEST(procfs_cmdline_of_a_process)
{
	/* A tab to escape in argv[0], which sleep does not check (it exits at a bad argument). */
	char *const argv[] = { "renamed\tsleep", "30", NULL };
	char out[PROCFS_CMDLINE_MAX + 1], c;
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	CHECK(pipe2(pipefd, O_CLOEXEC) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(pipefd[0]);
		execv("/bin/sleep", argv);
		_exit(127);
	}
	close(pipefd[1]);
	/*
	 * The write end closes at the exec, a little before the kernel places
	 * the new program's arguments, until when the command line reads
	 * empty: wait for them, 2 s at most.
	 */
	n = read(pipefd[0], &c, 1);
	close(pipefd[0]);
	if (n)
		n = -1;
	else
		for (int i = 0; i < 200 && !(n = procfs__read_cmdline(pid, out, sizeof(out))); i++)
			usleep(10000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK_U64(n, strlen("renamed\\x09sleep 30"));
	CHECK_STR(out, "renamed\\x09sleep 30");
	CHECK_U64(procfs__read_cmdline(pid, out, sizeof(out)), -ENOENT);
}

/*
 * The cgroup label is the v2 line's path ("0::/PATH"), on a v2-only system
 * and on a hybrid one among v1 lines; none on a v1-only one; cut to fit.
 */
TEST(procfs_cgroup_path)
{
	char out[64], small[8];

	CHECK_U64(procfs__parse_cgroup("0::/system.slice/postgresql@15-main.service\n", out,
				       sizeof(out)),
		  strlen("/system.slice/postgresql@15-main.service"));
	CHECK_STR(out, "/system.slice/postgresql@15-main.service");
	CHECK_U64(procfs__parse_cgroup("12:memory:/user.slice\n"
				       "1:name=systemd:/user.slice/session-2.scope\n"
				       "0::/user.slice/session-2.scope\n",
				       out, sizeof(out)),
		  strlen("/user.slice/session-2.scope"));
	CHECK_STR(out, "/user.slice/session-2.scope");
	CHECK_U64(procfs__parse_cgroup("0::/", out, sizeof(out)), 1);
	CHECK_STR(out, "/");
	CHECK_U64(procfs__parse_cgroup("4:cpu,cpuacct:/docker/abc\n", out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_U64(procfs__parse_cgroup("", out, sizeof(out)), 0);
	CHECK_U64(procfs__parse_cgroup("0::/a/long/path\n", small, sizeof(small)), 7);
	CHECK_STR(small, "/a/long");
}

/* Ours, as the kernel writes it, and an error for a process that is not there. */
TEST(procfs_cgroup_of_a_process)
{
	char out[512], *text = procfs__read_file("/proc/self/cgroup", NULL);
	ssize_t n = procfs__read_cgroup(getpid(), out, sizeof(out));

	CHECK(text);
	if (text && strstr(text, "0::")) {
		CHECK(n > 0);
		CHECK(out[0] == '/');
		CHECK(strstr(text, out));
	}
	free(text);
	CHECK(procfs__read_cgroup(0x3fffffff, out, sizeof(out)) < 0);
}
