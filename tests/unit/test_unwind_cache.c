// SPDX-License-Identifier: GPL-2.0-only
/*
 * The unwind tables kept between runs (collector/unwind_cache.h): a table
 * written is read back row for row; a file that is corrupt, cut short, of
 * another version, build-id, producer or file, or not ours (a link, a
 * FIFO, another's, one others may write) is ignored with one warning and
 * never believed; a directory others may write is neither read nor
 * written. The tables are those of a real file, built as a recording
 * builds them.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/unwind_cache.h"
#include "collector/unwind_table.h"
#include "common/log.h"
#include "elf/elf_file.h"
#include "test.h"

#define PRODUCER "profiler test"
#define OTHER_ID "0123456789abcdef0123456789abcdef01234567"

/* Where unwind_cache.c's header keeps the format version, and its size. */
#define VERSION_OFFSET 8
#define HEADER_SIZE 272

/* The table of a real file, and the key of its cache file in a directory of the test's. */
struct env {
	char dir[64];
	char path[256];
	struct elf_file *file;
	struct unwind_table built;
	struct unwind_cache_key key;
};

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static bool env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->dir, sizeof(e->dir), "/tmp/profiler-unwind-cache-XXXXXX");
	if (!mkdtemp(e->dir))
		return false;
	e->file = elf_file__open(test__fixture("symbols-pie"));
	if (!e->file || !elf_file__build_id(e->file) || unwind_table__build(&e->built, e->file))
		return false;
	e->key = (struct unwind_cache_key){
		.dir = e->dir,
		.build_id = elf_file__build_id(e->file),
		.producer = PRODUCER,
		.file_sum = elf__fingerprint(elf_file__elf(e->file)),
	};
	snprintf(e->path, sizeof(e->path), "%s/%s.unwind", e->dir, e->key.build_id);
	/* A fingerprint of nothing would take any file with this build-id for this one. */
	if (!e->key.file_sum)
		return false;
	test__nr_warnings = 0;
	return true;
}

static void env_release(struct env *e, log_print_fn old)
{
	log_set_print(old);
	unwind_table__release(&e->built);
	elf_file__put(e->file);
	if (e->dir[0] && nftw(e->dir, remove_one, 8, FTW_DEPTH | FTW_PHYS))
		test__fail(__FILE__, __LINE__, "cannot remove '%s'", e->dir);
}

/* Run @body on a new env, the warnings captured, and undo both after, even when a check failed. */
static void in_env(void (*body)(struct env *e))
{
	log_print_fn old = test__capture_warnings();
	struct env e;

	if (env_init(&e))
		body(&e);
	else
		test__fail(__FILE__, __LINE__, "no table of the fixture: %s", strerror(errno));
	env_release(&e, old);
}

/*
 * Load @key's table: the result, with the number of warnings it gave in
 * *@warned. A table read must be the one built, row for row.
 */
static int load(struct env *e, const struct unwind_cache_key *key, int *warned)
{
	struct unwind_table t = { 0 };
	int before = test__nr_warnings, err;

	err = unwind_cache__load(key, &t);
	*warned = test__nr_warnings - before;
	if (err)
		return t.nr || t.rows ? -EDOM : err; /* a table refused must leave nothing behind */
	if (t.nr != e->built.nr || t.nr_fdes != e->built.nr_fdes ||
	    t.nr_unsupported != e->built.nr_unsupported ||
	    memcmp(t.rows, e->built.rows, t.nr * sizeof(*t.rows)))
		err = -EDOM; /* read back, but not as written */
	unwind_cache__release(&t);
	return err;
}

static bool put_file(const char *path, const void *buf, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	bool ok = fd >= 0 && write(fd, buf, size) == (ssize_t)size;

	if (fd >= 0 && close(fd))
		ok = false;
	return ok;
}

static bool age(const char *path, time_t ago)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= ago;
	ts[1] = ts[0];
	return !utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

static void round_trip(struct env *e)
{
	struct unwind_cache_key other = e->key;
	char sym[256], notes[256];
	struct stat st;
	int warned;

	/* Nothing there yet: a miss, said to no one. */
	CHECK(load(e, &e->key, &warned) == -ENOENT);
	CHECK_U64(warned, 0);
	CHECK(e->built.nr > 10);

	CHECK_U64(unwind_cache__store(&e->key, &e->built, 0), 0);
	CHECK(!lstat(e->path, &st) && S_ISREG(st.st_mode));
	CHECK_U64(st.st_mode & 0777, 0600);
	CHECK_U64(st.st_size, HEADER_SIZE + e->built.nr * sizeof(*e->built.rows));
	CHECK_U64(load(e, &e->key, &warned), 0);
	CHECK_U64(warned, 0);

	/* Asked as another file, producer or build-id: not believed. */
	other.file_sum++;
	CHECK(load(e, &other, &warned) == -EBADMSG);
	CHECK_U64(warned, 1);
	CHECK(strstr(test__last_warning, "of another file with this build-id"));
	other = e->key;
	other.producer = "profiler 0.0.1";
	/* As every file is after an upgrade: replaced without a word. */
	CHECK(load(e, &other, &warned) == -EBADMSG);
	CHECK_U64(warned, 0);
	other = e->key;
	other.build_id = OTHER_ID;
	snprintf(sym, sizeof(sym), "%s/%s.unwind", e->dir, OTHER_ID);
	CHECK(!link(e->path, sym));
	CHECK(load(e, &other, &warned) == -EBADMSG);
	CHECK_U64(warned, 1);
	CHECK(strstr(test__last_warning, "another build-id"));
	CHECK(!unlink(sym));
	other.build_id = "../etc";
	CHECK(load(e, &other, &warned) == -EINVAL);
	/* ... and the file is still read as its own. */
	CHECK_U64(load(e, &e->key, &warned), 0);

	/*
	 * One size limit for the directory, every kind of cache file in it:
	 * writing the table evicts an older answer file, never a file of
	 * another name.
	 */
	snprintf(sym, sizeof(sym), "%s/%s.sym", e->dir, OTHER_ID);
	snprintf(notes, sizeof(notes), "%s/notes", e->dir);
	CHECK(put_file(sym, "old answers", 11) && age(sym, 100));
	CHECK(put_file(notes, "notes", 5) && age(notes, 100));
	CHECK_U64(unwind_cache__store(&e->key, &e->built, st.st_size + 11), 0);
	CHECK(!access(sym, F_OK));
	CHECK(age(sym, 100));
	CHECK_U64(unwind_cache__store(&e->key, &e->built, st.st_size + 10), 0);
	CHECK(access(sym, F_OK) && errno == ENOENT);
	CHECK(!access(notes, F_OK));
	CHECK_U64(load(e, &e->key, &warned), 0);
}

TEST(unwind_cache_round_trip)
{
	in_env(round_trip);
}

/*
 * A table whose build met more unsupported rules than it kept rows of
 * (compaction makes one row of adjacent ones: node's table) is read back.
 */
static void merged_unsupported(struct env *e)
{
	int warned;

	CHECK(e->built.nr > 1);
	e->built.rows[0].rule = (struct unwind_rule){ .cfa = UNWIND_CFA_UNSUPPORTED };
	e->built.nr_unsupported = 0;
	for (size_t i = 0; i < e->built.nr; i++)
		e->built.nr_unsupported += e->built.rows[i].rule.cfa == UNWIND_CFA_UNSUPPORTED;
	e->built.nr_unsupported++;
	CHECK_U64(unwind_cache__store(&e->key, &e->built, 0), 0);
	CHECK_U64(load(e, &e->key, &warned), 0);
	CHECK_U64(warned, 0);
}

TEST(unwind_cache_merged_unsupported)
{
	in_env(merged_unsupported);
}

/*
 * Write @buf (@size bytes) as the cache file and load it: ignored with
 * @warnings warnings, the last matching @why if not NULL, and written anew
 * by a store, as a recording does.
 */
static bool ignored_saying(struct env *e, const void *buf, size_t size, int warnings,
			   const char *why)
{
	int warned, err;

	if (!put_file(e->path, buf, size))
		return false;
	err = load(e, &e->key, &warned);
	if (err != -EBADMSG || warned != warnings || (why && !strstr(test__last_warning, why))) {
		test__fail(__FILE__, __LINE__, "%zu bytes: %d (%s), %d warnings: '%s'", size, err,
			   strerror(-err), warned, test__last_warning);
		return false;
	}
	return !unwind_cache__store(&e->key, &e->built, 0) && !load(e, &e->key, &warned);
}

/* Ignored with one warning matching @why (if not NULL), and written anew. */
static bool ignored(struct env *e, const void *buf, size_t size, const char *why)
{
	return ignored_saying(e, buf, size, 1, why);
}

static void corrupt(struct env *e)
{
	struct unwind_table_row *rows;
	size_t size, header;
	uint32_t version;
	char *buf, *bad;

	CHECK_U64(unwind_cache__store(&e->key, &e->built, 0), 0);
	buf = test__read_file(e->path, &size);
	CHECK(buf);
	bad = malloc(size + 1);
	CHECK(bad);
	header = size - e->built.nr * sizeof(*rows);

	/* Cut short anywhere, or one byte longer. */
	for (size_t len = 0; len < size; len += len < header + 16 ? 1 : 4093) {
		memcpy(bad, buf, len);
		if (!ignored(e, bad, len, NULL))
			goto out;
	}
	memcpy(bad, buf, size);
	bad[size] = 0;
	CHECK(ignored(e, bad, size + 1, "truncated or corrupt"));
	/* Any byte flipped, in the header or the rows. */
	for (size_t at = 0; at < size; at += at < header ? 1 : 997) {
		memcpy(bad, buf, size);
		bad[at] ^= 0x40;
		if (!ignored(e, bad, size, NULL))
			goto out;
	}
	/* Another format version, the checksums as they were, then made to agree. */
	memcpy(bad, buf, size);
	memcpy(&version, bad + VERSION_OFFSET, 4);
	version++;
	memcpy(bad + VERSION_OFFSET, &version, 4);
	CHECK(ignored(e, bad, size, "corrupt header"));
	CHECK(!unwind_cache__seal(bad, size));
	/* Outdated, as every file is after an upgrade: replaced without a word. */
	CHECK(ignored_saying(e, bad, size, 0, NULL));
	/*
	 * Checksums that agree with what a hostile writer put there: two rows
	 * out of order, or a rule the BPF program does not know.
	 */
	memcpy(bad, buf, size);
	rows = (struct unwind_table_row *)(bad + header);
	rows[1] = e->built.rows[2];
	rows[2] = e->built.rows[1];
	CHECK(!unwind_cache__seal(bad, size));
	CHECK(ignored(e, bad, size, "truncated or corrupt"));
	memcpy(bad, buf, size);
	rows[3].rule.cfa = UNWIND_CFA_FP_SWITCH + 1;
	CHECK(!unwind_cache__seal(bad, size));
	CHECK(ignored(e, bad, size, "truncated or corrupt"));
	/* The file as written, all along: read. */
	memcpy(bad, buf, size);
	CHECK(!unwind_cache__seal(bad, size));
	CHECK(!memcmp(bad, buf, size));
out:
	free(bad);
	free(buf);
}

TEST(unwind_cache_corrupt)
{
	in_env(corrupt);
}

/* Not ours, however whole: ignored with one warning, left as it is. */
static void trust(struct env *e)
{
	char target[256];
	struct stat st;
	int warned;

	CHECK_U64(unwind_cache__store(&e->key, &e->built, 0), 0);
	CHECK_U64(load(e, &e->key, &warned), 0);

	/* Writable by others. */
	CHECK(!chmod(e->path, 0622));
	CHECK(load(e, &e->key, &warned) == -EPERM);
	CHECK_U64(warned, 1);
	CHECK(strstr(test__last_warning, "not a regular file of ours"));
	CHECK(!chmod(e->path, 0600));
	CHECK_U64(load(e, &e->key, &warned), 0);

	/* A link to a whole file of ours. */
	snprintf(target, sizeof(target), "%s/target", e->dir);
	CHECK(!rename(e->path, target));
	CHECK(!symlink(target, e->path));
	CHECK(load(e, &e->key, &warned) == -EPERM);
	CHECK_U64(warned, 1);
	CHECK(strstr(test__last_warning, "ignoring cache file"));
	CHECK(!lstat(e->path, &st) && S_ISLNK(st.st_mode));
	CHECK(!unlink(e->path));

	/* A FIFO, which must not hang us. */
	CHECK(!mkfifo(e->path, 0600));
	CHECK(load(e, &e->key, &warned) == -EPERM);
	CHECK_U64(warned, 1);
	CHECK(!unlink(e->path));

	/* Another's file. */
	CHECK(!rename(target, e->path));
	CHECK_U64(load(e, &e->key, &warned), 0);
	if (geteuid() == 0) {
		CHECK(!chown(e->path, 65534, 65534));
		CHECK(load(e, &e->key, &warned) == -EPERM);
		CHECK_U64(warned, 1);
		CHECK(strstr(test__last_warning, "not a regular file of ours"));
		CHECK(!chown(e->path, geteuid(), getegid()));
		CHECK_U64(load(e, &e->key, &warned), 0);
	}

	/* A directory others may write: neither read nor written. */
	CHECK(!chmod(e->dir, 0777));
	CHECK(load(e, &e->key, &warned) == -EACCES);
	CHECK_U64(warned, 1);
	CHECK(strstr(test__last_warning, "not using cache directory"));
	CHECK(!unlink(e->path));
	CHECK(unwind_cache__store(&e->key, &e->built, 0) == -EACCES);
	CHECK(access(e->path, F_OK) && errno == ENOENT);
	CHECK(!chmod(e->dir, 0700));
	CHECK_U64(unwind_cache__store(&e->key, &e->built, 0), 0);
	CHECK_U64(load(e, &e->key, &warned), 0);
	if (geteuid() != 0)
		SKIP("not root: another owner's file not tried");
}

TEST(unwind_cache_trust)
{
	in_env(trust);
}
