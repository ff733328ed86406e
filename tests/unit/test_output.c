// SPDX-License-Identifier: GPL-2.0-only
/* Output files appear whole or not at all. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/output.h"
#include "test.h"

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

TEST(output_commit_and_abort)
{
	char dir[] = "/tmp/profiler-test-XXXXXX", path[256], buf[64];
	struct output_file out;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	CHECK(output_file__check(path, 0) == 0);

	/* Until commit, only a temporary file exists; after, only the output. */
	CHECK(output_file__open(&out, path, 0) == 0);
	fputs("a;b 1\n", out.fp);
	CHECK(access(path, F_OK) != 0);
	CHECK(output_file__commit(&out) == 0);
	CHECK(count_files(dir) == 1);
	f = fopen(path, "r");
	CHECK(f && fgets(buf, sizeof(buf), f));
	fclose(f);
	CHECK_STR(buf, "a;b 1\n");

	/* An aborted write leaves the previous file untouched and no temporary. */
	CHECK(output_file__open(&out, path, 0) == 0);
	fputs("partial", out.fp);
	output_file__abort(&out);
	CHECK(count_files(dir) == 1);
	f = fopen(path, "r");
	CHECK(f && fgets(buf, sizeof(buf), f));
	fclose(f);
	CHECK_STR(buf, "a;b 1\n");
	unlink(path);
	rmdir(dir);
}

TEST(output_check_rejects_unwritable_paths)
{
	CHECK(output_file__check("-", 0) == 0);
	CHECK(output_file__check("/nonexistent-dir/x.pb.gz", 0) == -ENOENT);
	CHECK(output_file__check("/tmp", 0) == -EISDIR);
	CHECK(output_file__check("/tmp/", 0) == -EISDIR);
	CHECK(output_file__check("/etc/passwd/x.pb.gz", 0) == -ENOTDIR);
	CHECK(output_file__check("", 0) == -ENOENT);
}

TEST(output_full_disk_fails_commit)
{
	struct output_file out;
	char big[65536];

	/* /dev/full: every write fails with ENOSPC; commit must report it. */
	if (test__no_dev_full())
		SKIP("%s", test__no_dev_full());
	CHECK(output_file__open(&out, "/dev/full", 0) == 0);
	memset(big, 'x', sizeof(big));
	fwrite(big, 1, sizeof(big), out.fp);
	CHECK(output_file__commit(&out) == -ENOSPC);
}

/* A FIFO (like /dev/null or a terminal) is written as it is, not replaced by a file. */
TEST(output_writes_a_fifo_in_place)
{
	char dir[] = "/tmp/profiler-output-XXXXXX", path[64], got[16] = "";
	struct output_file out;
	struct stat st;
	int reader = -1;
	ssize_t n = -1;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	if (!mkfifo(path, 0600))
		reader = open(path, O_RDONLY | O_NONBLOCK);
	if (reader >= 0 && !output_file__open(&out, path, 0)) {
		fputs("stacks\n", out.fp);
		if (!output_file__commit(&out))
			n = read(reader, got, sizeof(got) - 1);
	}
	if (reader >= 0)
		close(reader);
	stat(path, &st);
	unlink(path);
	rmdir(dir);
	CHECK(reader >= 0);
	CHECK_U64(n, 7);
	CHECK_STR(got, "stacks\n");
	CHECK(S_ISFIFO(st.st_mode));
}
/* A FIFO nobody reads is refused at once (-ENXIO), never waited on; any FIFO under OUTPUT_REGULAR_ONLY. */
TEST(output_refuses_a_fifo_nobody_reads)
{
	char dir[] = "/tmp/profiler-output-XXXXXX", path[64];
	struct output_file out;
	int open_err = 0, strict_err = 0, check_err = 0, made;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	made = mkfifo(path, 0600);
	if (!made) {
		open_err = output_file__open(&out, path, 0);
		strict_err = output_file__open(&out, path, OUTPUT_REGULAR_ONLY);
		check_err = output_file__check(path, OUTPUT_REGULAR_ONLY);
	}
	unlink(path);
	rmdir(dir);
	CHECK(made == 0);
	CHECK(open_err == -ENXIO);
	CHECK(strict_err == -EINVAL);
	CHECK(check_err == -EINVAL);
	/* Positive precondition: a file where nothing is, and a device where it is not strict. */
	CHECK(output_file__check("/tmp/profiler-output-none", OUTPUT_REGULAR_ONLY) == 0);
	CHECK(output_file__check("/dev/null", 0) == 0);
	CHECK(output_file__check("/dev/null", OUTPUT_REGULAR_ONLY) == -EINVAL);
}
