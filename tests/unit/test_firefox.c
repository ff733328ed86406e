// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/profile.h"
#include "common/strset.h"
#include "export/firefox.h"
#include "export_test.h"
#include "test.h"

/*
 * A JSON checker written apart from the exporter (RFC 8259's grammar, and
 * strings of well-formed UTF-8), so the two cannot share a mistake.
 */
struct json_check {
	const char *p;
	int depth;
};

static bool jc_value(struct json_check *c);

static void jc_space(struct json_check *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
		c->p++;
}

static bool jc_literal(struct json_check *c, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(c->p, word, n))
		return false;
	c->p += n;
	return true;
}

/* One UTF-8 character at c->p (first byte >= 0x80), decoded and range-checked. */
static bool jc_utf8(struct json_check *c)
{
	const unsigned char *s = (const unsigned char *)c->p;
	uint32_t cp, min;
	int n;

	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return false;
	}
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	c->p += n;
	return true;
}

static bool jc_string(struct json_check *c)
{
	if (*c->p++ != '"')
		return false;
	for (;;) {
		unsigned char ch = *c->p;

		if (ch == '"') {
			c->p++;
			return true;
		}
		if (ch < 0x20)
			return false;
		if (ch >= 0x80) {
			if (!jc_utf8(c))
				return false;
			continue;
		}
		c->p++;
		if (ch != '\\')
			continue;
		ch = *c->p++;
		if (ch == 'u') {
			for (int i = 0; i < 4; i++, c->p++)
				if (!strchr("0123456789abcdefABCDEF", *c->p) || !*c->p)
					return false;
		} else if (!ch || !strchr("\"\\/bfnrt", ch)) {
			return false;
		}
	}
}

static bool jc_digits(struct json_check *c)
{
	const char *start = c->p;

	while (*c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > start;
}

static bool jc_number(struct json_check *c)
{
	if (*c->p == '-')
		c->p++;
	if (*c->p == '0')
		c->p++;
	else if (!jc_digits(c))
		return false;
	if (*c->p == '.') {
		c->p++;
		if (!jc_digits(c))
			return false;
	}
	if (*c->p == 'e' || *c->p == 'E') {
		c->p++;
		if (*c->p == '+' || *c->p == '-')
			c->p++;
		if (!jc_digits(c))
			return false;
	}
	return true;
}

/* The members of an object (@close '}') or elements of an array (']'). */
static bool jc_items(struct json_check *c, char close)
{
	c->p++;
	jc_space(c);
	if (*c->p == close) {
		c->p++;
		return true;
	}
	for (;;) {
		if (close == '}') {
			jc_space(c);
			if (!jc_string(c))
				return false;
			jc_space(c);
			if (*c->p++ != ':')
				return false;
		}
		if (!jc_value(c))
			return false;
		jc_space(c);
		if (*c->p == close) {
			c->p++;
			return true;
		}
		if (*c->p++ != ',')
			return false;
	}
}

static bool jc_value(struct json_check *c)
{
	bool ok;

	jc_space(c);
	switch (*c->p) {
	case '{':
	case '[':
		if (++c->depth > 64)
			return false;
		ok = jc_items(c, *c->p == '{' ? '}' : ']');
		c->depth--;
		return ok;
	case '"':
		return jc_string(c);
	case 't':
		return jc_literal(c, "true");
	case 'f':
		return jc_literal(c, "false");
	case 'n':
		return jc_literal(c, "null");
	default:
		return jc_number(c);
	}
}

static bool json_valid(const char *s)
{
	struct json_check c = { s, 0 };

	if (!jc_value(&c))
		return false;
	jc_space(&c);
	return *c.p == '\0';
}

/* firefox__write(), uncompressed and gzipped, as export_write_fn. */
static int write_plain(const struct profile *p, FILE *out)
{
	return firefox__write(p, out, false);
}

static int write_gzipped(const struct profile *p, FILE *out)
{
	return firefox__write(p, out, true);
}

/* firefox__write() output, uncompressed, in a malloc()ed string; NULL on failure. */
static char *firefox_string(const struct profile *p)
{
	return export_test_string(write_plain, p, NULL);
}

/* Do @needles occur in @s in this order (NULL-terminated)? */
static bool in_order(const char *s, const char *const *needles)
{
	for (; *needles; needles++) {
		s = strstr(s, *needles);
		if (!s)
			return false;
		s += strlen(*needles);
	}
	return true;
}

static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0;

	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return n;
}

static const struct profile_mapping m_bin = {
	.start = 0x400000,
	.limit = 0x500000,
	.filename = "/opt/app/bin/app",
	.main_binary = true,
};

static const struct profile_mapping m_kernel = {
	.start = 0xffffffff81000000,
	.limit = 0xffffffff82000000,
	.filename = "[kernel.kallsyms]",
	.kernel = true,
};

static const struct profile_frame f_main = {
	.address = 0x401000,
	.mapping = &m_bin,
	FRAME_LINE(.name = "main", .system_name = "main", .filename = "/src/app.c", .line = 5),
};

/* leaf_helper() inlined into mid_helper(), inlined into compute(): innermost first. */
static const struct profile_line inline_lines[] = {
	{ .name = "leaf_helper", .system_name = "leaf_helper", .filename = "/src/h.h", .line = 12 },
	{ .name = "mid_helper", .system_name = "mid_helper", .filename = "/src/h.h", .line = 20 },
	{ .name = "compute", .system_name = "compute", .filename = "/src/app.c", .line = 30 },
};

static const struct profile_frame f_inline = {
	.address = 0x402000,
	.mapping = &m_bin,
	.lines = inline_lines,
	.nr_lines = 3,
	.source = FRAME_LINES,
};

static const struct profile_frame f_sys = {
	.address = 0xffffffff81001000,
	.mapping = &m_kernel,
	.kernel = true,
	FRAME_LINE(.name = "do_syscall_64", .system_name = "do_syscall_64"),
};

static const struct profile_frame f_jit = {
	.address = 0x7f0000001000,
	.source = FRAME_JIT,
	FRAME_LINE(.name = "JS:foo", .system_name = "JS:foo"),
};

struct small_sample {
	uint32_t tid;
	const char *thread;
	bool truncated, offcpu;
	uint64_t count, times[2];
	const struct profile_frame *frames[3]; /* leaf first, NULL-terminated */
};

static struct profile *build(const struct small_sample *samples, size_t n)
{
	struct profile *p = profile__new(1000);

	if (!p)
		return NULL;
	p->start_time = 1700000000123456789ULL;
	p->duration = 6000000;
	p->mode = PROFILE_OFFCPU;
	p->stats.lost_samples = 2;
	p->stats.truncated = 1;
	p->stats.stack_errors = 3;
	for (size_t i = 0; i < n; i++) {
		const struct small_sample *t = &samples[i];
		struct profile_sample s = {
			.pid = 10,
			.tid = t->tid,
			.process_name = strset__add(p->strings, "app"),
			.thread_name = strset__add(p->strings, t->thread),
			.frames = (const struct profile_frame **)t->frames,
			.count = t->count,
			.times = (uint64_t *)t->times,
			.truncated = t->truncated,
			.offcpu = t->offcpu,
			.offcpu_ns = t->offcpu ? 1000000 : 0,
		};

		while (s.nr_frames < 2 && t->frames[s.nr_frames])
			s.nr_frames++;
		if (!s.process_name || !s.thread_name || !profile__add_sample(p, &s)) {
			profile__free(p);
			return NULL;
		}
	}
	return p;
}

/* Two threads: an inline chain, a truncated kernel stack, an interval off CPU, a JIT frame. */
static const struct small_sample small_samples[] = {
	{ 10, "main", false, false, 2, { 5000000, 1000000 }, { &f_inline, &f_main } },
	{ 10, "main", true, false, 1, { 3000000 }, { &f_sys, &f_main } },
	{ 10, "main", false, true, 1, { 4000123 }, { &f_sys, &f_main } },
	{ 11, "worker", false, false, 1, { 2500000 }, { &f_jit, &f_main } },
};

static const char small_expected[] =
	"{\"meta\":{\"version\":24,\"interval\":1,\"startTime\":1700000000123.456789,"
	"\"shutdownTime\":null,\"processType\":0,\"product\":\"profiler\",\"stackwalk\":1,"
	"\"debug\":0,\"gcpoison\":0,\"asyncstack\":0,\"presymbolicated\":true,"
	"\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"ns\"},\n"
	"\"categories\":[{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"JIT\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Off-CPU\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]}],"
	"\"markerSchema\":[]},\n"
	"\"libs\":[],\"pausedRanges\":[],\"processes\":[],\n"
	"\"threads\":["
	"{\"name\":\"main\",\"processName\":\"app\",\"processType\":\"default\",\"pid\":10,"
	"\"tid\":10,\"registerTime\":0,\"unregisterTime\":null,\n"
	"\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
	"\"category\":4,\"data\":5},\"data\":[\n"
	"[7,0,6,1,4,null],\n"
	"[8,0,6,1,4,null],\n"
	"[9,0,6,1,4,null],\n"
	"[10,0,6,1,4,null]]},\n"
	"\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2,\"threadCPUDelta\":3},"
	"\"data\":[\n"
	"[3,1,0,1000000],\n"
	"[6,3,0,1000000],\n"
	"[8,4.000123,0,0],\n"
	"[3,5,0,1000000]]},\n"
	"\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,\"innerWindowID\":2,"
	"\"implementation\":3,\"line\":4,\"column\":5,\"category\":6,\"subcategory\":7},"
	"\"data\":[\n"
	"[0,false,0,null,5,null,0,0],\n"
	"[1,false,0,null,30,null,0,0],\n"
	"[2,false,0,null,20,null,0,0],\n"
	"[3,false,0,null,12,null,0,0],\n"
	"[4,false,0,null,null,null,4,0],\n"
	"[5,false,0,null,null,null,1,0],\n"
	"[6,false,0,null,null,null,3,0]]},\n"
	"\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[\n"
	"[null,0],\n"
	"[0,1],\n"
	"[1,2],\n"
	"[2,3],\n"
	"[null,4],\n"
	"[4,0],\n"
	"[5,5],\n"
	"[0,5],\n"
	"[7,6]]},\n"
	"\"stringTable\":[\n"
	"\"main (in app)\",\n"
	"\"compute (in app)\",\n"
	"\"mid_helper (in app)\",\n"
	"\"leaf_helper (in app)\",\n"
	"\"[truncated]\",\n"
	"\"do_syscall_64 (in [kernel.kallsyms])\",\n"
	"\"[off-CPU]\",\n"
	"\"lost samples: 2\",\n"
	"\"truncated stacks: 1\",\n"
	"\"stack read errors: 3\",\n"
	"\"processes with unreadable maps: 0\"]},\n"
	"{\"name\":\"worker\",\"processName\":\"app\",\"processType\":\"default\",\"pid\":10,"
	"\"tid\":11,\"registerTime\":0,\"unregisterTime\":null,\n"
	"\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
	"\"category\":4,\"data\":5},\"data\":[]},\n"
	"\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2,\"threadCPUDelta\":3},"
	"\"data\":[\n"
	"[1,2.5,0,1000000]]},\n"
	"\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,\"innerWindowID\":2,"
	"\"implementation\":3,\"line\":4,\"column\":5,\"category\":6,\"subcategory\":7},"
	"\"data\":[\n"
	"[0,false,0,null,5,null,0,0],\n"
	"[1,false,0,null,null,null,2,0]]},\n"
	"\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[\n"
	"[null,0],\n"
	"[0,1]]},\n"
	"\"stringTable\":[\n"
	"\"main (in app)\",\n"
	"\"JS:foo\"]}]}\n";

/*
 * The whole output of a small profile: inline frames outermost first with
 * their lines, rows of several stacks merged in time order, "[truncated]"
 * as the root of a truncated stack, "[off-CPU]" as the leaf of an interval
 * off CPU (no CPU time), categories, and the statistics as markers.
 */
TEST(firefox_small_exact)
{
	struct profile *p = build(small_samples, 4);
	char *got;

	CHECK(p);
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	if (strcmp(got, small_expected)) {
		size_t i = 0;

		while (got[i] && got[i] == small_expected[i])
			i++;
		test__fail(__FILE__, __LINE__, "output differs at byte %zu: '%.60s' != '%.60s'", i,
			   got + i, small_expected + i);
		free(got);
		return;
	}
	CHECK(json_valid(got));
	free(got);
}

/*
 * The profile the other exporters share: threads by (pid, tid), names,
 * modules. A thread's process is named by its command line where it is
 * known, so two "app" processes differ; the thread keeps its own name.
 */
TEST(firefox_threads_and_frames)
{
	static const char *const threads[] = {
		"\"name\":\"app\",\"processName\":\"app --serve\",\"processType\":\"default\","
		"\"pid\":100,\"tid\":100,",
		"\"name\":\"worker\",\"processName\":\"app --serve\",\"processType\":\"default\","
		"\"pid\":100,\"tid\":101,",
		"\"name\":\"my app\",\"processName\":\"my app\",\"processType\":\"default\","
		"\"pid\":200,\"tid\":200,",
		"\"name\":\"io\",\"processName\":\"my app\",\"processType\":\"default\",\"pid\":200,"
		"\"tid\":202,",
		"\"name\":\"app\",\"processName\":\"app --batch 7\",\"processType\":\"default\","
		"\"pid\":300,\"tid\":301,",
		NULL,
	};
	static const char *const names[] = {
		"\"main (in app)\"",
		"\"compute (in app)\"",
		"\"libfoo.so+0x1234 (in libfoo.so)\"",
		"\"entry_SYSCALL_64 (in [kernel.kallsyms])\"",
		"\"do_syscall_64 (in [kernel.kallsyms])\"",
		NULL,
	};
	struct profile *p = export_test_profile(NULL);
	char *got;

	CHECK(p);
	profile__sort(p);
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(json_valid(got));
	CHECK(in_order(got, threads));
	CHECK_U64(count_of(got, "\"processType\":\"default\""), 5);
	CHECK(in_order(got, names));
	/* The markers are on the first thread only. */
	CHECK_U64(count_of(got, "\"lost samples: 2\""), 1);
	CHECK(strstr(got, "\"stack read errors: 3\""));
	CHECK(strstr(got, "\"processes with unreadable maps: 4\""));
	/* The frame without a mapping, and the sample without frames. */
	CHECK(strstr(got, "\"[unknown]\""));
	CHECK(strstr(got, "\"ns::work(int) (in app)\""));
	CHECK(strstr(got, "\"[truncated]\""));
	/* Without times, every row is at 0, ordered by stack: no frames, main;compute x5, truncated. */
	CHECK(strstr(got, "\"data\":[\n[0,0,0,10101010],\n[2,0,0,10101010],\n[2,0,0,10101010],\n"
			  "[2,0,0,10101010],\n[2,0,0,10101010],\n[2,0,0,10101010],\n"
			  "[5,0,0,10101010]]}"));
	free(got);
}

/* Names that JSON must escape, and a module with a ')' in it. */
static const struct profile_mapping m_odd = {
	.filename = "/lib/we(ir)d\".so",
};

static const struct profile_frame f_odd = {
	.address = 0x1000,
	.mapping = &m_odd,
	FRAME_LINE(.name = "a\"b\\c\nd\te\x01"
			   "f\x7f"),
};

/* Well-formed UTF-8, then a sequence cut short by the string's end. */
static const struct profile_frame f_utf8 = {
	.address = 0x2000,
	FRAME_LINE(.name = "caf\xc3\xa9 \xf0\x9f\x94\xa5 \xe2\x82"),
};

/* Overlong, a surrogate, past U+10FFFF, a stray continuation byte, a cut sequence. */
static const struct profile_frame f_bad = {
	.address = 0x3000,
	FRAME_LINE(.name = "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\x80|\xf0\x9f"),
};

/* Quotes, backslashes, control characters and bad UTF-8 still make valid JSON. */
TEST(firefox_escaping)
{
	const struct profile_frame *frames[] = { &f_odd, &f_utf8, &f_bad };
	struct profile_sample s = {
		.pid = 1, .tid = 1, .frames = frames, .nr_frames = 3, .count = 1
	};
	struct profile *p = profile__new(99);
	char *got;

	CHECK(p);
	s.thread_name = strset__add(p->strings, "t\"1\xff");
	CHECK(s.thread_name && profile__add_sample(p, &s));
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(json_valid(got));
	/* ')' in a module would end it early for the profiler's parser. */
	CHECK(strstr(got, "\"a\\\"b\\\\c\\u000ad\\u0009e\\u0001f\x7f (in we(ir_d\\\".so)\""));
	CHECK(strstr(got, "\"caf\xc3\xa9 \xf0\x9f\x94\xa5 \\ufffd\\ufffd\""));
	CHECK(strstr(got, "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|"
			  "\\ufffd|\\ufffd\\ufffd\""));
	CHECK(strstr(got, "\"name\":\"t\\\"1\\ufffd\""));
	/* No thread name known: the placeholder. */
	CHECK(strstr(got, "\"processName\":\"[unknown]\""));
	free(got);
}

/* A tid that exec()ed shows under the name it has the most samples with. */
TEST(firefox_renamed_thread)
{
	static const struct profile_frame *const frames[] = { &f_main };
	static const char *const names[][2] = {
		{ "sh", "sh" }, { "app", "app" }, { "app", "app-loader" }, { "app", "app" }
	};
	static const uint64_t counts[] = { 3, 2, 1, 2 };
	struct profile *p = profile__new(99);
	char *got;

	CHECK(p);
	for (int i = 0; i < 4; i++) {
		struct profile_sample s = {
			.pid = 7,
			.tid = 7,
			.process_name = strset__add(p->strings, names[i][0]),
			.thread_name = strset__add(p->strings, names[i][1]),
			.frames = (const struct profile_frame **)frames,
			.nr_frames = 1,
			.count = counts[i],
		};

		CHECK(s.process_name && s.thread_name && profile__add_sample(p, &s));
	}
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	/* "app" has 4 samples (2 + 2) against "sh"'s 3; all 8 rows are in the one thread. */
	CHECK(strstr(got, "{\"name\":\"app\",\"processName\":\"app\",\"processType\":\"default\","
			  "\"pid\":7,\"tid\":7,"));
	CHECK_U64(count_of(got, "\"processType\":\"default\""), 1);
	CHECK_U64(count_of(got, "\n[0,0,0,10101010]"), 8);
	free(got);
}

/* Without samples, one empty thread carries the statistics. */
TEST(firefox_empty)
{
	struct profile *p = profile__new(99);
	char *got;

	CHECK(p);
	p->stats.lost_samples = 5;
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(json_valid(got));
	CHECK(strstr(got,
		     "\"threads\":[{\"name\":\"[no samples]\",\"processName\":\"[no samples]\","
		     "\"processType\":\"default\",\"pid\":0,\"tid\":0,"));
	CHECK(strstr(got, "\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2,"
			  "\"threadCPUDelta\":3},\"data\":[]}"));
	CHECK(strstr(got, "\"lost samples: 5\""));
	free(got);
}

/*
 * Decoding one thread's tables back, from the layout firefox__write() uses
 * (one row per line): the rows' stacks as "root;...;leaf" strings.
 */
struct decoded {
	char **paths; /* one per row, in row order */
	size_t nr_rows;
	bool sorted; /* row times never decrease */
};

/*
 * The rows of the table that @open starts, after @table in @s: a pointer
 * past each row's "[" (or at a string's quote), NULL-terminated. A row that
 * more rows follow ends in "],\n" or "\",\n"; the last row ends otherwise.
 */
static const char **table_rows(const char *s, const char *table, const char *open, size_t *n)
{
	const char *p = strstr(s, table), *nl, **rows = NULL;
	size_t alloc = 0;

	*n = 0;
	p = p ? strstr(p, open) : NULL;
	if (!p || p[strlen(open)] != '\n')
		return NULL;
	for (p += strlen(open) + 1; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		if (*n + 2 > alloc) {
			const char **mem;

			alloc = alloc ? alloc * 2 : 64;
			mem = realloc(rows, alloc * sizeof(*rows));
			if (!mem) {
				free(rows);
				return NULL;
			}
			rows = mem;
		}
		rows[(*n)++] = *p == '[' ? p + 1 : p;
		rows[*n] = NULL;
		if (nl[-1] != ',' || (nl[-2] != ']' && nl[-2] != '"'))
			break;
	}
	return rows;
}

static bool decode_thread(const char *json, struct decoded *d)
{
	size_t nr_samples, nr_frames, nr_stacks, nr_strings;
	const char **samples = table_rows(json, "\"samples\"", "\"data\":[", &nr_samples);
	const char **frames = table_rows(json, "\"frameTable\"", "\"data\":[", &nr_frames);
	const char **stacks = table_rows(json, "\"stackTable\"", "\"data\":[", &nr_stacks);
	const char **strings = table_rows(json, "\"stringTable\"", "[", &nr_strings);
	double last = 0;
	bool ok = samples && frames && stacks && strings;

	d->paths = ok ? calloc(nr_samples, sizeof(*d->paths)) : NULL;
	d->nr_rows = nr_samples;
	d->sorted = true;
	for (size_t i = 0; ok && d->paths && i < nr_samples; i++) {
		const char *names[64]; /* leaf first, each up to its closing quote */
		unsigned long stack = strtoul(samples[i], NULL, 10);
		double time = strtod(strchr(samples[i], ',') + 1, NULL);
		char path[1024];
		size_t nr = 0, len = 0;

		d->sorted = d->sorted && time >= last;
		last = time;
		while (ok && stack < nr_stacks) {
			unsigned long frame = strtoul(strchr(stacks[stack], ',') + 1, NULL, 10);
			unsigned long str = frame < nr_frames ? strtoul(frames[frame], NULL, 10) :
								~0UL;

			ok = str < nr_strings && nr < 64;
			if (ok)
				names[nr++] = strings[str] + 1;
			stack = strncmp(stacks[stack], "null", 4) ?
					strtoul(stacks[stack], NULL, 10) :
					~0UL;
		}
		path[0] = '\0';
		while (ok && nr--) {
			int n = strchr(names[nr], '"') - names[nr];

			len += snprintf(path + len, sizeof(path) - len, "%s%.*s", len ? ";" : "", n,
					names[nr]);
			ok = len < sizeof(path);
		}
		d->paths[i] = strdup(path);
	}
	free(samples);
	free(frames);
	free(stacks);
	free(strings);
	return ok && d->paths;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stack of @s as the exporter should write it, root first. */
static void expected_path(const struct profile_sample *s, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	if (s->truncated)
		len += snprintf(buf + len, size - len, ";[truncated]");
	for (uint32_t i = s->nr_frames; i-- > 0;) {
		const struct profile_frame *f = s->frames[i];

		for (uint32_t k = f->nr_lines; k-- > 0;)
			len += snprintf(buf + len, size - len, ";%s%s", f->lines[k].name,
					f->kernel  ? " (in [kernel.kallsyms])" :
					f->mapping ? " (in app)" :
						     "");
	}
	if (s->offcpu || !s->nr_frames)
		len += snprintf(buf + len, size - len, ";%s",
				s->offcpu ? "[off-CPU]" : "[unknown]");
	memmove(buf, buf + 1, len);
}

/* Ten more frames of the binary, for stacks that differ at the root. */
static const struct profile_line pool_lines[10] = {
	{ .name = "f0" }, { .name = "f1" }, { .name = "f2" }, { .name = "f3" }, { .name = "f4" },
	{ .name = "f5" }, { .name = "f6" }, { .name = "f7" }, { .name = "f8" }, { .name = "f9" },
};

#define POOL_FRAME(i)                                                                              \
	{                                                                                          \
		.address = 0x403000 + (i), .mapping = &m_bin, .lines = &pool_lines[i],             \
		.nr_lines = 1                                                                      \
	}

static const struct profile_frame pool_frames[10] = {
	POOL_FRAME(0), POOL_FRAME(1), POOL_FRAME(2), POOL_FRAME(3), POOL_FRAME(4),
	POOL_FRAME(5), POOL_FRAME(6), POOL_FRAME(7), POOL_FRAME(8), POOL_FRAME(9),
};

/*
 * Many random stacks of one thread, sorted so that neighbours share outer
 * frames (or not, where the root changes): every row decodes back to its
 * sample's stack, and rows are in time order.
 */
TEST(firefox_stacks_decode)
{
	static const struct profile_frame *const pool[16] = {
		&f_main,	 &f_inline,	  &f_sys,	   &f_jit,
		&f_main,	 &f_inline,	  &pool_frames[0], &pool_frames[1],
		&pool_frames[2], &pool_frames[3], &pool_frames[4], &pool_frames[5],
		&pool_frames[6], &pool_frames[7], &pool_frames[8], &pool_frames[9],
	};
	const struct profile_frame *frames[6];
	struct profile *p = profile__new(99);
	struct decoded d = { NULL, 0, false };
	char **want = NULL, *got = NULL;
	size_t nr_want = 0;
	uint32_t seed = 12345;
	bool same;

	CHECK(p);
	for (int i = 0; i < 1000; i++) {
		uint64_t times[3];
		struct profile_sample s = { .pid = 1, .tid = 1, .frames = frames, .times = times };

		seed = seed * 1103515245 + 12345;
		s.nr_frames = seed >> 16 & 7;
		s.nr_frames = s.nr_frames > 6 ? 6 : s.nr_frames;
		s.truncated = (seed >> 29) == 0;
		s.offcpu = (seed >> 21 & 3) == 0;
		s.count = 1 + (seed >> 23) % 3;
		for (uint32_t k = 0; k < s.nr_frames; k++) {
			seed = seed * 1103515245 + 12345;
			frames[k] = pool[seed >> 16 & 15];
		}
		for (uint64_t k = 0; k < s.count; k++) {
			seed = seed * 1103515245 + 12345;
			times[k] = seed >> 8;
		}
		CHECK(profile__add_sample(p, &s));
	}
	profile__sort(p);
	want = calloc(profile__total(p), sizeof(*want));
	for (size_t i = 0; want && i < p->nr_samples; i++) {
		char path[1024];

		expected_path(&p->samples[i], path, sizeof(path));
		for (uint64_t k = 0; k < p->samples[i].count; k++)
			want[nr_want++] = strdup(path);
	}
	got = firefox_string(p);
	profile__free(p);
	same = want && got && decode_thread(got, &d) && d.nr_rows == nr_want;
	if (same) {
		qsort(want, nr_want, sizeof(*want), cmp_strp);
		qsort(d.paths, d.nr_rows, sizeof(*d.paths), cmp_strp);
		for (size_t i = 0; i < nr_want && same; i++) {
			same = want[i] && d.paths[i] && !strcmp(want[i], d.paths[i]);
			if (!same)
				test__fail(__FILE__, __LINE__, "row %zu: '%s' != '%s'", i,
					   d.paths[i] ? d.paths[i] : "(null)",
					   want[i] ? want[i] : "(null)");
		}
	}
	for (size_t i = 0; i < nr_want; i++)
		free(want[i]);
	for (size_t i = 0; d.paths && i < d.nr_rows; i++)
		free(d.paths[i]);
	free(want);
	free(d.paths);
	free(got);
	CHECK(same);
	CHECK(d.sorted);
}

/* Bytes of the shared test profile added in @order, then sorted; NULL on failure. */
static char *sorted_bytes(const unsigned int *order)
{
	struct profile *p = export_test_profile(order);
	char *got;

	if (!p)
		return NULL;
	profile__sort(p);
	got = firefox_string(p);
	profile__free(p);
	return got;
}

TEST(firefox_deterministic)
{
	static const unsigned int shuffled[EXPORT_TEST_SAMPLES] = { 6, 3, 7, 0, 5, 2, 4, 1 };
	static const unsigned int reversed[EXPORT_TEST_SAMPLES] = { 7, 6, 5, 4, 3, 2, 1, 0 };
	char *a = sorted_bytes(NULL), *b = sorted_bytes(shuffled), *c = sorted_bytes(reversed);
	bool same = a && b && c && !strcmp(a, b) && !strcmp(a, c);

	free(a);
	free(b);
	free(c);
	CHECK(same);
}

static uint8_t *slurp(FILE *f, size_t *len)
{
	long size;
	uint8_t *buf;

	if (fflush(f) || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0)
		return NULL;
	rewind(f);
	buf = malloc(size + 1);
	if (buf && fread(buf, 1, size, f) != (size_t)size) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

/* The gzip stream of @in, inflated into a NUL-terminated string; NULL on failure. */
static char *gunzip(const uint8_t *in, size_t len)
{
	size_t alloc = 1 << 20;
	char *out = malloc(alloc);
	z_stream zs;
	int zerr = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (!out || inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(out);
		return NULL;
	}
	zs.next_in = (uint8_t *)in;
	zs.avail_in = len;
	while (zerr == Z_OK && zs.total_out < alloc - 1) {
		zs.next_out = (uint8_t *)out + zs.total_out;
		zs.avail_out = alloc - 1 - zs.total_out;
		zerr = inflate(&zs, Z_NO_FLUSH);
	}
	out[zs.total_out] = '\0';
	inflateEnd(&zs);
	if (zerr != Z_STREAM_END || zs.avail_in) {
		free(out);
		return NULL;
	}
	return out;
}

/* Gzipped output inflates to the plain output, with a header that never varies. */
TEST(firefox_gzip)
{
	static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0 };
	struct profile *p = build(small_samples, 4);
	FILE *f = tmpfile();
	uint8_t *gz = NULL;
	char *plain = NULL;
	size_t len = 0;
	bool same;

	CHECK(p && f);
	CHECK_U64(firefox__write(p, f, true), 0);
	profile__free(p);
	gz = slurp(f, &len);
	fclose(f);
	CHECK(gz && len > 18);
	same = !memcmp(gz, header, 8) && gz[9] == 3;
	plain = gunzip(gz, len);
	free(gz);
	CHECK(same);
	CHECK(plain);
	same = !strcmp(plain, small_expected);
	free(plain);
	CHECK(same);
}

/* Output that outgrows the buffers (many threads, long names) arrives whole, gzipped or not. */
TEST(firefox_large)
{
	static const struct profile_frame *const frames[] = { &f_inline, &f_main };
	struct profile *p = profile__new(99);
	char name[200], *plain, *unzipped;
	uint64_t times[50];
	uint8_t *gz;
	FILE *f;
	size_t len;
	bool ok;

	CHECK(p);
	for (int i = 0; i < 50; i++)
		times[i] = (50 - i) * 1000;
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (uint32_t tid = 1; tid <= 500; tid++) {
		struct profile_sample s = {
			.pid = 1,
			.tid = tid,
			.thread_name = strset__add(p->strings, name),
			.frames = (const struct profile_frame **)frames,
			.nr_frames = 2,
			.count = 50,
			.times = times,
		};

		CHECK(s.thread_name && profile__add_sample(p, &s));
	}
	plain = firefox_string(p);
	f = tmpfile();
	CHECK(plain && f);
	ok = firefox__write(p, f, true) == 0;
	profile__free(p);
	gz = slurp(f, &len);
	fclose(f);
	unzipped = ok && gz ? gunzip(gz, len) : NULL;
	ok = unzipped && !strcmp(plain, unzipped) && json_valid(plain) &&
	     strlen(plain) > 256 * 1024;
	ok = ok && count_of(plain, "\"processType\":\"default\"") == 500 &&
	     count_of(plain, "\n[3,0.001,0,10101010]") == 500;
	free(plain);
	free(gz);
	free(unzipped);
	CHECK(ok);
}

/* A failing stream is reported, not ignored. */
TEST(firefox_write_error)
{
	if (test__no_dev_full())
		SKIP("%s", test__no_dev_full());
	CHECK_U64(export_test_write_full(write_plain), -ENOSPC);
	CHECK_U64(export_test_write_full(write_gzipped), -ENOSPC);
}
