// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "elf/elf_cache.h"
#include "elf/elf_file.h"

/* The vDSO is two to four pages; refuse to read anything much larger. */
#define VDSO_MAX_SIZE (1 << 20)

/* What one mapped file gave: looked up once per (file, dev, ino). */
struct file_entry {
	const struct mapped_file *file;
	uint64_t dev, ino;
	struct elf_file *elf; /* NULL: unreadable */
};

struct elf_cache {
	struct hashtab files;	    /* of struct file_entry, by mapped file */
	struct hashtab by_build_id; /* of struct elf_file, by build-id */
	struct elf_file **all;	    /* every elf_file read: one reference each */
	size_t nr_all, alloc_all;
	struct elf_file *own_vdso; /* ours, read the first time */
	bool own_vdso_read;
	struct elf_cache_stats stats;
};

struct elf_cache *elf_cache__new(void)
{
	struct elf_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	hashtab__init(&c->files);
	hashtab__init(&c->by_build_id);
	return c;
}

void elf_cache__free(struct elf_cache *c)
{
	struct file_entry *e;
	size_t i;

	if (!c)
		return;
	hashtab__for_each_entry(&c->files, i, e)
		free(e);
	hashtab__release(&c->files);
	hashtab__release(&c->by_build_id);
	for (i = 0; i < c->nr_all; i++)
		elf_file__put(c->all[i]);
	free(c->all);
	free(c);
}

void elf_cache__stats(const struct elf_cache *c, struct elf_cache_stats *stats)
{
	*stats = c->stats;
	stats->held = c->nr_all;
}

static bool build_id_eq(const void *entry, const void *key)
{
	return !strcmp(elf_file__build_id(entry), key);
}

/*
 * Keep @f (taking over its reference), unless a file with its build-id is
 * kept already: then @f is dropped and that one returned. NULL on ENOMEM.
 */
static struct elf_file *elf_cache__keep(struct elf_cache *c, struct elf_file *f)
{
	const char *build_id = elf_file__build_id(f);
	uint64_t hash = 0;
	struct elf_file *known;

	if (build_id) {
		hash = hash_bytes(build_id, strlen(build_id));
		known = hashtab__find(&c->by_build_id, hash, build_id_eq, build_id);
		if (known) {
			elf_file__put(f);
			c->stats.shared++;
			return known;
		}
	}
	if (array__reserve(&c->all, &c->alloc_all, c->nr_all + 1, sizeof(*c->all)) ||
	    (build_id && hashtab__insert(&c->by_build_id, hash, f))) {
		elf_file__put(f);
		return NULL;
	}
	c->all[c->nr_all++] = f;
	c->stats.files++;
	return f;
}

/* Read @file through its descriptor, else its path if that is still the same inode. */
static struct elf_file *open_mapped_file(const struct mapped_file *file)
{
	struct elf_file *f;
	struct stat st;
	int fd, err;

	if (file->fd >= 0)
		return elf_file__open_fd(file->fd, file->path);
	/* The snapshot could not open the file: its path may name another file by now. */
	if (file->deleted) {
		pr_warn("elf: cannot read '%s': file deleted", file->path);
		return NULL;
	}
	fd = open(file->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_warn("elf: cannot open '%s': %s", file->path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || st.st_ino != file->ino) {
		pr_warn("elf: cannot read '%s': file replaced since it was mapped", file->path);
		close(fd);
		return NULL;
	}
	f = elf_file__open_fd(fd, file->path);
	err = errno;
	close(fd);
	errno = err;
	return f;
}

static bool file_eq(const void *entry, const void *key)
{
	const struct file_entry *e = entry;
	const struct mapped_file *f = key;

	return e->file == f && e->dev == f->dev && e->ino == f->ino;
}

struct elf_file *elf_cache__file(struct elf_cache *c, const struct mapped_file *file)
{
	uint64_t hash = hash_mix(hash_mix(file->dev, file->ino), (uintptr_t)file);
	struct file_entry *e;
	struct elf_file *f;
	bool added;

	e = hashtab__find_or_add(&c->files, hash, file_eq, file, sizeof(*e), &added);
	if (!e || !added)
		return e ? e->elf : NULL;
	e->file = file;
	e->dev = file->dev;
	e->ino = file->ino;
	f = open_mapped_file(file);
	if (!f) {
		pr_debug("elf: cannot read '%s': %s", file->path, strerror(errno));
		c->stats.unreadable++;
		return NULL;
	}
	e->elf = elf_cache__keep(c, f);
	return e->elf;
}

/* @size bytes at @addr of @pid's memory, in a new buffer; NULL on failure. */
static void *read_process_memory(pid_t pid, uint64_t addr, size_t size)
{
	char path[64];
	void *image;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	image = malloc(size);
	if (image && pread(fd, image, size, addr) != (ssize_t)size) {
		free(image);
		image = NULL;
	}
	close(fd);
	return image;
}

/* Our own vDSO, @size bytes of it, read once. */
static struct elf_file *elf_cache__own_vdso(struct elf_cache *c, size_t size)
{
	uint64_t own = getauxval(AT_SYSINFO_EHDR);
	void *image;

	if (c->own_vdso_read)
		return c->own_vdso;
	c->own_vdso_read = true;
	image = own ? read_process_memory(getpid(), own, size) : NULL;
	if (image) {
		struct elf_file *f = elf_file__from_image(image, size, "[vdso]");

		c->own_vdso = f ? elf_cache__keep(c, f) : NULL;
	}
	return c->own_vdso;
}

struct elf_file *elf_cache__vdso(struct elf_cache *c, pid_t pid, uint64_t start, size_t size)
{
	void *image = NULL;
	struct elf_file *f;

	if (size > VDSO_MAX_SIZE)
		return NULL;
	if (pid > 0 && pid != getpid())
		image = read_process_memory(pid, start, size);
	if (!image) {
		f = elf_cache__own_vdso(c, size);
		if (!f)
			pr_debug("elf: cannot read the vdso of pid %d", pid);
		return f;
	}
	f = elf_file__from_image(image, size, "[vdso]");
	return f ? elf_cache__keep(c, f) : NULL;
}

struct retain {
	struct elf_cache *c;
	elf_cache_keep_fn keep;
	void *arg;
	struct hashtab read; /* the images the kept files read */
};

static bool file_kept(void *entry, void *arg)
{
	const struct retain *r = arg;

	return r->keep(((const struct file_entry *)entry)->file, r->arg);
}

static void file_drop(void *entry, void *arg)
{
	(void)arg;
	free(entry);
}

/* Is @f one to keep: read by a kept file, or our own vDSO? */
static bool image_kept(const struct retain *r, const struct elf_file *f)
{
	return f == r->c->own_vdso || ptr_set__has(&r->read, f);
}

static bool image_kept_entry(void *entry, void *arg)
{
	return image_kept(arg, entry);
}

void elf_cache__retain(struct elf_cache *c, elf_cache_keep_fn keep, void *arg)
{
	struct retain r = { c, keep, arg, HASHTAB_INIT };
	struct file_entry *e;
	size_t i, kept = 0;

	/* Out of memory, what is left is forgotten next time. */
	if (hashtab__retain(&c->files, file_kept, file_drop, &r))
		return;
	hashtab__for_each_entry(&c->files, i, e)
		if (e->elf && ptr_set__add(&r.read, e->elf))
			goto out;
	if (hashtab__retain(&c->by_build_id, image_kept_entry, NULL, &r))
		goto out;
	for (i = 0; i < c->nr_all; i++) {
		if (image_kept(&r, c->all[i]))
			c->all[kept++] = c->all[i];
		else
			elf_file__put(c->all[i]);
	}
	c->nr_all = kept;
out:
	hashtab__release(&r.read);
}

bool elf_cache__holds(const struct elf_cache *c, const struct elf_file *f)
{
	const char *build_id = elf_file__build_id(f);

	if (build_id && hashtab__find(&c->by_build_id, hash_bytes(build_id, strlen(build_id)),
				      build_id_eq, build_id))
		return true;
	for (size_t i = 0; i < c->nr_all; i++)
		if (c->all[i] == f)
			return true;
	return false;
}
