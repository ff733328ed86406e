// SPDX-License-Identifier: GPL-2.0-only
/*
 * A cache file of unwind tables (collector/unwind_cache.h) through
 * unwind_cache__load(), its checksums made to agree first (so that what
 * follows them is tried too: the rows, and the counts that place them). A
 * table read must be one the BPF program can walk: every row of the file,
 * sorted, each with a rule it knows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "collector/unwind_cache.h"
#include "collector/unwind_table.h"
#include "fuzz.h"

/* The key the seeds were written for (fuzz/corpus/fuzz_unwind_cache/). */
#define FUZZ_UNWIND_BUILD_ID "0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"
#define FUZZ_UNWIND_PRODUCER "fuzz"
#define FUZZ_UNWIND_FILE_SUM 0x5eed

static char fuzz_unwind_dir[] = "/tmp/profiler-fuzz-unwind-XXXXXX";
static char fuzz_unwind_path[128];

static void fuzz_unwind_cleanup(void)
{
	unlink(fuzz_unwind_path);
	rmdir(fuzz_unwind_dir);
}

/* The file the input is written to, in a directory of our own made the first time. */
static const char *fuzz_unwind_file(void)
{
	if (!fuzz_unwind_path[0]) {
		FUZZ_CHECK(mkdtemp(fuzz_unwind_dir));
		snprintf(fuzz_unwind_path, sizeof(fuzz_unwind_path), "%s/%s.unwind",
			 fuzz_unwind_dir, FUZZ_UNWIND_BUILD_ID);
		atexit(fuzz_unwind_cleanup);
	}
	return fuzz_unwind_path;
}

static int fuzz_unwind_cache(const uint8_t *data, size_t size)
{
	const struct unwind_cache_key key = {
		.dir = fuzz_unwind_dir,
		.build_id = FUZZ_UNWIND_BUILD_ID,
		.producer = FUZZ_UNWIND_PRODUCER,
		.file_sum = FUZZ_UNWIND_FILE_SUM,
	};
	const char *path = fuzz_unwind_file();
	struct unwind_table t = { 0 };
	uint8_t *file;
	size_t header;
	int fd, err;

	fuzz_log_init();
	file = malloc(size ? size : 1);
	FUZZ_CHECK(file);
	memcpy(file, data, size);
	unwind_cache__seal(file, size);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, file, size) == (ssize_t)size);
	close(fd);
	free(file);
	err = unwind_cache__load(&key, &t);
	unlink(path);
	FUZZ_CHECK(!err || err == -EBADMSG);
	if (err) {
		FUZZ_CHECK(!t.rows && !t.nr);
		return 0;
	}
	/* The rows fill the file after its header, whatever its size. */
	header = size - t.nr * sizeof(*t.rows);
	FUZZ_CHECK(t.nr && header < size && header <= 1024);
	FUZZ_CHECK(t.nr_unsupported <= t.nr);
	for (size_t i = 0; i < t.nr; i++) {
		FUZZ_CHECK(!i || t.rows[i - 1].pc < t.rows[i].pc);
		FUZZ_CHECK(t.rows[i].rule.cfa <= UNWIND_CFA_UNSUPPORTED);
		FUZZ_CHECK(t.rows[i].rule.bp <= UNWIND_BP_LOST);
	}
	unwind_cache__release(&t);
	return 0;
}

FUZZ_TARGET(fuzz_unwind_cache)
