// SPDX-License-Identifier: GPL-2.0-only
/*
 * A file cut short by its owner while we read it through libelf's mapping:
 * read on as zeros, counted, never a SIGBUS; and a SIGBUS of a mapping no
 * file of ours holds still kills, as it would have.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "elf/fde_table.h"
#include "elf/map_guard.h"
#include "test.h"

/* Copy fixture @name to a file of our own, its path in @path. */
static bool copy_fixture(const char *name, char *path, size_t size)
{
	snprintf(path, size, "/tmp/profiler-map-guard-%d", getpid());
	return !test__copy_file(test__fixture(name), path, 0600);
}

TEST(map_guard_file_cut_short_reads_zeros)
{
	char path[64];
	struct elf_file *f;
	uint64_t before = map_guard__faults();
	const struct fde_table *fdes;

	CHECK(copy_fixture("symbols-pie", path, sizeof(path)));
	f = elf_file__open(path);
	CHECK(f);
	/* Its owner truncates it: every page of our mapping is past its end now. */
	CHECK(!truncate(path, 0));
	fdes = elf_file__fdes(f);
	CHECK(fdes && fde_table__nr(fdes) == 0);
	CHECK(map_guard__faults() > before);
	elf_file__put(f);
	unlink(path);
}

TEST(map_guard_other_sigbus_still_kills)
{
	char path[64];
	int status, fd;
	pid_t pid;

	/* The handler is installed: a file opened first makes sure. */
	CHECK(copy_fixture("symbols-pie", path, sizeof(path)));
	elf_file__put(elf_file__open(path));
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		volatile const char *p;

		fd = open(path, O_RDONLY);
		p = fd < 0 ? NULL : mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		if (!p || p == MAP_FAILED || truncate(path, 0))
			_exit(2);
		_exit(p[0] == 0x7f ? 3 : 4); /* never reached: the read is a SIGBUS */
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	unlink(path);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
}
