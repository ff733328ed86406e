// SPDX-License-Identifier: GPL-2.0-only
/* /proc/PID/maps parsing and snapshots. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/proc_maps.h"
#include "common/strset.h"
#include "test.h"

TEST(proc_maps_parse_line)
{
	struct proc_maps_line l;

	CHECK(proc_maps__parse_line("55d0c3a00000-55d0c3a21000 r-xp 00002000 fd:01 1234567      "
				    "   /usr/bin/my prog (deleted)\n",
				    &l) == 0);
	CHECK_U64(l.start, 0x55d0c3a00000);
	CHECK_U64(l.end, 0x55d0c3a21000);
	CHECK_U64(l.pgoff, 0x2000);
	CHECK_U64(l.ino, 1234567);
	CHECK_STR(l.perms, "r-xp");
	CHECK_U64(l.path_len, strlen("/usr/bin/my prog (deleted)"));
	CHECK(!strncmp(l.path, "/usr/bin/my prog (deleted)", l.path_len));

	CHECK(proc_maps__parse_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]", &l) == 0);
	CHECK(!strncmp(l.path, "[vdso]", l.path_len));
	CHECK(proc_maps__parse_line("7f00-7f10 rw-p 00000000 00:00 0", &l) == 0);
	CHECK_U64(l.path_len, 0);

	CHECK(proc_maps__parse_line("", &l) == -EINVAL);
	CHECK(proc_maps__parse_line("garbage", &l) == -EINVAL);
	CHECK(proc_maps__parse_line("2000-1000 r-xp 0 00:00 0", &l) == -EINVAL);
	CHECK(proc_maps__parse_line("1000-2000 r-x 0 00:00 0", &l) == -EINVAL);
}

TEST(proc_maps_parse_keeps_executable_mappings)
{
	static const char text[] = "00400000-00401000 r--p 00000000 00:00 0 /nonexistent/app\n"
				   "00401000-00402000 r-xp 00001000 00:00 77 /nonexistent/app\n"
				   "00402000-00403000 rw-p 00002000 00:00 77 /nonexistent/app\n"
				   "not a maps line\n"
				   "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
				   "7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0 [vdso]";
	struct strset *strings = strset__new();
	struct file_table *files = file_table__new(strings);
	struct proc_maps *maps = proc_maps__parse(text, 999999, files);
	const struct proc_map *m;

	CHECK(maps != NULL);
	CHECK_U64(maps->nr, 3);
	m = proc_maps__find(maps, 0x401800);
	CHECK(m != NULL);
	CHECK_STR(m->name, "/nonexistent/app");
	CHECK(m->file != NULL);
	CHECK_U64(m->file->ino, 77);
	/* The file could not be opened: the snapshot still names it. */
	CHECK(m->file->fd < 0);
	CHECK(proc_maps__find(maps, 0x400800) == NULL); /* not executable */
	CHECK(proc_maps__find(maps, 0x402000) == NULL); /* end is exclusive */
	CHECK_STR(proc_maps__find(maps, 0x7f0000000010)->name, "[anon]");
	CHECK_STR(proc_maps__find(maps, 0x7ffff7fc2000)->name, "[vdso]");
	CHECK(proc_maps__find(maps, 0x7ffff7fc2000)->file == NULL);
	proc_maps__free(maps);
	file_table__free(files);
	strset__free(strings);
}

/* A maps line of @path's code at @start, with its inode. */
static int file_line(char *buf, size_t size, unsigned int start, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	return snprintf(buf, size, "%x-%x r-xp 0 00:00 %llu %s\n", start, start + 0x1000,
			(unsigned long long)st.st_ino, path);
}

/*
 * A table limited to 2 descriptors, given 4 files: the 2 named last keep
 * theirs, the others are closed; a file named again becomes the most
 * recent, and the next new one closes the other's.
 */
TEST(file_table_bounds_descriptors)
{
	static const char *const paths[] = { "/bin/sh", "/bin/ls", "/bin/cat", "/bin/true" };
	struct strset *strings = strset__new();
	struct file_table *files = file_table__new(strings);
	struct proc_maps *maps, *again;
	char text[2048], line[512];
	size_t len = 0;

	CHECK(files != NULL);
	file_table__limit_descriptors(files, 2);
	for (int i = 0; i < 4; i++) {
		int n = file_line(text + len, sizeof(text) - len, 0x10000 * (i + 1), paths[i]);

		CHECK(n > 0);
		len += n;
	}
	maps = proc_maps__parse(text, getpid(), files);
	CHECK(maps && maps->nr == 4);
	CHECK_U64(file_table__nr_descriptors(files), 2);
	CHECK(maps->maps[0].file->fd < 0 && maps->maps[1].file->fd < 0);
	CHECK(maps->maps[2].file->fd >= 0 && maps->maps[3].file->fd >= 0);
	/* /bin/cat named again, then a new file: /bin/true's descriptor goes. */
	len = file_line(text, sizeof(text), 0x30000, "/bin/cat");
	CHECK(file_line(line, sizeof(line), 0x90000, "/bin/echo") > 0);
	snprintf(text + len, sizeof(text) - len, "%s", line);
	again = proc_maps__parse(text, getpid(), files);
	CHECK(again && again->nr == 2);
	CHECK_U64(file_table__nr_descriptors(files), 2);
	CHECK(maps->maps[2].file->fd >= 0 && maps->maps[3].file->fd < 0);
	CHECK(again->maps[1].file->fd >= 0);
	proc_maps__free(again);
	proc_maps__free(maps);
	file_table__free(files);
	strset__free(strings);
}

int proc_maps_test_anchor(void);
int proc_maps_test_anchor(void)
{
	return 42;
}

TEST(proc_maps_read_self)
{
	struct strset *strings = strset__new();
	struct file_table *files = file_table__new(strings);
	struct proc_maps *maps = proc_maps__read(getpid(), files);
	const struct proc_map *m, *again;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(maps != NULL && n > 0);
	exe[n] = '\0';
	m = proc_maps__find(maps, (uintptr_t)proc_maps_test_anchor);
	CHECK(m != NULL);
	CHECK_STR(m->name, exe);
	CHECK(m->file && m->file->fd >= 0);
	CHECK(m->file->exe);
	/* A second snapshot shares the open file. */
	struct proc_maps *maps2 = proc_maps__read(getpid(), files);
	CHECK(maps2 != NULL);
	again = proc_maps__find(maps2, (uintptr_t)proc_maps_test_anchor);
	CHECK(again && again->file == m->file);
	proc_maps__free(maps2);
	proc_maps__free(maps);
	file_table__free(files);
	strset__free(strings);
}

TEST(proc_maps_read_missing_process)
{
	struct strset *strings = strset__new();
	struct file_table *files = file_table__new(strings);

	errno = 0;
	CHECK(proc_maps__read(0x3fffffff, files) == NULL);
	CHECK_U64(errno, ENOENT);
	file_table__free(files);
	strset__free(strings);
}
