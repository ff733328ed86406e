// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "collector/jvm.h"
#include "common/proc_maps.h"
#include "common/strset.h"
#include "test.h"

/* Whether a snapshot of the executable mappings in @text is a JVM's: 1 or 0, -1 if unparsed. */
static int text_is_jvm(const char *text)
{
	struct strset *strings = strset__new();
	struct file_table *files = strings ? file_table__new(strings) : NULL;
	struct proc_maps *maps = files ? proc_maps__parse(text, 999999, files) : NULL;
	int jvm = maps ? jvm__is_jvm(maps) : -1;

	proc_maps__free(maps);
	file_table__free(files);
	strset__free(strings);
	return jvm;
}

TEST(jvm_is_jvm)
{
	static const char launcher[] =
		"55d000000000-55d000001000 r-xp 00001000 00:00 11 /usr/lib/jvm/java-17/bin/java\n";
	static const char jvm[] =
		"55d000000000-55d000001000 r-xp 00001000 00:00 11 /usr/lib/jvm/java-17/bin/java\n"
		"7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
		"7f1000000000-7f1000100000 r-xp 00100000 00:00 12 "
		"/usr/lib/jvm/java-17/lib/server/libjvm.so\n";
	/* Only the library itself: not a file that merely starts or ends like it. */
	static const char lookalikes[] =
		"7f1000000000-7f1000100000 r-xp 00100000 00:00 12 /opt/libjvm.so.bak\n"
		"7f2000000000-7f2000100000 r-xp 00100000 00:00 13 /opt/notlibjvm.so\n"
		"7f3000000000-7f3000100000 r--p 00000000 00:00 14 /opt/libjvm.so\n";

	CHECK(text_is_jvm(launcher) == 0);
	CHECK(text_is_jvm(jvm) == 1);
	CHECK(text_is_jvm(lookalikes) == 0);
}

/*
 * The mapper's own look at a pid it is sent, on the text of its maps: the
 * same answer as the collector's snapshots give, a replaced library too.
 */
TEST(jvm_maps_text_is_jvm)
{
	static const char jvm[] =
		"55d000000000-55d000001000 r-xp 00001000 08:01 11 /usr/lib/jvm/java-17/bin/java\n"
		"7f1000000000-7f1000100000 r-xp 00100000 08:01 12 "
		"/usr/lib/jvm/java-17/lib/server/libjvm.so\n";
	static const char replaced[] = "7f1000000000-7f1000100000 r-xp 00100000 08:01 12 "
				       "/usr/lib/jvm/java-17/lib/server/libjvm.so (deleted)\n";
	/* Not executable, not the library itself, not a file (no inode), a name only. */
	static const char lookalikes[] =
		"7f3000000000-7f3000100000 r--p 00000000 08:01 14 /opt/libjvm.so\n"
		"7f1000000000-7f1000100000 r-xp 00100000 08:01 12 /opt/libjvm.so.bak\n"
		"7f2000000000-7f2000100000 r-xp 00100000 08:01 13 /opt/notlibjvm.so\n"
		"7f4000000000-7f4000100000 r-xp 00000000 00:00 0 /libjvm.so\n"
		"7f5000000000-7f5000100000 r-xp 00000000 00:00 0 libjvm.so\n"
		"not a line of maps /usr/lib/libjvm.so\n";

	CHECK(jvm__maps_text_is_jvm(jvm));
	CHECK(jvm__maps_text_is_jvm(replaced));
	CHECK(!jvm__maps_text_is_jvm(lookalikes));
	CHECK(!jvm__maps_text_is_jvm(""));
}

/* A map that exists before we first ask is the user's; once we asked, it is ours. */
TEST(jvm_may_ask)
{
	CHECK(jvm__may_ask(false, false));
	CHECK(!jvm__may_ask(true, false));
	CHECK(jvm__may_ask(true, true));
	CHECK(jvm__may_ask(false, true));
}

/*
 * A map we caused is removed only if it is still the file the JVM wrote at
 * our last request: the same inode, a regular file, owned by the JVM's user.
 */
TEST(jvm_may_remove)
{
	struct stat st = { .st_mode = S_IFREG | 0644, .st_dev = 8, .st_ino = 42, .st_uid = 1000 };
	struct stat other = st;

	CHECK(jvm__may_remove(&st, 8, 42, 1000));
	/* Nothing noted after our last request: nothing to remove. */
	CHECK(!jvm__may_remove(&st, 8, 0, 1000));
	CHECK(!jvm__may_remove(&st, 8, 43, 1000));
	CHECK(!jvm__may_remove(&st, 9, 42, 1000));
	/* Another user's file, or a symbolic link, at that name in the sticky /tmp. */
	CHECK(!jvm__may_remove(&st, 8, 42, 0));
	other.st_mode = S_IFLNK | 0777;
	CHECK(!jvm__may_remove(&other, 8, 42, 1000));
	other.st_mode = S_IFIFO | 0644;
	CHECK(!jvm__may_remove(&other, 8, 42, 1000));
}

/*
 * The trigger file goes only into a /tmp that is root's and sticky, or the
 * JVM's user's own and writable by no one else: not a root directory
 * bind-mounted there (/etc/cron.d), nor another user's.
 */
TEST(jvm_tmp_ok)
{
	struct stat st = { .st_mode = S_IFDIR | 01777, .st_uid = 0 };

	CHECK(jvm__tmp_ok(&st, 1000));
	CHECK(jvm__tmp_ok(&st, 0));
	/* Root's, not sticky: /etc/cron.d, or a world-writable directory. */
	st.st_mode = S_IFDIR | 0755;
	CHECK(!jvm__tmp_ok(&st, 1000));
	st.st_mode = S_IFDIR | 0777;
	CHECK(!jvm__tmp_ok(&st, 1000));
	CHECK(!jvm__tmp_ok(&st, 0));
	/* ... unless the JVM runs as root, in a directory no one else writes to. */
	st.st_mode = S_IFDIR | 0755;
	CHECK(jvm__tmp_ok(&st, 0));
	/* The user's own: private, or sticky; not writable by others otherwise. */
	st.st_uid = 1000;
	st.st_mode = S_IFDIR | 0700;
	CHECK(jvm__tmp_ok(&st, 1000));
	st.st_mode = S_IFDIR | 01777;
	CHECK(jvm__tmp_ok(&st, 1000));
	st.st_mode = S_IFDIR | 0770;
	CHECK(!jvm__tmp_ok(&st, 1000));
	st.st_mode = S_IFDIR | 0757;
	CHECK(!jvm__tmp_ok(&st, 1000));
	/* Another user's, even sticky; not a directory. */
	st.st_mode = S_IFDIR | 01777;
	CHECK(!jvm__tmp_ok(&st, 1001));
	st.st_uid = 0;
	st.st_mode = S_IFLNK | 01777;
	CHECK(!jvm__tmp_ok(&st, 1000));
}

/* A socket at PATH, listening; its descriptor, or -1. */
static int listen_at(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 1))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The attach socket is taken only as jcmd takes it: a socket (never through
 * a symbolic link) owned by the JVM's user, no one else's to read or write.
 */
TEST(jvm_open_socket)
{
	char dir[] = "/tmp/test_jvm.XXXXXX", path[64];
	int dfd, lfd, fd, file;

	CHECK(mkdtemp(dir) != NULL);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0);
	snprintf(path, sizeof(path), "%s/.java_pid1", dir);
	lfd = listen_at(path);
	CHECK(lfd >= 0);
	CHECK(!fchmodat(dfd, ".java_pid1", 0600, 0));
	CHECK(!symlinkat(".java_pid1", dfd, ".java_pid2"));
	file = openat(dfd, ".java_pid3", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(file >= 0);

	fd = jvm__open_socket(dfd, ".java_pid1", geteuid());
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(jvm__open_socket(dfd, ".java_pid2", geteuid()) == -ELOOP);
	CHECK(jvm__open_socket(dfd, ".java_pid3", geteuid()) == -ENOTSOCK);
	CHECK(jvm__open_socket(dfd, ".java_pid4", geteuid()) == -ENOENT);
	CHECK(jvm__open_socket(dfd, ".java_pid1", geteuid() + 1) == -EPERM);
	CHECK(!fchmodat(dfd, ".java_pid1", 0660, 0));
	CHECK(jvm__open_socket(dfd, ".java_pid1", geteuid()) == -EPERM);

	close(file);
	close(lfd);
	unlinkat(dfd, ".java_pid1", 0);
	unlinkat(dfd, ".java_pid2", 0);
	unlinkat(dfd, ".java_pid3", 0);
	close(dfd);
	rmdir(dir);
}

/*
 * Without a JVM seen, the mapper process replies to finishing at once, and
 * freeing reaps it; a pid that is no JVM (ours) is refused by the mapper.
 */
TEST(jvm_mapper_without_jvm)
{
	static const char text[] = "7f1000000000-7f1000100000 r-xp 00100000 00:00 12 "
				   "/usr/lib/jvm/java-17/lib/server/libjvm.so\n";
	struct strset *strings = strset__new();
	struct file_table *files = strings ? file_table__new(strings) : NULL;
	struct proc_maps *fake_jvm = files ? proc_maps__parse(text, getpid(), files) : NULL;
	struct jvm_mapper *jm = jvm_mapper__new();

	CHECK(jm != NULL);
	jvm_mapper__finish(jm, 1000000000ULL);
	jvm_mapper__free(jm);

	/* Our snapshot said libjvm.so; the mapper's own look at our maps says not. */
	jm = jvm_mapper__new();
	CHECK(jm != NULL && fake_jvm != NULL && jvm__is_jvm(fake_jvm));
	jvm_mapper__see(jm, fake_jvm);
	jvm_mapper__finish(jm, 1000000000ULL);
	jvm_mapper__free(jm);
	jvm_mapper__free(NULL);
	jvm_mapper__finish(NULL, 0);
	proc_maps__free(fake_jvm);
	file_table__free(files);
	strset__free(strings);
}
