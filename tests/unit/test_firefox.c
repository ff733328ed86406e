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
	strcpy(p->host.sysname, "Linux");
	strcpy(p->host.release, "6.1.0-test");
	strcpy(p->host.machine, "x86_64");
	p->stats.samples = 4;
	p->stats.lost_samples = 2;
	p->stats.offcpu_intervals = 1;
	p->stats.offcpu_ns = 2500000;
	p->stats.lost_offcpu = 6;
	p->stats.truncated = 1;
	p->stats.stack_errors = 3;
	p->stats.frames[FRAME_LINES] = 2;
	p->stats.frames[FRAME_SYMBOL] = 1;
	p->stats.frames[FRAME_JIT] = 1;
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
			.offcpu_ns = t->offcpu ? 2500000 : 0,
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
	"{\"meta\":{\"version\":24,\"preprocessedProfileVersion\":49,\"interval\":1,\"startTime\""
	":1700000000123.456789,\"profilingStartTime\":0,\"profilingEndTime\":6,\"processType\":0,"
	"\"product\":\"profiler\",\"stackwalk\":1,\"debug\":false,\"symbolicated\":true,\"platfor"
	"m\":\"Linux\",\"oscpu\":\"Linux 6.1.0-test x86_64\",\n"
	"\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"ns\"},\n"
	"\"categories\":[{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},{"
	"\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},{\"name\":\"JIT"
	"\",\"color\":\"green\",\"subcategories\":[\"Other\"]},{\"name\":\"Off-CPU\",\"color\":\""
	"blue\",\"subcategories\":[\"Other\"]},{\"name\":\"Other\",\"color\":\"grey\",\"subcatego"
	"ries\":[\"Other\"]},{\"name\":\"Python\",\"color\":\"purple\",\"subcategories\":[\"Ot"
	"her\"]},{\"name\":\"JavaScript\",\"color\":\"lightblue\",\"subcategories\":[\"Oth"
	"er\"]}],\"markerSchema\":[]},\n"
	"\"libs\":[],\"pages\":[],\n"
	"\"threads\":[{\"processType\":\"default\",\"processStartupTime\":0,\"processShutdownTime"
	"\":null,\"registerTime\":0,\"unregisterTime\":null,\"pausedRanges\":[],\"name\":\"main\""
	",\"isMainThread\":true,\"processName\":\"app\",\"pid\":\"10\",\"tid\":10,\n"
	"\"samples\":{\"weightType\":\"tracing-ms\",\n"
	"\"weight\":[1,1,2.5,1],\n"
	"\"stack\":[3,6,8,3],\n"
	"\"time\":[1,3,4.000123,5],\n"
	"\"threadCPUDelta\":[1000000,1000000,0,1000000],\"length\":4},\n"
	"\"markers\":{\"data\":[null,null,null,null,null,null,null,null,null],\"name\":[11,12,13,"
	"14,15,16,17,18,19],\"startTime\":[0,0,0,0,0,0,0,0,0],\"endTime\":[6,6,6,6,6,6,6,6,6],\"p"
	"hase\":[1,1,1,1,1,1,1,1,1],\"category\":[4,4,4,4,4,4,4,4,4],\"length\":9},\n"
	"\"stackTable\":{\"frame\":[0,1,2,3,4,0,5,5,6],\n"
	"\"category\":[0,0,0,0,4,0,1,1,3],\n"
	"\"subcategory\":[0,0,0,0,0,0,0,0,0],\n"
	"\"prefix\":[null,0,1,2,null,4,5,0,7],\"length\":9},\n"
	"\"frameTable\":{\"address\":[-1,-1,-1,-1,-1,-1,-1],\n"
	"\"inlineDepth\":[0,0,1,2,0,0,0],\n"
	"\"category\":[0,0,0,0,4,1,3],\n"
	"\"subcategory\":[0,0,0,0,0,0,0],\n"
	"\"func\":[0,1,2,3,4,5,6],\n"
	"\"nativeSymbol\":[null,null,null,null,null,null,null],\"innerWindowID\":[0,0,0,0,0,0,0],"
	"\"implementation\":[null,null,null,null,null,null,null],\n"
	"\"line\":[5,30,20,12,null,null,null],\n"
	"\"column\":[null,null,null,null,null,null,null],\"length\":7},\n"
	"\"funcTable\":{\"name\":[0,3,4,6,7,8,10],\n"
	"\"isJS\":[false,false,false,false,false,false,false],\"relevantForJS\":[false,false,fals"
	"e,false,false,false,false],\n"
	"\"resource\":[0,0,0,0,-1,1,-1],\n"
	"\"fileName\":[2,2,5,5,null,null,null],\n"
	"\"lineNumber\":[null,null,null,null,null,null,null],\"columnNumber\":[null,null,null,nul"
	"l,null,null,null],\"length\":7},\n"
	"\"resourceTable\":{\"lib\":[null,null],\"name\":[1,9],\"host\":[null,null],\"type\":[1,1"
	"],\"length\":2},\n"
	"\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],\"leng"
	"th\":0},\n"
	"\"stringArray\":[\n"
	"\"main\",\n"
	"\"app\",\n"
	"\"/src/app.c\",\n"
	"\"compute\",\n"
	"\"mid_helper\",\n"
	"\"/src/h.h\",\n"
	"\"leaf_helper\",\n"
	"\"[truncated]\",\n"
	"\"do_syscall_64\",\n"
	"\"[kernel.kallsyms]\",\n"
	"\"[off-CPU]\",\n"
	"\"on-CPU samples: 4 in 0.0 s at 1000 Hz\",\n"
	"\"samples lost: 2\",\n"
	"\"intervals off CPU: 1 (0.003 s)\",\n"
	"\"intervals off CPU lost: 6\",\n"
	"\"truncated stacks: 1\",\n"
	"\"stack read errors: 3\",\n"
	"\"processes with unreadable maps: 0\",\n"
	"\"frames: 2 with source lines, 1 function only, 0 unnamed, 0 unmapped, 1 JIT, 0 "
	"Python, 0 JavaScript\",\n"
	"\"DWARF units unreadable: 0\"]},\n"
	"{\"processType\":\"default\",\"processStartupTime\":0,\"processShutdownTime\":null,\"reg"
	"isterTime\":0,\"unregisterTime\":null,\"pausedRanges\":[],\"name\":\"worker\",\"isMainTh"
	"read\":false,\"processName\":\"app\",\"pid\":\"10\",\"tid\":11,\n"
	"\"samples\":{\"weightType\":\"tracing-ms\",\n"
	"\"weight\":[1],\n"
	"\"stack\":[1],\n"
	"\"time\":[2.5],\n"
	"\"threadCPUDelta\":[1000000],\"length\":1},\n"
	"\"markers\":{\"data\":[],\"name\":[],\"startTime\":[],\"endTime\":[],\"phase\":[],\"cate"
	"gory\":[],\"length\":0},\n"
	"\"stackTable\":{\"frame\":[0,1],\n"
	"\"category\":[0,2],\n"
	"\"subcategory\":[0,0],\n"
	"\"prefix\":[null,0],\"length\":2},\n"
	"\"frameTable\":{\"address\":[-1,-1],\n"
	"\"inlineDepth\":[0,0],\n"
	"\"category\":[0,2],\n"
	"\"subcategory\":[0,0],\n"
	"\"func\":[0,1],\n"
	"\"nativeSymbol\":[null,null],\"innerWindowID\":[0,0],\"implementation\":[null,null],\n"
	"\"line\":[5,null],\n"
	"\"column\":[null,null],\"length\":2},\n"
	"\"funcTable\":{\"name\":[0,3],\n"
	"\"isJS\":[false,false],\"relevantForJS\":[false,false],\n"
	"\"resource\":[0,-1],\n"
	"\"fileName\":[2,null],\n"
	"\"lineNumber\":[null,null],\"columnNumber\":[null,null],\"length\":2},\n"
	"\"resourceTable\":{\"lib\":[null],\"name\":[1],\"host\":[null],\"type\":[1],\"length\":1"
	"},\n"
	"\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],\"leng"
	"th\":0},\n"
	"\"stringArray\":[\n"
	"\"main\",\n"
	"\"app\",\n"
	"\"/src/app.c\",\n"
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
		"\"name\":\"app\",\"isMainThread\":true,\"processName\":\"app --serve\","
		"\"pid\":\"100\",\"tid\":100,",
		"\"name\":\"worker\",\"isMainThread\":false,\"processName\":\"app --serve\","
		"\"pid\":\"100\",\"tid\":101,",
		"\"name\":\"my app\",\"isMainThread\":true,\"processName\":\"my app\","
		"\"pid\":\"200\",\"tid\":200,",
		"\"name\":\"io\",\"isMainThread\":false,\"processName\":\"my app\",\"pid\":\"200\","
		"\"tid\":202,",
		"\"name\":\"app\",\"isMainThread\":false,\"processName\":\"app --batch 7\","
		"\"pid\":\"300\",\"tid\":301,",
		NULL,
	};
	static const char *const names[] = {
		"\n\"main\",\n\"app\",",
		"\n\"compute\",",
		"\n\"libfoo.so+0x1234\",\n\"libfoo.so\",",
		"\n\"entry_SYSCALL_64\",\n\"[kernel.kallsyms]\",",
		"\n\"do_syscall_64\"",
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
	/* Function names, each followed by its module's name where it is the first of it. */
	CHECK(in_order(got, names));
	/* The markers are the summary's lines, on the first thread only. */
	CHECK_U64(count_of(got, "\"samples lost: 2\""), 1);
	CHECK(strstr(got, "\"stack read errors: 3\""));
	CHECK(strstr(got, "\"processes with unreadable maps: 4\""));
	/* The frame without a mapping, and the sample without frames. */
	CHECK(strstr(got, "\"[unknown]\""));
	CHECK(strstr(got, "\"ns::work(int)\""));
	CHECK(strstr(got, "\"[truncated]\""));
	/*
	 * A CPU profile: rows unweighted. Without times, every row is at 0,
	 * ordered by stack: no frames, main;compute x5, truncated.
	 */
	CHECK(strstr(got, "\"samples\":{\"weightType\":\"samples\",\"weight\":null,\n"
			  "\"stack\":[0,2,2,2,2,2,5],\n\"time\":[0,0,0,0,0,0,0],\n"
			  "\"threadCPUDelta\":[10101010,10101010,10101010,10101010,10101010,"
			  "10101010,10101010],\"length\":7}"));
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
	strcpy(p->host.release, "6.1\"x\\");
	CHECK(s.thread_name && profile__add_sample(p, &s));
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(json_valid(got));
	CHECK(strstr(got, "\n\"a\\\"b\\\\c\\u000ad\\u0009e\\u0001f\x7f\",\n\"we(ir)d\\\".so\","));
	CHECK(strstr(got, "\"caf\xc3\xa9 \xf0\x9f\x94\xa5 \\ufffd\\ufffd\""));
	CHECK(strstr(got, "\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|"
			  "\\ufffd|\\ufffd\\ufffd\""));
	CHECK(strstr(got, "\"name\":\"t\\\"1\\ufffd\""));
	CHECK(strstr(got, " 6.1\\\"x\\\\ "));
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
	CHECK(strstr(got, "\"name\":\"app\",\"isMainThread\":true,\"processName\":\"app\","
			  "\"pid\":\"7\",\"tid\":7,"));
	CHECK_U64(count_of(got, "\"processType\":\"default\""), 1);
	CHECK(strstr(got, "\"stack\":[0,0,0,0,0,0,0,0],"));
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
	CHECK(strstr(got, "\"threads\":[{\"processType\":\"default\""));
	CHECK(strstr(got, "\"name\":\"[no samples]\",\"isMainThread\":true,"
			  "\"processName\":\"[no samples]\",\"pid\":\"0\",\"tid\":0,"));
	CHECK(strstr(got, "\"samples\":{\"weightType\":\"samples\",\"weight\":null,\n"
			  "\"stack\":[],\n\"time\":[],\n\"threadCPUDelta\":[],\"length\":0}"));
	CHECK(strstr(got, "\"samples lost: 5\""));
	free(got);
}

/*
 * Reading the first thread back, from the layout firefox__write() uses (a
 * table's columns each after its own "name":[, the string array one string
 * a line): each row's stack as a "root;...;leaf" string of "module!func"
 * names, its time and its weight.
 */
struct decoded {
	char **paths;	 /* one per row, in row order */
	double *weights; /* ms, one per row; NULL when the rows are unweighted */
	size_t nr_rows;
	bool sorted; /* row times never decrease */
};

/*
 * The numbers of column @column of the first table @table in @s, null as
 * -1, in a malloc()ed array of *@n; NULL when there is no such column.
 */
static double *column(const char *s, const char *table, const char *column, size_t *n)
{
	char key[64];
	const char *p = strstr(s, table);
	double *v = NULL;
	size_t alloc = 0;

	*n = 0;
	snprintf(key, sizeof(key), "\"%s\":[", column);
	p = p ? strstr(p, key) : NULL;
	if (!p)
		return NULL;
	for (p += strlen(key); *p != ']';) {
		char *end;

		if (*n == alloc) {
			double *mem = realloc(v, (alloc = alloc ? 2 * alloc : 64) * sizeof(*v));

			if (!mem)
				break;
			v = mem;
		}
		if (!strncmp(p, "null", 4)) {
			v[(*n)++] = -1;
			end = (char *)p + 4;
		} else {
			v[(*n)++] = strtod(p, &end);
		}
		if (end == p)
			break;
		p = *end == ',' ? end + 1 : end;
	}
	if (*p != ']') {
		free(v);
		return NULL;
	}
	return v ? v : malloc(sizeof(*v));
}

/* The string array of the first thread: a pointer at each string's opening quote. */
static const char **strings(const char *s, size_t *n)
{
	const char *p = strstr(s, "\"stringArray\":[\n"), **rows = NULL;
	size_t alloc = 0;

	*n = 0;
	for (p = p ? p + strlen("\"stringArray\":[\n") : NULL; p && *p == '"';) {
		if (*n + 1 >= alloc) {
			const char **mem =
				realloc(rows, (alloc = alloc ? 2 * alloc : 64) * sizeof(*rows));

			if (!mem)
				break;
			rows = mem;
		}
		rows[(*n)++] = p;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return rows;
}

/* Append string @i of @strs (up to its closing quote) to @buf. */
static size_t append_string(char *buf, size_t len, size_t size, const char **strs, size_t i)
{
	const char *s = strs[i] + 1;

	return len + snprintf(buf + len, size - len, "%.*s", (int)(strchr(s, '"') - s), s);
}

static bool decode_thread(const char *json, struct decoded *d)
{
	size_t nr_rows, nr_times, nr_weights = 0, nr_frame, nr_prefix, nr_func, nr_name, nr_res,
				  nr_res_name, nr_strs;
	double *stack = column(json, "\"samples\"", "stack", &nr_rows);
	double *times = column(json, "\"samples\"", "time", &nr_times);
	double *weights = column(json, "\"samples\"", "weight", &nr_weights);
	double *frame = column(json, "\"stackTable\"", "frame", &nr_frame);
	double *prefix = column(json, "\"stackTable\"", "prefix", &nr_prefix);
	double *func = column(json, "\"frameTable\"", "func", &nr_func);
	double *name = column(json, "\"funcTable\"", "name", &nr_name);
	double *resource = column(json, "\"funcTable\"", "resource", &nr_res);
	double *res_name = column(json, "\"resourceTable\"", "name", &nr_res_name);
	const char **strs = strings(json, &nr_strs);
	bool ok = stack && times && frame && prefix && func && name && resource && res_name &&
		  strs && nr_times == nr_rows && nr_prefix == nr_frame && nr_res == nr_name &&
		  (!weights || nr_weights == nr_rows);
	double last = 0;

	d->paths = ok ? calloc(nr_rows ? nr_rows : 1, sizeof(*d->paths)) : NULL;
	d->nr_rows = nr_rows;
	d->sorted = true;
	for (size_t i = 0; ok && d->paths && i < nr_rows; i++) {
		size_t path[64], nr = 0, len = 0; /* functions, leaf first */
		char buf[1024];

		d->sorted = d->sorted && times[i] >= last;
		last = times[i];
		for (double st = stack[i]; ok && st >= 0; st = prefix[(size_t)st]) {
			size_t fr = (size_t)frame[(size_t)st];

			ok = st < nr_frame && fr < nr_func && func[fr] < nr_name && nr < 64;
			if (ok)
				path[nr++] = func[fr];
		}
		buf[0] = '\0';
		while (ok && nr--) {
			double r = resource[path[nr]];

			len += snprintf(buf + len, sizeof(buf) - len, "%s", len ? ";" : "");
			if (r >= 0 && r < nr_res_name && res_name[(size_t)r] < nr_strs) {
				len = append_string(buf, len, sizeof(buf), strs,
						    res_name[(size_t)r]);
				len += snprintf(buf + len, sizeof(buf) - len, "!");
			}
			ok = name[path[nr]] < nr_strs && len < sizeof(buf);
			if (ok)
				len = append_string(buf, len, sizeof(buf), strs, name[path[nr]]);
			ok = ok && len < sizeof(buf);
		}
		d->paths[i] = strdup(buf);
	}
	d->weights = ok ? weights : NULL;
	if (!ok)
		free(weights);
	free(stack);
	free(times);
	free(frame);
	free(prefix);
	free(func);
	free(name);
	free(resource);
	free(res_name);
	free(strs);
	return ok && d->paths;
}

static void decoded_release(struct decoded *d)
{
	for (size_t i = 0; d->paths && i < d->nr_rows; i++)
		free(d->paths[i]);
	free(d->paths);
	free(d->weights);
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
			len += snprintf(buf + len, size - len, ";%s%s",
					f->kernel  ? "[kernel.kallsyms]!" :
					f->mapping ? "app!" :
						     "",
					f->lines[k].name);
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
 * Many random stacks of one thread, on and off CPU, sorted so that
 * neighbours share outer frames (or not, where the root changes), in a
 * wall-clock profile: every row decodes back to its sample's stack, rows
 * are in time order, and the rows of a sample weigh its time: a sampling
 * period each on CPU, its time off CPU between them.
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
	struct decoded d = { NULL, NULL, 0, false };
	char **want = NULL, *got = NULL;
	size_t nr_want = 0;
	uint32_t seed = 12345;
	uint64_t wall_ns = 0;
	double weight_ms = 0;
	bool same;

	CHECK(p);
	p->mode = PROFILE_WALL;
	for (int i = 0; i < 1000; i++) {
		uint64_t times[3];
		struct profile_sample s = { .pid = 1, .tid = 1, .frames = frames, .times = times };

		seed = seed * 1103515245 + 12345;
		s.nr_frames = seed >> 16 & 7;
		s.nr_frames = s.nr_frames > 6 ? 6 : s.nr_frames;
		s.truncated = (seed >> 29) == 0;
		s.offcpu = (seed >> 21 & 3) == 0;
		s.count = 1 + (seed >> 23) % 3;
		s.offcpu_ns = s.offcpu ? seed % 100000000 : 0;
		for (uint32_t k = 0; k < s.nr_frames; k++) {
			seed = seed * 1103515245 + 12345;
			frames[k] = pool[seed >> 16 & 15];
		}
		for (uint64_t k = 0; k < s.count; k++) {
			seed = seed * 1103515245 + 12345;
			times[k] = seed >> 8;
		}
		CHECK(profile__add_sample(p, &s));
		wall_ns += profile_sample__wall_ns(p, &s);
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
	same = want && got && decode_thread(got, &d) && d.nr_rows == nr_want && d.weights;
	for (size_t i = 0; same && i < d.nr_rows; i++)
		weight_ms += d.weights[i];
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
	decoded_release(&d);
	free(want);
	free(got);
	CHECK(same);
	CHECK(d.sorted);
	/* Weights are exact to the ns, printed in ms: the sum is within rounding of a double. */
	CHECK(wall_ns > 1000000000);
	CHECK(weight_ms > wall_ns / 1e6 - 1e-3 && weight_ms < wall_ns / 1e6 + 1e-3);
}

/*
 * In an off-CPU profile too, rows weigh time: 30 ms of CPU at 100 Hz and
 * 70 ms off CPU in 3 intervals (23.333333, 23.333333 and 23.333334 ms) make
 * a call tree 70% off CPU.
 */
TEST(firefox_offcpu_weights)
{
	static const struct profile_frame *const frames[] = { &f_main };
	static const uint64_t times[] = { 1000000, 2000000, 3000000 };
	struct profile *p = profile__new(100);
	struct profile_sample on = { .pid = 1, .tid = 1, .nr_frames = 1, .count = 3 };
	struct profile_sample off = on;
	char *got;

	CHECK(p);
	p->mode = PROFILE_OFFCPU;
	on.frames = off.frames = (const struct profile_frame **)frames;
	on.times = off.times = (uint64_t *)times;
	off.offcpu = true;
	off.offcpu_ns = 70000000;
	CHECK(profile__add_sample(p, &on) && profile__add_sample(p, &off));
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(strstr(got, "\"samples\":{\"weightType\":\"tracing-ms\",\n"
			  "\"weight\":[10,23.333333,10,23.333333,10,23.333334],\n"
			  "\"stack\":[0,1,0,1,0,1],\n"));
	CHECK(strstr(got, "\"threadCPUDelta\":[10000000,0,10000000,0,10000000,0],"));
	free(got);
}

static const struct profile_frame f_malloc = {
	.address = 0x7f0000001000, FRAME_LINE(.name = "malloc", .system_name = "malloc")
};
static const struct profile_frame f_mmap = { .address = 0x7f0000002000,
					     FRAME_LINE(.name = "mmap", .system_name = "mmap") };

/*
 * An allocation profile weighs rows by bytes: three sampled calls of a
 * heap stack at 1, 2 and 3 ms share its 1000 bytes (333, 333 and 334), the
 * one mmap call at 2.5 ms has its 8 MiB, so that the call tree gives shares
 * of bytes, not of calls. Its rows stand for no CPU time: no
 * threadCPUDelta, which a time profile has (firefox_offcpu_weights).
 */
TEST(firefox_alloc_weights)
{
	static const struct profile_frame *const heap[] = { &f_malloc, &f_main };
	static const struct profile_frame *const anon[] = { &f_mmap, &f_main };
	static const uint64_t times[] = { 1000000, 2000000, 3000000 }, mmap_time[] = { 2500000 };
	struct profile *p = profile__new(0);
	struct profile_sample s = { .pid = 1, .tid = 1, .nr_frames = 2, .count = 3 };
	char *got;

	CHECK(p);
	p->mode = PROFILE_ALLOC;
	p->alloc_rate = 524288;
	s.frames = (const struct profile_frame **)heap;
	s.times = (uint64_t *)times;
	s.alloc = (struct profile_alloc){ .bytes = 1000, .blocks = 3, .first_ns = 1000000 };
	CHECK(profile__add_sample(p, &s));
	s.frames = (const struct profile_frame **)anon;
	s.times = (uint64_t *)mmap_time;
	s.count = 1;
	s.alloc = (struct profile_alloc){
		.kind = ALLOC_MMAP, .bytes = 8388608, .blocks = 1, .first_ns = 2500000
	};
	CHECK(profile__add_sample(p, &s));
	got = firefox_string(p);
	CHECK(got);
	CHECK(json_valid(got));
	CHECK(strstr(got, "\"samples\":{\"weightType\":\"bytes\",\n"
			  "\"weight\":[333,333,8388608,334],\n"
			  "\"stack\":[1,1,2,1],\n"
			  "\"time\":[1,2,2.5,3],\"length\":4},\n"));
	CHECK(!strstr(got, "threadCPUDelta\":["));
	free(got);

	/* Without times: a row for each sample, at its first allocation, with all its bytes. */
	for (size_t i = 0; i < p->nr_samples; i++) {
		free(p->samples[i].times);
		p->samples[i].times = NULL;
	}
	got = firefox_string(p);
	profile__free(p);
	CHECK(got);
	CHECK(strstr(got, "\"samples\":{\"weightType\":\"bytes\",\n"
			  "\"weight\":[1000,8388608],\n"
			  "\"stack\":[1,2],\n"
			  "\"time\":[1,2.5],\"length\":2},\n"));
	free(got);
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
	size_t alloc = 4 << 20;
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
	     count_of(plain, "\"time\":[0.001,") == 500;
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
