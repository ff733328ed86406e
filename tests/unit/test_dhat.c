// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/profile.h"
#include "common/strset.h"
#include "export/dhat.h"
#include "export/export.h"
#include "export_test.h"
#include "test.h"

static const struct profile_mapping m_libc = {
	.start = 0x7f0000000000,
	.limit = 0x7f0000100000,
	.filename = "/usr/lib/x86_64-linux-gnu/libc.so.6",
	.has_functions = true,
};

static const struct profile_mapping m_app = {
	.start = 0x400000,
	.limit = 0x402000,
	.filename = "/usr/bin/app",
	.has_functions = true,
	.main_binary = true,
};

static const struct profile_mapping m_libfoo = {
	.start = 0x7f0000200000,
	.limit = 0x7f0000240000,
	.filename = "/usr/lib/libfoo.so",
};

/* malloc, named by its symbol only: "(in OBJECT)". */
static const struct profile_frame f_malloc = {
	.address = 0x7f0000001000,
	.mapping = &m_libc,
	.source = FRAME_SYMBOL,
	FRAME_LINE(.name = "malloc", .system_name = "malloc"),
};

/* fill() inlined into site70() at one address: two entries, innermost first. */
static const struct profile_line site_lines[] = {
	{ .name = "fill", .system_name = "fill", .filename = "/src/app.c", .line = 12 },
	{ .name = "site70", .system_name = "site70", .filename = "/src/app.c", .line = 30 },
};

static const struct profile_frame f_site = {
	.address = 0x401136,
	.mapping = &m_app,
	.source = FRAME_LINES,
	.lines = site_lines,
	.nr_lines = 2,
};

static const struct profile_frame f_main = {
	.address = 0x401200,
	.mapping = &m_app,
	.source = FRAME_LINES,
	FRAME_LINE(.name = "main", .system_name = "main", .filename = "/src/app.c", .line = 40),
};

static const struct profile_frame f_unres = {
	.address = 0x7f0000201234,
	.mapping = &m_libfoo,
	.source = FRAME_NO_SYMBOL,
	FRAME_LINE(.name = "libfoo.so+0x1234"),
};

static const struct profile_frame f_nomap = {
	.address = 0xdeadbeef,
	.source = FRAME_NO_MAPPING,
	FRAME_LINE(.name = "[unknown]"),
};

static const struct profile_frame f_mmap = {
	.address = 0x7f0000002000,
	.mapping = &m_libc,
	.source = FRAME_SYMBOL,
	FRAME_LINE(.name = "mmap64", .system_name = "mmap64"),
};

/* A name with a tab, a quote and a byte that is not UTF-8. */
static const struct profile_frame f_odd = {
	.address = 0x401300,
	.mapping = &m_app,
	.source = FRAME_SYMBOL,
	FRAME_LINE(.name = "odd\t\"name\"\xff", .system_name = "odd"),
};

struct alloc_sample {
	uint32_t pid, tid;
	const char *process, *cmdline;
	const struct profile_frame *frames[6]; /* leaf first, NULL-terminated */
	struct profile_alloc alloc;
	bool truncated;
};

#define NR_SAMPLES 5

static const struct alloc_sample samples[NR_SAMPLES] = {
	{ .pid = 100,
	  .tid = 100,
	  .process = "app",
	  .cmdline = "app --run",
	  .frames = { &f_malloc, &f_site, &f_main },
	  .alloc = { .bytes = 700,
		     .blocks = 7,
		     .max_bytes = 300,
		     .max_blocks = 3,
		     .gmax_bytes = 200,
		     .gmax_blocks = 2,
		     .end_bytes = 100,
		     .end_blocks = 1,
		     .lifetime_ns = 1234567 } },
	/* Another thread, the same stack: one PP, the figures added up. */
	{ .pid = 100,
	  .tid = 101,
	  .process = "app",
	  .cmdline = "app --run",
	  .frames = { &f_malloc, &f_site, &f_main },
	  .alloc = { .bytes = 70,
		     .blocks = 1,
		     .max_bytes = 70,
		     .max_blocks = 1,
		     .end_bytes = 70,
		     .end_blocks = 1,
		     .lifetime_ns = 1000 } },
	{ .pid = 100,
	  .tid = 100,
	  .process = "app",
	  .cmdline = "app --run",
	  .frames = { &f_malloc, &f_unres, &f_nomap },
	  .alloc = { .bytes = 300,
		     .blocks = 3,
		     .max_bytes = 100,
		     .max_blocks = 1,
		     .lifetime_ns = 499 } },
	/* Anonymous mmaps are not heap blocks: left out. */
	{ .pid = 100,
	  .tid = 100,
	  .process = "app",
	  .cmdline = "app --run",
	  .frames = { &f_mmap, &f_main },
	  .alloc = { .kind = ALLOC_MMAP,
		     .bytes = 1 << 20,
		     .blocks = 1,
		     .end_bytes = 1 << 20,
		     .end_blocks = 1 } },
	/* Another process, which allocated less, without a command line. */
	{ .pid = 200,
	  .tid = 200,
	  .process = "other",
	  .cmdline = NULL,
	  .frames = { &f_malloc, &f_main },
	  .alloc = { .bytes = 10,
		     .blocks = 1,
		     .max_bytes = 10,
		     .max_blocks = 1,
		     .lifetime_ns = 500 } },
};

static struct profile *alloc_profile(const struct alloc_sample *table, size_t n,
				     const unsigned int *order)
{
	struct profile *p = profile__new(0);

	if (!p)
		return NULL;
	p->mode = PROFILE_ALLOC;
	p->alloc_rate = 1;
	p->duration = 2000000000;
	p->alloc_gmax_ns = 1500400;
	for (size_t i = 0; i < n; i++) {
		const struct alloc_sample *t = &table[order ? order[i] : i];
		struct profile_sample s = {
			.pid = t->pid,
			.tid = t->tid,
			.process_name = strset__add(p->strings, t->process),
			.thread_name = strset__add(p->strings, t->process),
			.cmdline = t->cmdline ? strset__add(p->strings, t->cmdline) : NULL,
			.frames = (const struct profile_frame **)t->frames,
			.count = t->alloc.blocks,
			.truncated = t->truncated,
			.alloc = t->alloc,
		};

		while (s.nr_frames < 6 && t->frames[s.nr_frames])
			s.nr_frames++;
		if (!s.process_name || (t->cmdline && !s.cmdline) || !profile__add_sample(p, &s)) {
			profile__free(p);
			return NULL;
		}
	}
	return p;
}

static char *dhat_string(const struct profile *p)
{
	return export_test_string(dhat__write, p, NULL);
}

static const char expected[] =
	"{\"dhatFileVersion\":2\n"
	",\"mode\":\"heap\",\"verb\":\"Allocated\"\n"
	",\"bklt\":true,\"bkacc\":false\n"
	",\"tu\":\"\\u00b5s\",\"Mtu\":\"s\"\n"
	",\"tuth\":1\n"
	",\"cmd\":\"app --run\"\n"
	",\"pid\":100\n"
	",\"te\":2000000\n"
	",\"tg\":1500\n"
	",\"pps\":\n"
	" [{\"tb\":770,\"tbk\":8,\"tl\":1236,\"mb\":370,\"mbk\":4,\"gb\":200,\"gbk\":2,\"eb\":170,"
	"\"ebk\":2,\"fs\":[1,2,3,4]}\n"
	" ,{\"tb\":10,\"tbk\":1,\"tl\":1,\"mb\":10,\"mbk\":1,\"gb\":0,\"gbk\":0,\"eb\":0,\"ebk\":0,"
	"\"fs\":[1,4]}\n"
	" ,{\"tb\":300,\"tbk\":3,\"tl\":0,\"mb\":100,\"mbk\":1,\"gb\":0,\"gbk\":0,\"eb\":0,\"ebk\":0,"
	"\"fs\":[1,5,6]}]\n"
	",\"ftbl\":\n"
	" [\"[root]\"\n"
	" ,\"0x7F0000001000: malloc (in /usr/lib/x86_64-linux-gnu/libc.so.6)\"\n"
	" ,\"0x401136: fill (app.c:12)\"\n"
	" ,\"0x401136: site70 (app.c:30)\"\n"
	" ,\"0x401200: main (app.c:40)\"\n"
	" ,\"0x7F0000201234: ??? (in /usr/lib/libfoo.so)\"\n"
	" ,\"0xDEADBEEF: ???\"]\n"
	"}\n";

/* Print where @got first differs from @want, for a failed comparison. */
static void show_diff(const char *want, const char *got)
{
	size_t i = 0;

	while (want[i] && want[i] == got[i])
		i++;
	fprintf(stderr, "#   differs at byte %zu:\n#   want: %.60s\n#   got:  %.60s\n", i, want + i,
		got + i);
}

/*
 * The whole file: header figures (te and tg in µs, rounded), one PP per
 * stack with the two threads' figures added, PPs in the order of their
 * frames' text, fs innermost first, inline functions an entry each, the
 * frame table in first-use order, the mmap sample's frame absent.
 */
TEST(dhat_whole_file)
{
	struct profile *p = alloc_profile(samples, NR_SAMPLES, NULL);
	char *got;

	CHECK(p);
	got = dhat_string(p);
	profile__free(p);
	CHECK(got);
	if (strcmp(got, expected))
		show_diff(expected, got);
	CHECK(!strcmp(got, expected));
	free(got);
}

/* The same samples in any order give the same bytes. */
TEST(dhat_deterministic)
{
	static const unsigned int orders[][NR_SAMPLES] = {
		{ 4, 3, 2, 1, 0 },
		{ 2, 0, 4, 1, 3 },
	};

	for (size_t i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		struct profile *p = alloc_profile(samples, NR_SAMPLES, orders[i]);
		char *got;
		bool same;

		CHECK(p);
		got = dhat_string(p);
		profile__free(p);
		CHECK(got);
		same = !strcmp(got, expected);
		if (!same)
			show_diff(expected, got);
		free(got);
		CHECK(same);
	}
}

/* The mmap sample's frame and figures are nowhere, though its process is the main one. */
TEST(dhat_mmap_left_out)
{
	struct profile *p = alloc_profile(samples, NR_SAMPLES, NULL);
	char *got;

	CHECK(p);
	got = dhat_string(p);
	profile__free(p);
	CHECK(got);
	/* The precondition: the heap frames are there. */
	CHECK(strstr(got, "malloc (in /usr/lib/x86_64-linux-gnu/libc.so.6)"));
	CHECK(!strstr(got, "mmap64"));
	CHECK(!strstr(got, "1048576"));
	free(got);
}

/* A profile of mmaps only still loads: no PPs, the frame table "[root]" alone. */
TEST(dhat_no_heap_samples)
{
	struct profile *p = alloc_profile(&samples[3], 1, NULL);
	char *got;

	CHECK(p);
	got = dhat_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(strstr(got, ",\"cmd\":\"\"\n,\"pid\":0\n"));
	CHECK(strstr(got, ",\"pps\":\n []\n,\"ftbl\":\n [\"[root]\"]\n}\n"));
	free(got);
}

/*
 * Escaping: quotes, backslashes and control characters as JSON wants them,
 * bytes that are not UTF-8 as U+FFFD, UTF-8 kept; a truncated stack ends in
 * "[truncated]", a stack without frames is "[unknown]".
 */
TEST(dhat_escaping_and_special_frames)
{
	static const struct alloc_sample odd[] = {
		{ .pid = 7,
		  .tid = 7,
		  .process = "x",
		  .cmdline = "a \"q\" \\ b\n\x01\xff \xc3\xa9",
		  .frames = { &f_odd },
		  .alloc = { .bytes = 5, .blocks = 1 },
		  .truncated = true },
		{ .pid = 7,
		  .tid = 7,
		  .process = "x",
		  .cmdline = NULL,
		  .frames = { NULL },
		  .alloc = { .bytes = 1, .blocks = 1 } },
	};
	struct profile *p = alloc_profile(odd, 2, NULL);
	char *got;

	CHECK(p);
	got = dhat_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(strstr(got, ",\"cmd\":\"a \\\"q\\\" \\\\ b\\u000a\\u0001\\ufffd \xc3\xa9\"\n"));
	CHECK(strstr(got, ",\"0x401300: odd\\u0009\\\"name\\\"\\ufffd (in /usr/bin/app)\""));
	CHECK(strstr(got, ",\"fs\":[1,2]}"));
	CHECK(strstr(got, " [\"[root]\"\n ,\"0x401300: odd"));
	CHECK(strstr(got, "\"\n ,\"[truncated]\"\n ,\"[unknown]\"]\n}\n"));
	free(got);
}

/* A profile that is not of allocations is refused, and nothing is written. */
TEST(dhat_refuses_cpu_profile)
{
	struct profile *p = export_test_profile(NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err, export_err;

	CHECK(p);
	f = open_memstream(&buf, &len);
	CHECK(f);
	err = dhat__write(p, f);
	export_err = export__write(EXPORT_DHAT, p, f, "x.dhat.json", NULL);
	fclose(f);
	profile__free(p);
	free(buf);
	CHECK_U64(err, (uint64_t)-EINVAL);
	CHECK_U64(export_err, (uint64_t)-EINVAL);
	CHECK_U64(len, 0);
}

TEST(dhat_format_names)
{
	CHECK_U64(export_format__from_name("dhat"), EXPORT_DHAT);
	CHECK_STR(export_format__name(EXPORT_DHAT), "dhat");
	CHECK_U64(export_format__from_path("heap.dhat.json"), EXPORT_DHAT);
	/* The precondition: .json alone is still Firefox's. */
	CHECK_U64(export_format__from_path("heap.json"), EXPORT_FIREFOX);
	CHECK(strstr(export_format__names(), "dhat"));
}

/* A full disk is reported, not ignored. */
TEST(dhat_write_error)
{
	struct profile *p;
	FILE *f;
	int err;

	if (test__no_dev_full())
		SKIP("%s", test__no_dev_full());
	p = alloc_profile(samples, NR_SAMPLES, NULL);
	CHECK(p);
	f = fopen("/dev/full", "w");
	if (!f) {
		profile__free(p);
		CHECK(f);
	}
	setvbuf(f, NULL, _IONBF, 0);
	err = dhat__write(p, f);
	fclose(f);
	profile__free(p);
	CHECK_U64(err, (uint64_t)-ENOSPC);
}
