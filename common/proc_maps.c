// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/hashtab.h"
#include "common/log.h"
#include "common/procfs.h"
#include "common/strset.h"
#include "common/proc_maps.h"

struct file_table {
	struct strset *strings;
	struct hashtab files; /* of struct mapped_file, by (dev, ino) */
	/* The files with a descriptor open, most recently named by a snapshot first. */
	struct mapped_file *lru_first, *lru_last;
	size_t nr_open, max_open;
};

/* The most descriptors a table keeps open, and the least it may be cut to. */
#define FILE_TABLE_MAX_OPEN 4096
#define FILE_TABLE_MIN_OPEN 16

static void lru_unlink(struct file_table *files, struct mapped_file *f)
{
	*(f->lru_prev ? &f->lru_prev->lru_next : &files->lru_first) = f->lru_next;
	*(f->lru_next ? &f->lru_next->lru_prev : &files->lru_last) = f->lru_prev;
	f->lru_prev = f->lru_next = NULL;
	files->nr_open--;
}

static void lru_push(struct file_table *files, struct mapped_file *f)
{
	f->lru_prev = NULL;
	f->lru_next = files->lru_first;
	*(files->lru_first ? &files->lru_first->lru_prev : &files->lru_last) = f;
	files->lru_first = f;
	files->nr_open++;
}

/* Close @f's descriptor, if it has one. */
static void file_close(struct file_table *files, struct mapped_file *f)
{
	if (f->fd < 0)
		return;
	lru_unlink(files, f);
	close(f->fd);
	f->fd = -1;
}

/* Close the descriptor of @f, least recently named, to make room for another. */
static void file_evict(struct file_table *files, struct mapped_file *f)
{
	file_close(files, f);
	f->evicted = true;
}

/* Close the least recently used descriptors until @files holds at most @max. */
static void lru_trim(struct file_table *files, size_t max)
{
	while (files->nr_open > max)
		file_evict(files, files->lru_last);
}

void file_table__limit_descriptors(struct file_table *files, size_t max)
{
	files->max_open = max ? max : 1;
	lru_trim(files, files->max_open);
}

size_t file_table__nr_descriptors(const struct file_table *files)
{
	return files->nr_open;
}

struct file_key {
	uint64_t dev, ino;
};

static bool file_eq(const void *entry, const void *key)
{
	const struct mapped_file *f = entry;
	const struct file_key *k = key;

	return f->dev == k->dev && f->ino == k->ino;
}

struct file_table *file_table__new(struct strset *strings)
{
	struct file_table *files = calloc(1, sizeof(*files));
	struct rlimit rl;

	if (!files)
		return NULL;
	files->strings = strings;
	files->max_open = FILE_TABLE_MAX_OPEN;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur / 4 < FILE_TABLE_MAX_OPEN)
		files->max_open = rl.rlim_cur / 4 > FILE_TABLE_MIN_OPEN ? rl.rlim_cur / 4 :
									  FILE_TABLE_MIN_OPEN;
	return files;
}

void file_table__free(struct file_table *files)
{
	struct mapped_file *f;
	size_t i;

	if (!files)
		return;
	hashtab__for_each_entry(&files->files, i, f) {
		file_close(files, f);
		free(f);
	}
	hashtab__release(&files->files);
	free(files);
}

struct file_keep {
	struct file_table *files;
	bool (*keep)(const struct mapped_file *file, void *arg);
	void *arg;
};

static bool file_kept(void *entry, void *arg)
{
	const struct file_keep *k = arg;

	return k->keep(entry, k->arg);
}

static void file_drop(void *entry, void *arg)
{
	const struct file_keep *k = arg;

	file_close(k->files, entry);
	free(entry);
}

void file_table__retain(struct file_table *files,
			bool (*keep)(const struct mapped_file *file, void *arg), void *arg)
{
	struct file_keep k = { files, keep, arg };

	/* Out of memory, every file stays: they are dropped next time. */
	hashtab__retain(&files->files, file_kept, file_drop, &k);
}

/*
 * Open the file as @pid maps it: map_files gives the very inode that is
 * mapped (even if deleted or replaced since) but needs CAP_SYS_ADMIN; the
 * process's root gives its mount namespace's view of the path, resolved
 * inside that root so that a link the process planted cannot lead to a
 * file of ours, and accepted only if it is still the mapped inode (after a
 * package upgrade the path names a new file, whose symbols would be
 * wrong). Only the inode is compared: on btrfs and overlayfs the device in
 * maps differs from st_dev.
 */
static int open_mapped_file(pid_t pid, const struct proc_maps_line *l, const char *path,
			    bool deleted)
{
	char buf[PATH_MAX + 64];
	struct stat st;
	int root, fd;

	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)l->start, (unsigned long long)l->end);
	fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (deleted)
		return -1;
	snprintf(buf, sizeof(buf), "/proc/%d/root", pid);
	root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		pr_debug("proc_maps: cannot open '%s': %s", buf, strerror(errno));
		return -1;
	}
	fd = procfs__open_in_root(root, path, O_RDONLY | O_CLOEXEC);
	close(root);
	if (fd < 0) {
		pr_debug("proc_maps: cannot open '%s' of pid %d: %s", path, pid, strerror(-fd));
		return -1;
	}
	if (fstat(fd, &st) || st.st_ino != l->ino) {
		pr_debug("proc_maps: '%s' of pid %d was replaced since it was mapped", path, pid);
		close(fd);
		return -1;
	}
	return fd;
}

static struct mapped_file *file_table__get(struct file_table *files, pid_t pid,
					   const struct proc_maps_line *l)
{
	static const char deleted[] = " (deleted)";
	struct file_key key = { l->dev, l->ino };
	uint64_t hash = hash_mix(l->dev, l->ino);
	size_t len = l->path_len;
	struct mapped_file *f;
	bool is_deleted = false;

	f = hashtab__find(&files->files, hash, file_eq, &key);
	if (f && f->evicted) {
		lru_trim(files, files->max_open - 1);
		f->fd = open_mapped_file(pid, l, f->path, f->deleted);
		f->evicted = false;
		if (f->fd >= 0)
			lru_push(files, f);
	} else if (f && f->fd >= 0 && f != files->lru_first) {
		lru_unlink(files, f);
		lru_push(files, f);
	}
	if (f)
		return f;
	if (len > sizeof(deleted) - 1 &&
	    !memcmp(l->path + len - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1)) {
		len -= sizeof(deleted) - 1;
		is_deleted = true;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = l->dev;
	f->ino = l->ino;
	f->deleted = is_deleted;
	f->path = strset__add_len(files->strings, l->path, len);
	if (!f->path || hashtab__insert(&files->files, hash, f)) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	lru_trim(files, files->max_open - 1);
	f->fd = open_mapped_file(pid, l, f->path, f->deleted);
	if (f->fd >= 0)
		lru_push(files, f);
	return f;
}

/*
 * The number in @base (16 or 10) at *@p, which moves past it: at least one
 * digit, no sign, no blank before it, and none that overflows.
 */
static bool parse_number(const char **p, unsigned int base, unsigned long long *out)
{
	unsigned long long v = 0;
	const char *s = *p;

	for (;; s++) {
		unsigned int d, c = (unsigned char)*s;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (v > (ULLONG_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* Move *@p past the character @c, which must be there. */
static bool parse_char(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* Move *@p past at least one space or tab (never a newline). */
static bool parse_blanks(const char **p)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/*
 * By hand, not with sscanf(): glibc's measures the whole rest of the text
 * at each call, so reading a process's maps cost the square of its
 * mappings (2,000 of them took 18 ms). No field is taken from the next
 * line: a blank line, or one cut short, is refused.
 */
int proc_maps__parse_line(const char *line, struct proc_maps_line *out)
{
	unsigned long long start, end, pgoff, major, minor, ino;
	const char *p = line;

	if (!parse_number(&p, 16, &start) || !parse_char(&p, '-') || !parse_number(&p, 16, &end) ||
	    !parse_blanks(&p))
		return -EINVAL;
	for (int i = 0; i < 4; i++, p++) {
		if (!*p || *p == ' ' || *p == '\t' || *p == '\n')
			return -EINVAL;
		out->perms[i] = *p;
	}
	out->perms[4] = 0;
	if (!parse_blanks(&p) || !parse_number(&p, 16, &pgoff) || !parse_blanks(&p) ||
	    !parse_number(&p, 16, &major) || !parse_char(&p, ':') ||
	    !parse_number(&p, 16, &minor) || !parse_blanks(&p) || !parse_number(&p, 10, &ino) ||
	    (*p && *p != ' ' && *p != '\t' && *p != '\n') || major > UINT_MAX || minor > UINT_MAX ||
	    start >= end)
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	out->start = start;
	out->end = end;
	out->pgoff = pgoff;
	out->dev = makedev(major, minor);
	out->ino = ino;
	out->path = p;
	out->path_len = strcspn(p, "\n");
	return 0;
}

struct proc_maps *proc_maps__parse(const char *text, pid_t pid, struct file_table *files)
{
	size_t nr = 0, alloc = 16;
	struct proc_maps *maps, *tmp;
	const char *line, *next;

	maps = malloc(sizeof(*maps) + alloc * sizeof(maps->maps[0]));
	if (!maps)
		return NULL;
	for (line = text; *line; line = next) {
		struct proc_maps_line l;
		struct proc_map *m;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		if (proc_maps__parse_line(line, &l)) {
			pr_debug("proc_maps: pid %d: cannot parse '%.*s'", pid, (int)(next - line),
				 line);
			continue;
		}
		if (l.perms[2] != 'x')
			continue;
		if (nr == alloc) {
			alloc *= 2;
			tmp = realloc(maps, sizeof(*maps) + alloc * sizeof(maps->maps[0]));
			if (!tmp)
				goto out_nomem;
			maps = tmp;
		}
		m = &maps->maps[nr];
		m->start = l.start;
		m->end = l.end;
		m->pgoff = l.pgoff;
		m->file = NULL;
		if (l.path[0] == '/' && l.ino) {
			m->file = file_table__get(files, pid, &l);
			if (!m->file)
				goto out_nomem;
			m->name = m->file->path;
		} else {
			m->name = l.path_len ? strset__add_len(files->strings, l.path, l.path_len) :
					       strset__add(files->strings, "[anon]");
			if (!m->name)
				goto out_nomem;
		}
		/* The kernel lists mappings in address order; trust but verify. */
		if (nr && m->start < maps->maps[nr - 1].end) {
			pr_debug("proc_maps: pid %d: mapping %llx out of order, skipped", pid,
				 (unsigned long long)m->start);
			continue;
		}
		nr++;
	}
	maps->pid = pid;
	maps->trimmed = false;
	maps->nr = nr;
	return maps;

out_nomem:
	free(maps);
	errno = ENOMEM;
	return NULL;
}

/* Flag the file that /proc/@pid/exe is, so exporters can list it first. */
static void mark_exe(struct proc_maps *maps, pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return;
	for (size_t i = 0; i < maps->nr; i++) {
		struct mapped_file *f = maps->maps[i].file;

		if (f && f->dev == st.st_dev && f->ino == st.st_ino)
			f->exe = true;
	}
}

struct proc_maps *proc_maps__read(pid_t pid, struct file_table *files)
{
	struct proc_maps *maps;
	char path[64], *text;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	text = procfs__read_file(path, NULL);
	if (!text)
		return NULL;
	/* An exited process (a zombie) has an empty maps file. */
	if (!*text) {
		free(text);
		errno = ESRCH;
		return NULL;
	}
	maps = proc_maps__parse(text, pid, files);
	err = errno;
	if (maps)
		mark_exe(maps, pid);
	free(text);
	errno = err;
	return maps;
}

void proc_maps__free(struct proc_maps *maps)
{
	free(maps);
}

struct proc_maps *proc_maps__subset(const struct proc_maps *maps, const uint64_t *keep)
{
	struct proc_maps *sub = malloc(sizeof(*sub) + maps->nr * sizeof(sub->maps[0]));
	size_t nr = 0;

	if (!sub)
		return NULL;
	for (size_t i = 0; i < maps->nr; i++)
		if (keep[i / 64] & (1ULL << (i % 64)))
			sub->maps[nr++] = maps->maps[i];
	sub->pid = maps->pid;
	sub->trimmed = true;
	sub->nr = nr;
	return sub;
}

const struct proc_map *proc_maps__find(const struct proc_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!maps)
		return NULL;
	hi = maps->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < maps->maps[mid].start)
			hi = mid;
		else if (addr >= maps->maps[mid].end)
			lo = mid + 1;
		else
			return &maps->maps[mid];
	}
	return NULL;
}
