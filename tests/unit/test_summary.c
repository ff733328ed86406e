// SPDX-License-Identifier: GPL-2.0-only
/*
 * The profile's summary (profile__summary()): its lines, and the same lines,
 * numbers and words, in every output that has room for them: pprof's
 * comments, the Firefox Profiler's markers and the SVG's subtitle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/profile.h"
#include "common/strset.h"
#include "export/firefox.h"
#include "export/pprof.h"
#include "export/svg.h"
#include "export_test.h"
#include "profile.pb-c.h"
#include "test.h"

static const struct profile_frame f_main = { .address = 0x1000, FRAME_LINE(.name = "main") };
static const struct profile_frame f_sleep = { .address = 0x2000, FRAME_LINE(.name = "nanosleep") };

/*
 * A wall-clock profile whose counts all differ: 364 on-CPU samples and
 * 53,935 intervals off CPU, so that a total of the two (54,299) cannot pass
 * for either.
 */
static struct profile *wall_profile(void)
{
	static const struct profile_frame *const on[] = { &f_main };
	static const struct profile_frame *const off[] = { &f_sleep, &f_main };
	struct profile *p = profile__new(99);
	struct profile_sample s = { .pid = 7, .tid = 7 };

	if (!p)
		return NULL;
	p->mode = PROFILE_WALL;
	p->duration = 2950000000ULL;
	p->stats = (struct profile_stats){
		.samples = 364,
		.lost_samples = 5,
		.offcpu_intervals = 53935,
		.offcpu_ns = 12345678901ULL,
		.lost_offcpu = 17,
		.truncated = 11,
		.stack_errors = 13,
		.maps_unreadable = 1,
		.frames = { [FRAME_LINES] = 21,
			    [FRAME_SYMBOL] = 22,
			    [FRAME_NO_SYMBOL] = 23,
			    [FRAME_NO_MAPPING] = 24,
			    [FRAME_JIT] = 25,
			    [FRAME_PYTHON] = 26,
			    [FRAME_JS] = 27 },
		.dwarf_units_lost = 2,
	};
	s.process_name = s.thread_name = strset__add(p->strings, "app");
	s.frames = (const struct profile_frame **)on;
	s.nr_frames = 1;
	s.count = 364;
	if (!s.process_name || !profile__add_sample(p, &s))
		goto out_free;
	s.frames = (const struct profile_frame **)off;
	s.nr_frames = 2;
	s.count = 53935;
	s.offcpu = true;
	s.offcpu_ns = 12345678901ULL;
	if (!profile__add_sample(p, &s))
		goto out_free;
	return p;

out_free:
	profile__free(p);
	return NULL;
}

static const char *const wall_lines[] = {
	"on-CPU samples: 364 in 3.0 s at 99 Hz",
	"samples lost: 5",
	"intervals off CPU: 53935 (12.346 s)",
	"intervals off CPU lost: 17",
	"truncated stacks: 11",
	"stack read errors: 13",
	"processes with unreadable maps: 1",
	"frames: 21 with source lines, 22 function only, 23 unnamed, 24 unmapped, 25 JIT, 26 Python, 27 JavaScript",
	"DWARF units unreadable: 2",
};

#define NR_WALL_LINES (sizeof(wall_lines) / sizeof(wall_lines[0]))

/* The lines, in their groups: what was recorded and lost, the stacks, the frames. */
TEST(summary_lines)
{
	static const enum profile_summary_group groups[NR_WALL_LINES] = {
		SUMMARY_SAMPLES, SUMMARY_SAMPLES, SUMMARY_SAMPLES, SUMMARY_SAMPLES, SUMMARY_STACKS,
		SUMMARY_STACKS,	 SUMMARY_STACKS,  SUMMARY_FRAMES,  SUMMARY_FRAMES,
	};
	struct profile *p = wall_profile();
	struct profile_summary sum;

	CHECK(p);
	/* The profile holds more rows than either count: the summary gives the counts. */
	CHECK_U64(profile__total(p), 54299);
	profile__summary(p, &sum);
	CHECK_U64(sum.nr, NR_WALL_LINES);
	for (size_t i = 0; i < NR_WALL_LINES; i++) {
		CHECK_STR(sum.lines[i].text, wall_lines[i]);
		CHECK_U64(sum.lines[i].group, groups[i]);
	}

	/* On CPU only, nothing about time off CPU; durations round half up. */
	p->mode = PROFILE_CPU;
	p->duration = 2949999999ULL;
	profile__summary(p, &sum);
	profile__free(p);
	CHECK_U64(sum.nr, NR_WALL_LINES - 2);
	CHECK_STR(sum.lines[0].text, "on-CPU samples: 364 in 2.9 s at 99 Hz");
	CHECK_STR(sum.lines[1].text, "samples lost: 5");
	CHECK_STR(sum.lines[2].text, "truncated stacks: 11");
}

/* The BPF programs that ran longest come last, in a group of their own, as counted. */
TEST(summary_bpf_programs)
{
	struct profile *p = wall_profile();
	struct profile_summary sum;

	CHECK(p);
	p->bpf_progs[0] =
		(struct profile_bpf_prog){ "hot_syscall_enter", 42, 131114, 2682592440ULL };
	p->bpf_progs[1] = (struct profile_bpf_prog){ "profile_sample", 7, 3036, 21892596 };
	p->nr_bpf_progs = 2;
	profile__summary(p, &sum);
	profile__free(p);
	CHECK_U64(sum.nr, NR_WALL_LINES + 2);
	CHECK_STR(sum.lines[NR_WALL_LINES].text,
		  "BPF program hot_syscall_enter (id 42): 131114 runs, 20.46 us a run, 90.9% of a "
		  "CPU");
	CHECK_STR(sum.lines[NR_WALL_LINES + 1].text,
		  "BPF program profile_sample (id 7): 3036 runs, 7.21 us a run, 0.7% of a CPU");
	CHECK_U64(sum.lines[NR_WALL_LINES].group, SUMMARY_BPF);
}

/* In pprof, one comment a line (go tool pprof -comments), and no other comment. */
TEST(summary_in_pprof_comments)
{
	struct profile *p = wall_profile();
	Perftools__Profiles__Profile *pp;
	uint8_t *buf = NULL;
	size_t len = 0, n;
	bool same = true;
	int err;

	CHECK(p);
	err = pprof__encode(p, &buf, &len);
	profile__free(p);
	CHECK_U64(err, 0);
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	CHECK(pp);
	n = pp->n_comment;
	for (size_t i = 0; i < n && i < NR_WALL_LINES; i++) {
		int64_t idx = pp->comment[i];

		same = same && idx > 0 && (size_t)idx < pp->n_string_table &&
		       !strcmp(pp->string_table[idx], wall_lines[i]);
	}
	perftools__profiles__profile__free_unpacked(pp, NULL);
	CHECK_U64(n, NR_WALL_LINES);
	CHECK(same);
}

/*
 * The names of the first thread's markers in firefox__write()'s output: the
 * marker table's "name" column indexes the string array, one string a line.
 * A malloc()ed, NULL-terminated array of malloc()ed strings; NULL on failure.
 */
static char **marker_names(const char *json)
{
	const char *names = strstr(json, "\"markers\":{");
	const char *strs = strstr(json, "\"stringArray\":[\n");
	char **out = calloc(PROFILE_SUMMARY_MAX + 1, sizeof(*out));
	size_t n = 0;

	names = names ? strstr(names, "\"name\":[") : NULL;
	if (!names || !strs || !out) {
		free(out);
		return NULL;
	}
	strs += strlen("\"stringArray\":[\n");
	for (const char *p = names + strlen("\"name\":["); *p != ']' && n < PROFILE_SUMMARY_MAX;) {
		char *end;
		unsigned long idx = strtoul(p, &end, 10);
		const char *s = strs;

		for (unsigned long k = 0; k < idx && s; k++) {
			s = strchr(s, '\n');
			s = s ? s + 1 : NULL;
		}
		if (end == p || !s || *s != '"')
			break;
		out[n++] = strndup(s + 1, strchr(s + 1, '"') - (s + 1));
		p = *end == ',' ? end + 1 : end;
	}
	return out;
}

static int write_firefox(const struct profile *p, FILE *out)
{
	return firefox__write(p, out, false);
}

/* In the Firefox Profiler's format, one marker a line, on the first thread. */
TEST(summary_in_firefox_markers)
{
	struct profile *p = wall_profile();
	char *json = p ? export_test_string(write_firefox, p, NULL) : NULL;
	char **names;
	size_t n = 0;
	bool same = true;

	profile__free(p);
	CHECK(json);
	names = marker_names(json);
	free(json);
	CHECK(names);
	for (; names[n]; n++)
		same = same && n < NR_WALL_LINES && !strcmp(names[n], wall_lines[n]);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	CHECK_U64(n, NR_WALL_LINES);
	CHECK(same);
}

/* Under the SVG's title, a line of text per group, the lines apart by "; ". */
TEST(summary_in_svg)
{
	static const char *const texts[] = {
		"on-CPU samples: 364 in 3.0 s at 99 Hz; samples lost: 5; intervals off CPU: 53935 "
		"(12.346 s); intervals off CPU lost: 17",
		"truncated stacks: 11; stack read errors: 13; processes with unreadable maps: 1",
		"frames: 21 with source lines, 22 function only, 23 unnamed, 24 unmapped, 25 JIT, 26 "
		"Python, 27 JavaScript; "
		"DWARF units unreadable: 2",
	};
	struct profile *p = wall_profile();
	char *svg = p ? export_test_string(svg__write, p, NULL) : NULL;
	const char *at;
	size_t n = 0;
	bool same = true;

	profile__free(p);
	CHECK(svg);
	for (at = strstr(svg, "<text class=\"stats\""); at;
	     at = strstr(at + 1, "<text class=\"stats\"")) {
		const char *start = strchr(at, '>') + 1, *end = strstr(start, "</text>");

		same = same && n < 3 && end && (size_t)(end - start) == strlen(texts[n]) &&
		       !strncmp(start, texts[n], end - start);
		n++;
	}
	free(svg);
	CHECK_U64(n, 3);
	CHECK(same);
}

/*
 * An allocation profile sampled one per 524288 bytes: two stacks of heap
 * blocks and one of anonymous mmap, whose figures all differ, and the
 * losses of each kind.
 */
static const struct profile_frame f_malloc = { .address = 0x3000, FRAME_LINE(.name = "malloc") };
static const struct profile_frame f_mmap = { .address = 0x4000, FRAME_LINE(.name = "mmap") };

static struct profile *alloc_profile(void)
{
	static const struct profile_frame *const heap[] = { &f_malloc, &f_main };
	static const struct profile_frame *const anon[] = { &f_mmap, &f_main };
	struct profile *p = profile__new(0);
	struct profile_sample s = { .pid = 7, .tid = 7, .nr_frames = 2 };

	if (!p)
		return NULL;
	p->mode = PROFILE_ALLOC;
	p->alloc_rate = 524288;
	p->duration = 2950000000ULL;
	p->alloc_gmax_ns = 1234567890ULL;
	p->stats = (struct profile_stats){
		.truncated = 11,
		.stack_errors = 13,
		.maps_unreadable = 1,
		.frames = { [FRAME_LINES] = 21, [FRAME_SYMBOL] = 22 },
		.alloc_bytes = 73400320,
		.alloc_blocks = 1001,
		.alloc_gmax_bytes = 41943040,
		.alloc_gmax_blocks = 503,
		.alloc_end_bytes = 10485760,
		.alloc_end_blocks = 97,
		.alloc_lost = 3,
		.alloc_untracked = 5,
	};
	s.process_name = s.thread_name = strset__add(p->strings, "app");
	s.frames = (const struct profile_frame **)heap;
	s.count = 140;
	s.alloc = (struct profile_alloc){ .kind = ALLOC_HEAP, .bytes = 73400320, .blocks = 1001 };
	if (!s.process_name || !profile__add_sample(p, &s))
		goto out_free;
	s.frames = (const struct profile_frame **)anon;
	s.count = 16;
	s.alloc = (struct profile_alloc){ .kind = ALLOC_MMAP, .bytes = 8388608, .blocks = 2 };
	if (!profile__add_sample(p, &s))
		goto out_free;
	return p;

out_free:
	profile__free(p);
	return NULL;
}

static const char *const alloc_lines[] = {
	"allocated: 73400320 bytes in 1001 blocks over 3.0 s (estimated)",
	"anonymous mmap: 8388608 bytes in 2 mappings (estimated)",
	"peak live: 41943040 bytes in 503 blocks at 1.235 s (estimated)",
	"live at the end: 10485760 bytes in 97 blocks (estimated)",
	"sampling: one sample per 524288 bytes on average",
	"sampled allocations lost: 3",
	"frees not watched: 5 blocks, live to the end (live map full, or a free lost)",
	"truncated stacks: 11",
	"stack read errors: 13",
	"processes with unreadable maps: 1",
	"frames: 21 with source lines, 22 function only, 0 unnamed, 0 unmapped, 0 JIT, 0 Python, 0 JavaScript",
	"DWARF units unreadable: 0",
};

#define NR_ALLOC_LINES (sizeof(alloc_lines) / sizeof(alloc_lines[0]))

/*
 * An allocation profile: DHAT's figures in place of samples, the heap's
 * apart from anonymous mmap's; what was allocated, what was live, and how
 * it was sampled, in three groups; then the stacks and frames as any
 * profile has them.
 */
TEST(summary_alloc_lines)
{
	static const enum profile_summary_group groups[NR_ALLOC_LINES] = {
		SUMMARY_SAMPLES,  SUMMARY_SAMPLES,  SUMMARY_LIVE,     SUMMARY_LIVE,
		SUMMARY_SAMPLING, SUMMARY_SAMPLING, SUMMARY_SAMPLING, SUMMARY_STACKS,
		SUMMARY_STACKS,	  SUMMARY_STACKS,   SUMMARY_FRAMES,   SUMMARY_FRAMES,
	};

	struct profile *p = alloc_profile();
	struct profile_summary sum;

	CHECK(p);
	profile__summary(p, &sum);
	CHECK_U64(sum.nr, NR_ALLOC_LINES);
	for (size_t i = 0; i < NR_ALLOC_LINES; i++) {
		CHECK_STR(sum.lines[i].text, alloc_lines[i]);
		CHECK_U64(sum.lines[i].group, groups[i]);
	}
	profile__free(p);
}

/*
 * Every allocation recorded (--alloc=1): exact figures, no "(estimated)";
 * no mmap line without mmap samples, no line of blocks not tracked when
 * there were none (summary_alloc_lines sees both when there are), and the
 * frees of blocks never seen allocated when there are some.
 */
TEST(summary_alloc_exact)
{
	static const char *const lines[] = {
		"allocated: 73400320 bytes in 1001 blocks over 3.0 s",
		"peak live: 41943040 bytes in 503 blocks at 1.235 s",
		"live at the end: 10485760 bytes in 97 blocks",
		"sampling: every allocation",
		"sampled allocations lost: 0",
		"frees of blocks not seen allocated: 9",
		"truncated stacks: 11",
	};
	struct profile *p = alloc_profile();
	struct profile_summary sum;

	CHECK(p);
	CHECK_U64(p->nr_samples, 2);
	CHECK_U64(p->samples[1].alloc.kind, ALLOC_MMAP);
	p->samples[1].alloc.kind = ALLOC_HEAP; /* no mmap now */
	p->alloc_rate = 1;
	p->stats.alloc_lost = 0;
	p->stats.alloc_untracked = 0;
	p->stats.alloc_foreign_frees = 9;
	profile__summary(p, &sum);
	CHECK_U64(sum.nr, NR_ALLOC_LINES - 1);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		CHECK_STR(sum.lines[i].text, lines[i]);
	CHECK_U64(sum.lines[5].group, SUMMARY_SAMPLING);

	/* Nothing ever live: no time of a peak. */
	p->stats.alloc_gmax_bytes = p->stats.alloc_gmax_blocks = 0;
	profile__summary(p, &sum);
	profile__free(p);
	CHECK_STR(sum.lines[1].text, "peak live: 0 bytes in 0 blocks");
}

/*
 * Under the SVG's title, what was allocated on one line, what was live on
 * the next, then how it was sampled: none longer than the 163 characters
 * of 12 px monospace (7.2 px each) that the graph's 1180 px hold.
 */
TEST(summary_alloc_in_svg)
{
	static const char *const texts[] = {
		"allocated: 73400320 bytes in 1001 blocks over 3.0 s (estimated); anonymous mmap: "
		"8388608 bytes in 2 mappings (estimated)",
		"peak live: 41943040 bytes in 503 blocks at 1.235 s (estimated); live at the end: "
		"10485760 bytes in 97 blocks (estimated)",
		"sampling: one sample per 524288 bytes on average; sampled allocations lost: 3; frees "
		"not watched: 5 blocks, live to the end (live map full, or a free lost)",
		"truncated stacks: 11; stack read errors: 13; processes with unreadable maps: 1",
	};
	struct profile *p = alloc_profile();
	char *svg = p ? export_test_string(svg__write, p, NULL) : NULL;
	const char *at;
	size_t n = 0;
	bool same = true;

	profile__free(p);
	CHECK(svg);
	for (at = strstr(svg, "<text class=\"stats\""); at;
	     at = strstr(at + 1, "<text class=\"stats\"")) {
		const char *start = strchr(at, '>') + 1, *end = strstr(start, "</text>");

		same = same && end && end - start <= 163 &&
		       (n >= 4 || ((size_t)(end - start) == strlen(texts[n]) &&
				   !strncmp(start, texts[n], end - start)));
		n++;
	}
	free(svg);
	CHECK_U64(n, 5);
	CHECK(same);
}
