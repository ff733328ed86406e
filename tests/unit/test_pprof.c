// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/profile.h"
#include "common/strset.h"
#include "export/folded.h"
#include "export/pprof.h"
#include "profile.pb-c.h"
#include "export_test.h"
#include "test.h"

static const struct profile_mapping m_app = {
	.start = 0x555555554000,
	.limit = 0x555555556000,
	.file_offset = 0x1000,
	.filename = "/usr/bin/app",
	.build_id = "0123456789abcdef0123456789abcdef01234567",
	.has_functions = true,
	.main_binary = true,
};

static const struct profile_mapping m_libfoo = {
	.start = 0x7ffff7a00000,
	.limit = 0x7ffff7a40000,
	.file_offset = 0,
	.filename = "/usr/lib/libfoo.so",
	.build_id = NULL,
	.has_functions = false,
};

static const struct profile_mapping m_kernel = {
	.start = 0xffffffff81000000,
	.limit = 0xffffffff82000000,
	.filename = "[kernel.kallsyms]",
	.has_functions = true,
	.kernel = true,
};

static const struct profile_frame f_main = {
	.address = 0x555555554100,
	.mapping = &m_app,
	FRAME_LINE(.name = "main", .system_name = "main", .filename = "/src/app.c"),
};

static const struct profile_frame f_compute = {
	.address = 0x555555554200,
	.mapping = &m_app,
	FRAME_LINE(.name = "compute", .system_name = "compute", .filename = "/src/app.c"),
};

/* A second address in compute(): another Location, the same Function. */
static const struct profile_frame f_comp2 = {
	.address = 0x555555554234,
	.mapping = &m_app,
	FRAME_LINE(.name = "compute", .system_name = "compute", .filename = "/src/app.c"),
};

static const struct profile_frame f_cxx = {
	.address = 0x555555554300,
	.mapping = &m_app,
	FRAME_LINE(.name = "ns::work(int)", .system_name = "_ZN2ns4workEi", .filename = NULL),
};

static const struct profile_frame f_unres = {
	.address = 0x7ffff7a01234,
	.mapping = &m_libfoo,
	FRAME_LINE(.name = "libfoo.so+0x1234", .system_name = NULL),
};

static const struct profile_frame f_nomap = {
	.address = 0xdeadbeef,
	.mapping = NULL,
	FRAME_LINE(.name = "[unknown]", .system_name = NULL),
};

static const struct profile_frame f_sys = {
	.address = 0xffffffff81001000,
	.mapping = &m_kernel,
	.kernel = true,
	FRAME_LINE(.name = "do_syscall_64", .system_name = "do_syscall_64"),
};

static const struct profile_frame f_entry = {
	.address = 0xffffffff81002000,
	.mapping = &m_kernel,
	.kernel = true,
	FRAME_LINE(.name = "entry_SYSCALL_64", .system_name = "entry_SYSCALL_64"),
};

struct test_sample {
	uint32_t pid, tid;
	const char *process, *thread;
	uint64_t count;
	bool truncated;
	const struct profile_frame *frames[8]; /* leaf first, NULL-terminated */
	const char *cmdline;
	const char *cgroup;
};

static const struct test_sample test_samples[EXPORT_TEST_SAMPLES] = {
	{ 100,
	  100,
	  "app",
	  "app",
	  5,
	  false,
	  { &f_compute, &f_main },
	  "app --serve",
	  "/system.slice/app.service" },
	{ 100,
	  101,
	  "app",
	  "worker",
	  3,
	  false,
	  { &f_sys, &f_entry, &f_unres, &f_comp2, &f_main },
	  "app --serve",
	  "/system.slice/app.service" },
	{ 100,
	  101,
	  "app",
	  "worker",
	  2,
	  false,
	  { &f_nomap, &f_main },
	  "app --serve",
	  "/system.slice/app.service" },
	{ 100,
	  100,
	  "app",
	  "app",
	  1,
	  true,
	  { &f_cxx, &f_main },
	  "app --serve",
	  "/system.slice/app.service" },
	{ 100, 100, "app", "app", 1, false, { NULL }, "app --serve", "/system.slice/app.service" },
	/*
	 * Another process with the same name: folded merges it with the first,
	 * unless rooted at the command line.
	 */
	{ 300, 301, "app", "app", 7, false, { &f_compute, &f_main }, "app --batch 7", NULL },
	/* Its command line could not be read. */
	{ 200, 200, "my app", "my app", 4, false, { &f_compute, &f_main }, NULL, NULL },
	{ 200, 202, "my app", "io", 6, false, { &f_sys, &f_entry, &f_main }, NULL, NULL },
};

struct profile *export_test_profile(const unsigned int *order)
{
	struct profile *p = profile__new(99);

	if (!p)
		return NULL;
	p->start_time = 1700000000123456789ULL;
	p->duration = 5000000000ULL;
	p->stats.lost_samples = 2;
	p->stats.truncated = 1;
	p->stats.stack_errors = 3;
	p->stats.maps_unreadable = 4;
	p->stats.frames[FRAME_LINES] = 5;
	p->stats.frames[FRAME_SYMBOL] = 4;
	p->stats.frames[FRAME_NO_SYMBOL] = 3;
	p->stats.frames[FRAME_NO_MAPPING] = 2;
	p->stats.frames[FRAME_JIT] = 1;
	for (unsigned int i = 0; i < EXPORT_TEST_SAMPLES; i++) {
		const struct test_sample *t = &test_samples[order ? order[i] : i];
		struct profile_sample s = {
			.pid = t->pid,
			.tid = t->tid,
			.process_name = strset__add(p->strings, t->process),
			.thread_name = strset__add(p->strings, t->thread),
			.cmdline = t->cmdline ? strset__add(p->strings, t->cmdline) : NULL,
			.cgroup = t->cgroup ? strset__add(p->strings, t->cgroup) : NULL,
			.frames = (const struct profile_frame **)t->frames,
			.count = t->count,
			.truncated = t->truncated,
		};

		while (s.nr_frames < 8 && t->frames[s.nr_frames])
			s.nr_frames++;
		if (!s.process_name || !s.thread_name || (t->cmdline && !s.cmdline) ||
		    (t->cgroup && !s.cgroup) || !profile__add_sample(p, &s)) {
			profile__free(p);
			return NULL;
		}
		p->stats.samples += t->count;
	}
	return p;
}

/* Decoding helpers: NULL when an index or id resolves to nothing. */
static const char *str_at(const Perftools__Profiles__Profile *pp, int64_t idx)
{
	return idx >= 0 && (size_t)idx < pp->n_string_table ? pp->string_table[idx] : NULL;
}

static const Perftools__Profiles__Location *location_by_id(const Perftools__Profiles__Profile *pp,
							   uint64_t id)
{
	for (size_t i = 0; i < pp->n_location; i++)
		if (pp->location[i]->id == id)
			return pp->location[i];
	return NULL;
}

static const Perftools__Profiles__Mapping *mapping_by_id(const Perftools__Profiles__Profile *pp,
							 uint64_t id)
{
	for (size_t i = 0; i < pp->n_mapping; i++)
		if (pp->mapping[i]->id == id)
			return pp->mapping[i];
	return NULL;
}

static const Perftools__Profiles__Function *function_by_id(const Perftools__Profiles__Profile *pp,
							   uint64_t id)
{
	for (size_t i = 0; i < pp->n_function; i++)
		if (pp->function[i]->id == id)
			return pp->function[i];
	return NULL;
}

static const Perftools__Profiles__Label *label_by_key(const Perftools__Profiles__Profile *pp,
						      const Perftools__Profiles__Sample *s,
						      const char *key)
{
	const Perftools__Profiles__Label *found = NULL;

	for (size_t i = 0; i < s->n_label; i++) {
		const char *k = str_at(pp, s->label[i]->key);

		if (k && !strcmp(k, key)) {
			if (found)
				return NULL; /* one value per key */
			found = s->label[i];
		}
	}
	return found;
}

static Perftools__Profiles__Profile *encode_and_unpack(const struct profile *p)
{
	Perftools__Profiles__Profile *pp;
	uint8_t *buf = NULL;
	size_t len = 0;

	if (pprof__encode(p, &buf, &len))
		return NULL;
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	return pp;
}

/* Ids are nonzero and unique; false otherwise. */
#define IDS_VALID(arr, n)                                                                          \
	({                                                                                         \
		bool ok_ = true;                                                                   \
		for (size_t i_ = 0; i_ < (n); i_++) {                                              \
			if (!(arr)[i_]->id)                                                        \
				ok_ = false;                                                       \
			for (size_t j_ = 0; j_ < i_; j_++)                                         \
				if ((arr)[i_]->id == (arr)[j_]->id)                                \
					ok_ = false;                                               \
		}                                                                                  \
		ok_;                                                                               \
	})

/* Compare a decoded sample with the input sample @s it came from. */
static void check_sample(const Perftools__Profiles__Profile *pp,
			 const Perftools__Profiles__Sample *ps, const struct profile_sample *s,
			 uint64_t period)
{
	const Perftools__Profiles__Label *l;

	CHECK_U64(ps->n_value, 2);
	CHECK_U64(ps->value[0], s->count);
	CHECK_U64(ps->value[1], s->count * period);

	CHECK_U64(ps->n_label, 4 + !!s->cmdline + !!s->cgroup);
	l = label_by_key(pp, ps, "pid");
	CHECK(l);
	CHECK_U64(l->num, s->pid);
	CHECK_U64(l->str, 0);
	CHECK_U64(l->num_unit, 0);
	l = label_by_key(pp, ps, "tid");
	CHECK(l);
	CHECK_U64(l->num, s->tid);
	CHECK_U64(l->str, 0);
	l = label_by_key(pp, ps, "thread");
	CHECK(l);
	CHECK_STR(str_at(pp, l->str), s->thread_name);
	CHECK_U64(l->num, 0);
	l = label_by_key(pp, ps, "comm");
	CHECK(l);
	CHECK_STR(str_at(pp, l->str), s->process_name);
	CHECK_U64(l->num, 0);
	/* The command line where it is known, for -tagfocus=cmdline=... and -tagroot=cmdline. */
	l = label_by_key(pp, ps, "cmdline");
	if (s->cmdline) {
		CHECK(l);
		CHECK_STR(str_at(pp, l->str), s->cmdline);
	} else {
		CHECK(!l);
	}
	/* The cgroup, which names the systemd unit or the container. */
	l = label_by_key(pp, ps, "cgroup");
	if (s->cgroup) {
		CHECK(l);
		CHECK_STR(str_at(pp, l->str), s->cgroup);
	} else {
		CHECK(!l);
	}

	/* Leaf first, like the input. */
	CHECK_U64(ps->n_location_id, s->nr_frames);
	for (size_t i = 0; i < ps->n_location_id; i++) {
		const struct profile_frame *f = s->frames[i];
		const Perftools__Profiles__Location *loc = location_by_id(pp, ps->location_id[i]);
		const Perftools__Profiles__Function *fn;
		const Perftools__Profiles__Mapping *m;

		CHECK(loc);
		CHECK_U64(loc->address, f->address);
		/* One Line per function at the address, inlined ones first. */
		CHECK_U64(loc->n_line, f->nr_lines);
		for (uint32_t k = 0; k < f->nr_lines; k++) {
			const struct profile_line *fl = &f->lines[k];

			CHECK_U64(loc->line[k]->line, fl->line);
			fn = function_by_id(pp, loc->line[k]->function_id);
			CHECK(fn);
			CHECK_STR(str_at(pp, fn->name), fl->name);
			CHECK_STR(str_at(pp, fn->system_name),
				  fl->system_name ? fl->system_name : fl->name);
			CHECK_STR(str_at(pp, fn->filename), fl->filename ? fl->filename : "");
		}
		if (!f->mapping) {
			CHECK_U64(loc->mapping_id, 0);
			continue;
		}
		m = mapping_by_id(pp, loc->mapping_id);
		CHECK(m);
		CHECK_U64(m->memory_start, f->mapping->start);
		CHECK_U64(m->memory_limit, f->mapping->limit);
		CHECK_U64(m->file_offset, f->mapping->file_offset);
		CHECK_STR(str_at(pp, m->filename), f->mapping->filename);
		CHECK_STR(str_at(pp, m->build_id),
			  f->mapping->build_id ? f->mapping->build_id : "");
		CHECK_U64(m->has_functions, f->mapping->has_functions);
	}
}

TEST(pprof_encode_fields)
{
	struct profile *p = export_test_profile(NULL);
	Perftools__Profiles__Profile *pp = NULL;

	CHECK(p);
	profile__sort(p);
	pp = encode_and_unpack(p);
	if (!pp) {
		test__fail(__FILE__, __LINE__, "pprof__encode or unpack failed");
		goto out;
	}

	/* The string table: "" first, then every string once. */
	if (pp->n_string_table < 1 || strcmp(pp->string_table[0], "")) {
		test__fail(__FILE__, __LINE__, "string_table[0] is not \"\"");
		goto out;
	}
	for (size_t i = 1; i < pp->n_string_table; i++) {
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(pp->string_table[i], pp->string_table[j])) {
				test__fail(__FILE__, __LINE__, "string '%s' at %zu and %zu",
					   pp->string_table[i], j, i);
				goto out;
			}
		}
	}

	if (pp->n_sample_type != 2 || !pp->period_type) {
		test__fail(__FILE__, __LINE__, "sample or period types missing");
		goto out;
	}
	CHECK_STR(str_at(pp, pp->sample_type[0]->type), "samples");
	CHECK_STR(str_at(pp, pp->sample_type[0]->unit), "count");
	CHECK_STR(str_at(pp, pp->sample_type[1]->type), "cpu");
	CHECK_STR(str_at(pp, pp->sample_type[1]->unit), "nanoseconds");
	CHECK_STR(str_at(pp, pp->period_type->type), "cpu");
	CHECK_STR(str_at(pp, pp->period_type->unit), "nanoseconds");
	CHECK_U64(pp->period, 1000000000 / 99);
	CHECK_STR(str_at(pp, pp->default_sample_type), "cpu");
	CHECK_U64(pp->time_nanos, 1700000000123456789ULL);
	CHECK_U64(pp->duration_nanos, 5000000000ULL);
	CHECK_U64(pp->drop_frames, 0);
	CHECK_U64(pp->keep_frames, 0);

	/* The summary, a comment a line; a CPU profile says nothing of time off CPU. */
	CHECK_U64(pp->n_comment, 7);
	CHECK_STR(str_at(pp, pp->comment[0]), "on-CPU samples: 29 in 5.0 s at 99 Hz");
	CHECK_STR(str_at(pp, pp->comment[1]), "samples lost: 2");
	CHECK_STR(str_at(pp, pp->comment[2]), "truncated stacks: 1");
	CHECK_STR(str_at(pp, pp->comment[3]), "stack read errors: 3");
	CHECK_STR(str_at(pp, pp->comment[4]), "processes with unreadable maps: 4");
	CHECK_STR(str_at(pp, pp->comment[5]),
		  "frames: 5 with source lines, 4 function only, 3 unnamed, 2 unmapped, 1 JIT, "
		  "0 Python, 0 JavaScript");
	CHECK_STR(str_at(pp, pp->comment[6]), "DWARF units unreadable: 0");

	/* One per distinct pointer or name, ids from 1 in first-use order. */
	CHECK_U64(pp->n_mapping, 3);
	CHECK_U64(pp->n_location, 8);
	CHECK_U64(pp->n_function, 7);
	CHECK(IDS_VALID(pp->mapping, pp->n_mapping));
	CHECK(IDS_VALID(pp->location, pp->n_location));
	CHECK(IDS_VALID(pp->function, pp->n_function));
	for (size_t i = 0; i < pp->n_location; i++)
		CHECK_U64(pp->location[i]->id, i + 1);

	CHECK_U64(pp->n_sample, p->nr_samples);
	for (size_t i = 0; i < pp->n_sample; i++) {
		check_sample(pp, pp->sample[i], &p->samples[i], p->period_ns);
		if (test__failed()) {
			test__fail(__FILE__, __LINE__, "in sample %zu", i);
			goto out;
		}
	}

out:
	perftools__profiles__profile__free_unpacked(pp, NULL);
	profile__free(p);
}

TEST(pprof_encode_names)
{
	struct profile *p = export_test_profile(NULL);
	Perftools__Profiles__Profile *pp = NULL;
	bool unresolved = false, cxx = false, kernel = false;

	CHECK(p);
	pp = encode_and_unpack(p);
	if (!pp) {
		test__fail(__FILE__, __LINE__, "pprof__encode or unpack failed");
		goto out;
	}
	for (size_t i = 0; i < pp->n_function; i++) {
		const Perftools__Profiles__Function *fn = pp->function[i];
		const char *name = str_at(pp, fn->name);

		if (!strcmp(name, "libfoo.so+0x1234")) {
			/* The placeholder stands in for both names. */
			unresolved = !strcmp(str_at(pp, fn->system_name), name) &&
				     fn->filename == 0;
		} else if (!strcmp(name, "ns::work(int)")) {
			cxx = !strcmp(str_at(pp, fn->system_name), "_ZN2ns4workEi");
		}
	}
	for (size_t i = 0; i < pp->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pp->mapping[i];

		if (!strcmp(str_at(pp, m->filename), "[kernel.kallsyms]"))
			kernel = m->memory_start == m_kernel.start && m->has_functions &&
				 m->build_id == 0;
	}
	if (!unresolved || !cxx || !kernel)
		test__fail(__FILE__, __LINE__, "unresolved %d, c++ %d, kernel mapping %d",
			   unresolved, cxx, kernel);
out:
	perftools__profiles__profile__free_unpacked(pp, NULL);
	profile__free(p);
}

TEST(pprof_encode_empty)
{
	struct profile *p = profile__new(99);
	Perftools__Profiles__Profile *pp;
	uint8_t *buf = NULL;
	size_t len = 0;

	CHECK(p);
	if (pprof__encode(p, &buf, &len)) {
		profile__free(p);
		CHECK(!"pprof__encode failed");
	}
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	profile__free(p);
	CHECK(pp);
	/* An explicit "" entry (field 6, length 0): pprof needs one even here. */
	CHECK_U64(pp->n_string_table > 0 ? strcmp(pp->string_table[0], "") : 1, 0);
	CHECK_U64(pp->n_sample, 0);
	CHECK_U64(pp->n_location, 0);
	CHECK_U64(pp->n_comment, 7);
	CHECK_STR(str_at(pp, pp->comment[0]), "on-CPU samples: 0 in 0.0 s at 99 Hz");
	CHECK_STR(str_at(pp, pp->default_sample_type), "cpu");
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

/* Read all of @f into a malloc()ed buffer. */
static uint8_t *slurp(FILE *f, size_t *len)
{
	uint8_t *buf = NULL;
	size_t alloc = 0, n;

	*len = 0;
	rewind(f);
	do {
		if (*len == alloc) {
			void *mem = realloc(buf, alloc = alloc ? alloc * 2 : 4096);

			if (!mem) {
				free(buf);
				return NULL;
			}
			buf = mem;
		}
		n = fread(buf + *len, 1, alloc - *len, f);
		*len += n;
	} while (n);
	return buf;
}

static int gunzip(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
	size_t alloc = in_len * 4 + 64;
	z_stream zs;
	int zerr;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return -1;
	*out = malloc(alloc);
	zs.next_in = (uint8_t *)in;
	zs.avail_in = in_len;
	do {
		if (!*out)
			break;
		if (zs.total_out == alloc) {
			void *mem = realloc(*out, alloc *= 2);

			if (!mem) {
				free(*out);
				*out = NULL;
				break;
			}
			*out = mem;
		}
		zs.next_out = *out + zs.total_out;
		zs.avail_out = alloc - zs.total_out;
		zerr = inflate(&zs, Z_NO_FLUSH);
	} while (zerr == Z_OK);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	if (*out && zerr == Z_STREAM_END && zs.avail_in == 0)
		return 0;
	free(*out);
	*out = NULL;
	return -1;
}

TEST(pprof_write_gzip)
{
	static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0 };
	uint8_t *raw = NULL, *gz = NULL, *gz2 = NULL, *plain = NULL;
	size_t raw_len, gz_len, gz2_len, plain_len;
	struct profile *p = export_test_profile(NULL);
	FILE *f = tmpfile();

	CHECK(p && f);
	CHECK_U64(pprof__encode(p, &raw, &raw_len), 0);
	CHECK_U64(pprof__write(p, f), 0);
	gz = slurp(f, &gz_len);
	/* Once more: the same bytes, no timestamp in the header. */
	CHECK(ftruncate(fileno(f), 0) == 0);
	rewind(f);
	CHECK_U64(pprof__write(p, f), 0);
	gz2 = slurp(f, &gz2_len);
	fclose(f);
	profile__free(p);

	CHECK(raw && gz && gz2);
	CHECK(gz_len > 18);
	/* Magic, deflate, no flags, mtime 0; byte 8 is XFL, byte 9 the OS. */
	CHECK(!memcmp(gz, header, 8));
	CHECK_U64(gz[9], 3);
	CHECK(gz_len == gz2_len && !memcmp(gz, gz2, gz_len));
	CHECK(gunzip(gz, gz_len, &plain, &plain_len) == 0);
	CHECK_U64(plain_len, raw_len);
	CHECK(!memcmp(plain, raw, raw_len));
	free(raw);
	free(gz);
	free(gz2);
	free(plain);
}

/* Encoded pprof and folded bytes of the test profile added in @order, sorted. */
static int export_bytes(const unsigned int *order, uint8_t **pb, size_t *pb_len, char **folded,
			size_t *folded_len)
{
	struct profile *p = export_test_profile(order);
	FILE *f;
	int err;

	if (!p)
		return -ENOMEM;
	profile__sort(p);
	err = pprof__encode(p, pb, pb_len);
	if (err)
		goto out;
	f = open_memstream(folded, folded_len);
	if (!f) {
		err = -errno;
		free(*pb);
		goto out;
	}
	err = folded__write(p, f);
	fclose(f);
	if (err) {
		free(*pb);
		free(*folded);
	}
out:
	profile__free(p);
	return err;
}

TEST(export_deterministic)
{
	static const unsigned int forward[EXPORT_TEST_SAMPLES] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	static const unsigned int shuffled[EXPORT_TEST_SAMPLES] = { 6, 3, 7, 0, 5, 2, 4, 1 };
	uint8_t *pb1, *pb2;
	char *f1, *f2;
	size_t pb1_len, pb2_len, f1_len, f2_len;
	bool same_pb, same_folded;

	CHECK_U64(export_bytes(forward, &pb1, &pb1_len, &f1, &f1_len), 0);
	if (export_bytes(shuffled, &pb2, &pb2_len, &f2, &f2_len)) {
		free(pb1);
		free(f1);
		CHECK(!"export_bytes failed");
	}
	same_pb = pb1_len == pb2_len && !memcmp(pb1, pb2, pb1_len);
	same_folded = f1_len == f2_len && !memcmp(f1, f2, f1_len);
	free(pb1);
	free(pb2);
	free(f1);
	free(f2);
	CHECK(same_pb);
	CHECK(same_folded);
}

/* A failing stream is reported, not ignored. */
TEST(pprof_write_error)
{
	if (test__no_dev_full())
		SKIP("%s", test__no_dev_full());
	CHECK_U64(export_test_write_full(pprof__write), -ENOSPC);
}

char *export_test_string(export_write_fn write, const struct profile *p, size_t *lenp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return NULL;
	err = write(p, f);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	if (lenp)
		*lenp = len;
	return buf;
}

int export_test_write_full(export_write_fn write)
{
	struct profile *p = export_test_profile(NULL);
	FILE *f = fopen("/dev/full", "w");
	int err = 1;

	if (p && f) {
		setvbuf(f, NULL, _IONBF, 0);
		err = write(p, f);
	}
	if (f)
		fclose(f);
	profile__free(p);
	return err;
}

/* pprof takes mapping[0] for the main binary, whatever the leaf's mapping is. */
TEST(pprof_main_binary_first)
{
	const struct profile_frame *frames[] = { &f_sys, &f_unres, &f_main };
	struct profile_sample s = {
		.pid = 1, .tid = 1, .frames = frames, .nr_frames = 3, .count = 1
	};
	struct profile *p = profile__new(99);
	Perftools__Profiles__Profile *pp;

	CHECK(p && profile__add_sample(p, &s));
	pp = encode_and_unpack(p);
	profile__free(p);
	CHECK(pp && pp->n_mapping == 3);
	CHECK_U64(pp->mapping[0]->id, 1);
	CHECK_STR(str_at(pp, pp->mapping[0]->filename), "/usr/bin/app");
	/* The others keep their first-use order: the kernel, then libfoo. */
	CHECK_STR(str_at(pp, pp->mapping[1]->filename), "[kernel.kallsyms]");
	CHECK_STR(str_at(pp, pp->mapping[2]->filename), "/usr/lib/libfoo.so");
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

/* A JavaScript frame, read from V8, is in a mapping of its own: "[js]". */
TEST(pprof_js_mapping)
{
	const struct profile_frame f_js = {
		.address = 0x00fe000000000018,
		.source = FRAME_JS,
		FRAME_LINE(.name = "crunch", .system_name = "crunch", .filename = "/w/split.js",
			   .line = 15),
	};
	const struct profile_frame *frames[] = { &f_js, &f_main };
	struct profile_sample s = {
		.pid = 1, .tid = 1, .frames = frames, .nr_frames = 2, .count = 1
	};
	struct profile *p = profile__new(99);
	Perftools__Profiles__Profile *pp;
	const Perftools__Profiles__Mapping *m = NULL;
	const Perftools__Profiles__Location *js = NULL;

	CHECK(p && profile__add_sample(p, &s));
	pp = encode_and_unpack(p);
	profile__free(p);
	CHECK(pp && pp->n_mapping == 2 && pp->n_location == 2);
	for (size_t i = 0; i < pp->n_location; i++)
		if (pp->location[i]->address == f_js.address)
			js = pp->location[i];
	CHECK(js && js->n_line == 1 && js->line[0]->line == 15);
	for (size_t i = 0; i < pp->n_mapping; i++)
		if (pp->mapping[i]->id == js->mapping_id)
			m = pp->mapping[i];
	CHECK(m && m->has_functions && m->memory_start <= js->address &&
	      js->address < m->memory_limit);
	CHECK_STR(str_at(pp, m->filename), "[js]");
	/* The program's own mapping stays the first. */
	CHECK_STR(str_at(pp, pp->mapping[0]->filename), "/usr/bin/app");
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

/*
 * Labels a program gave its samples (a goroutine's pprof labels): one
 * string label each, beside ours, as go tool pprof -tags lists them; a
 * sample without them has ours only.
 */
TEST(pprof_program_labels)
{
	const struct profile_frame *frames[] = { &f_compute, &f_main };
	struct profile_sample with = {
		.pid = 1,
		.tid = 1,
		.frames = frames,
		.nr_frames = 2,
		.count = 3,
		.labels = "handler=checkout\nuser=a b=c\n",
	};
	struct profile_sample without = with;
	struct profile *p = profile__new(99);
	Perftools__Profiles__Profile *pp;
	const Perftools__Profiles__Sample *ls, *nl;
	const Perftools__Profiles__Label *l;

	without.labels = NULL;
	without.tid = 2;
	CHECK(p && profile__add_sample(p, &with) && profile__add_sample(p, &without));
	pp = encode_and_unpack(p);
	profile__free(p);
	CHECK(pp && pp->n_sample == 2);
	/* Whichever order the samples were written in: thread 1's has the labels. */
	ls = pp->sample[0];
	nl = pp->sample[1];
	if ((l = label_by_key(pp, ls, "tid")) && l->num != 1)
		ls = pp->sample[1], nl = pp->sample[0];
	CHECK_U64(ls->n_label, 2 + 2); /* pid, tid: no names given */
	CHECK((l = label_by_key(pp, ls, "handler")) && !l->num);
	CHECK_STR(str_at(pp, l->str), "checkout");
	/* The first '=' ends the key: a value may hold more. */
	CHECK((l = label_by_key(pp, ls, "user")));
	CHECK_STR(str_at(pp, l->str), "a b=c");
	CHECK_U64(nl->n_label, 2);
	CHECK(!label_by_key(pp, nl, "handler"));
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

/* A profile of one on-CPU sample and one interval off CPU of the same stack. */
static struct profile *on_and_off_cpu(enum profile_mode mode)
{
	const struct profile_frame *frames[] = { &f_compute, &f_main };
	struct profile_sample on = {
		.pid = 1, .tid = 1, .frames = frames, .nr_frames = 2, .count = 3
	};
	struct profile_sample off = on;
	struct profile *p = profile__new(100);

	off.offcpu = true;
	off.count = 2;
	off.offcpu_ns = 70000000;
	if (!p || !profile__add_sample(p, &on) || !profile__add_sample(p, &off)) {
		profile__free(p);
		return NULL;
	}
	p->mode = mode;
	profile__sort(p);
	return p;
}

/* Each mode's sample types, default type and values, as pprof reads them. */
TEST(pprof_offcpu_and_wall_values)
{
	struct profile *p = on_and_off_cpu(PROFILE_OFFCPU);
	Perftools__Profiles__Profile *pp;

	CHECK(p);
	pp = encode_and_unpack(p);
	profile__free(p);
	CHECK(pp && pp->n_sample_type == 3 && pp->n_sample == 2);
	CHECK_STR(str_at(pp, pp->sample_type[1]->type), "cpu");
	CHECK_STR(str_at(pp, pp->sample_type[2]->type), "offcpu");
	CHECK_STR(str_at(pp, pp->sample_type[2]->unit), "nanoseconds");
	CHECK_STR(str_at(pp, pp->default_sample_type), "offcpu");
	/* Sorted: on CPU first. 3 samples at 100 Hz are 30 ms of cpu. */
	CHECK(pp->sample[0]->n_value == 3 && pp->sample[1]->n_value == 3);
	CHECK_U64(pp->sample[0]->value[0], 3);
	CHECK_U64(pp->sample[0]->value[1], 30000000);
	CHECK_U64(pp->sample[0]->value[2], 0);
	CHECK_U64(pp->sample[1]->value[0], 2);
	CHECK_U64(pp->sample[1]->value[1], 0);
	CHECK_U64(pp->sample[1]->value[2], 70000000);
	perftools__profiles__profile__free_unpacked(pp, NULL);

	p = on_and_off_cpu(PROFILE_WALL);
	CHECK(p);
	pp = encode_and_unpack(p);
	profile__free(p);
	CHECK(pp && pp->n_sample_type == 2 && pp->n_sample == 2);
	CHECK_STR(str_at(pp, pp->sample_type[1]->type), "wall");
	CHECK_STR(str_at(pp, pp->default_sample_type), "wall");
	CHECK_U64(pp->sample[0]->value[1], 30000000);
	CHECK_U64(pp->sample[1]->value[1], 70000000);
	perftools__profiles__profile__free_unpacked(pp, NULL);
}

/* Whether any string of @pp's table is @s. */
static bool has_string(const Perftools__Profiles__Profile *pp, const char *s)
{
	for (size_t i = 0; i < pp->n_string_table; i++)
		if (!strcmp(pp->string_table[i], s))
			return true;
	return false;
}

/*
 * An allocation profile is read as Go's heap profiles are: objects and
 * bytes allocated, then live at the end (inuse, the default), the period
 * the sampling rate in bytes of "space"; each sample labelled with its
 * kind, "heap" or "mmap". A time profile has no "kind" at all.
 */
TEST(pprof_alloc_values)
{
	static const char *const types[4][2] = {
		{ "alloc_objects", "count" },
		{ "alloc_space", "bytes" },
		{ "inuse_objects", "count" },
		{ "inuse_space", "bytes" },
	};
	struct profile *p = export_test_profile(NULL);
	Perftools__Profiles__Profile *pp;
	size_t mmaps = 0, heaps = 0;
	bool values = true, kinds = true;

	CHECK(p);
	p->mode = PROFILE_ALLOC;
	p->alloc_rate = 524288;
	/* Every figure its own, past 32 bits; the last sample is mmap's. */
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct profile_sample *s = &p->samples[i];

		s->alloc = (struct profile_alloc){
			.kind = i == p->nr_samples - 1 ? ALLOC_MMAP : ALLOC_HEAP,
			.blocks = 1000 + i,
			.bytes = (5000000000ULL << 1) + i,
			.end_blocks = 10 + i,
			.end_bytes = 5000000000ULL + i,
		};
		if (s->alloc.kind == ALLOC_HEAP) {
			p->stats.alloc_bytes += s->alloc.bytes;
			p->stats.alloc_blocks += s->alloc.blocks;
		}
	}
	pp = encode_and_unpack(p);
	CHECK(pp && pp->n_sample_type == 4 && pp->period_type);
	for (int i = 0; i < 4; i++) {
		CHECK_STR(str_at(pp, pp->sample_type[i]->type), types[i][0]);
		CHECK_STR(str_at(pp, pp->sample_type[i]->unit), types[i][1]);
	}
	CHECK_STR(str_at(pp, pp->default_sample_type), "inuse_space");
	CHECK_STR(str_at(pp, pp->period_type->type), "space");
	CHECK_STR(str_at(pp, pp->period_type->unit), "bytes");
	CHECK_U64(pp->period, 524288);
	/* The summary, in comments: an allocation profile's. */
	CHECK(pp->n_comment > 0);
	CHECK_STR(str_at(pp, pp->comment[0]),
		  "allocated: 70000000021 bytes in 7021 blocks over 5.0 s (estimated)");
	CHECK_U64(pp->n_sample, p->nr_samples);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *ps = pp->sample[i];
		const struct profile_alloc *a = &p->samples[i].alloc;
		const Perftools__Profiles__Label *l = label_by_key(pp, ps, "kind");

		values = values && ps->n_value == 4 && (uint64_t)ps->value[0] == a->blocks &&
			 (uint64_t)ps->value[1] == a->bytes &&
			 (uint64_t)ps->value[2] == a->end_blocks &&
			 (uint64_t)ps->value[3] == a->end_bytes;
		kinds = kinds && l && !l->num &&
			!strcmp(str_at(pp, l->str), a->kind == ALLOC_MMAP ? "mmap" : "heap");
		if (l && !strcmp(str_at(pp, l->str), "mmap"))
			mmaps++;
		else if (l)
			heaps++;
	}
	perftools__profiles__profile__free_unpacked(pp, NULL);
	CHECK(values);
	CHECK(kinds);
	CHECK_U64(mmaps, 1);
	CHECK_U64(heaps, EXPORT_TEST_SAMPLES - 1);

	p->mode = PROFILE_CPU;
	pp = encode_and_unpack(p);
	profile__free(p);
	CHECK(pp && pp->n_sample == EXPORT_TEST_SAMPLES && pp->sample[0]->n_label >= 4);
	CHECK(has_string(pp, "comm"));
	CHECK(!has_string(pp, "kind"));
	for (size_t i = 0; i < pp->n_sample; i++)
		kinds = kinds && !label_by_key(pp, pp->sample[i], "kind");
	perftools__profiles__profile__free_unpacked(pp, NULL);
	CHECK(kinds);
}
