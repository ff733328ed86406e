// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/profile.h"
#include "common/strset.h"
#include "export/folded.h"
#include "export_test.h"
#include "test.h"

#define GOLDEN_DIR "tests/golden/"

/* folded__write() output in a malloc()ed string; NULL on failure. */
static char *folded_string(const struct profile *p)
{
	return export_test_string(folded__write, p, NULL);
}

static char *read_file(const char *path)
{
	char *buf = NULL;
	size_t len = 0, n;
	FILE *in = fopen(path, "r");
	FILE *out;
	char chunk[4096];

	if (!in)
		return NULL;
	out = open_memstream(&buf, &len);
	if (!out) {
		fclose(in);
		return NULL;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
		fwrite(chunk, 1, n, out);
	fclose(in);
	fclose(out);
	return buf;
}

/*
 * Compare @got with the golden file @name and report the first differing
 * line as `diff -u` would show it. UPDATE_GOLDEN=1 rewrites the file instead.
 */
static bool golden_equal(const char *name, const char *got, const char *file, int line)
{
	char path[256];
	const char *e, *g;
	char *want;
	int nr = 1;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		if (!f || fputs(got, f) == EOF || fclose(f)) {
			test__fail(file, line, "cannot write '%s'", path);
			return false;
		}
		return true;
	}
	want = read_file(path);
	if (!want) {
		test__fail(file, line, "cannot read '%s' (tests run from the repository root)",
			   path);
		return false;
	}
	for (e = want, g = got; *e || *g; nr++) {
		size_t elen = strcspn(e, "\n"), glen = strcspn(g, "\n");

		if (elen != glen || memcmp(e, g, elen) || e[elen] != g[glen]) {
			test__fail(file, line, "%s differs at line %d:\n#   -%.*s\n#   +%.*s", path,
				   nr, (int)elen, *e ? e : "(end of file)", (int)glen,
				   *g ? g : "(end of output)");
			free(want);
			return false;
		}
		e += elen + (e[elen] == '\n');
		g += glen + (g[glen] == '\n');
	}
	free(want);
	return true;
}

TEST(folded_golden_basic)
{
	struct profile *p = export_test_profile(NULL);
	char *got;

	CHECK(p);
	got = folded_string(p);
	profile__free(p);
	CHECK(got);
	golden_equal("basic.folded", got, __FILE__, __LINE__);
	free(got);
}

/* Lines are distinct and in memcmp order, as `LC_ALL=C sort -u` leaves them. */
TEST(folded_sorted)
{
	struct profile *p = export_test_profile(NULL);
	char *got, *prev, *cur;
	bool sorted = true;

	CHECK(p);
	got = folded_string(p);
	profile__free(p);
	CHECK(got && *got);
	prev = got;
	for (cur = strchr(got, '\n') + 1; *cur; cur = strchr(cur, '\n') + 1) {
		size_t plen = strchr(prev, '\n') - prev, clen = strchr(cur, '\n') - cur;
		int c = memcmp(prev, cur, plen < clen ? plen : clen);

		if (c > 0 || (c == 0 && plen >= clen))
			sorted = false;
		prev = cur;
	}
	free(got);
	CHECK(sorted);
}

static const struct profile_frame f_x1 = { .address = 0x1000,
					   FRAME_LINE(.name = "x", .system_name = "x") };
/* Another address in the same function: the same frame name in folded output. */
static const struct profile_frame f_x2 = { .address = 0x1008,
					   FRAME_LINE(.name = "x", .system_name = "x") };
static const struct profile_frame f_semi = { .address = 0x2000, FRAME_LINE(.name = "a;b") };
static const struct profile_frame f_ctrl = { .address = 0x3000,
					     FRAME_LINE(.name = "tab\there\nnl\r") };
static const struct profile_frame f_num = { .address = 0x4000, FRAME_LINE(.name = "foo 12") };
static const struct profile_frame f_dec = { .address = 0x5000, FRAME_LINE(.name = "bar  1.5") };
static const struct profile_frame f_ver = { .address = 0x6000, FRAME_LINE(.name = "v1.2.3 x") };
static const struct profile_frame f_dots = { .address = 0x7000, FRAME_LINE(.name = "baz 1.2.3") };
static const struct profile_frame f_kern = { .address = 0x8000,
					     .kernel = true,
					     FRAME_LINE(.name = "k;x") };
static const struct profile_frame f_knum = { .address = 0x9000,
					     .kernel = true,
					     FRAME_LINE(.name = "kq 7") };

static int add(struct profile *p, uint32_t pid, uint32_t tid, const char *process,
	       const char *thread, uint64_t count, const struct profile_frame **frames, uint32_t nr)
{
	struct profile_sample s = {
		.pid = pid,
		.tid = tid,
		.process_name = process ? strset__add(p->strings, process) : NULL,
		.thread_name = strset__add(p->strings, thread),
		.nr_frames = nr,
		.frames = frames,
		.count = count,
	};

	return profile__add_sample(p, &s) ? 0 : -1;
}

TEST(folded_sanitize)
{
	/* Leaf first. */
	const struct profile_frame *deep[] = { &f_kern, &f_num, &f_ctrl, &f_semi };
	const struct profile_frame *num[] = { &f_num };
	const struct profile_frame *dec[] = { &f_dec, &f_ver };
	const struct profile_frame *dots[] = { &f_dots };
	const struct profile_frame *knum[] = { &f_knum };
	struct profile *p = profile__new(99);
	char *got;

	CHECK(p);
	CHECK(!add(p, 1, 1, "my\tproc name", "t", 1, deep, 4));
	CHECK(!add(p, 1, 1, "my\tproc name", "t", 2, num, 1));
	CHECK(!add(p, 1, 1, "my\tproc name", "t", 3, dec, 2));
	CHECK(!add(p, 1, 1, "my\tproc name", "t", 4, dots, 1));
	CHECK(!add(p, 1, 1, "my\tproc name", "t", 5, knum, 1));
	CHECK(!add(p, 2, 2, NULL, "t", 6, NULL, 0));
	got = folded_string(p);
	profile__free(p);
	CHECK(got);
	CHECK_STR(got, "[unknown];[unknown] 6\n"
		       "my_proc_name;a:b;tab here nl ;foo_12;k:x_[k] 1\n"
		       "my_proc_name;baz 1.2.3 4\n"
		       "my_proc_name;foo_12 2\n"
		       "my_proc_name;kq_7_[k] 5\n"
		       "my_proc_name;v1.2.3 x;bar _1.5 3\n");
	free(got);
}

static int folded_cmdline(const struct profile *p, FILE *out)
{
	return folded__write_root(p, out, PROFILE_ROOT_CMDLINE);
}

static int folded_no_root(const struct profile *p, FILE *out)
{
	return folded__write_root(p, out, PROFILE_ROOT_NONE);
}

/*
 * Rooted at command lines, the two "app" processes stay apart (the golden
 * file merges them); their spaces are kept, but not before a trailing
 * number, which would read as a count. "my app", whose command line is
 * unknown, keeps its name. Without roots, all processes merge.
 */
TEST(folded_root_frame)
{
	struct profile *p = export_test_profile(NULL);
	char *cmdline = p ? export_test_string(folded_cmdline, p, NULL) : NULL;
	char *none = p ? export_test_string(folded_no_root, p, NULL) : NULL;

	profile__free(p);
	CHECK(cmdline && none);
	CHECK_STR(
		cmdline,
		"app --batch_7;main;compute 7\n"
		"app --serve;[unknown] 1\n"
		"app --serve;main;[unknown] 2\n"
		"app --serve;main;compute 5\n"
		"app --serve;main;compute;libfoo.so+0x1234;entry_SYSCALL_64_[k];do_syscall_64_[k] 3\n"
		"app --serve;main;ns::work(int) 1\n"
		"my app;main;compute 4\n"
		"my app;main;entry_SYSCALL_64_[k];do_syscall_64_[k] 6\n");
	CHECK_STR(none, "[unknown] 1\n"
			"main;[unknown] 2\n"
			"main;compute 16\n"
			"main;compute;libfoo.so+0x1234;entry_SYSCALL_64_[k];do_syscall_64_[k] 3\n"
			"main;entry_SYSCALL_64_[k];do_syscall_64_[k] 6\n"
			"main;ns::work(int) 1\n");
	free(cmdline);
	free(none);
}

TEST(folded_merge_by_process_name)
{
	const struct profile_frame *x1[] = { &f_x1 }, *x2[] = { &f_x2 };
	const struct profile_frame *x1_semi[] = { &f_x1, &f_semi };
	struct profile *p = profile__new(99);
	char *got;

	CHECK(p);
	/* Different pids, tids, thread names and frame pointers; same names. */
	CHECK(!add(p, 10, 10, "p", "a", 1, x1, 1));
	CHECK(!add(p, 20, 21, "p", "b", 2, x1, 1));
	CHECK(!add(p, 10, 10, "p", "a", 8, x2, 1));
	/* Another process name, another stack: lines of their own. */
	CHECK(!add(p, 30, 30, "q", "a", 4, x1, 1));
	CHECK(!add(p, 10, 11, "p", "c", 16, x1_semi, 2));
	got = folded_string(p);
	profile__free(p);
	CHECK(got);
	CHECK_STR(got, "p;a:b;x 16\n"
		       "p;x 11\n"
		       "q;x 4\n");
	free(got);
}

/* Two functions inlined into outer(), innermost first, as the symbolizer gives them. */
static const struct profile_line inlined_lines[] = {
	{ .name = "leaf", .system_name = "leaf", .filename = "/src/a.c", .line = 3 },
	{ .name = "mid", .system_name = "mid", .filename = "/src/a.c", .line = 9 },
	{ .name = "outer", .system_name = "outer", .filename = "/src/a.c", .line = 20 },
};
static const struct profile_frame f_inlined = {
	.address = 0xa000, .lines = inlined_lines, .nr_lines = 3, .source = FRAME_LINES
};
static const struct profile_frame f_jit = { .address = 0xb000,
					    .source = FRAME_JIT,
					    FRAME_LINE(.name = "LazyCompile:*hot") };

TEST(folded_inline_and_jit_frames)
{
	const struct profile_frame *stack[] = { &f_inlined, &f_jit, &f_x1 };
	struct profile *p = profile__new(99);
	char *got;

	CHECK(p);
	CHECK(!add(p, 1, 1, "p", "t", 7, stack, 3));
	got = folded_string(p);
	profile__free(p);
	CHECK(got);
	/* Each inlined function a frame of its own, outer first, as perf script shows them. */
	CHECK_STR(got, "p;x;LazyCompile:*hot_[j];outer;mid_[i];leaf_[i] 7\n");
	free(got);
}

TEST(folded_empty)
{
	struct profile *p = profile__new(99);
	char *got;

	CHECK(p);
	got = folded_string(p);
	profile__free(p);
	CHECK(got);
	CHECK_STR(got, "");
	free(got);
}

/*
 * An allocation profile: each line counts bytes allocated, whatever the
 * number of sampled calls (count). The bytes, count << 32 plus the tid,
 * pass 32 bits and tell the merged samples apart; a stack of anonymous
 * mmap counts its bytes as well (in a recording, under the mmap call).
 */
TEST(folded_alloc_bytes)
{
	struct profile *p = export_test_profile(NULL);
	char *got;

	CHECK(p);
	p->mode = PROFILE_ALLOC;
	p->alloc_rate = 524288;
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct profile_sample *s = &p->samples[i];

		s->alloc.bytes = (s->count << 32) + s->tid;
		s->alloc.blocks = s->count;
		s->alloc.end_bytes = s->tid;
	}
	CHECK_U64(p->samples[7].tid, 202);
	p->samples[7].alloc.kind = ALLOC_MMAP;
	got = folded_string(p);
	profile__free(p);
	CHECK(got);
	CHECK_STR(got, "app;[unknown] 4294967396\n"
		       "app;main;[unknown] 8589934693\n"
		       "app;main;compute 51539607953\n"
		       "app;main;compute;libfoo.so+0x1234;entry_SYSCALL_64_[k];do_syscall_64_[k] "
		       "12884901989\n"
		       "app;main;ns::work(int) 4294967396\n"
		       "my_app;main;compute 17179869384\n"
		       "my_app;main;entry_SYSCALL_64_[k];do_syscall_64_[k] 25769803978\n");
	free(got);
}

/* A failing stream is reported, not ignored. */
TEST(folded_write_error)
{
	if (test__no_dev_full())
		SKIP("%s", test__no_dev_full());
	CHECK_U64(export_test_write_full(folded__write), -ENOSPC);
}
