// SPDX-License-Identifier: GPL-2.0-only
/*
 * golang.c - the Go plug-in (runtime.h): the pprof labels of the goroutine
 * each sample interrupted (pprof.Do, pprof.SetGoroutineLabels), as Go's own
 * profiler attaches them to its samples.
 *
 * A Go program's unwinding and names need nothing here: its files say
 * enough (collector/unwind_table.c, elf/gopclntab.c). Its labels are data:
 * for each process whose executable is Go (its .go.buildinfo names the
 * release), the BPF program is told where the runtime keeps a thread's
 * goroutine and the goroutine's labels (golang.bpf.h) and records the
 * labels' address; here the labels are read from the process, for every
 * sample: a set is never changed once made, but pprof.Do makes one per
 * call, and the garbage collector gives a freed one's memory to the next,
 * so no address names one set for long.
 *
 * Labels are a map[string]string (Go 1.16 to 1.23, the releases whose
 * layout is known here); at most GO_MAX_LABELS of them, keys of
 * GO_MAX_KEY bytes and values of GO_MAX_VALUE, the rest cut and counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/profile.h"
#include "collector/event.h"
#include "common/log.h"
#include "common/proc_maps.h"
#include "common/remote_mem.h"
#include "elf/elf_cache.h"
#include "elf/elf_file.h"
#include "golang.h"
#include "profile.skel.h"

#define GO_MAX_LABELS 16
#define GO_MAX_KEY 64
#define GO_MAX_VALUE 128

/* Where the runtime keeps what golang.bpf.h reads, by release (runtime/runtime2.go). */
static const struct go_layout {
	unsigned int minor;  /* Go 1.minor */
	struct go_proc proc; /* g.m, m.curg, g.labels (tls_off: set per file) */
} go_layouts[] = {
	{ 16, { .g_m = 48, .m_curg = 192, .g_labels = 344 } },
	{ 17, { .g_m = 48, .m_curg = 192, .g_labels = 360 } },
	{ 18, { .g_m = 48, .m_curg = 192, .g_labels = 360 } },
	{ 19, { .g_m = 48, .m_curg = 192, .g_labels = 360 } },
	{ 20, { .g_m = 48, .m_curg = 192, .g_labels = 360 } },
	{ 21, { .g_m = 48, .m_curg = 192, .g_labels = 344 } },
	{ 22, { .g_m = 48, .m_curg = 192, .g_labels = 344 } },
	{ 23, { .g_m = 48, .m_curg = 192, .g_labels = 352 } },
};

/* runtime.hmap: count, B (log2 of the buckets), buckets; a map[string]string's bucket. */
#define HMAP_COUNT 0
#define HMAP_B 9
#define HMAP_BUCKETS 16
#define HMAP_SIZE 48
#define BUCKET_SLOTS 8
#define BUCKET_KEYS 8
#define BUCKET_VALUES (BUCKET_KEYS + BUCKET_SLOTS * 16)
#define BUCKET_SIZE (BUCKET_VALUES + BUCKET_SLOTS * 16 + 8)
#define HMAP_MIN_TOPHASH 5 /* tophash values below: empty or evacuated slots */
#define HMAP_MAX_B 3	   /* buckets read: 8, room for 64 labels */

struct go_stats {
	uint64_t processes, unsupported, samples, unreadable, cut;
};

struct go_runtime {
	struct profile_bpf *skel;
	struct elf_cache *elves;
	struct runtime_procs procs; /* of struct runtime_proc: nothing more kept */
	struct go_stats stats;
	bool said[64]; /* releases said to be unsupported, by minor */
	char *labels;  /* the last sample's, until the next */
};

/*
 * The Go release that built @elf, from .go.buildinfo: Go 1.18 on write the
 * version inline (a varint length and "go1.N..." at offset 32), Go 1.13 to
 * 1.17 a pointer at 16 to runtime.buildVersion, a string (pointer, length).
 * Its minor number, or -1.
 */
static int go_release(Elf *elf)
{
	static const char magic[] = "\xff Go buildinf:";
	const unsigned char *p, *version;
	uint64_t addr, str[2];
	size_t len;
	Elf_Data *d;
	unsigned int minor = 0;

	d = elf__section_data(elf, ".go.buildinfo", &addr);
	if (!d || !d->d_buf || d->d_size < 32)
		return -1;
	p = d->d_buf;
	if (memcmp(p, magic, sizeof(magic) - 1) || p[14] != 8)
		return -1;
	if (p[15] & 2) {
		len = d->d_size > 33 ? p[32] : 0;
		version = len && len <= d->d_size - 33 ? p + 33 : NULL;
	} else {
		memcpy(&addr, p + 16, 8);
		version = elf__bytes_at(elf, addr, sizeof(str), false);
		if (!version)
			return -1;
		memcpy(str, version, sizeof(str));
		len = str[1] < 64 ? str[1] : 0;
		version = elf__bytes_at(elf, str[0], len, false);
	}
	if (!version || len < 5 || memcmp(version, "go1.", 4))
		return -1;
	for (size_t i = 4; i < len && version[i] >= '0' && version[i] <= '9' && minor < 1000; i++)
		minor = minor * 10 + (version[i] - '0');
	return minor;
}

/* Where a thread's g is, from the thread pointer: -8, below a TLS block of at most 8 bytes. */
static bool go_tls_offset(Elf *elf, int32_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_TLS && ph.p_memsz > 8)
			return false;
	}
	*off = -8;
	return true;
}

/* Look at @p's executable (the first file @maps maps, the lowest): a Go release whose labels we read? */
static void go_runtime__check(struct go_runtime *rt, struct runtime_proc *p,
			      const struct proc_maps *maps)
{
	const struct go_layout *layout = NULL;
	struct elf_file *elf = NULL;
	struct go_proc value;
	int minor;

	p->checked = true;
	for (size_t i = 0; i < maps->nr && !elf; i++)
		if (maps->maps[i].file)
			elf = elf_cache__file(rt->elves, maps->maps[i].file);
	if (!elf || (minor = go_release(elf_file__elf(elf))) < 0)
		return;
	for (size_t i = 0; i < sizeof(go_layouts) / sizeof(*go_layouts); i++)
		if (go_layouts[i].minor == (unsigned int)minor)
			layout = &go_layouts[i];
	value = layout ? layout->proc : (struct go_proc){ 0 };
	if (!layout || !go_tls_offset(elf_file__elf(elf), &value.tls_off)) {
		rt->stats.unsupported++;
		if (minor < 64 && !rt->said[minor])
			pr_info("golang: pid %d runs Go 1.%d, whose goroutine labels are not read "
				"(Go 1.16 to 1.23 are)",
				p->pid, minor);
		if (minor < 64)
			rt->said[minor] = true;
		return;
	}
	if (bpf_map_update_elem(rt->procs.map_fd, &p->pid, &value, BPF_ANY)) {
		pr_debug("golang: pid %d: cannot load it: %s", p->pid, strerror(errno));
		return;
	}
	p->loaded = true;
	rt->skel->bss->go_loaded = true;
	rt->stats.processes++;
	pr_debug("golang: pid %d runs Go 1.%d: its goroutines' labels are read", p->pid, minor);
}

/* A Go string of @pid at @at (pointer, length) into @out, at most @max bytes: 0 or -errno. */
static int read_string(pid_t pid, const uint8_t *at, char *out, size_t max, bool *cut)
{
	uint64_t ptr, len;
	int err;

	memcpy(&ptr, at, 8);
	memcpy(&len, at + 8, 8);
	if (len > max) {
		*cut = true;
		len = max;
	}
	err = remote_read(pid, ptr, out, len);
	if (err)
		return err;
	out[len] = '\0';
	/* One line per label in the format: no newline, no control byte. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return 0;
}

struct go_label {
	char key[GO_MAX_KEY + 1], value[GO_MAX_VALUE + 1];
};

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct go_label *)a)->key, ((const struct go_label *)b)->key);
}

/*
 * Read the labels at @addr (a *labelMap: the map's header pointer) of
 * @pid, in common/profile.h's format, into a new string in *@out (NULL
 * when there are none). 0 or -errno.
 */
static int read_labels(struct go_runtime *rt, pid_t pid, uint64_t addr, char **out)
{
	uint8_t hmap[HMAP_SIZE], bucket[BUCKET_SIZE];
	struct go_label labels[GO_MAX_LABELS];
	uint64_t map, buckets, count;
	size_t nr = 0, len = 0, nr_buckets;
	bool cut = false;
	char *s;
	int err;

	*out = NULL;
	if ((err = remote_read_u64(pid, addr, &map)) || !map)
		return err;
	if ((err = remote_read(pid, map, hmap, sizeof(hmap))))
		return err;
	memcpy(&count, hmap + HMAP_COUNT, 8);
	memcpy(&buckets, hmap + HMAP_BUCKETS, 8);
	if (!count || !buckets)
		return 0;
	nr_buckets = (size_t)1 << (hmap[HMAP_B] < HMAP_MAX_B ? hmap[HMAP_B] : HMAP_MAX_B);
	cut = hmap[HMAP_B] > HMAP_MAX_B;
	for (size_t b = 0; b < nr_buckets; b++) {
		uint64_t overflow;

		if ((err = remote_read(pid, buckets + b * BUCKET_SIZE, bucket, sizeof(bucket))))
			return err;
		memcpy(&overflow, bucket + BUCKET_SIZE - 8, 8);
		cut |= overflow != 0;
		for (size_t i = 0; i < BUCKET_SLOTS; i++) {
			if (bucket[i] < HMAP_MIN_TOPHASH)
				continue;
			if (nr == GO_MAX_LABELS) {
				cut = true;
				break;
			}
			if ((err = read_string(pid, bucket + BUCKET_KEYS + 16 * i, labels[nr].key,
					       GO_MAX_KEY, &cut)) ||
			    (err = read_string(pid, bucket + BUCKET_VALUES + 16 * i,
					       labels[nr].value, GO_MAX_VALUE, &cut)))
				return err;
			/* The format's separator: a key holds none. */
			for (char *c = labels[nr].key; (c = strchr(c, '=')); c++)
				*c = '?';
			len += strlen(labels[nr].key) + strlen(labels[nr].value) + 2;
			nr++;
		}
	}
	rt->stats.cut += cut;
	if (!nr)
		return 0;
	qsort(labels, nr, sizeof(*labels), label_cmp);
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	*s = '\0';
	for (size_t i = 0, at = 0; i < nr; i++)
		at += sprintf(s + at, "%s=%s\n", labels[i].key, labels[i].value);
	*out = s;
	return 0;
}

static bool go_runtime__wanted(const struct collector_opts *opts)
{
	(void)opts;
	return true;
}

static void *go_runtime__new(const struct runtime_env *env)
{
	struct go_runtime *rt = calloc(1, sizeof(*rt));

	if (!rt)
		return NULL;
	rt->skel = env->skel;
	rt->elves = env->elves;
	rt->procs = (struct runtime_procs){ .entry_size = sizeof(struct runtime_proc),
					    .map_fd = bpf_map__fd(env->skel->maps.go_procs) };
	return rt;
}

static void go_runtime__free(void *ctx)
{
	struct go_runtime *rt = ctx;

	runtime_procs__release(&rt->procs);
	free(rt->labels);
	free(rt);
}

static void go_runtime__snapshot(void *ctx, const struct proc_maps *maps)
{
	struct go_runtime *rt = ctx;
	struct runtime_proc *p = runtime_procs__get(&rt->procs, maps->pid, true);

	if (p && !p->checked)
		go_runtime__check(rt, p, maps);
}

/* Another program: looked at again at its next snapshot. */
static void go_runtime__exec(void *ctx, pid_t pid, uint64_t time_ns)
{
	(void)time_ns;
	runtime_procs__exec(&((struct go_runtime *)ctx)->procs, pid);
}

static void go_runtime__forget(void *ctx, bool (*known)(pid_t pid, void *arg), void *arg)
{
	runtime_procs__forget(&((struct go_runtime *)ctx)->procs, known, arg);
}

static int go_runtime__merge(void *ctx, struct sample_event *e)
{
	struct go_runtime *rt = ctx;
	struct runtime_proc *p;
	int err;

	if (!e->go_labels || !(p = runtime_procs__get(&rt->procs, e->pid, false)) || !p->loaded)
		return 0;
	free(rt->labels);
	err = read_labels(rt, p->pid, e->go_labels, &rt->labels);
	if (err == -ENOMEM)
		return err;
	/* Gone, or freed since: the sample keeps no labels. */
	if (err) {
		rt->labels = NULL;
		rt->stats.unreadable++;
	}
	e->labels = rt->labels;
	rt->stats.samples += e->labels != NULL;
	return 0;
}

static void go_runtime__report(void *ctx, const struct runtime_env *env)
{
	struct go_runtime *rt = ctx;
	const struct go_stats *st = &rt->stats;

	(void)env;
	if (!st->processes && !st->unsupported)
		return;
	pr_info("golang: %llu processes whose goroutine labels are read (%llu of releases not "
		"read), %llu samples labelled, %llu label sets unreadable, %llu cut (over %d "
		"labels, keys over %d bytes or values over %d)",
		(unsigned long long)st->processes, (unsigned long long)st->unsupported,
		(unsigned long long)st->samples, (unsigned long long)st->unreadable,
		(unsigned long long)st->cut, GO_MAX_LABELS, GO_MAX_KEY, GO_MAX_VALUE);
}

const struct runtime_ops go_runtime = {
	.name = "go",
	.optional = true,
	.wanted = go_runtime__wanted,
	.new = go_runtime__new,
	.free = go_runtime__free,
	.snapshot = go_runtime__snapshot,
	.exec = go_runtime__exec,
	.forget = go_runtime__forget,
	.merge = go_runtime__merge,
	.report = go_runtime__report,
};
