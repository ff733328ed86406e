// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cache_file.h"
#include "common/log.h"
#include "unwind_cache.h"
#include "unwind_table.h"

#define MAGIC "PRFUNWT\1"
#define SUFFIX ".unwind"
#define PRODUCER_MAX 64

/* Fixed-size, in host byte order: a cache never leaves the machine that wrote it. */
struct header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	char build_id[CACHE_FILE_BUILD_ID_MAX]; /* NUL-padded */
	char producer[PRODUCER_MAX];		/* NUL-padded */
	uint64_t file_sum;
	uint64_t row_size; /* sizeof(struct unwind_table_row) */
	uint64_t nr_rows, nr_fdes, nr_unsupported;
	uint64_t rows_sum;   /* of the rows, which follow the header */
	uint64_t header_sum; /* of the bytes above */
};

/* The rows are written and read as they are in memory: no padding may differ between runs. */
_Static_assert(sizeof(struct unwind_table_row) == 12, "struct unwind_table_row has padding");
_Static_assert(sizeof(struct header) % 8 == 0, "the rows start 8-aligned");

static char *cache_path(const struct unwind_cache_key *key)
{
	char *path;

	return asprintf(&path, "%s/%s" SUFFIX, key->dir, key->build_id) < 0 ? NULL : path;
}

/* The header of the file of @key with @t's counts, its own checksum to be set. */
static void header_init(struct header *h, const struct unwind_cache_key *key,
			const struct unwind_table *t)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, sizeof(h->magic));
	h->version = UNWIND_CACHE_VERSION;
	h->header_size = sizeof(*h);
	strncpy(h->build_id, key->build_id, sizeof(h->build_id) - 1);
	strncpy(h->producer, key->producer ? key->producer : "", sizeof(h->producer) - 1);
	h->file_sum = key->file_sum;
	h->row_size = sizeof(struct unwind_table_row);
	h->nr_rows = t->nr;
	h->nr_fdes = t->nr_fdes;
	h->nr_unsupported = t->nr_unsupported;
}

/*
 * Are @nr rows sorted by address, one per address, each with a rule the
 * BPF program knows, at most @nr_unsupported of them unsupported (the
 * rules the build met: compaction makes one row of adjacent ones, as in
 * node, where 836 become 103)? Another rule would be followed wherever it
 * says; unsorted rows would send its search to the wrong one.
 */
static bool rows_ok(const struct unwind_table_row *rows, size_t nr, uint64_t nr_unsupported)
{
	uint64_t unsupported = 0;

	for (size_t i = 0; i < nr; i++) {
		const struct unwind_rule *r = &rows[i].rule;

		/* NO_ROOM is the loader's, never a file's. */
		if ((i && rows[i].pc <= rows[i - 1].pc) || r->cfa > UNWIND_CFA_FP_SWITCH ||
		    r->cfa == UNWIND_CFA_NO_ROOM || r->bp > UNWIND_BP_LOST)
			return false;
		unsupported += r->cfa == UNWIND_CFA_UNSUPPORTED;
	}
	return unsupported <= nr_unsupported;
}

/*
 * Map the file open at @fd, of @size bytes, into @t when it is whole and
 * of @key: 0, or -EBADMSG with *@why set (-ESTALE: of another format or
 * profiler version, as every file is after an upgrade). Mapped, not read: the rows are
 * read once, where they are, to check them and to copy them into the BPF
 * program's array (a copy into memory of our own took a third of the time).
 */
static int map_table(int fd, size_t size, const struct unwind_cache_key *key,
		     struct unwind_table *t, const char **why)
{
	const struct unwind_table_row *rows;
	struct header h, want;
	void *map;

	*why = "truncated";
	if (size < sizeof(h))
		return -EBADMSG;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		*why = strerror(errno);
		return -EBADMSG;
	}
	memcpy(&h, map, sizeof(h));
	rows = (const struct unwind_table_row *)((const char *)map + sizeof(h));
	header_init(&want, key, &(struct unwind_table){ 0 });
	*why = "corrupt header";
	if (memcmp(h.magic, MAGIC, sizeof(h.magic)) || h.header_size != sizeof(h) ||
	    h.header_sum != cache_file__checksum(&h, offsetof(struct header, header_sum)))
		goto out_unmap;
	*why = "another format version";
	if (h.version != UNWIND_CACHE_VERSION || h.row_size != want.row_size)
		goto out_stale;
	*why = "another build-id";
	if (memcmp(h.build_id, want.build_id, sizeof(h.build_id)))
		goto out_unmap;
	*why = "written by another version of the profiler";
	if (memcmp(h.producer, want.producer, sizeof(h.producer)))
		goto out_stale;
	*why = "of another file with this build-id";
	if (h.file_sum != want.file_sum)
		goto out_unmap;
	/* Bounded by the file's size before anything is multiplied. */
	*why = "truncated or corrupt";
	if (!h.nr_rows || h.nr_rows > UINT32_MAX || h.nr_unsupported > h.nr_rows ||
	    h.nr_rows != (size - sizeof(h)) / sizeof(*rows) || (size - sizeof(h)) % sizeof(*rows) ||
	    h.rows_sum != cache_file__checksum(rows, h.nr_rows * sizeof(*rows)) ||
	    !rows_ok(rows, h.nr_rows, h.nr_unsupported))
		goto out_unmap;
	/* Never written through: unwind_cache__release() unmaps it. */
	t->rows = (struct unwind_table_row *)rows;
	t->nr = h.nr_rows;
	t->alloc = 0;
	t->nr_fdes = h.nr_fdes;
	t->nr_unsupported = h.nr_unsupported;
	return 0;

out_unmap:
	munmap(map, size);
	return -EBADMSG;
out_stale:
	munmap(map, size);
	return -ESTALE;
}

int unwind_cache__load(const struct unwind_cache_key *key, struct unwind_table *t)
{
	const char *why = NULL;
	bool foreign;
	size_t size;
	char *path;
	int fd, err;

	if (!cache_file__build_id_ok(key->build_id))
		return -EINVAL;
	if (!cache_file__dir_ok(key->dir, &why)) {
		pr_warn("unwind: not using cache directory '%s': %s", key->dir, why);
		return -EACCES;
	}
	path = cache_path(key);
	if (!path)
		return -ENOMEM;
	fd = cache_file__open(path, &size, &why, &foreign);
	if (fd == -ENOENT) {
		err = fd;
		goto out_free;
	}
	if (fd < 0) {
		err = foreign ? -EPERM : -EBADMSG;
		pr_warn("unwind: ignoring cache file '%s': %s", path, why);
		goto out_free;
	}
	err = map_table(fd, size, key, t, &why);
	close(fd);
	/* Outdated is what every file is after an upgrade: replaced, said with -vv only. */
	if (err == -ESTALE)
		pr_debug("unwind: replacing cache file '%s': %s", path, why);
	else if (err == -EBADMSG)
		pr_warn("unwind: ignoring cache file '%s': %s", path, why);
	if (err == -ESTALE)
		err = -EBADMSG;
	else if (!err)
		pr_debug("unwind: table of %zu rows read from '%s'", t->nr, path);
out_free:
	free(path);
	return err;
}

void unwind_cache__release(struct unwind_table *t)
{
	if (t->rows)
		munmap((char *)t->rows - sizeof(struct header),
		       sizeof(struct header) + t->nr * sizeof(*t->rows));
	memset(t, 0, sizeof(*t));
}

int unwind_cache__seal(void *file, size_t size)
{
	struct header h;

	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, file, sizeof(h));
	h.rows_sum = cache_file__checksum((char *)file + sizeof(h), size - sizeof(h));
	h.header_sum = cache_file__checksum(&h, offsetof(struct header, header_sum));
	memcpy(file, &h, sizeof(h));
	return 0;
}

struct store_ctx {
	const struct unwind_cache_key *key;
	const struct unwind_table *t;
};

/* Write the header and rows to @fd (cache_file__write()'s callback). */
static int write_table(int fd, void *arg)
{
	const struct store_ctx *ctx = arg;
	size_t rows_size = ctx->t->nr * sizeof(*ctx->t->rows);
	struct header h;
	int err;

	header_init(&h, ctx->key, ctx->t);
	h.rows_sum = cache_file__checksum(ctx->t->rows, rows_size);
	h.header_sum = cache_file__checksum(&h, offsetof(struct header, header_sum));
	err = cache_file__write_at(fd, &h, sizeof(h), 0);
	return err ? err : cache_file__write_at(fd, ctx->t->rows, rows_size, sizeof(h));
}

int unwind_cache__store(const struct unwind_cache_key *key, const struct unwind_table *t,
			uint64_t max_bytes)
{
	struct store_ctx ctx = { key, t };
	const char *why = NULL;
	char *path;
	int err;

	if (!cache_file__build_id_ok(key->build_id) || !t->nr || t->nr > UINT32_MAX)
		return -EINVAL;
	path = cache_path(key);
	if (!path)
		return -ENOMEM;
	err = cache_file__write(key->dir, path, write_table, &ctx, max_bytes, &why);
	if (err == -EPERM && why) {
		pr_warn("unwind: not writing cache directory '%s': %s", key->dir, why);
		err = -EACCES;
	}
	if (!err)
		pr_debug("unwind: table of %zu rows written to '%s'", t->nr, path);
	free(path);
	return err;
}
