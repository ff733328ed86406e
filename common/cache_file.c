// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cache_file.h"
#include "log.h"

#define HEX "0123456789abcdef"
#define TMP_INFIX ".tmp."

static inline uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static inline uint64_t round64(uint64_t acc, uint64_t w)
{
	return rotl(acc + w * 0xc2b2ae3d27d4eb4fULL, 31) * 0x9e3779b185ebca87ULL;
}

/* Not the byte-at-a-time hash_bytes(): that would be a fifth of a warm run. */
uint64_t cache_file__checksum(const void *data, size_t size)
{
	const unsigned char *p = data;
	uint64_t lane[4] = { 1, 2, 3, 4 }, w, h;
	size_t i = 0;

	for (; i + 32 <= size; i += 32) {
		for (int k = 0; k < 4; k++) {
			memcpy(&w, p + i + 8 * k, 8);
			lane[k] = round64(lane[k], w);
		}
	}
	h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18) + size;
	for (; i + 8 <= size; i += 8) {
		memcpy(&w, p + i, 8);
		h = round64(h, w);
	}
	for (; i < size; i++)
		h = round64(h, p[i]);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 29);
}

bool cache_file__build_id_ok(const char *build_id)
{
	size_t len = build_id ? strlen(build_id) : 0;

	return len && len < CACHE_FILE_BUILD_ID_MAX && strspn(build_id, HEX) == len;
}

/* Is @st of type @type (S_IFREG, S_IFDIR), ours, and not writable by others? */
static bool ours(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() && !(st->st_mode & 022);
}

bool cache_file__dir_ok(const char *dir, const char **why)
{
	struct stat st;

	if (lstat(dir, &st))
		return errno == ENOENT;
	if (!ours(&st, S_IFDIR)) {
		*why = "not a directory of ours, or writable by others";
		return false;
	}
	return true;
}

int cache_file__open(const char *path, size_t *size, const char **why, bool *foreign)
{
	struct stat st;
	int fd, err;

	*foreign = false;
	/* Non-blocking: a FIFO put there must not hang us before it is refused. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err != -ENOENT)
			*why = strerror(-err);
		*foreign = err == -ELOOP;
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		*why = strerror(-err);
		close(fd);
		return err;
	}
	if (!ours(&st, S_IFREG)) {
		*why = "not a regular file of ours, or writable by others";
		*foreign = true;
		close(fd);
		return -EPERM;
	}
	if (futimens(fd, NULL))
		pr_debug("cache: cannot touch cache file '%s': %s", path, strerror(errno));
	*size = st.st_size;
	return fd;
}

int cache_file__write_at(int fd, const void *buf, size_t size, uint64_t offset)
{
	while (size) {
		ssize_t n = pwrite(fd, buf, size, offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf = (const char *)buf + n;
		size -= n;
		offset += n;
	}
	return 0;
}

int cache_file__read_at(int fd, void *buf, size_t size, uint64_t offset)
{
	while (size) {
		ssize_t n = pread(fd, buf, size, offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EIO;
		buf = (char *)buf + n;
		size -= n;
		offset += n;
	}
	return 0;
}

/* mkdir -p @dir, each new directory 0700. Returns 0 or a negative errno. */
static int make_dirs(const char *dir)
{
	char *path = strdup(dir);
	int ret = 0;

	if (!path)
		return -ENOMEM;
	for (char *p = path + 1; !ret; p++) {
		bool end = !*p;

		if (*p != '/' && !end)
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			ret = -errno;
		if (end)
			break;
		*p = '/';
	}
	free(path);
	return ret;
}

/*
 * Is @name a cache file's (BUILD-ID.KIND: hex, a dot, lowercase letters),
 * or, *@tmp set, one being written (BUILD-ID.KIND.tmp.PID)? Files of other
 * names in the directory are not ours to count or remove.
 */
static bool cache_name(const char *name, bool *tmp)
{
	size_t hex = strspn(name, HEX), kind;

	if (!hex || name[hex] != '.')
		return false;
	name += hex + 1;
	kind = strspn(name, "abcdefghijklmnopqrstuvwxyz");
	if (!kind)
		return false;
	name += kind;
	*tmp = !strncmp(name, TMP_INFIX, strlen(TMP_INFIX));
	if (*tmp)
		name += strlen(TMP_INFIX);
	return *tmp ? *name && strspn(name, "0123456789") == strlen(name) : !*name;
}

struct cache_entry {
	char *path;
	uint64_t size;
	struct timespec mtime;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Remove the least recently used cache files of @dir until at most @max_bytes remain; @keep stays. */
static void evict(const char *dir, const char *keep, uint64_t max_bytes)
{
	struct cache_entry *e = NULL;
	size_t nr = 0, alloc = 0;
	uint64_t total = 0;
	struct dirent *d;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return;
	while ((d = readdir(dp))) {
		struct stat st;
		char *path;
		bool tmp;

		if (!cache_name(d->d_name, &tmp))
			continue;
		if (asprintf(&path, "%s/%s", dir, d->d_name) < 0)
			break;
		/* What a writer that died left behind, an hour on: no writer takes that long. */
		if (tmp) {
			if (!lstat(path, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
			    st.st_mtime < time(NULL) - 3600)
				unlink(path);
			free(path);
			continue;
		}
		if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    array__reserve(&e, &alloc, nr + 1, sizeof(*e))) {
			free(path);
			continue;
		}
		e[nr++] = (struct cache_entry){ path, st.st_size, st.st_mtim };
		total += st.st_size;
	}
	closedir(dp);
	if (nr)
		qsort(e, nr, sizeof(*e), entry_cmp);
	for (size_t i = 0; i < nr && total > max_bytes; i++) {
		if (!strcmp(e[i].path, keep))
			continue;
		if (!unlink(e[i].path)) {
			pr_debug("cache: evicted cache file '%s'", e[i].path);
			total -= e[i].size;
		}
	}
	for (size_t i = 0; i < nr; i++)
		free(e[i].path);
	free(e);
}

int cache_file__write(const char *dir, const char *path, int (*write)(int fd, void *ctx), void *ctx,
		      uint64_t max_bytes, const char **why)
{
	char *tmp_path;
	int fd, err;

	err = make_dirs(dir);
	if (err)
		return err;
	/* Made now, or there already: ours alone, or nothing is written there. */
	if (!cache_file__dir_ok(dir, why))
		return -EPERM;
	if (asprintf(&tmp_path, "%s" TMP_INFIX "%d", path, (int)getpid()) < 0)
		return -ENOMEM;
	/* Not through common/output.h, made for profiles: ours alone, never through a link. */
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	err = write(fd, ctx);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp_path, path))
		err = -errno;
	if (err) {
		unlink(tmp_path);
		goto out_free;
	}
	if (max_bytes)
		evict(dir, path, max_bytes);
out_free:
	free(tmp_path);
	return err;
}
