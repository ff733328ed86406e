// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/profile.h"
#include "common/strset.h"
#include "export/folded.h"
#include "export/svg.h"
#include "export_test.h"
#include "test.h"

#define GRAPH_W 1180.0
#define GRAPH_X 10.0

/* One drawn frame, as the SVG holds it. */
struct frame {
	char class[16];
	uint64_t s, n;
	char name[256];	 /* the <title> up to its last " (", unescaped */
	char title[512]; /* unescaped */
	char label[256]; /* the <text>, as written */
	double x, w;
	unsigned int y, rgb[3];
};

static void unescape(char *dst, size_t size, const char *s, size_t len)
{
	static const struct {
		const char *entity;
		char c;
	} entities[] = { { "&amp;", '&' },
			 { "&lt;", '<' },
			 { "&gt;", '>' },
			 { "&quot;", '"' },
			 { "&apos;", '\'' } };
	size_t j = 0;

	for (size_t i = 0; i < len && j + 1 < size;) {
		size_t k;

		for (k = 0; k < sizeof(entities) / sizeof(entities[0]); k++) {
			size_t elen = strlen(entities[k].entity);

			if (!strncmp(s + i, entities[k].entity, elen)) {
				dst[j++] = entities[k].c;
				i += elen;
				break;
			}
		}
		if (k == sizeof(entities) / sizeof(entities[0]))
			dst[j++] = s[i++];
	}
	dst[j] = '\0';
}

/* The frames of @svg in document order, in a malloc()ed array; *@nr of them; NULL on error. */
static struct frame *parse_frames(const char *svg, size_t *nr)
{
	const char *p = strstr(svg, "<g id=\"frames\">");
	struct frame *frames = NULL;
	size_t alloc = 0;

	*nr = 0;
	while (p && (p = strstr(p, "<g class=\""))) {
		struct frame *f;
		const char *t, *e;
		int used = 0;

		if (*nr == alloc) {
			alloc = alloc ? alloc * 2 : 64;
			frames = realloc(frames, alloc * sizeof(*frames));
			if (!frames)
				return NULL;
		}
		f = &frames[(*nr)++];
		memset(f, 0, sizeof(*f));
		if (sscanf(p,
			   "<g class=\"%15[^\"]\" data-s=\"%" SCNu64 "\" data-n=\"%" SCNu64
			   "\"><title>%n",
			   f->class, &f->s, &f->n, &used) != 3 ||
		    !used)
			goto fail;
		t = p + used;
		e = strstr(t, "</title>");
		if (!e)
			goto fail;
		unescape(f->title, sizeof(f->title), t, e - t);
		snprintf(f->name, sizeof(f->name), "%.*s",
			 (int)(strrchr(f->title, '(') - f->title - 1), f->title);
		used = 0;
		if (sscanf(e,
			   "</title><rect x=\"%lf\" y=\"%u\" width=\"%lf\" height=\"15\" "
			   "fill=\"rgb(%u,%u,%u)\"/><text x=\"%*[0-9.]\" y=\"%*u\">%n",
			   &f->x, &f->y, &f->w, &f->rgb[0], &f->rgb[1], &f->rgb[2], &used) != 6 ||
		    !used)
			goto fail;
		t = e + used;
		e = strstr(t, "</text></g>\n");
		if (!e)
			goto fail;
		snprintf(f->label, sizeof(f->label), "%.*s", (int)(e - t), t);
		p = e;
	}
	return frames;
fail:
	free(frames);
	return NULL;
}

/* The frames of @p's graph (which this frees); NULL on failure. */
static struct frame *graph_frames(struct profile *p, size_t *nr)
{
	char *svg = p ? export_test_string(svg__write, p, NULL) : NULL;
	struct frame *frames = svg ? parse_frames(svg, nr) : NULL;

	profile__free(p);
	free(svg);
	return frames;
}

static const struct frame *find_frame(const struct frame *frames, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(frames[i].name, name))
			return &frames[i];
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Folded stacks read back from the graph: each frame's own count is its
 * count less its children's, its stack the frames below it. Frames come
 * depth first, so a frame ends where one at its depth or below starts.
 */
static char *refold(const struct frame *frames, size_t nr)
{
	enum {
		MAX_DEPTH = 64
	};
	char names[MAX_DEPTH][256], *lines[256], *out = NULL;
	uint64_t own[MAX_DEPTH];
	size_t nr_lines = 0, len = 0;
	int top = -1;
	FILE *f;

	for (size_t i = 0; i <= nr; i++) {
		int depth = i < nr ? (int)(frames[0].y - frames[i].y) / 16 : 0;

		for (; top >= depth && top >= 0; top--) {
			char line[4096];
			int n = 0;

			if (!own[top] || top == 0 || nr_lines == 256)
				continue;
			for (int d = 1; d <= top; d++)
				n += snprintf(line + n, sizeof(line) - n, "%s%s", d > 1 ? ";" : "",
					      names[d]);
			snprintf(line + n, sizeof(line) - n, " %" PRIu64 "\n", own[top]);
			lines[nr_lines++] = strdup(line);
		}
		if (i == nr || depth >= MAX_DEPTH)
			break;
		top = depth;
		own[depth] = frames[i].n;
		if (depth > 0)
			own[depth - 1] -= frames[i].n;
		snprintf(names[depth], sizeof(names[depth]), "%s%s", frames[i].name,
			 !strcmp(frames[i].class, "kernel")  ? "_[k]" :
			 !strcmp(frames[i].class, "inlined") ? "_[i]" :
			 !strcmp(frames[i].class, "jit")     ? "_[j]" :
							       "");
		/* Folded output writes process names with '_' for spaces. */
		if (!strcmp(frames[i].class, "process"))
			for (char *c = names[depth]; *c; c++)
				if (*c == ' ')
					*c = '_';
	}
	qsort(lines, nr_lines, sizeof(*lines), cmp_str);
	f = open_memstream(&out, &len);
	for (size_t i = 0; i < nr_lines; i++) {
		if (f)
			fputs(lines[i], f);
		free(lines[i]);
	}
	if (f)
		fclose(f);
	return out;
}

/*
 * The graph holds what folded output holds, and every frame is as wide and
 * as far right as its count and left edge make it.
 */
static void check_against_folded(const struct profile *p)
{
	char *svg = export_test_string(svg__write, p, NULL);
	char *folded = export_test_string(folded__write, p, NULL);
	struct frame *frames = NULL;
	char *got = NULL;
	size_t nr = 0;
	double total;

	if (svg)
		frames = parse_frames(svg, &nr);
	if (frames)
		got = refold(frames, nr);
	if (!svg || !folded || !frames || !nr || !got || strcmp(got, folded)) {
		test__fail(__FILE__, __LINE__, "graph read back as folded:\n%s\nfolded:\n%s",
			   got ? got : "(none)", folded ? folded : "(none)");
		goto out;
	}
	CHECK_STR(frames[0].name, "all");
	CHECK_STR(frames[0].class, "root");
	total = frames[0].n;
	for (size_t i = 0; i < nr; i++) {
		double want_w = frames[i].n * GRAPH_W / total,
		       want_x = GRAPH_X + frames[i].s * GRAPH_W / total;

		if (frames[i].w < want_w - 0.0101 || frames[i].w > want_w + 0.0101 ||
		    frames[i].x < want_x - 0.0051 || frames[i].x > want_x + 0.0051) {
			test__fail(__FILE__, __LINE__, "%s: x %.2f width %.2f, expected %.3f %.3f",
				   frames[i].name, frames[i].x, frames[i].w, want_x, want_w);
			break;
		}
	}
out:
	free(got);
	free(frames);
	free(svg);
	free(folded);
}

TEST(svg_matches_folded)
{
	struct profile *p = export_test_profile(NULL);

	CHECK(p);
	check_against_folded(p);
	profile__free(p);
}

TEST(svg_widths)
{
	struct profile *p = export_test_profile(NULL);
	char *svg = p ? export_test_string(svg__write, p, NULL) : NULL;
	struct frame *frames = NULL;
	const struct frame *f;
	size_t nr = 0;

	profile__free(p);
	CHECK(svg);
	frames = parse_frames(svg, &nr);
	free(svg);
	CHECK(frames);
	/* 29 samples, 12 of them in main;compute of "app" ("my app" is its own root). */
	f = &frames[0];
	CHECK_STR(f->title, "all (29 samples, 100.00%)");
	CHECK(f->x == 10.0 && f->w == 1180.0);
	f = find_frame(frames, nr, "app");
	CHECK(f && !strcmp(f->class, "process") && f->n == 19 && f->s == 0);
	CHECK_STR(f->title, "app (process, 19 samples, 65.52%)");
	CHECK(f->w == 773.10); /* 19 / 29 * 1180 = 773.103 */
	f = find_frame(frames, nr, "my app");
	CHECK(f && f->n == 10 && f->s == 19 && f->x == 783.10 && f->w == 406.90);
	/* The process above "all", root at the bottom, and a frame above its caller. */
	CHECK(frames[1].y == frames[0].y - 16);
	f = find_frame(frames, nr, "do_syscall_64");
	CHECK(f && !strcmp(f->class, "kernel"));
	free(frames);
}

static int svg_cmdline(const struct profile *p, FILE *out)
{
	return svg__write_root(p, out, PROFILE_ROOT_CMDLINE);
}

static int svg_no_root(const struct profile *p, FILE *out)
{
	return svg__write_root(p, out, PROFILE_ROOT_NONE);
}

/*
 * Rooted at command lines, the two "app" processes are two frames, and
 * "my app", whose command line is unknown, keeps its name; without roots,
 * every process's main is one frame on "all".
 */
TEST(svg_root_frame)
{
	struct profile *p = export_test_profile(NULL);
	char *svg = p ? export_test_string(svg_cmdline, p, NULL) : NULL;
	char *none = p ? export_test_string(svg_no_root, p, NULL) : NULL;
	struct frame *frames = NULL;
	const struct frame *f;
	size_t nr = 0;

	profile__free(p);
	CHECK(svg && none);
	frames = parse_frames(svg, &nr);
	free(svg);
	CHECK(frames);
	f = find_frame(frames, nr, "app --serve");
	CHECK(f && !strcmp(f->class, "process") && f->n == 12);
	f = find_frame(frames, nr, "app --batch 7");
	CHECK(f && !strcmp(f->class, "process") && f->n == 7);
	f = find_frame(frames, nr, "my app");
	CHECK(f && !strcmp(f->class, "process") && f->n == 10);
	CHECK(!find_frame(frames, nr, "app"));
	free(frames);

	frames = parse_frames(none, &nr);
	free(none);
	CHECK(frames);
	CHECK(find_frame(frames, nr, "main") && find_frame(frames, nr, "main")->n == 28);
	CHECK(find_frame(frames, nr, "main")->y == frames[0].y - 16);
	for (size_t i = 0; i < nr; i++)
		CHECK(strcmp(frames[i].class, "process"));
	free(frames);
}

/* The same samples in another order give the same bytes. */
TEST(svg_deterministic)
{
	static const unsigned int shuffled[] = { 6, 3, 7, 0, 5, 2, 4, 1 };
	struct profile *a = export_test_profile(NULL), *b = export_test_profile(shuffled);
	char *sa = a ? export_test_string(svg__write, a, NULL) : NULL;
	char *sb = b ? export_test_string(svg__write, b, NULL) : NULL;

	profile__free(a);
	profile__free(b);
	CHECK(sa && sb);
	CHECK(!strcmp(sa, sb));
	free(sa);
	free(sb);
}

static int add(struct profile *p, const char *process, uint64_t count,
	       const struct profile_frame **frames, uint32_t nr)
{
	struct profile_sample s = {
		.pid = 1,
		.tid = 1,
		.process_name = strset__add(p->strings, process),
		.thread_name = strset__add(p->strings, process),
		.nr_frames = nr,
		.frames = frames,
		.count = count,
	};

	return s.process_name && profile__add_sample(p, &s) ? 0 : -1;
}

static const struct profile_frame f_main = { .address = 0x1000, FRAME_LINE(.name = "main") };
static const struct profile_line inline_lines[] = {
	{ .name = "leaf" }, /* inlined into mid, inlined into outer */
	{ .name = "mid" },
	{ .name = "outer" },
};
static const struct profile_frame f_inlined = { .address = 0x2000,
						.lines = inline_lines,
						.nr_lines = 3 };
static const struct profile_frame f_jit = { .address = 0x3000,
					    .source = FRAME_JIT,
					    FRAME_LINE(.name = "LazyCompile:*hot") };
static const struct profile_frame f_python = { .address = 0x4000,
					       .source = FRAME_PYTHON,
					       FRAME_LINE(.name = "handler") };
static const struct profile_frame f_kernel = { .address = 0xffff0000,
					       .kernel = true,
					       FRAME_LINE(.name = "do_syscall_64") };

TEST(svg_kinds_and_colors)
{
	const struct profile_frame *stack[] = { &f_kernel, &f_inlined, &f_jit, &f_python, &f_main };
	const struct profile_frame *user[] = { &f_main };
	struct profile *p = profile__new(99);
	const struct frame *f;
	struct frame *frames = NULL;
	char *svg;
	size_t nr = 0;

	CHECK(p);
	CHECK(!add(p, "proc", 7, stack, 5));
	CHECK(!add(p, "proc", 3, user, 1));
	check_against_folded(p);
	svg = export_test_string(svg__write, p, NULL);
	profile__free(p);
	CHECK(svg);
	/* A legend names every kind. */
	CHECK(strstr(svg, ">user</text>") && strstr(svg, ">kernel</text>") &&
	      strstr(svg, ">inlined</text>") && strstr(svg, ">JIT</text>") &&
	      strstr(svg, ">Python</text>") && strstr(svg, ">process</text>"));
	frames = parse_frames(svg, &nr);
	free(svg);
	CHECK(frames && nr == 9);
	f = find_frame(frames, nr, "proc");
	CHECK(f && !strcmp(f->class, "process"));
	f = find_frame(frames, nr, "main");
	CHECK(f && !strcmp(f->class, "user"));
	CHECK(f->rgb[0] >= 215 && f->rgb[1] <= 160 && f->rgb[2] <= 60); /* red to orange */
	f = find_frame(frames, nr, "handler");
	CHECK(f && !strcmp(f->class, "python"));
	CHECK(f->rgb[2] >= 205 && f->rgb[1] <= 130 && f->rgb[0] >= 150); /* violet */
	f = find_frame(frames, nr, "LazyCompile:*hot");
	CHECK(f && !strcmp(f->class, "jit"));
	CHECK_STR(f->title, "LazyCompile:*hot (JIT, 7 samples, 70.00%)");
	CHECK(f->rgb[1] >= 170 && f->rgb[2] <= 90 && f->rgb[0] <= 130); /* green */
	/* The frame's own function, then what was inlined into it, outer first. */
	f = find_frame(frames, nr, "outer");
	CHECK(f && !strcmp(f->class, "user"));
	CHECK(frames[f - frames + 1].y == f->y - 16 && !strcmp(frames[f - frames + 1].name, "mid"));
	CHECK(!strcmp(frames[f - frames + 1].class, "inlined"));
	f = find_frame(frames, nr, "leaf");
	CHECK(f && !strcmp(f->class, "inlined"));
	CHECK(f->rgb[1] >= 185 && f->rgb[2] >= 175 && f->rgb[0] <= 90); /* aqua */
	f = find_frame(frames, nr, "do_syscall_64");
	CHECK(f && !strcmp(f->class, "kernel"));
	CHECK_STR(f->title, "do_syscall_64 (kernel, 7 samples, 70.00%)");
	CHECK(f->rgb[2] >= 200 && f->rgb[0] <= 120); /* blue */
	free(frames);
}

/* The same name keeps its color wherever it is drawn. */
TEST(svg_colors_hashed_from_name)
{
	const struct profile_frame *a[] = { &f_main };
	struct profile *p = profile__new(99);
	struct frame *frames = NULL;
	size_t nr = 0;

	CHECK(p);
	CHECK(!add(p, "one", 1, a, 1));
	CHECK(!add(p, "two", 2, a, 1));
	frames = graph_frames(p, &nr);
	/* all, one, main, two, main */
	CHECK(frames && nr == 5);
	CHECK_STR(frames[2].name, "main");
	CHECK_STR(frames[4].name, "main");
	CHECK(!memcmp(frames[2].rgb, frames[4].rgb, sizeof(frames[2].rgb)));
	CHECK(memcmp(frames[1].rgb, frames[3].rgb, sizeof(frames[1].rgb)));
	free(frames);
}

/* Is @s[0..@len) valid UTF-8 without any control character but newline and tab? */
static bool clean_utf8(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : 4;

		if (c >= 0xf5 || (c >= 0x80 && c < 0xc2) || i + n > len)
			return false;
		if (n == 1 && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f))
			return false;
		for (size_t k = 1; k < n; k++)
			if (((unsigned char)s[i + k] & 0xc0) != 0x80)
				return false;
		i += n;
	}
	return true;
}

static const struct profile_frame f_markup = { .address = 0x10,
					       FRAME_LINE(.name = "a&b<c>\"d'e]]>") };
static const struct profile_frame f_bytes = {
	.address = 0x20,
	/* A control, a lone 0xff, an overlong '/', a surrogate, a cut sequence, U+FFFF. */
	FRAME_LINE(.name = "x\x01y\xffz\xc0\xafs\xed\xa0\x80t\xe2\x82u\xef\xbf\xbf"),
};
static const struct profile_frame f_utf8 = {
	.address = 0x30, FRAME_LINE(.name = "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5")
};

TEST(svg_escaping)
{
	const struct profile_frame *a[] = { &f_markup }, *b[] = { &f_bytes }, *c[] = { &f_utf8 };
	struct profile *p = profile__new(99);
	char *svg;
	size_t len = 0;

	CHECK(p);
	CHECK(!add(p, "<p&\tq>", 1, a, 1));
	CHECK(!add(p, "<p&\tq>", 1, b, 1));
	CHECK(!add(p, "<p&\tq>", 1, c, 1));
	svg = export_test_string(svg__write, p, &len);
	profile__free(p);
	CHECK(svg);
	CHECK(strlen(svg) == len); /* no NUL */
	CHECK(clean_utf8(svg, len));
	CHECK(strstr(
		svg,
		"<title>a&amp;b&lt;c&gt;&quot;d&apos;e]]&gt; (user, 1 sample, 33.33%)</title>"));
	CHECK(strstr(svg, "<title>x\xef\xbf\xbdy\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbds"
			  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdt\xef\xbf\xbd\xef\xbf\xbdu"
			  "\xef\xbf\xbd (user, 1 sample"));
	CHECK(strstr(svg, "<title>caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5 (user, 1 sample"));
	CHECK(strstr(svg, "<title>&lt;p&amp;\xef\xbf\xbdq&gt; (process, 3 samples, 100.00%)"));
	/* Markup only where we put it: the one CDATA section ends once, before </svg>. */
	CHECK(strstr(svg, "]]>") == strstr(svg, "]]></script>\n</svg>\n"));
	free(svg);
}

static const struct profile_frame f_long = {
	.address = 0x40,
	FRAME_LINE(.name = "a_function_name_long_enough_to_be_cut_in_a_narrow_frame_\xc3\xa9\xc3\xa9"),
};
static const struct profile_frame f_short = { .address = 0x50, FRAME_LINE(.name = "short") };

/* Labels are what fits at 7.2 px a character, 3 px either side, cut with "..". */
TEST(svg_labels)
{
	const struct profile_frame *a[] = { &f_long }, *b[] = { &f_short };
	struct profile *p = profile__new(99);
	struct frame *frames = NULL;
	const struct frame *f;
	size_t nr = 0;

	CHECK(p);
	CHECK(!add(p, "p", 1, a, 1));
	CHECK(!add(p, "p", 99, b, 1));
	CHECK(!add(p, "q", 100, b, 1));
	frames = graph_frames(p, &nr);
	CHECK(frames);
	/* 1 / 200 of 1180 px: 5.90 px, no room for 3 characters. */
	f = find_frame(frames, nr, f_long.lines[0].name);
	CHECK(f && f->w == 5.90);
	CHECK_STR(f->label, "");
	f = find_frame(frames, nr, "short");
	CHECK(f && f->w == 584.10);
	CHECK_STR(f->label, "short");
	free(frames);

	/* 60 of 100: 708 px, (708 - 6) / 7.2 = 97 characters: the whole name (61). */
	p = profile__new(99);
	CHECK(p);
	CHECK(!add(p, "p", 60, a, 1));
	CHECK(!add(p, "p", 40, b, 1));
	frames = graph_frames(p, &nr);
	CHECK(frames);
	f = find_frame(frames, nr, f_long.lines[0].name);
	CHECK(f);
	CHECK_STR(f->label, f_long.lines[0].name);
	free(frames);

	/* 3 of 100: 35.40 px, (35.40 - 6) / 7.2 = 4 characters: 2 and "..". */
	p = profile__new(99);
	CHECK(p);
	CHECK(!add(p, "p", 3, a, 1));
	CHECK(!add(p, "p", 97, b, 1));
	frames = graph_frames(p, &nr);
	CHECK(frames);
	f = find_frame(frames, nr, f_long.lines[0].name);
	CHECK(f && f->w == 35.40);
	CHECK_STR(f->label, "a_..");
	free(frames);
}

static const struct profile_frame f_tiny = { .address = 0x60, FRAME_LINE(.name = "tiny_caller") };
static const struct profile_frame f_tiny2 = { .address = 0x70, FRAME_LINE(.name = "tiny_callee") };
static const struct profile_frame f_edge = { .address = 0x80, FRAME_LINE(.name = "just_wide") };

/* Frames under 0.1 px are left out, with their callees, and the summary says so. */
TEST(svg_elides_tiny_frames)
{
	const struct profile_frame *big[] = { &f_short }, *tiny[] = { &f_tiny2, &f_tiny };
	const struct profile_frame *edge[] = { &f_edge };
	struct profile *p = profile__new(99);
	struct frame *frames = NULL;
	const struct frame *f;
	char *svg;
	size_t nr = 0;

	CHECK(p);
	/* Of 118,000: 10 samples are 0.1 px, 9 are not. */
	CHECK(!add(p, "p", 117981, big, 1));
	CHECK(!add(p, "p", 9, tiny, 2));
	CHECK(!add(p, "p", 10, edge, 1));
	svg = export_test_string(svg__write, p, NULL);
	profile__free(p);
	CHECK(svg);
	CHECK(!strstr(svg, "tiny_c"));
	CHECK(strstr(svg, ">118,000 samples at 99 Hz; 2 frames narrower than 0.1 px not drawn, "
			  "on the stacks of 0.01% of samples</text>"));
	frames = parse_frames(svg, &nr);
	free(svg);
	CHECK(frames && nr == 4);
	f = find_frame(frames, nr, "just_wide");
	CHECK(f && f->w == 0.10);
	free(frames);
}

TEST(svg_offcpu_and_wall)
{
	const struct profile_frame *a[] = { &f_kernel, &f_main }, *b[] = { &f_main };
	struct profile_sample off = {
		.pid = 1,
		.tid = 1,
		.nr_frames = 2,
		.frames = a,
		.count = 3,
		.offcpu = true,
		.offcpu_ns = 2500400, /* 2,500 us */
	};
	struct profile *p = profile__new(100); /* 10 ms a sample */
	struct frame *frames = NULL;
	const struct frame *f;
	char *svg;
	size_t nr = 0;

	CHECK(p);
	off.process_name = off.thread_name = strset__add(p->strings, "p");
	CHECK(off.process_name && profile__add_sample(p, &off));
	CHECK(!add(p, "p", 2, b, 1));
	p->mode = PROFILE_OFFCPU;
	check_against_folded(p);
	svg = export_test_string(svg__write, p, NULL);
	CHECK(svg);
	CHECK(strstr(svg, ">Off-CPU flame graph</text>"));
	CHECK(strstr(svg, ">2,500 \xc2\xb5s off CPU</text>"));
	frames = parse_frames(svg, &nr);
	free(svg);
	/* On-CPU samples have no off-CPU time: all, p, main, do_syscall_64. */
	CHECK(frames && nr == 4);
	CHECK_STR(frames[3].title, "do_syscall_64 (kernel, 2,500 \xc2\xb5s, 100.00%)");
	free(frames);

	p->mode = PROFILE_WALL;
	check_against_folded(p);
	svg = export_test_string(svg__write, p, NULL);
	profile__free(p);
	CHECK(svg);
	CHECK(strstr(svg, ">22,500 \xc2\xb5s of wall-clock time</text>"));
	frames = parse_frames(svg, &nr);
	free(svg);
	CHECK(frames);
	f = find_frame(frames, nr, "main");
	CHECK(f && f->n == 22500);
	free(frames);
}

static const struct profile_frame f_malloc = { .address = 0x4000, FRAME_LINE(.name = "malloc") };
static const struct profile_frame f_mmap = { .address = 0x5000, FRAME_LINE(.name = "mmap") };

/*
 * An allocation profile: its title, frames as wide as their bytes (folded's
 * count) with the bytes in their tooltips, the total in bytes and binary
 * units, and that anonymous mmap counts in it when there is some.
 */
TEST(svg_alloc)
{
	const struct profile_frame *heap[] = { &f_malloc, &f_main }, *anon[] = { &f_mmap, &f_main };
	struct profile *p = profile__new(0);
	struct frame *frames = NULL;
	const struct frame *f;
	char *svg;
	size_t nr = 0;

	CHECK(p);
	p->mode = PROFILE_ALLOC;
	p->alloc_rate = 524288;
	/* 70 MiB in 140 samples, 8 MiB in 2: widths follow the bytes, not the samples. */
	CHECK(!add(p, "p", 140, heap, 2));
	CHECK(!add(p, "p", 2, anon, 2));
	p->samples[0].alloc = (struct profile_alloc){ .bytes = 73400320, .blocks = 1001 };
	p->samples[1].alloc =
		(struct profile_alloc){ .kind = ALLOC_MMAP, .bytes = 8388608, .blocks = 2 };
	check_against_folded(p);
	svg = export_test_string(svg__write, p, NULL);
	CHECK(svg);
	CHECK(strstr(svg, ">Allocation flame graph</text>"));
	CHECK(strstr(svg,
		     ">81,788,928 bytes allocated (78.0 MiB), anonymous mmap included</text>"));
	CHECK(strstr(svg, "(81788928, \"bytes\", 10, 1180);"));
	frames = parse_frames(svg, &nr);
	free(svg);
	CHECK(frames);
	f = find_frame(frames, nr, "malloc");
	CHECK(f && f->n == 73400320);
	CHECK_STR(f->title, "malloc (user, 73,400,320 bytes, 89.74%)");
	f = find_frame(frames, nr, "mmap");
	CHECK(f && f->n == 8388608);
	free(frames);

	/* Heap blocks only: no word of mmap; under 1 KiB, no binary unit; one byte, "byte". */
	p->samples[1].alloc.kind = ALLOC_HEAP;
	p->samples[0].alloc.bytes = 1000;
	p->samples[1].alloc.bytes = 1;
	svg = export_test_string(svg__write, p, NULL);
	profile__free(p);
	CHECK(svg);
	CHECK(strstr(svg, ">1,001 bytes allocated</text>"));
	frames = parse_frames(svg, &nr);
	free(svg);
	CHECK(frames);
	f = find_frame(frames, nr, "mmap");
	CHECK(f && !strcmp(f->title, "mmap (user, 1 byte, 0.10%)"));
	free(frames);
}

/* Binary units: rounded to a tenth, the largest unit the rounded size reaches, up to EiB. */
TEST(svg_alloc_binary_units)
{
	static const struct {
		uint64_t bytes;
		const char *text;
	} cases[] = {
		{ 1024, ">1,024 bytes allocated (1.0 KiB)</text>" },
		{ 1075, ">1,075 bytes allocated (1.0 KiB)</text>" },
		{ 1076, ">1,076 bytes allocated (1.1 KiB)</text>" },
		{ 1048524, ">1,048,524 bytes allocated (1023.9 KiB)</text>" },
		{ 1048525, ">1,048,525 bytes allocated (1.0 MiB)</text>" },
		{ 1048576, ">1,048,576 bytes allocated (1.0 MiB)</text>" },
		{ 5368709120ULL, ">5,368,709,120 bytes allocated (5.0 GiB)</text>" },
		{ UINT64_MAX, ">18,446,744,073,709,551,615 bytes allocated (16.0 EiB)</text>" },
	};
	const struct profile_frame *heap[] = { &f_malloc, &f_main };
	struct profile *p = profile__new(0);
	bool all = true;

	CHECK(p);
	p->mode = PROFILE_ALLOC;
	CHECK(!add(p, "p", 1, heap, 2));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *svg;

		p->samples[0].alloc.bytes = cases[i].bytes;
		svg = export_test_string(svg__write, p, NULL);
		if (!svg || !strstr(svg, cases[i].text)) {
			test__fail(__FILE__, __LINE__, "no '%s'", cases[i].text);
			all = false;
		}
		free(svg);
	}
	profile__free(p);
	CHECK(all);
}

TEST(svg_empty)
{
	struct profile *p = profile__new(99);
	char *svg;
	size_t len = 0;

	CHECK(p);
	svg = export_test_string(svg__write, p, &len);
	profile__free(p);
	CHECK(svg);
	CHECK(strstr(svg, ">no samples</text>"));
	CHECK(strstr(svg, "<g id=\"frames\">\n</g>\n"));
	CHECK(len > 6 && !strcmp(svg + len - 7, "</svg>\n"));
	free(svg);
}

/* A failing stream is reported, not ignored. */
TEST(svg_write_error)
{
	if (test__no_dev_full())
		SKIP("%s", test__no_dev_full());
	CHECK_U64(export_test_write_full(svg__write), -ENOSPC);
}

#define LARGE_STACKS 50000
#define LARGE_DEPTH 30
#define LARGE_FUNCS 4096

/*
 * 50,000 distinct 30-frame stacks that branch the way programs do: all
 * share their outer frames, and each level deeper splits them further. The
 * graph stays bounded (frames under 0.1 px are left out) and is quick to write.
 */
TEST(svg_large_profile)
{
	struct profile *p = profile__new(99);
	struct profile_frame *funcs = calloc(LARGE_FUNCS, sizeof(*funcs));
	struct profile_line *lines = calloc(LARGE_FUNCS, sizeof(*lines));
	const struct profile_frame *stack[LARGE_DEPTH];
	struct timespec t0, t1;
	uint64_t seed = 1;
	char *svg = NULL;
	size_t len = 0, nr_frames = 0;
	FILE *f = NULL;
	int err = -1;

	for (unsigned int i = 0; p && funcs && lines && i < LARGE_FUNCS; i++) {
		lines[i].name = strset__addf(p->strings, "namespace::function_%u(int, long)", i);
		funcs[i] = (struct profile_frame){ .address = 0x400000 + i * 64,
						   .lines = &lines[i],
						   .nr_lines = 1 };
	}
	for (unsigned int i = 0; p && funcs && lines && i < LARGE_STACKS; i++) {
		for (unsigned int d = 0; d < LARGE_DEPTH; d++) {
			/* Level d (0: the root) tells apart stacks that differ above bit 18 - d. */
			unsigned int branch = d < 18 ? i >> (18 - d) : i;

			stack[LARGE_DEPTH - 1 - d] =
				&funcs[(branch * 2654435761u + d * 40503u) % LARGE_FUNCS];
		}
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (add(p, "large", 1 + (seed >> 33) % 100, stack, LARGE_DEPTH))
			break;
		if (i == LARGE_STACKS - 1)
			f = open_memstream(&svg, &len);
	}
	if (f) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = svg__write(p, f);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		fclose(f);
		for (const char *s = svg; !err && (s = strstr(s, "<g class=")); s++)
			nr_frames++;
		printf("# svg: %d stacks of %d frames: %zu frames drawn, %zu bytes, written in %.0f "
		       "ms\n",
		       LARGE_STACKS, LARGE_DEPTH, nr_frames, len,
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	free(lines);
	free(funcs);
	profile__free(p);
	if (err)
		free(svg);
	CHECK(!err);
	if (!strstr(svg, "frames narrower than 0.1 px not drawn") ||
	    /* At most 11,800 frames of 0.1 px or more fit in a level. */
	    nr_frames > 11800 * (LARGE_DEPTH + 2) || len > 64 * 1024 * 1024)
		test__fail(__FILE__, __LINE__, "%zu frames, %zu bytes", nr_frames, len);
	free(svg);
}
