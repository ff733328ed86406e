// SPDX-License-Identifier: GPL-2.0-only
/* Several outputs committed together: output_file__commit_all(). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/output.h"
#include "test.h"

#define NR 3

/* The temporary files output_file__open() leaves in @dir. */
static int count_temporary(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, ".profiler-", 10);
	if (d)
		closedir(d);
	return n;
}

/*
 * a, b and c, with a non-empty directory in b's place by the time they are
 * renamed: a is written, b fails, c is aborted, and no temporary file stays.
 */
static void check_commit_all(const char *dir)
{
	char path[NR][256], blocker[300];
	struct output_file out[NR];
	size_t failed = NR;

	for (int i = 0; i < NR; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%c.folded", dir, 'a' + i);
		CHECK(output_file__open(&out[i], path[i], 0) == 0);
		fputs("a;b 1\n", out[i].fp);
		fflush(out[i].fp);
		/* Nothing is named while it is written: killed now, only those closed would stay. */
		CHECK(count_temporary(dir) == i);
		CHECK(output_file__close(&out[i]) == 0);
	}
	CHECK(count_temporary(dir) == NR);
	snprintf(blocker, sizeof(blocker), "%s/x", path[1]);
	CHECK(mkdir(path[1], 0700) == 0 && mkdir(blocker, 0700) == 0);
	CHECK(output_file__commit_all(out, NR, &failed) < 0);
	CHECK_U64(failed, 1);
	CHECK(access(path[0], F_OK) == 0);
	CHECK(access(path[2], F_OK) != 0);
	CHECK(count_temporary(dir) == 0);
	rmdir(blocker);
	rmdir(path[1]);
	unlink(path[0]);
}

TEST(output_commit_all_stops_at_a_failure)
{
	char dir[] = "/tmp/profiler-test-XXXXXX";

	CHECK(mkdtemp(dir));
	check_commit_all(dir);
	rmdir(dir);
}

/* Nothing failing: every output in place. */
TEST(output_commit_all)
{
	char dir[] = "/tmp/profiler-test-XXXXXX", path[NR][256];
	struct output_file out[NR];
	size_t failed = NR;

	CHECK(mkdtemp(dir));
	for (int i = 0; i < NR; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%c.folded", dir, 'a' + i);
		CHECK(output_file__open(&out[i], path[i], 0) == 0);
		fputs("a;b 1\n", out[i].fp);
	}
	CHECK(output_file__commit_all(out, NR, &failed) == 0);
	CHECK_U64(failed, NR);
	for (int i = 0; i < NR; i++) {
		CHECK(access(path[i], F_OK) == 0);
		unlink(path[i]);
	}
	CHECK(count_temporary(dir) == 0);
	rmdir(dir);
}
