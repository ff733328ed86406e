// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/file_access.h"
#include "common/hex.h"
#include "common/log.h"
#include "common/procfs.h"
#include "perf_map.h"
#include "symbolize/addr_table.h"

#define MAX_FILE_SIZE (256UL << 20)
#define MAX_LINE_LEN (64UL << 10)
/*
 * What one file may cost: its first PERF_MAP_MAX_SYMS symbols and
 * PERF_MAP_MAX_NAMES bytes of their names are kept (perf_map.h).
 * Memory is then at most about 100 bytes a symbol plus the names.
 */
#define PERF_MAP_MAX_SYMS (1UL << 20)
#define PERF_MAP_MAX_NAMES (64UL << 20)
/* Read this much at a time: lines are parsed as they come, the file never held whole. */
#define READ_CHUNK (1UL << 20)

struct perf_map {
	char *names;		/* the names, each NUL-terminated, one after the other */
	struct addr_table syms; /* of struct perf_map_sym */
	size_t nr_skipped;
};

/* One parsed line; @seq is its rank in the file, later lines winning. */
struct line {
	uint64_t start, end;
	const char *name; /* into the buffer read, then into the map's names */
	size_t seq;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Parse an optional 0x and 1 to 16 hex digits at *@p, which must be followed
 * by blanks before @end; advance *@p past those blanks.
 */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0, d;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && (d = hex__digit(*s)) >= 0; s++, digits++)
		v = v << 4 | d;
	if (!digits || digits > 16 || s == end || !is_blank(*s))
		return false;
	while (s < end && is_blank(*s))
		s++;
	*p = s;
	*out = v;
	return true;
}

/*
 * Parse the line [@line, @eol) and cut its name out in place (*@eol is the
 * newline or the buffer's final NUL). Returns 1 for a symbol, 0 for a blank
 * line, -1 for a line to skip.
 */
static int parse_line(char *line, char *eol, struct line *out)
{
	const char *p = line;
	char *name_end = eol;
	uint64_t start, size;

	if ((size_t)(eol - line) > MAX_LINE_LEN)
		return -1;
	if (name_end > line && name_end[-1] == '\r')
		name_end--;
	if (name_end == line)
		return 0;
	if (!parse_hex(&p, name_end, &start) || !parse_hex(&p, name_end, &size))
		return -1;
	if (p == name_end || memchr(p, '\0', name_end - p))
		return -1;
	if (!size || size > UINT64_MAX - start)
		return -1;
	*name_end = '\0';
	out->start = start;
	out->end = start + size;
	out->name = p;
	return 1;
}

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A max-heap of indices into @lines, by seq: its top is the latest line. */
struct heap {
	const struct line *lines;
	size_t *idx;
	size_t nr;
};

static bool heap_above(const struct heap *h, size_t a, size_t b)
{
	return h->lines[h->idx[a]].seq > h->lines[h->idx[b]].seq;
}

static void heap_swap(struct heap *h, size_t a, size_t b)
{
	size_t t = h->idx[a];

	h->idx[a] = h->idx[b];
	h->idx[b] = t;
}

static void heap_push(struct heap *h, size_t i)
{
	size_t c = h->nr++;

	h->idx[c] = i;
	for (; c && heap_above(h, c, (c - 1) / 2); c = (c - 1) / 2)
		heap_swap(h, c, (c - 1) / 2);
}

static void heap_pop(struct heap *h)
{
	size_t c = 0;

	h->idx[0] = h->idx[--h->nr];
	for (;;) {
		size_t l = 2 * c + 1, r = l + 1, top = c;

		if (l < h->nr && heap_above(h, l, top))
			top = l;
		if (r < h->nr && heap_above(h, r, top))
			top = r;
		if (top == c)
			break;
		heap_swap(h, c, top);
		c = top;
	}
}

/*
 * Turn @nr lines in file order into disjoint symbols: sweep the address
 * space in order, keeping the lines that cover the current address in a heap
 * whose top, the latest of them, owns it. Ownership can only change at the
 * next line's start or at the top's end; lines that end below the top are
 * dropped when they surface. At most 2 * @nr symbols (one per start or end),
 * in O(@nr log @nr).
 */
static int resolve(struct perf_map *map, struct line *lines, size_t nr)
{
	struct heap heap = { .lines = lines };
	size_t i = 0, last = SIZE_MAX;
	struct perf_map_sym *sym = NULL;
	uint64_t x = 0;

	if (!nr)
		return 0;
	if (nr > SIZE_MAX / 2)
		return -ENOMEM;
	qsort(lines, nr, sizeof(*lines), line_cmp);
	heap.idx = malloc(nr * sizeof(*heap.idx));
	if (!heap.idx || addr_table__alloc(&map->syms, 2 * nr)) {
		free(heap.idx);
		return -ENOMEM;
	}
	while (i < nr || heap.nr) {
		uint64_t next;
		size_t top;

		if (!heap.nr)
			x = lines[i].start;
		while (i < nr && lines[i].start == x)
			heap_push(&heap, i++);
		while (heap.nr && lines[heap.idx[0]].end <= x)
			heap_pop(&heap);
		if (!heap.nr)
			continue;
		top = heap.idx[0];
		next = lines[top].end;
		if (i < nr && lines[i].start < next)
			next = lines[i].start;
		/* An earlier line starting under the top changes nothing: extend. */
		if (top == last) {
			sym->size += next - x;
		} else {
			sym = addr_table__push(&map->syms, x,
					       &(struct perf_map_sym){ x, next - x,
								       lines[top].name });
			last = top;
		}
		x = next;
	}
	free(heap.idx);
	/* Give back the room kept for splits that did not happen. */
	addr_table__trim(&map->syms);
	return 0;
}

/* Loading state: the lines kept so far, with their names one after the other. */
struct loader {
	const char *path;
	struct line *lines;
	size_t nr, alloc;
	size_t *name_offs; /* where lines[i]'s name is in @names, until they stop moving */
	size_t nr_offs_alloc;
	char *names;
	size_t names_len, names_alloc;
	size_t nr_skipped;
	bool full; /* the budget is spent: the rest of the file is not read */
};

/* Keep the line [@p, @eol) if it is a symbol; -ENOMEM, or 0. */
static int loader__add(struct loader *l, char *p, char *eol)
{
	struct line line;
	size_t len;
	int ret;

	ret = parse_line(p, eol, &line);
	if (ret < 0)
		l->nr_skipped++;
	if (ret <= 0)
		return 0;
	len = strlen(line.name) + 1;
	if (l->nr == PERF_MAP_MAX_SYMS || len > PERF_MAP_MAX_NAMES - l->names_len) {
		l->full = true;
		return 0;
	}
	if (array__reserve(&l->lines, &l->alloc, l->nr + 1, sizeof(*l->lines)) ||
	    array__reserve(&l->name_offs, &l->nr_offs_alloc, l->nr + 1, sizeof(*l->name_offs)) ||
	    array__reserve(&l->names, &l->names_alloc, l->names_len + len, 1))
		return -ENOMEM;
	memcpy(l->names + l->names_len, line.name, len);
	l->name_offs[l->nr] = l->names_len;
	l->names_len += len;
	line.seq = l->nr;
	l->lines[l->nr++] = line;
	return 0;
}

/*
 * Parse the lines of @fd as they are read, READ_CHUNK at a time, up to
 * MAX_FILE_SIZE bytes and the budget of symbols and names. A line longer
 * than the buffer is skipped up to its newline.
 */
static int loader__read(struct loader *l, int fd)
{
	size_t have = 0, total = 0;
	bool skipping = false;
	char *buf, *p, *eol;
	ssize_t n;
	int err = 0;

	buf = malloc(READ_CHUNK + 1);
	if (!buf)
		return -ENOMEM;
	while (!l->full) {
		n = read(fd, buf + have, READ_CHUNK - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			pr_debug("perf_map: cannot read '%s': %s", l->path, strerror(-err));
			break;
		}
		total += n;
		if (total > MAX_FILE_SIZE) {
			pr_debug("perf_map: ignoring '%s': larger than %lu MiB", l->path,
				 MAX_FILE_SIZE >> 20);
			err = -EFBIG;
			break;
		}
		have += n;
		buf[have] = '\0';
		for (p = buf; !l->full && (eol = memchr(p, '\n', buf + have - p)); p = eol + 1) {
			if (skipping) {
				skipping = false;
				continue;
			}
			err = loader__add(l, p, eol);
			if (err)
				goto out_free;
		}
		/* The end of the file: a last line without a newline is read, as perf does. */
		if (!n) {
			if (p < buf + have && !skipping && !l->full)
				err = loader__add(l, p, buf + have);
			break;
		}
		have -= p - buf;
		memmove(buf, p, have);
		/* A line longer than the buffer: skipped, and counted once. */
		if (have == READ_CHUNK) {
			if (!skipping)
				l->nr_skipped++;
			skipping = true;
			have = 0;
		}
	}
out_free:
	free(buf);
	return err;
}

/*
 * Read and index the file open as @fd, after the checks of its type and
 * owner: a process of @owner (-1: anyone's), of group @group, may only
 * show what its user could read, whichever file its path leads to.
 */
static struct perf_map *load_fd(int fd, const char *path, uid_t owner, gid_t group)
{
	struct loader l = { .path = path };
	struct perf_map *map;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		pr_debug("perf_map: cannot read '%s': not a regular file", path);
		errno = EINVAL;
		return NULL;
	}
	if (owner != (uid_t)-1 && st.st_uid && st.st_uid != owner) {
		pr_debug("perf_map: ignoring '%s': it belongs to uid %u, the process to uid %u",
			 path, (unsigned int)st.st_uid, (unsigned int)owner);
		errno = EPERM;
		return NULL;
	}
	if (owner != (uid_t)-1 && !file_readable_by(&st, owner, group)) {
		pr_debug("perf_map: ignoring '%s': uid %u, the process's, could not read it", path,
			 (unsigned int)owner);
		errno = EACCES;
		return NULL;
	}
	if ((uint64_t)st.st_size > MAX_FILE_SIZE) {
		pr_debug("perf_map: ignoring '%s': larger than %lu MiB", path, MAX_FILE_SIZE >> 20);
		errno = EFBIG;
		return NULL;
	}
	map = calloc(1, sizeof(*map));
	if (!map)
		return NULL;
	addr_table__init(&map->syms, sizeof(struct perf_map_sym));
	err = loader__read(&l, fd);
	if (!err) {
		/* The names have stopped moving: point the lines at them. */
		for (size_t i = 0; i < l.nr; i++)
			l.lines[i].name = l.names + l.name_offs[i];
		map->names = l.names;
		l.names = NULL;
		map->nr_skipped = l.nr_skipped;
		err = resolve(map, l.lines, l.nr);
	}
	free(l.lines);
	free(l.name_offs);
	free(l.names);
	if (err) {
		perf_map__free(map);
		errno = -err;
		return NULL;
	}
	if (l.full)
		pr_warn("perf_map: reading only the first %zu symbols of '%s': over the budget of %lu symbols and %lu MiB of names",
			l.nr, path, PERF_MAP_MAX_SYMS, PERF_MAP_MAX_NAMES >> 20);
	if (map->nr_skipped)
		pr_debug("perf_map: '%s': skipped %zu lines", path, map->nr_skipped);
	return map;
}

struct perf_map *perf_map__load(const char *path)
{
	return perf_map__load_owned(path, (uid_t)-1);
}

struct perf_map *perf_map__load_owned(const char *path, uid_t owner)
{
	struct perf_map *map;
	int fd, err;

	/*
	 * Not to block on a FIFO before we see it is not a regular file, nor
	 * to follow a link planted in a shared directory.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (owner != (uid_t)-1 ? O_NOFOLLOW : 0));
	if (fd < 0) {
		pr_debug("perf_map: cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	map = load_fd(fd, path, owner, (gid_t)-1);
	err = errno;
	close(fd);
	errno = err;
	return map;
}

/* The pid of @pid in its own pid namespace; -errno if it is gone. */
static int nspid(int pid)
{
	char path[32], *status, *line, *end;
	long v, last = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status = procfs__read_file(path, NULL);
	if (!status)
		return errno == ENOENT ? -ESRCH : -errno;
	line = strstr(status, "\nNSpid:");
	if (line) {
		end = strchr(line + 1, '\n');
		if (end)
			*end = '\0';
		/* Its pid in each namespace, from ours down to its own. */
		for (line += 7; (v = strtol(line, &end, 10)), end != line; line = end)
			last = v;
	}
	free(status);
	return last > 0 && last <= INT32_MAX ? (int)last : pid;
}

/*
 * The perf map file of process @pid opened (perf_map__load_pid()), the
 * process's uid and gid in *@owner and *@group.
 */
static int open_pid_map(int pid, char *path, size_t size, uid_t *owner, gid_t *group)
{
	struct stat proc_st;
	char name[32];
	int ns, root, fd;

	ns = nspid(pid);
	if (ns < 0)
		return ns;
	snprintf(path, size, "/proc/%d", pid);
	if (stat(path, &proc_st))
		return errno == ENOENT ? -ESRCH : -errno;
	snprintf(path, size, "/proc/%d/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		int err = errno == ENOENT ? ESRCH : errno;

		pr_debug("perf_map: cannot open '%s': %s", path, strerror(err));
		return -err;
	}
	snprintf(name, sizeof(name), "tmp/perf-%d.map", ns);
	snprintf(path, size, "/proc/%d/root/%s", pid, name);
	fd = procfs__open_in_root(root, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	close(root);
	if (fd < 0) {
		pr_debug("perf_map: cannot open '%s': %s", path, strerror(-fd));
		return fd;
	}
	*owner = proc_st.st_uid;
	*group = proc_st.st_gid;
	return fd;
}

struct perf_map *perf_map__load_pid(int pid)
{
	struct perf_map *map;
	char path[64];
	uid_t owner;
	gid_t group;
	int fd, err;

	fd = open_pid_map(pid, path, sizeof(path), &owner, &group);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	map = load_fd(fd, path, owner, group);
	err = errno;
	close(fd);
	errno = err;
	return map;
}

/*
 * A handful of JIT processes at most on a host, looked up once per scrape:
 * an array searched in order does, and keeps the sweep simple.
 */
struct perf_map_cache_entry {
	int pid;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct perf_map *map;
	bool used; /* since the last sweep */
};

struct perf_map_cache {
	struct perf_map_cache_entry *entries;
	size_t nr, alloc;
};

struct perf_map_cache *perf_map_cache__new(void)
{
	return calloc(1, sizeof(struct perf_map_cache));
}

void perf_map_cache__free(struct perf_map_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		perf_map__free(c->entries[i].map);
	free(c->entries);
	free(c);
}

static bool same_file(const struct perf_map_cache_entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

const struct perf_map *perf_map_cache__load_pid(struct perf_map_cache *c, int pid)
{
	struct perf_map_cache_entry *e = NULL;
	struct perf_map *map;
	struct stat st;
	char path[64];
	uid_t owner;
	gid_t group;
	int fd, err;

	for (size_t i = 0; i < c->nr && !e; i++)
		if (c->entries[i].pid == pid)
			e = &c->entries[i];
	fd = open_pid_map(pid, path, sizeof(path), &owner, &group);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (fstat(fd, &st)) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	if (e && same_file(e, &st)) {
		close(fd);
		e->used = true;
		return e->map;
	}
	map = load_fd(fd, path, owner, group);
	err = errno;
	close(fd);
	if (!map) {
		errno = err;
		return NULL;
	}
	if (!e) {
		if (array__reserve(&c->entries, &c->alloc, c->nr + 1, sizeof(*c->entries))) {
			perf_map__free(map);
			errno = ENOMEM;
			return NULL;
		}
		e = &c->entries[c->nr++];
	} else {
		perf_map__free(e->map);
	}
	*e = (struct perf_map_cache_entry){
		.pid = pid,
		.dev = st.st_dev,
		.ino = st.st_ino,
		.size = st.st_size,
		.mtime = st.st_mtim,
		.map = map,
		.used = true,
	};
	return map;
}

void perf_map_cache__sweep(struct perf_map_cache *c)
{
	size_t n = 0;

	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++) {
		if (!c->entries[i].used) {
			perf_map__free(c->entries[i].map);
			continue;
		}
		c->entries[i].used = false;
		c->entries[n++] = c->entries[i];
	}
	c->nr = n;
}

void perf_map__free(struct perf_map *map)
{
	if (!map)
		return;
	addr_table__release(&map->syms);
	free(map->names);
	free(map);
}

const struct perf_map_sym *perf_map__lookup(const struct perf_map *map, uint64_t addr)
{
	const struct perf_map_sym *sym = addr_table__find(&map->syms, addr);

	return sym && addr - sym->addr < sym->size ? sym : NULL;
}

const struct perf_map_sym *perf_map__syms(const struct perf_map *map, size_t *nr)
{
	*nr = map->syms.nr;
	return map->syms.syms;
}

size_t perf_map__nr_skipped(const struct perf_map *map)
{
	return map->nr_skipped;
}
