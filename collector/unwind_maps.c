// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/profile.h"
#include "common/array.h"
#include "common/cache_file.h"
#include "common/clock.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "elf/elf_file.h"
#include "unwind.h"
#include "unwind_cache.h"
#include "unwind_maps.h"
#include "unwind_table.h"
#include "version.h"

/* Row 0 ends any stack: the one-row table of files whose own did not fit. */
#define ROW_NO_ROOM 0
/* Row 1 too: the table of files whose CFI is corrupt. */
#define ROW_NONE 1

enum slice_state {
	SLICE_NEW,	/* not built yet */
	SLICE_BUILDING, /* with the worker: its processes' entries wait for it */
	SLICE_LOADED,	/* rows [first, first + nr) of the array */
	SLICE_EVICTED,	/* loaded once, its rows since given to others */
	SLICE_FP,	/* no CFI (or not x86-64): frame pointers */
	SLICE_CORRUPT,	/* corrupt CFI: stacks end in it */
	SLICE_NO_ROOM,	/* its table did not fit: stacks end in it */
};

/* One module's table in the row array. */
struct slice {
	struct elf_file *file;
	enum slice_state state;
	uint32_t first, nr;	      /* its slots of the row array: rows, then page index */
	uint32_t nr_rows;	      /* of which rows */
	uint32_t page_base, nr_pages; /* struct unwind_mapping's */
	uint32_t users;		      /* process entries that point at it */
	uint64_t load_seq;	      /* when it was loaded: the oldest unused is evicted first */
};

/* A mapping of a process and its file's slice. */
struct proc_slice {
	uint32_t mapping; /* index in the process's struct unwind_proc */
	struct slice *slice;
};

/* What one process's entry points at. */
struct proc_entry {
	pid_t pid;
	struct proc_slice *slices; /* each counted in its slice's users */
	size_t nr, alloc;
	/*
	 * While one of its slices is being built: the entry to write once
	 * none is (its mappings' rows filled in then), and no entry in the
	 * BPF map, so that its stacks are copied and unwound in user space.
	 */
	struct unwind_proc *pending;
};

/*
 * A table for the worker to read from the cache or build. The drain
 * thread fills in what the worker reads (libelf and libdw are not
 * thread-safe: unwind_table.h), and the slice stays alive, holding its
 * file open, until the drain thread takes the job back.
 */
struct unwind_job {
	struct unwind_job *next;
	struct slice *slice; /* the drain thread's: the worker does not touch it */
	struct unwind_source src;
	struct unwind_cache_key key; /* .dir NULL: no cache */
	/* The worker's answer: */
	struct fde_table *fdes;	      /* built from src.fde_src, for the file to keep */
	struct unwind_row *rows;      /* the table in the BPF array's terms, then its page index */
	size_t nr, nr_rows;	      /* slots of @rows, and rows of the table */
	uint32_t page_base, nr_pages; /* struct unwind_mapping's */
	size_t nr_fdes, nr_unsupported;
	int err;
	bool cached;
	uint64_t build_ns, cache_ns, store_ns;
};

struct rule_entry {
	struct unwind_rule rule;
	uint32_t index;
};

struct free_range {
	uint32_t start, len;
};

struct unwind_maps {
	struct unwinder *u;
	int rows_fd; /* the BPF array of rows, mapped a part at a time (rows_map()) */
	size_t max_rows;
	int rules_fd, procs_fd;
	char *cache_dir;       /* NULL: no cache, or one we stopped using */
	struct hashtab slices; /* struct slice by module */
	struct hashtab procs;  /* struct proc_entry by pid */
	struct hashtab rules;  /* struct rule_entry by rule */
	uint32_t nr_rules;
	struct free_range *free; /* sorted, not touching */
	size_t nr_free, alloc_free;
	uint64_t seq;
	struct unwind_maps_stats stats;
	size_t nr_pending; /* process entries waiting for a slice */

	/*
	 * The worker thread, started with the first job. It owns the rules
	 * (the drain thread adds the fixed ones before it starts) and
	 * cache_refused; the lock guards the two queues and what follows.
	 */
	pthread_t worker;
	bool worker_started, stop;
	pthread_mutex_t lock;
	pthread_cond_t work, done_cond;
	struct unwind_job *todo, **todo_tail, *done, **done_tail;
	size_t nr_jobs;	    /* queued or being built */
	bool has_done;	    /* done is not empty: read without the lock first */
	bool cache_refused; /* the cache directory is not ours: said once, not used again */
};

static uint64_t rule_hash(const struct unwind_rule *r)
{
	uint64_t w;

	memcpy(&w, r, sizeof(w));
	return hash_mix(0, w);
}

static bool rule_eq(const void *entry, const void *key)
{
	return !memcmp(&((const struct rule_entry *)entry)->rule, key, sizeof(struct unwind_rule));
}

/*
 * The index of @rule in the rules map, added if new; the unsupported rule
 * when it is full. The worker thread's once it has started.
 */
static uint32_t unwind_maps__rule(struct unwind_maps *um, const struct unwind_rule *rule)
{
	uint64_t hash = rule_hash(rule);
	struct rule_entry *e = hashtab__find(&um->rules, hash, rule_eq, rule);

	if (e)
		return e->index;
	if (um->nr_rules == PROFILE_MAX_UNWIND_RULES || !(e = calloc(1, sizeof(*e))))
		return UNWIND_RULE_UNSUPPORTED;
	e->rule = *rule;
	e->index = um->nr_rules;
	if (bpf_map_update_elem(um->rules_fd, &e->index, rule, BPF_ANY) ||
	    hashtab__insert(&um->rules, hash, e)) {
		free(e);
		return UNWIND_RULE_UNSUPPORTED;
	}
	um->nr_rules++;
	return e->index;
}

/* A part of the BPF array of rows, mapped to be written. */
struct rows_window {
	void *base;
	size_t len;
	struct unwind_row *rows; /* the first row asked for */
};

/*
 * Map rows [@first, @first + @nr) of the array, just the pages they are in:
 * the kernel maps an array's pages all at once, so a mapping of the whole
 * array would be resident whole, 32 MiB of our RSS by default for tables
 * that mostly take a few MiB. 0 or -errno.
 */
static int rows_map(const struct unwind_maps *um, size_t first, size_t nr, struct rows_window *w)
{
	size_t page = sysconf(_SC_PAGESIZE), start = first * sizeof(struct unwind_row);
	size_t off = start / page * page;
	void *base;

	w->len = (start + nr * sizeof(struct unwind_row) - off + page - 1) / page * page;
	base = mmap(NULL, w->len, PROT_READ | PROT_WRITE, MAP_SHARED, um->rows_fd, off);
	if (base == MAP_FAILED)
		return -errno;
	w->base = base;
	w->rows = (struct unwind_row *)((char *)base + (start - off));
	return 0;
}

static void rows_unmap(struct rows_window *w)
{
	munmap(w->base, w->len);
}

struct unwind_maps *unwind_maps__new(struct unwinder *u, int rows_fd, size_t max_rows, int rules_fd,
				     int procs_fd, const char *cache_dir)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	static const struct unwind_rule unsupported = { .cfa = UNWIND_CFA_UNSUPPORTED };
	static const struct unwind_rule no_room = { .cfa = UNWIND_CFA_NO_ROOM };
	struct unwind_maps *um;
	struct rows_window w;
	int err;

	if (max_rows < 3 || max_rows > UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	um = calloc(1, sizeof(*um));
	if (!um)
		return NULL;
	um->u = u;
	um->max_rows = max_rows;
	um->rules_fd = rules_fd;
	um->procs_fd = procs_fd;
	um->rows_fd = rows_fd;
	hashtab__init(&um->slices);
	hashtab__init(&um->procs);
	hashtab__init(&um->rules);
	pthread_mutex_init(&um->lock, NULL);
	pthread_cond_init(&um->work, NULL);
	pthread_cond_init(&um->done_cond, NULL);
	um->todo_tail = &um->todo;
	um->done_tail = &um->done;
	if (cache_dir && !(um->cache_dir = strdup(cache_dir))) {
		err = -ENOMEM;
		goto out_free;
	}
	/* The two fixed rules, at the indexes the BPF program knows. */
	if (unwind_maps__rule(um, &none) != UNWIND_RULE_NONE ||
	    unwind_maps__rule(um, &unsupported) != UNWIND_RULE_UNSUPPORTED ||
	    unwind_maps__rule(um, &no_room) != UNWIND_RULE_NO_ROOM) {
		err = -ENOMEM;
		goto out_free;
	}
	err = rows_map(um, 0, 2, &w);
	if (err)
		goto out_free;
	w.rows[ROW_NO_ROOM] = (struct unwind_row){ 0, UNWIND_RULE_NO_ROOM };
	w.rows[ROW_NONE] = (struct unwind_row){ 0, UNWIND_RULE_NONE };
	rows_unmap(&w);
	err = array__reserve(&um->free, &um->alloc_free, 1, sizeof(*um->free));
	if (err)
		goto out_free;
	um->free[um->nr_free++] = (struct free_range){ 2, max_rows - 2 };
	um->stats.max_rows = max_rows;
	return um;

out_free:
	unwind_maps__free(um);
	errno = -err;
	return NULL;
}

static void job__free(struct unwind_job *job)
{
	unwind_source__release(&job->src);
	fde_table__free(job->fdes);
	free(job->rows);
	free(job);
}

void unwind_maps__free(struct unwind_maps *um)
{
	struct proc_entry *p;
	void *e;
	size_t i;

	if (!um)
		return;
	if (um->worker_started) {
		pthread_mutex_lock(&um->lock);
		um->stop = true;
		pthread_cond_signal(&um->work);
		pthread_mutex_unlock(&um->lock);
		pthread_join(um->worker, NULL);
	}
	for (struct unwind_job *job = um->todo, *next; job; job = next) {
		next = job->next;
		job__free(job);
	}
	for (struct unwind_job *job = um->done, *next; job; job = next) {
		next = job->next;
		job__free(job);
	}
	pthread_mutex_destroy(&um->lock);
	pthread_cond_destroy(&um->work);
	pthread_cond_destroy(&um->done_cond);
	hashtab__for_each_entry(&um->slices, i, e) {
		elf_file__put(((struct slice *)e)->file);
		free(e);
	}
	hashtab__release(&um->slices);
	hashtab__for_each_entry(&um->procs, i, p) {
		free(p->slices);
		free(p->pending);
		free(p);
	}
	hashtab__release(&um->procs);
	hashtab__for_each_entry(&um->rules, i, e)
		free(e);
	hashtab__release(&um->rules);
	free(um->free);
	free(um->cache_dir);
	free(um);
}

/* Take @n rows from the free ranges, first fit: 0 with *@first set, or -ENOSPC. */
static int rows_alloc(struct unwind_maps *um, uint32_t n, uint32_t *first)
{
	for (size_t i = 0; i < um->nr_free; i++) {
		struct free_range *r = &um->free[i];

		if (r->len < n)
			continue;
		*first = r->start;
		r->start += n;
		r->len -= n;
		if (!r->len) {
			memmove(r, r + 1, (um->nr_free - i - 1) * sizeof(*r));
			um->nr_free--;
		}
		return 0;
	}
	return -ENOSPC;
}

/* Give rows [first, first + n) back, merged with the free ranges they touch. 0 or -ENOMEM. */
static int rows_free(struct unwind_maps *um, uint32_t first, uint32_t n)
{
	size_t i = 0;
	struct free_range *r;

	while (i < um->nr_free && um->free[i].start < first)
		i++;
	if (i && um->free[i - 1].start + um->free[i - 1].len == first) {
		r = &um->free[i - 1];
		r->len += n;
		if (i < um->nr_free && r->start + r->len == um->free[i].start) {
			r->len += um->free[i].len;
			memmove(&um->free[i], &um->free[i + 1], (um->nr_free - i - 1) * sizeof(*r));
			um->nr_free--;
		}
		return 0;
	}
	if (i < um->nr_free && first + n == um->free[i].start) {
		um->free[i].start = first;
		um->free[i].len += n;
		return 0;
	}
	if (array__reserve(&um->free, &um->alloc_free, um->nr_free + 1, sizeof(*um->free)))
		return -ENOMEM; /* those rows stay unused */
	memmove(&um->free[i + 1], &um->free[i], (um->nr_free - i) * sizeof(*um->free));
	um->free[i] = (struct free_range){ first, n };
	um->nr_free++;
	return 0;
}

static bool proc_eq(const void *entry, const void *key)
{
	return ((const struct proc_entry *)entry)->pid == *(const pid_t *)key;
}

static void proc_entry__release_slices(struct unwind_maps *um, struct proc_entry *p)
{
	for (size_t i = 0; i < p->nr; i++)
		p->slices[i].slice->users--;
	p->nr = 0;
	if (p->pending) {
		free(p->pending);
		p->pending = NULL;
		um->nr_pending--;
	}
}

/*
 * Forget the entries of processes that have exited (their pids may have
 * been reused since, in which case the new process gets its entry again at
 * its first sample): their tables can then be evicted.
 */
static void unwind_maps__purge_exited(struct unwind_maps *um)
{
	struct proc_entry *p;
	size_t i;

	hashtab__for_each_entry(&um->procs, i, p) {
		__u32 key = p->pid;

		if (!p->nr || !kill(p->pid, 0) || errno != ESRCH)
			continue;
		bpf_map_delete_elem(um->procs_fd, &key);
		proc_entry__release_slices(um, p);
	}
}

static bool proc_entry_live(void *entry, void *arg)
{
	const struct proc_entry *p = entry;

	(void)arg;
	/* unwind_maps__purge_exited() emptied those of exited processes. */
	return p->nr || !kill(p->pid, 0) || errno != ESRCH;
}

static void proc_entry_drop(void *entry, void *arg)
{
	struct proc_entry *p = entry;

	proc_entry__release_slices(arg, p);
	free(p->slices);
	free(p);
}

/* A slice the worker has is the worker's until the drain takes it back. */
static bool slice_used(void *entry, void *arg)
{
	const struct slice *s = entry;

	(void)arg;
	return s->users || s->state == SLICE_BUILDING;
}

/*
 * A table no live process uses goes, its rows with it: kept, it would keep
 * its file open and mapped, with every page of it that was read.
 */
static void slice_drop(void *entry, void *arg)
{
	struct unwind_maps *um = arg;
	struct slice *sl = entry;

	if (sl->state == SLICE_LOADED) {
		rows_free(um, sl->first, sl->nr);
		um->stats.rows -= sl->nr;
	}
	elf_file__put(sl->file);
	free(sl);
}

void unwind_maps__forget_exited(struct unwind_maps *um)
{
	unwind_maps__purge_exited(um);
	/* Out of memory, what is left is forgotten next time. */
	hashtab__retain(&um->procs, proc_entry_live, proc_entry_drop, um);
	hashtab__retain(&um->slices, slice_used, slice_drop, um);
}

/* Evict the unused table loaded longest ago: true, or false when none is unused. */
static bool unwind_maps__evict_one(struct unwind_maps *um)
{
	struct slice *s, *oldest = NULL;
	size_t i;

	hashtab__for_each_entry(&um->slices, i, s)
		if (s->state == SLICE_LOADED && !s->users &&
		    (!oldest || s->load_seq < oldest->load_seq))
			oldest = s;
	if (!oldest)
		return false;
	pr_debug("unwind: table of '%s' evicted (%u rows)", elf_file__name(oldest->file),
		 oldest->nr);
	rows_free(um, oldest->first, oldest->nr);
	um->stats.rows -= oldest->nr;
	um->stats.evicted++;
	oldest->state = SLICE_EVICTED;
	return true;
}

/* Room for @n rows, evicting what it takes. 0 or -ENOSPC. */
static int unwind_maps__make_room(struct unwind_maps *um, uint32_t n, uint32_t *first)
{
	bool purged = false;

	while (rows_alloc(um, n, first)) {
		if (unwind_maps__evict_one(um))
			continue;
		if (purged)
			return -ENOSPC;
		unwind_maps__purge_exited(um);
		purged = true;
	}
	return 0;
}

/*
 * Append to @job's rows their index by page (UNWIND_PAGE_SHIFT in
 * profile.h): one pass over them. 0 or -ENOMEM.
 */
static int job__index_pages(struct unwind_job *job)
{
	size_t nr = job->nr_rows, r = 0;
	uint64_t base, last, pages;
	struct unwind_row *rows;

	if (!nr)
		return 0;
	base = job->rows[0].pc >> UNWIND_PAGE_SHIFT;
	last = job->rows[nr - 1].pc >> UNWIND_PAGE_SHIFT;
	pages = last - base + 1;
	rows = realloc(job->rows, (nr + pages + 1) * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	job->rows = rows;
	for (uint64_t p = 0; p <= pages; p++) {
		uint64_t start = (base + p) << UNWIND_PAGE_SHIFT;

		while (r + 1 < nr && rows[r + 1].pc <= start)
			r++;
		rows[nr + p] = (struct unwind_row){ .pc = r };
	}
	job->page_base = base;
	job->nr_pages = pages;
	job->nr = nr + pages + 1;
	return 0;
}

/* The worker's part of @job: read its table from the cache, or build it (and store it there). */
static void job__run(struct unwind_maps *um, struct unwind_job *job)
{
	struct unwind_table t = { 0 };
	bool store = false;
	uint64_t start;
	int err;

	if (job->key.dir && !um->cache_refused) {
		start = clock_ns(CLOCK_MONOTONIC);
		err = unwind_cache__load(&job->key, &t);
		job->cache_ns = clock_ns(CLOCK_MONOTONIC) - start;
		/* Said once: the directory stays as it is for the rest of the run. */
		if (err == -EACCES)
			um->cache_refused = true;
		store = err == -ENOENT || err == -EBADMSG;
		job->cached = !err;
	}
	if (!job->cached) {
		start = clock_ns(CLOCK_MONOTONIC);
		if (!job->src.fdes && (job->fdes = fde_table__build(&job->src.fde_src)))
			job->src.fdes = job->fdes;
		job->err = job->src.fdes ? unwind_table__build_source(&t, &job->src) : -ENOMEM;
		job->build_ns = clock_ns(CLOCK_MONOTONIC) - start;
	}
	if (!job->err && store && t.nr <= UINT32_MAX && !um->cache_refused) {
		/* For the next run; this one goes on without it. */
		start = clock_ns(CLOCK_MONOTONIC);
		unwind_cache__store(&job->key, &t, CACHE_FILE_DEFAULT_MAX_BYTES);
		job->store_ns = clock_ns(CLOCK_MONOTONIC) - start;
	}
	if (!job->err && t.nr > UINT32_MAX)
		job->err = -E2BIG;
	if (!job->err && !(job->rows = malloc(t.nr * sizeof(*job->rows))))
		job->err = -ENOMEM;
	for (size_t i = 0; !job->err && i < t.nr; i++)
		job->rows[i] = (struct unwind_row){
			.pc = t.rows[i].pc,
			.rule = unwind_maps__rule(um, &t.rows[i].rule),
		};
	job->nr = job->nr_rows = t.nr;
	if (!job->err)
		job->err = job__index_pages(job);
	job->nr_fdes = t.nr_fdes;
	job->nr_unsupported = t.nr_unsupported;
	if (job->cached)
		unwind_cache__release(&t);
	else
		unwind_table__release(&t);
}

static void *worker_main(void *arg)
{
	struct unwind_maps *um = arg;
	struct unwind_job *job;

	pthread_mutex_lock(&um->lock);
	for (;;) {
		while (!um->todo && !um->stop)
			pthread_cond_wait(&um->work, &um->lock);
		if (um->stop)
			break;
		job = um->todo;
		um->todo = job->next;
		if (!um->todo)
			um->todo_tail = &um->todo;
		pthread_mutex_unlock(&um->lock);

		job__run(um, job);

		pthread_mutex_lock(&um->lock);
		job->next = NULL;
		*um->done_tail = job;
		um->done_tail = &job->next;
		um->nr_jobs--;
		__atomic_store_n(&um->has_done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&um->done_cond);
	}
	pthread_mutex_unlock(&um->lock);
	return NULL;
}

/* Give @job to the worker, started if it is not: 0 or -errno. */
static int unwind_maps__queue(struct unwind_maps *um, struct unwind_job *job)
{
	sigset_t all, old;
	int err = 0;

	pthread_mutex_lock(&um->lock);
	if (!um->worker_started) {
		/* Signals are the drain thread's: they cut its wait short. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = -pthread_create(&um->worker, NULL, worker_main, um);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		um->worker_started = !err;
	}
	if (!err) {
		*um->todo_tail = job;
		um->todo_tail = &job->next;
		um->nr_jobs++;
		pthread_cond_signal(&um->work);
	}
	pthread_mutex_unlock(&um->lock);
	return err;
}

/*
 * Start loading @s's table: read what building it takes (here: libelf is
 * not thread-safe) and queue it for the worker, or settle @s at once when
 * there is nothing to build. Sets @s->state.
 */
static void slice__load(struct unwind_maps *um, struct slice *s)
{
	struct unwind_job *job = calloc(1, sizeof(*job));
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	int err;

	if (!job) {
		s->state = SLICE_CORRUPT;
		return;
	}
	err = unwind_source__get(&job->src, s->file);
	if (err == -ENOENT || err == -ENOTSUP) {
		s->state = SLICE_FP;
		goto out_free;
	}
	if (!err && um->cache_dir && elf_file__build_id(s->file) && elf_file__cacheable(s->file))
		job->key = (struct unwind_cache_key){
			.dir = um->cache_dir,
			.build_id = elf_file__build_id(s->file),
			.producer = "profiler " PROFILER_VERSION,
			.file_sum = elf__fingerprint(elf_file__elf(s->file)),
		};
	job->slice = s;
	if (!err)
		err = unwind_maps__queue(um, job);
	um->stats.source_ns += clock_ns(CLOCK_MONOTONIC) - start;
	if (err) {
		pr_debug("unwind: no table for '%s': %s", elf_file__name(s->file), strerror(-err));
		s->state = SLICE_CORRUPT;
		goto out_free;
	}
	s->state = SLICE_BUILDING;
	return;

out_free:
	job__free(job);
}

/* Copy the table the worker made for @job into the row array; settles @job->slice's state. */
static void slice__install(struct unwind_maps *um, struct unwind_job *job)
{
	struct slice *s = job->slice;
	struct rows_window w;
	int err;

	um->stats.build_ns += job->build_ns;
	um->stats.cache_ns += job->cache_ns;
	um->stats.store_ns += job->store_ns;
	if (job->fdes) {
		elf_file__set_fdes(s->file, job->fdes);
		job->fdes = NULL;
	}
	if (job->err) {
		pr_debug("unwind: no table for '%s': %s", elf_file__name(s->file),
			 strerror(-job->err));
		s->state = SLICE_CORRUPT;
		return;
	}
	if (unwind_maps__make_room(um, job->nr, &s->first)) {
		pr_debug("unwind: no room for the %zu rows of '%s'", job->nr,
			 elf_file__name(s->file));
		um->stats.over_limit++;
		s->state = SLICE_NO_ROOM;
		return;
	}
	err = rows_map(um, s->first, job->nr, &w);
	if (err) {
		pr_debug("unwind: cannot map the rows of '%s': %s", elf_file__name(s->file),
			 strerror(-err));
		rows_free(um, s->first, job->nr);
		s->state = SLICE_CORRUPT;
		return;
	}
	memcpy(w.rows, job->rows, job->nr * sizeof(*job->rows));
	rows_unmap(&w);
	s->nr = job->nr;
	s->nr_rows = job->nr_rows;
	s->page_base = job->page_base;
	s->nr_pages = job->nr_pages;
	s->state = SLICE_LOADED;
	s->load_seq = ++um->seq;
	um->stats.files++;
	um->stats.cached += job->cached;
	um->stats.rows += job->nr;
	um->stats.unsupported += job->nr_unsupported;
	if (um->stats.rows > um->stats.peak_rows)
		um->stats.peak_rows = um->stats.rows;
	pr_debug("unwind: table of '%s': %zu FDEs, %zu rows%s", elf_file__name(s->file),
		 job->nr_fdes, job->nr, job->cached ? ", from the cache" : "");
}

static bool slice_eq(const void *entry, const void *key)
{
	return ((const struct slice *)entry)->file == key;
}

/* The slice of @file, loaded if it is not: NULL when memory runs out. */
static struct slice *unwind_maps__slice(struct unwind_maps *um, struct elf_file *file)
{
	bool added;
	struct slice *s = hashtab__find_or_add(&um->slices, hash_mix(0, (uintptr_t)file), slice_eq,
					       file, sizeof(*s), &added);

	if (!s)
		return NULL;
	/* Its own reference: the key stays this file's while the slice lives. */
	if (added)
		s->file = elf_file__get(file);
	if (s->state == SLICE_NEW || s->state == SLICE_EVICTED)
		slice__load(um, s);
	return s;
}

static struct proc_entry *unwind_maps__proc(struct unwind_maps *um, pid_t pid)
{
	bool added;
	struct proc_entry *p = hashtab__find_or_add(&um->procs, hash_mix(0, pid), proc_eq, &pid,
						    sizeof(*p), &added);

	if (p && added)
		p->pid = pid;
	return p;
}

/*
 * Write @p's pending entry into the BPF map, its mappings' rows filled in
 * from their slices: 0, 1 when a slice is still being built (nothing
 * written), or -errno.
 */
static int proc_entry__write(struct unwind_maps *um, struct proc_entry *p)
{
	struct unwind_proc *v = p->pending;
	__u32 key = p->pid;
	int err;

	for (size_t i = 0; i < p->nr; i++) {
		struct unwind_mapping *m = &v->mappings[p->slices[i].mapping];
		const struct slice *s = p->slices[i].slice;

		m->nr_pages = 0;
		switch (s->state) {
		case SLICE_BUILDING:
			return 1;
		case SLICE_LOADED:
			m->first_row = s->first;
			m->nr_rows = s->nr_rows;
			m->page_base = s->page_base;
			m->nr_pages = s->nr_pages;
			break;
		case SLICE_CORRUPT:
			m->first_row = ROW_NONE;
			m->nr_rows = 1;
			break;
		case SLICE_NO_ROOM:
			m->first_row = ROW_NO_ROOM;
			m->nr_rows = 1;
			break;
		default:
			m->nr_rows = UNWIND_MAPPING_FP;
			break;
		}
	}
	err = bpf_map_update_elem(um->procs_fd, &key, v, BPF_ANY);
	if (err == -E2BIG || err == -ENOMEM) {
		unwind_maps__purge_exited(um);
		/* @p's process may be one of those that exited: its entry is gone then. */
		if (!p->pending)
			return -ESRCH;
		err = bpf_map_update_elem(um->procs_fd, &key, v, BPF_ANY);
	}
	if (err)
		return err;
	free(p->pending);
	p->pending = NULL;
	um->nr_pending--;
	um->stats.procs++;
	return 0;
}

int unwind_maps__load(struct unwind_maps *um, const struct proc_maps *maps)
{
	struct proc_entry *p = unwind_maps__proc(um, maps->pid);
	struct proc_entry old;
	struct unwind_proc *v;
	__u32 key = maps->pid;
	bool merge;
	int err = 0;

	if (!p)
		return -ENOMEM;
	/* The slices of the entry being replaced stay in use until the new one is written. */
	old = *p;
	*p = (struct proc_entry){ .pid = maps->pid, .pending = old.pending };
	old.pending = NULL;
	if (!p->pending) {
		p->pending = malloc(sizeof(*p->pending));
		if (!p->pending) {
			*p = old;
			return -ENOMEM;
		}
		um->nr_pending++;
	}
	v = p->pending;
	memset(v, 0, sizeof(*v));
	/*
	 * Past PROFILE_MAX_UNWIND_MAPPINGS mappings, a run of adjacent ones
	 * without tables is one mapping walked by frame pointers: a process
	 * mapping thousands of files kept its libraries, which come after
	 * them, out of the table. Not across a gap: code mapped there later
	 * must be seen as new.
	 */
	merge = maps->nr > PROFILE_MAX_UNWIND_MAPPINGS;
	for (size_t i = 0; i < maps->nr && v->nr < PROFILE_MAX_UNWIND_MAPPINGS; i++) {
		const struct proc_map *map = &maps->maps[i];
		struct unwind_mapping *m = &v->mappings[v->nr];
		struct elf_file *file;
		struct slice *s;
		uint64_t bias;

		file = unwinder__table_file(um->u, map, &bias);
		if (!file && merge && v->nr && v->mappings[v->nr - 1].end == map->start &&
		    (!p->nr || p->slices[p->nr - 1].mapping != v->nr - 1)) {
			v->mappings[v->nr - 1].end = map->end;
			continue;
		}
		m->start = map->start;
		m->end = map->end;
		m->nr_rows = UNWIND_MAPPING_FP;
		v->nr++;
		if (!file)
			continue; /* anonymous (a JIT), or a file without CFI */
		s = unwind_maps__slice(um, file);
		if (!s || array__reserve(&p->slices, &p->alloc, p->nr + 1, sizeof(*p->slices))) {
			err = -ENOMEM;
			break;
		}
		m->bias = bias;
		s->users++;
		p->slices[p->nr++] = (struct proc_slice){ v->nr - 1, s };
	}
	if (!err)
		err = proc_entry__write(um, p);
	/* Until its tables are built, its stacks are copied (an older entry would truncate them). */
	if (err > 0)
		bpf_map_delete_elem(um->procs_fd, &key);
	proc_entry__release_slices(um, &old);
	free(old.slices);
	if (err < 0) {
		proc_entry__release_slices(um, p);
		return err;
	}
	return 0;
}

/* Take back what the worker has done: true when it had anything. */
static bool unwind_maps__take_back(struct unwind_maps *um)
{
	struct unwind_job *done, *next;

	/* Called for every record drained: nothing done costs one load. */
	if (!__atomic_load_n(&um->has_done, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&um->lock);
	done = um->done;
	um->done = NULL;
	um->done_tail = &um->done;
	__atomic_store_n(&um->has_done, false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&um->lock);
	if (!done)
		return false;
	for (; done; done = next) {
		next = done->next;
		slice__install(um, done);
		job__free(done);
	}
	return true;
}

/* Write the entries no slice keeps waiting any more. */
static void unwind_maps__write_pending(struct unwind_maps *um)
{
	struct proc_entry *p;
	size_t i;
	int err;

	hashtab__for_each_entry(&um->procs, i, p) {
		if (!um->nr_pending)
			break;
		if (!p->pending)
			continue;
		err = proc_entry__write(um, p);
		if (err < 0) {
			pr_debug("pid %d: cannot load unwind tables: %s", p->pid, strerror(-err));
			proc_entry__release_slices(um, p);
		}
	}
}

void unwind_maps__poll(struct unwind_maps *um)
{
	if (unwind_maps__take_back(um))
		unwind_maps__write_pending(um);
}

void unwind_maps__wait(struct unwind_maps *um)
{
	pthread_mutex_lock(&um->lock);
	while (um->nr_jobs)
		pthread_cond_wait(&um->done_cond, &um->lock);
	pthread_mutex_unlock(&um->lock);
	unwind_maps__poll(um);
}

void unwind_maps__stats(const struct unwind_maps *um, struct unwind_maps_stats *stats)
{
	*stats = um->stats;
}
